/*
 * Lock-free record writer over a mapped cutrace file (format.h describes the
 * protocol).  No allocation, no locks, no system calls: safe in signal
 * handlers and from any number of threads.  Used by the shim and, to make
 * synthetic traces, by the tests and benchmarks.
 */
#ifndef CT_RING_H
#define CT_RING_H

#include <stdint.h>
#include "cutrace/format.h"

struct ct_ring {
	struct cutrace_header *hdr;
	uint64_t *tags;
	unsigned char *slots;
	uint64_t init_slots;
	uint64_t ring_slots;
	uint64_t gen;       /* changes on every attach: stale ct_chunks notice */
	unsigned char *counters; /* commit counter 0 (format.h, "Counting"), or NULL */
	uint32_t counters_n;
	uint32_t next_ctr;  /* writers that took a counter of this ring so far */
};

/*
 * A run of slots one writer (a thread) reserved for itself with a single
 * fetch-add, and carves its records out of without touching header.head or
 * any tag another writer stores to (format.h, "Runs").  Zero-initialised
 * state is valid: the first reservation takes a run when the writer is hot.
 */
struct ct_chunk {
	uint64_t gen;       /* ct_ring.gen of the ring the run belongs to */
	uint64_t next;      /* next free monotonic slot of the run */
	uint64_t end;       /* end of the run (monotonic, exclusive) */
	uint64_t delta;     /* physical slot = monotonic slot + delta (mod 2^64) */
	uint64_t fresh;     /* slot s of the run is fresh while header.head <= s + fresh
			     * (ring.c, run_fresh): set when the run is taken */
	uint32_t records;   /* records this writer reserved in this ring */
	uint32_t run_len;   /* slots of its next run; 0: CT_CHUNK_SLOTS */
	uint64_t *ctr;      /* this writer's commit counter (set with gen) */
	volatile uint32_t busy; /* inside a claim: a signal handler that records
				 * meanwhile uses the shared head */
};
/* slots of a writer's first run (16 KiB of records); each further run is
 * twice as long, up to CT_CHUNK_MAX slots (256 KiB) and 1/32 of the ring.
 * A busy writer moves the shared head (and so the cache line every other
 * writer reads it from) once per run: with 64-slot runs two threads
 * recording at once paid +40 to +90 ns per ioctl for that line, with 256
 * eight threads on a 16-CPU machine +80 ns; with 4096, nothing measurable
 * (bench/RESULTS.md).  Quiet writers keep short runs: a run's unused end
 * is ring space lost when its writer stops recording. */
#define CT_CHUNK_SLOTS  256u
#define CT_CHUNK_MAX    4096u
#define CT_CHUNK_AFTER  16u  /* a writer takes runs from its 17th record on */

/* A reserved record: write up to `size` bytes at `rec`, then commit. */
struct ct_slot {
	struct cutrace_record *rec;
	uint64_t seq;
	uint64_t phys;
	uint32_t size;
	uint32_t held;      /* head tag kind until the commit: BUSY or PAD */
	uint64_t *ctr;      /* commit counter of the writer (never NULL) */
};

/*
 * Fill the layout fields of a fresh header for a file of `file_size` bytes
 * with `ctx_cap` bytes of context.  Returns 0, or -1 when the size is too
 * small to hold any slot.
 */
int ct_ring_layout(struct cutrace_header *h, uint64_t file_size, uint64_t ctx_cap);

/* Point `r` at a mapped file whose header is already laid out. */
void ct_ring_attach(struct ct_ring *r, void *map);

/*
 * Reserve a record of `size` bytes (header included).  The record header's
 * seq/size fields are filled in; the caller fills the rest and calls
 * ct_ring_commit.  Returns 0, or -1 (and counts a lost record) when the
 * record cannot fit.
 */
int ct_ring_reserve(struct ct_ring *r, uint32_t size, struct ct_slot *out);

/*
 * The same through the writer's run c: a record of a writer that has written
 * more than CT_CHUNK_AFTER records comes out of its own run of
 * CT_CHUNK_SLOTS slots or more; records of quiet writers, and records larger than a
 * run, are reserved one by one as above.  Records of different writers are
 * then in seq order only within a run: readers order by time.
 */
int ct_ring_reserve_local(struct ct_ring *r, struct ct_chunk *c, uint32_t size, struct ct_slot *out);

/*
 * Two records in consecutive slots with one reservation: the first is
 * reserved as usual, the second (typically the exit of the call the first
 * enters) stays padding to readers until ct_ring_commit(second).  A second
 * record never committed, because the process died first, is invisible.
 */
int ct_ring_reserve_pair(struct ct_ring *r, struct ct_chunk *c, uint32_t size1, uint32_t size2,
			 struct ct_slot *first, struct ct_slot *second);

/* n consecutive slots, through c (a run or the shared head); no tags set */
int ct_ring_claim(struct ct_ring *r, struct ct_chunk *c, uint64_t n, uint64_t *s, uint64_t *p);
/* the same, called with c->busy already set (ct_ring_claim_fast) */
int ct_ring_claim_locked(struct ct_ring *r, struct ct_chunk *c, uint64_t n, uint64_t *s, uint64_t *p);

