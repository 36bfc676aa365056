/*
 * doctor's checks of what the container runtime put here (machine_rt.c,
 * issue 19 group 1): CDI specs against the running module, the toolkit's
 * ld.so.conf.d drop-ins, a musl loader, a container without the uvm node;
 * all on fake trees.
 */
#include "test_common.h"

static struct ct_machine_report *check_tree(char **env)
{
	static const char *const sys[] = { "/sys1", NULL };
	static const char *const none[] = { NULL };
	struct ct_machine_opts o = {
		.root = tmp_root,
		.env = env,
		.ld_cache = "",
		.system_dirs = sys,
		.off_path_dirs = none,
		.cudart_dirs = none,
		.no_open = true,
		.no_python = true,
	};
	struct ct_machine_report *r = calloc(1, sizeof *r);

	ck_assert_ptr_nonnull(r);
	ct_machine_check(r, &o);
	return r;
}

static void driver_580(bool uvm)
{
	write_str(T("/proc/driver/nvidia/version"),
		  "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build\n");
	write_str(T("/sys/module/nvidia/version"), "580.159.04\n");
	mkdirs(T("/sys/module/nvidia"));
	if (uvm)
		mkdirs(T("/sys/module/nvidia_uvm"));
	write_str(T("/proc/devices"), uvm ? "Character devices:\n195 nvidia\n195 nvidiactl\n238 nvidia-uvm\n"
					  : "Character devices:\n195 nvidia\n195 nvidiactl\n");
}

/* a spec as `nvidia-ctk cdi generate` writes it (YAML), for driver ver */
static void yaml_spec(const char *rel, const char *ver, bool uvm)
{
	char buf[4096];

	snprintf(buf, sizeof buf,
		 "---\ncdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n  containerEdits:\n"
		 "    deviceNodes:\n    - path: /dev/nvidia0\ncontainerEdits:\n  deviceNodes:\n"
		 "  - path: /dev/nvidiactl\n%s  mounts:\n"
		 "  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.%s\n"
		 "    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.%s\n",
		 uvm ? "  - path: /dev/nvidia-uvm\n" : "", ver, ver);
	write_str(T(rel), buf);
}

START_TEST(t_cdi_stale_spec)
{
	char *env[] = { NULL };
	struct ct_machine_report *r;
	const struct ct_finding *f;

	driver_580(true);
	write_str(T("/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04"), "x");
	yaml_spec("/etc/cdi/nvidia.yaml", "580.95.05", true);
	/* JSON, in the other directory, current */
	write_str(T("/var/run/cdi/nvidia-gpu.json"),
		  "{\"cdiVersion\":\"0.6.0\",\"kind\":\"nvidia.com/gpu\",\"containerEdits\":{\"deviceNodes\":"
		  "[{\"path\":\"/dev/nvidia-uvm\"}],\"mounts\":[{\"hostPath\":\"/usr/lib/x86_64-linux-gnu/"
		  "libcuda.so.580.159.04\",\"containerPath\":\"/x\"}]}}");
	/* not NVIDIA's: ignored */
	write_str(T("/etc/cdi/other.yaml"), "kind: vendor.com/fpga\nhostPath: /nope/libcuda.so.1.2.3\n");
	r = check_tree(env);
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "stale CDI spec /etc/cdi/nvidia.yaml");
	f = find(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "stale CDI spec");
	ck_assert_ptr_nonnull(strstr(f->summary, "generated for driver 580.95.05"));
	ck_assert_ptr_nonnull(strstr(f->summary, "module is 580.159.04"));
	ck_assert_ptr_nonnull(strstr(f->fix, "nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"));
	/* the file it names is gone */
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_LOADER, "mounts 1 host path that does not exist here");
	CK_FIND(r, CT_SEV_OK, CT_LAYER_LOADER, "/var/run/cdi/nvidia-gpu.json: driver 580.159.04");
	CK_NOFIND(r, CT_SEV_WARN, CT_LAYER_LOADER, "/var/run/cdi/nvidia-gpu.json mounts");
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "other.yaml");
	CK_NOFIND(r, CT_SEV_WARN, CT_LAYER_UVM, "CDI spec");
	free(r);

	/* a current spec without the uvm node, nvidia_uvm loaded (NCT#50) */
	yaml_spec("/etc/cdi/nvidia.yaml", "580.159.04", false);
	r = check_tree(env);
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "stale CDI spec");
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_UVM, "/etc/cdi/nvidia.yaml has no /dev/nvidia-uvm");
	free(r);

	/* ... and without nvidia_uvm loaded: nothing to say about it */
	driver_580(false);
	rmdir(T("/sys/module/nvidia_uvm"));
	r = check_tree(env);
	CK_NOFIND(r, CT_SEV_WARN, CT_LAYER_UVM, "CDI spec");
	free(r);
}
END_TEST

