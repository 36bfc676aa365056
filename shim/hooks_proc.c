/*
 * The driver's helper processes (common/hooks.def, format.h
 * CUTRACE_CALLS_PROC): nvidia-modprobe (and modprobe) run by libcuda.
 *
 * Real libcuda 535.309.01 as an ordinary user, an NVIDIA PCI device and no
 * kernel module (strace -f; readelf --dyn-syms: it imports fork, execl,
 * execle, waitpid): stat("/usr/bin/nvidia-modprobe"), fork, in the child
 * execle("/usr/bin/nvidia-modprobe", ...) with no arguments and an empty
 * environment, in the parent waitpid(child); 11 times during one cuInit.
 * The helper is setuid root, so the loader drops LD_PRELOAD for it and what
 * it does stays invisible: the trace keeps what the caller saw.
 *
 * The exec happens in the fork child and the status arrives in the parent,
 * so the two meet in a page shared between them (MAP_SHARED, made before
 * the fork by the atfork prepare handler of a process that has a trace): the
 * child writes its pid, the path and arguments into a slot before it
 * exec's (and the errno if the exec returns); the parent's waitpid/wait4
 * finds the reaped pid there and writes one record with all of it.  A child
 * of vfork or of a raw clone, with no page, is not recorded.  posix_spawn*
 * of the helper is recorded by the parent directly.
 *
 * Cost for every other program: an exec of another path pays a compare of
 * its last component; waitpid/wait4 pay one load (is a slot in use) when
 * the page exists, nothing else.
 */
#include "shim.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

extern char **environ;

#define SLOTS    15
#define PATH_LEN 96
#define ARGS_LEN 152

struct slot {
	int32_t pid; /* 0: free */
	int32_t err; /* the exec's errno when it returned */
	char path[PATH_LEN];
	char args[ARGS_LEN];
};

struct page {
	uint32_t used; /* slots taken: the waits' only test */
	uint32_t pad;
	struct slot s[SLOTS];
};
_Static_assert(sizeof(struct page) <= 4096, "one page");

static struct page *page;

/* the helpers worth recording: a last path component nvidia-modprobe or
 * modprobe (libcuda runs modprobe itself as root) */
static bool helper(const char *path)
{
	const char *b;

	if (!path)
		return false;
	b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return b[0] == 'm' ? !strcmp(b, "modprobe") : b[0] == 'n' && !strcmp(b, "nvidia-modprobe");
}

static void make_page(void)
{
	void *p;

	if (page)
		return;
	p = mmap(NULL, sizeof *page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED)
		page = p;
}

/* trace.c's atfork prepare handler: only a process that touched CUDA */
void ct_proc_before_fork(void)
{
	if (!page && !ct_cfg.disabled && ct_trace_active() && ct_own_process())
		make_page();
}

/* argv[1..] space-separated into buf (bounded, "..." when cut) */
static void join_args(char *buf, size_t cap, char *const argv[])
{
	size_t n = 0, l;
	int i;

	buf[0] = 0;
	for (i = 1; argv && argv[i] && n + 1 < cap; i++) {
		l = strlen(argv[i]);
		if (n + (n > 0) + l + 1 > cap) {
			if (cap > 4)
				memcpy(buf + cap - 4, "...", 4);
			return;
		}
		if (n)
			buf[n++] = ' ';
		memcpy(buf + n, argv[i], l + 1);
		n += l;
	}
}

static void copy(char *dst, size_t cap, const char *src)
{
	size_t l = strlen(src);

	if (l >= cap)
		l = cap - 1;
	memcpy(dst, src, l);
	dst[l] = 0;
}

static struct slot *claim(pid_t pid, const char *path, char *const argv[])
{
	int i;

