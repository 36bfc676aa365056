/* libfakenv.so: a fake NVIDIA kernel module for GPU-less tests.
 *
 * Preload it AFTER the shim:  LD_PRELOAD="libcutrace.so libfakenv.so".
 * It interposes the libc entry points a CUDA driver uses to reach the
 * kernel (open*, close, ioctl, the fstat/stat family, readlink), emulates the
 * nvidia device nodes and answers their ioctls the way the 580.159.04 kernel
 * module does (layouts, statuses and errno conventions from
 * tracer/decode/ABI.md §1-§8).  Everything else falls through to the
 * next definition, found with dlsym(RTLD_NEXT, ...) -- which, with the shim
 * preloaded first, goes through the shim's dlsym hook on purpose.
 *
 * Emulated nodes (anything else named /dev/nvidia* gets ENOENT, so tests
 * never touch a real GPU even on a machine that has one):
 *   /dev/nvidiactl                 195:255
 *   /dev/nvidiaN   (N < FAKENV_GPUS) 195:N
 *   /dev/nvidia-uvm                238:0     /dev/nvidia-uvm-tools  238:1
 *   /dev/nvidia-caps/nvidia-cap1..2  241:N
 * An emulated open returns a real fd (on /dev/null) that this library
 * remembers; fstat/stat report S_IFCHR with the rdev above, readlink of
 * /proc/self/fd/N reports the node's path, close forgets it.  dup()ed fds
 * and fds inherited across exec are not tracked (they are plain /dev/null).
 *
 * Environment knobs, read once (NR and STATUS accept decimal or 0x hex;
 * ERRNO is a name like EPERM or a number; an optional ":N" after a value
 * makes the fault fire for the first N matching calls only):
 *   FAKENV_GPUS=n                  simulated GPUs (default 1, max 32).  0 means
 *                                  CARD_INFO returns no valid entry.
 *   FAKENV_KERNEL_VERSION=s        kernel module version (default 580.159.04),
 *                                  used by CHECK_VERSION_STR and the
 *                                  SYSTEM_GET_BUILD_VERSION controls.
 *   FAKENV_MISSING=path[,path]     open/stat of these paths: ENOENT (fnmatch
 *                                  patterns, e.g. /dev/nvidia-uvm*).
 *   FAKENV_DENY=path=ERRNO[,...]   open of path fails with ERRNO.
 *   FAKENV_ALIAS=path=node[,...]   a renamed node: path (under /dev/nvidia*,
 *                                  e.g. /dev/nvidia-foo) opens, stats and
 *                                  answers ioctls as the emulated node
 *                                  (e.g. /dev/nvidia-uvm), with its rdev.
 *   FAKENV_GPU_OPEN_ERRNO=ERRNO    open of /dev/nvidiaN fails with ERRNO; with
 *                                  O_NONBLOCK the open succeeds and the error
 *                                  is deferred (ioctls get EIO, WAIT_OPEN_COMPLETE
 *                                  reports rc=-ERRNO), as on the real driver.
 *   FAKENV_ESC_ERRNO=nr=ERRNO      a frontend/RM escape (e.g. 0xd6, 0x2b)
 *                                  returns -1/ERRNO without being handled.
 *   FAKENV_RM_CONTROL_STATUS=cmd=status   RM_CONTROL cmd (e.g. 0x215=0x1b)
 *                                  answers with that NVOS54 status.
 *   FAKENV_RM_ALLOC_STATUS=class=status   RM_ALLOC / RM_ALLOC_MEMORY of that
 *                                  class (e.g. 0xa06c=0x17) answers with status.
 *   FAKENV_RM_FREE_STATUS=handle=status   RM_FREE of that hObjectOld (e.g.
 *                                  0xbad=0x33) answers with that NVOS00 status.
 *   FAKENV_UVM_STATUS=nr=status    UVM command (e.g. 37=0x1a) sets rmStatus.
 *   FAKENV_UVM_ERRNO=nr=ERRNO      UVM command returns -1/ERRNO.
 *   FAKENV_FABRIC=not-ready        GET_FABRIC_STATUS reports IN_PROGRESS
 *                                  (also: uninitialized, initialized, skip).
 *   FAKENV_VIRT_MODE=N             GET_VIRTUALIZATION_MODE answers N (default
 *                                  0 NONE; 2 VGX: a vGPU guest, catalog G6).
 *   FAKENV_COMPUTE_MODE=N          QUERY_COMPUTE_MODE_RULES answers N (default
 *                                  0 Default; 3 EXCLUSIVE_COMPUTE_PROCESS).
 *   FAKENV_HANG_CMD=nr             an ioctl with that escape nr (frontend/RM,
 *                                  low 8 bits) or UVM number sleeps first ...
 *   FAKENV_HANG_SEC=s              ... for s seconds (default 30).
 *   FAKENV_DEBUG=1                 one line per emulated call on stderr.
 * Without FAKENV_DEBUG the library prints nothing.  It is thread-safe (one
 * mutex: this is a test double) and never trusts a caller's pointer: every
 * user range is probed with process_vm_readv/writev on the own process
 * before it is touched, so a bad pointer gives EFAULT like the kernel's
 * copy_from_user instead of a crash.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rig_abi.h"

#define FE_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------ */
/* Next definitions.  Resolved lazily, one symbol at a time, with no lock
 * held across dlsym (dlsym may allocate, and glibc's dlsym takes a lock).  A racing
 * double resolution stores the same pointer twice, which is harmless. */

static void *fe_next(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!p) {
        p = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    return p;
}

#define NEXT(type, name) ({ static void *slot_; (type)fe_next(&slot_, #name); })

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat2_fn)(int, const char *, int);
typedef int (*close_fn)(int);
typedef int (*ioctl_fn)(int, unsigned long, ...);
typedef int (*fstat_fn)(int, struct stat *);
typedef int (*fstat64_fn)(int, struct stat64 *);
typedef int (*fxstat_fn)(int, int, struct stat *);
typedef int (*fxstat64_fn)(int, int, struct stat64 *);
typedef int (*stat_fn)(const char *, struct stat *);
typedef int (*stat64_fn)(const char *, struct stat64 *);
typedef int (*xstat_fn)(int, const char *, struct stat *);
typedef int (*xstat64_fn)(int, const char *, struct stat64 *);
typedef int (*fstatat_fn)(int, const char *, struct stat *, int);
typedef int (*fstatat64_fn)(int, const char *, struct stat64 *, int);
typedef int (*access_fn)(const char *, int);
typedef ssize_t (*readlink_fn)(const char *, char *, size_t);
typedef ssize_t (*readlinkat_fn)(int, const char *, char *, size_t);

/* ------------------------------------------------------------------ */
/* Configuration (environment knobs, parsed once). */

#define FE_MAX_RULES 16
#define FE_PATH_MAX  128

struct fe_rule {
    unsigned long key;
    uint32_t value;
    int remaining;              /* -1: every call */
};

struct fe_rules {
    int n;
    struct fe_rule r[FE_MAX_RULES];
};

struct fe_path_rule {
    char path[FE_PATH_MAX];
    int err;
};

static struct {
    unsigned gpus;
    char version[RIG_VERSION_STRING_LEN];
    int n_missing, n_deny, n_alias;
    struct fe_path_rule missing[FE_MAX_RULES], deny[FE_MAX_RULES];
    struct { char path[FE_PATH_MAX], node[FE_PATH_MAX]; } alias[FE_MAX_RULES];
    int gpu_open_errno;
    struct fe_rules esc_errno, rm_control, rm_alloc, rm_free, uvm_status, uvm_errno;
    uint32_t fabric;
    uint32_t virt_mode, compute_mode;
    unsigned long hang_cmd;
    int hang_set;
    unsigned hang_sec;
    int debug;
} cfg;

static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t fe_lock = PTHREAD_MUTEX_INITIALIZER;

