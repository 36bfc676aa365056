#define _GNU_SOURCE 1
/*
 * The files a one-file cutrace carries: libcutrace.so and cutrace-probe.
 *
 * The one-file build (tracer/CMakeLists.txt, target cutrace_onefile) links
 * embed_blobs.c, which places the two files in .rodata between the symbols
 * below; the ordinary build leaves the weak references NULL, and then this
 * file reports "nothing carried".  Before a run the carried file is written
 * into the run's trace directory, under .cutrace/, through a temporary name
 * and rename(): processes of an earlier run in the same directory keep the
 * inode they mapped, and the path stays valid for the program's whole tree
 * after cutrace exits.  A trace directory on a noexec file system cannot
 * hold a library to map or a program to exec, and one that others may write
 * to (group-writable, a sticky /tmp-like directory, a .cutrace that is a
 * link or not ours) must not hold code we run: the file then goes into a
 * memfd, named by /proc/<cutrace's pid>/fd/N, which is valid while cutrace
 * runs (it waits for the program; a process of the tree that outlives
 * cutrace and execs again then loads without the shim).
 */
#include "tracer.h"
#include "embed.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

extern const unsigned char ct_blob_shim[] __attribute__((weak));
extern const unsigned char ct_blob_shim_end[] __attribute__((weak));
extern const unsigned char ct_blob_probe[] __attribute__((weak));
extern const unsigned char ct_blob_probe_end[] __attribute__((weak));

struct blob {
	const char *name;
	const unsigned char *start, *end;
	mode_t mode;
};

static struct blob blob_of(enum ct_embed which)
{
	struct blob b = { "libcutrace.so", ct_blob_shim, ct_blob_shim_end, 0600 };

	if (which == CT_EMBED_PROBE) {
		b.name = "cutrace-probe";
		b.start = ct_blob_probe;
		b.end = ct_blob_probe_end;
		b.mode = 0700;
	}
	return b;
}

bool ct_embed_has(enum ct_embed which)
{
	struct blob b = blob_of(which);

	return b.start && b.end > b.start;
}

size_t ct_embed_size(enum ct_embed which)
{
	struct blob b = blob_of(which);

	return ct_embed_has(which) ? (size_t)(b.end - b.start) : 0;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* the blob in a memfd that stays open (not inherited) while cutrace runs */
static int to_memfd(const struct blob *b, char *out, size_t len, char *why, size_t whylen)
{
	int fd = (int)syscall(SYS_memfd_create, b->name, 1u /* MFD_CLOEXEC */);

	if (fd < 0) {
		snprintf(why, whylen, "memfd_create: %s", strerror(errno));
		return -1;
	}
	if (write_all(fd, b->start, (size_t)(b->end - b->start)) < 0 || fchmod(fd, b->mode) < 0) {
		snprintf(why, whylen, "writing a memfd: %s", strerror(errno));
		close(fd);
		return -1;
	}
	snprintf(out, len, "/proc/%d/fd/%d", (int)getpid(), fd);
	return 0;
}

/* a real directory (not a symbolic link), ours, writable by us alone */
static bool private_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}

int ct_embed_write(enum ct_embed which, const char *dir, char *out, size_t len, char *why, size_t whylen)
{
	struct blob b = blob_of(which);
	char sub[PATH_MAX], tmp[PATH_MAX + 32];
	struct statvfs vfs;
	int fd, n, err = 0;
	bool ok;

	if (!ct_embed_has(which)) {
		snprintf(why, whylen, "this cutrace carries no %s", b.name);
		return -1;
	}
	if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC))
		return to_memfd(&b, out, len, why, whylen);
	/* only a directory nobody else can write to may hold code the program
	 * will run: anyone who can rename entries there could swap the file */
	if (!private_dir(dir))
		return to_memfd(&b, out, len, why, whylen);
	n = snprintf(sub, sizeof sub, "%s/.cutrace", dir);
	if (n < 0 || (size_t)n >= sizeof sub || (size_t)n + 1 + strlen(b.name) >= len) {
		snprintf(why, whylen, "%s: path too long", dir);
		return -1;
	}
	if (mkdir(sub, 0700) < 0 && errno != EEXIST) {
		snprintf(why, whylen, "cannot create %s: %s", sub, strerror(errno));
		return -1;
	}
	if (!private_dir(sub))
		return to_memfd(&b, out, len, why, whylen);
	snprintf(tmp, sizeof tmp, "%s/.%s.%d", sub, b.name, (int)getpid());
	snprintf(out, len, "%s/%s", sub, b.name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, b.mode);
	if (fd < 0) {
		snprintf(why, whylen, "cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	ok = write_all(fd, b.start, (size_t)(b.end - b.start)) == 0 && fchmod(fd, b.mode) == 0;
	if (!ok)
		err = errno;
	if (close(fd) < 0 && ok) {
		ok = false;
		err = errno;
	}
	if (!ok) {
		snprintf(why, whylen, "cannot write %s: %s", tmp, strerror(err));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, out) < 0) {
		snprintf(why, whylen, "cannot rename %s to %s: %s", tmp, out, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}