START_TEST(t_dropins)
{
	char *env[] = { NULL };
	struct ct_machine_report *r;

	driver_580(true);
	write_str(T("/etc/ld.so.conf.d/00-compat-812345.conf"),
		  "# written by the hook\n/usr/local/cuda/compat\n");
	write_str(T("/usr/local/cuda/compat/libcuda.so.575.57.08"), "x");
	write_str(T("/etc/ld.so.conf.d/00-nvcr-1234.conf"), "/usr/lib/x86_64-linux-gnu/nvidia\n");
	write_str(T("/etc/ld.so.conf.d/libc.conf"), "/usr/local/lib\n");
	r = check_tree(env);
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_LOADER,
		"00-compat-812345.conf puts the cuda-compat libcuda 575.57.08");
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_LOADER,
		"00-nvcr-1234.conf: the NVIDIA container runtime put "
		"/usr/lib/x86_64-linux-gnu/nvidia");
	CK_NOFIND(r, CT_SEV_INFO, CT_LAYER_LOADER, "libc.conf");
	free(r);

	/* a newer compat library: forward compatibility, as designed */
	unlink(T("/usr/local/cuda/compat/libcuda.so.575.57.08"));
	write_str(T("/usr/local/cuda/compat/libcuda.so.590.48.01"), "x");
	r = check_tree(env);
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_LOADER, "forward compatibility");
	CK_NOFIND(r, CT_SEV_WARN, CT_LAYER_LOADER, "00-compat");
	free(r);
}
END_TEST

START_TEST(t_musl)
{
	char *env[] = { NULL };
	struct ct_machine_report *r;

	write_str(T("/lib/ld-musl-x86_64.so.1"), "x");
	r = check_tree(env);
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_LOADER, "musl loader /lib/ld-musl-x86_64.so.1");
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_LOADER, "/etc/ld-musl-x86_64.path");
	free(r);
}
END_TEST

START_TEST(t_container_no_uvm_node)
{
	char *env[] = { NULL };
	struct ct_machine_report *r;

	driver_580(true);
	write_str(T("/.dockerenv"), "");
	write_str(T("/dev/nvidiactl"), "");
	r = check_tree(env);
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_UVM,
		"no /dev/nvidia-uvm although the host's nvidia_uvm is loaded");
	free(r);

	/* not a container: the plain missing-node finding only */
	unlink(T("/.dockerenv"));
	r = check_tree(env);
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_UVM, "although the host's");
	free(r);
}
END_TEST

/* WSL2 on a fake tree (documented as such): /proc/version of a WSL kernel,
 * /dev/dxg a regular file (the checks look at existence), the Windows
 * driver's files at their WSL paths (copies of a stand-in ELF) */
static struct ct_machine_report *check_wsl_tree(char **env)
{
	static const char *const sys[] = { "/sys1", "/usr/lib/wsl/lib", NULL };
	static const char *const none[] = { NULL };
	struct ct_machine_opts o = {
		.root = tmp_root,
		.env = env,
		.ld_cache = "",
		.system_dirs = sys,
		.off_path_dirs = none,
		.cudart_dirs = none,
		.no_open = true,
		.no_python = true,
	};
	struct ct_machine_report *r = calloc(1, sizeof *r);

	ck_assert_ptr_nonnull(r);
	ct_machine_check(r, &o);
	return r;
}

