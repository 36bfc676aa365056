/*
 * Internal to the read room: the trace object and the helpers its files
 * share.  trace.c opens and validates a file and reads its context,
 * fields.c the fields of one record, stream.c delivers the events,
 * list.c expands FILE|DIR arguments, devmap.c follows the NVIDIA fds.
 */
#ifndef CT_READ_INT_H
#define CT_READ_INT_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "source.h"
#include "trace.h"

#define SLOT CUTRACE_SLOT_SIZE
/* pending calls waiting for their exit; beyond this the oldest is given up */
#define CT_PAIR_WINDOW 65536u
/* events held back to be delivered in time order (see order_push) */
#define CT_ORDER_WINDOW 4096u
/* give back mapped pages every this many bytes of consumed slots */
#define CT_DROP_WINDOW (4u << 20)
#define CT_DROP_LAG    (4u << 20)

struct ct_pend {
	struct ct_event ev;
	bool done;               /* exit seen (or a note / orphan: complete at once) */
};

struct ct_okey {
	uint64_t t, seq;
	uint32_t idx;
};

struct ct_trace {
	char *path;
	unsigned char *base;     /* the mapping or the private copy */
	size_t len;              /* bytes of base that may be read */
	bool mapped;             /* base is an mmap (MADV_DONTNEED allowed) */
	bool used_only;          /* base is the reused buffer of ct_trace_open_used */
	struct cutrace_header hdr;
	const unsigned char *ctx;
	size_t ctx_len;
	const uint64_t *tags;
	const unsigned char *slots;
	uint64_t nslots;
	struct ct_trace_stats stats;
	bool drv_done;
	uint32_t drv;
	char drv_str[32];

	/* ring slots below this monotonic index were overwritten (0: none) */
	uint64_t lost_below;
	/* pairing state, live during ct_trace_events */
	struct ct_pend *q;
	uint32_t qcap, qhead, qcount;
	uint64_t next_index;
	ct_event_cb cb;
	void *user;
	/* time ordering: keys into a pool of held-back events, in a FIFO
	 * while they come in order (orun) and a heap for the others */
	struct ct_event *opool;
	struct ct_okey *oheap;
	struct ct_okey *orun;
	uint32_t *ofree;
	uint32_t ocount;         /* keys in oheap */
	uint32_t rhead, rcount;  /* keys in orun, a ring of CT_ORDER_WINDOW */
	bool order_off;          /* no memory for the window: deliver in seq order */
	/* MADV_DONTNEED bookkeeping: the current window of physical slots */
	uint64_t drop_from, drop_next;
	/* where the bytes are: a file mapping under the SIGBUS guard (guard >= 0),
	 * or a sparse buffer of the trace's own (blob.base == base) */
	int guard;
	struct ct_blob blob;
	/* damage found when opening: bytes present of file_size, records (and
	 * of those, ring records) whose slots lie past the end */
	uint64_t present;
	uint64_t missing_records, missing_ring;
	/* written slots (below header.head) whose tags lie past the end: what
	 * they held is missing, and how many records that was is unknown */
	uint64_t missing_unknown;
	bool ctx_bad; /* the context area is malformed (ctx_why) */
	char ctx_why[160];
	/* the NVIDIA device map of the events delivered so far (ct_trace_devmap);
	 * allocated by the first ct_trace_events, NULL when out of memory */
	struct ct_nv_devmap *devmap;
};

static inline int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* ---- TLV fields ------------------------------------------------------------------ */

/*
 * Next well-formed field of [p, p + len) at *pos.  Trailing bytes too short
 * for a field header are padding; a field whose data runs past the end
 * stops the walk (and makes the whole area malformed for tlv_ok).
 */
static inline int tlv_next(const unsigned char *p, size_t len, uint32_t *pos, struct ct_fieldv *out)
{
	struct cutrace_field f;
	size_t at = *pos;

	if (at + sizeof f > len)
		return 0;
	memcpy(&f, p + at, sizeof f);
	if (f.len > len - at - sizeof f)
		return 0;
	out->tag = f.tag;
	out->len = f.len;
	out->data = p + at + sizeof f;
	at += sizeof f + CT_FIELD_PAD(f.len);
	*pos = (uint32_t)(at < len ? at : len);
	return 1;
}

/* every field lies inside [p, p + len): tlv_next's walk to the end (only
 * the lengths are read: this runs for every record) */
static inline bool tlv_ok(const unsigned char *p, size_t len)
{
	struct cutrace_field f;
	size_t at = 0;

	while (at + sizeof f <= len) {
		memcpy(&f, p + at, sizeof f);
		if (f.len > len - at - sizeof f)
			return false;
		at += sizeof f + CT_FIELD_PAD(f.len);
	}
	return true;
}

static inline const char *copy_str(const unsigned char *d, size_t n, char *buf, size_t buflen)
{
	if (!buflen)
		return NULL;
	if (n > buflen - 1)
		n = buflen - 1;
	memcpy(buf, d, n);
	buf[n] = 0;
	return buf;
}

/* fields.c keeps the fields of the last records looked up; a new trace forgets them */
void ct_rec_memo_reset(void);

#endif
