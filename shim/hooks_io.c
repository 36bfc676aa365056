/*
 * The kernel boundary: open (all eight entry points), close and ioctl.
 *
 * Only /dev/nvidia* paths, other /dev character devices with an NVIDIA major,
 * and the fds they returned are recorded, and (since format 1.5) opens of the
 * module's files, /proc/driver/nvidia*, /proc/devices, /proc/modules and
 * /sys/module/nvidia* (their fds are not kept).  Every other call costs one
 * load of ct_fdnode[] (close, ioctl) or a prefix test (open: the second byte,
 * then /dev/ or the module's files) on top of the real call.  FORTIFY builds
 * reach the kernel through __open_2 and friends, so those are hooked too
 * (buildsome issue #94).
 *
 * ABI note: these definitions are not variadic.  On x86-64 and AArch64 Linux
 * a variadic argument of integer or pointer type travels in the same register
 * as a fixed one, so reading ioctl's third argument or open's mode as a fixed
 * parameter is exact (and saves the va_list set-up on the hot path).  The
 * mode is only used when O_CREAT or O_TMPFILE says it was passed.  Other
 * architectures get the portable variadic definitions.
 */
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#if !defined(__x86_64__) && !defined(__aarch64__)
#define CT_VARIADIC_HOOKS 1
#endif

uint32_t ct_fdnode[CT_MAX_FDS];

#define NODE(kind, minor) (((uint32_t)(kind) << 16) | ((uint32_t)(minor) & 0xffffu))

static bool has_mode(int flags)
{
	return (flags & O_CREAT) || ((flags & O_TMPFILE) == O_TMPFILE);
}

static inline bool is_dev_path(const char *p)
{
	return p && p[0] == '/' && p[1] == 'd' && p[2] == 'e' && p[3] == 'v' && p[4] == '/';
}

/* a path open_dev looks at more closely: /dev/..., or one of the NVIDIA
 * module's files under /proc or /sys (ct_fs_watched); one test of p[1] for
 * most other paths */
static inline __attribute__((always_inline)) bool open_looked_at(const char *p)
{
	if (!p || p[0] != '/')
		return false;
	switch (p[1]) {
	case 'd': return p[2] == 'e' && p[3] == 'v' && p[4] == '/';
	case 'p':
	case 's': return ct_fs_watched(p);
	default: return false;
	}
}

/* parse a decimal suffix; -1 when s is not all digits */
static int num(const char *s)
{
	int v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 100000)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

uint32_t ct_classify_path(const char *path)
{
	const char *n;
	int v;

	if (!is_dev_path(path))
		return 0;
	/* WSL2: CUDA reaches the Windows driver through /dev/dxg (catalog G3) */
	if (path[5] == 'd' && !strcmp(path + 5, "dxg"))
		return NODE(CT_NODE_DXG, 0);
	if (strncmp(path + 5, "nvidia", 6))
		return 0;
	n = path + 11;
	if (!strcmp(n, "ctl"))
		return NODE(CT_NODE_CTL, 255);
	if (!strcmp(n, "-uvm"))
		return NODE(CT_NODE_UVM, 0);
	if (!strcmp(n, "-uvm-tools"))
		return NODE(CT_NODE_UVM_TOOLS, 1);
	if (!strcmp(n, "-modeset"))
		return NODE(CT_NODE_MODESET, 254);
	if (!strncmp(n, "-caps-imex-channels/channel", 27))
		return NODE(CT_NODE_IMEX, (v = num(n + 27)) >= 0 ? v : 0);
	if (!strncmp(n, "-caps/nvidia-cap", 16))
		return NODE(CT_NODE_CAPS, (v = num(n + 16)) >= 0 ? v : 0);
	if (!strncmp(n, "-nvswitch", 9) || !strncmp(n, "-nvlink", 7))
		return NODE(CT_NODE_NVSWITCH, (v = num(n + (n[2] == 'v' && n[3] == 's' ? 9 : 7))) >= 0 ? v : 0);
	if ((v = num(n)) >= 0 && v < 256)
		return NODE(CT_NODE_GPU, v);
	return NODE(CT_NODE_OTHER, 0);
}

