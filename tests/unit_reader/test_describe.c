/*
 * describe.c / describe_ioctl.c: what an event is called, whether it
 * failed, and the names of its results, on events read back from synthetic
 * traces (so the fields are exactly what the reader hands out).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "describe.h"
#include "json.h"
#include "synth.h"
#include "trace.h"

Suite *describe_suite(void);

#define P CT_SYNTH_PID
#define NODE_CTL ((uint32_t)CT_NODE_CTL << 16 | 255u)
#define NODE_UVM ((uint32_t)CT_NODE_UVM << 16)

static char dir[64], path[128];
static struct ct_synth syn;

struct evs {
	unsigned n;
	struct ct_event ev[64];
};

static int grab(const struct ct_event *ev, void *user)
{
	struct evs *e = user;

	if (e->n < 64)
		e->ev[e->n++] = *ev;
	return 0;
}

static struct ct_synth *begin_file(void)
{
	snprintf(dir, sizeof dir, "/tmp/ct_desc_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/d.cutrace", dir);
	ck_assert_int_eq(ct_synth_create(&syn, path, 256 << 10, 4096), 0);
	ct_synth_ctx_str(&syn, CT_CTX_NV_MODVERSION, "580.159.04\n");
	return &syn;
}

/* close the file, read it back; the trace stays open for the events' pointers */
static struct ct_trace *finish_file(struct evs *e)
{
	struct ct_trace *t;
	char err[256];

	ct_synth_close(&syn);
	ck_assert_msg(ct_trace_open(path, &t, err, sizeof err) == 0, "%s", err);
	e->n = 0;
	ck_assert_int_eq(ct_trace_events(t, grab, e), 0);
	unlink(path);
	rmdir(dir);
	return t;
}

static struct ct_desc *D(void)
{
	static struct ct_desc *d;
	if (!d)
		d = malloc(sizeof *d);
	return d;
}

static const struct ct_desc_arg *arg(const struct ct_desc *d, const char *key)
{
	for (unsigned i = 0; i < d->nargs; i++)
		if (!strcmp(d->args[i].key, key))
			return &d->args[i];
	return NULL;
}

START_TEST(t_io)
{
	struct ct_synth *s = begin_file();
	struct evs e;
	struct ct_desc *d = D();
	int64_t a;

	/* failed open */
	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_openat, P);
	ct_synth_str(s, CT_FLD_PATH, "/dev/nvidia-uvm");
	ct_synth_u32(s, CT_FLD_DIRFD, (uint32_t)-100);
	ct_synth_u32(s, CT_FLD_OFLAGS, 02 | 02000000);
	ct_synth_u32(s, CT_FLD_NODE, NODE_UVM);
	a = ct_synth_commit(s);
	ct_synth_exit(s, CT_CALL_openat, P, (uint64_t)a, -1, ENOENT);
	/* close */
	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_close, P);
	ct_synth_u32(s, CT_FLD_FD, 5);
	ct_synth_u32(s, CT_FLD_NODE, NODE_CTL);
	a = ct_synth_commit(s);
	ct_synth_exit(s, CT_CALL_close, P, (uint64_t)a, 0, 0);
	struct ct_trace *t = finish_file(&e);
	ck_assert_uint_eq(e.n, 2);

	ct_describe(t, &e.ev[0], d);
	ck_assert_str_eq(d->call, "openat");
	ck_assert_str_eq(d->family, "io");
	ck_assert(!d->ok && d->returned && d->has_result);
	ck_assert_str_eq(d->target, "/dev/nvidia-uvm");
	ck_assert_str_eq(d->result_name, "ENOENT");
	ck_assert_str_eq(d->errno_name, "ENOENT");
	ck_assert_int_eq(d->err, ENOENT);
	ck_assert_str_eq(d->result, "-1 ENOENT (No such file or directory)");
	ck_assert_str_eq(d->text_args, "AT_FDCWD, \"/dev/nvidia-uvm\", O_RDWR|O_CLOEXEC");
	ck_assert_str_eq(arg(d, "path")->s, "/dev/nvidia-uvm");
	ck_assert_str_eq(arg(d, "flags")->s, "O_RDWR|O_CLOEXEC");
	ck_assert_str_eq(arg(d, "node")->s, "nvidia-uvm");
	ck_assert_int_eq(arg(d, "dirfd")->i, -100);

	ct_describe(t, &e.ev[1], d);
	ck_assert_str_eq(d->call, "close");
	ck_assert(d->ok);
	ck_assert_str_eq(d->target, "fd 5 (nvidiactl)");
	ck_assert_str_eq(d->result, "0");
	ck_assert_ptr_null(d->result_name);
	ct_trace_close(t);
}
END_TEST

