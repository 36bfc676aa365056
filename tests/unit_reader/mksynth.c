/*
 * ct_mksynth FILE [SCENARIO]: write a synthetic trace for the end-to-end
 * `cutrace show` tests.  Scenarios:
 *   fail  (default) a probe whose cuInit fails: dlopen, cuInit { open64
 *         denied, open of nvidiactl, an RM_CONTROL with a bad status }, a
 *         second thread, a note, an injected result, a call that never
 *         returned, context with env and driver version
 *   ok    the same process shape, everything succeeding
 *   fail-path=PATH  as fail, but the denied open (EACCES, not injected) is
 *         of PATH, recorded as the node /dev/nvidia0 (hostile-trace tests)
 *
 * ct_mksynth --job DIR NPROC NHOSTS [FAILRANK...]: a job of NPROC processes
 * (ranks 0..NPROC-1, pids 100000+rank, RANK and SLURM_PROCID set) spread
 * evenly over NHOSTS hosts node01.. (NHOSTS <= 9999), one subdirectory per
 * host as a job on a shared filesystem leaves them; the FAILRANKs are "fail",
 * the others "ok".  Files are 256 KiB and sparse; CT_MKSYNTH_SIZE=BYTES
 * (at least 256 KiB, e.g. 16777216 as CUTRACE_SIZE's default) makes them
 * that long, still sparse: only the written part takes disk.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "synth.h"

static uint32_t P = CT_SYNTH_PID;
static const char *host = "node-7";
static int rank = -1;
static const char *fail_path = "/dev/nvidia0";
static int fail_errno = EPERM;
static bool fail_injected = true;
#define NODE_CTL ((uint32_t)CT_NODE_CTL << 16 | 255u)

static void context(struct ct_synth *s)
{
	static const char cmd[] = "./probe\0--with space\0it's\0";
	uint32_t cl = sizeof cmd - 1;

	ct_synth_ctx_str(s, CT_CTX_EXE, "/opt/test/probe");
	ct_synth_ctx(s, CT_CTX_CMDLINE, cmd, sizeof cmd - 1);
	ct_synth_ctx(s, CT_CTX_CMDLINE_LEN, &cl, 4);
	ct_synth_ctx_str(s, CT_CTX_HOST, host);
	ct_synth_ctx_str(s, CT_CTX_KERNEL, "6.1.0-18-amd64");
	ct_synth_ctx_str(s, CT_CTX_MACHINE, "x86_64");
	ct_synth_ctx_str(s, CT_CTX_CWD, "/home/u");
	ct_synth_ctx_str(s, CT_CTX_NV_VERSION,
			 "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
			 "(nixbld@)  \nGCC version:  gcc version 15.3.0 (GCC) \n");
	ct_synth_ctx_str(s, CT_CTX_NV_MODVERSION, "580.159.04\n");
	ct_synth_ctx_str(s, CT_CTX_DEVICES, "195 nvidia");
	ct_synth_ctx_str(s, CT_CTX_DEVICES, "238 nvidia-uvm");
	ct_synth_ctx_str(s, CT_CTX_ENV, "CUDA_VISIBLE_DEVICES=0");
	ct_synth_ctx_str(s, CT_CTX_ENV, "LD_LIBRARY_PATH=/usr/local/cuda/lib64");
	if (rank >= 0) {
		char e[64];
		snprintf(e, sizeof e, "RANK=%d", rank);
		ct_synth_ctx_str(s, CT_CTX_ENV, e);
		snprintf(e, sizeof e, "SLURM_PROCID=%d", rank);
		ct_synth_ctx_str(s, CT_CTX_ENV, e);
	}
	ct_synth_ctx_str(s, CT_CTX_INJECT, "open:path=/dev/nvidia0:error=EPERM");
}

static void rm_control(struct ct_synth *s, uint32_t cmd, uint32_t status)
{
	uint32_t blk[8] = { 0xc1d00001, 0xc1d00001, cmd, 0, 0, 0, 0, 0 };
	int64_t e;

	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_ioctl, P);
	ct_synth_u32(s, CT_FLD_FD, 3);
	ct_synth_u32(s, CT_FLD_NODE, NODE_CTL);
	ct_synth_u64(s, CT_FLD_REQUEST, 0xc020462aull);
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

static void open_call(struct ct_synth *s, const char *path, uint32_t node, int fd, int err, bool injected)
{
	int64_t e;

	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_open64, P);
	ct_synth_str(s, CT_FLD_PATH, path);
	ct_synth_u32(s, CT_FLD_OFLAGS, 02 | 02000000);
	ct_synth_u32(s, CT_FLD_NODE, node);
	e = ct_synth_commit(s);
	ct_synth_begin(s, CT_REC_EXIT, CT_CALL_open64, P);
	ct_synth_exit_info(s, (uint64_t)e, fd, err);
	ct_synth_u32(s, CT_FLD_NODE, node);
	if (fd >= 0)
		ct_synth_u64(s, CT_FLD_RDEV, 195ull << 32 | (node & 0xffff));
	if (injected) {
		uint32_t inj[2] = { 0, CT_INJ_ERROR };
		ct_synth_flags(s, CT_RF_INJECTED);
		ct_synth_field(s, CT_FLD_INJECT, inj, 8);
	}
	ct_synth_commit(s);
}

static int write_one(const char *path, bool fail, uint64_t size)
{
	struct ct_synth s;
	int64_t e;

	if (ct_synth_create(&s, path, size, 8192) < 0) {
		perror(path);
		return 1;
	}
	s.hdr->pid = P;
	context(&s);
	if (fail)
		s.hdr->flags |= CT_HF_INJECT;

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
	e = ct_synth_commit(&s);
	open_call(&s, "/dev/nvidiactl", NODE_CTL, 3, 0, false);
	rm_control(&s, 0x101, fail && fail_injected ? 0x1f : 0);
	open_call(&s, fail ? fail_path : "/dev/nvidia0", (uint32_t)CT_NODE_GPU << 16, fail ? -1 : 4,
		  fail ? fail_errno : 0, fail && fail_injected);
	ct_synth_begin(&s, CT_REC_NOTE, CT_CALL_cutrace_note, P);
	ct_synth_str(&s, CT_FLD_TEXT, "synthetic note \"quoted\"");
	ct_synth_commit(&s);
	ct_synth_exit(&s, CT_CALL_cuInit, P, (uint64_t)e, fail ? 100 : 0, 0);

	/* another thread asks for the version */
	e = (int64_t)ct_synth_enter(&s, CT_CALL_cuDriverGetVersion, P + 1);
	ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_cuDriverGetVersion, P + 1);
	ct_synth_exit_info(&s, (uint64_t)e, 0, 0);
	ct_synth_i64(&s, CT_FLD_OUT, 13000);
	ct_synth_commit(&s);

	if (fail) {
		/* a call that never returned (the process was killed in it) */
		ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_cuDeviceGetCount, P);
		ct_synth_commit(&s);
		s.hdr->flags &= ~CT_HF_EXITED;
	} else {
		e = (int64_t)ct_synth_enter(&s, CT_CALL_cuDeviceGetCount, P);
		ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_cuDeviceGetCount, P);
		ct_synth_exit_info(&s, (uint64_t)e, 0, 0);
		ct_synth_i64(&s, CT_FLD_OUT, 1);
		ct_synth_commit(&s);
	}
	ct_synth_close(&s);
	return 0;
}