/*
 * NVIDIA device majors: 195 is fixed (nvidia, nvidiactl); nvidia-uvm,
 * nvidia-caps and the others are dynamic and read once from /proc/devices
 * (tracer/decode/ABI.md §8).  Used to recognise a renamed or bind-mounted node.
 */
static int uvm_major = -1, caps_major = -1, nvswitch_major = -1, imex_major = -1;
static int majors_read;

static void read_majors(void)
{
	char buf[4096], *line, *nl;

	if (__atomic_exchange_n(&majors_read, 1, __ATOMIC_ACQ_REL))
		return;
	if (ct_read_file("/proc/devices", buf, sizeof buf) <= 0)
		return;
	for (line = buf; line && *line; line = nl) {
		int maj = 0;
		char *p = line;
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = 0;
		while (*p == ' ')
			p++;
		while (*p >= '0' && *p <= '9')
			maj = maj * 10 + (*p++ - '0');
		while (*p == ' ')
			p++;
		if (!strcmp(p, "nvidia-uvm"))
			uvm_major = maj;
		else if (!strcmp(p, "nvidia-caps"))
			caps_major = maj;
		else if (!strcmp(p, "nvidia-nvswitch") || !strcmp(p, "nvidia-nvlink"))
			nvswitch_major = maj;
		else if (!strcmp(p, "nvidia-caps-imex-channels"))
			imex_major = maj;
	}
}

static uint32_t classify_rdev(dev_t rdev)
{
	unsigned maj = major(rdev), min = minor(rdev);

	if (maj == 195) {
		if (min == 255)
			return NODE(CT_NODE_CTL, 255);
		if (min == 254)
			return NODE(CT_NODE_MODESET, 254);
		return NODE(CT_NODE_GPU, min);
	}
	read_majors();
	if ((int)maj == uvm_major)
		return NODE(min ? CT_NODE_UVM_TOOLS : CT_NODE_UVM, min);
	if ((int)maj == caps_major)
		return NODE(CT_NODE_CAPS, min);
	if ((int)maj == nvswitch_major)
		return NODE(CT_NODE_NVSWITCH, min);
	if ((int)maj == imex_major)
		return NODE(CT_NODE_IMEX, min);
	return 0;
}

/* the n bytes of lit at p, byte by byte: the first difference stops it, so
 * it never reads past p's NUL; inlined, no libc call */
static inline __attribute__((always_inline)) bool lit_at(const char *p, const char *lit, size_t n)
{
#pragma GCC unroll 16
	for (size_t i = 0; i < n; i++)
		if (p[i] != lit[i])
			return false;
	return true;
}

/* /dev paths that are never NVIDIA nodes and are opened often: the open
 * hook passes them through as it does any other path (n counts a literal's
 * NUL where the name must end there) */
static inline __attribute__((always_inline)) bool dev_boring(const char *p)
{
	p += 5;
	switch (p[0]) {
	case 'n': return lit_at(p, "null", 5);
	case 'z': return lit_at(p, "zero", 5);
	case 'u': return lit_at(p, "urandom", 8);
	case 'r': return lit_at(p, "random", 7);
	case 's': return lit_at(p, "shm/", 4) || lit_at(p, "std", 3);
	case 'p': return lit_at(p, "pts/", 4);
	case 't': return lit_at(p, "tty", 4);
	case 'f': return lit_at(p, "fd/", 3);
	case 'm': return lit_at(p, "mqueue/", 7);
	case 'h': return lit_at(p, "hugepages/", 10);
	default: return false;
	}
}

static int real_fstat(int fd, struct stat *st)
{
	if (ct_real.fstat)
		return ct_real.fstat(fd, st);
	return (int)syscall(SYS_fstat, fd, st);
}

/* what the open fd is by its device number: an NVIDIA node word, 0 none */
static uint32_t node_of_fd(int fd)
{
	struct stat st;

	return real_fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) ? classify_rdev(st.st_rdev) : 0;
}

