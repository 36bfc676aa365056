/*
 * rel_verdict CASE DIR: a healthy process must not be diagnosed as hung
 * because of how its trace was cut.  Both cases are traces of one healthy
 * process (open of /dev/nvidiactl, ioctls that all return, cuInit = 0),
 * written with the real ring writer (tests/unit_reader/synth.h), as the
 * shim writes them in the field:
 *
 *   boundary  a long-running process: the ring wrapped many times.  One
 *             ioctl's enter record is the last record of the init area (never
 *             overwritten) and its exit went to the ring (since overwritten).
 *             The same thread then made thousands of calls, so this one
 *             returned.  Seen in rel_threads: every busy multi-threaded trace
 *             that wraps has such calls.
 *   window    a thread is preempted inside an ioctl while other threads make
 *             70000 calls (more than the reader's 65536-call pairing window);
 *             then its exit is written.  Both records are in the file.  Seen
 *             in rel_threads with 4 busy threads on 2 cores.
 *
 * Checks: the verdict is not "hung", and the call is not reported as never
 * returned (the reader marks it exit_unknown: its exit may have been lost).  Exit 0 held, 1 failed (the reason is printed), 2 usage/IO.
 */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "synth.h"
#include "trace.h"

#define NODE_CTL (((uint32_t)CT_NODE_CTL << 16) | 255u)
#define REQ 0xc020462aull /* _IOWR('F', NV_ESC_RM_CONTROL, 32) */

static struct ct_synth S;

static uint64_t put_open(struct ct_synth *s, uint32_t tid)
{
	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_openat, tid);
	ct_synth_str(s, CT_FLD_PATH, "/dev/nvidiactl");
	ct_synth_u32(s, CT_FLD_OFLAGS, 2);
	ct_synth_u32(s, CT_FLD_NODE, NODE_CTL);
	uint64_t e = (uint64_t)ct_synth_commit(s);
	ct_synth_begin(s, CT_REC_EXIT, CT_CALL_openat, tid);
	ct_synth_exit_info(s, e, 3, 0);
	ct_synth_u32(s, CT_FLD_NODE, NODE_CTL);
	ct_synth_u64(s, CT_FLD_RDEV, (195ull << 32) | 255);
	return (uint64_t)ct_synth_commit(s);
}

/* an ioctl enter; pad: total record size (0: natural) */
static int64_t ioctl_enter(struct ct_synth *s, uint32_t tid, uint32_t pad)
{
	ct_synth_begin(s, CT_REC_ENTER, CT_CALL_ioctl, tid);
	ct_synth_u32(s, CT_FLD_FD, 3);
	ct_synth_u32(s, CT_FLD_NODE, NODE_CTL);
	ct_synth_u64(s, CT_FLD_REQUEST, REQ);
	if (pad)
		ct_synth_pad_to(s, pad);
	return ct_synth_commit(s);
}

static int64_t ioctl_exit(struct ct_synth *s, uint32_t tid, uint64_t e)
{
	ct_synth_begin(s, CT_REC_EXIT, CT_CALL_ioctl, tid);
	ct_synth_exit_info(s, e, 0, 0);
	return ct_synth_commit(s);
}

static void cuinit(struct ct_synth *s, uint32_t tid)
{
	uint64_t e = ct_synth_enter(s, CT_CALL_cuInit, tid);
	ct_synth_exit(s, CT_CALL_cuInit, tid, e, 0, 0);
}

struct look {
	uint64_t seq;
	bool found, returned;
};

static int find_cb(const struct ct_event *ev, void *user)
{
	struct look *l = user;

	if (ev->has_enter && ev->seq == l->seq) {
		l->found = true;
		l->returned = ev->has_exit || ev->exit_unknown;
	}
	return 0;
}

static int judge(const char *path, uint64_t seq, const char *what)
{
	struct ct_verdict v;
	struct ct_trace *t;
	struct look l = { seq, false, false };
	char err[512];
	int rc = 0;

	if (ct_diagnose_file(path, &v, err, sizeof err) < 0 || ct_trace_open(path, &t, err, sizeof err) < 0) {
		printf("FAIL: %s: %s\n", path, err);
		return 2;
	}
	ct_trace_events(t, find_cb, &l);
	const struct ct_trace_stats *st = ct_trace_stats(t);
	printf("%s: %llu events, %llu unfinished, %llu orphan exits, dropped %llu; verdict %s%s: %s\n", what,
	       (unsigned long long)st->events, (unsigned long long)st->unfinished,
	       (unsigned long long)st->orphan_exits, (unsigned long long)st->dropped,
	       v.ok ? "OK" : "FAILED", v.hung ? " (hung)" : "", v.summary);
	if (v.hung || !v.ok) {
		printf("FAIL: %s: a healthy process is diagnosed as %s: %s\n", what, v.hung ? "hung" : "failed",
		       v.summary);
		rc = 1;
	}
	if (l.found && !l.returned) {
		printf("FAIL: %s: the call at seq %llu is shown as never returned, but it returned\n", what,
		       (unsigned long long)seq);
		rc = 1;
	}
	ct_trace_close(t);
	return rc;
}

static int case_boundary(const char *dir)
{
	char path[4096];
	uint64_t e, init;
	const uint32_t tid = 100;

	snprintf(path, sizeof path, "%s/boundary.cutrace", dir);
	if (ct_synth_create(&S, path, 256 * 1024, 4096) < 0)
		return 2;
	init = S.hdr->init_slots;
	put_open(&S, tid);
	cuinit(&S, tid);
	/* complete calls while a pair fits in the init area */
	while (S.hdr->head + 2 < init)
		ioctl_exit(&S, tid, (uint64_t)ioctl_enter(&S, tid, 0));
	/* the enter fills the init area exactly; its exit goes to the ring */
	e = (uint64_t)ioctl_enter(&S, tid, (uint32_t)(init - S.hdr->head) * CUTRACE_SLOT_SIZE);
	if (S.hdr->head != init) {
		printf("FAIL: boundary: could not place the enter at the end of the init area\n");
		return 2;
	}
	ioctl_exit(&S, tid, e);
	/* the same thread goes on: thousands of calls, the ring wraps */
	for (int i = 0; i < 20000; i++)
		ioctl_exit(&S, tid, (uint64_t)ioctl_enter(&S, tid, 0));
	ct_synth_close(&S);
	return judge(path, e, "boundary");
}

static int case_window(const char *dir)
{
	char path[4096];
	uint64_t e;

	snprintf(path, sizeof path, "%s/window.cutrace", dir);
	if (ct_synth_create(&S, path, 64ull << 20, 4096) < 0)
		return 2;
	put_open(&S, 100);
	cuinit(&S, 100);
	e = (uint64_t)ioctl_enter(&S, 100, 0);  /* thread 100 is preempted here */
	for (int i = 0; i < 70000; i++)
		ioctl_exit(&S, 101, (uint64_t)ioctl_enter(&S, 101, 0));
	ioctl_exit(&S, 100, e);                   /* ... and returns */
	ioctl_exit(&S, 100, (uint64_t)ioctl_enter(&S, 100, 0));
	if (S.hdr->dropped) {
		printf("FAIL: window: the trace wrapped; make it bigger\n");
		return 2;
	}
	ct_synth_close(&S);
	return judge(path, e, "window");
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "boundary"))
		return case_boundary(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "window"))
		return case_window(argv[2]);
	fprintf(stderr, "usage: rel_verdict boundary|window DIR\n");
	return 2;
}
