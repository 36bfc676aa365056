/* Output files written whole or not at all (outfile.h). */
#define _GNU_SOURCE 1 /* mkostemp */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ct_outfile_check(const char *path, char *const *inputs, int n, char *err, size_t errlen)
{
	struct stat out, in;

	if (!strcmp(path, "-"))
		return 0;
	if (stat(path, &out) < 0)
		return 0; /* not there yet: it cannot be an input */
	if (S_ISDIR(out.st_mode)) {
		snprintf(err, errlen, "%s: is a directory (the output is one file)", path);
		return -1;
	}
	if (!S_ISREG(out.st_mode))
		return 0; /* /dev/null, a terminal, a FIFO: written directly, replaces nothing */
	for (int i = 0; i < n; i++) {
		if (!inputs[i] || stat(inputs[i], &in) < 0)
			continue;
		if (in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
			if (!strcmp(inputs[i], path))
				snprintf(err, errlen,
					 "%s: the output is also an input; refusing to overwrite it", path);
			else
				snprintf(err, errlen,
					 "%s: the output is the input %s (the same file); refusing to overwrite it",
					 path, inputs[i]);
			return -1;
		}
	}
	return 0;
}

static void outfile_free(struct ct_outfile *o)
{
	free(o->path);
	free(o->target);
	free(o->tmp);
	o->path = o->target = o->tmp = NULL;
	o->f = NULL;
}

int ct_outfile_open(struct ct_outfile *o, const char *path, char *err, size_t errlen)
{
	struct stat st;
	char real[PATH_MAX];
	const char *target = path, *slash;
	mode_t mode, mask;
	int fd;

	memset(o, 0, sizeof *o);
	if (!strcmp(path, "-")) {
		o->f = stdout;
		o->is_stdout = true;
		return 0;
	}
	o->path = strdup(path);
	if (!o->path)
		goto nomem;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "%s: is a directory (the output is one file)", path);
			outfile_free(o);
			return -1;
		}
		/* a device, FIFO or socket: nothing to replace, nothing to lose */
		o->f = fopen(path, "we");
		if (!o->f) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			outfile_free(o);
			return -1;
		}
		return 0;
	}
	/* a symbolic link to a file: the file is replaced, the link kept */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && realpath(path, real))
		target = real;
	if (stat(target, &st) == 0) {
		mode = st.st_mode & 07777;
	} else {
		mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	o->target = strdup(target);
	slash = strrchr(target, '/');
	size_t dirlen = slash ? (size_t)(slash - target) + 1 : 0;
	size_t need = dirlen + 1 + strlen(target + dirlen) + 8 + 1;
	o->tmp = malloc(need);
	if (!o->target || !o->tmp)
		goto nomem;
	snprintf(o->tmp, need, "%.*s.%s.XXXXXX", (int)dirlen, target, target + dirlen);
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot create a temporary file next to it: %s", path, strerror(e));
		outfile_free(o);
		return -1;
	}
	if (fchmod(fd, mode) < 0 || !(o->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		snprintf(err, errlen, "%s: %s", o->tmp, strerror(e));
		outfile_free(o);
		return -1;
	}
	return 0;

nomem:
	snprintf(err, errlen, "out of memory");
	outfile_free(o);
	return -1;
}

int ct_outfile_commit(struct ct_outfile *o, char *err, size_t errlen)
{
	const char *name = o->path ? o->path : "standard output";
	int e = 0;

	if (fflush(o->f) != 0 || ferror(o->f))
		e = errno ? errno : EIO;
	if (o->is_stdout) {
		o->f = NULL;
		if (e)
			snprintf(err, errlen, "%s: write error: %s", name, strerror(e));
		return e ? -1 : 0;
	}
	if (!e && o->tmp && fsync(fileno(o->f)) < 0 && errno != EINVAL)
		e = errno;
	if (fclose(o->f) != 0 && !e)
		e = errno;
	o->f = NULL;
	if (!e && o->tmp && rename(o->tmp, o->target) < 0)
		e = errno;
	if (e) {
		if (o->tmp) {
			unlink(o->tmp);
			snprintf(err, errlen, "%s: write error: %s (the file was left as it was)", name,
				 strerror(e));
		} else {
			snprintf(err, errlen, "%s: write error: %s", name, strerror(e));
		}
		outfile_free(o);
		return -1;
	}
	outfile_free(o);
	return 0;
}

bool ct_outfile_discard(struct ct_outfile *o)
{
	bool untouched = o->tmp != NULL;

	if (o->f && !o->is_stdout)
		fclose(o->f);
	else if (o->f)
		fflush(o->f);
	if (o->tmp)
		unlink(o->tmp);
	outfile_free(o);
	return untouched;
}