static int64_t ioctl_enter(struct ct_synth *s, int fd, uint32_t node, uint64_t req, const void *blk,
			   uint16_t len)
{
	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_ioctl, P);
	ct_synth_u32(s, CT_FLD_FD, (uint32_t)fd);
	ct_synth_u32(s, CT_FLD_NODE, node);
	ct_synth_u64(s, CT_FLD_REQUEST, req);
	ct_synth_u64(s, CT_FLD_ARGP, 0x7ffd1000);
	ct_synth_u32(s, CT_FLD_BLOCK_SIZE, len);
	if (len)
		ct_synth_field(s, CT_FLD_BLOCK, blk, len);
	return ct_synth_commit(s);
}

static void ioctl_exit(struct ct_synth *s, int64_t e, int64_t ret, int err, const void *blk, uint16_t len)
{
	ct_synth_begin(s, CT_REC_EXIT, CT_CALL_ioctl, P);
	ct_synth_exit_info(s, (uint64_t)e, ret, err);
	if (len)
		ct_synth_field(s, CT_FLD_BLOCK, blk, len);
	ct_synth_commit(s);
}

START_TEST(t_ioctl)
{
	struct ct_synth *s = begin_file();
	struct evs e;
	struct ct_desc *d = D();
	uint32_t blk[8] = { 0xc1d00001, 0xc1d00001, 0x101, 0, 0, 0, 0, 0 };
	uint32_t uvm[16] = { 0 };
	int64_t a;

	/* RM_CONTROL answered NV_ERR_INVALID_ARGUMENT */
	a = ioctl_enter(s, 3, NODE_CTL, 0xc020462aull, blk, 32);
	blk[7] = 0x1f;
	ioctl_exit(s, a, 0, 0, blk, 32);
	/* the same with NV_OK */
	blk[7] = 0;
	a = ioctl_enter(s, 3, NODE_CTL, 0xc020462aull, blk, 32);
	ioctl_exit(s, a, 0, 0, blk, 32);
	/* unknown UVM command, unknown frontend nr, a failing errno */
	a = ioctl_enter(s, 9, NODE_UVM, 0x12345, uvm, 0);
	ioctl_exit(s, a, -1, ENOSYS, uvm, 0);
	a = ioctl_enter(s, 3, NODE_CTL, 0xc0104699ull, blk, 16);
	ioctl_exit(s, a, -1, EINVAL, blk, 16);
	/* UVM_INITIALIZE (plain number 0x30000001) with rmStatus set */
	uvm[2] = 0x16;
	a = ioctl_enter(s, 9, NODE_UVM, 0x30000001, uvm, 16);
	ioctl_exit(s, a, 0, 0, uvm, 16);
	struct ct_trace *t = finish_file(&e);
	ck_assert_uint_eq(e.n, 5);

	ct_describe(t, &e.ev[0], d);
	ck_assert(d->is_ioctl);
	ck_assert_str_eq(d->ioctl.name, "NV_ESC_RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION");
	ck_assert(d->ioctl.named);
	ck_assert_str_eq(d->ioctl.node, "nvidiactl");
	ck_assert_str_eq(d->target, "fd 3 (nvidiactl) req 0xc020462a");
	ck_assert(d->ioctl.has_status);
	ck_assert_uint_eq(d->ioctl.status, 0x1f);
	ck_assert_str_eq(d->ioctl.status_name, "NV_ERR_INVALID_ARGUMENT");
	ck_assert(!d->ok);             /* ioctl() == 0, but the driver said no */
	ck_assert_int_eq(d->ret, 0);
	ck_assert_ptr_nonnull(strstr(d->detail, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION"));
	ck_assert_ptr_nonnull(strstr(d->detail, "-> NV_ERR_INVALID_ARGUMENT"));
	ck_assert_ptr_nonnull(arg(d, "block_in"));
	ck_assert_uint_eq(arg(d, "block_out")->len, 32);
	ck_assert_uint_eq(arg(d, "request")->u, 0xc020462aull);

	ct_describe(t, &e.ev[1], d);
	ck_assert(d->ok);
	ck_assert(d->ioctl.has_status && d->ioctl.status == 0);
	ck_assert_ptr_null(strstr(d->detail, "status"));

	ct_describe(t, &e.ev[2], d);
	ck_assert_str_eq(d->ioctl.name, "UVM cmd 0x12345");
	ck_assert(!d->ioctl.named);
	ck_assert_str_eq(d->ioctl.node, "nvidia-uvm");
	ck_assert(!d->ok);
	ck_assert_str_eq(d->result_name, "ENOSYS");

	ct_describe(t, &e.ev[3], d);
	ck_assert_str_eq(d->ioctl.name, "_IOC(RW,'F',0x99,16)");
	ck_assert(!d->ok);
	ck_assert_str_eq(d->result, "-1 EINVAL (Invalid argument)");

	ct_describe(t, &e.ev[4], d);
	ck_assert_str_eq(d->ioctl.name, "UVM_INITIALIZE");
	ck_assert(d->ioctl.has_status);
	ck_assert_uint_eq(d->ioctl.status, 0x16);
	ck_assert(!d->ok);
	ct_trace_close(t);
}
END_TEST

START_TEST(t_loader)
{
	struct ct_synth *s = begin_file();
	struct evs e;
	struct ct_desc *d = D();
	int64_t a;

	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_dlopen, P);
	ct_synth_str(s, CT_FLD_LIBNAME, "libcuda.so.1");
	ct_synth_u32(s, CT_FLD_DLFLAGS, 2);
	a = ct_synth_commit(s);
	ct_synth_begin(s, CT_REC_EXIT, CT_CALL_dlopen, P);
	ct_synth_exit_info(s, (uint64_t)a, 0, 0);
	ct_synth_u64(s, CT_FLD_HANDLE, 0);
	ct_synth_str(s, CT_FLD_DLERROR, "libcuda.so.1: cannot open shared object file");
	ct_synth_flags(s, CT_RF_INJECTED);
	{
		uint32_t inj[2] = { 2, CT_INJ_ERROR };
		ct_synth_field(s, CT_FLD_INJECT, inj, 8);
	}
	ct_synth_commit(s);

	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_dlsym, P);
	ct_synth_u64(s, CT_FLD_HANDLE, 0xabc0);
	ct_synth_str(s, CT_FLD_SYMBOL, "cuInit");
	a = ct_synth_commit(s);
	ct_synth_begin(s, CT_REC_EXIT, CT_CALL_dlsym, P);
	ct_synth_exit_info(s, (uint64_t)a, 0x7f0000001000, 0);
	ct_synth_u64(s, CT_FLD_PFN, 0x7f0000002000);
	ct_synth_u32(s, CT_FLD_WRAPPED, 1);
	ct_synth_commit(s);

	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_dlclose, P);
	ct_synth_u64(s, CT_FLD_HANDLE, 0xabc0);
	a = ct_synth_commit(s);
	ct_synth_exit(s, CT_CALL_dlclose, P, (uint64_t)a, 0, 0);
	struct ct_trace *t = finish_file(&e);
	ck_assert_uint_eq(e.n, 3);

	ct_describe(t, &e.ev[0], d);
	ck_assert_str_eq(d->family, "loader");
	ck_assert(!d->ok);
	ck_assert_str_eq(d->result, "NULL");
	ck_assert_str_eq(d->result_name, "NULL");
	ck_assert_str_eq(d->target, "libcuda.so.1");
	ck_assert_str_eq(d->text_args, "\"libcuda.so.1\", RTLD_NOW");
	ck_assert_ptr_nonnull(strstr(d->detail, "cannot open shared object file"));
	ck_assert(d->injected && d->has_inject);
	ck_assert_uint_eq(d->inject_rule, 2);
	ck_assert_uint_eq(d->inject_action, CT_INJ_ERROR);
	ck_assert_ptr_nonnull(strstr(d->detail, "[injected: rule 2, error]"));
	ck_assert_str_eq(arg(d, "inject_action")->s, "error");
	ck_assert_uint_eq(arg(d, "inject_rule")->u, 2);
	ck_assert_str_eq(arg(d, "dlerror")->s, "libcuda.so.1: cannot open shared object file");

	ct_describe(t, &e.ev[1], d);
	ck_assert(d->ok);
	ck_assert_str_eq(d->target, "cuInit");
	ck_assert_str_eq(d->result, "0x7f0000001000");
	ck_assert_ptr_null(d->result_name);
	ck_assert(arg(d, "wrapped")->b);
	ck_assert_ptr_nonnull(strstr(d->detail, "cutrace wrapper"));

	ct_describe(t, &e.ev[2], d);
	ck_assert(d->ok);
	ck_assert_str_eq(d->target, "0xabc0");
	ct_trace_close(t);
}
END_TEST

