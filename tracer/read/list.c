/* FILE|DIR arguments -> trace file paths, sorted (trace.h, ct_list_traces). */
#include "read_int.h"
#include "tracer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

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