/* ---- the real open, whichever entry point the program used -------------- */
static int call_real_open(unsigned call, int dirfd, const char *path, int flags, mode_t mode)
{
	switch (call) {
	case CT_CALL_open:
		if (ct_real.open) return ct_real.open(path, flags, mode);
		break;
	case CT_CALL_open64:
		if (ct_real.open64) return ct_real.open64(path, flags, mode);
		break;
	case CT_CALL_openat:
		if (ct_real.openat) return ct_real.openat(dirfd, path, flags, mode);
		break;
	case CT_CALL_openat64:
		if (ct_real.openat64) return ct_real.openat64(dirfd, path, flags, mode);
		break;
	case CT_CALL___open_2:
		if (ct_real.__open_2) return ct_real.__open_2(path, flags);
		break;
	case CT_CALL___open64_2:
		if (ct_real.__open64_2) return ct_real.__open64_2(path, flags);
		break;
	case CT_CALL___openat_2:
		if (ct_real.__openat_2) return ct_real.__openat_2(dirfd, path, flags);
		break;
	case CT_CALL___openat64_2:
		if (ct_real.__openat64_2) return ct_real.__openat64_2(dirfd, path, flags);
		break;
	}
	/* before resolution (another library's constructor): the system call */
	if (call == CT_CALL_open || call == CT_CALL_open64 || call == CT_CALL___open_2 ||
	    call == CT_CALL___open64_2)
		dirfd = AT_FDCWD;
	return (int)syscall(SYS_openat, dirfd, path, flags | O_LARGEFILE, mode);
}

static void forget_fd(int fd)
{
	if ((unsigned)fd < CT_MAX_FDS && unlikely(ct_fdnode[fd]))
		__atomic_store_n(&ct_fdnode[fd], 0, __ATOMIC_RELAXED);
}

int ct_inject_open(unsigned call, const char *path, int flags, int *err, uint32_t *rule,
		   uint64_t *delay_ns) CT_HIDDEN;
void ct_sleep_ns(uint64_t ns) CT_HIDDEN;

static bool is_at(unsigned call)
{
	return call == CT_CALL_openat || call == CT_CALL_openat64 || call == CT_CALL___openat_2 ||
	       call == CT_CALL___openat64_2;
}

/* The enter record of an open; false when nothing is recorded.  ct_w_begin
 * creates the trace file (first event of the process) before it stamps the
 * record, so the call's duration never includes that. */
static bool open_enter(struct ct_w *w, unsigned call, int dirfd, const char *path, int flags,
		       mode_t mode, uint32_t node, uint32_t rflags)
{
	bool at = is_at(call);
	uint32_t psz = ct_strsz(path, 1024) + ct_fsz(4) * 2 + (has_mode(flags) ? ct_fsz(4) : 0) +
		       (at ? ct_fsz(4) : 0);

	if (!ct_w_begin(w, CT_REC_ENTER, call, psz, rflags))
		return false;
	ct_w_str(w, CT_FLD_PATH, path, 1024);
	if (at)
		ct_w_u32(w, CT_FLD_DIRFD, (uint32_t)dirfd);
	ct_w_u32(w, CT_FLD_OFLAGS, (uint32_t)flags);
	if (has_mode(flags))
		ct_w_u32(w, CT_FLD_MODE, (uint32_t)mode);
	ct_w_u32(w, CT_FLD_NODE, node);
	ct_w_commit(w);
	return true;
}

static void open_exit(unsigned call, uint64_t seq, uint32_t node, int fd, int err, uint32_t inj_rule,
		      int injected /* CT_INJ_* */)
{
	struct ct_w w;
	struct stat st;
	uint64_t rdev = 0;
	bool have_rdev = false;

	if (fd >= 0 && real_fstat(fd, &st) == 0 && S_ISCHR(st.st_mode)) {
		rdev = ((uint64_t)major(st.st_rdev) << 32) | minor(st.st_rdev);
		have_rdev = true;
	}
	if (!ct_w_begin(&w, CT_REC_EXIT, call,
			ct_fsz(4) + (have_rdev ? ct_fsz(8) : 0) + (injected ? ct_fsz(8) : 0),
			injected ? CT_RF_INJECTED : 0))
		return;
	ct_w_exit(&w, seq, fd, fd < 0 ? err : 0);
	ct_w_u32(&w, CT_FLD_NODE, node);
	if (have_rdev)
		ct_w_u64(&w, CT_FLD_RDEV, rdev);
	if (injected) {
		uint32_t inj[2] = { inj_rule, (uint32_t)injected };
		ct_w_field(&w, CT_FLD_INJECT, inj, sizeof inj);
	}
	ct_w_commit(&w);
}

