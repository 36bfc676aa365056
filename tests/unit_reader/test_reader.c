/*
 * The trace reader (tracer/read/reader.c) against files written by the real ring
 * writer (synth.c over common/ring.c): header validation, record streaming,
 * torn/overwritten/malformed records, ring wrap-around, enter/exit pairing
 * with its bounded window, bounded memory, FILE|DIR listing.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "synth.h"
#include "trace.h"
#include "describe.h"

Suite *describe_suite(void);

#define P CT_SYNTH_PID
#define NODE_CTL ((uint32_t)CT_NODE_CTL << 16 | 255u)

static char tmpdir[64];

static void mk_tmpdir(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/ct_reader_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void rm_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

static const char *tpath(const char *name)
{
	static char buf[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof buf[i], "%s/%s", tmpdir, name);
	return buf[i];
}

/* ---- collecting events ---------------------------------------------------------- */

#define MAXEV 20000

struct log {
	unsigned n;
	uint64_t total;
	struct ct_event ev[MAXEV];
};

static int collect(const struct ct_event *ev, void *user)
{
	struct log *l = user;

	if (l->n < MAXEV)
		l->ev[l->n++] = *ev;
	l->total++;
	return 0;
}

static struct log *new_log(void)
{
	struct log *l = calloc(1, sizeof *l);
	ck_assert_ptr_nonnull(l);
	return l;
}

static struct ct_trace *open_ok(const char *path)
{
	struct ct_trace *t;
	char err[256] = "";

	ck_assert_msg(ct_trace_open(path, &t, err, sizeof err) == 0, "%s: %s", path, err);
	return t;
}

static void *read_all(const char *path, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	void *buf;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static void write_all(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* ---- the round-trip trace ----------------------------------------------------------- */

static const char nv_open_text[] =
	"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \n"
	"GCC version:  gcc version 15.3.0 (GCC) \n";

/*
 * dlopen; cuInit { open64; ioctl; note }; cuDriverGetVersion on another thread.
 * 11 records, 6 events.
 */
static void write_roundtrip(const char *path)
{
	struct ct_synth s;
	static const char cmdline[] = "probe\0--ctx\0";
	uint32_t cl = 12;
	unsigned char blk[32];
	uint32_t status = 0x1f;
	int64_t e0, e1, e2, e3, e4;

	ck_assert_int_eq(ct_synth_create(&s, path, 1 << 20, 4096), 0);
	ct_synth_ctx_str(&s, CT_CTX_EXE, "/usr/bin/probe");
	ct_synth_ctx(&s, CT_CTX_CMDLINE, cmdline, sizeof cmdline - 1);
	ct_synth_ctx(&s, CT_CTX_CMDLINE_LEN, &cl, 4);
	ct_synth_ctx_str(&s, CT_CTX_HOST, "node1");
	ct_synth_ctx_str(&s, CT_CTX_KERNEL, "6.1.0-18-amd64");
	ct_synth_ctx_str(&s, CT_CTX_NV_VERSION, nv_open_text);
	ct_synth_ctx_str(&s, CT_CTX_ENV, "CUDA_VISIBLE_DEVICES=0");
	ct_synth_ctx_str(&s, CT_CTX_ENV, "LD_LIBRARY_PATH=/opt/x");

	ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_dlopen, P);
	ct_synth_str(&s, CT_FLD_LIBNAME, "libcuda.so.1");
	ct_synth_u32(&s, CT_FLD_DLFLAGS, 2);
	e0 = ct_synth_commit(&s);
	ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_dlopen, P);
	ct_synth_exit_info(&s, (uint64_t)e0, 0x1234, 0);
	ct_synth_u64(&s, CT_FLD_HANDLE, 0x1234);
	ct_synth_u32(&s, CT_FLD_LIBKIND, CT_LIB_CUDA);
	ct_synth_str(&s, CT_FLD_REALPATH, "/usr/lib/libcuda.so.580.159.04");
	ct_synth_commit(&s);

	ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_cuInit, P);
	ct_synth_i64(&s, CT_FLD_ARG, 0);
	e1 = ct_synth_commit(&s);

	ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_open64, P);
	ct_synth_str(&s, CT_FLD_PATH, "/dev/nvidiactl");
	ct_synth_u32(&s, CT_FLD_OFLAGS, 2);
	ct_synth_u32(&s, CT_FLD_NODE, NODE_CTL);
	e2 = ct_synth_commit(&s);
	ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_open64, P);
	ct_synth_exit_info(&s, (uint64_t)e2, 3, 0);
	ct_synth_u32(&s, CT_FLD_NODE, NODE_CTL);
	ct_synth_u64(&s, CT_FLD_RDEV, 195ull << 32 | 255);
	ct_synth_commit(&s);

	memset(blk, 0, sizeof blk);
	ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_ioctl, P);
	ct_synth_u32(&s, CT_FLD_FD, 3);
	ct_synth_u32(&s, CT_FLD_NODE, NODE_CTL);
	ct_synth_u64(&s, CT_FLD_REQUEST, 0xc020462aull);
	ct_synth_u64(&s, CT_FLD_ARGP, 0x7ffd0000);
	ct_synth_u32(&s, CT_FLD_BLOCK_SIZE, 32);
	ct_synth_field(&s, CT_FLD_BLOCK, blk, 32);
	e3 = ct_synth_commit(&s);
	memcpy(blk + 28, &status, 4);
	ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_ioctl, P);
	ct_synth_exit_info(&s, (uint64_t)e3, 0, 0);
	ct_synth_field(&s, CT_FLD_BLOCK, blk, 32);
	ct_synth_commit(&s);

	ct_synth_begin(&s, CT_REC_NOTE, CT_CALL_cutrace_note, P);
	ct_synth_str(&s, CT_FLD_TEXT, "hello");
	ct_synth_commit(&s);

	ct_synth_exit(&s, CT_CALL_cuInit, P, (uint64_t)e1, 100, 0);

	e4 = (int64_t)ct_synth_enter(&s, CT_CALL_cuDriverGetVersion, P + 1);
	ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_cuDriverGetVersion, P + 1);
	ct_synth_exit_info(&s, (uint64_t)e4, 0, 0);
	ct_synth_i64(&s, CT_FLD_OUT, 13000);
	ct_synth_commit(&s);
	ct_synth_close(&s);
}