static void fe_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fe_log(const char *fmt, ...)
{
    if (!cfg.debug)
        return;
    int saved = errno;
    char buf[512];
    int n = snprintf(buf, sizeof buf, "fakenv[%d]: ", (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
    errno = saved;
}

static const struct { const char *name; int value; } fe_errnos[] = {
    {"EPERM", EPERM}, {"ENOENT", ENOENT}, {"EINTR", EINTR}, {"EIO", EIO},
    {"ENXIO", ENXIO}, {"EBADF", EBADF}, {"EAGAIN", EAGAIN}, {"ENOMEM", ENOMEM},
    {"EACCES", EACCES}, {"EFAULT", EFAULT}, {"EBUSY", EBUSY}, {"EEXIST", EEXIST},
    {"ENODEV", ENODEV}, {"ENOTDIR", ENOTDIR}, {"EINVAL", EINVAL}, {"ENFILE", ENFILE},
    {"EMFILE", EMFILE}, {"ENOTTY", ENOTTY}, {"ENOSPC", ENOSPC}, {"EROFS", EROFS},
    {"ENOSYS", ENOSYS}, {"ENODATA", ENODATA}, {"ETIMEDOUT", ETIMEDOUT},
    {"EOPNOTSUPP", EOPNOTSUPP},
};

/* "EPERM" or "1" -> errno value; 0 if unknown. */
static int fe_parse_errno(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof fe_errnos / sizeof fe_errnos[0]; i++)
        if (strlen(fe_errnos[i].name) == len && !strncmp(s, fe_errnos[i].name, len))
            return fe_errnos[i].value;
    char tmp[24];
    if (len == 0 || len >= sizeof tmp)
        return 0;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    char *end;
    long v = strtol(tmp, &end, 0);
    return (*end == '\0' && v > 0 && v < 4096) ? (int)v : 0;
}

/* Splits "a,b,c" and calls fn for each non-empty item. */
static void fe_each_item(const char *list, void (*fn)(const char *, size_t, void *), void *arg)
{
    while (list && *list) {
        const char *comma = strchr(list, ',');
        size_t len = comma ? (size_t)(comma - list) : strlen(list);
        if (len)
            fn(list, len, arg);
        list = comma ? comma + 1 : NULL;
    }
}

struct fe_rule_ctx {
    struct fe_rules *rules;
    int value_is_errno;
};

/* "KEY=VALUE[:N]" -> one rule. */
static void fe_add_rule(const char *item, size_t len, void *arg)
{
    struct fe_rule_ctx *ctx = arg;
    char tmp[64];
    if (len >= sizeof tmp || ctx->rules->n >= FE_MAX_RULES)
        return;
    memcpy(tmp, item, len);
    tmp[len] = '\0';
    char *eq = strchr(tmp, '=');
    if (!eq)
        return;
    *eq = '\0';
    char *val = eq + 1, *colon = strchr(val, ':');
    int remaining = -1;
    if (colon) {
        *colon = '\0';
        remaining = atoi(colon + 1);
    }
    struct fe_rule *r = &ctx->rules->r[ctx->rules->n];
    r->key = strtoul(tmp, NULL, 0);
    if (ctx->value_is_errno) {
        int e = fe_parse_errno(val, strlen(val));
        if (!e)
            return;
        r->value = (uint32_t)e;
    } else {
        r->value = (uint32_t)strtoul(val, NULL, 0);
    }
    r->remaining = remaining;
    ctx->rules->n++;
}

static void fe_load_rules(const char *env, struct fe_rules *rules, int value_is_errno)
{
    struct fe_rule_ctx ctx = { rules, value_is_errno };
    fe_each_item(getenv(env), fe_add_rule, &ctx);
}

static void fe_add_missing(const char *item, size_t len, void *arg)
{
    (void)arg;
    if (len >= FE_PATH_MAX || cfg.n_missing >= FE_MAX_RULES)
        return;
    memcpy(cfg.missing[cfg.n_missing].path, item, len);
    cfg.missing[cfg.n_missing].path[len] = '\0';
    cfg.n_missing++;
}

static void fe_add_deny(const char *item, size_t len, void *arg)
{
    (void)arg;
    const char *eq = memchr(item, '=', len);
    if (!eq || (size_t)(eq - item) >= FE_PATH_MAX || cfg.n_deny >= FE_MAX_RULES)
        return;
    int e = fe_parse_errno(eq + 1, len - (size_t)(eq + 1 - item));
    if (!e)
        return;
    struct fe_path_rule *d = &cfg.deny[cfg.n_deny++];
    memcpy(d->path, item, (size_t)(eq - item));
    d->path[eq - item] = '\0';
    d->err = e;
}

/* "path=node" -> one renamed node */
static void fe_add_alias(const char *item, size_t len, void *arg)
{
    (void)arg;
    const char *eq = memchr(item, '=', len);
    size_t a = eq ? (size_t)(eq - item) : 0, b = eq ? len - a - 1 : 0;
    if (!eq || !a || !b || a >= FE_PATH_MAX || b >= FE_PATH_MAX || cfg.n_alias >= FE_MAX_RULES)
        return;
    memcpy(cfg.alias[cfg.n_alias].path, item, a);
    cfg.alias[cfg.n_alias].path[a] = '\0';
    memcpy(cfg.alias[cfg.n_alias].node, eq + 1, b);
    cfg.alias[cfg.n_alias].node[b] = '\0';
    cfg.n_alias++;
}

static void fe_atfork_prepare(void) { pthread_mutex_lock(&fe_lock); }
static void fe_atfork_release(void) { pthread_mutex_unlock(&fe_lock); }

static void fe_load_config(void)
{
    const char *s;
    cfg.debug = (s = getenv("FAKENV_DEBUG")) && *s && *s != '0';
    cfg.gpus = 1;
    if ((s = getenv("FAKENV_GPUS")) && *s) {
        unsigned long g = strtoul(s, NULL, 0);
        cfg.gpus = g > RIG_MAX_GPUS ? RIG_MAX_GPUS : (unsigned)g;
    }
    s = getenv("FAKENV_KERNEL_VERSION");
    snprintf(cfg.version, sizeof cfg.version, "%s", s && *s ? s : RIG_DEFAULT_VERSION);
    fe_each_item(getenv("FAKENV_MISSING"), fe_add_missing, NULL);
    fe_each_item(getenv("FAKENV_DENY"), fe_add_deny, NULL);
    fe_each_item(getenv("FAKENV_ALIAS"), fe_add_alias, NULL);
    if ((s = getenv("FAKENV_GPU_OPEN_ERRNO")))
        cfg.gpu_open_errno = fe_parse_errno(s, strlen(s));
    fe_load_rules("FAKENV_ESC_ERRNO", &cfg.esc_errno, 1);
    fe_load_rules("FAKENV_RM_CONTROL_STATUS", &cfg.rm_control, 0);
    fe_load_rules("FAKENV_RM_ALLOC_STATUS", &cfg.rm_alloc, 0);
    fe_load_rules("FAKENV_RM_FREE_STATUS", &cfg.rm_free, 0);
    fe_load_rules("FAKENV_UVM_STATUS", &cfg.uvm_status, 0);
    fe_load_rules("FAKENV_UVM_ERRNO", &cfg.uvm_errno, 1);
    if ((s = getenv("FAKENV_VIRT_MODE")) && *s)
        cfg.virt_mode = (uint32_t)strtoul(s, NULL, 0);
    if ((s = getenv("FAKENV_COMPUTE_MODE")) && *s)
        cfg.compute_mode = (uint32_t)strtoul(s, NULL, 0);
    cfg.fabric = RIG_FABRIC_SKIP;
    if ((s = getenv("FAKENV_FABRIC"))) {
        if (!strcmp(s, "not-ready") || !strcmp(s, "in-progress"))
            cfg.fabric = RIG_FABRIC_IN_PROGRESS;
        else if (!strcmp(s, "uninitialized"))
            cfg.fabric = RIG_FABRIC_UNINITIALIZED;
        else if (!strcmp(s, "initialized") || !strcmp(s, "ready"))
            cfg.fabric = RIG_FABRIC_INITIALIZED;
    }
    if ((s = getenv("FAKENV_HANG_CMD")) && *s) {
        cfg.hang_cmd = strtoul(s, NULL, 0);
        cfg.hang_set = 1;
    }
    cfg.hang_sec = 30;
    if ((s = getenv("FAKENV_HANG_SEC")) && *s)
        cfg.hang_sec = (unsigned)strtoul(s, NULL, 0);
    /* A fork while another thread holds fe_lock would leave the child's
     * copy locked forever. */
    pthread_atfork(fe_atfork_prepare, fe_atfork_release, fe_atfork_release);
}

static void fe_config(void)
{
    pthread_once(&cfg_once, fe_load_config);
}

__attribute__((constructor)) static void fe_ctor(void)
{
    fe_config();
}

/* Returns the rule's value if KEY matches (consuming one use), else -1. */
static int64_t fe_rule_hit(struct fe_rules *rules, unsigned long key)
{
    for (int i = 0; i < rules->n; i++) {
        struct fe_rule *r = &rules->r[i];
        if (r->key != key || r->remaining == 0)
            continue;
        if (r->remaining > 0)
            r->remaining--;
        return r->value;
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* Emulated nodes and the fd table. */

enum fe_node { FE_NONE, FE_CTL, FE_GPU, FE_UVM, FE_UVM_TOOLS, FE_CAP };

#define FE_MAX_FD 4096

struct fe_fd {
    uint8_t node;               /* enum fe_node */
    uint8_t minor;
    uint8_t uvm_init;           /* UVM_INITIALIZE done on this fd */
    uint8_t uvm_mm;             /* UVM_MM_INITIALIZE done on this fd */
    uint8_t registered;         /* gpu fd: REGISTER_FD done */
    uint8_t attached;           /* ctl fd: ATTACH_GPUS_TO_FD done */
    int deferred_err;           /* gpu fd opened O_NONBLOCK whose open "failed" */
    uint64_t uvm_flags;
    uint32_t uvm_gpus;          /* bitmask of GPUs UVM_REGISTER_GPU'd on this fd */
};

static struct fe_fd fe_fds[FE_MAX_FD];

/* Classifies PATH.  Returns FE_NONE for paths outside /dev/nvidia*, and
 * -1 for /dev/nvidia* names that are not emulated. */
static int fe_classify(const char *path, unsigned *minor)
{
    if (!path || strncmp(path, "/dev/nvidia", 11))
        return FE_NONE;
    for (int i = 0; i < cfg.n_alias; i++)
        if (!strcmp(path, cfg.alias[i].path)) {
            path = cfg.alias[i].node;       /* FAKENV_ALIAS: once, no chains */
            if (strncmp(path, "/dev/nvidia", 11))
                return -1;
            break;
        }
    const char *rest = path + 11;
    if (!strcmp(rest, "ctl")) {
        *minor = RIG_NV_CTL_MINOR;
        return FE_CTL;
    }
    if (!strcmp(rest, "-uvm")) {
        *minor = 0;
        return FE_UVM;
    }
    if (!strcmp(rest, "-uvm-tools")) {
        *minor = 1;
        return FE_UVM_TOOLS;
    }
    if (!strcmp(rest, "-caps/nvidia-cap1") || !strcmp(rest, "-caps/nvidia-cap2")) {
        *minor = (unsigned)(rest[strlen(rest) - 1] - '0');
        return FE_CAP;
    }
    if (rest[0] >= '0' && rest[0] <= '9' && strlen(rest) <= 3) {
        char *end;
        unsigned long n = strtoul(rest, &end, 10);
        if (*end == '\0' && n < cfg.gpus && !(rest[0] == '0' && rest[1])) {
            *minor = (unsigned)n;
            return FE_GPU;
        }
    }
    return -1;
}

static int fe_path_missing(const char *path)
{
    for (int i = 0; i < cfg.n_missing; i++)
        if (!fnmatch(cfg.missing[i].path, path, 0))
            return 1;
    return 0;
}

static int fe_path_denied(const char *path)
{
    for (int i = 0; i < cfg.n_deny; i++)
        if (!fnmatch(cfg.deny[i].path, path, 0))
            return cfg.deny[i].err;
    return 0;
}

static dev_t fe_rdev(int node, unsigned minor)
{
    switch (node) {
    case FE_CTL:
    case FE_GPU:
        return makedev(RIG_NV_MAJOR, minor);
    case FE_UVM:
    case FE_UVM_TOOLS:
        return makedev(RIG_UVM_MAJOR, minor);
    default:
        return makedev(RIG_CAPS_MAJOR, minor);
    }
}

static const char *fe_node_path(const struct fe_fd *f, char *buf, size_t len)
{
    switch (f->node) {
    case FE_CTL: return "/dev/nvidiactl";
    case FE_UVM: return "/dev/nvidia-uvm";
    case FE_UVM_TOOLS: return "/dev/nvidia-uvm-tools";
    case FE_GPU:
        snprintf(buf, len, "/dev/nvidia%u", f->minor);
        return buf;
    default:
        snprintf(buf, len, "/dev/nvidia-caps/nvidia-cap%u", f->minor);
        return buf;
    }
}

/* Copy of the entry for FD, or node FE_NONE. */
static struct fe_fd fe_lookup(int fd)
{
    struct fe_fd f = { 0 };
    if (fd >= 0 && fd < FE_MAX_FD) {
        pthread_mutex_lock(&fe_lock);
        f = fe_fds[fd];
        pthread_mutex_unlock(&fe_lock);
    }
    return f;
}

/* Decides what an open of PATH does.  Returns 1 if handled (result in *ret,
 * errno set), 0 to fall through to the real open. */
static int fe_open_node(const char *path, int flags, int *ret)
{
    fe_config();
    if (!path)
        return 0;
    int saved = errno;
    if (fe_path_missing(path)) {
        fe_log("open %s -> ENOENT (FAKENV_MISSING)", path);
        *ret = -1;
        errno = ENOENT;
        return 1;
    }
    int e = fe_path_denied(path);
    if (e) {
        fe_log("open %s -> errno %d (FAKENV_DENY)", path, e);
        *ret = -1;
        errno = e;
        return 1;
    }
    unsigned minor = 0;
    int node = fe_classify(path, &minor);
    if (node == FE_NONE)
        return 0;
    if (node < 0) {
        fe_log("open %s -> ENOENT (not emulated)", path);
        *ret = -1;
        errno = ENOENT;
        return 1;
    }
    int deferred = 0;
    if (node == FE_GPU && cfg.gpu_open_errno) {
        if (!(flags & O_NONBLOCK)) {
            fe_log("open %s -> errno %d (FAKENV_GPU_OPEN_ERRNO)", path, cfg.gpu_open_errno);
            *ret = -1;
            errno = cfg.gpu_open_errno;
            return 1;
        }
        deferred = cfg.gpu_open_errno;
    }
    /* The raw syscall keeps the backing open invisible to every interposer. */
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null",
                          O_RDWR | (flags & (O_CLOEXEC | O_NONBLOCK)));
    if (fd < 0) {
        *ret = -1;
        return 1;
    }
    if (fd >= FE_MAX_FD) {
        syscall(SYS_close, fd);
        *ret = -1;
        errno = EMFILE;
        return 1;
    }
    pthread_mutex_lock(&fe_lock);
    memset(&fe_fds[fd], 0, sizeof fe_fds[fd]);
    fe_fds[fd].node = (uint8_t)node;
    fe_fds[fd].minor = (uint8_t)minor;
    fe_fds[fd].deferred_err = deferred;
    pthread_mutex_unlock(&fe_lock);
    fe_log("open %s flags 0x%x -> fd %d", path, (unsigned)flags, fd);
    *ret = fd;
    errno = saved;
    return 1;
}

/* Not inlined: glibc declares openat's path nonnull, and a NULL check
 * written inside the hook would be dropped. */
__attribute__((noinline)) static int fe_is_abs(const char *path)
{
    return path && path[0] == '/';
}

static int fe_mode_needed(int flags)
{
    return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE;
}

FE_EXPORT int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (fe_mode_needed(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    int r;
    if (fe_open_node(path, flags, &r))
        return r;
    open_fn next = NEXT(open_fn, open);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(path, flags, mode);
}

FE_EXPORT int open64(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (fe_mode_needed(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    int r;
    if (fe_open_node(path, flags, &r))
        return r;
    open_fn next = NEXT(open_fn, open64);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(path, flags, mode);
}

/* Relative paths are never emulated: the nodes live at fixed absolute names. */
FE_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (fe_mode_needed(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    int r;
    if (fe_is_abs(path) && fe_open_node(path, flags, &r))
        return r;
    openat_fn next = NEXT(openat_fn, openat);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(dirfd, path, flags, mode);
}

FE_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (fe_mode_needed(flags)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    int r;
    if (fe_is_abs(path) && fe_open_node(path, flags, &r))
        return r;
    openat_fn next = NEXT(openat_fn, openat64);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(dirfd, path, flags, mode);
}

/* _FORTIFY_SOURCE routes constant-flag opens here (buildsome issue #94). */
FE_EXPORT int __open_2(const char *path, int flags)
{
    int r;
    if (fe_open_node(path, flags, &r))
        return r;
    open2_fn next = NEXT(open2_fn, __open_2);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(path, flags);
}

FE_EXPORT int __open64_2(const char *path, int flags)
{
    int r;
    if (fe_open_node(path, flags, &r))
        return r;
    open2_fn next = NEXT(open2_fn, __open64_2);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(path, flags);
}

FE_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
    int r;
    if (fe_is_abs(path) && fe_open_node(path, flags, &r))
        return r;
    openat2_fn next = NEXT(openat2_fn, __openat_2);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(dirfd, path, flags);
}

FE_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
    int r;
    if (fe_is_abs(path) && fe_open_node(path, flags, &r))
        return r;
    openat2_fn next = NEXT(openat2_fn, __openat64_2);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(dirfd, path, flags);
}

FE_EXPORT int close(int fd)
{
    if (fd >= 0 && fd < FE_MAX_FD) {
        pthread_mutex_lock(&fe_lock);
        if (fe_fds[fd].node != FE_NONE) {
            memset(&fe_fds[fd], 0, sizeof fe_fds[fd]);
            fe_log("close fd %d", fd);
        }
        pthread_mutex_unlock(&fe_lock);
    }
    close_fn next = NEXT(close_fn, close);
    if (!next)
        return (int)syscall(SYS_close, fd);
    return next(fd);
}

/* ------------------------------------------------------------------ */
/* stat family: emulated fds and paths look like character devices. */

static void fe_patch_stat(struct stat *st, int node, unsigned minor)
{
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = fe_rdev(node, minor);
    st->st_ino = 0x4e560000u + (unsigned)node * 0x100u + minor;
}

/* Shared by the path-based calls.  Returns 1 if handled. */
static int fe_stat_path(const char *path, struct stat *st, int *ret)
{
    fe_config();
    if (!path)
        return 0;
    if (fe_path_missing(path)) {
        *ret = -1;
        errno = ENOENT;
        return 1;
    }
    unsigned minor = 0;
    int node = fe_classify(path, &minor);
    if (node == FE_NONE)
        return 0;
    if (node < 0) {
        *ret = -1;
        errno = ENOENT;
        return 1;
    }
    /* Start from /dev/null's real stat so every other field is plausible. */
    if (syscall(SYS_newfstatat, AT_FDCWD, "/dev/null", st, 0) != 0) {
        *ret = -1;
        return 1;
    }
    fe_patch_stat(st, node, minor);
    *ret = 0;
    return 1;
}

static int fe_stat_fd(int fd, struct stat *st, int *ret)
{
    struct fe_fd f = fe_lookup(fd);
    if (f.node == FE_NONE)
        return 0;
    if (syscall(SYS_fstat, fd, st) != 0) {
        *ret = -1;
        return 1;
    }
    fe_patch_stat(st, f.node, f.minor);
    *ret = 0;
    return 1;
}

/* On LP64 glibc struct stat and struct stat64 are the same layout. */
_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "stat64 layout");

FE_EXPORT int fstat(int fd, struct stat *st)
{
    int r;
    if (fe_stat_fd(fd, st, &r))
        return r;
    fstat_fn next = NEXT(fstat_fn, fstat);
    if (!next)
        return (int)syscall(SYS_fstat, fd, st);
    return next(fd, st);
}

FE_EXPORT int fstat64(int fd, struct stat64 *st)
{
    int r;
    if (fe_stat_fd(fd, (struct stat *)st, &r))
        return r;
    fstat64_fn next = NEXT(fstat64_fn, fstat64);
    if (!next)
        return (int)syscall(SYS_fstat, fd, st);
    return next(fd, st);
}

/* Pre-2.33 glibc binaries (libcudart 13 among them) call these. */
FE_EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
    int r;
    if (fe_stat_fd(fd, st, &r))
        return r;
    fxstat_fn next = NEXT(fxstat_fn, __fxstat);
    if (!next)
        return (int)syscall(SYS_fstat, fd, st);
    return next(ver, fd, st);
}

FE_EXPORT int __fxstat64(int ver, int fd, struct stat64 *st)
{
    int r;
    if (fe_stat_fd(fd, (struct stat *)st, &r))
        return r;
    fxstat64_fn next = NEXT(fxstat64_fn, __fxstat64);
    if (!next)
        return (int)syscall(SYS_fstat, fd, st);
    return next(ver, fd, st);
}

FE_EXPORT int stat(const char *path, struct stat *st)
{
    int r;
    if (fe_stat_path(path, st, &r))
        return r;
    stat_fn next = NEXT(stat_fn, stat);
    if (!next)
        return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
    return next(path, st);
}

FE_EXPORT int stat64(const char *path, struct stat64 *st)
{
    int r;
    if (fe_stat_path(path, (struct stat *)st, &r))
        return r;
    stat64_fn next = NEXT(stat64_fn, stat64);
    if (!next)
        return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
    return next(path, st);
}

/* Device nodes are not symlinks, so lstat answers like stat. */
FE_EXPORT int lstat(const char *path, struct stat *st)
{
    int r;
    if (fe_stat_path(path, st, &r))
        return r;
    stat_fn next = NEXT(stat_fn, lstat);
    if (!next)
        return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
    return next(path, st);
}

FE_EXPORT int lstat64(const char *path, struct stat64 *st)
{
    int r;
    if (fe_stat_path(path, (struct stat *)st, &r))
        return r;
    stat64_fn next = NEXT(stat64_fn, lstat64);
    if (!next)
        return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
    return next(path, st);
}

FE_EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
    int r;
    if (fe_stat_path(path, st, &r))
        return r;
    xstat_fn next = NEXT(xstat_fn, __xstat);
    if (!next)
        return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
    return next(ver, path, st);
}

FE_EXPORT int __xstat64(int ver, const char *path, struct stat64 *st)
{
    int r;
    if (fe_stat_path(path, (struct stat *)st, &r))
        return r;
    xstat64_fn next = NEXT(xstat64_fn, __xstat64);
    if (!next)
        return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
    return next(ver, path, st);
}

FE_EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
    int r;
    if (fe_stat_path(path, st, &r))
        return r;
    xstat_fn next = NEXT(xstat_fn, __lxstat);
    if (!next)
        return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
    return next(ver, path, st);
}