START_TEST(t_cuda)
{
	struct ct_synth *s = begin_file();
	struct evs e;
	struct ct_desc *d = D();
	int64_t a;

	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_cuInit, P);
	ct_synth_i64(s, CT_FLD_ARG, 0);
	ct_synth_str(s, CT_FLD_ENV, "CUDA_VISIBLE_DEVICES=");
	a = ct_synth_commit(s);
	ct_synth_exit(s, CT_CALL_cuInit, P, (uint64_t)a, 100, 0);

	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_cuGetProcAddress_v2, P);
	ct_synth_str(s, CT_FLD_SYMBOL, "cuFooBar");
	ct_synth_u32(s, CT_FLD_CUDAVER, 12000);
	ct_synth_u64(s, CT_FLD_GPAFLAGS, 0);
	a = ct_synth_commit(s);
	ct_synth_begin(s, CT_REC_EXIT, CT_CALL_cuGetProcAddress_v2, P);
	ct_synth_exit_info(s, (uint64_t)a, 0, 0);
	ct_synth_u64(s, CT_FLD_PFN, 0);
	ct_synth_u32(s, CT_FLD_WRAPPED, 0);
	ct_synth_u32(s, CT_FLD_SYMSTATUS, 1);
	ct_synth_commit(s);

	a = (int64_t)ct_synth_enter(s, CT_CALL_cudaGetDeviceCount, P);
	ct_synth_exit(s, CT_CALL_cudaGetDeviceCount, P, (uint64_t)a, 35, 0);
	a = (int64_t)ct_synth_enter(s, CT_CALL_nvmlInit_v2, P);
	ct_synth_exit(s, CT_CALL_nvmlInit_v2, P, (uint64_t)a, 18, 0);

	a = (int64_t)ct_synth_enter(s, CT_CALL_cuDriverGetVersion, P);
	ct_synth_begin(s, CT_REC_EXIT, CT_CALL_cuDriverGetVersion, P);
	ct_synth_exit_info(s, (uint64_t)a, 0, 0);
	ct_synth_i64(s, CT_FLD_OUT, 13000);
	ct_synth_commit(s);

	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_cuDeviceGet, P);
	ct_synth_i64(s, CT_FLD_ARG, 1);
	ct_synth_commit(s); /* never returns */

	ct_synth_begin(s, CT_REC_NOTE, CT_CALL_cutrace_note, P);
	ct_synth_str(s, CT_FLD_TEXT, "a note");
	ct_synth_commit(s);
	struct ct_trace *t = finish_file(&e);
	ck_assert_uint_eq(e.n, 7);

	ct_describe(t, &e.ev[0], d);
	ck_assert_str_eq(d->family, "driver");
	ck_assert(!d->ok);
	ck_assert_str_eq(d->result_name, "CUDA_ERROR_NO_DEVICE");
	ck_assert_str_eq(d->result, "CUDA_ERROR_NO_DEVICE (100)");
	ck_assert_str_eq(d->text_args, "flags=0x0");
	ck_assert_ptr_nonnull(strstr(d->detail, "[CUDA_VISIBLE_DEVICES=]"));
	ck_assert_int_eq(arg(d, "flags")->i, 0);
	ck_assert_str_eq(arg(d, "env")->s, "CUDA_VISIBLE_DEVICES=");

	/* cuGetProcAddress: CUDA_SUCCESS with "symbol not found" is not a failure */
	ct_describe(t, &e.ev[1], d);
	ck_assert(d->ok);
	ck_assert_str_eq(d->result_name, "CUDA_SUCCESS");
	ck_assert_str_eq(d->target, "cuFooBar");
	ck_assert_ptr_nonnull(strstr(d->detail, "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND"));
	ck_assert_int_eq(arg(d, "symstatus")->i, 1);
	ck_assert_int_eq(arg(d, "cuda_version")->i, 12000);

	ct_describe(t, &e.ev[2], d);
	ck_assert_str_eq(d->family, "runtime");
	ck_assert_str_eq(d->result_name, "cudaErrorInsufficientDriver");
	ck_assert(!d->ok);

	ct_describe(t, &e.ev[3], d);
	ck_assert_str_eq(d->family, "nvml");
	ck_assert_str_eq(d->result_name, "NVML_ERROR_LIB_RM_VERSION_MISMATCH");

	ct_describe(t, &e.ev[4], d);
	ck_assert(d->ok);
	ck_assert_str_eq(d->result, "CUDA_SUCCESS");
	ck_assert_str_eq(d->detail, "-> version 13000");
	ck_assert_int_eq(arg(d, "version")->i, 13000);

	ct_describe(t, &e.ev[5], d);
	ck_assert(!d->returned && !d->ok && !d->has_result);
	ck_assert_str_eq(d->result, "?");
	ck_assert_ptr_null(d->result_name);
	ck_assert_int_eq(arg(d, "ordinal")->i, 1);

	ct_describe(t, &e.ev[6], d);
	ck_assert(d->is_note && d->ok && d->returned);
	ck_assert_str_eq(d->call, "note");
	ck_assert_str_eq(d->family, "shim");
	ck_assert_str_eq(d->target, "a note");
	ct_trace_close(t);
}
END_TEST

