/*
 * Opening the trace directory safely (tracedir.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* AT_EMPTY_PATH, O_PATH */
#endif
#include "tracedir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef O_PATH
#define O_PATH 010000000
#endif

static int sys_openat(int dfd, const char *name, int flags)
{
	return (int)syscall(SYS_openat, dfd, name, flags, 0);
}

static int sys_fstat(int fd, struct stat *st)
{
#ifdef SYS_newfstatat
	return (int)syscall(SYS_newfstatat, fd, "", st, AT_EMPTY_PATH);
#else
	return (int)syscall(SYS_fstatat64, fd, "", st, AT_EMPTY_PATH);
#endif
}

static int sys_fstatat_nofollow(int dfd, const char *name, struct stat *st)
{
#ifdef SYS_newfstatat
	return (int)syscall(SYS_newfstatat, dfd, name, st, AT_SYMLINK_NOFOLLOW);
#else
	return (int)syscall(SYS_fstatat64, dfd, name, st, AT_SYMLINK_NOFOLLOW);
#endif
}

static void sys_close(int fd)
{
	if (fd >= 0)
		(void)syscall(SYS_close, fd);
}

/* the English text of the few errors met here (strerror may allocate) */
static const char *err_text(int e)
{
	switch (e) {
	case ENOENT: return "No such file or directory";
	case ENOTDIR: return "Not a directory";
	case EACCES: return "Permission denied";
	case EPERM: return "Operation not permitted";
	case ELOOP: return "Too many levels of symbolic links";
	case EROFS: return "Read-only file system";
	case ENOSPC: return "No space left on device";
	case ENAMETOOLONG: return "File name too long";
	case EEXIST: return "File exists";
	default: return "error";
	}
}

/* the part of path up to the end of the component that ends at end */
static int upto(const char *path, const char *end)
{
	return (int)(end - path);
}

int ct_tracedir_open(const char *path, int create, char *why, size_t whylen)
{
	const int oflags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	uid_t me = geteuid();
	struct stat st;
	const char *p = path;
	char name[256];
	int fd;

	if (!path || !*path) {
		snprintf(why, whylen, "empty trace directory");
		return -1;
	}
	fd = sys_openat(AT_FDCWD, *path == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "%s: %s", *path == '/' ? "/" : ".", err_text(errno));
		return -1;
	}
	for (;;) {
		const char *s, *e;
		size_t n;
		int next, last;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		s = p;
		for (e = s; *e && *e != '/'; e++)
			;
		p = e;
		n = (size_t)(e - s);
		if (n >= sizeof name) {
			snprintf(why, whylen, "%s: %s", path, err_text(ENAMETOOLONG));
			goto fail;
		}
		memcpy(name, s, n);
		name[n] = 0;
		if (!strcmp(name, "."))
			continue;
		{
			const char *q = e;
			while (*q == '/')
				q++;
			last = !*q;
		}
		next = sys_openat(fd, name, oflags);
		if (next < 0 && errno == ENOENT && last && create) {
			if (syscall(SYS_mkdirat, fd, name, 0700) < 0 && errno != EEXIST) {
				snprintf(why, whylen, "cannot create %s: %s", path, err_text(errno));
				goto fail;
			}
			next = sys_openat(fd, name, oflags);
		}
		if (next < 0 && (errno == ELOOP || errno == ENOTDIR) &&
		    sys_fstatat_nofollow(fd, name, &st) == 0 && S_ISLNK(st.st_mode)) {
			/* a symbolic link: followed only from a directory nobody
			 * else controls (fd is that directory) */
			struct stat d;
			if (sys_fstat(fd, &d) < 0 || (d.st_uid != 0 && d.st_uid != me) ||
			    (d.st_mode & (S_IWGRP | S_IWOTH))) {
				snprintf(why, whylen,
					 "%.*s is a symbolic link in a directory others can write to",
					 upto(path, e), path);
				goto fail;
			}
			next = sys_openat(fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		}
		if (next < 0) {
			snprintf(why, whylen, "%.*s: %s", upto(path, e), path, err_text(errno));
			goto fail;
		}
		sys_close(fd);
		fd = next;
		if (sys_fstat(fd, &st) < 0) {
			snprintf(why, whylen, "%.*s: %s", upto(path, e), path, err_text(errno));
			goto fail;
		}
		if (!S_ISDIR(st.st_mode)) {
			snprintf(why, whylen, "%.*s is not a directory", upto(path, e), path);
			goto fail;
		}
		if (st.st_uid != me && st.st_uid != 0) {
			snprintf(why, whylen, "%.*s belongs to another user (uid %u)%s", upto(path, e), path,
				 (unsigned)st.st_uid, last ? "" : ", who could rename what lies below it");
			goto fail;
		}
		if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
			snprintf(why, whylen, "%.*s is world-writable without the sticky bit", upto(path, e),
				 path);
			goto fail;
		}
	}
	/* the path's own last directory (or "/" / "." alone) */
	if (sys_fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, whylen, "%s is not a directory", path);
		goto fail;
	}
	return fd;
fail:
	sys_close(fd);
	return -1;
}