FE_EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st)
{
    int r;
    if (fe_stat_path(path, (struct stat *)st, &r))
        return r;
    xstat64_fn next = NEXT(xstat64_fn, __lxstat64);
    if (!next)
        return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
    return next(ver, path, st);
}

static int fe_fstatat_common(int dirfd, const char *path, struct stat *st, int flags, int *ret)
{
    if (path && path[0] == '\0' && (flags & AT_EMPTY_PATH))
        return fe_stat_fd(dirfd, st, ret);
    if (path && path[0] == '/')
        return fe_stat_path(path, st, ret);
    return 0;
}

FE_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    int r;
    if (fe_fstatat_common(dirfd, path, st, flags, &r))
        return r;
    fstatat_fn next = NEXT(fstatat_fn, fstatat);
    if (!next)
        return (int)syscall(SYS_newfstatat, dirfd, path, st, flags);
    return next(dirfd, path, st, flags);
}

FE_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
    int r;
    if (fe_fstatat_common(dirfd, path, (struct stat *)st, flags, &r))
        return r;
    fstatat64_fn next = NEXT(fstatat64_fn, fstatat64);
    if (!next)
        return (int)syscall(SYS_newfstatat, dirfd, path, st, flags);
    return next(dirfd, path, st, flags);
}

FE_EXPORT int access(const char *path, int mode)
{
    struct stat st;
    int r;
    if (fe_stat_path(path, &st, &r))
        return r;
    access_fn next = NEXT(access_fn, access);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(path, mode);
}