static void check_roundtrip(struct ct_trace *t)
{
	struct log *l = new_log();
	const struct ct_trace_stats *st;
	struct ct_fieldv f;
	char buf[256];
	uint64_t u64;
	uint32_t u32;
	int64_t i64;

	ck_assert_int_eq(ct_trace_events(t, collect, l), 0);
	st = ct_trace_stats(t);
	ck_assert_uint_eq(l->n, 6);
	ck_assert_uint_eq(st->records, 11);
	ck_assert_uint_eq(st->events, 6);
	ck_assert_uint_eq(st->torn + st->overwritten + st->bad + st->unfinished + st->orphan_exits, 0);

	for (unsigned i = 0; i < l->n; i++) {
		ck_assert_uint_eq(l->ev[i].index, i);
		if (i)
			ck_assert_uint_gt(l->ev[i].seq, l->ev[i - 1].seq);
	}
	/* dlopen */
	ck_assert_uint_eq(l->ev[0].call, CT_CALL_dlopen);
	ck_assert(l->ev[0].has_enter && l->ev[0].has_exit);
	ck_assert_int_eq(l->ev[0].ret, 0x1234);
	ck_assert_str_eq(ct_rec_str(&l->ev[0].enter, CT_FLD_LIBNAME, buf, sizeof buf), "libcuda.so.1");
	ck_assert_ptr_nonnull(ct_ev_field(&l->ev[0], CT_FLD_REALPATH, &f));
	ck_assert_int_eq(f.len, strlen("/usr/lib/libcuda.so.580.159.04"));
	ck_assert(ct_rec_u32(&l->ev[0].exit, CT_FLD_LIBKIND, &u32) && u32 == CT_LIB_CUDA);
	/* cuInit: returned 100 after its nested calls */
	ck_assert_uint_eq(l->ev[1].call, CT_CALL_cuInit);
	ck_assert_int_eq(l->ev[1].ret, 100);
	ck_assert_uint_eq(l->ev[1].dur_ns, 6000); /* 6 records later, 1 us each */
	ck_assert(ct_rec_i64(&l->ev[1].enter, CT_FLD_ARG, &i64) && i64 == 0);
	/* open64 */
	ck_assert_uint_eq(l->ev[2].call, CT_CALL_open64);
	ck_assert_int_eq(l->ev[2].ret, 3);
	ck_assert(ct_rec_u64(&l->ev[2].exit, CT_FLD_RDEV, &u64) && u64 == (195ull << 32 | 255));
	ck_assert_uint_eq(l->ev[2].dur_ns, 1000);
	/* ioctl: block after the call carries the status */
	ck_assert_uint_eq(l->ev[3].call, CT_CALL_ioctl);
	ck_assert(ct_rec_u64(&l->ev[3].enter, CT_FLD_REQUEST, &u64) && u64 == 0xc020462aull);
	ck_assert_ptr_nonnull(ct_rec_field(&l->ev[3].exit, CT_FLD_BLOCK, &f));
	ck_assert_int_eq(f.len, 32);
	memcpy(&u32, f.data + 28, 4);
	ck_assert_uint_eq(u32, 0x1f);
	/* note */
	ck_assert_uint_eq(l->ev[4].type, CT_REC_NOTE);
	ck_assert(!l->ev[4].has_exit);
	ck_assert_str_eq(ct_rec_str(&l->ev[4].enter, CT_FLD_TEXT, buf, sizeof buf), "hello");
	/* second thread */
	ck_assert_uint_eq(l->ev[5].tid, P + 1);
	ck_assert(ct_rec_i64(&l->ev[5].exit, CT_FLD_OUT, &i64) && i64 == 13000);

	/* context */
	ck_assert_str_eq(ct_trace_ctx_str(t, CT_CTX_EXE, 0, buf, sizeof buf), "/usr/bin/probe");
	ck_assert_str_eq(ct_trace_ctx_str(t, CT_CTX_ENV, 1, buf, sizeof buf), "LD_LIBRARY_PATH=/opt/x");
	ck_assert_ptr_null(ct_trace_ctx_str(t, CT_CTX_ENV, 2, buf, sizeof buf));
	ck_assert_str_eq(ct_trace_env(t, "CUDA_VISIBLE_DEVICES", buf, sizeof buf), "0");
	ck_assert_ptr_null(ct_trace_env(t, "CUDA", buf, sizeof buf));
	ck_assert_uint_eq(ct_trace_driver_version(t), 580159004u);
	ck_assert_str_eq(ct_trace_driver_version_str(t), "580.159.04");
	ck_assert_uint_eq(ct_trace_header(t)->pid, P);

	/* a second pass gives the same result (state is reset) */
	l->n = 0;
	ck_assert_int_eq(ct_trace_events(t, collect, l), 0);
	ck_assert_uint_eq(l->n, 6);
	ck_assert_uint_eq(ct_trace_stats(t)->records, 11);
	free(l);
}

START_TEST(t_roundtrip_file)
{
	mk_tmpdir();
	write_roundtrip(tpath("r.cutrace"));
	struct ct_trace *t = open_ok(tpath("r.cutrace"));
	ck_assert_str_eq(ct_trace_path(t), tpath("r.cutrace"));
	check_roundtrip(t);
	ct_trace_close(t);
	rm_tmpdir();
}
END_TEST

START_TEST(t_roundtrip_mem)
{
	size_t len;
	void *buf;
	struct ct_trace *t;
	char err[256];

	mk_tmpdir();
	write_roundtrip(tpath("r.cutrace"));
	buf = read_all(tpath("r.cutrace"), &len);
	ck_assert_int_eq(ct_trace_open_mem(buf, len, &t, err, sizeof err), 0);
	memset(buf, 0xAA, len); /* the reader keeps its own copy */
	free(buf);
	check_roundtrip(t);
	ct_trace_close(t);
	rm_tmpdir();
}
END_TEST

/* callback's non-zero return stops the stream and is returned */
static int stop_at_3(const struct ct_event *ev, void *user)
{
	(void)user;
	return ev->index == 2 ? 77 : 0;
}

START_TEST(t_stop)
{
	mk_tmpdir();
	write_roundtrip(tpath("r.cutrace"));
	struct ct_trace *t = open_ok(tpath("r.cutrace"));
	ck_assert_int_eq(ct_trace_events(t, stop_at_3, NULL), 77);
	ck_assert_uint_eq(ct_trace_stats(t)->events, 3);
	ct_trace_close(t);
	rm_tmpdir();
}
END_TEST

