/*
 * Opening a trace file (trace.h): the header is validated field by field
 * before anything else is touched (format: shim/include/cutrace/format.h),
 * then the file is mapped read-only; its context fields (command line,
 * environment, driver version) are read from here.
 *
 * The file is untrusted: any header field may be garbage.  Every offset and
 * count is checked against the real file size, and the header is copied
 * once (a live process may still write the file).
 */
#include "read_int.h"
#include "version.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
 * Checks in the order the format promises (format.h): size,
 * magic, byte order, header size, version, word size, slot size, layout.
 */
static int validate(struct ct_trace *t, uint64_t actual, bool allow_short, char *err, size_t errlen)
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
	if (h->file_size > actual && (!allow_short || h->file_size > CT_SRC_MAX_BYTES))
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
	/* a short file (cut by a download, a full disk, a copy still running)
	 * is read as far as it goes; without its context it means nothing */
	if (actual < limit && actual < h->ctx_off + h->ctx_len)
		return fail(err, errlen,
			    "truncated: header says %llu bytes, file has %llu (the context area is cut)",
			    (unsigned long long)h->file_size, (unsigned long long)actual);
	t->len = limit;
	t->ctx_len = h->ctx_len;
	t->nslots = n;
	t->present = actual < limit ? actual : limit;
	return 0;
}

/* ---- context validation ------------------------------------------------------- */

/*
 * What each context key may hold (format.h, "Context"): the most bytes the
 * shim writes into it, and what its bytes must be.  TEXT: text the kernel or
 * the driver wrote (uname, the NVIDIA version lines, /proc/devices): UTF-8,
 * no control characters but tab and newline.  NAME: a path, a variable, a
 * rule, a note: any bytes but NUL (not always UTF-8 on Linux; show escapes
 * them).  BYTES: anything (the NUL-separated command line, a file's text).
 * U32: exactly four bytes.  Positional: one row per CT_CTX_* value.
 */
enum ctx_kind {
	CK_NONE,
	CK_TEXT,
	CK_NAME,
	CK_BYTES,
	CK_U32
};
static const struct {
	const char *name;
	unsigned char kind;
	uint16_t max;
} ctx_keys[] = {
	{ NULL, CK_NONE, 0 },                 /* 0: never written */
	{ "exe", CK_NAME, 4096 },             /* CT_CTX_EXE */
	{ "command line", CK_BYTES, 4608 },   /* CT_CTX_CMDLINE (redacted: grows a little) */
	{ "host", CK_TEXT, 65 },              /* CT_CTX_HOST */
	{ "kernel", CK_TEXT, 65 },            /* CT_CTX_KERNEL */
	{ "nvidia version", CK_TEXT, 1024 },  /* CT_CTX_NV_VERSION */
	{ "module version", CK_TEXT, 256 },   /* CT_CTX_NV_MODVERSION */
	{ "environment", CK_NAME, 4608 },     /* CT_CTX_ENV */
	{ "devices", CK_TEXT, 128 },          /* CT_CTX_DEVICES */
	{ "cwd", CK_NAME, 4096 },             /* CT_CTX_CWD */
	{ "machine", CK_TEXT, 65 },           /* CT_CTX_MACHINE */
	{ "inject rules", CK_NAME, 2048 },    /* CT_CTX_INJECT */
	{ "command line length", CK_U32, 4 }, /* CT_CTX_CMDLINE_LEN */
	{ "note", CK_NAME, 512 },             /* CT_CTX_NOTE */
	{ "loader", CK_NAME, 256 },           /* CT_CTX_INTERP */
	{ "ld.so.conf.d", CK_NAME, 512 },     /* CT_CTX_LDCONF */
	{ "ld.so.preload", CK_BYTES, 1024 },  /* CT_CTX_PRELOAD_FILE */
};
_Static_assert(sizeof ctx_keys / sizeof ctx_keys[0] == CT_CTX__COUNT,
	       "a new CT_CTX_* key needs its row in ctx_keys");

/* bytes of p that are not well-formed UTF-8 text: the offset of the first
 * bad one, or n */