static int job(int argc, char **argv)
{
	static char dir[4096], path[4200], hostname[64];
	int nproc, nhosts, per;
	const char *sz = getenv("CT_MKSYNTH_SIZE");
	uint64_t size = sz ? strtoull(sz, NULL, 0) : 0;

	if (size < (256u << 10))
		size = 256u << 10;

	if (argc < 5 || (nproc = atoi(argv[3])) < 1 || (nhosts = atoi(argv[4])) < 1 || nhosts > 9999) {
		fprintf(stderr, "usage: ct_mksynth --job DIR NPROC NHOSTS [FAILRANK...]\n");
		return 2;
	}
	per = (nproc + nhosts - 1) / nhosts;
	if (mkdir(argv[2], 0700) < 0 && errno != EEXIST) {
		perror(argv[2]);
		return 1;
	}
	for (int r = 0; r < nproc; r++) {
		bool fail = false;
		for (int i = 5; i < argc; i++)
			fail |= atoi(argv[i]) == r;
		snprintf(hostname, sizeof hostname, "node%02d", r / per + 1);
		snprintf(dir, sizeof dir, "%s/%s", argv[2], hostname);
		if (r % per == 0 && mkdir(dir, 0700) < 0 && errno != EEXIST) {
			perror(dir);
			return 1;
		}
		P = 100000u + (uint32_t)r;
		host = hostname;
		rank = r;
		snprintf(path, sizeof path, "%s/%s-%u-1700000000000001000.cutrace", dir, hostname, P);
		if (write_one(path, fail, size))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--job"))
		return job(argc, argv);
	if (argc < 2) {
		fprintf(stderr,
			"usage: ct_mksynth FILE [fail|ok|fail-path=PATH] | --job DIR NPROC NHOSTS [FAILRANK...]\n");
		return 2;
	}
	if (argc >= 3 && !strncmp(argv[2], "fail-path=", 10)) {
		fail_path = argv[2] + 10;
		fail_errno = EACCES;
		fail_injected = false;
	}
	return write_one(argv[1], argc < 3 || strcmp(argv[2], "ok") != 0, 1 << 20);
}
