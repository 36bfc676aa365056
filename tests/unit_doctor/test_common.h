/* Temporary trees for doctor's tests: files, symlinks, fake /proc lines. */
#ifndef CT_TEST_DOCTOR_COMMON_H
#define CT_TEST_DOCTOR_COMMON_H

#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "machine.h"

static char tmp_root[PATH_MAX];

static inline int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(p);
}

static inline void tree_setup(void)
{
	const char *t = getenv("TMPDIR");
	if (snprintf(tmp_root, sizeof tmp_root, "%s/ct-doctor-XXXXXX", t && *t ? t : "/tmp") >=
	    (int)sizeof tmp_root)
		abort();
	ck_assert_ptr_nonnull(mkdtemp(tmp_root));
}

static inline void tree_teardown(void)
{
	if (tmp_root[0])
		nftw(tmp_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	tmp_root[0] = 0;
}

/* path under the tree (static rotating buffers) */
static inline const char *T(const char *rel)
{
	static char bufs[8][PATH_MAX];
	static int i;
	char *b = bufs[i++ % 8];
	if (snprintf(b, PATH_MAX, "%s%s", tmp_root, rel) >= PATH_MAX)
		ck_abort_msg("path too long");
	return b;
}

static inline void mkdirs(const char *path)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

static inline void parent_dirs(const char *path)
{
	char p[PATH_MAX];
	char *s;
	snprintf(p, sizeof p, "%s", path);
	s = strrchr(p, '/');
	if (s && s != p) {
		*s = 0;
		mkdirs(p);
	}
}

static inline void write_file(const char *path, const void *data, size_t n)
{
	FILE *f;
	parent_dirs(path);
	f = fopen(path, "wb");
	ck_assert_msg(f != NULL, "create %s: %s", path, strerror(errno));
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	fclose(f);
}

static inline void write_str(const char *path, const char *s)
{
	write_file(path, s, strlen(s));
}

static inline void copy_file(const char *from, const char *to)
{
	char buf[65536];
	size_t n;
	FILE *a = fopen(from, "rb"), *b;
	ck_assert_msg(a != NULL, "open %s: %s", from, strerror(errno));
	parent_dirs(to);
	b = fopen(to, "wb");
	ck_assert_msg(b != NULL, "create %s", to);
	while ((n = fread(buf, 1, sizeof buf, a)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, b), n);
	fclose(a);
	fclose(b);
}

static inline void make_link(const char *target, const char *path)
{
	parent_dirs(path);
	ck_assert_int_eq(symlink(target, path), 0);
}

/* first finding with this severity and layer whose summary contains s */
static inline const struct ct_finding *find(const struct ct_machine_report *r, enum ct_severity sev,
				     enum ct_layer l, const char *s)
{
	for (int i = 0; i < r->n_findings; i++) {
		const struct ct_finding *f = &r->findings[i];
		if (f->sev == sev && f->layer == l && (!s || strstr(f->summary, s)))
			return f;
	}
	return NULL;
}

static inline void dump(const struct ct_machine_report *r)
{
	for (int i = 0; i < r->n_findings; i++)
		fprintf(stderr, "  %s %s: %s\n", ct_severity_name(r->findings[i].sev),
			ct_layer_name(r->findings[i].layer), r->findings[i].summary);
}

#define CK_FIND(r, sev, l, s) \
	do { if (!find(r, sev, l, s)) { dump(r); ck_abort_msg("no %s/%s finding with '%s'", \
		ct_severity_name(sev), ct_layer_name(l), s ? s : ""); } } while (0)
#define CK_NOFIND(r, sev, l, s) \
	do { if (find(r, sev, l, s)) { dump(r); ck_abort_msg("unexpected %s/%s finding with '%s'", \
		ct_severity_name(sev), ct_layer_name(l), s ? s : ""); } } while (0)

#endif
