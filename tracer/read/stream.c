/*
 * Reading cutrace files: header validation, record streaming and
 * enter/exit pairing (format: shim/include/cutrace/format.h, API: trace.h).
 *
 * Hazards this file is written around:
 *  - The file is untrusted: any header field may be garbage.  Every offset
 *    and count is checked against the real file size before anything is
 *    touched, every loop is bounded by the slot counts so checked, and a
 *    record is only believed after its tags, seq, size and TLV fields agree.
 *  - The file may still be written while we read it (a live process): we
 *    take a private copy of the header once, and field accessors re-check
 *    bounds on every access instead of trusting an earlier validation.
 *  - Memory must not grow with the file: the mapping is read-only and the
 *    pages of consumed windows are given back with MADV_DONTNEED (a later
 *    access simply faults them in again from the file, so pointers held by
 *    pending events stay valid), and pairing uses a bounded FIFO.
 */
#include "trace.h"
#include "devmap.h"
#include "tracer.h"
#include "version.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
	/* the NVIDIA device map of the events delivered so far (ct_trace_devmap);
	 * allocated by the first ct_trace_events, NULL when out of memory */
	struct ct_nv_devmap *devmap;
};

/* ---- errors ------------------------------------------------------------------ */

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* ---- header validation --------------------------------------------------------- */

static bool add_ok(uint64_t a, uint64_t b, uint64_t *sum)
{
	return !__builtin_add_overflow(a, b, sum);
}

/* region [off, off + size) lies inside [0, limit) without overflow */
static bool region_ok(uint64_t off, uint64_t size, uint64_t limit)
{
	uint64_t end;

	return add_ok(off, size, &end) && end <= limit;
}

/*
 * Checks in the order the format promises (format.h, style.md §2): size,
 * magic, byte order, header size, version, word size, slot size, layout.
 */
static int validate(struct ct_trace *t, uint64_t actual, char *err, size_t errlen)
{
	const struct cutrace_header *h = &t->hdr;
	uint64_t n, tags_bytes, slots_bytes, limit;
	static const char zero[8];

	if (actual == 0)
		return fail(err, errlen, "empty file (0 bytes)");
	if (actual < sizeof *h)
		return fail(err, errlen, "file too small for a cutrace header (%llu bytes, need %zu)",
			    (unsigned long long)actual, sizeof *h);
	if (memcmp(h->magic, CUTRACE_MAGIC, 8) != 0) {
		/* the shim writes the magic last: zero means it died while creating the file */
		if (!memcmp(h->magic, zero, 8) && h->endian == CUTRACE_ENDIAN_PROBE)
			return fail(err, errlen, "header never completed (no magic): the process "
				    "died while creating the trace");
		return fail(err, errlen, "not a cutrace trace file (bad magic)");
	}
	if (h->endian != CUTRACE_ENDIAN_PROBE) {
		if (h->endian == __builtin_bswap32(CUTRACE_ENDIAN_PROBE))
			return fail(err, errlen, "written on a machine of the other byte order; not supported");
		return fail(err, errlen, "corrupt header (byte-order probe 0x%08x)", h->endian);
	}
	if (h->header_size < sizeof *h || h->header_size > CUTRACE_HEADER_AREA)
		return fail(err, errlen, "corrupt header (header size %u, expected %zu)",
			    h->header_size, sizeof *h);
	if (h->version_major > CUTRACE_VERSION_MAJOR)
		return fail(err, errlen, "format version %u.%u is newer than this cutrace (reads %u.x)",
			    h->version_major, h->version_minor, CUTRACE_VERSION_MAJOR);
	if (h->version_major < CUTRACE_VERSION_MAJOR)
		return fail(err, errlen, "format version %u.%u is not supported (reads %u.x)",
			    h->version_major, h->version_minor, CUTRACE_VERSION_MAJOR);
	if (h->word_size != 4 && h->word_size != 8)
		return fail(err, errlen, "corrupt header (word size %u)", h->word_size);
	if (h->slot_size != SLOT)
		return fail(err, errlen, "corrupt header (slot size %u, expected %u)", h->slot_size, SLOT);
	if (h->file_size > actual)
		return fail(err, errlen, "truncated: header says %llu bytes, file has %llu",
			    (unsigned long long)h->file_size, (unsigned long long)actual);
	limit = h->file_size;
	if (h->ctx_off < h->header_size)
		return fail(err, errlen, "corrupt header (context area starts inside the header)");
	if (!region_ok(h->ctx_off, h->ctx_cap, limit))
		return fail(err, errlen, "corrupt header (context area ends past the file)");
	if (h->ctx_len > h->ctx_cap)
		return fail(err, errlen, "corrupt header (context length %llu exceeds its capacity %llu)",
			    (unsigned long long)h->ctx_len, (unsigned long long)h->ctx_cap);
	if (h->ring_slots == 0)
		return fail(err, errlen, "corrupt header (no ring slots)");
	if (!add_ok(h->init_slots, h->ring_slots, &n) || n > limit / SLOT)
		return fail(err, errlen, "corrupt header (slot counts %llu + %llu too large for the file)",
			    (unsigned long long)h->init_slots, (unsigned long long)h->ring_slots);
	tags_bytes = n * 8;
	slots_bytes = n * SLOT;
	if (h->tags_off % 8 || h->slots_off % 8)
		return fail(err, errlen, "corrupt header (misaligned tag or slot area)");
	if (h->tags_off < h->ctx_off + h->ctx_cap)
		return fail(err, errlen, "corrupt header (tag area overlaps the context)");
	if (!region_ok(h->tags_off, tags_bytes, limit))
		return fail(err, errlen, "corrupt header (tag area ends past the file)");
	if (h->slots_off < h->tags_off + tags_bytes)
		return fail(err, errlen, "corrupt header (slot area overlaps the tags)");
	if (!region_ok(h->slots_off, slots_bytes, limit))
		return fail(err, errlen, "corrupt header (slot area ends past the file)");
	t->len = limit;
	t->ctx_len = h->ctx_len;
	t->nslots = n;
	return 0;
}