/* remember what an fd returned by a recorded open is */
static void note_fd(int fd, uint32_t node)
{
	if (fd < 0)
		return;
	if ((unsigned)fd < CT_MAX_FDS)
		__atomic_store_n(&ct_fdnode[fd], node ? node : NODE(CT_NODE_OTHER, 0), __ATOMIC_RELAXED);
	else
		ct_mark_degraded("an NVIDIA device fd above 65535 is not tracked: its ioctls are not recorded");
}

/*
 * Everything about an open that is not the plain pass-through.  A path that
 * names an NVIDIA node (or that an injection rule matches) is recorded on
 * entry, before the real call and before an injected delay, so an open that
 * hangs or dies shows as "entered, never returned".  A /dev node under
 * another name is only recognised by its device number once it is open:
 * recorded after the fact, its duration is not measured (nothing is added
 * to the open of a /dev file that turns out not to be NVIDIA's).
 */
static __attribute__((noinline)) int open_slow(unsigned call, int dirfd, const char *path, int flags,
					       mode_t mode)
{
	struct ct_w w;
	uint32_t node, rule = 0;
	uint64_t seq = 0, delay_ns = 0;
	int fd, err, inj_err = 0, inj;
	bool rec;

	ct_ensure_init();
	if (ct_busy || ct_cfg.disabled)
		return call_real_open(call, dirfd, path, flags, mode);
	node = ct_classify_path(path);
	/* 2: fail with inj_err instead of opening; 1: opened (after delay_ns) */
	inj = unlikely(ct_inj_active) ? ct_inject_open(call, path, flags, &inj_err, &rule, &delay_ns) : 0;
	if (!node && !inj && !is_dev_path(path) && ct_fs_watched(path)) {
		if (!ct_trace_active() || !ct_own_process()) {
			/* a process that has not touched CUDA (lsmod): no trace of its own */
			fd = call_real_open(call, dirfd, path, flags, mode);
			forget_fd(fd);
			return fd;
		}
		/* the module's files (/proc/driver/nvidia/..., /proc/devices,
		 * /sys/module/nvidia/...): recorded with node 0, the fd not kept */
		err = errno;
		rec = open_enter(&w, call, dirfd, path, flags, mode, 0, 0);
		if (rec)
			seq = w.s.seq;
		errno = err;
		fd = call_real_open(call, dirfd, path, flags, mode);
		err = errno;
		forget_fd(fd);
		if (rec)
			open_exit(call, seq, 0, fd, err, 0, 0);
		errno = err;
		return fd;
	}
	if (!node && !inj) {
		/* a /dev node under another name: keep it only if its major is NVIDIA's */
		fd = call_real_open(call, dirfd, path, flags, mode);
		if (fd < 0 || !is_dev_path(path) || dev_boring(path)) /* (with a rule active) */
			return fd;
		err = errno;
		node = node_of_fd(fd);
		if (!node || unlikely(!ct_own_process())) {
			forget_fd(fd);
			errno = err;
			return fd;
		}
		note_fd(fd, node);
		if (open_enter(&w, call, dirfd, path, flags, mode, node, 0))
			open_exit(call, w.s.seq, node, fd, 0, 0, 0);
		errno = err;
		return fd;
	}
	/* a vfork child: the fd map and the trace are its parent's */
	if (unlikely(!ct_own_process()))
		return call_real_open(call, dirfd, path, flags, mode);
	err = errno;
	rec = open_enter(&w, call, dirfd, path, flags, mode, node, inj ? CT_RF_INJECTED : 0);
	if (rec)
		seq = w.s.seq;
	/* delay= after the enter is in the file: a held open reads as one */
	if (delay_ns)
		ct_sleep_ns(delay_ns);
	if (inj == 2) {
		fd = -1;
		err = inj_err;
	} else {
		errno = err;
		fd = call_real_open(call, dirfd, path, flags, mode);
		err = errno;
		if (fd >= 0 && node == NODE(CT_NODE_OTHER, 0)) {
			/* a /dev/nvidia* name we do not know (a renamed node): its
			 * device number says what it is; the exit record carries that */
			uint32_t by_rdev = node_of_fd(fd);
			if (by_rdev)
				node = by_rdev;
		}
		note_fd(fd, node);
	}
	if (rec)
		open_exit(call, seq, node, fd, err, rule, inj == 2 ? CT_INJ_ERROR : inj == 1 ? CT_INJ_DELAY : 0);
	errno = err;
	return fd;
}

