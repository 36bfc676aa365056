/*
 * ct_mkbad DIR: write hostile trace files into DIR, one per problem, and a
 * manifest DIR/MANIFEST with one line per file:
 *
 *   NAME <TAB> EXIT <TAB> TEXT
 *
 * EXIT is what `cutrace show FILE` must exit with: 2 for a file it must
 * refuse (TEXT is then a piece of the one-line error it must print), "ok"
 * for a file that is readable but damaged inside (show must not crash, must
 * not exit 2; TEXT is a JSON stats key that must be non-zero, or "-").
 *
 * Every file starts from one valid trace built with the real ring writer
 * (context, an open, an ioctl with a parameter block, a note), then one
 * thing is broken.  Offsets come from format.h (its static asserts pin them).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ring.h"

#define BASE_SIZE (64u * 1024u)
#define CTX_CAP   4096u

static const char *dir;
static FILE *manifest;

struct img {
	unsigned char *p;
	size_t len;
	struct ct_ring ring;
};

static struct cutrace_header *H(struct img *m) { return (struct cutrace_header *)(void *)m->p; }

static void put_ctx(unsigned char **c, uint16_t tag, const char *s)
{
	*c = ct_put_field(*c, tag, s, (uint16_t)strlen(s));
}

/* reserve + fill + commit one record; returns its seq */
static uint64_t rec(struct img *m, unsigned type, unsigned call, const unsigned char *fields,
		    uint32_t flen, const struct cutrace_exit *x, bool commit)
{
	uint32_t size = (uint32_t)sizeof(struct cutrace_record) + (x ? (uint32_t)sizeof *x : 0) + flen;
	struct ct_slot s;

	if (ct_ring_reserve(&m->ring, size, &s) < 0) {
		fprintf(stderr, "ct_mkbad: ring full\n");
		exit(1);
	}
	s.rec->t_ns = 1000 + s.seq * 10;
	s.rec->type = (uint16_t)type;
	s.rec->call = (uint16_t)call;
	s.rec->tid = 77;
	s.rec->flags = 0;
	unsigned char *p = (unsigned char *)(s.rec + 1);
	if (x) {
		memcpy(p, x, sizeof *x);
		p += sizeof *x;
	}
	memcpy(p, fields, flen);
	if (commit)
		ct_ring_commit(&m->ring, &s);
	return s.seq;
}

static void base(struct img *m, size_t size)
{
	unsigned char f[512], *q;
	uint32_t u;
	uint64_t v, e;

	m->len = size;
	m->p = calloc(1, size);
	if (!m->p)
		exit(1);
	struct cutrace_header *h = H(m);
	if (ct_ring_layout(h, size, CTX_CAP) < 0)
		exit(1);
	h->endian = CUTRACE_ENDIAN_PROBE;
	h->version_major = CUTRACE_VERSION_MAJOR;
	h->version_minor = CUTRACE_VERSION_MINOR;
	h->header_size = sizeof *h;
	h->slot_size = CUTRACE_SLOT_SIZE;
	h->word_size = 8;
	h->pid = 4242;
	h->ppid = 1;
	h->start_mono_ns = 1000;
	h->writer_version = 100;
	q = m->p + h->ctx_off;
	put_ctx(&q, CT_CTX_EXE, "/usr/bin/hostile");
	put_ctx(&q, CT_CTX_HOST, "fuzzhost");
	put_ctx(&q, CT_CTX_NV_VERSION, "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build\n");
	put_ctx(&q, CT_CTX_ENV, "CUDA_VISIBLE_DEVICES=0");
	h->ctx_len = (uint64_t)(q - (m->p + h->ctx_off));
	ct_ring_attach(&m->ring, m->p);

	/* open("/dev/nvidiactl") = 3 */
	q = ct_put_field(f, CT_FLD_PATH, "/dev/nvidiactl", 14);
	u = 2; q = ct_put_field(q, CT_FLD_OFLAGS, &u, 4);
	u = (uint32_t)CT_NODE_CTL << 16 | 255; q = ct_put_field(q, CT_FLD_NODE, &u, 4);
	e = rec(m, CT_REC_ENTER, CT_CALL_openat, f, (uint32_t)(q - f), NULL, true);
	struct cutrace_exit x = { e, 3, 0, 0 };
	q = ct_put_field(f, CT_FLD_NODE, &u, 4);
	v = (195ull << 32) | 255; q = ct_put_field(q, CT_FLD_RDEV, &v, 8);
	rec(m, CT_REC_EXIT, CT_CALL_openat, f, (uint32_t)(q - f), &x, true);

	/* ioctl(3, RM_CONTROL) with a 32-byte block */
	unsigned char blk[32] = { 1, 0, 0, 0xc1, 2, 0, 0, 0xc1, 0x01, 0x01, 0, 0 };
	q = ct_put_field(f, CT_FLD_FD, (int32_t[]){ 3 }, 4);
	q = ct_put_field(q, CT_FLD_NODE, &u, 4);
	v = 0xc020462a; q = ct_put_field(q, CT_FLD_REQUEST, &v, 8);
	v = 0x7ffc0000; q = ct_put_field(q, CT_FLD_ARGP, &v, 8);
	q = ct_put_field(q, CT_FLD_BLOCK_SIZE, (uint32_t[]){ 32 }, 4);
	q = ct_put_field(q, CT_FLD_BLOCK, blk, sizeof blk);
	e = rec(m, CT_REC_ENTER, CT_CALL_ioctl, f, (uint32_t)(q - f), NULL, true);
	x.enter_seq = e;
	x.ret = 0;
	q = ct_put_field(f, CT_FLD_BLOCK, blk, sizeof blk);
	rec(m, CT_REC_EXIT, CT_CALL_ioctl, f, (uint32_t)(q - f), &x, true);

	/* a note */
	q = ct_put_field(f, CT_FLD_TEXT, "hello", 5);
	rec(m, CT_REC_NOTE, CT_CALL_cutrace_note, f, (uint32_t)(q - f), NULL, true);
	memcpy(h->magic, CUTRACE_MAGIC, 8);
}

