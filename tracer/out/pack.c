/*
 * `cutrace pack` (pack.h): a job's traces in one compact tar.gz for a bug
 * report.  Each trace is stored as written: the file up to its last page
 * that holds data (read/trace.c, ct_trace_written), not the preallocated
 * zeros behind the ring's used region; the member "cutrace-pack.txt" gives
 * every trace's full size, so `cutrace show BUNDLE` reads each member as
 * the file it was.  A trace the reader finds damaged (or cannot open) is
 * stored whole, as it is on disk.  Written through base/outfile.c: the
 * bundle replaces its file only when complete.
 */
#include "pack.h"
#include "outfile.h"
#include "trace.h"
#include "tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

struct gzw {
	FILE *f;
	z_stream z;
	bool gzip;
	bool failed;
	uint64_t in, out;
	unsigned char buf[64 << 10];
};

static void gz_put(struct gzw *w, const void *data, size_t n, int flush)
{
	if (w->failed)
		return;
	w->in += n;
	if (!w->gzip) {
		if (n && fwrite(data, 1, n, w->f) != n)
			w->failed = true;
		w->out += n;
		return;
	}
	w->z.next_in = (Bytef *)(uintptr_t)data;
	w->z.avail_in = (uInt)n;
	do {
		w->z.next_out = w->buf;
		w->z.avail_out = sizeof w->buf;
		if (deflate(&w->z, flush) == Z_STREAM_ERROR) {
			w->failed = true;
			return;
		}
		size_t k = sizeof w->buf - w->z.avail_out;
		if (k && fwrite(w->buf, 1, k, w->f) != k) {
			w->failed = true;
			return;
		}
		w->out += k;
	} while (w->z.avail_out == 0);
}

/* large inputs in pieces (zlib counts in uInt) */
static void gz_write(struct gzw *w, const unsigned char *p, size_t n)
{
	while (n) {
		size_t k = n > (1u << 30) ? (1u << 30) : n;
		gz_put(w, p, k, Z_NO_FLUSH);
		p += k;
		n -= k;
	}
}

static void octal(char *dst, size_t width, uint64_t v)
{
	/* width - 1 octal digits and a NUL */
	dst[width - 1] = 0;
	for (size_t i = width - 1; i-- > 0;) {
		dst[i] = (char)('0' + (v & 7));
		v >>= 3;
	}
}

static void tar_header(struct gzw *w, const char *name, uint64_t size, time_t mtime, char type)
{
	unsigned char h[512];
	size_t n = strlen(name);
	unsigned sum = 0;

	memset(h, 0, sizeof h);
	if (n <= 100) {
		memcpy(h, name, n);
	} else {
		/* ustar: prefix/name split at a '/' */
		const char *cut = NULL;
		for (const char *s = name; (s = strchr(s, '/')); s++)
			if ((size_t)(s - name) <= 155 && strlen(s + 1) <= 100 && s > name) {
				cut = s;
				break;
			}
		if (cut) {
			memcpy(h + 345, name, (size_t)(cut - name));
			memcpy(h, cut + 1, strlen(cut + 1));
		} else {
			/* a GNU long-name record first */
			tar_header(w, "././@LongLink", n + 1, 0, 'L');
			unsigned char pad[512] = { 0 };
			gz_write(w, (const unsigned char *)name, n + 1);
			gz_write(w, pad, (512 - (n + 1) % 512) % 512);
			memcpy(h, name, 100);
		}
	}
	octal((char *)h + 100, 8, 0600);
	octal((char *)h + 108, 8, 0);
	octal((char *)h + 116, 8, 0);
	octal((char *)h + 124, 12, size);
	octal((char *)h + 136, 12, (uint64_t)(mtime > 0 ? mtime : 0));
	memset(h + 148, ' ', 8);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (unsigned i = 0; i < 512; i++)
		sum += h[i];
	octal((char *)h + 148, 7, sum);
	h[155] = ' ';
	gz_write(w, h, sizeof h);
}

