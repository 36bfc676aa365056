/*
 * doctor's hardware checks (machine_hw.c; failure catalog Part C, G2 and
 * G10, B.14) on fake trees: NVIDIA GPUs in /sys/bus/pci named from pci.ids
 * and the driver bound to each, the 590 branch's dropped architectures,
 * Blackwell on the proprietary module, the module file for the running
 * kernel, Secure Boot, the GSP firmware files, and the kernel log's NVRM
 * lines with RmInitAdapter decoded.
 */
#include "test_common.h"

#include "kmsg.h"
#include "tracer.h"
#include "selectors.h"
#include "xlat.h"

static struct ct_machine_report *check_env(const char *kmsg, char **env)
{
	static const char *const none[] = { NULL };
	struct ct_machine_opts o = {
		.root = tmp_root,
		.env = env,
		.ld_cache = "",
		.system_dirs = none,
		.off_path_dirs = none,
		.cudart_dirs = none,
		.no_open = true,
		.no_python = true,
		.kmsg = kmsg,
	};
	struct ct_machine_report *r = calloc(1, sizeof *r);

	ck_assert_ptr_nonnull(r);
	ct_machine_check(r, &o);
	return r;
}

static struct ct_machine_report *check_hw(const char *kmsg)
{
	static char *env[] = { NULL };
	return check_env(kmsg, env);
}

/* a module of this version and flavour, loaded, with one GPU attached */
static void loaded(const char *version, bool open)
{
	char line[200];

	snprintf(line, sizeof line, "NVRM version: NVIDIA UNIX %s  %s  Release Build\n",
		 open ? "Open Kernel Module for x86_64" : "x86_64 Kernel Module", version);
	write_str(T("/proc/driver/nvidia/version"), line);
	snprintf(line, sizeof line, "%s\n", version);
	write_str(T("/sys/module/nvidia/version"), line);
	mkdirs(T("/sys/module/nvidia_uvm"));
	write_str(T("/proc/devices"), "Character devices:\n195 nvidia\n195 nvidiactl\n238 nvidia-uvm\n");
	write_str(T("/proc/driver/nvidia/gpus/0000:01:00.0/information"), "Model: \t NVIDIA\n");
	write_str(T("/proc/sys/kernel/osrelease"), "6.8.0-49-generic\n");
}

/* an NVIDIA function in /sys/bus/pci: driver "" = none bound */
static void pci(const char *addr, unsigned device, unsigned cls, const char *driver)
{
	char p[256], v[32];

	snprintf(p, sizeof p, "/sys/bus/pci/devices/%s/vendor", addr);
	write_str(T(p), "0x10de\n");
	snprintf(p, sizeof p, "/sys/bus/pci/devices/%s/device", addr);
	snprintf(v, sizeof v, "0x%04x\n", device);
	write_str(T(p), v);
	snprintf(p, sizeof p, "/sys/bus/pci/devices/%s/class", addr);
	snprintf(v, sizeof v, "0x%06x\n", cls);
	write_str(T(p), v);
	if (driver[0]) {
		char target[128];
		snprintf(target, sizeof target, "../../../bus/pci/drivers/%s", driver);
		snprintf(p, sizeof p, "/sys/bus/pci/devices/%s/driver", addr);
		make_link(target, T(p));
	}
}

START_TEST(t_pci_names)
{
	const char *product = NULL;

	/* pci.ids (pciutils/pciids 2026.08.22): 2335 "GH100 [H200 SXM 141GB]" */
	ck_assert_str_eq(ct_pci_nvidia_chip(0x2335, &product), "GH100");
	ck_assert_str_eq(product, "H200 SXM 141GB");
	ck_assert_str_eq(ct_nvidia_arch("GH100"), "Hopper");
	ck_assert_str_eq(ct_pci_nvidia_chip(0x1b80, NULL), "GP104"); /* GeForce GTX 1080 */
	ck_assert_str_eq(ct_nvidia_arch(ct_pci_nvidia_chip(0x2b85, NULL)), "Blackwell"); /* GB202 */
	ck_assert_str_eq(ct_nvidia_arch("GV100"), "Volta");
	ck_assert_ptr_null(ct_pci_nvidia_chip(0x0001, &product));
	ck_assert_ptr_null(product);
	ck_assert_ptr_null(ct_nvidia_arch("NV40"));
	ck_assert_ptr_null(ct_nvidia_arch(NULL));
}
END_TEST