/* ---- header validation ----------------------------------------------------------------- */

enum mut { M_ZERO_LEN, M_SHORT, M_MAGIC, M_MAGIC_ZERO, M_ENDIAN_FOREIGN, M_ENDIAN_JUNK, M_HDR_SIZE,
	   M_VERSION_NEW, M_VERSION_OLD, M_WORD, M_SLOT, M_TRUNCATED, M_RING_ZERO, M_INIT_HUGE,
	   M_TAGS_OUT, M_SLOTS_OVERFLOW, M_CTX_OUT, M_CTX_LEN, M_MISALIGNED, M_ORDER_MAGIC_VERSION,
	   M_ORDER_ENDIAN_VERSION, M_OVERLAP, M__COUNT };

static const struct {
	const char *want;
} mut_want[M__COUNT] = {
	[M_ZERO_LEN] = { "empty file (0 bytes)" },
	[M_SHORT] = { "file too small for a cutrace header (100 bytes, need 512)" },
	[M_MAGIC] = { "not a cutrace trace file (bad magic)" },
	[M_MAGIC_ZERO] = { "header never completed" },
	[M_ENDIAN_FOREIGN] = { "written on a machine of the other byte order; not supported" },
	[M_ENDIAN_JUNK] = { "byte-order probe 0x11223344" },
	[M_HDR_SIZE] = { "header size 100" },
	[M_VERSION_NEW] = { "format version 2.3 is newer than this cutrace (reads 1.x)" },
	[M_VERSION_OLD] = { "format version 0.9 is not supported" },
	[M_WORD] = { "word size 3" },
	[M_SLOT] = { "slot size 32" },
	[M_TRUNCATED] = { "truncated: header says 1048576 bytes, file has 524288" },
	[M_RING_ZERO] = { "no ring slots" },
	[M_INIT_HUGE] = { "slot counts" },
	[M_TAGS_OUT] = { "corrupt header (tag area ends past the file)" },
	[M_SLOTS_OVERFLOW] = { "corrupt header (slot area ends past the file)" },
	[M_CTX_OUT] = { "corrupt header (context area ends past the file)" },
	[M_CTX_LEN] = { "context length 4097 exceeds its capacity 4096" },
	[M_MISALIGNED] = { "misaligned" },
	[M_ORDER_MAGIC_VERSION] = { "bad magic" },
	[M_ORDER_ENDIAN_VERSION] = { "other byte order" },
	[M_OVERLAP] = { "corrupt header (tag area overlaps the context)" },
};

/* apply mutation m to a valid 1 MiB trace in buf; returns the new length */
static size_t mutate(unsigned char *buf, size_t len, enum mut m)
{
	struct cutrace_header *h = (struct cutrace_header *)(void *)buf;

	switch (m) {
	case M_ZERO_LEN: return 0;
	case M_SHORT: return 100;
	case M_MAGIC: h->magic[0] = 'X'; break;
	case M_MAGIC_ZERO: memset(h->magic, 0, 8); break;
	case M_ENDIAN_FOREIGN: h->endian = __builtin_bswap32(CUTRACE_ENDIAN_PROBE); break;
	case M_ENDIAN_JUNK: h->endian = 0x11223344; break;
	case M_HDR_SIZE: h->header_size = 100; break;
	case M_VERSION_NEW: h->version_major = 2; h->version_minor = 3; break;
	case M_VERSION_OLD: h->version_major = 0; h->version_minor = 9; break;
	case M_WORD: h->word_size = 3; break;
	case M_SLOT: h->slot_size = 32; break;
	case M_TRUNCATED: return len / 2;
	case M_RING_ZERO: h->ring_slots = 0; break;
	case M_INIT_HUGE: h->init_slots = UINT64_MAX - 2; break;
	case M_TAGS_OUT: h->tags_off = h->file_size - 8; break;
	case M_SLOTS_OVERFLOW: h->slots_off = UINT64_MAX - 7; break;
	case M_CTX_OUT: h->ctx_off = h->file_size + 8; break;
	case M_CTX_LEN: h->ctx_len = h->ctx_cap + 1; break;
	case M_MISALIGNED: h->tags_off += 4; break;
	case M_ORDER_MAGIC_VERSION: h->magic[1] = 'x'; h->version_major = 9; break;
	case M_ORDER_ENDIAN_VERSION: h->endian = __builtin_bswap32(CUTRACE_ENDIAN_PROBE); h->version_major = 9; break;
	case M_OVERLAP: h->tags_off = h->ctx_off; break;
	case M__COUNT: break;
	}
	return len;
}

START_TEST(t_header_errors)
{
	enum mut m = (enum mut)_i;
	size_t len, mlen;
	unsigned char *buf;
	struct ct_trace *t = (struct ct_trace *)1;
	char err[256] = "";

	/* a short file is read as far as it goes (t_truncated_decodes) */
	if (m == M_TRUNCATED)
		return;
	mk_tmpdir();
	write_roundtrip(tpath("r.cutrace"));
	buf = read_all(tpath("r.cutrace"), &len);
	ck_assert_uint_eq(len, 1 << 20);
	mlen = mutate(buf, len, m);

	/* from memory */
	ck_assert_int_eq(ct_trace_open_mem(buf, mlen, &t, err, sizeof err), -1);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(err, mut_want[m].want), "mutation %d: got '%s', want '%s'", m, err,
		      mut_want[m].want);
	/* from a file: the same sentence */
	write_all(tpath("bad.cutrace"), buf, mlen);
	err[0] = 0;
	t = (struct ct_trace *)1;
	ck_assert_int_eq(ct_trace_open(tpath("bad.cutrace"), &t, err, sizeof err), -1);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(err, mut_want[m].want), "file, mutation %d: got '%s'", m, err);
	free(buf);
	rm_tmpdir();
}
END_TEST