/* point the area pointers into the validated bytes at base */
static void attach(struct ct_trace *t, unsigned char *base)
{
	t->base = base;
	t->ctx = base + t->hdr.ctx_off;
	t->tags = (const uint64_t *)(const void *)(base + t->hdr.tags_off);
	t->slots = base + t->hdr.slots_off;
}

static struct ct_trace *trace_new(const char *path)
{
	struct ct_trace *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	t->path = strdup(path ? path : "(memory)");
	if (!t->path) {
		free(t);
		return NULL;
	}
	return t;
}

static void memo_reset(void);

void ct_trace_close(struct ct_trace *t)
{
	memo_reset();
	if (!t)
		return;
	if (t->mapped)
		munmap(t->base, t->len);
	else
		free(t->base);
	free(t->q);
	free(t->devmap);
	free(t->path);
	free(t);
}

int ct_trace_open(const char *path, struct ct_trace **out, char *err, size_t errlen)
{
	memo_reset();
	struct ct_trace *t;
	struct stat st;
	ssize_t got;
	int fd;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return fail(err, errlen, "%s", strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return fail(err, errlen, "is a directory");
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, errlen, "not a regular file");
	}
	t = trace_new(path);
	if (!t) {
		close(fd);
		return fail(err, errlen, "out of memory");
	}
	/* the header by pread first: validation needs no mapping */
	got = pread(fd, &t->hdr, sizeof t->hdr, 0);
	if (got < 0) {
		int e = errno;
		close(fd);
		ct_trace_close(t);
		return fail(err, errlen, "%s", strerror(e));
	}
	if ((size_t)got < sizeof t->hdr)
		memset((char *)&t->hdr + got, 0, sizeof t->hdr - (size_t)got);
	if (validate(t, (uint64_t)st.st_size, err, errlen) < 0) {
		close(fd);
		ct_trace_close(t);
		return -1;
	}
	if (t->len != (uint64_t)(size_t)t->len) {
		close(fd);
		ct_trace_close(t);
		return fail(err, errlen, "file too large to map");
	}
	void *m = mmap(NULL, t->len, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (m == MAP_FAILED) {
		t->len = 0;
		ct_trace_close(t);
		return fail(err, errlen, "cannot map the file: %s", strerror(e));
	}
	t->mapped = true;
	attach(t, m);
	*out = t;
	return 0;
}

int ct_trace_open_mem(const void *buf, size_t len, struct ct_trace **out, char *err, size_t errlen)
{
	memo_reset();
	struct ct_trace *t;

	*out = NULL;
	t = trace_new(NULL);
	if (!t)
		return fail(err, errlen, "out of memory");
	if (len >= sizeof t->hdr)
		memcpy(&t->hdr, buf, sizeof t->hdr);
	else if (len)
		memcpy(&t->hdr, buf, len);
	/* the copy is taken after validation so a bad header costs no memory */
	if (validate(t, len, err, errlen) < 0) {
		ct_trace_close(t);
		return -1;
	}
	/* malloc gives 16-byte alignment: tags and records stay aligned */
	unsigned char *copy = malloc(t->len ? t->len : 1);
	if (!copy) {
		ct_trace_close(t);
		return fail(err, errlen, "out of memory");
	}
	memcpy(copy, buf, t->len);
	attach(t, copy);
	*out = t;
	return 0;
}