static size_t text_bad_at(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned c = p[i], need, min;
		uint32_t cp;
		if (c < 0x80) {
			if (c < 0x20 && c != '\t' && c != '\n')
				return i;
			if (c == 0x7f)
				return i;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, min = 0x80, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, min = 0x800, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, min = 0x10000, cp = c & 0x07;
		else
			return i;
		if (n - i - 1 < need)
			return i;
		for (unsigned k = 1; k <= need; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return i;
			cp = cp << 6 | (p[i + k] & 0x3fu);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += need + 1;
	}
	return n;
}

/*
 * The context area is untrusted like the rest: a field running past the
 * written length, a key this format version does not have, a length over
 * what the shim ever writes, bytes a key cannot hold.  The first damaged
 * field and everything after it are dropped (t->ctx_len stops there: look-ups
 * see only the fields before it) and the damage is said (ct_trace_damage).
 * Keys unknown to this cutrace in a file of a newer minor version are not
 * damage: they are kept and listed (ct_trace_ctx_unknown).
 */
static void ctx_check(struct ct_trace *t)
{
	const unsigned char *p = t->ctx;
	size_t len = t->ctx_len, at = 0;
	bool newer = t->hdr.version_minor > CUTRACE_VERSION_MINOR;

	while (at < len) {
		struct cutrace_field f;
		const char *what = NULL, *name;
		size_t bad;
		if (len - at < sizeof f) {
			what = "bytes after the last field";
			goto damaged;
		}
		memcpy(&f, p + at, sizeof f);
		if (f.len > len - at - sizeof f) {
			snprintf(t->ctx_why, sizeof t->ctx_why,
				 "a field at byte %zu (key %u) says %u bytes, past the %zu written", at,
				 f.tag, f.len, len);
			goto cut;
		}
		if (f.tag >= CT_CTX__COUNT && newer) {
			at += sizeof f + CT_FIELD_PAD(f.len);
			continue;
		}
		if (f.tag == 0 || f.tag >= CT_CTX__COUNT) {
			snprintf(t->ctx_why, sizeof t->ctx_why,
				 "unknown key %u at byte %zu (a format %u.%u file has keys 1-%u)", f.tag, at,
				 t->hdr.version_major, t->hdr.version_minor, (unsigned)CT_CTX__COUNT - 1);
			goto cut;
		}
		name = ctx_keys[f.tag].name;
		if (f.len > ctx_keys[f.tag].max) {
			snprintf(t->ctx_why, sizeof t->ctx_why,
				 "the %s field at byte %zu is %u bytes (at most %u)", name, at, f.len,
				 ctx_keys[f.tag].max);
			goto cut;
		}
		switch (ctx_keys[f.tag].kind) {
		case CK_U32:
			if (f.len != 4) {
				snprintf(t->ctx_why, sizeof t->ctx_why,
					 "the %s field at byte %zu is %u bytes (not 4)", name, at, f.len);
				goto cut;
			}
			break;
		case CK_TEXT:
			bad = text_bad_at(p + at + sizeof f, f.len);
			if (bad < f.len) {
				snprintf(t->ctx_why, sizeof t->ctx_why,
					 "the %s field at byte %zu is not UTF-8 text (byte 0x%02x at %zu)",
					 name, at, p[at + sizeof f + bad], bad);
				goto cut;
			}
			break;
		case CK_NAME:
			if (memchr(p + at + sizeof f, 0, f.len)) {
				snprintf(t->ctx_why, sizeof t->ctx_why,
					 "the %s field at byte %zu holds a NUL byte", name, at);
				goto cut;
			}
			break;
		default: break;
		}
		at += sizeof f + CT_FIELD_PAD(f.len);
		continue;
damaged:
		snprintf(t->ctx_why, sizeof t->ctx_why, "%s (byte %zu of %zu)", what, at, len);
cut:
		t->ctx_bad = true;
		t->ctx_len = at;
		return;
	}
}

/* point the area pointers into the validated bytes at base */
static void attach(struct ct_trace *t, unsigned char *base);

/* ---- the written part, read into one reused buffer (ct_trace_open_used) ---------- */

/*
 * Mapping a file and unmapping it again costs a TLB shootdown each time (in
 * a virtual machine, a hypercall): with thousands of small traces that is
 * most of a job summary's time.  One anonymous buffer as long as the largest
 * file seen (MAP_NORESERVE: only the pages read into become memory) takes
 * the written part of each file in turn; what was read is cleared again
 * when the trace is closed, so the rest always reads as zeros.
 */
static struct {
	unsigned char *base;
	size_t cap;
	bool busy;
	struct {
		uint64_t off, len;
	} dirty[4];
	unsigned ndirty;
} used_buf;

static void used_release(void)
{
	for (unsigned i = 0; i < used_buf.ndirty; i++)
		memset(used_buf.base + used_buf.dirty[i].off, 0, (size_t)used_buf.dirty[i].len);
	used_buf.ndirty = 0;
	used_buf.busy = false;
}

/* 0: t reads the written part of fd from the buffer; 1: not for this file
 * (too much written, buffer in use, a read came short): map it instead */
static int open_used(struct ct_trace *t, int fd)
{
	const struct cutrace_header *h = &t->hdr;
	uint64_t used = h->head < t->nslots ? h->head : t->nslots, total = 0;
	uint64_t ext[4][2] = {
		{ 0, t->len < CUTRACE_HEADER_AREA ? t->len : CUTRACE_HEADER_AREA },
		{ h->ctx_off, h->ctx_len },
		{ h->tags_off, used * 8 },
		{ h->slots_off, used * SLOT },
	};

	if (used_buf.busy || t->present < t->len || t->len > CT_SRC_MAX_BYTES)
		return 1;
	for (unsigned i = 0; i < 4; i++)
		total += ext[i][1];
	if (total > CT_TRACE_USED_MAX)
		return 1;
	if (t->len > used_buf.cap) {
		long pg = sysconf(_SC_PAGESIZE);
		size_t cap = ((size_t)t->len + (size_t)pg - 1) & ~((size_t)pg - 1);
		void *m = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);
		if (m == MAP_FAILED)
			return 1;
		if (used_buf.base)
			munmap(used_buf.base, used_buf.cap);
		used_buf.base = m;
		used_buf.cap = cap;
	}
	used_buf.busy = true;
	for (unsigned i = 0; i < 4; i++) {
		uint64_t off = 0;
		used_buf.dirty[used_buf.ndirty].off = ext[i][0];
		used_buf.dirty[used_buf.ndirty++].len = ext[i][1];
		while (off < ext[i][1]) {
			ssize_t r = pread(fd, used_buf.base + ext[i][0] + off, (size_t)(ext[i][1] - off),
					  (off_t)(ext[i][0] + off));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				used_release(); /* the file shrank: the mapping says how */
				return 1;
			}
			off += (uint64_t)r;
		}
	}
	t->used_only = true;
	attach(t, used_buf.base);
	return 0;
}

