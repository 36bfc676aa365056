/*
 * What the driver does before it opens a node: stat and access of the kernel
 * module's files, mknod/chmod/chown/unlink of /dev/nvidia*, the /dev/char
 * link, the nvidia-modprobe helper (common/hooks.def, format.h
 * CUTRACE_CALLS_FS).
 *
 * Real libcuda 535 as root on a machine without the module (strace, and
 * readelf --dyn-syms for the names it imports): access("/sys/module/nvidia/
 * initstate"), __xstat64("/usr/bin/nvidia-modprobe"), __xstat64("/dev/
 * nvidiactl") = ENOENT, __xmknod("/dev/nvidiactl", S_IFCHR|0666, 195:255),
 * chmod 0666, chown 0:0, unlink + symlink("../nvidiactl", "/dev/char/
 * 195:255"), then open = ENXIO.  Programs built on glibc 2.33 or later call
 * stat and mknod by those names, so both generations are hooked.
 *
 * libcuda reads /proc/driver/nvidia/params and /proc/devices with fopen,
 * whose open inside libc no hook sees: fopen and fopen64 are hooked too, and
 * remove (libcuda imports it next to unlink).
 *
 * Only the paths of ct_fs_watched are recorded.  Every other call costs the
 * test of its first two bytes ("/d", "/p", "/s", "/u", "/b" go on to a
 * prefix compare) on top of the real call.  Before the real functions are
 * resolved, or where libc lacks one (stat before glibc 2.33), the hooks make
 * the system call.
 */
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ---- the real calls ------------------------------------------------------- */
static int real_stat(unsigned call, int ver, const char *path, struct stat *st)
{
	switch (call) {
	case CT_CALL___xstat:
		if (ct_real.__xstat)
			return ct_real.__xstat(ver, path, st);
		break;
	case CT_CALL___xstat64:
		if (ct_real.__xstat64)
			return ct_real.__xstat64(ver, path, st);
		break;
	case CT_CALL_stat:
		if (ct_real.stat)
			return ct_real.stat(path, st);
		break;
	case CT_CALL_stat64:
		if (ct_real.stat64)
			return ct_real.stat64(path, st);
		break;
	}
	/* the kernel's struct stat is glibc's on x86-64 and AArch64 */
	return ct_sys_fstatat(AT_FDCWD, path, st, 0);
}

static int real_mknod(unsigned call, int dirfd, const char *path, mode_t mode, dev_t dev, int ver)
{
	switch (call) {
	case CT_CALL___xmknod:
		if (ct_real.__xmknod)
			return ct_real.__xmknod(ver, path, mode, &dev);
		break;
	case CT_CALL_mknod:
		if (ct_real.mknod)
			return ct_real.mknod(path, mode, dev);
		break;
	case CT_CALL_mknodat:
		if (ct_real.mknodat)
			return ct_real.mknodat(dirfd, path, mode, dev);
		break;
	}
	if (call != CT_CALL_mknodat)
		dirfd = AT_FDCWD;
	return (int)syscall(SYS_mknodat, dirfd, path, mode, dev);
}

static int real_access(const char *path, int mode)
{
	if (likely(ct_real.access != NULL))
		return ct_real.access(path, mode);
	return (int)syscall(SYS_faccessat, AT_FDCWD, path, mode, 0);
}

static int real_chmod(const char *path, mode_t mode)
{
	if (likely(ct_real.chmod != NULL))
		return ct_real.chmod(path, mode);
	return (int)syscall(SYS_fchmodat, AT_FDCWD, path, mode);
}

static int real_chown(const char *path, uid_t u, gid_t g)
{
	if (likely(ct_real.chown != NULL))
		return ct_real.chown(path, u, g);
	return (int)syscall(SYS_fchownat, AT_FDCWD, path, u, g, 0);
}

static int real_unlink(const char *path)
{
	if (likely(ct_real.unlink != NULL))
		return ct_real.unlink(path);
	return (int)syscall(SYS_unlinkat, AT_FDCWD, path, 0);
}

static int real_remove(const char *path)
{
	if (likely(ct_real.remove != NULL))
		return ct_real.remove(path);
	/* remove is unlink, or rmdir for a directory */
	if (syscall(SYS_unlinkat, AT_FDCWD, path, 0) == 0)
		return 0;
	return errno == EISDIR ? (int)syscall(SYS_unlinkat, AT_FDCWD, path, AT_REMOVEDIR) : -1;
}

