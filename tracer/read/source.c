/*
 * Where the bytes of a trace come from (source.h): a regular file (mapped,
 * with a SIGBUS guard so a file that shrinks while it is read reads as
 * zeros instead of killing cutrace), a compressed file (.gz, .zst:
 * decompressed into memory), standard input or a pipe (read once, kept by
 * name), a bundle of traces (tar, tar.gz: every member kept by a name
 * "BUNDLE:MEMBER").  Inputs are untrusted: sizes are capped, a named FIFO
 * or a device is refused without blocking (O_NONBLOCK, then fstat).
 *
 * Decompressed and piped bytes go into sparse anonymous mappings: pages
 * that would only hold zeros are never written, so the 16 MiB of a mostly
 * empty trace cost only the pages its records use.
 */
#define _GNU_SOURCE 1
#include "source.h"
#include "read_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef CUTRACE_HAVE_ZSTD
#include <zstd.h>
#endif

#define PAGE 4096u

/* ---- sparse buffers ------------------------------------------------------------------- */

static bool all_zero(const unsigned char *p, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		if (w)
			return false;
	}
	for (; i < n; i++)
		if (p[i])
			return false;
	return true;
}

int ct_blob_reserve(struct ct_blob *b, size_t need)
{
	size_t cap;
	void *m;

	if (need <= b->cap)
		return 0;
	if (need > CT_SRC_MAX_BYTES)
		return -1;
	cap = b->cap ? b->cap : (1u << 20);
	while (cap < need)
		cap = cap > CT_SRC_MAX_BYTES / 2 ? CT_SRC_MAX_BYTES : cap * 2;
	cap = (cap + PAGE - 1) & ~(size_t)(PAGE - 1);
	if (b->base)
		m = mremap(b->base, b->cap, cap, MREMAP_MAYMOVE);
	else
		m = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			 0);
	if (m == MAP_FAILED)
		return -1;
	b->base = m;
	b->cap = cap;
	return 0;
}

int ct_blob_append(struct ct_blob *b, const void *data, size_t n)
{
	const unsigned char *p = data;

	if (n > CT_SRC_MAX_BYTES - b->len || ct_blob_reserve(b, b->len + n) < 0)
		return -1;
	while (n) {
		size_t room = PAGE - (b->len % PAGE), k = n < room ? n : room;
		/* a fresh anonymous page is zero already: leave it untouched */
		if (!all_zero(p, k))
			memcpy(b->base + b->len, p, k);
		b->len += k;
		p += k;
		n -= k;
	}
	return 0;
}

void ct_blob_free(struct ct_blob *b)
{
	if (b->base)
		munmap(b->base, b->cap);
	memset(b, 0, sizeof *b);
}

/* ---- input: a file descriptor or memory ---------------------------------------------- */

struct in {
	int fd;
	const unsigned char *mem;
	size_t memlen, pos;
};