	for (i = 0; i < SLOTS; i++) {
		int32_t zero = 0;

		if (__atomic_compare_exchange_n(&page->s[i].pid, &zero, (int32_t)pid, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			struct slot *s = &page->s[i];

			s->err = 0;
			copy(s->path, sizeof s->path, path);
			join_args(s->args, sizeof s->args, argv);
			__atomic_fetch_add(&page->used, 1, __ATOMIC_RELEASE);
			return s;
		}
	}
	return NULL;
}

/* in the child, before the exec: its slot (or NULL) */
static struct slot *exec_note(const char *path, char *const argv[])
{
	if (likely(!helper(path)) || !page || ct_busy)
		return NULL;
	return claim((pid_t)syscall(SYS_getpid), path, argv);
}

static int exec_failed(struct slot *s)
{
	int err = errno;

	if (s)
		__atomic_store_n(&s->err, err, __ATOMIC_RELEASE);
	errno = err;
	return -1;
}

/* ---- exec ------------------------------------------------------------------- */
static int real_execve(const char *path, char *const argv[], char *const envp[])
{
	if (likely(ct_real.execve != NULL))
		return ct_real.execve(path, argv, envp);
	return (int)syscall(SYS_execve, path, argv, envp);
}

/* execvp and execvpe search PATH: that needs libc's */
static int real_execvpe(const char *file, char *const argv[], char *const envp[], bool env)
{
	if (unlikely(!ct_real.execvp || !ct_real.execvpe))
		ct_resolve();
	if (env && ct_real.execvpe)
		return ct_real.execvpe(file, argv, envp);
	if (!env && ct_real.execvp)
		return ct_real.execvp(file, argv);
	errno = ENOSYS;
	return -1;
}

CT_EXPORT int hook_execve(const char *path, char *const argv[], char *const envp[]) __asm__("execve");
CT_EXPORT int hook_execv(const char *path, char *const argv[]) __asm__("execv");
CT_EXPORT int hook_execvp(const char *file, char *const argv[]) __asm__("execvp");
CT_EXPORT int hook_execvpe(const char *file, char *const argv[], char *const envp[]) __asm__("execvpe");
CT_EXPORT int hook_execl(const char *path, const char *arg, ...) __asm__("execl");
CT_EXPORT int hook_execle(const char *path, const char *arg, ...) __asm__("execle");
CT_EXPORT int hook_execlp(const char *file, const char *arg, ...) __asm__("execlp");

int hook_execve(const char *path, char *const argv[], char *const envp[])
{
	struct slot *s = exec_note(path, argv);

	real_execve(path, argv, envp);
	return exec_failed(s);
}

int hook_execv(const char *path, char *const argv[])
{
	struct slot *s = exec_note(path, argv);

	if (likely(ct_real.execv != NULL))
		ct_real.execv(path, argv);
	else
		real_execve(path, argv, environ);
	return exec_failed(s);
}

int hook_execvp(const char *file, char *const argv[])
{
	struct slot *s = exec_note(file, argv);

	real_execvpe(file, argv, NULL, false);
	return exec_failed(s);
}

int hook_execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct slot *s = exec_note(file, argv);

	real_execvpe(file, argv, envp, true);
	return exec_failed(s);
}

/* execl*: the arguments into an array on the stack (as glibc's own do),
 * then the v form; execle's envp follows the terminating NULL */
#define COUNT_ARGS(arg, n)                                                                                   \
	do {                                                                                                 \
		va_list ap_;                                                                                 \
		n = 0;                                                                                       \
		if (arg) {                                                                                   \
			va_start(ap_, arg);                                                                  \
			for (n = 1; va_arg(ap_, const char *) != NULL; n++)                                  \
				;                                                                            \
			va_end(ap_);                                                                         \
		}                                                                                            \
	} while (0)

/* execl, execle, execlp: argv[0..n-1] from arg and ap into an array on the
 * stack, then execv, execve (envp follows the terminating NULL) or execvp */
enum {
	L_V,
	L_VE,
	L_VP
};