START_TEST(t_pci_bound_and_audio)
{
	struct ct_machine_report *r;

	loaded("580.159.04", true);
	pci("0000:01:00.0", 0x2335, 0x030200, "nvidia");
	pci("0000:01:00.1", 0x22ba, 0x040300, "snd_hda_intel"); /* audio function: not a GPU */
	r = check_hw("");
	ck_assert_int_eq(r->hw.n_pci, 1);
	ck_assert_str_eq(r->hw.pci[0].driver, "nvidia");
	ck_assert_str_eq(r->hw.pci[0].chip, "GH100");
	ck_assert_str_eq(r->hw.pci[0].arch, "Hopper");
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, "GPU 0000:01:00.0");
	free(r);
}
END_TEST

START_TEST(t_pascal_on_590)
{
	struct ct_machine_report *r;

	loaded("590.48.01", true);
	pci("0000:02:00.0", 0x1b80, 0x030000, "");
	r = check_hw("");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE,
		"GP104 GeForce GTX 1080, Pascal) is a Pascal GPU");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, "590 branch dropped");
	ck_assert_ptr_nonnull(strstr(find(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, "590 branch")->fix,
				     "nvidia-driver-580"));
	/* not also the generic "no driver bound" */
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, "refused it");
	free(r);

	/* the same GPU on 580: bound, fine */
	tree_teardown();
	tree_setup();
	loaded("580.159.04", false);
	pci("0000:02:00.0", 0x1b80, 0x030000, "nvidia");
	r = check_hw("");
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, "590");
	free(r);
}
END_TEST

START_TEST(t_blackwell_proprietary)
{
	struct ct_machine_report *r;

	loaded("580.159.04", false);
	pci("0000:03:00.0", 0x2b85, 0x030000, "nvidia");
	r = check_hw("");
	ck_assert_str_eq(r->kmod.flavor, "proprietary");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_RESOURCE_MANAGER, "needs the open kernel module");
	ck_assert_ptr_nonnull(strstr(find(r, CT_SEV_PROBLEM, CT_LAYER_RESOURCE_MANAGER, "open kernel")->fix,
				     "nvidia-driver-580-open"));
	free(r);
}
END_TEST

START_TEST(t_unbound_nouveau_vfio)
{
	struct ct_machine_report *r;

	loaded("580.159.04", true);
	pci("0000:04:00.0", 0x2335, 0x030200, "");
	pci("0000:05:00.0", 0x2684, 0x030000, "nouveau");
	pci("0000:06:00.0", 0x2330, 0x030200, "vfio-pci");
	r = check_hw("");
	ck_assert_int_eq(r->hw.n_pci, 3);
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE,
		"0000:04:00.0 (10de:2335 GH100 H200 SXM 141GB, Hopper) "
		"has no driver bound although the nvidia module is loaded");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, "bound to nouveau");
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_NONE, "vfio-pci");
	free(r);
}
END_TEST

START_TEST(t_module_file_missing)
{
	struct ct_machine_report *r;

	/* no module loaded; the running kernel's modules.dep has no nvidia.ko */
	write_str(T("/proc/sys/kernel/osrelease"), "6.8.0-50-generic\n");
	write_str(T("/lib/modules/6.8.0-50-generic/modules.dep"),
		  "kernel/drivers/net/e1000e/e1000e.ko.zst:\nkernel/drivers/gpu/drm/nouveau/nouveau.ko.zst: x.ko\n");
	mkdirs(T("/var/lib/dkms/nvidia/580.159.04/6.8.0-49-generic"));
	r = check_hw("");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE,
		"no nvidia.ko for the running kernel 6.8.0-50-generic");
	ck_assert_ptr_nonnull(strstr(find(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, "no nvidia.ko")->fix,
				     "dkms autoinstall -k 6.8.0-50-generic"));
	ck_assert_str_eq(r->hw.dkms, ""); /* built for the old kernel only */
	free(r);
}
END_TEST