/* The common case of ct_ring_claim inline: the writer's run has room and the
 * ring has not come round to it.  Otherwise the general claim runs under the
 * same busy mark. */
static inline __attribute__((always_inline)) int ct_ring_claim_fast(struct ct_ring *r, struct ct_chunk *c,
								    uint64_t n, uint64_t *s, uint64_t *p)
{
	/* the out-of-line calls get locals: the caller's s and p stay in registers */
	uint64_t x, s1, p1;
	int ret;

	if (__builtin_expect(!c->busy, 1)) {
		c->busy = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		x = c->next;
		if (__builtin_expect(c->gen == r->gen && x + n <= c->end &&
				     __atomic_load_n(&r->hdr->head, __ATOMIC_RELAXED) <= x + c->fresh, 1)) {
			c->next = x + n;
			*s = x;
			*p = x + c->delta;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			c->busy = 0;
			return 0;
		}
		ret = ct_ring_claim_locked(r, c, n, &s1, &p1);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		c->busy = 0;
	} else {
		ret = ct_ring_claim(r, c, n, &s1, &p1); /* a signal handler inside a claim */
	}
	*s = s1;
	*p = p1;
	return ret;
}

/* tag the n slots from t (the tag of the head slot) for a record with head
 * slot s: continuation slots CONT, the head `head_kind` (BUSY while written,
 * PAD while held back) */
static inline __attribute__((always_inline)) void ct_ring_tag_at(uint64_t *t, uint64_t s, uint64_t n,
								  unsigned head_kind)
{
	uint64_t cont = CT_TAG_MAKE(s, CT_TAG_CONT);

	/* records of up to 16 slots (1 KiB) take straight-line stores */
#define CT_CONT_(i) __atomic_store_n(&t[i], cont, __ATOMIC_RELAXED)
	switch (n) {
	default:
		for (uint64_t i = 16; i < n; i++)
			CT_CONT_(i);
		CT_CONT_(15); /* fall through */
	case 15: CT_CONT_(14); /* fall through */
	case 14: CT_CONT_(13); /* fall through */
	case 13: CT_CONT_(12); /* fall through */
	case 12: CT_CONT_(11); /* fall through */
	case 11: CT_CONT_(10); /* fall through */
	case 10: CT_CONT_(9); /* fall through */
	case 9: CT_CONT_(8); /* fall through */
	case 8: CT_CONT_(7); /* fall through */
	case 7: CT_CONT_(6); /* fall through */
	case 6: CT_CONT_(5); /* fall through */
	case 5: CT_CONT_(4); /* fall through */
	case 4: CT_CONT_(3); /* fall through */
	case 3: CT_CONT_(2); /* fall through */
	case 2: CT_CONT_(1); /* fall through */
	case 1: case 0: break;
	}
#undef CT_CONT_
	__atomic_store_n(t, CT_TAG_MAKE(s, head_kind), __ATOMIC_RELAXED);
}

/* tag slots [p, p + n) for a record with head slot s (ct_ring_tag_at) */
static inline __attribute__((always_inline)) void ct_ring_tag(struct ct_ring *r, uint64_t s, uint64_t p, uint64_t n, unsigned head_kind)
{
	ct_ring_tag_at(r->tags + p, s, n, head_kind);
}
void ct_ring_commit(struct ct_ring *r, const struct ct_slot *s);

/* The slots from monotonic slot s on are reserved again once header.head
 * is past this limit (a writer a lap of the ring ahead); never for slots
 * in the init area (limit UINT64_MAX).  A pair of records is on one side
 * of the init area's end: the second's limit is the first's + n1. */
static inline __attribute__((always_inline)) uint64_t ct_ring_lap_limit(const struct ct_ring *r, uint64_t s)
{
	return s >= r->init_slots ? s + r->ring_slots : UINT64_MAX;
}

/* the slots under lap limit lim (ct_ring_lap_limit) are a newer record's
 * now: a record reserved there earlier must not be written any more (its
 * bytes would land in the newer one) */
static inline __attribute__((always_inline)) int ct_ring_lapped(const struct ct_ring *r, uint64_t lim)
{
	return __atomic_load_n(&r->hdr->head, __ATOMIC_RELAXED) > lim;
}

/*
 * Count one committed record in counter ctr.  Counter 0 is shared (by the
 * shared reservations and by writers past the first counters_n - 1): a
 * locked add.  Every other counter has one writer, a thread, and only that
 * thread (or a signal handler on it) adds to it: on x86-64 one unlocked add
 * instruction, which a signal cannot split.  A locked instruction would
 * drain the store buffer, i.e. wait for the record's ~700 bytes of stores to
 * the ring: it cost 40-60 ns of the ~115 ns of a recorded ioctl
 * (bench/RESULTS.md).  TSO keeps the add before the commit store after it.
 */