START_TEST(t_wsl_layout)
{
	char *env[] = { NULL };
	struct ct_machine_report *r;
	const struct ct_finding *f;

	write_str(T("/proc/version"), "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) "
				      "(gcc (GCC) 11.2.0) #1 SMP Tue Nov 5 00:21:55 UTC 2024\n");
	/* no /dev/dxg, no WSL libraries */
	r = check_wsl_tree(env);
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE, "a WSL2 kernel (/proc/version) but no /dev/dxg");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "WSL2 without /usr/lib/wsl/lib/libcuda.so.1");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "WSL2 without /usr/lib/wsl/lib/libdxcore.so");
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_LOADER, "no /usr/lib/wsl/drivers/*/libcuda.so.1.1");
	free(r);

	/* the healthy layout */
	write_str(T("/dev/dxg"), "");
	copy_file(CT_FAKE_CUDA, T("/usr/lib/wsl/lib/libcuda.so.1"));
	write_str(T("/usr/lib/wsl/lib/libdxcore.so"), "x");
	copy_file(CT_FAKE_CUDA, T("/usr/lib/wsl/drivers/nv_dispi.inf_amd64_1234/libcuda.so.1.1"));
	r = check_wsl_tree(env);
	ck_assert(r->wsl);
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE, "no /dev/dxg");
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "WSL2");
	CK_FIND(r, CT_SEV_OK, CT_LAYER_LOADER, "/usr/lib/wsl/drivers/nv_dispi.inf_amd64_1234/libcuda.so.1.1");
	free(r);

	/* a Linux driver's libcuda earlier on the path shadows it (numba#7106) */
	copy_file(CT_FAKE_CUDA, T("/sys1/libcuda.so.1"));
	r = check_wsl_tree(env);
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "WSL2: libcuda.so.1 resolves to /sys1/libcuda.so.1");
	f = find(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "WSL2: libcuda.so.1 resolves");
	ck_assert_ptr_nonnull(strstr(f->summary, "a Linux driver's library"));
	ck_assert_ptr_nonnull(strstr(f->fix, "dpkg -S /sys1/libcuda.so.1"));
	free(r);
}
END_TEST

/* ---- other libraries in the CUDA call path (catalog G5, machine_preload.c) ---------------- */
static struct ct_machine_report *check_preload(char **env, const char *maps)
{
	static const char *const sys[] = { "/sys1", NULL };
	static const char *const none[] = { NULL };
	struct ct_machine_opts o = {
		.root = tmp_root,
		.env = env,
		.ld_cache = "",
		.system_dirs = sys,
		.off_path_dirs = none,
		.cudart_dirs = none,
		.no_open = true,
		.no_python = true,
		.maps = maps,
	};
	struct ct_machine_report *r = calloc(1, sizeof *r);

	ck_assert_ptr_nonnull(r);
	ct_machine_check(r, &o);
	return r;
}

START_TEST(t_preload_file_and_env)
{
	/* an /etc/ld.so.preload of the tree (never the machine's): the interposer, a plain
	 * library, a name the loader finds in a system directory, a file that is not there */
	copy_file(CT_FAKE_INTERPOSER, T("/opt/hami/libvgpu.so"));
	copy_file(CT_FAKE_PLAIN, T("/opt/x/libplain.so"));
	copy_file(CT_FAKE_PLAIN, T("/sys1/libbyname.so"));
	write_str(T("/etc/ld.so.preload"),
		  "/opt/hami/libvgpu.so\n/opt/x/libplain.so libbyname.so:/opt/gone.so\n");
	char *env[] = { "LD_PRELOAD=/opt/x/libother.so libnowhere.so", "PATH=/usr/bin", NULL };
	copy_file(CT_FAKE_INTERPOSER, T("/opt/x/libother.so"));
	struct ct_machine_report *r = check_preload(env, "");
	const struct ct_finding *f;

	CK_FIND(r, CT_SEV_WARN, CT_LAYER_LOADER,
		"/etc/ld.so.preload loads /opt/hami/libvgpu.so (HAMi-core's GPU-sharing interposer) into every "
		"program on this machine; it defines cuInit, dlsym, ioctl: CUDA calls pass through it");
	f = find(r, CT_SEV_WARN, CT_LAYER_LOADER, "/opt/hami/libvgpu.so (HAMi");
	ck_assert_ptr_nonnull(strstr(f->fix, "remove the line /opt/hami/libvgpu.so from /etc/ld.so.preload"));
	ck_assert_int_eq(f->section, CT_SEC_LIBS);
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_LOADER,
		"/etc/ld.so.preload loads /opt/x/libplain.so into every program; it defines none of cuInit");
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_LOADER,
		"/etc/ld.so.preload loads /sys1/libbyname.so into every program");
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_LOADER,
		"/etc/ld.so.preload names /opt/gone.so, which cannot be preloaded");
	/* LD_PRELOAD: an unknown library that defines cuInit, dlsym, ioctl; a name nowhere */
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_LOADER,
		"LD_PRELOAD loads /opt/x/libother.so into every program; it defines cuInit, dlsym, ioctl");
	f = find(r, CT_SEV_WARN, CT_LAYER_LOADER, "LD_PRELOAD loads /opt/x/libother.so");
	ck_assert_int_eq(f->section, CT_SEC_ENV);
	ck_assert_ptr_nonnull(strstr(f->fix, "unset LD_PRELOAD"));
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_LOADER,
		"LD_PRELOAD names libnowhere.so, which the loader does not find");
	free(r);
}
END_TEST

