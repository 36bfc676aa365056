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

void ct_trace_close(struct ct_trace *t)
{
	ct_rec_memo_reset();
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
	ct_rec_memo_reset();
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
	ct_rec_memo_reset();
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