const char *ct_trace_path(const struct ct_trace *t) { return t->path; }
const struct cutrace_header *ct_trace_header(const struct ct_trace *t) { return &t->hdr; }
const struct ct_trace_stats *ct_trace_stats(const struct ct_trace *t) { return &t->stats; }

/* ---- TLV fields ------------------------------------------------------------------ */

/*
 * Next well-formed field of [p, p + len) at *pos.  Trailing bytes too short
 * for a field header are padding; a field whose data runs past the end
 * stops the walk (and makes the whole area malformed for tlv_ok).
 */
static int tlv_next(const unsigned char *p, size_t len, uint32_t *pos, struct ct_fieldv *out)
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
static bool tlv_ok(const unsigned char *p, size_t len)
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

/* ---- context ------------------------------------------------------------------------ */

const unsigned char *ct_trace_ctx(const struct ct_trace *t, uint16_t tag, unsigned idx, uint16_t *len)
{
	struct ct_fieldv f;
	uint32_t pos = 0;

	while (tlv_next(t->ctx, t->ctx_len, &pos, &f)) {
		if (f.tag != tag)
			continue;
		if (idx-- == 0) {
			if (len)
				*len = f.len;
			return f.data;
		}
	}
	return NULL;
}

static const char *copy_str(const unsigned char *d, size_t n, char *buf, size_t buflen)
{
	if (!buflen)
		return NULL;
	if (n > buflen - 1)
		n = buflen - 1;
	memcpy(buf, d, n);
	buf[n] = 0;
	return buf;
}

const char *ct_trace_ctx_str(const struct ct_trace *t, uint16_t tag, unsigned idx, char *buf, size_t buflen)
{
	uint16_t len;
	const unsigned char *d = ct_trace_ctx(t, tag, idx, &len);

	return d ? copy_str(d, len, buf, buflen) : NULL;
}

const char *ct_trace_env(const struct ct_trace *t, const char *name, char *buf, size_t buflen)
{
	size_t n = strlen(name);
	uint16_t len;
	const unsigned char *d;

	for (unsigned i = 0; (d = ct_trace_ctx(t, CT_CTX_ENV, i, &len)) != NULL; i++)
		if (len > n && d[n] == '=' && !memcmp(d, name, n))
			return copy_str(d + n + 1, len - n - 1, buf, buflen);
	return NULL;
}

/* ---- driver version ---------------------------------------------------------------- */

static void driver_parse(struct ct_trace *t)
{
	static const uint16_t tags[] = { CT_CTX_NV_VERSION, CT_CTX_NV_MODVERSION };
	char text[1200];

	if (t->drv_done)
		return;
	t->drv_done = true;
	for (unsigned i = 0; i < 2; i++) {
		if (!ct_trace_ctx_str(t, tags[i], 0, text, sizeof text))
			continue;
		/* the NVRM line's version token (base/version.c) */
		if (ct_parse_nvrm_version(text, t->drv_str, sizeof t->drv_str, NULL) == 0) {
			t->drv = ct_drv_version_parse(t->drv_str);
			if (t->drv)
				return;
		}
		t->drv_str[0] = 0;
	}
}

uint32_t ct_trace_driver_version(const struct ct_trace *t)
{
	driver_parse((struct ct_trace *)t);
	return t->drv;
}

const char *ct_trace_driver_version_str(const struct ct_trace *t)
{
	driver_parse((struct ct_trace *)t);
	return t->drv_str[0] ? t->drv_str : NULL;
}

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
static void memo_reset(void)
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

/* ---- calls ------------------------------------------------------------------------------- */

static const char *const call_names[CT_CALL__MAX] = {
#define CT_X_NAME(id, name, fam) [id] = #name,
	CUTRACE_CALLS(CT_X_NAME)
#undef CT_X_NAME
};
static const unsigned char call_fams[CT_CALL__MAX] = {
#define CT_X_FAM(id, name, fam) [id] = fam,
	CUTRACE_CALLS(CT_X_FAM)
#undef CT_X_FAM
};

const char *ct_call_name(unsigned call)
{
	static __thread char buf[24];

	if (call < CT_CALL__MAX && call_names[call])
		return call_names[call];
	snprintf(buf, sizeof buf, "call#%u", call);
	return buf;
}

int ct_call_family(unsigned call)
{
	return call < CT_CALL__MAX ? call_fams[call] : 0;
}