/* fopen has no system call to fall back on: resolve first */
static void *real_fopen(unsigned call, const char *path, const char *mode)
{
	void *(*f)(const char *, const char *) = call == CT_CALL_fopen ? ct_real.fopen : ct_real.fopen64;

	if (unlikely(!f)) {
		ct_resolve();
		f = call == CT_CALL_fopen ? ct_real.fopen : ct_real.fopen64;
		if (!f)
			f = ct_real.fopen ? ct_real.fopen : ct_real.fopen64;
	}
	if (unlikely(!f)) {
		errno = EAGAIN;
		return NULL;
	}
	return f(path, mode);
}

static int real_symlink(const char *target, const char *link)
{
	if (likely(ct_real.symlink != NULL))
		return ct_real.symlink(target, link);
	return (int)syscall(SYS_symlinkat, target, AT_FDCWD, link);
}

/* ---- recording -------------------------------------------------------------- */
/* the arguments besides the path, as fields of the enter record */
struct fs_args {
	const char *target; /* symlink */
	int dirfd;
	bool has_dirfd, has_mode, has_rdev, has_arg, has_arg2;
	uint32_t mode;
	uint64_t rdev;
	int64_t arg, arg2;
};

#define PATH_CAP 512u

/* the enter record; its seq, or UINT64_MAX when nothing was recorded */
static uint64_t fs_enter(unsigned call, const char *path, const struct fs_args *a)
{
	struct ct_w w;
	uint32_t psz = ct_strsz(path, PATH_CAP) + (a->target ? ct_strsz(a->target, PATH_CAP) : 0) +
		       (a->has_dirfd ? ct_fsz(4) : 0) + (a->has_mode ? ct_fsz(4) : 0) +
		       (a->has_rdev ? ct_fsz(8) : 0) + (a->has_arg ? ct_fsz(8) : 0) +
		       (a->has_arg2 ? ct_fsz(8) : 0);

	if (!ct_w_begin(&w, CT_REC_ENTER, call, psz, 0))
		return UINT64_MAX;
	if (a->has_dirfd)
		ct_w_u32(&w, CT_FLD_DIRFD, (uint32_t)a->dirfd);
	ct_w_str(&w, CT_FLD_PATH, path, PATH_CAP);
	if (a->target)
		ct_w_str(&w, CT_FLD_TARGET, a->target, PATH_CAP);
	if (a->has_mode)
		ct_w_u32(&w, CT_FLD_MODE, a->mode);
	if (a->has_rdev)
		ct_w_u64(&w, CT_FLD_RDEV, a->rdev);
	if (a->has_arg)
		ct_w_i64(&w, CT_FLD_ARG, a->arg);
	if (a->has_arg2)
		ct_w_i64(&w, CT_FLD_ARG2, a->arg2);
	ct_w_commit(&w);
	return w.s.seq;
}

/* the exit record; err: 0 when the call succeeded; st: what a stat that
 * succeeded found */
static void fs_exit(unsigned call, uint64_t seq, int r, int err, const struct stat *st)
{
	struct ct_w w;
	bool chr = st && S_ISCHR(st->st_mode);

	if (seq == UINT64_MAX ||
	    !ct_w_begin(&w, CT_REC_EXIT, call, (st ? ct_fsz(4) : 0) + (chr ? ct_fsz(8) : 0), 0))
		return;
	ct_w_exit(&w, seq, r, err);
	if (st) {
		ct_w_u32(&w, CT_FLD_MODE, (uint32_t)st->st_mode);
		if (chr)
			ct_w_u64(&w, CT_FLD_RDEV, ((uint64_t)major(st->st_rdev) << 32) | minor(st->st_rdev));
	}
	ct_w_commit(&w);
}

static __attribute__((noinline)) int stat_slow(unsigned call, int ver, const char *path, struct stat *st)
{
	struct fs_args a = { 0 };
	uint64_t seq;
	int r, err = errno;

	if (!ct_aside_on())
		return real_stat(call, ver, path, st);
	seq = fs_enter(call, path, &a);
	errno = err;
	r = real_stat(call, ver, path, st);
	err = errno;
	fs_exit(call, seq, r, r < 0 ? err : 0, r == 0 ? st : NULL);
	errno = err;
	return r;
}