static void attach(struct ct_trace *t, unsigned char *base)
{
	t->base = base;
	t->ctx = base + t->hdr.ctx_off;
	t->tags = (const uint64_t *)(const void *)(base + t->hdr.tags_off);
	t->slots = base + t->hdr.slots_off;
	ctx_check(t);
}

static struct ct_trace *trace_new(const char *path)
{
	struct ct_trace *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	t->guard = -1;
	t->path = strdup(path ? path : "(memory)");
	if (!t->path) {
		free(t);
		return NULL;
	}
	return t;
}

void ct_trace_close(struct ct_trace *t)
{
	ct_rec_memo_reset();
	if (!t)
		return;
	if (t->mapped) {
		ct_guard_del(t->guard);
		munmap(t->base, t->len);
	}
	if (t->used_only)
		used_release();
	ct_blob_free(&t->blob);
	free(t->q);
	free(t->devmap);
	free(t->path);
	free(t);
}

/*
 * Slots whose bytes lie past the end of a short file: their tags are
 * cleared (the slots read as empty) and the records they held counted as
 * missing, so a truncated trace decodes what is intact and says the rest.
 */
static void clear_missing(struct ct_trace *t)
{
	uint64_t *tags = (uint64_t *)(void *)(t->base + t->hdr.tags_off);

	uint64_t used = t->hdr.head < t->nslots ? t->hdr.head : t->nslots;

	if (t->present >= t->len)
		return;
	for (uint64_t p = 0; p < t->nslots; p++) {
		uint64_t end = t->hdr.slots_off + (p + 1) * SLOT;
		/* a tag that is itself past the end reads as 0: of a slot
		 * written to, it is not known whether it held a record's head */
		if (p < used && t->hdr.tags_off + (p + 1) * sizeof *tags > t->present) {
			t->missing_unknown++;
			tags[p] = 0;
			continue;
		}
		if (end <= t->present || !tags[p])
			continue;
		if (CT_TAG_KIND(tags[p]) == CT_TAG_HEAD) {
			t->missing_records++;
			if (p >= t->hdr.init_slots)
				t->missing_ring++;
		}
		tags[p] = 0;
	}
}