START_TEST(t_preload_mapped)
{
	/* doctor's own mapped objects (a maps file): the stack is not named, an object that
	 * defines CUDA-path calls is, once, even when LD_PRELOAD named it too */
	char maps[PATH_MAX + 256];
	char *env[] = { "PATH=/usr/bin", NULL };
	snprintf(maps, sizeof maps,
		 "7f0000000000-7f0000001000 r-xp 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
		 "7f0000001000-7f0000002000 r-xp 00000000 08:01 2 %s\n"
		 "7f0000002000-7f0000003000 r--p 00001000 08:01 2 %s\n"
		 "7f0000003000-7f0000004000 r-xp 00000000 08:01 3 %s\n"
		 "7f0000004000-7f0000005000 rw-p 00000000 00:00 0 [heap]\n",
		 CT_FAKE_INTERPOSER, CT_FAKE_INTERPOSER, CT_FAKE_PLAIN);
	write_str(T("/maps"), maps);
	struct ct_machine_report *r = check_preload(env, T("/maps"));
	int n = 0;

	for (int i = 0; i < r->n_findings; i++)
		if (strstr(r->findings[i].summary, "is mapped into this process"))
			n++;
	ck_assert_int_eq(n, 1);
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_LOADER,
		"libctdoctor_fake_interposer.so is mapped into this process");
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_LOADER, "and defines cuInit, dlsym, ioctl");
	CK_NOFIND(r, CT_SEV_WARN, CT_LAYER_LOADER, "libctdoctor_fake_plain");
	CK_NOFIND(r, CT_SEV_INFO, CT_LAYER_LOADER, "libc.so.6");
	free(r);

	/* named by LD_PRELOAD as well: one finding, LD_PRELOAD's */
	char pre[PATH_MAX + 16];
	snprintf(pre, sizeof pre, "LD_PRELOAD=%s", CT_FAKE_INTERPOSER);
	copy_file(CT_FAKE_INTERPOSER, T(CT_FAKE_INTERPOSER));
	char *env2[] = { pre, NULL };
	r = check_preload(env2, T("/maps"));
	n = 0;
	for (int i = 0; i < r->n_findings; i++)
		if (strstr(r->findings[i].summary, "libctdoctor_fake_interposer.so"))
			n++;
	ck_assert_int_eq(n, 1);
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_LOADER, "LD_PRELOAD loads");
	free(r);
}
END_TEST

static Suite *rt_suite(void)
{
	Suite *s = suite_create("doctor_runtime");
	TCase *tc = tcase_create("runtime");

	tcase_add_checked_fixture(tc, tree_setup, tree_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, t_cdi_stale_spec);
	tcase_add_test(tc, t_dropins);
	tcase_add_test(tc, t_musl);
	tcase_add_test(tc, t_container_no_uvm_node);
	tcase_add_test(tc, t_wsl_layout);
	tcase_add_test(tc, t_preload_file_and_env);
	tcase_add_test(tc, t_preload_mapped);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rt_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
