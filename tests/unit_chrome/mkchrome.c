/*
 * ct_mkchrome SCENARIO OUT: synthetic traces for the Chrome trace export
 * tests (test_chrome.sh, check_chrome.py).
 *
 *   small FILE  one process, every kind of slice: nested calls, an RM
 *               control with a failing status, an injected EPERM open, a
 *               note, a never-returned UVM ioctl inside a cuInit that did
 *               return (its exit lost), a second thread with an injected
 *               value, an orphan exit, a never-returned call at the end.
 *               The expected (ph, name) list is small.expected.
 *   job DIR     three processes of one "job" in DIR: a.cutrace and
 *               b.cutrace both pid 4242 (other hosts), b started 2.5 s
 *               before a; c.cutrace is pid 5000, the tid of a thread of a
 *               and b.  a has 7 dropped records.
 *   many FILE N  N cuDeviceGet calls, each around an RM control: a big
 *               trace for the memory check (the export must stream).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

#define P CT_SYNTH_PID
#define NODE_CTL ((uint32_t)CT_NODE_CTL << 16 | 255u)
#define NODE_GPU0 ((uint32_t)CT_NODE_GPU << 16)
#define NODE_UVM ((uint32_t)CT_NODE_UVM << 16)
#define REQ_RM_CONTROL 0xc020462aull  /* _IOWR('F', 0x2a, NVOS54, 32 bytes) */
#define UVM_INITIALIZE 0x30000001ull  /* plain UVM command number */

static void context(struct ct_synth *s, const char *host, const char *rank)
{
	static const char cmd[] = "/usr/bin/python3\0train.py\0";
	char env[32];

	ct_synth_ctx_str(s, CT_CTX_EXE, "/usr/bin/python3.11");
	ct_synth_ctx(s, CT_CTX_CMDLINE, cmd, sizeof cmd - 1);
	ct_synth_ctx_str(s, CT_CTX_HOST, host);
	ct_synth_ctx_str(s, CT_CTX_NV_MODVERSION, "580.159.04\n");
	ct_synth_ctx_str(s, CT_CTX_DEVICES, "195 nvidia");
	ct_synth_ctx_str(s, CT_CTX_DEVICES, "238 nvidia-uvm");
	if (rank) {
		snprintf(env, sizeof env, "RANK=%s", rank);
		ct_synth_ctx_str(s, CT_CTX_ENV, env);
	}
}

static int64_t open_enter(struct ct_synth *s, const char *path, uint32_t node)
{
	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_open64, P);
	ct_synth_str(s, CT_FLD_PATH, path);
	ct_synth_u32(s, CT_FLD_OFLAGS, 02);
	ct_synth_u32(s, CT_FLD_NODE, node);
	return ct_synth_commit(s);
}

static void open_call(struct ct_synth *s, const char *path, uint32_t node, uint64_t rdev, int fd, int err,
		      bool injected)
{
	int64_t e = open_enter(s, path, node);

	ct_synth_begin(s, CT_REC_EXIT, CT_CALL_open64, P);
	ct_synth_exit_info(s, (uint64_t)e, fd, err);
	ct_synth_u32(s, CT_FLD_NODE, node);
	if (fd >= 0)
		ct_synth_u64(s, CT_FLD_RDEV, rdev);
	if (injected) {
		uint32_t inj[2] = { 0, CT_INJ_ERROR };
		ct_synth_flags(s, CT_RF_INJECTED);
		ct_synth_field(s, CT_FLD_INJECT, inj, 8);
	}
	ct_synth_commit(s);
}