START_TEST(t_module_secure_boot)
{
	static const unsigned char sb_on[] = { 6, 0, 0, 0, 1 };
	struct ct_machine_report *r;

	write_str(T("/proc/sys/kernel/osrelease"), "6.8.0-50-generic\n");
	write_str(T("/lib/modules/6.8.0-50-generic/modules.dep"),
		  "updates/dkms/nvidia.ko.zst:\nupdates/dkms/nvidia-uvm.ko.zst: updates/dkms/nvidia.ko.zst\n");
	mkdirs(T("/var/lib/dkms/nvidia/580.159.04/6.8.0-50-generic/x86_64"));
	write_file(T("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"), sb_on,
		   sizeof sb_on);
	write_str(T("/sys/kernel/security/lockdown"), "none [integrity] confidentiality\n");
	write_str(T("/kmsg"), "4,500,1000,-;nvidia: module verification failed: signature and/or required "
			      "key missing - tainting kernel\n");
	r = check_hw(T("/kmsg"));
	ck_assert_str_eq(r->hw.module_file, "updates/dkms/nvidia.ko.zst");
	ck_assert_str_eq(r->hw.dkms, "580.159.04");
	ck_assert_int_eq(r->hw.secure_boot, 1);
	ck_assert_str_eq(r->hw.lockdown, "integrity");
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_KERNEL_HANDSHAKE, "Secure Boot on, kernel lockdown integrity");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE,
		"exists for this kernel (updates/dkms/nvidia.ko.zst) but "
		"is not loaded, and Secure Boot");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, "module verification failed");
	ck_assert_ptr_nonnull(
		strstr(find(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, "Secure Boot/lockdown")->fix,
		       "mokutil --import"));
	free(r);
}
END_TEST

START_TEST(t_dkms_newer_than_loaded)
{
	struct ct_machine_report *r;

	loaded("580.159.04", true);
	write_str(T("/lib/modules/6.8.0-49-generic/modules.dep"), "updates/dkms/nvidia.ko:\n");
	mkdirs(T("/var/lib/dkms/nvidia/580.178.01/6.8.0-49-generic"));
	r = check_hw("");
	CK_FIND(r, CT_SEV_OK, CT_LAYER_KERNEL_HANDSHAKE, "module file for kernel 6.8.0-49-generic");
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_KERNEL_HANDSHAKE,
		"DKMS built nvidia 580.178.01 for this kernel but "
		"580.159.04 is loaded");
	free(r);
}
END_TEST

START_TEST(t_gsp_firmware)
{
	struct ct_machine_report *r;

	loaded("580.159.04", true);
	pci("0000:01:00.0", 0x2335, 0x030200, "nvidia");
	r = check_hw("");
	ck_assert_int_eq(r->hw.fw_count, 0);
	/* on the host, with the GPU attached: a warning */
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_RESOURCE_MANAGER,
		"no GSP firmware for the loaded driver 580.159.04");
	free(r);

	/* no GPU attached: the problem */
	remove(T("/proc/driver/nvidia/gpus/0000:01:00.0/information"));
	rmdir(T("/proc/driver/nvidia/gpus/0000:01:00.0"));
	r = check_hw("");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_RESOURCE_MANAGER, "no GSP firmware");
	free(r);

	write_str(T("/lib/firmware/nvidia/580.159.04/gsp_ga10x.bin"), "x");
	write_str(T("/lib/firmware/nvidia/580.159.04/gsp_tu10x.bin"), "x");
	write_str(T("/lib/firmware/nvidia/580.159.04/README"), "x");
	r = check_hw("");
	ck_assert_int_eq(r->hw.fw_count, 2);
	CK_FIND(r, CT_SEV_OK, CT_LAYER_RESOURCE_MANAGER, "GSP firmware for 580.159.04");
	free(r);
}
END_TEST