/* ---- streaming -------------------------------------------------------------------------- */

static uint64_t phys_of(const struct ct_trace *t, uint64_t s)
{
	if (s < t->hdr.init_slots)
		return s;
	return t->hdr.init_slots + (s - t->hdr.init_slots) % t->hdr.ring_slots;
}

/* Give the pages of physical slots [from, to) (and their tags) back. */
static void drop_pages(struct ct_trace *t, uint64_t from, uint64_t to)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t a, b;

	if (!t->mapped || to <= from || pg <= 0)
		return;
	a = ((uintptr_t)(t->slots + from * SLOT) + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
	b = (uintptr_t)(t->slots + to * SLOT) & ~((uintptr_t)pg - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
	a = ((uintptr_t)(t->tags + from) + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
	b = (uintptr_t)(t->tags + to) & ~((uintptr_t)pg - 1);
	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

/*
 * Called before reading physical slot p: close the window when it is big, or
 * when the walk jumped (init area -> ring start, ring wrap), so that slots
 * not read yet are not dropped for nothing.  Dropping is only ever a cost,
 * never a correctness issue: a dropped page faults in again from the file.
 */
static void drop_advance(struct ct_trace *t, uint64_t p)
{
	if (p < t->drop_from || p > t->drop_next + CUTRACE_MAX_RECORD / SLOT) {
		drop_pages(t, t->drop_from, t->drop_next);
		t->drop_from = p;
	} else if ((p - t->drop_from) * SLOT >= CT_DROP_WINDOW + CT_DROP_LAG) {
		/* the last CT_DROP_LAG bytes stay: events held back for time
		 * order are read a little behind the walk */
		uint64_t keep = p - CT_DROP_LAG / SLOT;
		drop_pages(t, t->drop_from, keep);
		t->drop_from = keep;
	}
	t->drop_next = p + 1;
}

static int emit(struct ct_trace *t, struct ct_event *ev)
{
	ev->index = t->next_index++;
	t->stats.events++;
	if (ev->type != CT_REC_NOTE && ev->has_enter && !ev->has_exit) {
		t->stats.unfinished++;
		/* its exit, if written, has a higher seq: lost if the ring
		 * overwrote slots after the enter (the enter then is in the init
		 * area: everything older in the ring is gone) */
		if (ev->seq < t->lost_below && t->lost_below > t->hdr.init_slots)
			ev->exit_unknown = true;
		if (ev->exit_unknown)
			t->stats.exit_unknown++;
	}
	if (!ev->has_enter)
		t->stats.orphan_exits++;
	/* opens bind an fd to a device number, closes unbind it: the map is
	 * up to date for the event itself and every later one */
	if (t->devmap && ct_call_family(ev->call) == CT_FAM_IO && ev->call != CT_CALL_ioctl)
		ct_nv_devmap_track(t->devmap, ev);
	return t->cb(ev, t->user);
}

/*
 * Time order.  Pairing yields events in seq order, which is time order for
 * one thread, but writers that record a lot take runs of slots for
 * themselves (format.h, "Runs"), so the runs of two busy threads hold
 * interleaved stretches of time.  Events are held back in a window of
 * CT_ORDER_WINDOW and delivered smallest (time, seq) first: exact whenever
 * no event is displaced by more than the window, which covers 64 threads
 * recording at once with full runs.  Memory stays bounded.
 *
 * Most events come in order: those later than every key in the FIFO are
 * appended to it, in O(1), and only the others go to the heap; the next
 * event out is the smaller of the FIFO's head and the heap's top.  The
 * same order as one heap of all of them (keys are unique: seq is).
 */
static bool okey_less(const struct ct_okey *a, const struct ct_okey *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void oheap_down(struct ct_trace *t, uint32_t i)
{
	struct ct_okey *h = t->oheap, k = h[i];
	uint32_t n = t->ocount;

	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && okey_less(&h[c + 1], &h[c]))
			c++;
		if (!okey_less(&h[c], &k))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = k;
}

static void oheap_up(struct ct_trace *t, uint32_t i)
{
	struct ct_okey *h = t->oheap, k = h[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!okey_less(&k, &h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = k;
}

static uint32_t order_held(const struct ct_trace *t)
{
	return t->ocount + t->rcount;
}

/* the smallest key held (there is one) */
static const struct ct_okey *order_min(const struct ct_trace *t)
{
	const struct ct_okey *r = t->rcount ? &t->orun[t->rhead] : NULL;

	if (!t->ocount || (r && okey_less(r, &t->oheap[0])))
		return r;
	return &t->oheap[0];
}

/* deliver the earliest held-back event */
static int order_pop(struct ct_trace *t)
{
	const struct ct_okey *m = order_min(t);
	uint32_t idx = m->idx;
	struct ct_event ev = t->opool[idx];

	t->ofree[CT_ORDER_WINDOW - order_held(t)] = idx;
	if (t->rcount && m == &t->orun[t->rhead]) {
		t->rhead = (t->rhead + 1) & (CT_ORDER_WINDOW - 1);
		t->rcount--;
	} else {
		t->oheap[0] = t->oheap[--t->ocount];
		if (t->ocount)
			oheap_down(t, 0);
	}
	return emit(t, &ev);
}

static bool order_alloc(struct ct_trace *t)
{
	t->opool = malloc(CT_ORDER_WINDOW * sizeof *t->opool);
	t->oheap = malloc(CT_ORDER_WINDOW * sizeof *t->oheap);
	t->orun = malloc(CT_ORDER_WINDOW * sizeof *t->orun);
	t->ofree = malloc(CT_ORDER_WINDOW * sizeof *t->ofree);
	if (!t->opool || !t->oheap || !t->orun || !t->ofree) {
		free(t->opool);
		free(t->oheap);
		free(t->orun);
		free(t->ofree);
		t->opool = NULL;
		t->oheap = NULL;
		t->orun = NULL;
		t->ofree = NULL;
		return false;
	}
	for (uint32_t i = 0; i < CT_ORDER_WINDOW; i++)
		t->ofree[i] = CT_ORDER_WINDOW - 1 - i; /* a stack: ofree[0..free) */
	t->ocount = 0;
	t->rhead = t->rcount = 0;
	return true;
}

static void order_free(struct ct_trace *t)
{
	free(t->opool);
	free(t->oheap);
	free(t->orun);
	free(t->ofree);
	t->opool = NULL;
	t->oheap = NULL;
	t->orun = NULL;
	t->ofree = NULL;
	t->ocount = 0;
	t->rhead = t->rcount = 0;
}

static int deliver(struct ct_trace *t, struct ct_event *ev)
{
	struct ct_okey k = { ev->t_ns, ev->seq, 0 };
	int r;

	if (!t->opool && (t->order_off || !order_alloc(t))) {
		t->order_off = true;
		return emit(t, ev);
	}
	if (order_held(t) == CT_ORDER_WINDOW) {
		/* full: an event earlier than everything held goes out at once */
		if (okey_less(&k, order_min(t)))
			return emit(t, ev);
		if ((r = order_pop(t)) != 0)
			return r;
	}
	k.idx = t->ofree[CT_ORDER_WINDOW - 1 - order_held(t)];
	t->opool[k.idx] = *ev;
	if (!t->rcount ||
	    okey_less(&t->orun[(t->rhead + t->rcount - 1) & (CT_ORDER_WINDOW - 1)], &k)) {
		t->orun[(t->rhead + t->rcount) & (CT_ORDER_WINDOW - 1)] = k;
		t->rcount++;
		return 0;
	}
	t->oheap[t->ocount] = k;
	oheap_up(t, t->ocount++);
	return 0;
}

static int order_flush(struct ct_trace *t)
{
	int r;

	/* (opool: nothing is held back when the window could not be allocated) */
	while (t->opool && order_held(t))
		if ((r = order_pop(t)) != 0)
			return r;
	return 0;
}

static struct ct_pend *q_at(struct ct_trace *t, uint32_t i)
{
	return &t->q[(t->qhead + i) & (t->qcap - 1)];
}

/* deliver the complete events at the head of the FIFO */
static int q_flush(struct ct_trace *t, bool all)
{
	int r;

	while (t->qcount && (all || q_at(t, 0)->done)) {
		struct ct_event ev = q_at(t, 0)->ev;
		t->qhead = (t->qhead + 1) & (t->qcap - 1);
		t->qcount--;
		if ((r = deliver(t, &ev)) != 0)
			return r;
	}
	return 0;
}

static bool q_grow(struct ct_trace *t)
{
	uint32_t ncap = t->qcap ? t->qcap * 2 : 256;
	struct ct_pend *nq;

	if (t->qcap >= CT_PAIR_WINDOW || !(nq = malloc((size_t)ncap * sizeof *nq)))
		return false;
	for (uint32_t i = 0; i < t->qcount; i++)
		nq[i] = *q_at(t, i);
	free(t->q);
	t->q = nq;
	t->qcap = ncap;
	t->qhead = 0;
	return true;
}

/* room for one more entry: grow up to the window, then give up the oldest */
static int q_reserve(struct ct_trace *t, struct ct_pend **slot)
{
	int r;

	if (t->qcount == t->qcap && !q_grow(t)) {
		if (!t->qcap)
			return -1; /* not even the first allocation */
		/* the window is full: the oldest call is delivered as unfinished;
		 * should its exit come later it becomes an orphan exit */
		struct ct_event ev = q_at(t, 0)->ev;
		if (!q_at(t, 0)->done)
			ev.exit_unknown = true;
		t->qhead = (t->qhead + 1) & (t->qcap - 1);
		t->qcount--;
		if ((r = deliver(t, &ev)) != 0)
			return r;
		if ((r = q_flush(t, false)) != 0)
			return r;
	}
	*slot = q_at(t, t->qcount++);
	return 0;
}

/* the pending entry for enter seq s (entries are sorted by seq), or NULL */
static struct ct_pend *q_find(struct ct_trace *t, uint64_t s)
{
	uint32_t lo = 0, hi = t->qcount;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct ct_pend *p = q_at(t, mid);
		if (p->ev.seq == s)
			return p;
		if (p->ev.seq < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* type and size are the validated copies: a live file may change under us */
static void fill_recv(struct ct_recv *rv, const struct cutrace_record *rec, unsigned type, uint32_t size)
{
	size_t off = sizeof *rec;

	rv->hdr = rec;
	rv->exit = NULL;
	if (type == CT_REC_EXIT) {
		rv->exit = (const struct cutrace_exit *)(const void *)(rec + 1);
		off += sizeof(struct cutrace_exit);
	}
	rv->fields = (const unsigned char *)rec + off;
	rv->fields_len = size - (uint32_t)off;
}

/* rec: the record in the file; h: its validated header, copied */
static int on_record(struct ct_trace *t, const struct cutrace_record *h, const struct cutrace_record *rec)
{
	struct ct_pend *p;
	struct ct_recv rv;
	int r;

	fill_recv(&rv, rec, h->type, h->size);
	if (h->type == CT_REC_ENTER || h->type == CT_REC_NOTE) {
		if ((r = q_reserve(t, &p)) != 0)
			return r;
		memset(p, 0, sizeof *p);
		p->ev.seq = h->seq;
		p->ev.call = h->call;
		p->ev.type = h->type;
		p->ev.tid = h->tid;
		p->ev.t_ns = h->t_ns;
		p->ev.has_enter = true;
		p->ev.flags = h->flags;
		p->ev.enter = rv;
		p->done = h->type == CT_REC_NOTE;
		return p->done ? q_flush(t, false) : 0;
	}
	/* an exit: pair it with a pending enter of the same call */
	uint64_t es = rv.exit->enter_seq;
	p = es < h->seq ? q_find(t, es) : NULL;
	if (p && !p->done && p->ev.type == CT_REC_ENTER && p->ev.call == h->call) {
		p->done = true;
		p->ev.has_exit = true;
		p->ev.exit = rv;
		p->ev.ret = rv.exit->ret;
		p->ev.err = rv.exit->err;
		p->ev.flags |= h->flags;
		p->ev.dur_ns = h->t_ns >= p->ev.t_ns ? h->t_ns - p->ev.t_ns : 0;
		return q_flush(t, false);
	}
	/* orphan: its enter was overwritten, given up, or never written */
	if ((r = q_reserve(t, &p)) != 0)
		return r;
	memset(p, 0, sizeof *p);
	p->done = true;
	p->ev.seq = h->seq;
	p->ev.call = h->call;
	p->ev.type = CT_REC_ENTER;
	p->ev.tid = h->tid;
	p->ev.t_ns = h->t_ns;
	p->ev.has_exit = true;
	p->ev.exit = rv;
	p->ev.ret = rv.exit->ret;
	p->ev.err = rv.exit->err;
	p->ev.flags = h->flags;
	return q_flush(t, false);
}

/*
 * Look at logical slot s (physical p, in the area ending at physical
 * area_end).  Returns the number of slots to advance (>= 1); *r gets the
 * callback's stop value.
 */
static uint64_t read_slot(struct ct_trace *t, uint64_t s, uint64_t p, uint64_t area_end, int *r)
{
	uint64_t tag = __atomic_load_n(&t->tags[p], __ATOMIC_ACQUIRE);
	const struct cutrace_record *rec;
	struct cutrace_record h;
	struct ct_recv rv;
	uint64_t n;
	uint32_t size;
	unsigned kind = CT_TAG_KIND(tag);

	*r = 0;
	if (CT_TAG_SEQ(tag) != (s & (UINT64_MAX >> 8)))
		return 1; /* stale slot, a continuation of an older record, garbage */
	if (kind == CT_TAG_BUSY) {
		t->stats.torn++;
		return 1;
	}
	if (kind != CT_TAG_HEAD)
		return 1; /* PAD, a stray CONT, EMPTY */
	rec = (const struct cutrace_record *)(const void *)(t->slots + p * SLOT);
	memcpy(&h, rec, sizeof h);
	size = h.size;
	if (h.seq != s || size < sizeof h || size > CUTRACE_MAX_RECORD) {
		t->stats.bad++;
		return 1;
	}
	n = (size + SLOT - 1) / SLOT;
	if (n > area_end - p || n > t->hdr.head - s) {
		t->stats.bad++;
		return 1;
	}
	for (uint64_t i = 1; i < n; i++)
		if (__atomic_load_n(&t->tags[p + i], __ATOMIC_RELAXED) != CT_TAG_MAKE(s, CT_TAG_CONT)) {
			t->stats.overwritten++;
			return 1;
		}
	if (h.type == CT_REC_EXIT && size < sizeof h + sizeof(struct cutrace_exit)) {
		t->stats.bad++;
		return n;
	}
	if (h.type != CT_REC_ENTER && h.type != CT_REC_EXIT && h.type != CT_REC_NOTE) {
		t->stats.records++; /* a record type from a newer minor version: skip it */
		if (p >= t->hdr.init_slots)
			t->stats.ring_records++;
		return n;
	}
	fill_recv(&rv, rec, h.type, size);
	if (!tlv_ok(rv.fields, rv.fields_len)) {
		t->stats.bad++;
		return n;
	}
	t->stats.records++;
	if (p >= t->hdr.init_slots)
		t->stats.ring_records++;
	*r = on_record(t, &h, rec);
	return n;
}

/* walk logical slots [from, to) of one area (they map to consecutive physical slots) */
static int walk(struct ct_trace *t, uint64_t from, uint64_t to)
{
	int r = 0;

	for (uint64_t s = from; s < to;) {
		uint64_t p = phys_of(t, s);
		uint64_t area_end = s < t->hdr.init_slots ? t->hdr.init_slots : t->nslots;
		drop_advance(t, p);
		s += read_slot(t, s, p, area_end, &r);
		if (r)
			return r;
	}
	return 0;
}

/*
 * Records the ring overwrote (format.h, "Counting"): 1.0 writers counted
 * them in header.dropped; 1.1 writers count their commits outside the init
 * area, and what the walk did not find of those was overwritten.  The
 * counters are read live, after the walk: in a file still being written a
 * record committed behind the walk counts as dropped.
 */
static uint64_t count_dropped(const struct ct_trace *t)
{
	const struct cutrace_header *h = &t->hdr;
	uint64_t sum = 0, found = t->stats.ring_records + t->stats.overwritten;

	if (!h->counters_n || h->counter_stride < 8 ||
	    h->counters_off < sizeof *h || h->counters_off > CUTRACE_HEADER_AREA ||
	    (uint64_t)h->counters_n * h->counter_stride > CUTRACE_HEADER_AREA - h->counters_off ||
	    h->counters_off + (uint64_t)h->counters_n * h->counter_stride > t->len)
		return h->dropped;
	for (uint32_t i = 0; i < h->counters_n; i++) {
		uint64_t v;
		memcpy(&v, t->base + h->counters_off + (uint64_t)i * h->counter_stride, sizeof v);
		sum += v;
	}
	return h->dropped + (sum > found ? sum - found : 0);
}

const struct ct_nv_devmap *ct_trace_devmap(const struct ct_trace *t)
{
	return t ? t->devmap : NULL;
}

int ct_trace_events(struct ct_trace *t, ct_event_cb cb, void *user)
{
	const struct cutrace_header *h = &t->hdr;
	uint64_t head = h->head, init_end, ring_from;
	int r;

	memset(&t->stats, 0, sizeof t->stats);
	t->cb = cb;
	t->user = user;
	t->qhead = t->qcount = 0;
	t->next_index = 0;
	t->drop_from = t->drop_next = 0;
	/* every pass starts from the context: no fd is known yet */
	if (!t->devmap)
		t->devmap = malloc(sizeof *t->devmap);
	if (t->devmap)
		ct_nv_devmap_init(t->devmap, t);

	/* the init area, then the ring from its oldest slot that can survive */
	init_end = head < h->init_slots ? head : h->init_slots;
	t->lost_below = head > h->init_slots && head - h->init_slots > h->ring_slots ? head - h->ring_slots : 0;
	r = walk(t, 0, init_end);
	if (!r && head > h->init_slots) {
		ring_from = head - h->init_slots > h->ring_slots ? head - h->ring_slots : h->init_slots;
		/* ring lap by lap: each piece maps to consecutive physical slots */
		for (uint64_t s = ring_from; !r && s < head;) {
			uint64_t off = (s - h->init_slots) % h->ring_slots;
			uint64_t piece = h->ring_slots - off;
			uint64_t end = head - s < piece ? head : s + piece;
			r = walk(t, s, end);
			s = end;
		}
	}
	if (!r)
		r = q_flush(t, true); /* what is left never returned */
	if (!r)
		r = order_flush(t);
	order_free(t);
	t->stats.dropped = count_dropped(t);
	t->order_off = false;
	drop_pages(t, 0, t->nslots);
	t->qcount = 0;
	free(t->q);
	t->q = NULL;
	t->qcap = 0;
	return r;
}

/* ---- FILE|DIR ------------------------------------------------------------------------------ */

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void ct_free_paths(char **paths, int n)
{
	if (!paths)
		return;
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a > b && !strcmp(s + a - b, suf);
}

struct path_vec {
	char **v;
	int n, cap;
};

/* take p (malloc'ed) into the vector; -1 (p freed) out of memory */
static int vec_take(struct path_vec *pv, char *p)
{
	if (pv->n == pv->cap) {
		int ncap = pv->cap ? pv->cap * 2 : 16;
		char **nv = realloc(pv->v, (size_t)ncap * sizeof *nv);
		if (!nv) {
			free(p);
			return -1;
		}
		pv->v = nv;
		pv->cap = ncap;
	}
	pv->v[pv->n++] = p;
	return 0;
}

#define CT_LIST_DEPTH_MAX 16

/* the *.cutrace files of dir (regular files, through symbolic links), and
 * with `recursive` those of its subdirectories (symbolic links to
 * directories are not followed: no loops); an unreadable subdirectory is
 * skipped with a warning.  -1 out of memory. */
static int list_dir(const char *dir, DIR *d, bool recursive, int depth, struct path_vec *pv)
{
	struct dirent *de;
	size_t dlen = strlen(dir);

	while ((de = readdir(d)) != NULL) {
		struct stat es;
		char *p;
		bool sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		sub = recursive && depth < CT_LIST_DEPTH_MAX &&
		      fstatat(dirfd(d), de->d_name, &es, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(es.st_mode);
		if (!sub && (!has_suffix(de->d_name, ".cutrace") ||
			     fstatat(dirfd(d), de->d_name, &es, 0) < 0 || !S_ISREG(es.st_mode)))
			continue;
		p = malloc(dlen + strlen(de->d_name) + 2);
		if (!p)
			return -1;
		sprintf(p, "%s%s%s", dir, dlen && dir[dlen - 1] == '/' ? "" : "/", de->d_name);
		if (!sub) {
			if (vec_take(pv, p) < 0)
				return -1;
			continue;
		}
		DIR *sd = opendir(p);
		int r = 0;
		if (sd) {
			r = list_dir(p, sd, recursive, depth + 1, pv);
			closedir(sd);
		} else {
			ct_warn("%s: %s (skipped)", p, strerror(errno));
		}
		free(p);
		if (r < 0)
			return -1;
	}
	return 0;
}

int ct_list_traces(const char *arg, char ***paths, char *err, size_t errlen)
{
	return ct_list_traces_ex(arg, false, paths, err, errlen);
}

int ct_list_traces_ex(const char *arg, bool recursive, char ***paths, char *err, size_t errlen)
{
	struct stat st;
	struct path_vec pv = { 0 };
	char *one;
	DIR *d;
	int r;

	*paths = NULL;
	if (stat(arg, &st) < 0)
		return fail(err, errlen, "%s: %s", arg, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		if (!(one = strdup(arg)) || vec_take(&pv, one) < 0)
			return fail(err, errlen, "out of memory");
		*paths = pv.v;
		return 1;
	}
	d = opendir(arg);
	if (!d)
		return fail(err, errlen, "%s: %s", arg, strerror(errno));
	r = list_dir(arg, d, recursive, 0, &pv);
	closedir(d);
	if (r < 0) {
		ct_free_paths(pv.v, pv.n);
		return fail(err, errlen, "out of memory");
	}
	if (pv.n == 0) {
		free(pv.v);
		return fail(err, errlen, "no trace files (*.cutrace) in %s%s", arg,
			    recursive ? " or its subdirectories" : "");
	}
	qsort(pv.v, (size_t)pv.n, sizeof *pv.v, path_cmp);
	*paths = pv.v;
	return pv.n;
}