static void emit(const char *name, const void *p, size_t len, const char *exitc, const char *text)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/%s.cutrace", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || (len && write(fd, p, len) != (ssize_t)len) || close(fd) < 0) {
		fprintf(stderr, "ct_mkbad: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fprintf(manifest, "%s\t%s\t%s\n", name, exitc, text);
}

/* a fresh base image with one header field changed */
#define HDR_CASE(name, stmt, text)                         \
	do {                                               \
		struct img m_;                             \
		base(&m_, BASE_SIZE);                      \
		struct cutrace_header *h_ = H(&m_);        \
		stmt;                                      \
		emit(name, m_.p, m_.len, "2", text);       \
		free(m_.p);                                \
	} while (0)

/* the first record header of the ring's init area (seq 0) */
static struct cutrace_record *rec0(struct img *m)
{
	return (struct cutrace_record *)(void *)(m->p + H(m)->slots_off);
}

static void header_cases(void)
{
	struct img m;
	char junk[4096];

	base(&m, BASE_SIZE);
	emit("valid", m.p, m.len, "ok", "-");
	emit("empty", "", 0, "2", "empty file");
	emit("short-header", m.p, 100, "2", "too small for a cutrace header");
	/* a short file decodes what is there and says what is missing */
	emit("truncated-half", m.p, m.len / 2, "ok", "-");
	emit("header-only", m.p, 4096, "2", "truncated");
	free(m.p);

	memset(junk, 0, sizeof junk);
	memcpy(junk, "\177ELF\2\1\1", 7);
	emit("foreign-elf", junk, sizeof junk, "2", "bad magic");
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = "cutrace is not this file\n"[i % 25];
	emit("foreign-text", junk, sizeof junk, "2", "bad magic");

	HDR_CASE("wrong-endian", h_->endian = __builtin_bswap32(CUTRACE_ENDIAN_PROBE), "other byte order");
	HDR_CASE("bad-endian-probe", h_->endian = 0xdeadbeef, "byte-order probe");
	HDR_CASE("future-version", h_->version_major = CUTRACE_VERSION_MAJOR + 1, "newer than this cutrace");
	HDR_CASE("old-version", h_->version_major = 0, "not supported");
	HDR_CASE("header-size-huge", h_->header_size = 1u << 30, "header size");
	HDR_CASE("header-size-small", h_->header_size = 8, "header size");
	HDR_CASE("word-size", h_->word_size = 3, "word size");
	HDR_CASE("slot-size", h_->slot_size = 128, "slot size");
	HDR_CASE("file-size-huge", h_->file_size = 1ull << 62, "truncated");
	HDR_CASE("ring-slots-huge", h_->ring_slots = 1ull << 60, "too large");
	HDR_CASE("slots-overflow", (h_->init_slots = UINT64_MAX, h_->ring_slots = 2), "too large");
	HDR_CASE("ring-slots-zero", h_->ring_slots = 0, "no ring slots");
	HDR_CASE("ctx-outside", h_->ctx_off = 1ull << 40, "context area ends past the file");
	HDR_CASE("ctx-wrap", (h_->ctx_off = 4096, h_->ctx_cap = UINT64_MAX - 100), "context area ends past the file");
	HDR_CASE("ctx-in-header", h_->ctx_off = 16, "context area starts inside the header");
	HDR_CASE("ctx-len-huge", h_->ctx_len = h_->ctx_cap + 1, "context length");
	HDR_CASE("tags-misaligned", h_->tags_off += 3, "misaligned");
	HDR_CASE("tags-outside", (h_->tags_off = BASE_SIZE - 8, h_->slots_off = BASE_SIZE), "past the file");
	HDR_CASE("tags-overlap-ctx", h_->tags_off = h_->ctx_off, "overlaps the context");
	HDR_CASE("slots-outside", h_->slots_off = 1ull << 41, "slot area ends past the file");
	HDR_CASE("slots-overlap-tags", h_->slots_off = h_->tags_off, "overlaps the tags");
	HDR_CASE("magic-unfinished", memset(h_->magic, 0, 8), "never completed");
}

