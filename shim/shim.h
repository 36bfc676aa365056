/*
 * Internal interfaces of libcutrace.so.  Nothing here is exported: the
 * version script (shim.map) lists the only public names.
 *
 * Rules for every function reachable from a hook (HACKING.md, "The shim"):
 *  - no malloc, no stdio, no locks on the recording path;
 *  - errno is saved on entry and restored before returning to the program;
 *  - never exit or abort: on internal failure mark the trace degraded and
 *    pass the call through;
 *  - the shim's own file I/O uses raw system calls (ct_sys_*), so it never
 *    re-enters a hook and works before the real symbols are resolved.
 */
#ifndef CT_SHIM_H
#define CT_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "cutrace/format.h"
#include "ring.h"

#define CT_HIDDEN __attribute__((visibility("hidden")))
#define CT_EXPORT __attribute__((visibility("default")))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define CT_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- real functions (resolve.c) --------------------------------------- */
struct stat;
struct sigaction;
typedef void (*ct_sighandler_t)(int);
/* The real function behind each libc and loader hook (common/hooks.def): the
 * next definition after the shim in lookup order -- another interposer's when
 * one is preloaded after the shim, else libc's.  The hooks forward the
 * program's calls to these. */
struct ct_real {
#define CT_LIBC(name, rule, RET, PARAMS)   RET(*name) PARAMS;
#define CT_LOADER(name, rule, RET, PARAMS) RET(*name) PARAMS;
#include "hooks.def"
	int (*fstat)(int, struct stat *);
};
/* The dynamic loader's own functions (libc's since glibc 2.34, libdl's
 * before), read from its symbol table: what the shim calls for itself
 * (resolving, planning a dlopen, identifying a pointer), so its own work is
 * never seen by another interposer nor re-enters one. */
struct ct_dl {
	void *(*dlopen)(const char *, int);
	void *(*dlmopen)(long, const char *, int);
	void *(*dlsym)(void *, const char *);
	void *(*dlvsym)(void *, const char *, const char *);
	int (*dlclose)(void *);
	char *(*dlerror)(void);
	int (*dladdr1)(const void *, void *, void **, int);
	int (*dlinfo)(void *, int, void *);
	int (*dl_find_object)(void *, void *); /* glibc >= 2.35, else NULL */
};
extern struct ct_dl ct_dl CT_HIDDEN;
extern struct ct_real ct_real CT_HIDDEN;

struct link_map;
/* The link map of the loaded object that holds addr, or NULL: through
 * _dl_find_object where glibc has it (2.35), else dladdr1, which also looks
 * for the nearest symbol, a walk of the whole symbol table: 0.3 ms for an
 * address in libtorch_cuda.so, 1 ms in libtorch_cpu.so (H200 machine). */
struct link_map *ct_link_map_of(const void *addr) CT_HIDDEN;

/* The real ioctl: libc's through the resolved pointer, the system call
 * before it is resolved (the hook, the recording fast path and the general
 * path all call it inline). */