START_TEST(t_args_json)
{
	struct ct_synth *s = begin_file();
	struct evs e;
	struct ct_desc *d = D();
	struct ct_json j;
	char *out = NULL;
	size_t outlen = 0;
	unsigned char raw[3] = { 0x01, 0xab, 0x22 };
	int64_t a;

	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_open, P);
	ct_synth_str(s, CT_FLD_PATH, "/dev/\"odd\"\n");
	ct_synth_u32(s, CT_FLD_OFLAGS, 0);
	ct_synth_field(s, 999, raw, 3); /* a field from the future */
	a = ct_synth_commit(s);
	ct_synth_exit(s, CT_CALL_open, P, (uint64_t)a, 4, 0);
	struct ct_trace *t = finish_file(&e);

	ct_describe(t, &e.ev[0], d);
	FILE *f = open_memstream(&out, &outlen);
	ct_json_init(&j, f, false);
	ct_desc_args_json(&j, d);
	fclose(f);
	/* raw bytes only with show --raw; by default their length */
	ck_assert_str_eq(out, "{\"path\":\"/dev/\\\"odd\\\"\\n\",\"flags\":\"O_RDONLY\",\"field_999_bytes\":3}");
	free(out);
	out = NULL;
	ct_desc_json_raw = true;
	f = open_memstream(&out, &outlen);
	ct_json_init(&j, f, false);
	ct_desc_args_json(&j, d);
	fclose(f);
	ct_desc_json_raw = false;
	ck_assert_str_eq(out, "{\"path\":\"/dev/\\\"odd\\\"\\n\",\"flags\":\"O_RDONLY\",\"field_999\":\"01ab22\"}");
	ck_assert_str_eq(d->text_args, "\"/dev/\\\"odd\\\"\\n\", O_RDONLY");
	free(out);
	ct_trace_close(t);
}
END_TEST

