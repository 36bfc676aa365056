/* FILE|DIR arguments -> trace file paths, sorted (trace.h, ct_list_traces). */
#include "read_int.h"
#include "tracer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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

bool ct_trace_name(const char *name)
{
	return has_suffix(name, ".cutrace") || has_suffix(name, ".cutrace.gz") ||
	       has_suffix(name, ".cutrace.zst");
}

/* ---- bundles and pipes ------------------------------------------------------------------- */

struct members {
	const char *arg;
	struct path_vec *pv;
	/* the pack's manifest: full sizes of the members stored short */
	const unsigned char *manifest;
	size_t manifest_len;
	int failed;
};

/* the full size the manifest gives for member name, 0 when none */
static uint64_t manifest_size(const struct members *m, const char *name)
{
	const unsigned char *p = m->manifest, *end = p + m->manifest_len;
	size_t n = strlen(name);

	while (p && p < end) {
		const unsigned char *nl = memchr(p, '\n', (size_t)(end - p)), *sp;
		if (!nl)
			break;
		sp = memchr(p, ' ', (size_t)(nl - p));
		if (sp && (size_t)(nl - sp - 1) == n && !memcmp(sp + 1, name, n)) {
			uint64_t v = 0;
			for (const unsigned char *q = p; q < sp && *q >= '0' && *q <= '9'; q++)
				v = v * 10 + (uint64_t)(*q - '0');
			return v;
		}
		p = nl + 1;
	}
	return 0;
}

static int find_manifest(const char *name, const unsigned char *data, size_t len, void *user)
{
	struct members *m = user;

	if (!strcmp(name, CT_PACK_MANIFEST)) {
		m->manifest = data;
		m->manifest_len = len;
	}
	return 0;
}

static int add_member(const char *name, const unsigned char *data, size_t len, void *user)
{
	struct members *m = user;
	size_t n = strlen(m->arg) + 1 + strlen(name) + 1;
	char *full = malloc(n);

	if (!full)
		return -1;
	if (!ct_trace_name(name)) {
		free(full);
		return 0;
	}
	while (name[0] == '.' && name[1] == '/')
		name += 2;
	snprintf(full, n, "%s:%s", m->arg, name);
	if (ct_src_add(full, data, len, manifest_size(m, name)) < 0) {
		free(full);
		return -1;
	}
	return vec_take(m->pv, full);
}

/*
 * A FILE argument: a trace (raw or compressed) is itself; a bundle (tar,
 * tar.gz, tar.zst) lists its traces as "ARG:MEMBER"; a pipe ("-",
 * /dev/stdin, <(...)) is read once and kept under its name.
 */