START_TEST(t_open_errors)
{
	struct ct_trace *t;
	char err[256];

	mk_tmpdir();
	ck_assert_int_eq(ct_trace_open(tpath("missing.cutrace"), &t, err, sizeof err), -1);
	ck_assert_str_eq(err, "No such file or directory");
	ck_assert_int_eq(ct_trace_open(tmpdir, &t, err, sizeof err), -1);
	ck_assert_str_eq(err, "is a directory");
	ck_assert_int_eq(ct_trace_open("/dev/null", &t, err, sizeof err), -1);
	ck_assert_str_eq(err, "is a character device, not a trace file");
	/* a FIFO nobody writes to: refused at once, never waited on */
	ck_assert_int_eq(mkfifo(tpath("fifo"), 0600), 0);
	ck_assert_int_eq(ct_trace_open(tpath("fifo"), &t, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "is a FIFO, not a trace file"), "%s", err);
	unlink(tpath("fifo"));
	/* a file bigger than its header says is fine: the header's size is used */
	write_roundtrip(tpath("r.cutrace"));
	ck_assert_int_eq(truncate(tpath("r.cutrace"), (2 << 20)), 0);
	t = open_ok(tpath("r.cutrace"));
	check_roundtrip(t);
	ct_trace_close(t);
	rm_tmpdir();
}
END_TEST

/* ---- record-level damage -------------------------------------------------------------- */

START_TEST(t_torn)
{
	struct ct_synth s;
	struct log *l = new_log();
	int64_t a, b;

	mk_tmpdir();
	ck_assert_int_eq(ct_synth_create(&s, tpath("t.cutrace"), 1 << 20, 4096), 0);
	a = (int64_t)ct_synth_enter(&s, CT_CALL_cuInit, P);
	/* a 3-slot record whose writer died before the commit */
	ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_ioctl, P);
	ct_synth_pad_to(&s, 180);
	b = ct_synth_commit_torn(&s);
	ck_assert_int_ge(b, 0);
	ct_synth_begin(&s, CT_REC_NOTE, CT_CALL_cutrace_note, P);
	ct_synth_str(&s, CT_FLD_TEXT, "after");
	ct_synth_commit(&s);
	ct_synth_exit(&s, CT_CALL_cuInit, P, (uint64_t)a, 0, 0);
	ct_synth_close(&s);

	struct ct_trace *t = open_ok(tpath("t.cutrace"));
	ck_assert_int_eq(ct_trace_events(t, collect, l), 0);
	const struct ct_trace_stats *st = ct_trace_stats(t);
	ck_assert_uint_eq(st->torn, 1);
	ck_assert_uint_eq(st->overwritten, 0);
	ck_assert_uint_eq(st->bad, 0);
	ck_assert_uint_eq(st->records, 3);
	ck_assert_uint_eq(l->n, 2);
	ck_assert_uint_eq(l->ev[0].call, CT_CALL_cuInit);
	ck_assert(l->ev[0].has_exit);
	ck_assert_uint_eq(l->ev[1].type, CT_REC_NOTE);
	for (unsigned i = 0; i < l->n; i++)
		ck_assert_uint_ne(l->ev[i].seq, (uint64_t)b);
	ct_trace_close(t);
	free(l);
	rm_tmpdir();
}
END_TEST

START_TEST(t_overwritten_and_malformed)
{
	struct ct_synth s;
	struct log *l = new_log();
	int64_t a, b, c;

	mk_tmpdir();
	ck_assert_int_eq(ct_synth_create(&s, tpath("o.cutrace"), 1 << 20, 4096), 0);
	/* a: 3 slots, its second slot then claimed by a newer record */
	ct_synth_begin(&s, CT_REC_NOTE, CT_CALL_cutrace_note, P);
	ct_synth_pad_to(&s, 180);
	a = ct_synth_commit(&s);
	s.ring.tags[a + 1] = CT_TAG_MAKE((uint64_t)a + 5000, CT_TAG_CONT);
	/* b: a field whose length runs past the record */
	ct_synth_begin(&s, CT_REC_NOTE, CT_CALL_cutrace_note, P);
	ct_synth_str(&s, CT_FLD_TEXT, "abcdefgh");
	b = ct_synth_commit(&s);
	{
		unsigned char *r = s.ring.slots + (uint64_t)b * CUTRACE_SLOT_SIZE;
		struct cutrace_field f = { CT_FLD_TEXT, 0x7fff };
		memcpy(r + sizeof(struct cutrace_record), &f, sizeof f);
	}
	/* c: a record header claiming an impossible size */
	ct_synth_begin(&s, CT_REC_NOTE, CT_CALL_cutrace_note, P);
	c = ct_synth_commit(&s);
	((struct cutrace_record *)(void *)(s.ring.slots + (uint64_t)c * CUTRACE_SLOT_SIZE))->size = 1u << 30;
	/* d: an exit too small for its struct cutrace_exit */
	ct_synth_begin(&s, CT_REC_NOTE, CT_CALL_cutrace_note, P);
	int64_t d = ct_synth_commit(&s);
	((struct cutrace_record *)(void *)(s.ring.slots + (uint64_t)d * CUTRACE_SLOT_SIZE))->type = CT_REC_EXIT;
	/* e: a good one */
	ct_synth_begin(&s, CT_REC_NOTE, CT_CALL_cutrace_note, P);
	ct_synth_str(&s, CT_FLD_TEXT, "good");
	ct_synth_commit(&s);
	ct_synth_close(&s);

	struct ct_trace *t = open_ok(tpath("o.cutrace"));
	ck_assert_int_eq(ct_trace_events(t, collect, l), 0);
	const struct ct_trace_stats *st = ct_trace_stats(t);
	ck_assert_uint_eq(st->overwritten, 1);
	ck_assert_uint_eq(st->bad, 3);
	ck_assert_uint_eq(st->records, 1);
	ck_assert_uint_eq(l->n, 1);
	char buf[16];
	ck_assert_str_eq(ct_rec_str(&l->ev[0].enter, CT_FLD_TEXT, buf, sizeof buf), "good");
	ct_trace_close(t);
	free(l);
	rm_tmpdir();
}
END_TEST

START_TEST(t_never_returned)
{
	struct ct_synth s;
	struct log *l = new_log();
	int64_t b;

	mk_tmpdir();
	ck_assert_int_eq(ct_synth_create(&s, tpath("n.cutrace"), 1 << 20, 4096), 0);
	ct_synth_enter(&s, CT_CALL_cuInit, P);               /* hangs */
	b = (int64_t)ct_synth_enter(&s, CT_CALL_ioctl, P + 1);
	ct_synth_exit(&s, CT_CALL_ioctl, P + 1, (uint64_t)b, 0, 0);
	ct_synth_enter(&s, CT_CALL_close, P + 1);            /* killed in close */
	ct_synth_close(&s);

	struct ct_trace *t = open_ok(tpath("n.cutrace"));
	ck_assert_int_eq(ct_trace_events(t, collect, l), 0);
	ck_assert_uint_eq(l->n, 3);
	ck_assert_uint_eq(l->ev[0].call, CT_CALL_cuInit);
	ck_assert(l->ev[0].has_enter && !l->ev[0].has_exit);
	ck_assert_uint_eq(l->ev[0].dur_ns, 0);
	ck_assert_uint_eq(l->ev[1].call, CT_CALL_ioctl);
	ck_assert(l->ev[1].has_exit);
	ck_assert_uint_eq(l->ev[2].call, CT_CALL_close);
	ck_assert(!l->ev[2].has_exit);
	ck_assert_uint_eq(ct_trace_stats(t)->unfinished, 2);
	ct_trace_close(t);
	free(l);
	rm_tmpdir();
}
END_TEST