/* /proc/self/fd/N (or /proc/<own pid>/fd/N) of an emulated fd names the node. */
static int fe_readlink_fd(const char *path, char *buf, size_t len, ssize_t *ret)
{
    if (!path || strncmp(path, "/proc/", 6))
        return 0;
    const char *p = path + 6;
    char pid[16];
    snprintf(pid, sizeof pid, "%d/", (int)getpid());
    if (!strncmp(p, "self/", 5))
        p += 5;
    else if (!strncmp(p, pid, strlen(pid)))
        p += strlen(pid);
    else
        return 0;
    if (strncmp(p, "fd/", 3))
        return 0;
    char *end;
    long fd = strtol(p + 3, &end, 10);
    if (*end || end == p + 3)
        return 0;
    struct fe_fd f = fe_lookup((int)fd);
    if (f.node == FE_NONE)
        return 0;
    char tmp[64];
    const char *name = fe_node_path(&f, tmp, sizeof tmp);
    size_t n = strlen(name);
    if (n > len)
        n = len;
    memcpy(buf, name, n);
    *ret = (ssize_t)n;
    return 1;
}

FE_EXPORT ssize_t readlink(const char *path, char *buf, size_t len)
{
    ssize_t r;
    if (fe_readlink_fd(path, buf, len, &r))
        return r;
    readlink_fn next = NEXT(readlink_fn, readlink);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(path, buf, len);
}

FE_EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t len)
{
    ssize_t r;
    if (fe_readlink_fd(path, buf, len, &r))
        return r;
    readlinkat_fn next = NEXT(readlinkat_fn, readlinkat);
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    return next(dirfd, path, buf, len);
}

/* ------------------------------------------------------------------ */
/* copy_from_user / copy_to_user on our own address space.
 *
 * process_vm_readv/writev on the own pid fail with EFAULT instead of
 * faulting, which is how the kernel treats a bad user pointer.  They are used
 * only to probe the range (the write probe stores back the bytes it just
 * read); the data then moves with memcpy, so tools like valgrind still see
 * the memory as defined.  Called with fe_lock held (fe_scratch). */

static unsigned char fe_scratch[4096];

static int fe_user_ok(void *addr, size_t n, int write)
{
    int saved = errno;
    for (size_t off = 0; off < n;) {
        size_t chunk = n - off < sizeof fe_scratch ? n - off : sizeof fe_scratch;
        struct iovec l = { fe_scratch, chunk }, r = { (char *)addr + off, chunk };
        ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
        if (got < 0 && (errno == ENOSYS || errno == EPERM)) {
            errno = saved;                  /* seccomp forbids the probe: trust */
            return 0;
        }
        if (got != (ssize_t)chunk || (write && process_vm_writev(getpid(), &l, 1, &r, 1, 0) != (ssize_t)chunk)) {
            errno = saved;
            return -EFAULT;
        }
        off += chunk;
    }
    errno = saved;
    return 0;
}

static int fe_copy_in(void *dst, const void *src, size_t n)
{
    if (!n)
        return 0;
    if (!src || fe_user_ok((void *)src, n, 0))
        return -EFAULT;
    memcpy(dst, src, n);
    return 0;
}

