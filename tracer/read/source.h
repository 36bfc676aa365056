/*
 * Internal to the read room: where trace bytes come from (source.c).
 * Sparse buffers, decompression (gzip, zstd), non-blocking opens that
 * refuse FIFOs and devices, tar bundles, the names of traces read from
 * pipes and bundles, and the SIGBUS guard of mapped files.
 */
#ifndef CT_SOURCE_H
#define CT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* no input is decompressed or spooled beyond this (the largest trace the
 * shim writes is 1 GiB; a bundle of many may be larger, its members are
 * only their written parts) */
#define CT_SRC_MAX_BYTES ((size_t)4 << 30)

/* a sparse anonymous mapping: len bytes written, cap reserved (zeros) */
struct ct_blob {
	unsigned char *base;
	size_t len, cap;
};
int ct_blob_reserve(struct ct_blob *b, size_t need);
/* append, leaving all-zero pages untouched; -1 past CT_SRC_MAX_BYTES */
int ct_blob_append(struct ct_blob *b, const void *data, size_t n);
void ct_blob_free(struct ct_blob *b);

enum ct_comp {
	CT_COMP_NONE,
	CT_COMP_GZIP,
	CT_COMP_ZSTD
};
enum ct_comp ct_comp_sniff(const unsigned char *p, size_t n);
/* decompress everything into out: 0, 1 when the data ended early (what
 * was decompressed is kept), -1 with err */
int ct_src_decompress_fd(int fd, enum ct_comp comp, struct ct_blob *out, char *err, size_t errlen);
int ct_src_decompress_mem(const unsigned char *p, size_t n, enum ct_comp comp, struct ct_blob *out, char *err,
			  size_t errlen);

/*
 * Open path for reading without blocking: a regular file (*stream false),
 * or a pipe handed over as one ("-", /dev/stdin, /dev/fd/N, an anonymous
 * pipe such as bash's <(...)): *stream true, blocking again.  A named FIFO,
 * a device or a directory is -1 with one sentence in err.
 */
int ct_src_open(const char *path, int *fd, bool *stream, char *err, size_t errlen);
/* read fd to its end into out */
int ct_src_spool(int fd, struct ct_blob *out, char *err, size_t errlen);

/* tar (ustar, GNU, pax): cb for every regular member; returns the number
 * of members, -1 with err on a corrupt archive */
typedef int (*ct_tar_cb)(const char *name, const unsigned char *data, size_t len, void *user);
bool ct_tar_sniff(const unsigned char *p, size_t n);
int ct_tar_walk(const unsigned char *p, size_t n, ct_tar_cb cb, void *user, char *err, size_t errlen);

/* traces kept by name for the life of the process (pipes, bundle members) */
struct ct_src_ent {
	const unsigned char *data;
	size_t len;
	uint64_t full; /* a packed member: the file's full size (the rest is zeros); 0: len */
};
const struct ct_src_ent *ct_src_find(const char *name, struct ct_src_ent *out);
int ct_src_add(const char *name, const unsigned char *data, size_t len, uint64_t full);

/* the SIGBUS guard: a mapping registered here that loses its file's pages
 * reads as zeros from the first lost page on; ct_guard_hit says where
 * (UINT64_MAX: nowhere) */
int ct_guard_add(const void *base, size_t len);
uint64_t ct_guard_hit(int g, const void *base);
void ct_guard_del(int g);

#endif