START_TEST(t_node_names)
{
	char b[48];

	ck_assert_str_eq(ct_node_name((uint32_t)CT_NODE_CTL << 16 | 255, b, sizeof b), "nvidiactl");
	ck_assert_str_eq(ct_node_name((uint32_t)CT_NODE_GPU << 16 | 3, b, sizeof b), "nvidia3");
	ck_assert_str_eq(ct_node_name((uint32_t)CT_NODE_UVM_TOOLS << 16 | 1, b, sizeof b), "nvidia-uvm-tools");
	ck_assert_str_eq(ct_node_name((uint32_t)CT_NODE_CAPS << 16 | 2, b, sizeof b), "nvidia-caps/nvidia-cap2");
	ck_assert_str_eq(ct_node_name(0, b, sizeof b), "fd");
	ck_assert_str_eq(ct_node_name(77u << 16, b, sizeof b), "node#77");
	ck_assert_str_eq(ct_family_name(CT_FAM_RUNTIME), "runtime");
	ck_assert_str_eq(ct_family_name(42), "unknown");
	ck_assert_str_eq(ct_inject_action_name(CT_INJ_STATUS, b, sizeof b), "status");
	ck_assert_str_eq(ct_inject_action_name(99, b, sizeof b), "action#99");
}
END_TEST

Suite *describe_suite(void)
{
	Suite *s = suite_create("describe");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, t_io);
	tcase_add_test(tc, t_ioctl);
	tcase_add_test(tc, t_loader);
	tcase_add_test(tc, t_cuda);
	tcase_add_test(tc, t_args_json);
	tcase_add_test(tc, t_node_names);
	suite_add_tcase(s, tc);
	return s;
}