static inline int ct_real_ioctl(int fd, unsigned long req, void *arg)
{
	if (__builtin_expect(ct_real.ioctl != NULL, 1))
		return ct_real.ioctl(fd, req, arg);
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

/* Resolve every real function once; idempotent, safe from any hook. */
void ct_resolve(void) CT_HIDDEN;
/* The next definition of a CUDA/NVML symbol after ours: RTLD_NEXT first, then
 * every loaded object whose name contains lib_hint (RTLD_LOCAL loads). */
void *ct_resolve_next(const char *name, const char *lib_hint) CT_HIDDEN;
/* the definition of name the code at return address ra would have bound to
 * (its global scope after the shim, then its own local scope, with the
 * version its reference needs); *lo..*hi: the caller's object, 0..0 unknown */
void *ct_resolve_for_caller(const char *name, const char *lib_hint, const void *ra, uintptr_t *lo,
			    uintptr_t *hi) CT_HIDDEN;
/* true when addr lies inside libcutrace.so */
bool ct_addr_is_ours(const void *addr) CT_HIDDEN;

/* ---- raw system calls ---------------------------------------------------- */
int ct_sys_open(const char *path, int flags, int mode) CT_HIDDEN;
int ct_sys_close(int fd) CT_HIDDEN;
ssize_t ct_sys_read(int fd, void *buf, size_t n) CT_HIDDEN;
ssize_t ct_sys_write(int fd, const void *buf, size_t n) CT_HIDDEN;
pid_t ct_sys_gettid(void) CT_HIDDEN;
/* stat family as system calls: glibc 2.33 made stat/fstat real symbols
 * (stat@GLIBC_2.33); older ones only have __xstat, so a call by name would
 * raise the shim's glibc floor above 2.17 */
int ct_sys_fstatat(int dirfd, const char *path, struct stat *st, int flags) CT_HIDDEN;
int ct_sys_fstat(int fd, struct stat *st) CT_HIDDEN;
/* the n bytes of lit at p; stops at the first difference (never past p's NUL) */
static inline __attribute__((always_inline)) bool ct_lit(const char *p, const char *l, size_t n)
{
#pragma GCC unroll 24
	for (size_t i = 0; i < n; i++)
		if (p[i] != l[i])
			return false;
	return true;
}

/* an NVIDIA path the file-system hooks record (hooks_fs.c): /dev/nvidia*,
 * /dev/char/195:*, /proc/driver/nvidia*, /proc/devices, /proc/modules,
 * /sys/module/nvidia*, [/usr]/bin/nvidia-modprobe; inline, as the test of
 * every hooked call's path (n counts a literal's NUL where the name must end there) */
static inline __attribute__((always_inline)) bool ct_fs_watched(const char *p)
{
	if (!p || p[0] != '/')
		return false;
	switch (p[1]) {
	case 'd':
		return ct_lit(p + 2, "ev/", 3) &&
		       (ct_lit(p + 5, "nvidia", 6) || ct_lit(p + 5, "char/195:", 9));
	case 'p':
		return ct_lit(p + 2, "roc/", 4) &&
		       (ct_lit(p + 6, "driver/nvidia", 13) || ct_lit(p + 6, "devices", 8) ||
			ct_lit(p + 6, "modules", 8));
	case 's': return ct_lit(p + 2, "ys/module/nvidia", 16);
	case 'u': return ct_lit(p + 2, "sr/bin/nvidia-modprobe", 23);
	case 'b': return ct_lit(p + 2, "in/nvidia-modprobe", 19);
	default: return false;
	}
}

/* glibc's English text for errno e, from a table of our own (strerror may
 * translate and allocate; strerrordesc_np is GLIBC_2.32) */
const char *ct_errno_text(int e) CT_HIDDEN;
/* read a whole small file into buf (NUL-terminated); returns length or -1 */
ssize_t ct_read_file(const char *path, char *buf, size_t len) CT_HIDDEN;

/* ---- process state and trace (trace.c) ---------------------------------- */
struct ct_config {
	char dir[512];          /* trace directory */
	uint64_t size;          /* trace file size */
	int debug;              /* CUTRACE_DEBUG level */
	bool disabled;          /* CUTRACE_DISABLE or AT_SECURE */
	bool secure;            /* AT_SECURE: stay inert */
};
extern struct ct_config ct_cfg CT_HIDDEN;
extern volatile int ct_ready CT_HIDDEN;      /* config read, reals resolved */
extern uint32_t ct_drv_code CT_HIDDEN;        /* kernel driver version code, 0 unknown */

void ct_init(void) CT_HIDDEN;                /* idempotent lazy initialisation */
static inline void ct_ensure_init(void)
{
	if (unlikely(!ct_ready))
		ct_init();
}

/* the trace file of this process: TS_* state, its ring, this thread's run
 * of slots and cached tid (trace.c; read inline by the recording fast path) */
enum { TS_NONE, TS_CREATING, TS_ACTIVE, TS_FAILED };
/* The words a child must not take over from its parent.  They live in a
 * page the kernel hands a child of fork zeroed (MADV_WIPEONFORK, Linux
 * 4.14; trace.c), so a child of a raw fork system call or of clone without
 * CLONE_VM, in which no pthread_atfork handler runs, finds the trace not
 * created, no fast path and `alive` 0: its first record makes it a fork
 * child of its own (ct_own_process), at no cost to any recording path.
 * Where the kernel refuses the advice they stay in ordinary memory. */
struct ct_proc {
	int trace_state; /* TS_* */
	/* 1 while a fast path may record straight into the ring: the trace
	 * is active (so the shim is initialised and not disabled) and no
	 * injection rule is in force.  One load instead of five; kept by
	 * trace.c wherever trace_state enters or leaves TS_ACTIVE (release;
	 * read with acquire).  The caller still checks ct_busy. */
	int fast_ok;
	int alive; /* 1 in the process this state belongs to */
};
extern struct ct_proc *ct_proc CT_HIDDEN;
#define ct_trace_state (ct_proc->trace_state)
#define ct_fast_ok     (ct_proc->fast_ok)
/* the trace of this process exists (slow paths: the NVIDIA file-system
 * calls are recorded only then, hooks_fs.c) */
static inline bool ct_trace_active(void)
{
	return ct_proc && __atomic_load_n(&ct_trace_state, __ATOMIC_ACQUIRE) == TS_ACTIVE;
}
extern struct ct_ring ct_ring_main CT_HIDDEN;
extern CT_TLS struct ct_chunk ct_tls_run CT_HIDDEN;
extern CT_TLS pid_t ct_tls_tid CT_HIDDEN;

/* per-thread guard: >0 while the shim itself is working */
extern CT_TLS int ct_busy CT_HIDDEN;
pid_t ct_tid(void) CT_HIDDEN;
/* true in a vfork child or a raw fork(2) child still holding the parent's
 * state (one getpid system call: for slow paths only) */
bool ct_other_process(void) CT_HIDDEN;
/* May this process record?  A child of a raw fork (struct ct_proc: alive
 * 0) is first made a fork child with its own trace to come, as fork()'s
 * atfork handler does; false in a vfork child (or a clone sharing memory),
 * whose steps would land in its parent's state: it passes them through.
 * One getpid system call: for slow paths only. */
bool ct_own_process(void) CT_HIDDEN;
/* a call beside the driver (hooks_fs.c, hooks_proc.c) is recorded: the shim
 * is on, not inside itself, and this process already has a trace (it touched
 * CUDA: loaded a CUDA library, called the driver, opened a node), so a shell's
 * [ -e /dev/nvidiactl ] or lsmod's read of /proc/modules makes no trace of its
 * own; never in a vfork child (its records would land in its parent's trace) */
static inline bool ct_aside_on(void)
{
	ct_ensure_init();
	return !ct_busy && !ct_cfg.disabled && ct_trace_active() && ct_own_process();
}
uint64_t ct_now_ns(void) CT_HIDDEN;

/* Printf-like to stderr, only with CUTRACE_DEBUG >= level; warn() always
 * (used for the one-line warnings the user must see). */
void ct_log(int level, const char *fmt, ...) CT_HIDDEN __attribute__((format(printf, 2, 3)));
void ct_warn_once(const char *fmt, ...) CT_HIDDEN __attribute__((format(printf, 1, 2)));
/* a warning said once per process tree (trace.c): returns 0 when said now,
 * else the pid of the process of the tree that said it (-1: not known yet) */
pid_t ct_warn_tree(const char *key, const char *fmt, ...) CT_HIDDEN __attribute__((format(printf, 2, 3)));
/* a note in the trace's context (not a degradation) */
void ct_note_ctx(const char *why) CT_HIDDEN;
/* An internal failure lost events or sight of a call: sets CT_HF_DEGRADED
 * and notes `why` once (CT_CTX_NOTE in the context, a note event in the
 * timeline); kept until the file exists when there is none yet.  `why` must
 * be a string with static storage (a literal, or one of the ct_why_* below):
 * reasons are told apart by address.  Lock-free, no
 * allocation; never creates the trace file itself. */
void ct_mark_degraded(const char *why) CT_HIDDEN;
/* reasons given from more than one file (one address each, so one note each) */
extern const char ct_why_lost[] CT_HIDDEN;
extern const char ct_why_unwrapped[] CT_HIDDEN;

/*
 * Record writer.  ct_w_begin reserves a record of the given payload size
 * (fields only; the record header, and for exits struct cutrace_exit, are
 * added here) and creates the trace file on first use.  Returns false when
 * nothing can be recorded (tracing off, file failed, record too big): the
 * caller then just skips its ct_w_* calls.
 */
struct ct_w {
	struct ct_slot s;
	unsigned char *p;
	unsigned char *end;
};
bool ct_w_begin(struct ct_w *w, unsigned type, unsigned call, uint32_t payload, uint32_t flags) CT_HIDDEN;
void ct_w_exit(struct ct_w *w, uint64_t enter_seq, int64_t ret, int err) CT_HIDDEN;
void ct_w_field(struct ct_w *w, uint16_t tag, const void *data, uint32_t len) CT_HIDDEN;
/* reserve a field of len bytes and return where to write its data */
unsigned char *ct_w_field_space(struct ct_w *w, uint16_t tag, uint32_t len) CT_HIDDEN;
void ct_w_flags(struct ct_w *w, uint32_t flags) CT_HIDDEN;
void ct_w_commit(struct ct_w *w) CT_HIDDEN;
static inline uint32_t ct_fsz(uint32_t len) { return ct_field_size(len); }
static inline uint32_t ct_strsz(const char *s, uint32_t cap)
{
	uint32_t n = 0;
	while (s && s[n] && n < cap)
		n++;
	return ct_fsz(n);
}
/* string field bounded by cap bytes */
void ct_w_str(struct ct_w *w, uint16_t tag, const char *s, uint32_t cap) CT_HIDDEN;
/* fixed-size fields, inlined: one bounds test and two stores */
static inline void ct_w_fixed(struct ct_w *w, uint16_t tag, const void *v, uint16_t len)
{
	struct cutrace_field f = { tag, len };

	if (likely(w->p && (size_t)(w->end - w->p) >= sizeof f + len)) {
		__builtin_memcpy(w->p, &f, sizeof f);
		__builtin_memcpy(w->p + sizeof f, v, len);
		w->p += sizeof f + len;
	}
}
static inline void ct_w_u32(struct ct_w *w, uint16_t tag, uint32_t v) { ct_w_fixed(w, tag, &v, 4); }
static inline void ct_w_u64(struct ct_w *w, uint16_t tag, uint64_t v) { ct_w_fixed(w, tag, &v, 8); }
void ct_w_i64(struct ct_w *w, uint16_t tag, int64_t v) CT_HIDDEN;

/* The process snapshot note (snapshot.c): once, before the first cuInit or
 * nvmlInit, or at a failed dlopen of libcuda; reset in a fork child. */
void ct_snapshot(void) CT_HIDDEN;
void ct_snapshot_reset(void) CT_HIDDEN;
/* the program's PT_INTERP (in memory), NULL when unknown */
const char *ct_program_interp(void) CT_HIDDEN;
/* the container toolkit's ld.so.conf.d drop-ins as "file=dir" lines */
int ct_ldconf_dropins(char *out, size_t len) CT_HIDDEN;

/* A one-record note (CT_REC_NOTE) with free text. */
void ct_note(const char *text) CT_HIDDEN;

/* true once the first record is wanted; cheap test used to skip work */
bool ct_tracing(void) CT_HIDDEN;

/* ---- fd table (hooks_io.c) ----------------------------------------------- */
#define CT_MAX_FDS 65536
extern uint32_t ct_fdnode[CT_MAX_FDS] CT_HIDDEN;   /* CT_NODE_* << 16 | minor */
static inline uint32_t ct_fd_node(int fd)
{
	return (unsigned)fd < CT_MAX_FDS ? ct_fdnode[fd] : 0;
}
/* classify a path under /dev: CT_NODE_* << 16 | minor, or 0 */
uint32_t ct_classify_path(const char *path) CT_HIDDEN;

/* ---- ioctl capture (capture.c) ------------------------------------------- */
/* Bumped (before the call) by every munmap, mprotect and mremap of the
 * program: capture.c remembers which pages it found readable only within
 * one epoch, so memory given back is never read without the kernel's check. */
extern uint32_t ct_mem_epoch CT_HIDDEN;
/* copy n bytes of program memory without ever faulting; returns bytes copied
 * or -1 when the memory is not readable */
ssize_t ct_safe_copy(void *dst, const void *src, size_t n) CT_HIDDEN;
struct ct_ioc;   /* per-call capture state, defined in capture.c */
void ct_ioctl_record(int fd, uint32_t node, unsigned long req, void *arg) CT_HIDDEN;

/* ---- fault injection (inject.c) ------------------------------------------ */
extern int ct_inj_active CT_HIDDEN;   /* 0: no rules, every check is skipped */
extern int ct_inj_bad CT_HIDDEN;      /* CUTRACE_INJECT was malformed */
const char *ct_inject_spec(void) CT_HIDDEN;
void ct_inject_init(void) CT_HIDDEN;
void ct_inject_after_fork(void) CT_HIDDEN;
/* hooks_proc.c: the page a fork child shares with its parent, made before the fork */
void ct_proc_before_fork(void) CT_HIDDEN;

/* ---- SIGBUS guard (hooks_sig.c) -------------------------------------------- */
/* the trace mapping [map, map + len) exists: own SIGBUS (once per process) */
void ct_bus_guard(void *map, size_t len) CT_HIDDEN;
/* the mapping is gone (fork child, failed creation) */
void ct_bus_guard_forget(void) CT_HIDDEN;
/* the trace file was truncated under us: the mapping is anonymous now */
bool ct_bus_trace_lost(void) CT_HIDDEN;

/* ---- dlopen bookkeeping (hooks_dl.c) ------------------------------------- */
/* CT_LIB_* of a library file name (basename compared) */
unsigned ct_lib_kind(const char *file) CT_HIDDEN;

#endif