static int expand_file(const char *arg, struct path_vec *pv, char *err, size_t errlen)
{
	struct ct_src_ent e;
	struct ct_blob raw = { 0 }, dec = { 0 }, *data = &raw;
	unsigned char first[512];
	bool stream;
	int fd, r;
	char *one;

	if (ct_src_find(arg, &e) && e.data)
		goto single;
	if (ct_src_open(arg, &fd, &stream, err, errlen) < 0) {
		char why[256];
		snprintf(why, sizeof why, "%s", err);
		return fail(err, errlen, "%s: %s", arg, why);
	}
	if (!stream) {
		ssize_t got = pread(fd, first, sizeof first, 0);
		enum ct_comp comp = got > 0 ? ct_comp_sniff(first, (size_t)got) : CT_COMP_NONE;
		bool tar = got > 0 && ct_tar_sniff(first, (size_t)got);
		if (comp != CT_COMP_NONE) {
			/* is it a compressed tar?  the first 64 KiB decide */
			unsigned char *head = malloc(1u << 16);
			struct ct_blob peek = { 0 };
			char perr[128];
			ssize_t hn = head ? pread(fd, head, 1u << 16, 0) : -1;
			if (hn > 0)
				ct_src_decompress_mem(head, (size_t)hn, comp, &peek, perr, sizeof perr);
			tar = ct_tar_sniff(peek.base, peek.len);
			ct_blob_free(&peek);
			free(head);
		}
		if (!tar) {
			close(fd);
			goto single; /* ct_trace_open reads it (and decompresses it) */
		}
		if (comp != CT_COMP_NONE)
			r = ct_src_decompress_fd(fd, comp, &raw, err, errlen);
		else
			r = ct_src_spool(fd, &raw, err, errlen);
	} else {
		r = ct_src_spool(fd, &raw, err, errlen);
		if (r == 0) {
			enum ct_comp comp = ct_comp_sniff(raw.base, raw.len);
			if (comp != CT_COMP_NONE) {
				r = ct_src_decompress_mem(raw.base, raw.len, comp, &dec, err, errlen);
				ct_blob_free(&raw);
				data = &dec;
			}
		}
	}
	close(fd);
	if (r < 0) {
		ct_blob_free(data);
		char why[256];
		snprintf(why, sizeof why, "%s", err);
		return fail(err, errlen, "%s: %s", arg, why);
	}
	if (!ct_tar_sniff(data->base, data->len)) {
		/* one trace from a pipe: kept (never freed) under its name */
		if (ct_src_add(arg, data->base, data->len, 0) < 0)
			return fail(err, errlen, "out of memory");
		goto single;
	}
	/* a bundle: its members are kept (never freed) under ARG:MEMBER */
	struct members m = { .arg = arg, .pv = pv };
	int before = pv->n;
	if (ct_tar_walk(data->base, data->len, find_manifest, &m, err, errlen) < 0 ||
	    ct_tar_walk(data->base, data->len, add_member, &m, err, errlen) < 0) {
		char why[256];
		snprintf(why, sizeof why, "%s", err);
		return fail(err, errlen, "%s: %s", arg, why);
	}
	if (pv->n == before)
		return fail(err, errlen, "%s: a tar archive without trace files (*.cutrace, *.cutrace.gz)",
			    arg);
	qsort(pv->v + before, (size_t)(pv->n - before), sizeof *pv->v, path_cmp);
	return 0;

single:
	if (!(one = strdup(arg)) || vec_take(pv, one) < 0)
		return fail(err, errlen, "out of memory");
	return 0;
}

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
		if (!sub && (!ct_trace_name(de->d_name) || fstatat(dirfd(d), de->d_name, &es, 0) < 0 ||
			     !S_ISREG(es.st_mode)))
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
	DIR *d;
	int r;

	*paths = NULL;
	bool file = !strcmp(arg, "-") || ct_src_find(arg, &(struct ct_src_ent){ 0 });
	if (!file) {
		if (stat(arg, &st) < 0)
			return fail(err, errlen, "%s: %s", arg, strerror(errno));
		file = !S_ISDIR(st.st_mode);
	}
	if (file) {
		if (expand_file(arg, &pv, err, errlen) < 0) {
			ct_free_paths(pv.v, pv.n);
			return -1;
		}
		*paths = pv.v;
		return pv.n;
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
		return fail(err, errlen, "no trace files (*.cutrace, *.cutrace.gz, *.cutrace.zst) in %s%s",
			    arg, recursive ? " or its subdirectories" : "");
	}
	qsort(pv.v, (size_t)pv.n, sizeof *pv.v, path_cmp);
	*paths = pv.v;
	return pv.n;
}

struct order_key {
	char *path;
	size_t dirlen;
	uint64_t start;
	uint32_t pid;
	int at;
};

static int order_cmp(const void *pa, const void *pb)
{
	const struct order_key *a = pa, *b = pb;
	size_t n = a->dirlen < b->dirlen ? a->dirlen : b->dirlen;
	int c = strncmp(a->path, b->path, n);

	if (c)
		return c;
	if (a->dirlen != b->dirlen)
		return a->dirlen < b->dirlen ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->at - b->at;
}

void ct_list_order_by_start(char **paths, int n, int *perm, uint32_t *pids)
{
	struct order_key *k = calloc((size_t)n + 1, sizeof *k);
	char err[256];

	if (!k)
		return; /* out of memory: by name */
	for (int i = 0; i < n; i++) {
		struct ct_trace *t;
		const char *slash = strrchr(paths[i], '/');
		k[i] = (struct order_key){ paths[i], slash ? (size_t)(slash - paths[i]) : 0, 0, 0, i };
		if (ct_trace_open(paths[i], &t, err, sizeof err) == 0) {
			k[i].start = ct_trace_header(t)->start_realtime_ns;
			k[i].pid = ct_trace_header(t)->pid;
			ct_trace_close(t);
		}
	}
	qsort(k, (size_t)n, sizeof *k, order_cmp);
	for (int i = 0; i < n; i++) {
		paths[i] = k[i].path;
		if (perm)
			perm[i] = k[i].at;
		if (pids)
			pids[i] = k[i].pid;
	}
	free(k);
}