#define REC_CASE(name, stmt, key)                          \
	do {                                               \
		struct img m_;                             \
		base(&m_, BASE_SIZE);                      \
		struct cutrace_header *h_ = H(&m_);        \
		struct cutrace_record *r_ = rec0(&m_);     \
		(void)h_;                                  \
		(void)r_;                                  \
		stmt;                                      \
		emit(name, m_.p, m_.len, "ok", key);       \
		free(m_.p);                                \
	} while (0)

static void record_cases(void)
{
	REC_CASE("rec-size-zero", r_->size = 0, "malformed");
	REC_CASE("rec-size-max", r_->size = UINT32_MAX, "malformed");
	REC_CASE("rec-size-past-area", r_->size = CUTRACE_MAX_RECORD, "malformed");
	REC_CASE("rec-seq-mismatch", r_->seq = 12345, "malformed");
	REC_CASE("rec-type-unknown", r_->type = 999, "-");
	REC_CASE("rec-call-unknown", r_->call = 60000, "-");
	/* the first field of record 0 claims more bytes than the record has */
	REC_CASE("field-len-past-record", ((struct cutrace_field *)(void *)(r_ + 1))->len = 0xffff, "malformed");
	/* an exit record too short to hold struct cutrace_exit: shrink seq 1 */
	REC_CASE("exit-too-short", ({
		struct cutrace_record *r1 = (struct cutrace_record *)(void *)((unsigned char *)r_ + CUTRACE_SLOT_SIZE);
		if (r1->type != CT_REC_EXIT) { /* the open's enter takes two slots */
			r1 = (struct cutrace_record *)(void *)((unsigned char *)r_ + 2 * CUTRACE_SLOT_SIZE);
		}
		r1->size = sizeof(struct cutrace_record) + 4;
	}), "malformed");
	REC_CASE("exit-enter-seq-future", ({
		for (uint64_t s = 0; s < h_->head; s++) {
			struct cutrace_record *r = (struct cutrace_record *)(void *)(m_.p + h_->slots_off + s * CUTRACE_SLOT_SIZE);
			uint64_t tag = ((uint64_t *)(void *)(m_.p + h_->tags_off))[s];
			if (CT_TAG_KIND(tag) == CT_TAG_HEAD && r->type == CT_REC_EXIT)
				((struct cutrace_exit *)(void *)(r + 1))->enter_seq = UINT64_MAX;
		}
	}), "orphan_exits");
	REC_CASE("head-huge", h_->head = UINT64_MAX - 5, "-");
	REC_CASE("head-past-init", h_->head = h_->init_slots + 3 * h_->ring_slots + 7, "-");
	REC_CASE("tags-garbage", memset(m_.p + h_->tags_off, 0xa5, (size_t)(h_->init_slots + h_->ring_slots) * 8), "-");
	REC_CASE("slots-garbage", memset(m_.p + h_->slots_off, 0x5a, (size_t)(h_->init_slots + h_->ring_slots) * CUTRACE_SLOT_SIZE), "-");
	REC_CASE("ctx-field-past-end", ({
			 struct cutrace_field *f = (struct cutrace_field *)(void *)(m_.p + h_->ctx_off);
			 f->len = 0xfff0;
		 }),
		 "damage");
	/* the context area overwritten (a fixed generator: the same bytes each build) */
	REC_CASE("ctx-garbage", ({
			 uint32_t x = 2463534242u;
			 for (uint64_t i = 0; i < h_->ctx_len; i++) {
				 x ^= x << 13, x ^= x >> 17, x ^= x << 5;
				 m_.p[h_->ctx_off + i] = (unsigned char)x;
			 }
		 }),
		 "damage");
	/* the host name (field 1, after the 16-byte exe) is not UTF-8 */
	REC_CASE("ctx-host-not-utf8", m_.p[h_->ctx_off + 20 + 4] = 0xff, "damage");
	REC_CASE("ctx-unknown-key", ((struct cutrace_field *)(void *)(m_.p + h_->ctx_off))->tag = 999,
		 "damage");
	/* the same key in a file of a newer minor version: kept, not damage */
	REC_CASE("ctx-newer-key",
		 (h_->version_minor = CUTRACE_VERSION_MINOR + 1,
		  ((struct cutrace_field *)(void *)(m_.p + h_->ctx_off))->tag = 999),
		 "-");
	/* the ioctl enter (a head slot whose record carries CT_FLD_BLOCK_SIZE) claims a huge block */
	REC_CASE("ioctl-block-size-huge", ({
		for (uint64_t s = 0; s < h_->head; s++) {
			unsigned char *r = m_.p + h_->slots_off + s * CUTRACE_SLOT_SIZE;
			struct cutrace_record *rh = (struct cutrace_record *)(void *)r;
			uint64_t tag = ((uint64_t *)(void *)(m_.p + h_->tags_off))[s];
			if (CT_TAG_KIND(tag) != CT_TAG_HEAD || rh->call != CT_CALL_ioctl || rh->type != CT_REC_ENTER)
				continue;
			for (uint32_t o = sizeof *rh; o + 8 <= rh->size;) {
				struct cutrace_field *f = (struct cutrace_field *)(void *)(r + o);
				if (f->tag == CT_FLD_BLOCK_SIZE)
					memset(f + 1, 0xff, 4);
				o += (uint32_t)ct_field_size(f->len);
			}
		}
	}), "-");
	REC_CASE("torn-record", ({
		uint64_t *tags = (uint64_t *)(void *)(m_.p + h_->tags_off);
		tags[0] = CT_TAG_MAKE(0, CT_TAG_BUSY);
	}), "torn");
}