/*
 * A trace over the sparse buffer b (taken over: freed with the trace).
 * full > b->len: the bytes past b->len are known zeros (a packed member),
 * not missing.
 */
static int open_blob(struct ct_trace *t, struct ct_blob *b, uint64_t full, char *err, size_t errlen)
{
	uint64_t present = b->len;

	t->blob = *b;
	memset(b, 0, sizeof *b);
	if (t->blob.len >= sizeof t->hdr)
		memcpy(&t->hdr, t->blob.base, sizeof t->hdr);
	else if (t->blob.len)
		memcpy(&t->hdr, t->blob.base, t->blob.len);
	if (full > present && t->hdr.file_size <= full)
		present = full;
	if (validate(t, present, true, err, errlen) < 0)
		return -1;
	if (ct_blob_reserve(&t->blob, t->len) < 0)
		return fail(err, errlen, "out of memory for %llu bytes", (unsigned long long)t->len);
	attach(t, t->blob.base);
	if (t->present < t->len && full <= t->blob.len)
		clear_missing(t);
	else
		t->present = t->len;
	return 0;
}

/* a compressed file, or bytes kept by name: decompressed or copied into a
 * buffer of the trace's own */
static int open_data(struct ct_trace *t, const unsigned char *p, size_t n, uint64_t full, char *err,
		     size_t errlen)
{
	struct ct_blob b = { 0 };
	enum ct_comp comp = ct_comp_sniff(p, n);

	if (comp != CT_COMP_NONE) {
		int r = ct_src_decompress_mem(p, n, comp, &b, err, errlen);
		if (r < 0) {
			ct_blob_free(&b);
			return -1;
		}
		full = 0;
	} else if (ct_blob_append(&b, p, n) < 0) {
		ct_blob_free(&b);
		return fail(err, errlen, "out of memory");
	}
	if (ct_tar_sniff(b.base, b.len)) {
		ct_blob_free(&b);
		return fail(err, errlen,
			    "a tar bundle of traces: name it to cutrace show, which lists its traces");
	}
	return open_blob(t, &b, full, err, errlen);
}