static __attribute__((noinline)) int mknod_slow(unsigned call, int dirfd, const char *path, mode_t mode,
						dev_t dev, int ver)
{
	struct fs_args a = { .dirfd = dirfd,
			     .has_dirfd = call == CT_CALL_mknodat,
			     .has_mode = true,
			     .mode = (uint32_t)mode,
			     .has_rdev = true,
			     .rdev = ((uint64_t)major(dev) << 32) | minor(dev) };
	uint64_t seq;
	int r, err = errno;

	if (!ct_aside_on())
		return real_mknod(call, dirfd, path, mode, dev, ver);
	seq = fs_enter(call, path, &a);
	errno = err;
	r = real_mknod(call, dirfd, path, mode, dev, ver);
	err = errno;
	fs_exit(call, seq, r, r < 0 ? err : 0, NULL);
	errno = err;
	return r;
}

/* access, chmod, chown, unlink, symlink: one shape */
enum {
	OP_ACCESS,
	OP_CHMOD,
	OP_CHOWN,
	OP_UNLINK,
	OP_SYMLINK,
	OP_REMOVE
};

static int real_op(int op, const char *path, const char *target, int64_t x, int64_t y)
{
	switch (op) {
	case OP_ACCESS: return real_access(path, (int)x);
	case OP_CHMOD: return real_chmod(path, (mode_t)x);
	case OP_CHOWN: return real_chown(path, (uid_t)x, (gid_t)y);
	case OP_UNLINK: return real_unlink(path);
	case OP_REMOVE: return real_remove(path);
	default: return real_symlink(target, path);
	}
}

static __attribute__((noinline)) int op_slow(unsigned call, int op, const char *path, const char *target,
					     int64_t x, int64_t y)
{
	struct fs_args a = { .target = target };
	uint64_t seq;
	int r, err = errno;

	if (!ct_aside_on())
		return real_op(op, path, target, x, y);
	if (op == OP_CHMOD) {
		a.has_mode = true;
		a.mode = (uint32_t)x;
	} else if (op == OP_ACCESS || op == OP_CHOWN) {
		a.has_arg = true;
		a.arg = x;
		a.has_arg2 = op == OP_CHOWN;
		a.arg2 = y;
	}
	seq = fs_enter(call, path, &a);
	errno = err;
	r = real_op(op, path, target, x, y);
	err = errno;
	fs_exit(call, seq, r, r < 0 ? err : 0, NULL);
	errno = err;
	return r;
}

static __attribute__((noinline)) void *fopen_slow(unsigned call, const char *path, const char *mode)
{
	struct ct_w w;
	uint64_t seq = UINT64_MAX;
	void *f;
	int err = errno;

	if (!ct_aside_on())
		return real_fopen(call, path, mode);
	if (ct_w_begin(&w, CT_REC_ENTER, call, ct_strsz(path, PATH_CAP) + ct_strsz(mode, 16), 0)) {
		ct_w_str(&w, CT_FLD_PATH, path, PATH_CAP);
		if (mode)
			ct_w_str(&w, CT_FLD_TEXT, mode, 16);
		ct_w_commit(&w);
		seq = w.s.seq;
	}
	errno = err;
	f = real_fopen(call, path, mode);
	err = errno;
	fs_exit(call, seq, f != NULL, f ? 0 : err, NULL);
	errno = err;
	return f;
}

/* ---- the hooks (asm names: glibc's headers declare some of these inline,
 * and others only before or after 2.33) -------------------------------------- */
CT_EXPORT int hook___xstat(int ver, const char *path, struct stat *st) __asm__("__xstat");
CT_EXPORT int hook___xstat64(int ver, const char *path, struct stat *st) __asm__("__xstat64");
CT_EXPORT int hook_stat(const char *path, struct stat *st) __asm__("stat");
CT_EXPORT int hook_stat64(const char *path, struct stat *st) __asm__("stat64");
CT_EXPORT int hook_access(const char *path, int mode) __asm__("access");
CT_EXPORT int hook___xmknod(int ver, const char *path, mode_t mode, dev_t *dev) __asm__("__xmknod");
CT_EXPORT int hook_mknod(const char *path, mode_t mode, dev_t dev) __asm__("mknod");
CT_EXPORT int hook_mknodat(int dirfd, const char *path, mode_t mode, dev_t dev) __asm__("mknodat");
CT_EXPORT int hook_chmod(const char *path, mode_t mode) __asm__("chmod");
CT_EXPORT int hook_chown(const char *path, uid_t u, gid_t g) __asm__("chown");
CT_EXPORT int hook_unlink(const char *path) __asm__("unlink");
CT_EXPORT int hook_symlink(const char *target, const char *link) __asm__("symlink");
CT_EXPORT int hook_remove(const char *path) __asm__("remove");
CT_EXPORT void *hook_fopen(const char *path, const char *mode) __asm__("fopen");
CT_EXPORT void *hook_fopen64(const char *path, const char *mode) __asm__("fopen64");