static ssize_t in_read(struct in *in, void *buf, size_t n)
{
	ssize_t r;

	if (in->mem) {
		size_t k = in->memlen - in->pos < n ? in->memlen - in->pos : n;
		memcpy(buf, in->mem + in->pos, k);
		in->pos += k;
		return (ssize_t)k;
	}
	do
		r = read(in->fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

/* ---- compression ---------------------------------------------------------------------- */

enum ct_comp ct_comp_sniff(const unsigned char *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return CT_COMP_GZIP;
	if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
		return CT_COMP_ZSTD;
	return CT_COMP_NONE;
}

#define CHUNK (64u << 10)

static int too_big(char *err, size_t errlen)
{
	return fail(err, errlen, "decompressed data larger than %u MiB: not a trace",
		    (unsigned)(CT_SRC_MAX_BYTES >> 20));
}

static int gunzip(struct in *in, struct ct_blob *out, char *err, size_t errlen)
{
	unsigned char *ib = malloc(CHUNK), *ob = malloc(CHUNK);
	z_stream z;
	int rc = -1, zr = Z_OK;
	bool ended = false;

	memset(&z, 0, sizeof z);
	if (!ib || !ob || inflateInit2(&z, 15 + 32) != Z_OK) {
		free(ib);
		free(ob);
		return fail(err, errlen, "out of memory");
	}
	for (;;) {
		if (z.avail_in == 0) {
			ssize_t r = in_read(in, ib, CHUNK);
			if (r < 0) {
				fail(err, errlen, "read error: %s", strerror(errno));
				goto out;
			}
			if (r == 0)
				break;
			z.next_in = ib;
			z.avail_in = (uInt)r;
		}
		if (ended) {
			/* another gzip member (cat a.gz b.gz), or trailing bytes: ignored */
			if (z.avail_in >= 2 && z.next_in[0] == 0x1f && z.next_in[1] == 0x8b) {
				inflateReset(&z);
				ended = false;
			} else {
				break;
			}
		}
		z.next_out = ob;
		z.avail_out = CHUNK;
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			fail(err, errlen, "corrupt gzip data (%s)", z.msg ? z.msg : "inflate failed");
			goto out;
		}
		if (ct_blob_append(out, ob, CHUNK - z.avail_out) < 0) {
			too_big(err, errlen);
			goto out;
		}
		if (zr == Z_STREAM_END)
			ended = true;
	}
	if (!ended) {
		/* what was there is kept: a cut download still shows its beginning */
		if (out->len == 0) {
			fail(err, errlen, "truncated gzip data (nothing decompressed)");
			goto out;
		}
		rc = 1;
		goto out;
	}
	rc = 0;
out:
	inflateEnd(&z);
	free(ib);
	free(ob);
	return rc;
}

static int unzstd(struct in *in, struct ct_blob *out, char *err, size_t errlen)
{
#ifdef CUTRACE_HAVE_ZSTD
	unsigned char *ib = malloc(CHUNK), *ob = malloc(CHUNK);
	ZSTD_DStream *z = ZSTD_createDStream();
	ZSTD_inBuffer zi = { ib, 0, 0 };
	size_t last = 1;
	int rc = -1;

	if (!ib || !ob || !z) {
		fail(err, errlen, "out of memory");
		goto out;
	}
	ZSTD_initDStream(z);
	for (;;) {
		if (zi.pos == zi.size) {
			ssize_t r = in_read(in, ib, CHUNK);
			if (r < 0) {
				fail(err, errlen, "read error: %s", strerror(errno));
				goto out;
			}
			if (r == 0)
				break;
			zi.size = (size_t)r;
			zi.pos = 0;
		}
		ZSTD_outBuffer zo = { ob, CHUNK, 0 };
		last = ZSTD_decompressStream(z, &zo, &zi);
		if (ZSTD_isError(last)) {
			fail(err, errlen, "corrupt zstd data (%s)", ZSTD_getErrorName(last));
			goto out;
		}
		if (ct_blob_append(out, ob, zo.pos) < 0) {
			too_big(err, errlen);
			goto out;
		}
	}
	if (last != 0 && out->len == 0) {
		fail(err, errlen, "truncated zstd data (nothing decompressed)");
		goto out;
	}
	rc = last != 0 ? 1 : 0;
out:
	ZSTD_freeDStream(z);
	free(ib);
	free(ob);
	return rc;
#else
	(void)in;
	(void)out;
	return fail(err, errlen,
		    "zstd-compressed, and this cutrace was built without libzstd "
		    "(decompress it with 'zstd -d' first)");
#endif
}

int ct_src_decompress_fd(int fd, enum ct_comp comp, struct ct_blob *out, char *err, size_t errlen)
{
	struct in in = { .fd = fd };

	return comp == CT_COMP_GZIP ? gunzip(&in, out, err, errlen) : unzstd(&in, out, err, errlen);
}

int ct_src_decompress_mem(const unsigned char *p, size_t n, enum ct_comp comp, struct ct_blob *out, char *err,
			  size_t errlen)
{
	struct in in = { .fd = -1, .mem = p, .memlen = n };

	return comp == CT_COMP_GZIP ? gunzip(&in, out, err, errlen) : unzstd(&in, out, err, errlen);
}

/* ---- opening without blocking ------------------------------------------------------------ */

/* a name the user gives for an already open stream: -, /dev/stdin, /dev/fd/N */
static bool names_an_fd(const char *path)
{
	return !strcmp(path, "-") || !strcmp(path, "/dev/stdin") || !strncmp(path, "/dev/fd/", 8) ||
	       !strncmp(path, "/proc/self/fd/", 14) || !strncmp(path, "/proc/thread-self/fd/", 21);
}

/* the object behind fd is an anonymous pipe or socket (bash's <(...)) */
static bool anonymous(int fd)
{
	char link[64], target[64];
	ssize_t n;

	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof target - 1);
	if (n <= 0)
		return false;
	target[n] = 0;
	return !strncmp(target, "pipe:", 5) || !strncmp(target, "socket:", 7);
}