static void tar_member(struct gzw *w, const char *name, const unsigned char *data, size_t n, time_t mtime)
{
	static const unsigned char pad[512];

	tar_header(w, name, n, mtime, '0');
	gz_write(w, data, n);
	gz_write(w, pad, (512 - n % 512) % 512);
}

/* a member name: the path below the DIR argument, or a file's own name */
static const char *member_name(const char *arg, const char *path, bool dir)
{
	size_t a = strlen(arg);
	const char *base;

	if (!strncmp(path, arg, a) && path[a] == ':') /* a member of a bundle */
		return path + a + 1;
	if (dir && !strncmp(path, arg, a)) {
		path += a;
		while (*path == '/')
			path++;
		return path;
	}
	base = strrchr(path, '/');
	return base ? base + 1 : path;
}

/* a whole regular file, as it is on disk (a trace the reader finds damaged) */
static unsigned char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	unsigned char *p = NULL;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size < ((uint64_t)4 << 30) &&
	    (p = malloc((size_t)st.st_size + 1))) {
		while (got < (size_t)st.st_size) {
			ssize_t r = pread(fd, p + got, (size_t)st.st_size - got, (off_t)got);
			if (r <= 0)
				break;
			got += (size_t)r;
		}
	}
	close(fd);
	*len = got;
	return p;
}