static inline __attribute__((always_inline)) void ct_ring_count(const struct ct_ring *r, uint64_t *ctr)
{
#if defined(__x86_64__)
	if (__builtin_expect(ctr != (uint64_t *)(void *)r->counters, 1)) {
		__asm__ volatile("addq $1, %0" : "+m"(*ctr));
		return;
	}
#endif
	__atomic_fetch_add(ctr, 1, __ATOMIC_RELAXED);
}

/*
 * Commit the record whose head slot's tag is t (head slot s, lap limit lim:
 * ct_ring_lap_limit), reserved with head tag kind `held` (BUSY, or PAD for
 * the second of a pair), for the writer with commit counter ctr.  A writer stalled for a lap of the ring (descheduled
 * in a hook, a signal handler) finds its head slot owned by a newer record:
 * it must not destroy that one, so the commit only happens while the tag is
 * still its own, and otherwise counts its record as dropped.  A record
 * committed in the ring counts in the writer's counter (format.h,
 * "Counting"): the counter is added before the commit store, so a reader
 * never finds more records than counted.
 */
static inline __attribute__((always_inline)) void ct_ring_commit_lim(struct ct_ring *r, uint64_t *t,
								       uint64_t s, uint64_t lim, unsigned held,
								       uint64_t *ctr)
{
	/* overtaken while writing: the ring has reserved our slots again (the
	 * head slot first: reservations are in order), so whatever was written
	 * there since is newer than us, or our bytes are in it (a newer record
	 * that a reader then finds malformed or carrying our bytes); either
	 * way not ours to commit */
	if (__builtin_expect(ct_ring_lapped(r, lim) ||
			     __atomic_load_n(t, __ATOMIC_RELAXED) != CT_TAG_MAKE(s, held), 0)) {
		__atomic_fetch_add(&r->hdr->dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	/* counted when in the ring (the lap limit says) */
	if (lim != UINT64_MAX)
		ct_ring_count(r, ctr);
	__atomic_store_n(t, CT_TAG_MAKE(s, CT_TAG_HEAD), __ATOMIC_RELEASE);
}

/* the same, the lap limit worked out here */
static inline __attribute__((always_inline)) void ct_ring_commit_tag(struct ct_ring *r, uint64_t *t,
								       uint64_t s, unsigned held, uint64_t *ctr)
{
	ct_ring_commit_lim(r, t, s, ct_ring_lap_limit(r, s), held, ctr);
}

/* the same by physical slot p (t = &tags[p]) */
static inline void ct_ring_commit_at(struct ct_ring *r, uint64_t p, uint64_t s, unsigned held,
				     uint64_t *ctr)
{
	ct_ring_commit_tag(r, &r->tags[p], s, held, ctr);
}

/* Physical slot index of monotonic slot s. */
static inline uint64_t ct_ring_phys(const struct ct_ring *r, uint64_t s)
{
	if (s < r->init_slots)
		return s;
	return r->init_slots + (s - r->init_slots) % r->ring_slots;
}

/* The slots of a pair (ct_ring_reserve_pair) of n1 and n2 slots, inline for
 * the recording fast path: claimed and tagged.  Returns 0 and in *t the tag
 * of the first record's head slot (the second's is n1 further), or -1 when
 * nothing could be claimed; the caller fills both record headers (seq, size
 * included) and commits each with ct_ring_commit_tag. */
static inline __attribute__((always_inline)) int ct_ring_pair_fast(struct ct_ring *r, struct ct_chunk *c,
								   uint64_t n1, uint64_t n2, uint64_t *s,
								   uint64_t *p, uint64_t **t)
{
	if (ct_ring_claim_fast(r, c, n1 + n2, s, p) < 0)
		return -1;
	*t = r->tags + *p;
	ct_ring_tag_at(*t, *s, n1, CT_TAG_BUSY);
	ct_ring_tag_at(*t + n1, *s + n1, n2, CT_TAG_PAD); /* held back until committed */
	return 0;
}

static inline struct cutrace_record *ct_ring_rec(const struct ct_ring *r, uint64_t p)
{
	return (struct cutrace_record *)(void *)(r->slots + p * CUTRACE_SLOT_SIZE);
}

/*
 * Field writer: records are built in place, field by field.  The caller
 * computes the record size first with ct_field_size() and then writes
 * exactly those fields.
 */
static inline uint32_t ct_field_size(uint32_t len)
{
	return (uint32_t)sizeof(struct cutrace_field) + CT_FIELD_PAD(len);
}

static inline unsigned char *ct_put_field(unsigned char *p, uint16_t tag,
					  const void *data, uint16_t len)
{
	struct cutrace_field f = { tag, len };
	uint32_t pad = CT_FIELD_PAD(len) - len;

	__builtin_memcpy(p, &f, sizeof f);
	p += sizeof f;
	if (len)
		__builtin_memcpy(p, data, len);
	p += len;
	while (pad--)
		*p++ = 0;
	return p;
}

#endif