START_TEST(t_kmsg_rminit)
{
	struct ct_machine_report *r;
	struct ct_kmsg k;

	/* /dev/kmsg records, a continuation line, and the field's lines
	 * (catalog B.14 and Part C G2) */
	write_str(T("/kmsg"),
		  "6,100,5000,-;Linux version 6.8.0\n"
		  " SUBSYSTEM=pci\n"
		  "3,101,6000,-;NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x62:0x40:2168)\n"
		  "3,102,6001,-;NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0\n"
		  "4,103,7000,-;NVRM: Xid (PCI:0000:01:00): 79, pid=1234, GPU has fallen off the bus.\n");
	ct_kmsg_scan(T("/kmsg"), 1000, &k);
	ck_assert(k.read);
	ck_assert_uint_eq(k.records, 4);
	ck_assert(k.rminit);
	ck_assert_uint_eq(k.stage, 0x62);
	ck_assert_uint_eq(k.status, 0x40);
	ck_assert_uint_eq(k.src_line, 2168);
	ck_assert_str_eq(ct_rminit_stage_name(0x62), "FIRMWARE_INIT_FAILED");
	ck_assert_str_eq(ct_rminit_stage_name(0x22), "GPU_GPUMGR_ATTACH_GPU_FAILED");
	ck_assert_ptr_null(ct_rminit_stage_name(0x99));
	ck_assert_ptr_nonnull(strstr(k.line[CT_KMSG_FELL_OFF], "fallen off the bus"));

	loaded("580.159.04", true);
	remove(T("/proc/driver/nvidia/gpus/0000:01:00.0/information"));
	rmdir(T("/proc/driver/nvidia/gpus/0000:01:00.0"));
	r = check_hw(T("/kmsg"));
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_RESOURCE_MANAGER,
		"RmInitAdapter failed! (0x62:0x40:2168) = FIRMWARE_INIT_FAILED, NV_ERR_INVALID_STATE: the GSP firmware "
		"did not start");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_RESOURCE_MANAGER, "NV_ERR_GPU_IS_LOST");
	free(r);

	/* plain dmesg lines, the Blackwell-on-proprietary pair (0x22:0x56) */
	write_str(T("/dmesg"),
		  "[    5.1] NVRM: The NVIDIA GPU 0000:03:00.0 (PCI ID: 10de:2b85) requires use of the "
		  "NVIDIA open kernel modules.\n[    5.2] NVRM: GPU 0000:03:00.0: RmInitAdapter failed! (0x22:0x56:1011)\n");
	r = check_hw(T("/dmesg"));
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_RESOURCE_MANAGER,
		"(0x22:0x56:1011) = GPU_GPUMGR_ATTACH_GPU_FAILED, "
		"NV_ERR_NOT_SUPPORTED");
	ck_assert_ptr_nonnull(
		strstr(find(r, CT_SEV_PROBLEM, CT_LAYER_RESOURCE_MANAGER, "0x22:0x56")->fix, "-open"));
	free(r);

	/* an unreadable log is one line of information */
	r = check_hw(T("/no-such-dir/kmsg"));
	ck_assert(!r->hw.kmsg.read);
	CK_NOFIND(r, CT_SEV_INFO, CT_LAYER_NONE, "kernel log is not readable"); /* ENOENT: not there at all */
	free(r);
}
END_TEST

/* --no-time (run, doctor): the kernel log's lines without a dmesg time stamp
 * and, unless --pids, without the pid an Xid line names */
START_TEST(t_kmsg_no_time)
{
	struct ct_kmsg k;

	write_str(T("/dmesg"),
		  "[  812.5531] NVRM: Xid (PCI:0000:01:00): 79, pid=23151, name=python3, GPU has "
		  "fallen off the bus.\n");
	ct_stable_set(true, false);
	ct_kmsg_scan(T("/dmesg"), 1000, &k);
	ck_assert_str_eq(k.line[CT_KMSG_FELL_OFF],
			 "NVRM: Xid (PCI:0000:01:00): 79, pid=<pid>, name=python3, GPU has fallen off the bus.");
	ct_stable_set(true, true); /* --pids */
	ct_kmsg_scan(T("/dmesg"), 1000, &k);
	ck_assert_str_eq(k.line[CT_KMSG_FELL_OFF],
			 "NVRM: Xid (PCI:0000:01:00): 79, pid=23151, name=python3, GPU has fallen off the bus.");
	ct_stable_set(false, false);
	ct_kmsg_scan(T("/dmesg"), 1000, &k);
	ck_assert_str_eq(k.line[CT_KMSG_FELL_OFF], "[  812.5531] NVRM: Xid (PCI:0000:01:00): 79, pid=23151, "
						   "name=python3, GPU has fallen off the bus.");
}
END_TEST