/* ---- the ring ----------------------------------------------------------------------------- */

/*
 * One thread writes n notes numbered by ARG into a small file.  Variant 0:
 * one slot each; variant 1: 1..3 slots (padding at the ends of the areas).
 */
START_TEST(t_ring_wrap)
{
	struct ct_synth s;
	struct log *l = new_log();
	const uint64_t n = 10000;
	uint64_t init_recs = 0, init_slots, ring_slots, head, dropped;

	mk_tmpdir();
	ck_assert_int_eq(ct_synth_create(&s, tpath("w.cutrace"), 256 << 10, 4096), 0);
	init_slots = s.hdr->init_slots;
	ring_slots = s.hdr->ring_slots;
	for (uint64_t i = 0; i < n; i++) {
		ct_synth_begin(&s, CT_REC_NOTE, CT_CALL_cutrace_note, P);
		ct_synth_i64(&s, CT_FLD_ARG, (int64_t)i);
		if (_i == 1)
			ct_synth_pad_to(&s, (uint32_t)(64 * (1 + i % 3)));
		int64_t seq = ct_synth_commit(&s);
		ck_assert_int_ge(seq, 0);
		if ((uint64_t)seq < init_slots)
			init_recs++;
	}
	head = s.hdr->head;
	ct_synth_close(&s);
	ck_assert_uint_gt(head, init_slots + 2 * ring_slots); /* it really wrapped */

	struct ct_trace *t = open_ok(tpath("w.cutrace"));
	ck_assert_int_eq(ct_trace_events(t, collect, l), 0);
	const struct ct_trace_stats *st = ct_trace_stats(t);
	ck_assert_uint_eq(st->torn + st->overwritten + st->bad, 0);
	/* every record is either delivered or counted as dropped, exactly once
	 * (format.h, "Counting": the writers' commit counters, less what the
	 * walk found) */
	dropped = st->dropped;
	ck_assert_uint_gt(dropped, 0);
	ck_assert_uint_eq(l->n + dropped, n);
	ck_assert_uint_eq(st->records, l->n);
	/* the init area is intact: records 0..init_recs-1 */
	for (uint64_t i = 0; i < init_recs; i++) {
		int64_t v;
		ck_assert(ct_rec_i64(&l->ev[i].enter, CT_FLD_ARG, &v));
		ck_assert_int_eq(v, (int64_t)i);
		ck_assert_uint_lt(l->ev[i].seq, init_slots);
	}
	/* the ring holds the newest records, consecutive up to the last one */
	for (uint64_t i = init_recs; i < l->n; i++) {
		int64_t v;
		ck_assert(ct_rec_i64(&l->ev[i].enter, CT_FLD_ARG, &v));
		ck_assert_int_eq(v, (int64_t)(n - (l->n - i)));
		ck_assert_uint_ge(l->ev[i].seq, head - ring_slots);
	}
	ck_assert_uint_gt(l->n, init_recs + ring_slots / 4);
	ct_trace_close(t);
	free(l);
	rm_tmpdir();
}
END_TEST

/* the enter was overwritten by the ring, its exit survived */
START_TEST(t_orphan_exit)
{
	struct ct_synth s;
	struct log *l = new_log();
	uint64_t x;

	mk_tmpdir();
	ck_assert_int_eq(ct_synth_create(&s, tpath("o.cutrace"), 256 << 10, 4096), 0);
	while (s.hdr->head < s.hdr->init_slots)
		ct_synth_begin(&s, CT_REC_NOTE, CT_CALL_cutrace_note, P), ct_synth_commit(&s);
	x = ct_synth_enter(&s, CT_CALL_cuInit, P);
	for (uint64_t i = 0; i < s.hdr->ring_slots; i++)
		ct_synth_begin(&s, CT_REC_NOTE, CT_CALL_cutrace_note, P + 1), ct_synth_commit(&s);
	ct_synth_exit(&s, CT_CALL_cuInit, P, x, 3, 0);
	ct_synth_close(&s);

	struct ct_trace *t = open_ok(tpath("o.cutrace"));
	ck_assert_int_eq(ct_trace_events(t, collect, l), 0);
	ck_assert_uint_gt(l->n, 1);
	const struct ct_event *last = &l->ev[l->n - 1];
	ck_assert_uint_eq(last->call, CT_CALL_cuInit);
	ck_assert(!last->has_enter && last->has_exit);
	ck_assert_int_eq(last->ret, 3);
	ck_assert_uint_eq(last->tid, P);
	ck_assert_uint_eq(ct_trace_stats(t)->orphan_exits, 1);
	for (unsigned i = 0; i + 1 < l->n; i++)
		ck_assert_uint_eq(l->ev[i].type, CT_REC_NOTE);
	ct_trace_close(t);
	free(l);
	rm_tmpdir();
}
END_TEST

/* more pending calls than the pairing window: the oldest are given up */
struct wcheck {
	uint64_t n, last_seq, unfinished, orphans, first_seq;
	bool first_unfinished;
};

static int window_cb(const struct ct_event *ev, void *user)
{
	struct wcheck *w = user;

	if (w->n == 0) {
		w->first_seq = ev->seq;
		w->first_unfinished = !ev->has_exit;
	} else {
		ck_assert_uint_gt(ev->seq, w->last_seq);
	}
	w->last_seq = ev->seq;
	w->n++;
	w->unfinished += ev->has_enter && !ev->has_exit;
	w->orphans += !ev->has_enter;
	return 0;
}

