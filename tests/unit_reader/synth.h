/*
 * Synthetic cutrace files for tests: a real file laid out by ct_ring_layout,
 * a header filled like the shim fills it, context fields, and records
 * written through the real writer (ct_ring_reserve / ct_ring_commit), so the
 * reader meets exactly the slots, tags and padding the shim produces.
 *
 *   struct ct_synth s;
 *   ct_synth_create(&s, "/tmp/x.cutrace", 1 << 20, 4096);
 *   ct_synth_ctx_str(&s, CT_CTX_EXE, "/bin/probe");
 *   uint64_t e = ct_synth_enter(&s, CT_CALL_cuInit, 100);   // no fields
 *   ct_synth_begin(&s, CT_REC_EXIT, CT_CALL_cuInit, 100);    // with fields
 *   ct_synth_exit_info(&s, e, 100, 0);
 *   ct_synth_i64(&s, CT_FLD_OUT, 5);
 *   ct_synth_commit(&s);
 *   ct_synth_close(&s);
 *
 * Records are built in a buffer and copied in at commit, so callers never
 * compute sizes.  The clock advances 1 us per record (t_ns from
 * start_mono_ns), or is set with ct_synth_clock.
 */
#ifndef CT_TEST_SYNTH_H
#define CT_TEST_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

#include "ring.h"

#define CT_SYNTH_PID 4242u

struct ct_synth {
	int fd;
	void *map;
	uint64_t size;
	struct cutrace_header *hdr;
	struct ct_ring ring;
	unsigned char *ctx;      /* next context byte */
	uint64_t clock;          /* t_ns of the next record */
	/* the record being built */
	struct cutrace_record rec;
	struct cutrace_exit x;
	uint32_t len;            /* bytes of fields in buf */
	unsigned char buf[CUTRACE_MAX_RECORD];
};

/* Create (truncate) path with `size` bytes and a valid header.  0 or -1. */
int ct_synth_create(struct ct_synth *s, const char *path, uint64_t size, uint64_t ctx_cap);
/* Unmap and close (the file stays). */
void ct_synth_close(struct ct_synth *s);

/* context fields */
void ct_synth_ctx(struct ct_synth *s, uint16_t tag, const void *data, uint16_t len);
void ct_synth_ctx_str(struct ct_synth *s, uint16_t tag, const char *str);

void ct_synth_clock(struct ct_synth *s, uint64_t t_ns);

/* record builder */
void ct_synth_begin(struct ct_synth *s, unsigned type, unsigned call, uint32_t tid);
void ct_synth_exit_info(struct ct_synth *s, uint64_t enter_seq, int64_t ret, int32_t err);
void ct_synth_flags(struct ct_synth *s, uint32_t flags);
void ct_synth_field(struct ct_synth *s, uint16_t tag, const void *data, uint16_t len);
void ct_synth_u32(struct ct_synth *s, uint16_t tag, uint32_t v);
void ct_synth_u64(struct ct_synth *s, uint16_t tag, uint64_t v);
void ct_synth_i64(struct ct_synth *s, uint16_t tag, int64_t v);
void ct_synth_str(struct ct_synth *s, uint16_t tag, const char *str);
/* pad the record to at least `size` bytes (with a filler field) */
void ct_synth_pad_to(struct ct_synth *s, uint32_t size);
/* Reserve, copy, commit: the record's seq, or -1 when the ring refused it. */
int64_t ct_synth_commit(struct ct_synth *s);
/* The same, but the head tag is left BUSY: a record torn by a crash. */
int64_t ct_synth_commit_torn(struct ct_synth *s);

/* shorthands: an enter / exit record without fields */
uint64_t ct_synth_enter(struct ct_synth *s, unsigned call, uint32_t tid);
uint64_t ct_synth_exit(struct ct_synth *s, unsigned call, uint32_t tid, uint64_t enter_seq,
		       int64_t ret, int32_t err);

#endif