START_TEST(t_legacy_kmsg)
{
	struct ct_machine_report *r;

	loaded("590.48.01", true);
	write_str(T("/kmsg"),
		  "4,1,1,-;NVRM: The NVIDIA GeForce GTX 1080 GPU installed in this system is supported "
		  "through the NVIDIA 580.xx Legacy drivers. ... The 590.48.01 NVIDIA driver will ignore this GPU.\n");
	r = check_hw(T("/kmsg"));
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_KERNEL_HANDSHAKE, "580.xx Legacy drivers");
	free(r);
}
END_TEST

/* CUDA_VISIBLE_DEVICES as the driver reads it: the cases of PyTorch's
 * test/test_cuda.py TestVisibleDeviceParses (its model of the driver),
 * plus the GPU count and UUIDs the driver knows */
START_TEST(t_selectors)
{
	static const char *const uuids[] = { "GPU-8a1b2c3d-0000-1111-2222-333344445555",
					     "GPU-8a1bffff-0000-1111-2222-333344445555",
					     "GPU-9e8d35e3-0000-1111-2222-333344445555" };
	struct ct_sel s;

	ct_sel_cuda("1gpu2,2ampere", 8, NULL, 0, &s); /* the rest of an entry is ignored */
	ck_assert_int_eq(s.visible, 2);
	ck_assert_int_eq(s.order[0], 1);
	ck_assert_int_eq(s.order[1], 2);
	ck_assert_int_eq(s.stop, CT_SEL_END);
	ct_sel_cuda("0, 1, 2, -1, 3", 8, NULL, 0, &s); /* a negative ends the list */
	ck_assert_int_eq(s.visible, 3);
	ck_assert_int_eq(s.stop, CT_SEL_NEGATIVE);
	ck_assert_int_eq(s.stop_at, 3);
	ck_assert_str_eq(s.stop_tok, "-1");
	ct_sel_cuda("0, 1, 2, 1", 8, NULL, 0, &s); /* a repeated GPU: none */
	ck_assert_int_eq(s.visible, 0);
	ck_assert_int_eq(s.stop, CT_SEL_DUPLICATE);
	ct_sel_cuda("2, +3, -0, 5", 8, NULL, 0, &s); /* unary signs */
	ck_assert_int_eq(s.visible, 4);
	ck_assert_int_eq(s.order[2], 0);
	ct_sel_cuda("one,two,3,4", 8, NULL, 0, &s); /* a word first: none */
	ck_assert_int_eq(s.visible, 0);
	ck_assert_int_eq(s.stop, CT_SEL_NOT_INDEX);
	ck_assert_int_eq(s.stop_at, 0);
	ct_sel_cuda("4,3,two,one", 8, NULL, 0, &s); /* a word later: the list ends there */
	ck_assert_int_eq(s.visible, 2);
	ct_sel_cuda("0,3", 2, NULL, 0, &s); /* past the GPUs the driver sees */
	ck_assert_int_eq(s.visible, 1);
	ck_assert_int_eq(s.stop, CT_SEL_RANGE);
	ct_sel_cuda("", 2, NULL, 0, &s);
	ck_assert_int_eq(s.stop, CT_SEL_EMPTY);
	/* UUIDs: full, a unique prefix, an ambiguous one, none; unchecked without them */
	ct_sel_cuda("GPU-9e8d35e3,GPU-8a1b2c3d-0000-1111-2222-333344445555", 3, uuids, 3, &s);
	ck_assert_int_eq(s.visible, 2);
	ck_assert_int_eq(s.order[0], 2);
	ck_assert_int_eq(s.order[1], 0);
	ct_sel_cuda("GPU-8a1b", 3, uuids, 3, &s);
	ck_assert_int_eq(s.stop, CT_SEL_AMBIGUOUS);
	ct_sel_cuda("gpu-ffff", 3, uuids, 3, &s);
	ck_assert_int_eq(s.stop, CT_SEL_UUID);
	ct_sel_cuda("GPU-ffff,MIG-1234", 3, NULL, 0, &s);
	ck_assert_int_eq(s.stop, CT_SEL_END);
	ck_assert_int_eq(s.visible, -1);
	ck_assert_int_eq(s.entries, 2);
	/* NVIDIA_VISIBLE_DEVICES */
	ck_assert_int_eq(ct_sel_nvidia("all"), -1);
	ck_assert_int_eq(ct_sel_nvidia("void"), -2);
	ck_assert_int_eq(ct_sel_nvidia("none"), -2);
	ck_assert_int_eq(ct_sel_nvidia(""), -2);
	ck_assert_int_eq(ct_sel_nvidia("0,1,GPU-9e8d"), 3);
}
END_TEST