/* A /dev path, one of the NVIDIA module's files (ct_fs_watched), or any
 * path while an injection rule is active: one of the /dev files programs
 * open all the time goes straight through, the rest to open_slow.  Out of line, so that the hook's path for other files stays as
 * short as it was. */
static __attribute__((noinline)) int open_dev(unsigned call, int dirfd, const char *path, int flags,
					      mode_t mode)
{
	if (likely(!ct_inj_active) && is_dev_path(path) && dev_boring(path)) {
		int fd = call_real_open(call, dirfd, path, flags, mode);

		forget_fd(fd);
		return fd;
	}
	return open_slow(call, dirfd, path, flags, mode);
}

/* The fast path hands mode on as it came: libc and the kernel only read it
 * with O_CREAT/O_TMPFILE, so masking it here would cost instructions for
 * nothing.  open_slow records it only when has_mode(flags). */
#define FAST_OPEN(call, dirfd, path, flags, mode)                                                            \
	do {                                                                                                 \
		if (likely(!open_looked_at(path)) && likely(!ct_inj_active)) {                               \
			int fd_ = call_real_open(call, dirfd, path, flags, mode);                            \
			forget_fd(fd_);                                                                      \
			return fd_;                                                                          \
		}                                                                                            \
		return open_dev(call, dirfd, path, flags, has_mode(flags) ? (mode) : 0);                     \
	} while (0)

#ifdef CT_VARIADIC_HOOKS
#define MODE_ARG(flags, last) \
	mode_t mode = 0; \
	if (has_mode(flags)) { va_list ap; va_start(ap, last); mode = va_arg(ap, mode_t); va_end(ap); }
CT_EXPORT int open(const char *path, int flags, ...) { MODE_ARG(flags, flags) FAST_OPEN(CT_CALL_open, AT_FDCWD, path, flags, mode); }
CT_EXPORT int open64(const char *path, int flags, ...) { MODE_ARG(flags, flags) FAST_OPEN(CT_CALL_open64, AT_FDCWD, path, flags, mode); }
CT_EXPORT int openat(int d, const char *path, int flags, ...) { MODE_ARG(flags, flags) FAST_OPEN(CT_CALL_openat, d, path, flags, mode); }
CT_EXPORT int openat64(int d, const char *path, int flags, ...) { MODE_ARG(flags, flags) FAST_OPEN(CT_CALL_openat64, d, path, flags, mode); }
#else
/* see the ABI note at the top; asm names because <fcntl.h> declares the
 * variadic prototypes under the C names */
CT_EXPORT int hook_open(const char *path, int flags, mode_t mode) __asm__("open");
CT_EXPORT int hook_open64(const char *path, int flags, mode_t mode) __asm__("open64");
CT_EXPORT int hook_openat(int d, const char *path, int flags, mode_t mode) __asm__("openat");
CT_EXPORT int hook_openat64(int d, const char *path, int flags, mode_t mode) __asm__("openat64");
int hook_open(const char *path, int flags, mode_t mode) { FAST_OPEN(CT_CALL_open, AT_FDCWD, path, flags, mode); }
int hook_open64(const char *path, int flags, mode_t mode) { FAST_OPEN(CT_CALL_open64, AT_FDCWD, path, flags, mode); }
int hook_openat(int d, const char *path, int flags, mode_t mode) { FAST_OPEN(CT_CALL_openat, d, path, flags, mode); }
int hook_openat64(int d, const char *path, int flags, mode_t mode) { FAST_OPEN(CT_CALL_openat64, d, path, flags, mode); }
#endif

