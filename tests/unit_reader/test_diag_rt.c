/*
 * Verdicts of issue 19 (groups 1, 3, 4) that the CPU rig cannot make for real,
 * on synthetic traces written through the real ring writer (synth.c): what a
 * container's /proc/devices, ld.so.cache, mounts and kernel release say.
 *   - no /dev/nvidia-uvm in a container whose host lists nvidia-uvm (G1)
 *   - a program asking for libcuda.so when ld.so.cache has only libcuda.so.1 (G1)
 *   - libcuda from a mount whose source was deleted on the host (G4)
 *   - an RM control refused with EINVAL and no status under kernel 4.4.0 (G5)
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "synth.h"

#define P 100u

static char path[64];

static void setup(void)
{
	snprintf(path, sizeof path, "/tmp/ct_diagrt_%d.cutrace", (int)getpid());
}

static void teardown(void)
{
	unlink(path);
}

static void verdict_of(struct ct_verdict *v)
{
	char err[256];

	ck_assert_msg(ct_diagnose_file(path, v, err, sizeof err) == 0, "%s", err);
}

static void dlopen_ok(struct ct_synth *s, const char *name, const char *real)
{
	int64_t e;

	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_dlopen, P);
	ct_synth_str(s, CT_FLD_LIBNAME, name);
	ct_synth_u32(s, CT_FLD_DLFLAGS, 2);
	e = ct_synth_commit(s);
	ct_synth_begin(s, CT_REC_EXIT, CT_CALL_dlopen, P);
	ct_synth_exit_info(s, (uint64_t)e, 0x1234, 0);
	ct_synth_u64(s, CT_FLD_HANDLE, 0x1234);
	ct_synth_u32(s, CT_FLD_LIBKIND, CT_LIB_CUDA);
	ct_synth_str(s, CT_FLD_REALPATH, real);
	ct_synth_commit(s);
}

static void snapshot(struct ct_synth *s, const char *maps, const char *mount, const char *cache)
{
	ct_synth_begin(s, CT_REC_NOTE, CT_CALL_cutrace_note, P);
	ct_synth_str(s, CT_FLD_TEXT, "process snapshot");
	ct_synth_str(s, CT_FLD_MAPLIBS, maps);
	if (mount)
		ct_synth_str(s, CT_FLD_MOUNT, mount);
	ct_synth_str(s, CT_FLD_LDCACHE, cache);
	ct_synth_commit(s);
}

START_TEST(t_uvm_not_in_container)
{
	struct ct_synth s;
	struct ct_verdict v;
	int64_t e, o;
	const uint32_t uvm = (uint32_t)CT_NODE_UVM << 16;

	ck_assert_int_eq(ct_synth_create(&s, path, 1 << 20, 4096), 0);
	ct_synth_ctx_str(&s, CT_CTX_DEVICES, "195 nvidia-frontend");
	ct_synth_ctx_str(&s, CT_CTX_DEVICES, "238 nvidia-uvm");
	ct_synth_ctx_str(&s, CT_CTX_ENV, "NVIDIA_VISIBLE_DEVICES=all");
	dlopen_ok(&s, "libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04");
	e = (int64_t)ct_synth_enter(&s, CT_CALL_cuInit, P);
	ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_openat, P);
	ct_synth_str(&s, CT_FLD_PATH, "/dev/nvidia-uvm");
	ct_synth_u32(&s, CT_FLD_OFLAGS, 2);
	ct_synth_u32(&s, CT_FLD_NODE, uvm);
	o = ct_synth_commit(&s);
	ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_openat, P);
	ct_synth_exit_info(&s, (uint64_t)o, -1, 2 /* ENOENT */);
	ct_synth_u32(&s, CT_FLD_NODE, uvm);
	ct_synth_commit(&s);
	ct_synth_exit(&s, CT_CALL_cuInit, P, (uint64_t)e, 999, 0);
	ct_synth_close(&s);
	verdict_of(&v);
	ck_assert_int_eq(v.layer, CT_LAYER_DEVICE_NODE);
	ck_assert_msg(strstr(v.summary, "the host's nvidia_uvm is loaded"), "%s", v.summary);
	ck_assert_msg(strstr(v.fix, "nvidia-ctk cdi generate"), "%s", v.fix);
}
END_TEST