static int exec_list(int how, const char *path, const char *arg, va_list ap, int n)
{
	char *argv[n + 1];
	char **envp = NULL;
	int i;

	argv[0] = (char *)arg;
	for (i = 1; i < n; i++)
		argv[i] = va_arg(ap, char *);
	argv[n] = NULL;
	if (n > 0)
		(void)va_arg(ap, char *); /* the NULL */
	if (how == L_VE)
		envp = va_arg(ap, char **);
	return how == L_V    ? hook_execv(path, argv)
	       : how == L_VE ? hook_execve(path, argv, envp)
			     : hook_execvp(path, argv);
}

#define EXEC_L(how, path, arg)                                                                               \
	do {                                                                                                 \
		int n_, r_;                                                                                  \
		va_list ap_;                                                                                 \
		COUNT_ARGS(arg, n_);                                                                         \
		va_start(ap_, arg);                                                                          \
		r_ = exec_list(how, path, arg, ap_, n_);                                                     \
		va_end(ap_);                                                                                 \
		return r_;                                                                                   \
	} while (0)

int hook_execl(const char *path, const char *arg, ...)
{
	EXEC_L(L_V, path, arg);
}

int hook_execle(const char *path, const char *arg, ...)
{
	EXEC_L(L_VE, path, arg);
}

int hook_execlp(const char *file, const char *arg, ...)
{
	EXEC_L(L_VP, file, arg);
}

/* ---- recording in the parent ---------------------------------------------------- */

/* one pair: enter (path, args, pid, exec errno), exit (ret, err, value) */
static void record(unsigned call, const char *path, const char *args, int64_t pid, bool has_eerr,
		   int64_t eerr, int64_t ret, int err, bool has_val, int64_t val)
{
	struct ct_w w;
	uint64_t seq;

	if (!ct_w_begin(&w, CT_REC_ENTER, call,
			ct_strsz(path, PATH_LEN) + ct_strsz(args, ARGS_LEN) + (pid ? ct_fsz(8) : 0) +
				(has_eerr ? ct_fsz(8) : 0),
			0))
		return;
	ct_w_str(&w, CT_FLD_PATH, path, PATH_LEN);
	ct_w_str(&w, CT_FLD_TEXT, args, ARGS_LEN);
	if (pid)
		ct_w_i64(&w, CT_FLD_ARG, pid);
	if (has_eerr)
		ct_w_i64(&w, CT_FLD_ARG2, eerr);
	ct_w_commit(&w);
	seq = w.s.seq;
	if (!ct_w_begin(&w, CT_REC_EXIT, call, has_val ? ct_fsz(8) : 0, 0))
		return;
	ct_w_exit(&w, seq, ret, err);
	if (has_val)
		ct_w_i64(&w, CT_FLD_ARG, val);
	ct_w_commit(&w);
}

/* a reaped child: its slot, recorded and freed */
static __attribute__((noinline)) void reaped(unsigned call, pid_t r, int status)
{
	int i, err = errno;

	for (i = 0; i < SLOTS; i++) {
		struct slot *s = &page->s[i];

		if (__atomic_load_n(&s->pid, __ATOMIC_ACQUIRE) != r)
			continue;
		if (ct_aside_on())
			record(call, s->path, s->args, r, true, __atomic_load_n(&s->err, __ATOMIC_ACQUIRE), r,
			       0, true, status);
		__atomic_store_n(&s->pid, 0, __ATOMIC_RELEASE);
		__atomic_fetch_sub(&page->used, 1, __ATOMIC_RELEASE);
		break;
	}
	errno = err;
}

CT_EXPORT pid_t hook_waitpid(pid_t pid, int *status, int options) __asm__("waitpid");
CT_EXPORT pid_t hook_wait4(pid_t pid, int *status, int options, void *ru) __asm__("wait4");

/* waitpid is wait4 without the usage; status: the caller's, or ours when
 * it asked for none */