int ct_pack_run(const char *out_path, char **args, int nargs)
{
	struct ct_outfile of;
	struct gzw *w;
	char err[PATH_MAX + 256];
	char **all = NULL, **names = NULL, *manifest = NULL;
	uint64_t *fulls = NULL;
	size_t mlen = 0, mcap = 0;
	int n = 0, cap = 0, rc = CT_EXIT_OK, bad = 0, stored = 0;
	uint64_t full_total = 0, written_total = 0;
	time_t now = time(NULL);

	/* every trace of every argument, as show finds them */
	for (int a = 0; a < nargs; a++) {
		char **paths;
		struct stat st;
		bool dir = strcmp(args[a], "-") && stat(args[a], &st) == 0 && S_ISDIR(st.st_mode);
		int k = ct_list_traces_ex(args[a], true, &paths, err, sizeof err);
		if (k < 0) {
			ct_err("%s", err);
			bad++;
			continue;
		}
		for (int i = 0; i < k; i++) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				char **na = realloc(all, (size_t)cap * sizeof *all);
				if (!na)
					ct_die(CT_EXIT_USAGE, "out of memory");
				all = na;
				char **nn = realloc(names, (size_t)cap * sizeof *names);
				if (!nn)
					ct_die(CT_EXIT_USAGE, "out of memory");
				names = nn;
			}
			all[n] = strdup(paths[i]);
			names[n] = strdup(member_name(args[a], paths[i], dir));
			if (!all[n] || !names[n])
				ct_die(CT_EXIT_USAGE, "out of memory");
			n++;
		}
		ct_free_paths(paths, k);
	}
	if (n == 0) {
		ct_err("pack: no trace to pack");
		rc = CT_EXIT_USAGE;
		goto done;
	}
	if (ct_outfile_check(out_path, args, nargs, err, sizeof err) < 0 ||
	    ct_outfile_check(out_path, all, n, err, sizeof err) < 0 ||
	    ct_outfile_open(&of, out_path, err, sizeof err) < 0) {
		ct_err("%s", err);
		rc = CT_EXIT_USAGE;
		goto done;
	}
	w = calloc(1, sizeof *w);
	if (!w)
		ct_die(CT_EXIT_USAGE, "out of memory");
	w->f = of.f;
	{
		size_t ol = strlen(out_path);
		w->gzip = !(ol >= 4 && !strcmp(out_path + ol - 4, ".tar"));
	}
	if (w->gzip && deflateInit2(&w->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		ct_die(CT_EXIT_USAGE, "out of memory");

	/* the manifest first: what each member's full size is */
	fulls = calloc((size_t)n, sizeof *fulls);
	if (!fulls)
		ct_die(CT_EXIT_USAGE, "out of memory");
	for (int i = 0; i < n; i++) {
		struct ct_trace *t;
		char terr[512];
		if (ct_trace_open(all[i], &t, terr, sizeof terr) == 0) {
			char dmg[512];
			if (!ct_trace_damage(t, dmg, sizeof dmg))
				fulls[i] = ct_trace_header(t)->file_size;
			ct_trace_close(t);
		}
		/* stored decompressed: x.cutrace.gz is the member x.cutrace */
		size_t nl = strlen(names[i]);
		if (fulls[i] && nl > 11 && !strcmp(names[i] + nl - 3, ".gz"))
			names[i][nl - 3] = 0;
		else if (fulls[i] && nl > 12 && !strcmp(names[i] + nl - 4, ".zst"))
			names[i][nl - 4] = 0;
		char line[PATH_MAX + 32];
		int ll = snprintf(line, sizeof line, "%llu %s\n", (unsigned long long)fulls[i], names[i]);
		if (fulls[i] && ll > 0 && (size_t)ll < sizeof line) {
			if (mlen + (size_t)ll + 1 > mcap) {
				mcap = (mcap + (size_t)ll + 1) * 2;
				manifest = realloc(manifest, mcap);
				if (!manifest)
					ct_die(CT_EXIT_USAGE, "out of memory");
			}
			memcpy(manifest + mlen, line, (size_t)ll);
			mlen += (size_t)ll;
		}
	}
	tar_member(w, CT_PACK_MANIFEST, (const unsigned char *)(manifest ? manifest : ""), mlen, now);

	for (int i = 0; i < n && !w->failed; i++) {
		struct ct_trace *t;
		char terr[512];
		struct stat st;
		time_t mt = stat(all[i], &st) == 0 ? st.st_mtime : now;
		if (fulls[i] && ct_trace_open(all[i], &t, terr, sizeof terr) == 0) {
			size_t len;
			const unsigned char *p = ct_trace_written(t, &len);
			tar_member(w, names[i], p, len, mt);
			full_total += fulls[i];
			written_total += len;
			ct_trace_close(t);
			stored++;
			continue;
		}
		/* damaged or unreadable: the file as it is, for whoever reads the report */
		size_t len;
		unsigned char *raw = slurp(all[i], &len);
		if (!raw) {
			ct_warn("%s: cannot be read; not packed", all[i]);
			bad++;
			continue;
		}
		ct_warn("%s: damaged or not a trace the reader accepts; packed whole", all[i]);
		tar_member(w, names[i], raw, len, mt);
		full_total += len;
		written_total += len;
		free(raw);
		stored++;
	}
	{
		static const unsigned char end[1024];
		gz_write(w, end, sizeof end);
		if (w->gzip) {
			gz_put(w, NULL, 0, Z_FINISH);
			deflateEnd(&w->z);
		}
	}
	if (w->failed) {
		int e = errno;
		bool kept = ct_outfile_discard(&of);
		ct_err("%s: write error: %s%s", out_path, strerror(e),
		       kept ? " (the file was left as it was)" : "");
		rc = CT_EXIT_USAGE;
	} else if (ct_outfile_commit(&of, err, sizeof err) < 0) {
		ct_err("%s", err);
		rc = CT_EXIT_USAGE;
	} else {
		fprintf(stderr,
			"cutrace: packed %d trace%s into %s: %llu bytes as files, %llu written, %llu in the bundle\n",
			stored, stored == 1 ? "" : "s", out_path, (unsigned long long)full_total,
			(unsigned long long)written_total, (unsigned long long)w->out);
		rc = bad ? CT_EXIT_PROBLEM : CT_EXIT_OK;
	}
	free(w);
done:
	for (int i = 0; i < n; i++) {
		free(all[i]);
		free(names[i]);
	}
	free(all);
	free(names);
	free(fulls);
	free(manifest);
	return rc;
}