START_TEST(t_pair_window)
{
	struct ct_synth s;
	struct wcheck w = { 0 };
	uint64_t first = 0;
	const uint64_t n = 70000;

	mk_tmpdir();
	ck_assert_int_eq(ct_synth_create(&s, tpath("p.cutrace"), 16 << 20, 4096), 0);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t e = ct_synth_enter(&s, CT_CALL_ioctl, P);
		if (i == 0)
			first = e;
	}
	ct_synth_exit(&s, CT_CALL_ioctl, P, first, 0, 0);
	ct_synth_close(&s);

	struct ct_trace *t = open_ok(tpath("p.cutrace"));
	ck_assert_int_eq(ct_trace_events(t, window_cb, &w), 0);
	ck_assert_uint_eq(w.n, n + 1);
	ck_assert_uint_eq(w.first_seq, first);
	ck_assert(w.first_unfinished);
	ck_assert_uint_eq(w.unfinished, n);
	ck_assert_uint_eq(w.orphans, 1);
	ck_assert_uint_eq(ct_trace_stats(t)->orphan_exits, 1);
	ct_trace_close(t);
	rm_tmpdir();
}
END_TEST

/* ---- memory stays bounded ---------------------------------------------------------------- */

static long maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

struct mcount {
	uint64_t n, sum;
};

static int mem_cb(const struct ct_event *ev, void *user)
{
	struct mcount *m = user;
	int64_t v;

	/* touch the record bytes, as a real consumer does */
	if (ct_rec_i64(&ev->enter, CT_FLD_ARG, &v))
		m->sum += (uint64_t)v;
	if (ev->has_exit && ct_rec_i64(&ev->exit, CT_FLD_OUT, &v))
		m->sum += (uint64_t)v;
	m->n++;
	return 0;
}

/* a 64 MiB trace of n ioctl calls with 128-byte enter records, written by a child */
static void write_calls(const char *path, uint64_t n)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		static struct ct_synth s;
		if (ct_synth_create(&s, path, 64 << 20, 4096) < 0)
			_exit(1);
		for (uint64_t i = 0; i < n; i++) {
			ct_synth_begin(&s, CT_REC_ENTER, CT_CALL_ioctl, P);
			ct_synth_i64(&s, CT_FLD_ARG, (int64_t)i);
			ct_synth_pad_to(&s, 128);
			int64_t e = ct_synth_commit(&s);
			ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_ioctl, P);
			ct_synth_exit_info(&s, (uint64_t)e, 0, 0);
			ct_synth_i64(&s, CT_FLD_OUT, 1);
			if (e < 0 || ct_synth_commit(&s) < 0)
				_exit(2);
		}
		if (s.hdr->dropped)
			_exit(3);
		ct_synth_close(&s);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer status %d", status);
}

/* how much the peak RSS of a fresh child grows while it reads path (KiB);
 * the child checks it saw all n calls */
static long read_growth(const char *path, uint64_t n)
{
	int fds[2], status;
	long grew = -1;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct mcount m = { 0 };
		struct ct_trace *t;
		char err[256];
		long before = maxrss_kb(), after;

		if (ct_trace_open(path, &t, err, sizeof err) < 0 || ct_trace_events(t, mem_cb, &m) != 0)
			_exit(1);
		ct_trace_close(t);
		after = maxrss_kb();
		if (m.n != n || m.sum != n * (n - 1) / 2 + n)
			_exit(2);
		grew = after - before;
		_exit(write(fds[1], &grew, sizeof grew) == sizeof grew ? 0 : 3);
	}
	close(fds[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "reader status %d", status);
	ck_assert_int_eq(read(fds[0], &grew, sizeof grew), (ssize_t)sizeof grew);
	close(fds[0]);
	return grew;
}

/*
 * Memory does not grow with the trace: reading 200000 calls (~46 MiB of
 * slots and tags) costs little more than reading 25000 (~6 MiB, less than
 * the reader's windows).  Both are measured here, each in a fresh child, so
 * what the machine, its load or a sanitizer's allocator add is in both and
 * cancels out: the bound is relative to that baseline, not a fixed number.
 */
START_TEST(t_bounded_memory)
{
	const uint64_t big = 200000, small = 25000;
	long base, grew;

	mk_tmpdir();
	write_calls(tpath("small.cutrace"), small);
	write_calls(tpath("big.cutrace"), big);
	base = read_growth(tpath("small.cutrace"), small);
	grew = read_growth(tpath("big.cutrace"), big);
	/* the written bytes differ by ~40 MiB: a reader that kept what it read
	 * would grow by about that much more than the baseline */
	long diff_kb = (long)((big - small) * 4 * CUTRACE_SLOT_SIZE / 1024);
	fprintf(stderr, "t_bounded_memory: peak RSS +%ld KiB for %llu calls, +%ld KiB for %llu\n", grew,
		(unsigned long long)big, base, (unsigned long long)small);
	ck_assert_msg(grew - base < diff_kb / 2,
		      "peak RSS grew by %ld KiB reading %llu calls, %ld KiB reading %llu (bound: +%ld KiB)", grew,
		      (unsigned long long)big, base, (unsigned long long)small, diff_kb / 2);
	rm_tmpdir();
}
END_TEST

/* ---- damage: short files, files that shrink while read --------------------------------- */

static int count_cb(const struct ct_event *ev, void *user)
{
	uint64_t *n = user;

	(void)ev;
	(*n)++;
	return 0;
}

/* a prefix of a trace with its init area intact decodes that far and says
 * what is missing */
START_TEST(t_truncated_decodes)
{
	const uint64_t calls = 150000;
	struct ct_trace *t;
	char err[256], dmg[512];
	uint64_t n = 0;

	mk_tmpdir();
	write_calls(tpath("big.cutrace"), calls);
	const struct cutrace_header *h;
	ck_assert_int_eq(truncate(tpath("big.cutrace"), 30 << 20), 0);
	ck_assert_int_eq(ct_trace_open(tpath("big.cutrace"), &t, err, sizeof err), 0);
	h = ct_trace_header(t);
	ck_assert_uint_lt(h->slots_off + h->init_slots * CUTRACE_SLOT_SIZE, 30u << 20);
	ck_assert_int_eq(ct_trace_events(t, count_cb, &n), 0);
	const struct ct_trace_stats *st = ct_trace_stats(t);
	ck_assert_msg(ct_trace_damage(t, dmg, sizeof dmg), "no damage reported");
	ck_assert_msg(strstr(dmg, "truncated: 31457280 of 67108864 bytes present"), "%s", dmg);
	ck_assert_msg(strstr(dmg, "the init area is intact"), "%s", dmg);
	ck_assert(ct_trace_degraded(t));
	/* what is there decodes cleanly: every record read is whole */
	ck_assert_uint_eq(st->bad, 0);
	ck_assert_uint_eq(st->torn, 0);
	ck_assert_uint_gt(n, h->init_slots / 3);
	ck_assert_uint_lt(n, calls);
	ct_trace_close(t);
	rm_tmpdir();
}
END_TEST