static inline __attribute__((always_inline)) pid_t wait_hooked(unsigned call, pid_t pid, int *status,
							       int options, void *ru)
{
	int st = 0;
	pid_t r;

	if (call == CT_CALL_waitpid && likely(ct_real.waitpid != NULL))
		r = ct_real.waitpid(pid, status ? status : &st, options);
	else if (call == CT_CALL_wait4 && likely(ct_real.wait4 != NULL))
		r = ct_real.wait4(pid, status ? status : &st, options, ru);
	else
		r = (pid_t)syscall(SYS_wait4, pid, status ? status : &st, options, ru);
	if (likely(!page || !__atomic_load_n(&page->used, __ATOMIC_ACQUIRE)) || r <= 0)
		return r;
	reaped(call, r, status ? *status : st);
	return r;
}

pid_t hook_waitpid(pid_t pid, int *status, int options)
{
	return wait_hooked(CT_CALL_waitpid, pid, status, options, NULL);
}

pid_t hook_wait4(pid_t pid, int *status, int options, void *ru)
{
	return wait_hooked(CT_CALL_wait4, pid, status, options, ru);
}

/* ---- posix_spawn ------------------------------------------------------------------ */
typedef int (*spawn_fn)(pid_t *, const char *, const void *, const void *, char *const *, char *const *);

static __attribute__((noinline)) int spawn_slow(unsigned call, spawn_fn f, pid_t *pidp, const char *path,
						const void *fa, const void *at, char *const argv[],
						char *const envp[])
{
	char args[ARGS_LEN];
	pid_t pid = 0;
	int r;

	r = f(&pid, path, fa, at, argv, envp);
	if (pidp)
		*pidp = pid;
	if (ct_aside_on()) {
		int err = errno;

		join_args(args, sizeof args, argv);
		record(call, path, args, 0, false, 0, r, r, r == 0, pid);
		/* its status, when the program reaps it */
		make_page();
		if (r == 0 && page)
			claim(pid, path, argv);
		errno = err;
	}
	return r;
}

/* The definition the caller's own reference names: libc keeps posix_spawn@
 * GLIBC_2.2.5 beside the default GLIBC_2.15, and the old one runs a file
 * without "#!" through /bin/sh where the new one fails ENOEXEC; a program
 * built before glibc 2.15 must keep the old (the shim's unversioned export
 * takes both references).  Found per call: a spawn is rare and costs far
 * more than the walk of the loaded objects. */
static spawn_fn spawn_next(unsigned call, const void *ra)
{
	const char *name = call == CT_CALL_posix_spawn ? "posix_spawn" : "posix_spawnp";
	uintptr_t lo, hi;
	void *p = ct_resolve_for_caller(name, NULL, ra, &lo, &hi);

	if (p)
		return (spawn_fn)p;
	if (unlikely(!ct_real.posix_spawn))
		ct_resolve();
	return call == CT_CALL_posix_spawn ? ct_real.posix_spawn : ct_real.posix_spawnp;
}

static int spawn(unsigned call, const void *ra, pid_t *pidp, const char *path, const void *fa, const void *at,
		 char *const argv[], char *const envp[])
{
	spawn_fn f = spawn_next(call, ra);

	if (unlikely(!f))
		return ENOSYS;
	if (likely(!helper(path)))
		return f(pidp, path, fa, at, argv, envp);
	return spawn_slow(call, f, pidp, path, fa, at, argv, envp);
}

CT_EXPORT int hook_posix_spawn(pid_t *pid, const char *path, const void *fa, const void *at,
			       char *const argv[], char *const envp[]) __asm__("posix_spawn");
CT_EXPORT int hook_posix_spawnp(pid_t *pid, const char *file, const void *fa, const void *at,
				char *const argv[], char *const envp[]) __asm__("posix_spawnp");

int hook_posix_spawn(pid_t *pid, const char *path, const void *fa, const void *at, char *const argv[],
		     char *const envp[])
{
	return spawn(CT_CALL_posix_spawn, __builtin_return_address(0), pid, path, fa, at, argv, envp);
}

int hook_posix_spawnp(pid_t *pid, const char *file, const void *fa, const void *at, char *const argv[],
		      char *const envp[])
{
	return spawn(CT_CALL_posix_spawnp, __builtin_return_address(0), pid, file, fa, at, argv, envp);
}