/* NVOS54 (tracer/decode/ABI.md §3): hClient @0, hObject @4, cmd @8, status @28 */
static void rm_control(struct ct_synth *s, uint32_t cmd, uint32_t status)
{
	uint32_t blk[8] = { 0xc1d00001, 0xc1d00001, cmd, 0, 0, 0, 0, 0 };
	int64_t e;

	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_ioctl, P);
	ct_synth_u32(s, CT_FLD_FD, 3);
	ct_synth_u32(s, CT_FLD_NODE, NODE_CTL);
	ct_synth_u64(s, CT_FLD_REQUEST, REQ_RM_CONTROL);
	ct_synth_u64(s, CT_FLD_ARGP, 0x7ffd2000);
	ct_synth_u32(s, CT_FLD_BLOCK_SIZE, 32);
	ct_synth_field(s, CT_FLD_BLOCK, blk, 32);
	e = ct_synth_commit(s);
	blk[7] = status;
	ct_synth_begin(s, CT_REC_EXIT, CT_CALL_ioctl, P);
	ct_synth_exit_info(s, (uint64_t)e, 0, 0);
	ct_synth_field(s, CT_FLD_BLOCK, blk, 32);
	ct_synth_commit(s);
}

static int small(const char *path)
{
	struct ct_synth s;
	uint64_t blk[2] = { 0, 0 };
	int64_t e, init;

	if (ct_synth_create(&s, path, 1 << 20, 8192) < 0)
		return -1;
	context(&s, "h1", "3");
	s.hdr->flags |= CT_HF_INJECT;
	s.hdr->flags &= ~CT_HF_EXITED;

	ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_dlopen, P);
	ct_synth_str(&s, CT_FLD_LIBNAME, "libcuda.so.1");
	ct_synth_u32(&s, CT_FLD_DLFLAGS, 2);
	e = ct_synth_commit(&s);
	ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_dlopen, P);
	ct_synth_exit_info(&s, (uint64_t)e, 0x55d0c0a0, 0);
	ct_synth_u64(&s, CT_FLD_HANDLE, 0x55d0c0a0);
	ct_synth_u32(&s, CT_FLD_LIBKIND, CT_LIB_CUDA);
	ct_synth_str(&s, CT_FLD_REALPATH, "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04");
	ct_synth_commit(&s);

	ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_cuInit, P);
	ct_synth_i64(&s, CT_FLD_ARG, 0);
	init = ct_synth_commit(&s);
	open_call(&s, "/dev/nvidiactl", NODE_CTL, 195ull << 32 | 255, 3, 0, false);
	rm_control(&s, 0x101, 0);
	rm_control(&s, 0x215, 0x1b);  /* GPU_ATTACH_IDS -> NV_ERR_INSUFFICIENT_PERMISSIONS */
	open_call(&s, "/dev/nvidia0", NODE_GPU0, 0, -1, EPERM, true);
	open_call(&s, "/dev/nvidia-uvm", NODE_UVM, 238ull << 32, 5, 0, false);
	ct_synth_begin(&s, CT_REC_NOTE, CT_CALL_cutrace_note, P);
	ct_synth_str(&s, CT_FLD_TEXT, "synthetic note");
	ct_synth_commit(&s);
	/* UVM_INITIALIZE enters and its exit record is lost */
	ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_ioctl, P);
	ct_synth_u32(&s, CT_FLD_FD, 5);
	ct_synth_u32(&s, CT_FLD_NODE, NODE_UVM);
	ct_synth_u64(&s, CT_FLD_REQUEST, UVM_INITIALIZE);
	ct_synth_u64(&s, CT_FLD_ARGP, 0x7ffd3000);
	ct_synth_u32(&s, CT_FLD_BLOCK_SIZE, 16);
	ct_synth_field(&s, CT_FLD_BLOCK, blk, 16);
	ct_synth_commit(&s);
	ct_synth_exit(&s, CT_CALL_cuInit, P, (uint64_t)init, 999, 0);

	/* another thread: the version, forged by an injection rule */
	e = (int64_t)ct_synth_enter(&s, CT_CALL_cuDriverGetVersion, P + 1);
	ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_cuDriverGetVersion, P + 1);
	ct_synth_exit_info(&s, (uint64_t)e, 0, 0);
	ct_synth_flags(&s, CT_RF_INJECTED);
	ct_synth_i64(&s, CT_FLD_OUT, 12040);
	ct_synth_commit(&s);

	/* an exit whose enter record was lost (no such enter seq) */
	ct_synth_exit(&s, CT_CALL_cuDeviceGet, P, 999999, 0, 0);
	/* the process died in this one */
	ct_synth_enter(&s, CT_CALL_cuDeviceGetCount, P);
	ct_synth_close(&s);
	return 0;
}