START_TEST(t_ldcache_dev_name_missing)
{
	struct ct_synth s;
	struct ct_verdict v;
	int64_t e;

	ck_assert_int_eq(ct_synth_create(&s, path, 1 << 20, 4096), 0);
	ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_dlopen, P);
	ct_synth_str(&s, CT_FLD_LIBNAME, "libcuda.so");
	ct_synth_u32(&s, CT_FLD_DLFLAGS, 2);
	e = ct_synth_commit(&s);
	ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_dlopen, P);
	ct_synth_exit_info(&s, (uint64_t)e, 0, 0);
	ct_synth_u64(&s, CT_FLD_HANDLE, 0);
	ct_synth_u32(&s, CT_FLD_LIBKIND, CT_LIB_CUDA);
	ct_synth_str(&s, CT_FLD_DLERROR,
		     "libcuda.so: cannot open shared object file: No such file or directory");
	ct_synth_commit(&s);
	snapshot(&s, "", NULL, "libcuda.so.1=/usr/lib/x86_64-linux-gnu/libcuda.so.1\nlibcuda.so=");
	ct_synth_close(&s);
	verdict_of(&v);
	ck_assert_int_eq(v.layer, CT_LAYER_LOADER);
	ck_assert_msg(strstr(v.summary,
			     "ld.so.cache has libcuda.so.1 (/usr/lib/x86_64-linux-gnu/libcuda.so.1) "
			     "but no libcuda.so"),
		      "%s", v.summary);
	ck_assert_msg(strstr(v.fix, "ln -s libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so && ldconfig"),
		      "%s", v.fix);
}
END_TEST

START_TEST(t_mount_deleted)
{
	struct ct_synth s;
	struct ct_verdict v;
	const char *lib = "/run/nvidia/driver/usr/lib/x86_64-linux-gnu/libcuda.so.570.86.15";

	ck_assert_int_eq(ct_synth_create(&s, path, 1 << 20, 4096), 0);
	dlopen_ok(&s, "libcuda.so.1", lib);
	snapshot(&s, lib, "/run/nvidia/driver /run/nvidia/driver//deleted overlay overlay",
		 "libcuda.so.1=/usr/lib/x86_64-linux-gnu/libcuda.so.1\nlibcuda.so=");
	ct_synth_exit(&s, CT_CALL_cuInit, P, ct_synth_enter(&s, CT_CALL_cuInit, P), 803, 0);
	ct_synth_close(&s);
	verdict_of(&v);
	ck_assert_int_eq(v.layer, CT_LAYER_LOADER);
	ck_assert_msg(strstr(v.summary, "comes from a mount whose source was deleted on the host"), "%s",
		      v.summary);
	ck_assert_msg(strstr(v.summary, "cuInit = 803"), "%s", v.summary);
	ck_assert_msg(strstr(v.fix, "kubectl delete pod"), "%s", v.fix);
}
END_TEST

START_TEST(t_gvisor_kernel)
{
	struct ct_synth s;
	struct ct_verdict v;
	unsigned char blk[32] = { 0 };
	int64_t e, i;

	ck_assert_int_eq(ct_synth_create(&s, path, 1 << 20, 4096), 0);
	ct_synth_ctx_str(&s, CT_CTX_KERNEL, "4.4.0");
	ct_synth_ctx_str(&s, CT_CTX_NV_VERSION,
			 "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Release Build\n");
	dlopen_ok(&s, "libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04");
	e = (int64_t)ct_synth_enter(&s, CT_CALL_cuInit, P);
	/* NV_ESC_RM_CONTROL (0x2a, 32-byte NVOS54) on nvidiactl: -1 EINVAL, block untouched */
	ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_ioctl, P);
	ct_synth_u32(&s, CT_FLD_FD, 3);
	ct_synth_u32(&s, CT_FLD_NODE, (uint32_t)CT_NODE_CTL << 16 | 255u);
	ct_synth_u64(&s, CT_FLD_REQUEST, 0xc020462aull);
	ct_synth_u64(&s, CT_FLD_ARGP, 0x7ffd0000);
	ct_synth_u32(&s, CT_FLD_BLOCK_SIZE, 32);
	ct_synth_field(&s, CT_FLD_BLOCK, blk, 32);
	i = ct_synth_commit(&s);
	ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_ioctl, P);
	ct_synth_exit_info(&s, (uint64_t)i, -1, 22 /* EINVAL */);
	ct_synth_field(&s, CT_FLD_BLOCK, blk, 32);
	ct_synth_commit(&s);
	ct_synth_exit(&s, CT_CALL_cuInit, P, (uint64_t)e, 100, 0);
	ct_synth_close(&s);
	verdict_of(&v);
	ck_assert_int_eq(v.layer, CT_LAYER_RESOURCE_MANAGER);
	ck_assert_msg(strstr(v.summary, "returned -1 EINVAL with no RM status"), "%s", v.summary);
	ck_assert_msg(strstr(v.summary, "the kernel reports release 4.4.0, as gVisor's does"), "%s",
		      v.summary);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("diag_runtime");
	TCase *tc = tcase_create("runtime");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, t_uvm_not_in_container);
	tcase_add_test(tc, t_ldcache_dev_name_missing);
	tcase_add_test(tc, t_mount_deleted);
	tcase_add_test(tc, t_gvisor_kernel);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