#define FAST_STAT(call, ver, path, st)                                                                       \
	do {                                                                                                 \
		if (likely(!ct_fs_watched(path)))                                                            \
			return real_stat(call, ver, path, st);                                               \
		return stat_slow(call, ver, path, st);                                                       \
	} while (0)

int hook___xstat(int ver, const char *path, struct stat *st)
{
	FAST_STAT(CT_CALL___xstat, ver, path, st);
}
int hook___xstat64(int ver, const char *path, struct stat *st)
{
	FAST_STAT(CT_CALL___xstat64, ver, path, st);
}
int hook_stat(const char *path, struct stat *st)
{
	FAST_STAT(CT_CALL_stat, 0, path, st);
}
int hook_stat64(const char *path, struct stat *st)
{
	FAST_STAT(CT_CALL_stat64, 0, path, st);
}

int hook___xmknod(int ver, const char *path, mode_t mode, dev_t *dev)
{
	dev_t d = dev ? *dev : 0;

	if (likely(!ct_fs_watched(path)))
		return real_mknod(CT_CALL___xmknod, AT_FDCWD, path, mode, d, ver);
	return mknod_slow(CT_CALL___xmknod, AT_FDCWD, path, mode, d, ver);
}

int hook_mknod(const char *path, mode_t mode, dev_t dev)
{
	if (likely(!ct_fs_watched(path)))
		return real_mknod(CT_CALL_mknod, AT_FDCWD, path, mode, dev, 0);
	return mknod_slow(CT_CALL_mknod, AT_FDCWD, path, mode, dev, 0);
}

/* mknodat: a path relative to dirfd is not recognised (libcuda gives absolute ones) */
int hook_mknodat(int dirfd, const char *path, mode_t mode, dev_t dev)
{
	if (likely(!ct_fs_watched(path)))
		return real_mknod(CT_CALL_mknodat, dirfd, path, mode, dev, 0);
	return mknod_slow(CT_CALL_mknodat, dirfd, path, mode, dev, 0);
}

int hook_access(const char *path, int mode)
{
	if (likely(!ct_fs_watched(path)))
		return real_access(path, mode);
	return op_slow(CT_CALL_access, OP_ACCESS, path, NULL, mode, 0);
}

int hook_chmod(const char *path, mode_t mode)
{
	if (likely(!ct_fs_watched(path)))
		return real_chmod(path, mode);
	return op_slow(CT_CALL_chmod, OP_CHMOD, path, NULL, mode, 0);
}

int hook_chown(const char *path, uid_t u, gid_t g)
{
	if (likely(!ct_fs_watched(path)))
		return real_chown(path, u, g);
	return op_slow(CT_CALL_chown, OP_CHOWN, path, NULL, (int64_t)u, (int64_t)g);
}

int hook_unlink(const char *path)
{
	if (likely(!ct_fs_watched(path)))
		return real_unlink(path);
	return op_slow(CT_CALL_unlink, OP_UNLINK, path, NULL, 0, 0);
}

/* the link is the path that says what it is (/dev/char/195:255) */
int hook_symlink(const char *target, const char *link)
{
	if (likely(!ct_fs_watched(link)))
		return real_symlink(target, link);
	return op_slow(CT_CALL_symlink, OP_SYMLINK, link, target, 0, 0);
}

int hook_remove(const char *path)
{
	if (likely(!ct_fs_watched(path)))
		return real_remove(path);
	return op_slow(CT_CALL_remove, OP_REMOVE, path, NULL, 0, 0);
}

void *hook_fopen(const char *path, const char *mode)
{
	if (likely(!ct_fs_watched(path)))
		return real_fopen(CT_CALL_fopen, path, mode);
	return fopen_slow(CT_CALL_fopen, path, mode);
}

void *hook_fopen64(const char *path, const char *mode)
{
	if (likely(!ct_fs_watched(path)))
		return real_fopen(CT_CALL_fopen64, path, mode);
	return fopen_slow(CT_CALL_fopen64, path, mode);
}
