/*
 * The slot ring of a cutrace file: reservation, padding and commit.
 *
 * One atomic fetch-add reserves every record, so writers never wait for each
 * other and a writer interrupted by a signal (or killed) leaves at most its own
 * record torn.  Tags are exchanged, not stored, in the ring so that the writer
 * that overwrites a record knows it did and can count it as dropped exactly
 * once.
 */
#include "ring.h"

#include <string.h>

#define SLOT CUTRACE_SLOT_SIZE

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

int ct_ring_layout(struct cutrace_header *h, uint64_t file_size, uint64_t ctx_cap)
{
	uint64_t fixed = CUTRACE_HEADER_AREA + align_up(ctx_cap, 4096);
	uint64_t nslots, tags_bytes;

	if (file_size <= fixed + 2 * 4096)
		return -1;
	/* each slot costs SLOT bytes of data plus an 8-byte tag */
	nslots = (file_size - fixed - 2 * 4096) / (SLOT + 8);
	if (nslots < 64)
		return -1;
	tags_bytes = align_up(nslots * 8, 4096);

	h->file_size = file_size;
	h->ctx_off = CUTRACE_HEADER_AREA;
	h->ctx_cap = ctx_cap;
	h->ctx_len = 0;
	h->tags_off = fixed;
	h->slots_off = fixed + tags_bytes;
	/* a quarter of the slots keep the start of the process forever */
	h->init_slots = nslots / 4;
	h->ring_slots = nslots - h->init_slots;
	h->head = 0;
	return 0;
}

void ct_ring_attach(struct ct_ring *r, void *map)
{
	unsigned char *base = map;

	r->hdr = map;
	r->tags = (uint64_t *)(void *)(base + r->hdr->tags_off);
	r->slots = base + r->hdr->slots_off;
	r->init_slots = r->hdr->init_slots;
	r->ring_slots = r->hdr->ring_slots;
}

/* Claim physical slot p for monotonic head s with the given tag kind. */
static void claim(struct ct_ring *r, uint64_t p, uint64_t s, unsigned kind)
{
	uint64_t tag = CT_TAG_MAKE(s, kind);

	if (p < r->init_slots) {
		/* the init area is written once: no previous owner to account for */
		__atomic_store_n(&r->tags[p], tag, __ATOMIC_RELAXED);
		return;
	}
	uint64_t old = __atomic_exchange_n(&r->tags[p], tag, __ATOMIC_RELAXED);
	unsigned ok = CT_TAG_KIND(old);
	if (ok == CT_TAG_HEAD || ok == CT_TAG_BUSY)
		__atomic_fetch_add(&r->hdr->dropped, 1, __ATOMIC_RELAXED);
}

int ct_ring_reserve(struct ct_ring *r, uint32_t size, struct ct_slot *out)
{
	uint64_t n = (size + SLOT - 1) / SLOT;
	int attempt;

	if (size < sizeof(struct cutrace_record) || size > CUTRACE_MAX_RECORD ||
	    n > r->ring_slots) {
		__atomic_fetch_add(&r->hdr->lost, 1, __ATOMIC_RELAXED);
		return -1;
	}
	/*
	 * A reservation that straddles the end of the init area or of the ring
	 * is padded and retried; two retries always suffice (after a straddle
	 * the next reservation starts at a boundary), the bound is defensive.
	 */
	for (attempt = 0; attempt < 4; attempt++) {
		uint64_t s = __atomic_fetch_add(&r->hdr->head, n, __ATOMIC_RELAXED);
		uint64_t p, i;
		int straddle;

		if (s < r->init_slots) {
			p = s;
			straddle = s + n > r->init_slots;
		} else {
			uint64_t off = (s - r->init_slots) % r->ring_slots;
			p = r->init_slots + off;
			straddle = off + n > r->ring_slots;
		}
		if (straddle) {
			for (i = 0; i < n; i++)
				claim(r, ct_ring_phys(r, s + i), s + i, CT_TAG_PAD);
			continue;
		}
		if (p < r->init_slots) {
			/* the init area is written once: plain stores */
			for (i = 1; i < n; i++)
				__atomic_store_n(&r->tags[p + i], CT_TAG_MAKE(s, CT_TAG_CONT), __ATOMIC_RELAXED);
			__atomic_store_n(&r->tags[p], CT_TAG_MAKE(s, CT_TAG_BUSY), __ATOMIC_RELAXED);
		} else {
			/* ring: read the previous owner, then store (no locked
			 * exchange: two writers meet on a slot only if the ring wraps
			 * during one record, where a drop may be miscounted by one) */
			uint64_t drops = 0, cont = CT_TAG_MAKE(s, CT_TAG_CONT), *t = &r->tags[p];
			/* kind BUSY (1) or HEAD (2): (kind - 1) mod 256 < 2 */
			for (i = n - 1; i > 0; i--) {
				drops += (uint8_t)(__atomic_load_n(&t[i], __ATOMIC_RELAXED) - 1) < 2;
				__atomic_store_n(&t[i], cont, __ATOMIC_RELAXED);
			}
			drops += (uint8_t)(__atomic_load_n(t, __ATOMIC_RELAXED) - 1) < 2;
			__atomic_store_n(t, CT_TAG_MAKE(s, CT_TAG_BUSY), __ATOMIC_RELAXED);
			if (drops)
				__atomic_fetch_add(&r->hdr->dropped, drops, __ATOMIC_RELAXED);
		}

		out->rec = (struct cutrace_record *)(void *)(r->slots + p * SLOT);
		out->seq = s;
		out->phys = p;
		out->size = size;
		out->rec->seq = s;
		out->rec->size = size;
		return 0;
	}
	__atomic_fetch_add(&r->hdr->lost, 1, __ATOMIC_RELAXED);
	return -1;
}

void ct_ring_commit(struct ct_ring *r, const struct ct_slot *s)
{
	__atomic_store_n(&r->tags[s->phys], CT_TAG_MAKE(s->seq, CT_TAG_HEAD),
			 __ATOMIC_RELEASE);
}