static int open_fd(struct ct_trace *t, const char *path, int fd, bool stream, bool used, char *err,
		   size_t errlen)
{
	unsigned char first[sizeof t->hdr];
	struct stat st;
	struct ct_blob b = { 0 };
	ssize_t got;

	if (stream) {
		/* a pipe is read once: kept under its name for a second look */
		if (ct_src_spool(fd, &b, err, errlen) < 0) {
			ct_blob_free(&b);
			return -1;
		}
		if (ct_src_add(path, b.base, b.len, 0) < 0) {
			ct_blob_free(&b);
			return fail(err, errlen, "out of memory");
		}
		return open_data(t, b.base, b.len, 0, err, errlen);
	}
	if (fstat(fd, &st) < 0)
		return fail(err, errlen, "%s", strerror(errno));
	got = pread(fd, first, sizeof first, 0);
	if (got < 0)
		return fail(err, errlen, "%s", strerror(errno));
	enum ct_comp comp = ct_comp_sniff(first, (size_t)got);
	if (comp != CT_COMP_NONE) {
		if (ct_src_decompress_fd(fd, comp, &b, err, errlen) < 0) {
			ct_blob_free(&b);
			return -1;
		}
		if (ct_tar_sniff(b.base, b.len)) {
			ct_blob_free(&b);
			return fail(err, errlen,
				    "a tar bundle of traces: name it to cutrace show, which lists its traces");
		}
		return open_blob(t, &b, 0, err, errlen);
	}
	if (ct_tar_sniff(first, (size_t)got))
		return fail(err, errlen,
			    "a tar bundle of traces: name it to cutrace show, which lists its traces");
	memcpy(&t->hdr, first, (size_t)got);
	if ((size_t)got < sizeof t->hdr)
		memset((char *)&t->hdr + got, 0, sizeof t->hdr - (size_t)got);
	if (validate(t, (uint64_t)st.st_size, true, err, errlen) < 0)
		return -1;
	if (t->present < t->len) {
		/* a short file: what is there, read (not mapped) into a buffer
		 * as long as the header says, the rest counted missing */
		unsigned char *buf = malloc(1u << 20);
		uint64_t off = 0;
		if (!buf)
			return fail(err, errlen, "out of memory");
		while (off < t->present) {
			size_t want = t->present - off < (1u << 20) ? (size_t)(t->present - off) : (1u << 20);
			ssize_t r = pread(fd, buf, want, (off_t)off);
			if (r <= 0)
				break;
			if (ct_blob_append(&b, buf, (size_t)r) < 0)
				break;
			off += (uint64_t)r;
		}
		free(buf);
		return open_blob(t, &b, 0, err, errlen);
	}
	if (used && open_used(t, fd) == 0)
		return 0;
	if (t->len != (uint64_t)(size_t)t->len)
		return fail(err, errlen, "file too large to map");
	void *m = mmap(NULL, t->len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return fail(err, errlen, "cannot map the file: %s", strerror(errno));
	t->mapped = true;
	/* a file that shrinks while it is read reads as zeros, not SIGBUS */
	t->guard = ct_guard_add(m, t->len);
	attach(t, m);
	return 0;
}

static int trace_open(const char *path, bool used, struct ct_trace **out, char *err, size_t errlen)
{
	ct_rec_memo_reset();
	struct ct_src_ent e;
	struct ct_trace *t;
	bool stream;
	int fd, r;

	*out = NULL;
	t = trace_new(path);
	if (!t)
		return fail(err, errlen, "out of memory");
	if (ct_src_find(path, &e)) {
		r = e.data ? open_data(t, e.data, e.len, e.full, err, errlen)
			   : fail(err, errlen, "a tar bundle of traces: cutrace show lists them");
	} else if ((r = ct_src_open(path, &fd, &stream, err, errlen)) == 0) {
		r = open_fd(t, path, fd, stream, used, err, errlen);
		close(fd);
	}
	if (r < 0) {
		ct_trace_close(t);
		return -1;
	}
	*out = t;
	return 0;
}

int ct_trace_open(const char *path, struct ct_trace **out, char *err, size_t errlen)
{
	return trace_open(path, false, out, err, errlen);
}

int ct_trace_open_used(const char *path, struct ct_trace **out, char *err, size_t errlen)
{
	return trace_open(path, true, out, err, errlen);
}

int ct_trace_open_mem(const void *buf, size_t len, struct ct_trace **out, char *err, size_t errlen)
{
	ct_rec_memo_reset();
	struct ct_trace *t;
	struct ct_blob b = { 0 };

	*out = NULL;
	t = trace_new(NULL);
	if (!t)
		return fail(err, errlen, "out of memory");
	if (ct_blob_append(&b, buf, len) < 0) {
		ct_trace_close(t);
		return fail(err, errlen, "out of memory");
	}
	if (open_blob(t, &b, 0, err, errlen) < 0) {
		ct_trace_close(t);
		return -1;
	}
	*out = t;
	return 0;
}

const char *ct_trace_path(const struct ct_trace *t) { return t->path; }

bool ct_trace_degraded(const struct ct_trace *t)
{
	return (t->hdr.flags & CT_HF_DEGRADED) || t->present < t->len || t->ctx_bad ||
	       ct_guard_hit(t->guard, t->base) != UINT64_MAX;
}

const char *ct_trace_damage(const struct ct_trace *t, char *buf, size_t len)
{
	uint64_t shrank = t->mapped ? ct_guard_hit(t->guard, t->base) : UINT64_MAX;
	size_t n = 0;

	buf[0] = 0;
	if (t->present < t->len) {
		uint64_t init_end = t->hdr.slots_off + t->hdr.init_slots * SLOT;
		n += (size_t)snprintf(buf + n, len - n, "truncated: %llu of %llu bytes present, ",
				      (unsigned long long)t->present, (unsigned long long)t->len);
		if (!t->missing_records && !t->missing_unknown)
			/* cut where nothing was written yet */
			n += (size_t)snprintf(buf + n, len - n,
					      "no record missing (every slot written lies before the cut)");
		else if (t->missing_unknown)
			n += (size_t)
				snprintf(buf + n, len - n,
					 "%llu records past the end missing and the tags of %llu more written "
					 "slots (the tag area is cut: how many records they held is unknown)",
					 (unsigned long long)t->missing_records,
					 (unsigned long long)t->missing_unknown);
		else
			n += (size_t)snprintf(buf + n, len - n, "%llu records past the end missing (%s)",
					      (unsigned long long)t->missing_records,
					      t->present >= init_end
						      ? "the init area is intact, the ring is cut"
						      : "the init area is cut");
	}
	if (shrank != UINT64_MAX && n < len)
		n += (size_t)snprintf(buf + n, len - n,
				      "%sthe file shrank while it was read: bytes from %llu on read as zeros",
				      n ? "; " : "", (unsigned long long)shrank);
	if (t->ctx_bad && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%sthe context area is damaged: %s", n ? "; " : "",
				      t->ctx_why);
	return n ? buf : NULL;
}
const struct cutrace_header *ct_trace_header(const struct ct_trace *t) { return &t->hdr; }
const struct ct_trace_stats *ct_trace_stats(const struct ct_trace *t) { return &t->stats; }

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

const unsigned char *ct_trace_ctx_unknown(const struct ct_trace *t, unsigned idx, uint16_t *tag,
					  uint16_t *len)
{
	struct ct_fieldv f;
	uint32_t pos = 0;

	while (tlv_next(t->ctx, t->ctx_len, &pos, &f)) {
		if (f.tag < CT_CTX__COUNT || idx-- != 0)
			continue;
		*tag = f.tag;
		*len = f.len;
		return f.data;
	}
	return NULL;
}

bool ct_trace_incomplete(const struct ct_trace *t)
{
	return t->missing_records || t->missing_unknown;
}

bool ct_trace_ctx_damaged(const struct ct_trace *t)
{
	return t->ctx_bad;
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

/* ---- the written part of a trace (cutrace pack) ------------------------------------- */

const unsigned char *ct_trace_written(const struct ct_trace *t, size_t *len)
{
	/* slots are reserved in order (header.head), so a file's unwritten
	 * part is its tail: the slots past head, zeros since the file was
	 * preallocated.  The bytes are checked, not the header believed: the
	 * end is the last page holding a non-zero byte */
	size_t end = (size_t)t->len;

	while (end > 0) {
		size_t from = end > 4096 ? end - 4096 : 0;
		const unsigned char *p = t->base + from;
		size_t n = end - from, i = n;
		while (i > 0 && !p[i - 1])
			i--;
		if (i) {
			end = from + i;
			break;
		}
		end = from;
	}
	*len = end;
	return t->base;
}
