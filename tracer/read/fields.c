/*
 * The fields of one record (trace.h, ct_rec_*): TLV look-ups, with a small
 * memo of the fields of the records looked up last (a describe and a
 * diagnosis ask the same record for many tags).  Every access re-checks
 * bounds: the record may be torn.
 */
#include "read_int.h"

#include <limits.h>
#include <stdlib.h>

/* ---- record fields --------------------------------------------------------------------- */

int ct_rec_next_field(const struct ct_recv *r, uint32_t *pos, struct ct_fieldv *out)
{
	if (!r || !r->fields)
		return 0;
	return tlv_next(r->fields, r->fields_len, pos, out);
}

/*
 * Field look-up.  Describing one event asks for a dozen fields of the same
 * two records, so the first look-up indexes a record (the first field of
 * each tag, and a bit per tag present) and the next ones are a table read.  Two records are
 * remembered: the enter and the exit of the event being described, each in a
 * slot of its own (the look-ups alternate between the two: a slot found by
 * the kind of record is one check per look-up).
 */
#define MEMO_TAGS 64
#define MEMO_ALL 48
static struct field_memo {
	const unsigned char *fields;
	uint64_t seq;
	uint32_t len;
	uint64_t have;                   /* bit t: a field with tag t */
	struct ct_fieldv f[MEMO_TAGS];   /* the first field of each tag */
	/* every field in order, for ct_rec_fields (nall > MEMO_ALL: too many) */
	uint32_t nall;
	struct ct_fieldv all[MEMO_ALL];
} memo[2];

/* a new mapping may reuse the addresses of an old one */
void ct_rec_memo_reset(void)
{
	memset(memo, 0, sizeof memo);
}

/* memo[1] for exit records, memo[0] for the others */
static inline struct field_memo *memo_slot(const struct ct_recv *r)
{
	return r->exit ? &memo[1] : &memo[0];
}

/* the index is of the bytes at fields (the seq tells a record written
 * over an old one at the same place) */
static inline bool memo_is(const struct field_memo *m, const struct ct_recv *r)
{
	return m->fields == r->fields && m->len == r->fields_len &&
	       m->seq == (r->hdr ? r->hdr->seq : 0);
}

/* index r in its slot, walking its fields as tlv_next does (kept out of
 * line: the look-up around it is the common case and stays small) */
static __attribute__((noinline)) const struct field_memo *memo_build(const struct ct_recv *r)
{
	struct field_memo *m = memo_slot(r);
	const unsigned char *p = r->fields;
	size_t len = r->fields_len, at = 0;
	uint64_t have = 0;
	uint32_t n = 0;

	m->fields = p;
	m->len = r->fields_len;
	m->seq = r->hdr ? r->hdr->seq : 0;
	while (at + sizeof(struct cutrace_field) <= len) {
		struct cutrace_field h;
		struct ct_fieldv f;

		memcpy(&h, p + at, sizeof h);
		if (h.len > len - at - sizeof h)
			break;
		f.tag = h.tag;
		f.len = h.len;
		f.data = p + at + sizeof h;
		if (n < MEMO_ALL)
			m->all[n] = f;
		n++;
		if (h.tag < MEMO_TAGS && !(have >> h.tag & 1)) {
			have |= 1ull << h.tag;
			m->f[h.tag] = f;
		}
		at += sizeof h + CT_FIELD_PAD(h.len);
	}
	/* FILLER is never found (ct_rec_field asks rec_scan, which skips it) */
	m->have = have & ~(1ull << CT_FLD_FILLER);
	m->nall = n;
	return m;
}

static inline const struct field_memo *memo_for(const struct ct_recv *r)
{
	const struct field_memo *m = memo_slot(r);

	return memo_is(m, r) ? m : memo_build(r);
}

/* ct_rec_field of a record not indexed yet (a tail call: the common case
 * then needs no stack frame) */
static __attribute__((noinline)) const struct ct_fieldv *rec_field_new(const struct ct_recv *r, uint16_t tag,
									 struct ct_fieldv *out)
{
	const struct field_memo *m = memo_build(r);

	if (!(m->have >> tag & 1))
		return NULL;
	*out = m->f[tag];
	return out;
}

/* a tag the memo does not keep: walk the fields */
static __attribute__((noinline)) const struct ct_fieldv *rec_scan(const struct ct_recv *r, uint16_t tag,
								  struct ct_fieldv *out)
{
	uint32_t pos = 0;

	while (ct_rec_next_field(r, &pos, out))
		if (out->tag == tag && tag != CT_FLD_FILLER)
			return out;
	return NULL;
}

const struct ct_fieldv *ct_rec_field(const struct ct_recv *r, uint16_t tag, struct ct_fieldv *out)
{
	const struct field_memo *m;

	if (!r->fields)
		return NULL;
	if (tag >= MEMO_TAGS || tag == CT_FLD_FILLER)
		return rec_scan(r, tag, out);
	m = memo_slot(r);
	if (!memo_is(m, r))
		return rec_field_new(r, tag, out);
	if (!(m->have >> tag & 1))
		return NULL;
	*out = m->f[tag];
	return out;
}

unsigned ct_rec_fields(const struct ct_recv *r, const struct ct_fieldv **all)
{
	const struct field_memo *m;

	if (!r->fields)
		return 0;
	m = memo_for(r);
	if (m->nall > MEMO_ALL)
		return UINT_MAX;
	*all = m->all;
	return m->nall;
}

static bool rec_fixed(const struct ct_recv *r, uint16_t tag, void *v, size_t n)
{
	struct ct_fieldv f;

	if (!ct_rec_field(r, tag, &f) || f.len != n)
		return false;
	memcpy(v, f.data, n);
	return true;
}

bool ct_rec_u32(const struct ct_recv *r, uint16_t tag, uint32_t *v) { return rec_fixed(r, tag, v, 4); }
bool ct_rec_i32(const struct ct_recv *r, uint16_t tag, int32_t *v) { return rec_fixed(r, tag, v, 4); }
bool ct_rec_u64(const struct ct_recv *r, uint16_t tag, uint64_t *v) { return rec_fixed(r, tag, v, 8); }
bool ct_rec_i64(const struct ct_recv *r, uint16_t tag, int64_t *v) { return rec_fixed(r, tag, v, 8); }

const char *ct_rec_str(const struct ct_recv *r, uint16_t tag, char *buf, size_t buflen)
{
	struct ct_fieldv f;

	if (!ct_rec_field(r, tag, &f))
		return NULL;
	return copy_str(f.data, f.len, buf, buflen);
}

const struct ct_fieldv *ct_ev_field(const struct ct_event *ev, uint16_t tag, struct ct_fieldv *out)
{
	if (ev->has_exit && ct_rec_field(&ev->exit, tag, out))
		return out;
	if (ev->has_enter && ct_rec_field(&ev->enter, tag, out))
		return out;
	return NULL;
}