static int fe_copy_out(void *dst, const void *src, size_t n)
{
    if (!n)
        return 0;
    if (!dst || fe_user_ok(dst, n, 1))
        return -EFAULT;
    memcpy(dst, src, n);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Resource-manager state: live clients and the objects under them. */

#define FE_MAX_CLIENTS 64
#define FE_MAX_OBJECTS 512

struct fe_object {
    uint32_t client, handle, cls;
    int gpu;                    /* GPU index for device/subdevice objects, else -1 */
};

static uint32_t fe_clients[FE_MAX_CLIENTS];
static struct fe_object fe_objects[FE_MAX_OBJECTS];
static uint32_t fe_client_seq, fe_handle_seq, fe_attached_mask;
static uint64_t fe_memblock_size, fe_range_group_seq;

static int fe_client_live(uint32_t h)
{
    for (int i = 0; i < FE_MAX_CLIENTS; i++)
        if (h && fe_clients[i] == h)
            return 1;
    return 0;
}

static int fe_client_add(uint32_t h)
{
    for (int i = 0; i < FE_MAX_CLIENTS; i++)
        if (!fe_clients[i]) {
            fe_clients[i] = h;
            return 0;
        }
    return -1;
}

static struct fe_object *fe_object_find(uint32_t client, uint32_t handle)
{
    for (int i = 0; i < FE_MAX_OBJECTS; i++)
        if (fe_objects[i].handle == handle && fe_objects[i].client == client && handle)
            return &fe_objects[i];
    return NULL;
}

static void fe_object_add(uint32_t client, uint32_t handle, uint32_t cls, int gpu)
{
    for (int i = 0; i < FE_MAX_OBJECTS; i++)
        if (!fe_objects[i].handle) {
            fe_objects[i] = (struct fe_object){ client, handle, cls, gpu };
            return;
        }
}

static void fe_free_handle(uint32_t client, uint32_t handle)
{
    if (handle == client) {
        for (int i = 0; i < FE_MAX_CLIENTS; i++)
            if (fe_clients[i] == client)
                fe_clients[i] = 0;
        for (int i = 0; i < FE_MAX_OBJECTS; i++)
            if (fe_objects[i].client == client)
                memset(&fe_objects[i], 0, sizeof fe_objects[i]);
        return;
    }
    struct fe_object *o = fe_object_find(client, handle);
    if (o)
        memset(o, 0, sizeof *o);
}

/* GPU index behind an RM object (device, subdevice); 0 if unknown. */
static int fe_object_gpu(uint32_t client, uint32_t handle)
{
    struct fe_object *o = fe_object_find(client, handle);
    return o && o->gpu >= 0 ? o->gpu : 0;
}

static int fe_gpu_index(uint32_t gpu_id)
{
    for (unsigned i = 0; i < cfg.gpus; i++)
        if (rig_gpu_id(i) == gpu_id)
            return (int)i;
    return -1;
}

/* ------------------------------------------------------------------ */
/* Frontend escapes (nv.c / escape.c behaviour, ABI.md §1-§4). */

enum fe_where { W_CTL = 1, W_GPU = 2, W_ANY = 3 };

/* Size and node rules for the escapes answered generically (status = NV_OK).
 * status_off < 0: no status field. */
static const struct fe_esc {
    unsigned nr, size;
    int where, status_off;
} fe_esc_table[] = {
    { NV_ESC_RM_ALLOC_OBJECT, 20, W_CTL, 16 },
    { NV_ESC_RM_DUP_OBJECT, 28, W_CTL, 24 },
    { NV_ESC_RM_SHARE, 24, W_CTL, 20 },
    { NV_ESC_RM_I2C_ACCESS, 32, W_GPU, 24 },
    { NV_ESC_RM_IDLE_CHANNELS, 56, W_CTL, 48 },
    { NV_ESC_RM_VID_HEAP_CONTROL, 184, W_CTL, 20 },
    { NV_ESC_RM_ACCESS_REGISTRY, 72, W_CTL, 64 },
    { NV_ESC_RM_UNMAP_MEMORY, 32, W_CTL, 24 },
    { NV_ESC_RM_GET_EVENT_DATA, 16, W_ANY, 12 },
    { NV_ESC_RM_ALLOC_CONTEXT_DMA2, 56, W_CTL, 48 },
    { NV_ESC_RM_MAP_MEMORY_DMA, 64, W_CTL, 56 },      /* 580+ */
    { NV_ESC_RM_UNMAP_MEMORY_DMA, 48, W_CTL, 40 },    /* 550+ */
    { NV_ESC_RM_BIND_CONTEXT_DMA, 16, W_CTL, 12 },
    { NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO, 40, W_CTL, 32 },
    { NV_ESC_QUERY_DEVICE_INTR, 8, W_GPU, 4 },
    { NV_ESC_EXPORT_TO_DMABUF_FD, 2608, W_GPU, 2600 }, /* 570+ */
};

static int fe_where_ok(int where, const struct fe_fd *f)
{
    return (where & W_CTL && f->node == FE_CTL) || (where & W_GPU && f->node == FE_GPU);
}

static unsigned char fe_blk[RIG_MAX_IOCTL_SIZE];   /* the copied-in block; under fe_lock */

static const char *fe_title(char *buf, size_t len)
{
    snprintf(buf, len, "NVIDIA UNIX Open Kernel Module for x86_64  %s  Release Build",
             cfg.version);
    return buf;
}

static int fe_card_info(unsigned size)
{
    unsigned n = size / RIG_CARD_INFO_SIZE;
    if (n < cfg.gpus)
        return -EINVAL;
    memset(fe_blk, 0, size);
    for (unsigned i = 0; i < cfg.gpus; i++) {
        unsigned char *e = fe_blk + i * RIG_CARD_INFO_SIZE;
        e[RIG_CARD_VALID] = 1;
        e[RIG_CARD_PCI_BUS] = (unsigned char)(i + 1);
        uint16_t vendor = RIG_PCI_VENDOR, device = RIG_PCI_DEVICE, irq = 41;
        memcpy(e + RIG_CARD_VENDOR, &vendor, 2);
        memcpy(e + RIG_CARD_DEVICE, &device, 2);
        rig_put32(e, RIG_CARD_GPU_ID, rig_gpu_id(i));
        memcpy(e + RIG_CARD_IRQ, &irq, 2);
        rig_put64(e, RIG_CARD_REG_ADDR, 0xa0000000ull + i * 0x4000000ull);
        rig_put64(e, RIG_CARD_REG_SIZE, 16ull << 20);
        rig_put64(e, RIG_CARD_FB_ADDR, 0x38000000000ull + i * 0x4000000000ull);
        rig_put64(e, RIG_CARD_FB_SIZE, 256ull << 30);
        rig_put32(e, RIG_CARD_MINOR, i);
    }
    return 0;
}

/* ABI.md §4: returns 0 or -EINVAL; reply and versionString are updated in fe_blk. */
static int fe_check_version(void)
{
    uint32_t cmd = rig_get32(fe_blk, 0);
    char *vs = (char *)fe_blk + RIG_VERSION_STRING_OFF;
    rig_put32(fe_blk, 4, 1);                    /* reply = RECOGNIZED, always first */
    if (cmd == RIG_VERSION_CMD_QUERY) {
        memset(vs, 0, RIG_VERSION_STRING_LEN);
        snprintf(vs, RIG_VERSION_STRING_LEN, "%s", cfg.version);
        return 0;
    }
    vs[RIG_VERSION_STRING_LEN - 1] = '\0';
    const char *k = cfg.version;
    int ok = 1;
    for (int i = 0; i < RIG_VERSION_STRING_LEN; i++) {
        if (vs[i] != k[i]) {
            ok = 0;
            break;
        }
        if (cmd == RIG_VERSION_CMD_RELAXED && vs[i] == '.')
            break;
        if (!vs[i])
            break;
    }
    if (ok)
        return 0;
    fe_log("CHECK_VERSION_STR mismatch: client '%s', kernel '%s'", vs, k);
    memset(vs, 0, RIG_VERSION_STRING_LEN);
    snprintf(vs, RIG_VERSION_STRING_LEN, "%s", k);
    return -EINVAL;
}

static int fe_register_fd(int fd, struct fe_fd *f)
{
    int ctl = (int)rig_get32(fe_blk, 0);
    if (ctl < 0 || ctl >= FE_MAX_FD || fe_fds[ctl].node != FE_CTL || ctl == fd || f->registered)
        return -EINVAL;
    f->registered = 1;
    return 0;
}

static int fe_attach_gpus(struct fe_fd *f, unsigned size)
{
    if (f->attached)
        return -EINVAL;
    for (unsigned off = 0; off < size; off += 4) {
        uint32_t id = rig_get32(fe_blk, off);
        if (id && fe_gpu_index(id) < 0)
            return -EINVAL;
    }
    f->attached = 1;
    return 0;
}

static int fe_sys_params(void)
{
    uint64_t v = rig_get64(fe_blk, 0);
    if (fe_memblock_size && v != fe_memblock_size)
        return -EBUSY;
    fe_memblock_size = v;
    return 0;
}

static void fe_numa_info(void)
{
    memset(fe_blk, 0, 560);
    rig_put32(fe_blk, 0, (uint32_t)-1);        /* nid: no NUMA node */
    rig_put32(fe_blk, 4, 0);                   /* NV_IOCTL_NUMA_STATUS_DISABLED */
    rig_put64(fe_blk, 8, 128ull << 20);        /* memblock_size */
}

/* --- RM_ALLOC (NVOS21 / NVOS64) --- */

static int fe_is_event_class(uint32_t cls)
{
    return cls == NV01_EVENT || cls == NV01_EVENT_KERNEL_CALLBACK ||
           cls == NV01_EVENT_OS_EVENT || cls == NV01_EVENT_KERNEL_CALLBACK_EX;
}

/* Device alloc params (NV0080_ALLOC_PARAMETERS): deviceId @0 names the GPU. */
static int fe_device_param_gpu(uint64_t uptr)
{
    uint32_t dev_id;
    if (!uptr || fe_copy_in(&dev_id, (const void *)(uintptr_t)uptr, 4))
        return 0;
    return dev_id < cfg.gpus ? (int)dev_id : 0;
}

static uint32_t fe_rm_alloc_body(void)
{
    uint32_t root = rig_get32(fe_blk, 0), parent = rig_get32(fe_blk, 4);
    uint32_t handle = rig_get32(fe_blk, 8), cls = rig_get32(fe_blk, 12);
    if (cls == NV01_ROOT || cls == NV01_ROOT_NON_PRIV || cls == NV01_ROOT_CLIENT) {
        rig_put32(fe_blk, 12, NV01_ROOT_CLIENT);   /* the kernel rewrites the class */
        int64_t st = fe_rule_hit(&cfg.rm_alloc, NV01_ROOT_CLIENT);
        if (st >= 0)
            return (uint32_t)st;
        if (!handle)
            handle = 0xC1D00000u + ++fe_client_seq;
        if (fe_client_live(handle))
            return NV_ERR_INSUFFICIENT_RESOURCES;
        if (fe_client_add(handle))
            return NV_ERR_INSUFFICIENT_RESOURCES;
        rig_put32(fe_blk, 8, handle);
        return NV_OK;
    }
    if (!fe_client_live(root))
        return NV_ERR_INVALID_CLIENT;
    int64_t st = fe_rule_hit(&cfg.rm_alloc, cls);
    if (st >= 0)
        return (uint32_t)st;
    if (!handle)
        handle = 0xCAF00000u + ++fe_handle_seq;
    if (fe_object_find(root, handle))
        return 0x19;    /* NV_ERR_INSERT_DUPLICATE_NAME */
    int gpu = -1;
    if (cls == NV01_DEVICE_0)
        gpu = fe_device_param_gpu(rig_get64(fe_blk, 16));
    else if (cls == NV20_SUBDEVICE_0)
        gpu = fe_object_gpu(root, parent);
    fe_object_add(root, handle, cls, gpu);
    rig_put32(fe_blk, 8, handle);
    return NV_OK;
}

static int fe_rm_alloc(const struct fe_fd *f, unsigned size)
{
    unsigned status_off = size == RIG_NVOS64_SIZE ? 40 : 28;
    uint32_t cls = rig_get32(fe_blk, 12);
    if (f->node != FE_CTL && !fe_is_event_class(cls))
        return -EINVAL;
    rig_put32(fe_blk, status_off, fe_rm_alloc_body());
    fe_log("RM_ALLOC class 0x%x -> handle 0x%x status 0x%x", cls,
           rig_get32(fe_blk, 8), rig_get32(fe_blk, status_off));
    return 0;
}

/* --- RM_CONTROL (NVOS54) --- */

static unsigned char fe_pay[RIG_BUILD_VERSION_V2_SIZE];   /* under fe_lock */

/* Writes a NUL-terminated string to a user buffer of LEN bytes. */
static int fe_put_string(uint64_t uptr, const char *s, size_t len)
{
    size_t n = strlen(s) + 1;
    if (n > len)
        return -1;
    return fe_copy_out((void *)(uintptr_t)uptr, s, n) ? -1 : 0;
}

static uint32_t fe_ctl_build_version(void)
{
    char title[128];
    fe_title(title, sizeof title);
    uint32_t need = (uint32_t)strlen(title) + 1;
    uint32_t have = rig_get32(fe_pay, 0);
    uint64_t drv = rig_get64(fe_pay, 8), ver = rig_get64(fe_pay, 16), ttl = rig_get64(fe_pay, 24);
    rig_put32(fe_pay, 32, 36500000u);         /* changelistNumber */
    rig_put32(fe_pay, 36, 36500000u);         /* officialChangelistNumber */
    if (!have || !drv || !ver || !ttl) {
        rig_put32(fe_pay, 0, need);           /* size query */
        return NV_OK;
    }
    if (have < need)
        return NV_ERR_BUFFER_TOO_SMALL;
    if (fe_put_string(drv, cfg.version, have) || fe_put_string(ver, cfg.version, have) ||
        fe_put_string(ttl, title, have))
        return NV_ERR_INVALID_ARGUMENT;
    return NV_OK;
}

static uint32_t fe_ctl_build_version_v2(void)
{
    char title[128];
    memset(fe_pay, 0, RIG_BUILD_VERSION_V2_SIZE);
    snprintf((char *)fe_pay, 256, "%s", cfg.version);
    snprintf((char *)fe_pay + 256, 256, "%s", cfg.version);
    snprintf((char *)fe_pay + 512, 256, "r%.3s_00", cfg.version);
    snprintf((char *)fe_pay + 768, 256, "%s", fe_title(title, sizeof title));
    rig_put32(fe_pay, 1024, 36500000u);
    rig_put32(fe_pay, 1028, 36500000u);
    return NV_OK;
}

static void fe_fill_ids(unsigned off, uint32_t mask)
{
    unsigned k = 0;
    for (unsigned i = 0; i < RIG_MAX_GPUS; i++)
        rig_put32(fe_pay, off + 4 * i, RIG_GPU_INVALID_ID);
    for (unsigned i = 0; i < cfg.gpus; i++)
        if (mask & (1u << i))
            rig_put32(fe_pay, off + 4 * k++, rig_gpu_id(i));
}

static uint32_t fe_all_mask(void)
{
    return cfg.gpus >= 32 ? 0xFFFFFFFFu : (1u << cfg.gpus) - 1;
}

static uint32_t fe_ctl_attach_ids(void)
{
    uint32_t mask = 0;
    rig_put32(fe_pay, 128, RIG_GPU_INVALID_ID);          /* failedId */
    for (unsigned i = 0; i < RIG_MAX_GPUS; i++) {
        uint32_t id = rig_get32(fe_pay, 4 * i);
        if (id == RIG_GPU_INVALID_ID)
            break;
        if (id == RIG_ATTACH_ALL_PROBED) {
            mask = fe_all_mask();
            break;
        }
        int g = fe_gpu_index(id);
        if (g < 0) {
            rig_put32(fe_pay, 128, id);
            return NV_ERR_INVALID_ARGUMENT;
        }
        mask |= 1u << g;
    }
    fe_attached_mask |= mask;
    return NV_OK;
}

/* GET_ID_INFO (40 bytes, with szName @16) and _V2 (32 bytes). */
static uint32_t fe_ctl_id_info(int v2)
{
    int g = fe_gpu_index(rig_get32(fe_pay, 0));
    if (g < 0 || !(fe_attached_mask & (1u << g)))
        return NV_ERR_INVALID_ARGUMENT;
    rig_put32(fe_pay, 4, 0);                              /* gpuFlags */
    rig_put32(fe_pay, 8, (uint32_t)g);                    /* deviceInstance */
    rig_put32(fe_pay, 12, 0);                             /* subDeviceInstance */
    unsigned base = v2 ? 16 : 24;                         /* sliStatus */
    rig_put32(fe_pay, base, 0);
    rig_put32(fe_pay, base + 4, (uint32_t)g);             /* boardId */
    rig_put32(fe_pay, base + 8, (uint32_t)g);             /* gpuInstance */
    rig_put32(fe_pay, base + 12, RIG_GPU_INVALID_ID);     /* numaId: none */
    return NV_OK;
}

static uint32_t fe_ctl_gid_info(uint32_t client, uint32_t object)
{
    unsigned char uuid[16];
    rig_gpu_uuid((unsigned)fe_object_gpu(client, object), uuid);
    uint32_t flags = rig_get32(fe_pay, 4);
    memset(fe_pay + 8, 0, RIG_GID_INFO_SIZE - 8);
    if ((flags & RIG_GID_FORMAT_MASK) == RIG_GID_FORMAT_BINARY) {
        rig_put32(fe_pay, 8, 16);
        memcpy(fe_pay + 12, uuid, 16);
    } else {
        char s[41];
        rig_uuid_str(uuid, s);
        rig_put32(fe_pay, 8, (uint32_t)sizeof s);
        memcpy(fe_pay + 12, s, sizeof s);
    }
    return NV_OK;
}

/* NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID: the UUID of a probed GPU. */
static uint32_t fe_ctl_uuid_from_id(void)
{
    int g = fe_gpu_index(rig_get32(fe_pay, 0));
    if (g < 0)
        return NV_ERR_INVALID_ARGUMENT;
    unsigned char uuid[16];
    rig_gpu_uuid((unsigned)g, uuid);
    uint32_t flags = rig_get32(fe_pay, 4);
    memset(fe_pay + 8, 0, RIG_UUID_FROM_ID_SIZE - 8);
    if ((flags & RIG_GID_FORMAT_MASK) == RIG_GID_FORMAT_BINARY) {
        memcpy(fe_pay + 8, uuid, 16);
        rig_put32(fe_pay, 264, 16);
    } else {
        char str[41];
        rig_uuid_str(uuid, str);
        memcpy(fe_pay + 8, str, sizeof str);
        rig_put32(fe_pay, 264, (uint32_t)sizeof str);
    }
    return NV_OK;
}

/* Payload size each implemented control expects (0 = not implemented). */
static unsigned fe_ctl_size(uint32_t cmd)
{
    switch (cmd) {
    case NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION: return RIG_BUILD_VERSION_SIZE;
    case NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2: return RIG_BUILD_VERSION_V2_SIZE;
    case NV0000_CTRL_CMD_SYSTEM_GET_FABRIC_STATUS: return RIG_FABRIC_STATUS_SIZE;
    case NV0000_CTRL_CMD_GPU_GET_PROBED_IDS: return RIG_PROBED_IDS_SIZE;
    case NV0000_CTRL_CMD_GPU_ATTACH_IDS: return RIG_ATTACH_IDS_SIZE;
    case NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS: return RIG_ATTACHED_IDS_SIZE;
    case NV0000_CTRL_CMD_GPU_GET_ID_INFO: return RIG_ID_INFO_SIZE;
    case NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: return RIG_ID_INFO_V2_SIZE;
    case NV0000_CTRL_CMD_GPU_GET_INIT_STATUS: return RIG_INIT_STATUS_SIZE;
    case NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID: return RIG_UUID_FROM_ID_SIZE;
    case NV2080_CTRL_CMD_GPU_GET_GID_INFO: return RIG_GID_INFO_SIZE;
    case NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE: return RIG_VIRT_MODE_SIZE;
    case NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES: return RIG_COMPUTE_RULES_SIZE;
    default: return 0;
    }
}

static uint32_t fe_ctl_dispatch(uint32_t client, uint32_t object, uint32_t cmd)
{
    switch (cmd) {
    case NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION:
        return fe_ctl_build_version();
    case NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2:
        return fe_ctl_build_version_v2();
    case NV0000_CTRL_CMD_SYSTEM_GET_FABRIC_STATUS:
        rig_put32(fe_pay, 0, cfg.fabric);
        return NV_OK;
    case NV0000_CTRL_CMD_GPU_GET_PROBED_IDS:
        memset(fe_pay, 0, RIG_PROBED_IDS_SIZE);
        fe_fill_ids(0, fe_all_mask());
        fe_fill_ids(128, 0);                              /* excludedGpuIds */
        return NV_OK;
    case NV0000_CTRL_CMD_GPU_ATTACH_IDS:
        return fe_ctl_attach_ids();
    case NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS:
        fe_fill_ids(0, fe_attached_mask);
        return NV_OK;
    case NV0000_CTRL_CMD_GPU_GET_ID_INFO:
        return fe_ctl_id_info(0);
    case NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2:
        return fe_ctl_id_info(1);
    case NV0000_CTRL_CMD_GPU_GET_INIT_STATUS:
        if (fe_gpu_index(rig_get32(fe_pay, 0)) < 0)
            return NV_ERR_INVALID_ARGUMENT;
        rig_put32(fe_pay, 4, NV_OK);
        return NV_OK;
    case NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID:
        return fe_ctl_uuid_from_id();
    case NV2080_CTRL_CMD_GPU_GET_GID_INFO:
        return fe_ctl_gid_info(client, object);
    case NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE: /* virtualizationMode, isGridBuild */
        memset(fe_pay, 0, RIG_VIRT_MODE_SIZE);
        rig_put32(fe_pay, 0, cfg.virt_mode);
        fe_pay[4] = cfg.virt_mode == 2;
        return NV_OK;
    case NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES: rig_put32(fe_pay, 0, cfg.compute_mode); return NV_OK;
    default:
        return NV_OK;
    }
}

static uint32_t fe_rm_control_body(void)
{
    uint32_t client = rig_get32(fe_blk, 0), object = rig_get32(fe_blk, 4);
    uint32_t cmd = rig_get32(fe_blk, 8), psize = rig_get32(fe_blk, 24);
    uint64_t params = rig_get64(fe_blk, 16);
    if (!fe_client_live(client))
        return NV_ERR_INVALID_CLIENT;
    int64_t st = fe_rule_hit(&cfg.rm_control, cmd);
    if (st >= 0)
        return (uint32_t)st;
    unsigned want = fe_ctl_size(cmd);
    if (!want)
        return NV_OK;                       /* not modelled: plain success */
    if (psize != want)
        return NV_ERR_INVALID_PARAM_STRUCT;
    if (!params || fe_copy_in(fe_pay, (const void *)(uintptr_t)params, want))
        return NV_ERR_INVALID_ARGUMENT;
    uint32_t status = fe_ctl_dispatch(client, object, cmd);
    /* RM writes the payload back in place, also on failure. */
    if (fe_copy_out((void *)(uintptr_t)params, fe_pay, want))
        return NV_ERR_INVALID_ARGUMENT;
    return status;
}

static int fe_rm_control(void)
{
    rig_put32(fe_blk, 28, fe_rm_control_body());
    fe_log("RM_CONTROL cmd 0x%x size %u -> status 0x%x", rig_get32(fe_blk, 8),
           rig_get32(fe_blk, 24), rig_get32(fe_blk, 28));
    return 0;
}

static int fe_rm_free(void)
{
    uint32_t root = rig_get32(fe_blk, 0), old = rig_get32(fe_blk, 8);
    if (!fe_client_live(root)) {
        rig_put32(fe_blk, 12, NV_ERR_INVALID_CLIENT);
        return 0;
    }
    int64_t st = fe_rule_hit(&cfg.rm_free, old);
    if (st >= 0) {
        rig_put32(fe_blk, 12, (uint32_t)st);
        return 0;
    }
    fe_free_handle(root, old);
    rig_put32(fe_blk, 12, NV_OK);
    return 0;
}

/* NVOS02 with fd: must go to a GPU node (ABI.md §2b). */
static int fe_rm_alloc_memory(void)
{
    uint32_t root = rig_get32(fe_blk, 0), cls = rig_get32(fe_blk, 12);
    uint32_t status = NV_OK;
    int64_t st = fe_rule_hit(&cfg.rm_alloc, cls);
    if (!fe_client_live(root))
        status = NV_ERR_INVALID_CLIENT;
    else if (st >= 0)
        status = (uint32_t)st;
    else if (!rig_get32(fe_blk, 8))
        rig_put32(fe_blk, 8, 0xCAF00000u + ++fe_handle_seq);
    rig_put32(fe_blk, 40, status);
    return 0;
}

static int fe_rm_map_memory(void)
{
    uint32_t client = rig_get32(fe_blk, 0);
    if (!fe_client_live(client)) {
        rig_put32(fe_blk, 40, NV_ERR_INVALID_CLIENT);
        return 0;
    }
    rig_put64(fe_blk, 32, 0x7e0000000000ull + rig_get64(fe_blk, 16));   /* pLinearAddress */
    rig_put32(fe_blk, 40, NV_OK);
    return 0;
}

static int fe_os_event(void)
{
    rig_put32(fe_blk, 12, fe_client_live(rig_get32(fe_blk, 0)) ? NV_OK : NV_ERR_INVALID_CLIENT);
    return 0;
}

static int fe_status_code(void)
{
    uint32_t domain = rig_get32(fe_blk, 0);
    unsigned bus = fe_blk[4], slot = fe_blk[5];
    int found = domain == 0 && slot == 0 && bus >= 1 && bus <= cfg.gpus;
    rig_put32(fe_blk, 8, found ? NV_OK : NV_ERR_INVALID_ARGUMENT);
    return 0;
}

static int fe_wait_open(const struct fe_fd *f)
{
    rig_put32(fe_blk, 0, (uint32_t)-f->deferred_err);
    rig_put32(fe_blk, 4, f->deferred_err ? NV_ERR_GENERIC : NV_OK);
    return 0;
}

/* Validates nr/size/node before the copy-in.  Returns 0 or -EINVAL (and
 * *handled_generic=status offset for table-driven escapes). */
static int fe_validate(const struct fe_fd *f, unsigned nr, unsigned size, int *generic_off)
{
    *generic_off = -2;
    switch (nr) {
    case NV_ESC_CARD_INFO:
        return f->node == FE_CTL && size && size % RIG_CARD_INFO_SIZE == 0 ? 0 : -EINVAL;
    case NV_ESC_ATTACH_GPUS_TO_FD:
        return f->node == FE_CTL && size >= 4 && size % 4 == 0 ? 0 : -EINVAL;
    case NV_ESC_REGISTER_FD:
        return size == 4 ? 0 : -EINVAL;
    case NV_ESC_ALLOC_OS_EVENT:
    case NV_ESC_FREE_OS_EVENT:
        return size == 16 ? 0 : -EINVAL;
    case NV_ESC_STATUS_CODE:
        return f->node == FE_CTL && size == 12 ? 0 : -EINVAL;
    case NV_ESC_CHECK_VERSION_STR:
        return f->node == FE_CTL && size == RIG_VERSION_STR_SIZE ? 0 : -EINVAL;
    case NV_ESC_SYS_PARAMS:
        return f->node == FE_CTL && size == 8 ? 0 : -EINVAL;
    case NV_ESC_NUMA_INFO:
        return f->node == FE_GPU && size == 560 ? 0 : -EINVAL;
    case NV_ESC_SET_NUMA_STATUS:
        return f->node == FE_GPU && size == 4 ? 0 : -EINVAL;
    case NV_ESC_WAIT_OPEN_COMPLETE:
        return size == 8 ? 0 : -EINVAL;
    case NV_ESC_RM_ALLOC:
        return size == RIG_NVOS21_SIZE || size == RIG_NVOS64_SIZE ? 0 : -EINVAL;
    case NV_ESC_RM_CONTROL:
        return f->node == FE_CTL && size == RIG_NVOS54_SIZE ? 0 : -EINVAL;
    case NV_ESC_RM_FREE:
        return f->node == FE_CTL && size == RIG_NVOS00_SIZE ? 0 : -EINVAL;
    case NV_ESC_RM_ALLOC_MEMORY:
        return f->node == FE_GPU && size == RIG_NVOS02_FD_SIZE ? 0 : -EINVAL;
    case NV_ESC_RM_MAP_MEMORY:
        return f->node == FE_CTL && size == RIG_NVOS33_FD_SIZE ? 0 : -EINVAL;
    default:
        break;
    }
    for (size_t i = 0; i < sizeof fe_esc_table / sizeof fe_esc_table[0]; i++) {
        const struct fe_esc *e = &fe_esc_table[i];
        if (e->nr != nr)
            continue;
        if (e->size != size || !fe_where_ok(e->where, f))
            return -EINVAL;
        *generic_off = e->status_off;
        return 0;
    }
    return -EINVAL;                         /* unknown escape */
}

static int fe_escape(int fd, struct fe_fd *f, unsigned nr, unsigned size, void *uarg, int depth);

static int fe_xfer(int fd, struct fe_fd *f, unsigned size, void *uarg, int depth)
{
    unsigned char hdr[16];
    if (size != 16 || depth > 0)
        return -EINVAL;
    if (fe_copy_in(hdr, uarg, 16))
        return -EFAULT;
    unsigned inner = rig_get32(hdr, 0), isize = rig_get32(hdr, 4);
    if (isize > RIG_MAX_IOCTL_SIZE || inner == NV_ESC_IOCTL_XFER_CMD)
        return -EINVAL;
    return fe_escape(fd, f, inner & 0xFFu, isize, (void *)(uintptr_t)rig_get64(hdr, 8), depth + 1);
}

static int fe_handle(int fd, struct fe_fd *f, unsigned nr, unsigned size, int generic_off)
{
    switch (nr) {
    case NV_ESC_CARD_INFO: return fe_card_info(size);
    case NV_ESC_REGISTER_FD: return fe_register_fd(fd, f);
    case NV_ESC_ALLOC_OS_EVENT:
    case NV_ESC_FREE_OS_EVENT: return fe_os_event();
    case NV_ESC_STATUS_CODE: return fe_status_code();
    case NV_ESC_CHECK_VERSION_STR: return fe_check_version();
    case NV_ESC_ATTACH_GPUS_TO_FD: return fe_attach_gpus(f, size);
    case NV_ESC_SYS_PARAMS: return fe_sys_params();
    case NV_ESC_NUMA_INFO: fe_numa_info(); return 0;
    case NV_ESC_SET_NUMA_STATUS: return geteuid() == 0 ? 0 : -EACCES;
    case NV_ESC_WAIT_OPEN_COMPLETE: return fe_wait_open(f);
    case NV_ESC_RM_ALLOC: return fe_rm_alloc(f, size);
    case NV_ESC_RM_CONTROL: return fe_rm_control();
    case NV_ESC_RM_FREE: return fe_rm_free();
    case NV_ESC_RM_ALLOC_MEMORY: return fe_rm_alloc_memory();
    case NV_ESC_RM_MAP_MEMORY: return fe_rm_map_memory();
    default:
        if (generic_off >= 0)
            rig_put32(fe_blk, (unsigned)generic_off, NV_OK);
        return 0;
    }
}

/* One frontend/RM escape, called with fe_lock held.  Returns 0 or -errno. */
static int fe_escape(int fd, struct fe_fd *f, unsigned nr, unsigned size, void *uarg, int depth)
{
    if (f->deferred_err && nr != NV_ESC_WAIT_OPEN_COMPLETE)
        return -EIO;
    int64_t e = fe_rule_hit(&cfg.esc_errno, nr);
    if (e > 0)
        return -(int)e;
    if (nr == NV_ESC_IOCTL_XFER_CMD)
        return fe_xfer(fd, f, size, uarg, depth);
    int generic_off;
    int rc = fe_validate(f, nr, size, &generic_off);
    if (rc)
        return rc;                          /* rejected before copy-in: nothing written */
    if (fe_copy_in(fe_blk, uarg, size))
        return -EFAULT;
    rc = fe_handle(fd, f, nr, size, generic_off);
    /* The kernel copies the block back even when the escape fails (ABI.md §1). */
    if (fe_copy_out(uarg, fe_blk, size))
        return -EFAULT;
    return rc;
}

/* ------------------------------------------------------------------ */
/* UVM (ABI.md §6): plain request numbers, the size comes from the command. */

enum { U_NEED_INIT = 1, U_TOOLS = 2 };

static const struct fe_uvm_cmd {
    unsigned long req;
    unsigned size, status_off;
    int flags;
} fe_uvm_table[] = {
    { UVM_INITIALIZE, RIG_UVM_INIT_SIZE, 8, 0 },
    { UVM_MM_INITIALIZE, RIG_UVM_MM_INIT_SIZE, 4, 0 },
    { UVM_CREATE_RANGE_GROUP, 16, 8, U_NEED_INIT },
    { UVM_DESTROY_RANGE_GROUP, 16, 8, U_NEED_INIT },
    { UVM_REGISTER_GPU_VASPACE, 32, 28, U_NEED_INIT },
    { UVM_UNREGISTER_GPU_VASPACE, 20, 16, U_NEED_INIT },
    { UVM_REGISTER_CHANNEL, 56, 48, U_NEED_INIT },
    { UVM_UNREGISTER_CHANNEL, 28, 24, U_NEED_INIT },          /* 580 size */
    { 29, 36, 32, U_NEED_INIT },                              /* ENABLE_PEER_ACCESS */
    { 30, 36, 32, U_NEED_INIT },                              /* DISABLE_PEER_ACCESS */
    { 31, 32, 24, U_NEED_INIT },                              /* SET_RANGE_GROUP */
    { UVM_MAP_EXTERNAL_ALLOCATION, RIG_UVM_MAP_EXTERNAL_SIZE, RIG_UVM_MAP_EXT_STATUS, U_NEED_INIT },
    { UVM_FREE, 24, 16, U_NEED_INIT },                        /* 580 size */
    { UVM_REGISTER_GPU, RIG_UVM_REGISTER_GPU_SIZE, 36, U_NEED_INIT },
    { UVM_UNREGISTER_GPU, 20, 16, U_NEED_INIT },
    { UVM_PAGEABLE_MEM_ACCESS, RIG_UVM_PAGEABLE_SIZE, 4, U_NEED_INIT },
    { 40, 272, 264, U_NEED_INIT }, { 41, 272, 264, U_NEED_INIT },
    { 42, 40, 36, U_NEED_INIT }, { 43, 24, 16, U_NEED_INIT },
    { 44, 24, 16, U_NEED_INIT }, { 45, 24, 16, U_NEED_INIT },
    { 46, 40, 32, U_NEED_INIT }, { 47, 40, 32, U_NEED_INIT },
    { 51, 80, 72, U_NEED_INIT }, { 53, 32, 24, U_NEED_INIT },
    { 54, 20, 16, U_NEED_INIT }, { 55, 20, 16, U_NEED_INIT },
    { 56, 56, 48, U_TOOLS }, { 57, 8, 4, U_TOOLS }, { 58, 16, 8, U_TOOLS },
    { 59, 16, 8, U_TOOLS }, { 60, 16, 8, U_TOOLS }, { 61, 16, 8, U_TOOLS },
    { 76, 56, 48, U_TOOLS },
    { 62, 40, 32, U_NEED_INIT }, { 63, 40, 32, U_NEED_INIT },
    { 64, 16, 8, U_NEED_INIT },
    { UVM_MAP_DYNAMIC_PARALLELISM_REGION, 40, 32, U_NEED_INIT },
    { 66, 40, 32, U_NEED_INIT }, { 67, 4, 0, U_NEED_INIT },
    { UVM_ALLOC_SEMAPHORE_POOL, 9248, 9240, U_NEED_INIT },
    { 69, 4, 0, U_NEED_INIT }, { 70, 24, 20, U_NEED_INIT }, { 71, 24, 20, U_NEED_INIT },
    { UVM_VALIDATE_VA_RANGE, RIG_UVM_RANGE_SIZE, 16, U_NEED_INIT },
    { UVM_CREATE_EXTERNAL_RANGE, RIG_UVM_RANGE_SIZE, 16, U_NEED_INIT },
    { 74, 40, 32, U_NEED_INIT }, { 77, 16, 8, U_NEED_INIT },
    { 78, 56, 52, U_NEED_INIT }, { 79, 4, 0, U_NEED_INIT },
};

static int fe_uuid_gpu(const unsigned char *uuid)
{
    for (unsigned i = 0; i < cfg.gpus; i++) {
        unsigned char u[16];
        rig_gpu_uuid(i, u);
        if (!memcmp(u, uuid, 16))
            return (int)i;
    }
    return -1;
}

static int fe_is_ctl_fd(int fd)
{
    return fd >= 0 && fd < FE_MAX_FD && fe_fds[fd].node == FE_CTL;
}

static uint32_t fe_uvm_initialize(struct fe_fd *f)
{
    uint64_t flags = rig_get64(fe_blk, 0);
    if (flags & ~3ull || f->uvm_mm)
        return NV_ERR_INVALID_ARGUMENT;
    if (f->uvm_init)
        return flags == f->uvm_flags ? NV_OK : NV_ERR_INVALID_ARGUMENT;
    f->uvm_init = 1;
    f->uvm_flags = flags;
    return NV_OK;
}

static uint32_t fe_uvm_mm_initialize(struct fe_fd *f)
{
    int primary = (int)rig_get32(fe_blk, 0);
    if (f->uvm_init || f->uvm_mm)
        return NV_ERR_IN_USE;
    if (primary < 0 || primary >= FE_MAX_FD || fe_fds[primary].node != FE_UVM ||
        !fe_fds[primary].uvm_init)
        return NV_ERR_INVALID_ARGUMENT;
    f->uvm_mm = 1;
    return NV_OK;
}

static uint32_t fe_uvm_register_gpu(struct fe_fd *f)
{
    int g = fe_uuid_gpu(fe_blk);
    if (g < 0)
        return NV_ERR_GPU_UUID_NOT_FOUND;
    if (!fe_is_ctl_fd((int)rig_get32(fe_blk, 24)) || !fe_client_live(rig_get32(fe_blk, 28)))
        return NV_ERR_INVALID_ARGUMENT;
    if (f->uvm_gpus & (1u << g))
        return NV_ERR_IN_USE;
    f->uvm_gpus |= 1u << g;
    fe_blk[16] = 0;                                  /* numaEnabled */
    rig_put32(fe_blk, 20, (uint32_t)-1);             /* numaNodeId */
    return NV_OK;
}

/* REGISTER_GPU_VASPACE / REGISTER_CHANNEL: the GPU must be registered first. */
static uint32_t fe_uvm_gpu_object(const struct fe_fd *f)
{
    int g = fe_uuid_gpu(fe_blk);
    if (g < 0 || !(f->uvm_gpus & (1u << g)))
        return 0x26;                                 /* NV_ERR_INVALID_DEVICE */
    if (!fe_is_ctl_fd((int)rig_get32(fe_blk, 16)) || !fe_client_live(rig_get32(fe_blk, 20)))
        return NV_ERR_INVALID_ARGUMENT;
    return NV_OK;
}

static uint32_t fe_uvm_dispatch(struct fe_fd *f, unsigned long req)
{
    switch (req) {
    case UVM_INITIALIZE: return fe_uvm_initialize(f);
    case UVM_MM_INITIALIZE: return fe_uvm_mm_initialize(f);
    case UVM_PAGEABLE_MEM_ACCESS:
        fe_blk[0] = 0;
        return NV_OK;
    case UVM_REGISTER_GPU: return fe_uvm_register_gpu(f);
    case UVM_CREATE_RANGE_GROUP:
        rig_put64(fe_blk, 0, ++fe_range_group_seq);
        return NV_OK;
    case UVM_REGISTER_GPU_VASPACE:
    case UVM_REGISTER_CHANNEL:
        return fe_uvm_gpu_object(f);
    default:
        return NV_OK;
    }
}

static int fe_uvm(struct fe_fd *f, unsigned long req, void *uarg)
{
    int64_t e = fe_rule_hit(&cfg.uvm_errno, req);
    if (e > 0)
        return -(int)e;
    if (req == UVM_DEINITIALIZE)
        return 0;
    const struct fe_uvm_cmd *c = NULL;
    for (size_t i = 0; i < sizeof fe_uvm_table / sizeof fe_uvm_table[0]; i++)
        if (fe_uvm_table[i].req == req)
            c = &fe_uvm_table[i];
    if (!c)
        return -ENOSYS;         /* the test-ioctl path, builtin tests disabled */
    if ((f->node == FE_UVM_TOOLS) != !!(c->flags & U_TOOLS))
        return f->node == FE_UVM_TOOLS ? -EINVAL : -ENOSYS;
    if (fe_copy_in(fe_blk, uarg, c->size))
        return -EFAULT;
    uint32_t status;
    int64_t st = fe_rule_hit(&cfg.uvm_status, req);
    if (st >= 0)
        status = (uint32_t)st;
    else if ((c->flags & U_NEED_INIT) && !f->uvm_init)
        status = NV_ERR_ILLEGAL_ACTION;
    else
        status = fe_uvm_dispatch(f, req);
    rig_put32(fe_blk, c->status_off, status);
    fe_log("UVM %lu -> rmStatus 0x%x", req, status);
    return fe_copy_out(uarg, fe_blk, c->size) ? -EFAULT : 0;
}

/* ------------------------------------------------------------------ */

static void fe_maybe_hang(const struct fe_fd *f, unsigned long req)
{
    if (!cfg.hang_set)
        return;
    int uvm = f->node == FE_UVM || f->node == FE_UVM_TOOLS;
    if ((uvm && req == cfg.hang_cmd) || (!uvm && (req & 0xFFu) == cfg.hang_cmd)) {
        fe_log("ioctl 0x%lx: hanging %u s (FAKENV_HANG_CMD)", req, cfg.hang_sec);
        sleep(cfg.hang_sec);
    }
}

FE_EXPORT int ioctl(int fd, unsigned long req, ...)
{
    va_list ap;
    va_start(ap, req);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    fe_config();
    struct fe_fd snap = fe_lookup(fd);
    if (snap.node == FE_NONE) {
        ioctl_fn next = NEXT(ioctl_fn, ioctl);
        if (!next) {
            errno = ENOSYS;
            return -1;
        }
        return next(fd, req, arg);
    }
    fe_maybe_hang(&snap, req);
    int rc;
    pthread_mutex_lock(&fe_lock);
    struct fe_fd *f = &fe_fds[fd];
    if (f->node == FE_NONE)
        rc = -EBADF;                        /* closed while we slept */
    else if (f->node == FE_CAP)
        rc = -ENOTTY;                       /* caps nodes have no ioctls */
    else if (f->node == FE_UVM || f->node == FE_UVM_TOOLS)
        rc = fe_uvm(f, req, arg);
    else
        rc = fe_escape(fd, f, RIG_IOC_NR(req), RIG_IOC_SIZE(req), arg, 0);
    pthread_mutex_unlock(&fe_lock);
    if (rc < 0) {
        fe_log("ioctl fd %d req 0x%lx -> errno %d", fd, req, -rc);
        errno = -rc;
        return -1;
    }
    return 0;
}