START_TEST(t_nvidia_visible_devices)
{
	char *env[] = { "NVIDIA_VISIBLE_DEVICES=0,1", NULL };
	struct ct_machine_report *r;

	loaded("580.159.04", true);
	write_str(T("/.dockerenv"), "");
	write_str(T("/dev/nvidia0"), "");
	r = check_env("", env);
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_DEVICE_NODE,
		"NVIDIA_VISIBLE_DEVICES=0,1 names 2 GPU(s) but 1 /dev/nvidiaN");
	free(r);
	write_str(T("/dev/nvidia1"), "");
	r = check_env("", env);
	CK_NOFIND(r, CT_SEV_WARN, CT_LAYER_DEVICE_NODE, "NVIDIA_VISIBLE_DEVICES");
	free(r);
}
END_TEST

/* IMEX channels (catalog Part C, G9): the driver offers them (major in
 * /proc/devices) but creates no node itself (nv-reg.h) */
START_TEST(t_imex_channels)
{
	struct ct_machine_report *r;

	loaded("580.159.04", true);
	write_str(T("/proc/devices"), "Character devices:\n195 nvidia\n195 nvidiactl\n238 nvidia-uvm\n"
				      "497 nvidia-caps\n498 nvidia-caps-imex-channels\n");
	r = check_hw("");
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_DEVICE_NODE, "offers IMEX channels (major 498)");
	ck_assert_ptr_nonnull(strstr(find(r, CT_SEV_INFO, CT_LAYER_DEVICE_NODE, "IMEX")->fix,
				     "mknod -m 666 /dev/nvidia-caps-imex-channels/channel0 c 498 0"));
	free(r);
	/* a regular file in the channel's place: the driver sees no channel */
	write_str(T("/dev/nvidia-caps-imex-channels/channel0"), "");
	r = check_hw("");
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_DEVICE_NODE,
		"IMEX channel node(s) are not character devices of major 498");
	free(r);
	/* switched off: nothing to say */
	write_str(T("/proc/driver/nvidia/params"), "ImexChannelCount: 0\n");
	r = check_hw("");
	CK_NOFIND(r, CT_SEV_WARN, CT_LAYER_DEVICE_NODE, "IMEX");
	CK_NOFIND(r, CT_SEV_INFO, CT_LAYER_DEVICE_NODE, "IMEX");
	free(r);
}
END_TEST

static Suite *hw_suite(void)
{
	Suite *s = suite_create("doctor_hw");
	TCase *t = tcase_create("hw");

	tcase_add_checked_fixture(t, tree_setup, tree_teardown);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, t_pci_names);
	tcase_add_test(t, t_pci_bound_and_audio);
	tcase_add_test(t, t_pascal_on_590);
	tcase_add_test(t, t_blackwell_proprietary);
	tcase_add_test(t, t_unbound_nouveau_vfio);
	tcase_add_test(t, t_module_file_missing);
	tcase_add_test(t, t_module_secure_boot);
	tcase_add_test(t, t_dkms_newer_than_loaded);
	tcase_add_test(t, t_gsp_firmware);
	tcase_add_test(t, t_kmsg_rminit);
	tcase_add_test(t, t_kmsg_no_time);
	tcase_add_test(t, t_legacy_kmsg);
	tcase_add_test(t, t_selectors);
	tcase_add_test(t, t_nvidia_visible_devices);
	tcase_add_test(t, t_imex_channels);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(hw_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