CT_EXPORT int __open_2(const char *path, int flags);
CT_EXPORT int __open64_2(const char *path, int flags);
CT_EXPORT int __openat_2(int d, const char *path, int flags);
CT_EXPORT int __openat64_2(int d, const char *path, int flags);
int __open_2(const char *path, int flags) { FAST_OPEN(CT_CALL___open_2, AT_FDCWD, path, flags, 0); }
int __open64_2(const char *path, int flags) { FAST_OPEN(CT_CALL___open64_2, AT_FDCWD, path, flags, 0); }
int __openat_2(int d, const char *path, int flags) { FAST_OPEN(CT_CALL___openat_2, d, path, flags, 0); }
int __openat64_2(int d, const char *path, int flags) { FAST_OPEN(CT_CALL___openat64_2, d, path, flags, 0); }

/* ---- close ---------------------------------------------------------------- */
static int real_close(int fd)
{
	if (likely(ct_real.close != NULL))
		return ct_real.close(fd);
	return (int)syscall(SYS_close, fd);
}

static __attribute__((noinline)) int close_slow(int fd, uint32_t node)
{
	struct ct_w w;
	uint64_t seq = 0;
	int r, err;
	bool rec;

	ct_ensure_init();
	/* a vfork child closes its own copy of the fd: the map (shared memory)
	 * and the trace are the parent's, whose fd stays open (a raw fork
	 * child is made a fork child here, and records its close) */
	if (unlikely(!ct_own_process()))
		return real_close(fd);
	/* forget first: once the kernel frees the number another thread may reuse it */
	__atomic_store_n(&ct_fdnode[fd], 0, __ATOMIC_RELAXED);
	if (ct_busy || ct_cfg.disabled)
		return real_close(fd);
	rec = ct_w_begin(&w, CT_REC_ENTER, CT_CALL_close, ct_fsz(4) * 2, 0);
	if (rec) {
		seq = w.s.seq;
		ct_w_u32(&w, CT_FLD_FD, (uint32_t)fd);
		ct_w_u32(&w, CT_FLD_NODE, node);
		ct_w_commit(&w);
	}
	r = real_close(fd);
	err = errno;
	if (rec && ct_w_begin(&w, CT_REC_EXIT, CT_CALL_close, 0, 0)) {
		ct_w_exit(&w, seq, r, r < 0 ? err : 0);
		ct_w_commit(&w);
	}
	errno = err;
	return r;
}

CT_EXPORT int close(int fd);
int close(int fd)
{
	uint32_t node = ct_fd_node(fd);

	if (likely(!node))
		return real_close(fd);
	return close_slow(fd, node);
}

/* ---- ioctl ---------------------------------------------------------------- */
int ct_ioctl_slow(int fd, uint32_t node, unsigned long req, void *arg) CT_HIDDEN;


/* An fd number can be recycled behind our back (dup2, close_range, a socket):
 * when an ioctl on a "known" fd does not look like an NVIDIA one, ask the
 * kernel what the fd is now. */
uint32_t ct_revalidate_fd(int fd) CT_HIDDEN;
uint32_t ct_revalidate_fd(int fd)
{
	uint32_t node = node_of_fd(fd);

	if ((unsigned)fd < CT_MAX_FDS)
		__atomic_store_n(&ct_fdnode[fd], node, __ATOMIC_RELAXED);
	return node;
}

#ifdef CT_VARIADIC_HOOKS
CT_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
#else
CT_EXPORT int hook_ioctl(int fd, unsigned long req, void *arg) __asm__("ioctl");
int hook_ioctl(int fd, unsigned long req, void *arg)
{
#endif
	uint32_t node = ct_fd_node(fd);

	if (likely(!node))
		return ct_real_ioctl(fd, req, arg);
	return ct_ioctl_slow(fd, node, req, arg);
}