static struct shrink {
	const char *path;
	uint64_t at, n;
	off_t to;
} shrink;

static int shrink_cb(const struct ct_event *ev, void *user)
{
	(void)ev;
	(void)user;
	if (shrink.n++ == shrink.at)
		ck_assert_int_eq(truncate(shrink.path, shrink.to), 0);
	return 0;
}

/* a mapped file that shrinks under the reader: no SIGBUS, the rest reads
 * as zeros and the damage is said; 100 runs at random points and sizes */
START_TEST(t_shrink_while_reading)
{
	const uint64_t calls = 40000;
	size_t len;
	unsigned char *img;
	unsigned said = 0;

	mk_tmpdir();
	write_calls(tpath("src.cutrace"), calls);
	img = read_all(tpath("src.cutrace"), &len);
	shrink.path = tpath("s.cutrace");
	srand(4242);
	for (int run = 0; run < 100; run++) {
		struct ct_trace *t;
		char err[256], dmg[512];
		write_all(shrink.path, img, len);
		shrink.n = 0;
		shrink.at = (uint64_t)rand() % (calls / 2);
		/* below the end of the written slots: a cut that loses records */
		const struct cutrace_header *ih = (const void *)img;
		size_t used = (size_t)(ih->slots_off + ih->head * CUTRACE_SLOT_SIZE);
		shrink.to = (off_t)((size_t)rand() % (used / 4096)) * 4096;
		ck_assert_int_eq(ct_trace_open(shrink.path, &t, err, sizeof err), 0);
		ct_trace_events(t, shrink_cb, NULL);
		if (ct_trace_damage(t, dmg, sizeof dmg)) {
			ck_assert_msg(strstr(dmg, "the file shrank while it was read"), "%s", dmg);
			ck_assert(ct_trace_degraded(t));
			said++;
		}
		ck_assert_uint_le(shrink.n, calls);
		ct_trace_close(t);
	}
	fprintf(stderr, "t_shrink_while_reading: 100 runs, %u saw the file shrink\n", said);
	ck_assert_uint_gt(said, 50);
	(void)len;
	free(img);
	rm_tmpdir();
}
END_TEST

/* ---- robustness: random damage never crashes ------------------------------------------ */

static int fuzz_cb(const struct ct_event *ev, void *user)
{
	struct ct_desc *d = user;
	struct ct_fieldv f;
	uint32_t pos = 0;

	while (ct_rec_next_field(&ev->enter, &pos, &f))
		ck_assert_ptr_nonnull(f.data);
	pos = 0;
	while (ct_rec_next_field(&ev->exit, &pos, &f))
		ck_assert_ptr_nonnull(f.data);
	ct_describe(NULL, ev, d);
	return 0;
}

START_TEST(t_fuzz)
{
	size_t len;
	unsigned char *orig, *buf;
	struct ct_desc *d = malloc(sizeof *d);
	unsigned opened = 0;

	mk_tmpdir();
	write_roundtrip(tpath("r.cutrace"));
	orig = read_all(tpath("r.cutrace"), &len);
	buf = malloc(len);
	const struct cutrace_header *h = (const void *)orig;
	/* the bytes that matter: header, context, the first tags and slots */
	const size_t zones[][2] = { { 0, 512 }, { h->ctx_off, 512 }, { h->tags_off, 128 },
				    { h->slots_off, 1024 } };
	srand(12345);
	for (int it = 0; it < 2000; it++) {
		struct ct_trace *t;
		char err[256];
		memcpy(buf, orig, len);
		int flips = 1 + rand() % 8;
		for (int k = 0; k < flips; k++) {
			int z = rand() % 4;
			size_t off = zones[z][0] + (size_t)rand() % zones[z][1];
			buf[off] = (unsigned char)rand();
		}
		if (ct_trace_open_mem(buf, len, &t, err, sizeof err) == 0) {
			opened++;
			ct_trace_events(t, fuzz_cb, d);
			ct_trace_close(t);
		} else {
			ck_assert(err[0]);
		}
	}
	ck_assert_uint_gt(opened, 100);
	free(buf);
	free(orig);
	free(d);
	rm_tmpdir();
}
END_TEST

/* ---- small API pieces ------------------------------------------------------------------- */

START_TEST(t_fields_and_names)
{
	mk_tmpdir();
	write_roundtrip(tpath("r.cutrace"));
	struct ct_trace *t = open_ok(tpath("r.cutrace"));
	struct log *l = new_log();
	struct ct_fieldv f;
	uint32_t u32, pos = 0;
	uint64_t u64;
	char small[6];
	unsigned nf = 0;

	ck_assert_int_eq(ct_trace_events(t, collect, l), 0);
	/* wrong sizes are refused */
	ck_assert(!ct_rec_u32(&l->ev[3].enter, CT_FLD_REQUEST, &u32));
	ck_assert(!ct_rec_u64(&l->ev[3].enter, CT_FLD_FD, &u64));
	ck_assert(!ct_rec_u32(&l->ev[3].enter, CT_FLD_PATH, &u32));
	/* strings are cut to the buffer */
	ck_assert_str_eq(ct_rec_str(&l->ev[2].enter, CT_FLD_PATH, small, sizeof small), "/dev/");
	/* iteration sees every field in order */
	while (ct_rec_next_field(&l->ev[3].enter, &pos, &f))
		nf++;
	ck_assert_uint_eq(nf, 6);
	/* exit first, then enter */
	struct ct_fieldv fx;
	ck_assert_ptr_nonnull(ct_ev_field(&l->ev[3], CT_FLD_BLOCK, &f));
	ck_assert_ptr_nonnull(ct_rec_field(&l->ev[3].exit, CT_FLD_BLOCK, &fx));
	ck_assert_ptr_eq(f.data, fx.data);
	ck_assert_ptr_nonnull(ct_ev_field(&l->ev[3], CT_FLD_FD, &f));
	ck_assert_ptr_null(ct_ev_field(&l->ev[3], CT_FLD_SYMBOL, &f));

	ck_assert_str_eq(ct_call_name(CT_CALL_cuInit), "cuInit");
	ck_assert_str_eq(ct_call_name(CT_CALL___openat64_2), "__openat64_2");
	ck_assert_str_eq(ct_call_name(999), "call#999");
	ck_assert_str_eq(ct_call_name(0), "call#0");
	ck_assert_int_eq(ct_call_family(CT_CALL_cuInit), CT_FAM_DRIVER);
	ck_assert_int_eq(ct_call_family(CT_CALL_dlvsym), CT_FAM_LOADER);
	ck_assert_int_eq(ct_call_family(CT_CALL_cudaMalloc), CT_FAM_RUNTIME);
	ck_assert_int_eq(ct_call_family(999), 0);
	ct_trace_close(t);
	free(l);
	rm_tmpdir();
}
END_TEST