/* Many calls that never return: the pairing window must stay bounded. */
static void flood_case(void)
{
	struct img m;
	size_t size = 8u << 20;
	unsigned char f[8];

	base(&m, size);
	unsigned char *q = ct_put_field(f, CT_FLD_FD, (int32_t[]){ 3 }, 4);
	for (unsigned i = 0; i < 90000; i++) {
		struct ct_slot s;
		if (ct_ring_reserve(&m.ring, (uint32_t)(sizeof(struct cutrace_record) + (size_t)(q - f)), &s) < 0)
			break;
		s.rec->type = CT_REC_ENTER;
		s.rec->call = CT_CALL_close;
		s.rec->tid = 1 + i % 3;
		s.rec->t_ns = 2000 + i;
		memcpy(s.rec + 1, f, (size_t)(q - f));
		ct_ring_commit(&m.ring, &s);
	}
	memcpy(H(&m)->magic, CUTRACE_MAGIC, 8);
	emit("never-returned-flood", m.p, m.len, "ok", "unfinished");
	free(m.p);
}

int main(int argc, char **argv)
{
	char path[4096];

	if (argc != 2) {
		fprintf(stderr, "usage: ct_mkbad DIR\n");
		return 2;
	}
	dir = argv[1];
	snprintf(path, sizeof path, "%s/MANIFEST", dir);
	manifest = fopen(path, "w");
	if (!manifest) {
		fprintf(stderr, "ct_mkbad: %s: %s\n", path, strerror(errno));
		return 1;
	}
	header_cases();
	record_cases();
	flood_case();
	fclose(manifest);
	return 0;
}