static const char *kind_name(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

int ct_src_open(const char *path, int *fdp, bool *stream, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	*fdp = -1;
	*stream = false;
	if (!strcmp(path, "-")) {
		fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return fail(err, errlen, "standard input: %s", strerror(errno));
	} else {
		/* O_NONBLOCK: opening a FIFO nobody writes to must not wait */
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return fail(err, errlen, "%s", strerror(errno));
	}
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return fail(err, errlen, "%s", strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return fail(err, errlen, "is a directory");
	}
	if (S_ISREG(st.st_mode)) {
		*fdp = fd;
		return 0;
	}
	/* a pipe is read when it was handed over as one (-, /dev/stdin,
	 * <(zcat x.gz)), never a named FIFO found by its name */
	if ((S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) && (names_an_fd(path) || anonymous(fd))) {
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		*fdp = fd;
		*stream = true;
		return 0;
	}
	close(fd);
	if (S_ISFIFO(st.st_mode))
		return fail(err, errlen, "is a FIFO, not a trace file (to read a pipe: cutrace show - < %s)",
			    path);
	if (S_ISCHR(st.st_mode) && !strcmp(path, "-"))
		return fail(err, errlen, "standard input is a terminal, not a trace (cutrace show - < FILE)");
	return fail(err, errlen, "is %s, not a trace file", kind_name(st.st_mode));
}

int ct_src_spool(int fd, struct ct_blob *out, char *err, size_t errlen)
{
	unsigned char *buf = malloc(CHUNK);
	struct in in = { .fd = fd };
	ssize_t r;

	if (!buf)
		return fail(err, errlen, "out of memory");
	while ((r = in_read(&in, buf, CHUNK)) > 0)
		if (ct_blob_append(out, buf, (size_t)r) < 0) {
			free(buf);
			return fail(err, errlen, "more than %u MiB: not a trace",
				    (unsigned)(CT_SRC_MAX_BYTES >> 20));
		}
	free(buf);
	if (r < 0)
		return fail(err, errlen, "read error: %s", strerror(errno));
	return 0;
}

/* ---- tar bundles -------------------------------------------------------------------------- */

bool ct_tar_sniff(const unsigned char *p, size_t n)
{
	return n >= 512 && !memcmp(p + 257, "ustar", 5);
}

static uint64_t tar_num(const unsigned char *f, size_t n)
{
	uint64_t v = 0;

	if (f[0] & 0x80) { /* base-256 (GNU) */
		for (size_t i = 1; i < n; i++)
			v = (v << 8) | f[i];
		return v;
	}
	for (size_t i = 0; i < n && f[i]; i++) {
		if (f[i] == ' ')
			continue;
		if (f[i] < '0' || f[i] > '7')
			break;
		v = (v << 3) | (uint64_t)(f[i] - '0');
	}
	return v;
}

static bool tar_sum_ok(const unsigned char *h)
{
	uint64_t want = tar_num(h + 148, 8), sum = 0;

	for (unsigned i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	return sum == want;
}

static void copy_field(char *dst, size_t dstlen, const unsigned char *src, size_t n)
{
	size_t k = 0;

	while (k < n && src[k] && k + 1 < dstlen)
		k++;
	memcpy(dst, src, k);
	dst[k] = 0;
}

int ct_tar_walk(const unsigned char *p, size_t n, ct_tar_cb cb, void *user, char *err, size_t errlen)
{
	char longname[PATH_MAX] = "";
	size_t off = 0;
	int count = 0;

	while (off + 512 <= n) {
		const unsigned char *h = p + off;
		char name[PATH_MAX], prefix[160];
		uint64_t size;
		int type;

		if (all_zero(h, 512))
			break; /* the end-of-archive blocks */
		if (!tar_sum_ok(h))
			return fail(err, errlen, "corrupt tar header at byte %zu", off);
		size = tar_num(h + 124, 12);
		type = h[156];
		if (size > n - off - 512)
			return fail(err, errlen, "tar member at byte %zu runs past the end (%llu bytes)", off,
				    (unsigned long long)size);
		const unsigned char *data = h + 512;
		if (type == 'L') { /* GNU long name for the next member */
			copy_field(longname, sizeof longname, data, (size_t)size);
		} else if (type == 'x') { /* pax: path= for the next member */
			for (size_t i = 0; i < size;) {
				const unsigned char *rec = data + i,
						    *nl = memchr(rec, '\n', (size_t)size - i), *sp;
				if (!nl)
					break;
				sp = memchr(rec, ' ', (size_t)(nl - rec));
				if (sp && nl - sp > 6 && !memcmp(sp + 1, "path=", 5))
					copy_field(longname, sizeof longname, sp + 6, (size_t)(nl - sp - 6));
				i = (size_t)(nl - data) + 1;
			}
		} else if (type == '0' || type == 0 || type == '7') {
			if (longname[0]) {
				snprintf(name, sizeof name, "%s", longname);
			} else {
				char base[104];
				copy_field(prefix, sizeof prefix, h + 345, 155);
				copy_field(base, sizeof base, h, 100);
				snprintf(name, sizeof name, "%s%s%s", prefix, prefix[0] ? "/" : "", base);
			}
			longname[0] = 0;
			count++;
			int r = cb(name, data, (size_t)size, user);
			if (r)
				return r < 0 ? fail(err, errlen, "out of memory") : count;
		} else {
			longname[0] = 0; /* directories, links, ...: nothing to read */
		}
		off += 512 + ((size + 511) & ~(uint64_t)511);
	}
	return count;
}

/* ---- names kept for the life of the process ------------------------------------------------ */

struct ent {
	char *name;
	const unsigned char *data;
	size_t len;
	uint64_t full; /* pack: the file's size; 0: len */
};

static struct ent *ents;
static int nents, capents;

const struct ct_src_ent *ct_src_find(const char *name, struct ct_src_ent *out)
{
	for (int i = nents - 1; i >= 0; i--)
		if (!strcmp(ents[i].name, name)) {
			out->data = ents[i].data;
			out->len = ents[i].len;
			out->full = ents[i].full;
			return out;
		}
	return NULL;
}

int ct_src_add(const char *name, const unsigned char *data, size_t len, uint64_t full)
{
	if (nents == capents) {
		int ncap = capents ? capents * 2 : 64;
		struct ent *ne = realloc(ents, (size_t)ncap * sizeof *ne);
		if (!ne)
			return -1;
		ents = ne;
		capents = ncap;
	}
	if (!(ents[nents].name = strdup(name)))
		return -1;
	ents[nents].data = data;
	ents[nents].len = len;
	ents[nents].full = full;
	nents++;
	return 0;
}

/* ---- the SIGBUS guard of mapped files ------------------------------------------------------- */

#define GUARDS 16

static struct guard {
	volatile uintptr_t lo, hi;
	volatile uintptr_t at; /* first page replaced by zeros, 0: none */
} guards[GUARDS];
static bool guard_installed;
static struct sigaction guard_old;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;

	(void)uc;
	for (unsigned i = 0; i < GUARDS; i++) {
		struct guard *g = &guards[i];
		if (!g->lo || a < g->lo || a >= g->hi)
			continue;
		/* the file shrank under the mapping: the rest of it reads as
		 * zeros (a fresh private anonymous mapping in its place) */
		uintptr_t pg = a & ~(uintptr_t)(PAGE - 1);
		void *m = mmap((void *)pg, g->hi - pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
			       0);
		if (m != MAP_FAILED) {
			if (!g->at || pg < g->at)
				g->at = pg;
			return;
		}
		break;
	}
	/* not ours (or no memory): the default action on return */
	sigaction(sig, &guard_old, NULL);
	if (guard_old.sa_handler == SIG_IGN)
		signal(sig, SIG_DFL);
}

int ct_guard_add(const void *base, size_t len)
{
	if (!guard_installed) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, &sa, &guard_old) < 0)
			return -1;
		guard_installed = true;
	}
	for (int i = 0; i < GUARDS; i++)
		if (!guards[i].lo) {
			guards[i].at = 0;
			guards[i].hi = (uintptr_t)base + len;
			guards[i].lo = (uintptr_t)base;
			return i;
		}
	return -1;
}

uint64_t ct_guard_hit(int g, const void *base)
{
	if (g < 0 || g >= GUARDS || !guards[g].at)
		return UINT64_MAX;
	return (uint64_t)(guards[g].at - (uintptr_t)base);
}

void ct_guard_del(int g)
{
	if (g >= 0 && g < GUARDS)
		guards[g].lo = guards[g].hi = guards[g].at = 0;
}