static uint32_t drv_of(const char *nv, const char *mod, char *str, size_t len)
{
	struct ct_synth s;
	struct ct_trace *t;
	uint32_t v;
	const char *vs;

	ck_assert_int_eq(ct_synth_create(&s, tpath("d.cutrace"), 256 << 10, 4096), 0);
	if (nv)
		ct_synth_ctx_str(&s, CT_CTX_NV_VERSION, nv);
	if (mod)
		ct_synth_ctx_str(&s, CT_CTX_NV_MODVERSION, mod);
	ct_synth_close(&s);
	t = open_ok(tpath("d.cutrace"));
	v = ct_trace_driver_version(t);
	vs = ct_trace_driver_version_str(t);
	snprintf(str, len, "%s", vs ? vs : "(null)");
	ct_trace_close(t);
	return v;
}

START_TEST(t_driver_version)
{
	char s[32];

	mk_tmpdir();
	ck_assert_uint_eq(drv_of(nv_open_text, NULL, s, sizeof s), 580159004u);
	ck_assert_str_eq(s, "580.159.04");
	/* the proprietary module's title (tracer/decode/ABI.md §8) */
	ck_assert_uint_eq(drv_of("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 "
				 "01:15:15 UTC 2023\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n",
				 NULL, s, sizeof s), 535104005u);
	ck_assert_str_eq(s, "535.104.05");
	/* two components */
	ck_assert_uint_eq(drv_of("NVRM version: NVIDIA UNIX x86_64 Kernel Module  390.157  Wed Oct 12 2022\n",
				 NULL, s, sizeof s), 390157000u);
	ck_assert_str_eq(s, "390.157");
	/* only /sys/module/nvidia/version */
	ck_assert_uint_eq(drv_of(NULL, "550.54.14\n", s, sizeof s), 550054014u);
	ck_assert_str_eq(s, "550.54.14");
	/* never the GCC version */
	ck_assert_uint_eq(drv_of("NVRM version: garbage\nGCC version:  gcc version 12.2.0\n", NULL, s, sizeof s), 0);
	ck_assert_str_eq(s, "(null)");
	ck_assert_uint_eq(drv_of("NVRM version: garbage\n", "575.51.02", s, sizeof s), 575051002u);
	ck_assert_uint_eq(drv_of(NULL, NULL, s, sizeof s), 0);
	rm_tmpdir();
}
END_TEST

START_TEST(t_list_traces)
{
	char **paths, err[512];
	int n;

	mk_tmpdir();
	write_all(tpath("b.cutrace"), "x", 1);
	write_all(tpath("a.cutrace"), "x", 1);
	write_all(tpath("c.txt"), "x", 1);
	write_all(tpath(".cutrace"), "x", 1);
	ck_assert_int_eq(mkdir(tpath("d.cutrace"), 0700), 0);
	ck_assert_int_eq(symlink("a.cutrace", tpath("e.cutrace")), 0);
	ck_assert_int_eq(symlink("nowhere", tpath("f.cutrace")), 0);

	n = ct_list_traces(tmpdir, &paths, err, sizeof err);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(paths[0], tpath("a.cutrace"));
	ck_assert_str_eq(paths[1], tpath("b.cutrace"));
	ck_assert_str_eq(paths[2], tpath("e.cutrace"));
	ct_free_paths(paths, n);

	/* a trailing slash gives no double slash */
	char withslash[80];
	snprintf(withslash, sizeof withslash, "%s/", tmpdir);
	n = ct_list_traces(withslash, &paths, err, sizeof err);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(paths[0], tpath("a.cutrace"));
	ct_free_paths(paths, n);

	/* a file is itself, whatever its name */
	n = ct_list_traces(tpath("c.txt"), &paths, err, sizeof err);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(paths[0], tpath("c.txt"));
	ct_free_paths(paths, n);

	/* errors */
	ck_assert_int_eq(ct_list_traces(tpath("d.cutrace"), &paths, err, sizeof err), -1);
	char want[160];
	snprintf(want, sizeof want, "no trace files (*.cutrace, *.cutrace.gz, *.cutrace.zst) in %s",
		 tpath("d.cutrace"));
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(ct_list_traces(tpath("missing"), &paths, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s: No such file or directory", tpath("missing"));
	ck_assert_str_eq(err, want);
	rm_tmpdir();
}
END_TEST

static Suite *reader_suite(void)
{
	Suite *s = suite_create("reader");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_roundtrip_file);
	tcase_add_test(tc, t_roundtrip_mem);
	tcase_add_test(tc, t_stop);
	tcase_add_loop_test(tc, t_header_errors, 0, M__COUNT);
	tcase_add_test(tc, t_open_errors);
	tcase_add_test(tc, t_torn);
	tcase_add_test(tc, t_overwritten_and_malformed);
	tcase_add_test(tc, t_never_returned);
	tcase_add_loop_test(tc, t_ring_wrap, 0, 2);
	tcase_add_test(tc, t_orphan_exit);
	tcase_add_test(tc, t_pair_window);
	tcase_add_test(tc, t_bounded_memory);
	tcase_add_test(tc, t_truncated_decodes);
	tcase_add_test(tc, t_shrink_while_reading);
	tcase_add_test(tc, t_fuzz);
	tcase_add_test(tc, t_fields_and_names);
	tcase_add_test(tc, t_driver_version);
	tcase_add_test(tc, t_list_traces);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(reader_suite());
	int failed;

	srunner_add_suite(sr, describe_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