/* one process of the job: cuInit (ok or 100) and a thread asking the version */
static int job_proc(const char *path, uint32_t pid, uint64_t realtime, const char *host, const char *rank,
		    bool ok, uint64_t dropped)
{
	struct ct_synth s;
	int64_t e;

	if (ct_synth_create(&s, path, 1 << 20, 8192) < 0)
		return -1;
	context(&s, host, rank);
	s.hdr->pid = pid;
	s.hdr->start_realtime_ns = realtime;
	s.hdr->dropped = dropped;
	/* cuInit at start_mono + 1 ms (ct_synth_create's first clock value) */
	e = (int64_t)ct_synth_enter(&s, CT_CALL_cuInit, pid);
	ct_synth_exit(&s, CT_CALL_cuInit, pid, (uint64_t)e, ok ? 0 : 100, 0);
	e = (int64_t)ct_synth_enter(&s, CT_CALL_cuDriverGetVersion, 5000);
	ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_cuDriverGetVersion, 5000);
	ct_synth_exit_info(&s, (uint64_t)e, 0, 0);
	ct_synth_i64(&s, CT_FLD_OUT, 13000);
	ct_synth_commit(&s);
	ct_synth_close(&s);
	return 0;
}

static int many(const char *path, long n)
{
	struct ct_synth s;
	uint64_t size = 4096 * 1024 + (uint64_t)n * 512;

	if (n <= 0 || ct_synth_create(&s, path, size, 8192) < 0)
		return -1;
	context(&s, "h1", NULL);
	open_call(&s, "/dev/nvidiactl", NODE_CTL, 195ull << 32 | 255, 3, 0, false);
	for (long i = 0; i < n; i++) {
		int64_t e = (int64_t)ct_synth_enter(&s, CT_CALL_cuDeviceGet, P);
		rm_control(&s, 0x201, 0);
		ct_synth_exit(&s, CT_CALL_cuDeviceGet, P, (uint64_t)e, 0, 0);
	}
	ct_synth_close(&s);
	return 0;
}

static int job(const char *dir)
{
	const uint64_t rt = 1700000000ull * 1000000000ull;
	char p[4096];
	int r = 0;

	snprintf(p, sizeof p, "%s/a.cutrace", dir);
	r |= job_proc(p, P, rt, "h1", "0", true, 7);
	snprintf(p, sizeof p, "%s/b.cutrace", dir);
	r |= job_proc(p, P, rt - 2500000000ull, "h2", "1", false, 0);
	snprintf(p, sizeof p, "%s/c.cutrace", dir);
	r |= job_proc(p, 5000, rt + 1000, "h3", "2", true, 0);
	return r;
}

int main(int argc, char **argv)
{
	int r;

	if (argc < 3) {
		fprintf(stderr, "usage: ct_mkchrome small FILE | job DIR | many FILE N\n");
		return 2;
	}
	if (!strcmp(argv[1], "many"))
		r = many(argv[2], argc > 3 ? strtol(argv[3], NULL, 10) : 0);
	else if (!strcmp(argv[1], "small"))
		r = small(argv[2]);
	else if (!strcmp(argv[1], "job"))
		r = job(argv[2]);
	else {
		fprintf(stderr, "ct_mkchrome: unknown scenario '%s'\n", argv[1]);
		return 2;
	}
	if (r < 0) {
		perror(argv[2]);
		return 1;
	}
	return 0;
}
