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
};

/* A reserved record: write up to `size` bytes at `rec`, then commit. */
struct ct_slot {
	struct cutrace_record *rec;
	uint64_t seq;
	uint64_t phys;
	uint32_t size;
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
void ct_ring_commit(struct ct_ring *r, const struct ct_slot *s);

/* Physical slot index of monotonic slot s. */
static inline uint64_t ct_ring_phys(const struct ct_ring *r, uint64_t s)
{
	if (s < r->init_slots)
		return s;
	return r->init_slots + (s - r->init_slots) % r->ring_slots;
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
