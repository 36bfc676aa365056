/*
 * ct_crop: make a small trace out of a big one, for the fuzzer's seed corpus.
 *
 *   ct_crop IN OUT [-n RECORDS] [-f FIRST] [-s SIZE] [-c CTX_CAP]
 *
 * Reads IN with the real reader, takes the records FIRST .. FIRST+RECORDS-1
 * (in sequence order, default 0..199), and writes them into a fresh file of
 * SIZE bytes (default 48K) through the real ring writer (ct_ring_layout /
 * reserve / commit), so the output has exactly the slots, tags and padding
 * the shim writes.  Sequence numbers are renumbered and every exit's
 * enter_seq follows its enter.  Context fields are copied whole while they
 * fit in CTX_CAP (default 4096).  A SIZE smaller than the records makes the
 * ring wrap, which is wanted for some seeds.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"
#include "trace.h"

struct rec {
	uint64_t seq;
	const struct cutrace_record *r;
	uint64_t new_seq;
};

struct collect {
	struct rec *v;
	size_t n, cap;
};

static void add(struct collect *c, const struct ct_recv *rv)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 1024;
		c->v = realloc(c->v, c->cap * sizeof *c->v);
		if (!c->v) {
			fprintf(stderr, "ct_crop: out of memory\n");
			exit(1);
		}
	}
	c->v[c->n].seq = rv->hdr->seq;
	c->v[c->n].r = rv->hdr;
	c->v[c->n].new_seq = UINT64_MAX;
	c->n++;
}

static int on_event(const struct ct_event *ev, void *user)
{
	struct collect *c = user;

	if (ev->has_enter)
		add(c, &ev->enter);
	if (ev->has_exit)
		add(c, &ev->exit);
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const struct rec *find(const struct collect *c, size_t lo, size_t hi, uint64_t seq)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->v[mid].seq == seq)
			return &c->v[mid];
		if (c->v[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* whole context fields of the source that fit in cap bytes */
static uint64_t copy_ctx(const struct ct_trace *t, unsigned char *dst, uint64_t cap)
{
	uint64_t used = 0;

	for (uint16_t tag = 1; tag < 64; tag++) {
		for (unsigned i = 0;; i++) {
			uint16_t len;
			const unsigned char *d = ct_trace_ctx(t, tag, i, &len);
			if (!d)
				break;
			if (used + ct_field_size(len) > cap)
				continue;
			ct_put_field(dst + used, tag, d, len);
			used += ct_field_size(len);
		}
	}
	return used;
}

int main(int argc, char **argv)
{
	uint64_t size = 48 * 1024, ctx_cap = 4096, first = 0, count = 200;
	struct collect c = { 0 };
	struct ct_trace *t;
	struct ct_ring ring;
	char err[512];
	int opt, fd;

	while ((opt = getopt(argc, argv, "n:f:s:c:")) != -1) {
		switch (opt) {
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'f': first = strtoull(optarg, NULL, 0); break;
		case 's': size = strtoull(optarg, NULL, 0); break;
		case 'c': ctx_cap = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: ct_crop IN OUT [-n RECORDS] [-f FIRST] [-s SIZE] [-c CTX_CAP]\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: ct_crop IN OUT [-n RECORDS] [-f FIRST] [-s SIZE] [-c CTX_CAP]\n");
		return 2;
	}
	if (ct_trace_open(argv[optind], &t, err, sizeof err) < 0) {
		fprintf(stderr, "ct_crop: %s: %s\n", argv[optind], err);
		return 1;
	}
	ct_trace_events(t, on_event, &c);
	if (c.n)
		qsort(c.v, c.n, sizeof *c.v, by_seq);
	if (first > c.n)
		first = c.n;
	if (count > c.n - first)
		count = c.n - first;

	fd = open(argv[optind + 1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		fprintf(stderr, "ct_crop: %s: %s\n", argv[optind + 1], strerror(errno));
		return 1;
	}
	void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "ct_crop: mmap: %s\n", strerror(errno));
		return 1;
	}
	struct cutrace_header *h = map;
	memcpy(h, ct_trace_header(t), sizeof *h);
	memset(h->magic, 0, sizeof h->magic);
	if (ct_ring_layout(h, size, ctx_cap) < 0) {
		fprintf(stderr, "ct_crop: size %llu too small\n", (unsigned long long)size);
		return 1;
	}
	h->dropped = h->lost = 0;
	h->ctx_len = copy_ctx(t, (unsigned char *)map + h->ctx_off, ctx_cap);
	ct_ring_attach(&ring, map);

	size_t end = (size_t)(first + count);
	for (size_t i = (size_t)first; i < end; i++) {
		struct rec *r = &c.v[i];
		struct ct_slot s;
		uint32_t sz = r->r->size;
		if (ct_ring_reserve(&ring, sz, &s) < 0)
			continue;
		memcpy(s.rec, r->r, sz);
		s.rec->seq = s.seq;
		r->new_seq = s.seq;
		if (r->r->type == CT_REC_EXIT && sz >= sizeof(struct cutrace_record) + sizeof(struct cutrace_exit)) {
			struct cutrace_exit x;
			memcpy(&x, s.rec + 1, sizeof x);
			const struct rec *e = find(&c, (size_t)first, i, x.enter_seq);
			if (e && e->new_seq != UINT64_MAX)
				x.enter_seq = e->new_seq;
			memcpy(s.rec + 1, &x, sizeof x);
		}
		ct_ring_commit(&ring, &s);
	}
	memcpy(h->magic, CUTRACE_MAGIC, 8);
	munmap(map, size);
	close(fd);
	printf("%s: %llu records of %zu\n", argv[optind + 1], (unsigned long long)count, c.n);
	ct_trace_close(t);
	free(c.v);
	return 0;
}
