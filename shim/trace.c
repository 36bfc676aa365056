/*
 * Process state, the trace file and the record writer.
 *
 * The trace file is created lazily, by the first event worth recording (an
 * open of /dev/nvidia*, a dlopen of a CUDA library, a driver call): programs
 * that never touch CUDA leave no file and pay nothing.  The file is
 * fallocated in full before it is mapped, so a full disk or a file-size limit
 * turns into "no trace" at creation time instead of SIGBUS/SIGXFSZ later, and
 * its fd is closed right after mmap(MAP_SHARED): a program that closes every
 * fd cannot take it away, and every committed record is in the page cache the
 * moment it is written, so it survives SIGKILL, SIGSEGV and abort.
 */
#include "shim.h"
#include "clock.h"
#include "parse.h"
#include "redact.h"
#include "tracedir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

CT_EXPORT const char cutrace_version[] = CUTRACE_VERSION;

struct ct_config ct_cfg;
volatile int ct_ready;
uint32_t ct_drv_code;
CT_TLS int ct_busy;
CT_TLS pid_t ct_tls_tid;
CT_TLS struct ct_chunk ct_tls_run; /* this thread's run of slots (ring.h) */

/* trace file sizes: common/parse.h (the CLI's --size checks the same) */
#define CT_DEFAULT_SIZE CT_SIZE_DEFAULT
#define CT_MIN_SIZE     CT_SIZE_MIN
#define CT_MAX_SIZE     CT_SIZE_MAX
#define CT_CTX_CAP      (28u << 10)

/* shim.h: ordinary memory until ct_init has a page wiped on fork */
static struct ct_proc proc_static = { TS_NONE, 0, 1 };
struct ct_proc *ct_proc = &proc_static;
static pid_t creator_tid;
struct ct_ring ct_ring_main;
static void *trace_map;
static size_t trace_len;
static pid_t ct_pid;
static uint64_t start_mono, start_real;
static int is_fork_child;

/* a vfork child (sharing the parent's memory) or a child of a raw fork
 * system call (no atfork handler ran): its pid is not the one this state
 * belongs to */
bool ct_other_process(void)
{
	pid_t p = __atomic_load_n(&ct_pid, __ATOMIC_RELAXED);

	return p && (pid_t)syscall(SYS_getpid) != p;
}

static void atfork_child(void);

bool ct_own_process(void)
{
	if (unlikely(!__atomic_load_n(&ct_proc->alive, __ATOMIC_ACQUIRE))) {
		/* the page was wiped: a fork child whose fork() was not glibc's
		 * (only the forking thread lives on in it) */
		atfork_child();
		return true;
	}
	return !ct_other_process();
}

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18 /* Linux 4.14 */
#endif

/* struct ct_proc into a page of its own that a fork child gets zeroed;
 * before any thread can record (ct_init) */
static void proc_page(void)
{
	void *p = mmap(NULL, sizeof(struct ct_proc), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);

	if (p == MAP_FAILED)
		return;
	if (madvise(p, sizeof(struct ct_proc), MADV_WIPEONFORK) != 0) {
		syscall(SYS_munmap, p, sizeof(struct ct_proc));
		return;
	}
	memcpy(p, &proc_static, sizeof proc_static);
	__atomic_store_n(&ct_proc, (struct ct_proc *)p, __ATOMIC_RELEASE);
}

pid_t ct_tid(void)
{
	if (unlikely(!ct_tls_tid))
		ct_tls_tid = ct_sys_gettid();
	return ct_tls_tid;
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- logging: a stack buffer and one write(2); no stdio streams ---------- */
/*
 * The shim's lines go to fd 2 only while fd 2 is the file the process started
 * with (its device and inode, taken by ct_init): a daemon that closed 0-2 and
 * whose next open made its data file fd 2 must never find a warning in it.
 * Otherwise a warning becomes a note in the trace's context (`cutrace show`
 * prints it; nowhere when there is no trace) and debug lines are dropped.
 */
static dev_t err_dev;
static ino_t err_ino;
static int err_known; /* fd 2 was open at load time */

static void stderr_remember(void)
{
	struct stat st;

	if (ct_sys_fstat(2, &st) == 0) {
		err_dev = st.st_dev;
		err_ino = st.st_ino;
		err_known = 1;
	}
}

static bool stderr_is_original(void)
{
	struct stat st;

	return err_known && ct_sys_fstat(2, &st) == 0 && st.st_dev == err_dev && st.st_ino == err_ino;
}

/* warnings kept for the trace's notes (one each: ct_warn_once) */
#define CT_WARN_KEEP 2
static char warn_kept[CT_WARN_KEEP][256];
static unsigned warn_kept_n;
static void note_add(const char *why, bool rec, bool degrade);

/* true: the line went to stderr */
static bool vlog(bool keep, const char *fmt, va_list ap)
{
	char buf[512];
	int saved = errno;
	int n = snprintf(buf, sizeof buf, "cutrace[%d]: ", (int)getpid());
	int pre;

	if (n < 0)
		n = 0;
	pre = n;
	int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	n += m;
	if ((size_t)n > sizeof buf - 2)
		n = (int)sizeof buf - 2;
	bool shown = stderr_is_original();
	if (shown) {
		buf[n++] = '\n';
		ct_sys_write(2, buf, (size_t)n);
	} else if (keep) {
		unsigned i = __atomic_fetch_add(&warn_kept_n, 1, __ATOMIC_SEQ_CST);
		if (i < CT_WARN_KEEP) {
			static const char tag[] =
				"warning (not shown: stderr is no longer the process's own): ";
			size_t t = sizeof tag - 1, k = (size_t)(n - pre);
			if (k > sizeof warn_kept[i] - t - 1)
				k = sizeof warn_kept[i] - t - 1;
			memcpy(warn_kept[i], tag, t);
			memcpy(warn_kept[i] + t, buf + pre, k);
			warn_kept[i][t + k] = 0;
			note_add(warn_kept[i], true, false);
		}
	}
	errno = saved;
	return shown;
}

void ct_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (ct_cfg.debug < level)
		return;
	va_start(ap, fmt);
	vlog(false, fmt, ap);
	va_end(ap);
}


static int warned;

void ct_warn_once(const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED) && ct_cfg.debug < 1)
		return;
	va_start(ap, fmt);
	vlog(true, fmt, ap);
	va_end(ap);
}

/*
 * Warnings said once per process tree.  A program started through a chain of
 * execs and forks (a pyenv shim is a shell script that runs a dozen more, a
 * job spawns its workers) loads the shim into every image: each would say
 * the same thing.  The tree is named by its root: the oldest ancestor in an
 * unbroken line of processes that have the shim mapped (/proc/PID/maps),
 * with its start time (field 22 of /proc/PID/stat: an exec keeps it, a
 * reused pid does not).  The first process of the tree to warn creates
 * ".warned-KEY-ROOTPID-ROOTSTART" in the trace directory with O_EXCL and
 * writes its pid into it (into /tmp/cutrace-EUID when the trace directory
 * cannot be used); the others find it and say nothing.  Nothing in the
 * program's environment changes.  A process whose parent exited (reparented)
 * starts a tree of its own.
 */
static bool proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start)
{
	char path[48], buf[640];
	const char *p;
	unsigned long long v = 0;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	n = ct_read_file(path, buf, sizeof buf);
	if (n <= 0 || !(p = strrchr(buf, ')')))
		return false;
	p++;
	/* fields 3 (state) .. 22 (starttime) after the command name */
	for (int field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return false;
		v = 0;
		if (field == 4 || field == 22) {
			if (*p < '0' || *p > '9')
				return false;
			while (*p >= '0' && *p <= '9')
				v = v * 10 + (unsigned)(*p++ - '0');
			if (field == 4)
				*ppid = (pid_t)v;
		}
		while (*p && *p != ' ')
			p++;
	}
	*start = v;
	return true;
}

/* the shim's file among the mappings of pid (read in pieces: a big
 * program has thousands of lines) */
static bool proc_has_shim(pid_t pid)
{
	static const char name[] = "libcutrace";
	const size_t k = sizeof name - 1;
	char path[48], buf[4096 + 16];
	size_t keep = 0;
	bool found = false;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	fd = ct_sys_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	for (int i = 0; i < 4096 && !found; i++) {
		ssize_t r = ct_sys_read(fd, buf + keep, sizeof buf - 1 - keep);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t n = keep + (size_t)r;
		buf[n] = 0;
		for (size_t j = 0; j + k <= n && !found; j++)
			found = buf[j] == 'l' && !memcmp(buf + j, name, k);
		/* a name cut at the end of this piece is found in the next */
		keep = n < k ? n : k - 1;
		memmove(buf, buf + n - keep, keep);
	}
	ct_sys_close(fd);
	return found;
}

static void marker_name(char *buf, size_t len, const char *key, pid_t pid, unsigned long long start)
{
	snprintf(buf, len, ".warned-%s-%d-%llu", key, (int)pid, start);
}

static bool parse_dec(const char **p, unsigned *out);

pid_t ct_warn_tree(const char *key, const char *fmt, ...)
{
	char why[256], name[96], text[24];
	unsigned long long start, root_start = 0;
	pid_t self = getpid(), p = self, pp = 0, root = 0, said = 0;
	int saved = errno, fd = -1;
	int dfd = -1;
	va_list ap;

	/* one warning per image (as ct_warn_once), whatever its key */
	if (__atomic_load_n(&warned, __ATOMIC_RELAXED) && ct_cfg.debug < 1)
		return self;
	/* the root: up the line of ancestors while they have the shim */
	for (int depth = 0; p > 0 && depth < 256; depth++, p = pp) {
		if (!proc_stat(p, &pp, &start) || (depth && !proc_has_shim(p)))
			break;
		root = p;
		root_start = start;
	}
	marker_name(name, sizeof name, key, root, root_start);
	/* the marker goes into the trace directory; where that cannot be used
	 * (the very thing "tracing disabled" may be saying), into the default
	 * one, /tmp/cutrace-EUID */
	for (int pass = 0; root && pass < 2 && fd < 0 && !said; pass++) {
		char def[48];
		snprintf(def, sizeof def, "/tmp/cutrace-%u", (unsigned)geteuid());
		if (pass && !strcmp(def, ct_cfg.dir))
			break;
		if (dfd >= 0)
			ct_sys_close(dfd);
		dfd = ct_tracedir_open(pass ? def : ct_cfg.dir, 1, why, sizeof why);
		if (dfd < 0)
			continue;
		fd = (int)syscall(SYS_openat, dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				  0600);
		if (fd < 0 && errno == EEXIST) {
			/* said by another process of the tree: which one, if it wrote it yet */
			int r = (int)syscall(SYS_openat, dfd, name,
					     O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
			said = -1; /* not written yet */
			if (r >= 0) {
				struct stat st;
				ssize_t n = ct_sys_fstat(r, &st) == 0 && S_ISREG(st.st_mode)
						    ? ct_sys_read(r, text, sizeof text - 1)
						    : -1;
				unsigned v = 0;
				const char *q = text;
				if (n > 0) {
					text[n] = 0;
					if (parse_dec(&q, &v) && v)
						said = (pid_t)v;
				}
				ct_sys_close(r);
			}
		}
	}
	if (!said || ct_cfg.debug >= 1) {
		__atomic_store_n(&warned, 1, __ATOMIC_RELAXED);
		va_start(ap, fmt);
		bool shown = vlog(true, fmt, ap);
		va_end(ap);
		if (fd >= 0) {
			/* the marker names who said it; a line that reached no
			 * stderr leaves no marker: another process may say it */
			int n = snprintf(text, sizeof text, "%d\n", (int)self);
			if (shown)
				(void)ct_sys_write(fd, text, (size_t)n);
			else
				(void)syscall(SYS_unlinkat, dfd, name, 0);
		}
	}
	if (fd >= 0)
		ct_sys_close(fd);
	if (dfd >= 0)
		ct_sys_close(dfd);
	errno = saved;
	return said;
}

void ct_note_ctx(const char *why)
{
	note_add(why, false, false);
}

/* ---- configuration ---------------------------------------------------------- */
/* a decimal number of at most 9 digits at *p (no sign, no spaces); *p moves past it */
static bool parse_dec(const char **p, unsigned *out)
{
	const char *s = *p;
	unsigned v = 0;
	int n = 0;

	while (*s >= '0' && *s <= '9' && n < 9) {
		v = v * 10 + (unsigned)(*s++ - '0');
		n++;
	}
	if (!n || (*s >= '0' && *s <= '9'))
		return false;
	*p = s;
	*out = v;
	return true;
}

/* CUTRACE_SIZE: the size parser of the CLI's --size (common/parse.c).  A
 * value that is not a size, or is clamped, is said: a note in the trace
 * (`cutrace show` prints it) and, under CUTRACE_DEBUG, one line on stderr */
static char size_note[160];

static uint64_t parse_size(const char *s, uint64_t dflt)
{
	uint64_t v;
	const char *how = NULL;

	if (!s)
		return dflt;
	if (ct_parse_size(s, &v) < 0) {
		v = dflt;
		how = "is not a size";
	} else if (v < CT_MIN_SIZE) {
		v = CT_MIN_SIZE;
		how = "is below the smallest trace file";
	} else if (v > CT_MAX_SIZE) {
		v = CT_MAX_SIZE;
		how = "is above the largest trace file";
	}
	if (how) {
		bool mib = (v & ((1u << 20) - 1)) == 0;
		snprintf(size_note, sizeof size_note, "CUTRACE_SIZE='%.40s' %s: using %llu%s", s, how,
			 (unsigned long long)(mib ? v >> 20 : v >> 10), mib ? "M" : "K");
		note_add(size_note, false, false);
		ct_log(1, "%s", size_note);
	}
	return v;
}

static void read_config(void)
{
	const char *d = getenv("CUTRACE_DIR");
	const char *dbg = getenv("CUTRACE_DEBUG");
	const char *off = getenv("CUTRACE_DISABLE");

	ct_cfg.secure = getauxval(AT_SECURE) != 0;
	ct_cfg.disabled = ct_cfg.secure || (off && *off && strcmp(off, "0"));
	{
		unsigned lvl = 0;
		const char *q = dbg;
		ct_cfg.debug = q && parse_dec(&q, &lvl) && !*q && lvl <= 9 ? (int)lvl : 0;
	}
	ct_cfg.size = parse_size(getenv("CUTRACE_SIZE"), CT_DEFAULT_SIZE);
	if (d && *d && strlen(d) < sizeof ct_cfg.dir - 64)
		snprintf(ct_cfg.dir, sizeof ct_cfg.dir, "%s", d);
	else
		snprintf(ct_cfg.dir, sizeof ct_cfg.dir, "/tmp/cutrace-%u", (unsigned)geteuid());
}

static void notes_reset(void);
static void on_exit_handler(int status, void *arg);

static int init_state; /* 0, 1 running, 2 done */

void ct_init(void)
{
	int expected = 0;
	int saved = errno;

	if (!__atomic_compare_exchange_n(&init_state, &expected, 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		errno = saved;
		return; /* done, or running on this or another thread */
	}
	ct_busy++;
	stderr_remember();
	start_mono = ct_now_ns();
	start_real = real_ns();
	/* the system call: glibc before 2.25 caches the pid, and a raw fork
	 * child's cache is its parent's */
	ct_pid = (pid_t)syscall(SYS_getpid);
	read_config();
	ct_resolve();
	if (!ct_cfg.disabled) {
		proc_page();
		ct_inject_init();
		pthread_atfork(ct_proc_before_fork, NULL, atfork_child);
		on_exit(on_exit_handler, NULL);
	}
	ct_busy--;
	__atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
	ct_ready = 1;
	errno = saved;
}

/* Priority 101: before ordinary constructors; hooks called even earlier
 * (other preloads' constructors) initialise lazily through ct_ensure_init. */
__attribute__((constructor(101))) static void ct_constructor(void)
{
	ct_init();
}

/* exit(): the status and the time go into the header (format 1.2), then
 * the flags say they are there */
static void on_exit_handler(int status, void *arg)
{
	struct cutrace_header *h = ct_ring_main.hdr;

	(void)arg;
	if (h && __atomic_load_n(&ct_trace_state, __ATOMIC_ACQUIRE) == TS_ACTIVE &&
	    ct_pid == (pid_t)syscall(SYS_getpid)) {
		h->exit_status = (uint32_t)status;
		h->exit_ns = ct_now_ns();
		__atomic_fetch_or(&h->flags, CT_HF_EXITED | CT_HF_EXIT_STATUS, __ATOMIC_RELEASE);
	}
}

/*
 * fork: the child must never append to the parent's mapping.  It drops the
 * mapping and starts over; its own file is created lazily like any process's.
 * Run by glibc's fork() and, in the child of a raw fork system call, by
 * ct_own_process at its first record.
 */
static void atfork_child(void)
{
	__atomic_store_n(&ct_fast_ok, 0, __ATOMIC_RELEASE);
	ct_bus_guard_forget();
	if (trace_map)
		munmap(trace_map, trace_len);
	trace_map = NULL;
	memset(&ct_ring_main, 0, sizeof ct_ring_main);
	ct_tls_tid = 0;
	ct_pid = (pid_t)syscall(SYS_getpid);
	start_mono = ct_now_ns();
	start_real = real_ns();
	is_fork_child = 1;
	notes_reset(); /* the parent's reasons are the parent's */
	ct_snapshot_reset();
	__atomic_store_n(&ct_trace_state, TS_NONE, __ATOMIC_RELEASE);
	ct_inject_after_fork();
	__atomic_store_n(&ct_proc->alive, 1, __ATOMIC_RELEASE);
}

/*
 * Degraded: an internal failure lost events or sight of a call.  The header
 * flag is set and each distinct reason (a string literal, compared by
 * address) is kept once, as a CT_CTX_NOTE in the file's context area (which
 * the ring never overwrites) and, when the trace is already active, as a
 * note record in the timeline.  A reason seen before the file exists waits
 * in notes[] and is written when the file is created.  No locks: slots are
 * claimed with a fetch-add; writing the context is guarded by a try-lock
 * that nobody waits for (whoever holds it writes the others' reasons too).
 */
#define CT_NOTES_MAX  8
#define CT_NOTES_ROOM 1024u  /* context bytes kept free for the notes */
static const char *notes[CT_NOTES_MAX];
static unsigned notes_n;       /* slots claimed (may exceed CT_NOTES_MAX) */
static unsigned notes_written; /* notes[0..notes_written) are in the context */
static int notes_lock;
static int notes_degrade; /* a note that degrades the trace was added */

static void notes_reset(void)
{
	for (int i = 0; i < CT_NOTES_MAX; i++)
		notes[i] = NULL;
	notes_n = notes_written = 0;
	notes_lock = 0;
	notes_degrade = 0;
	warn_kept_n = 0;
}

static unsigned notes_avail(void)
{
	unsigned n = __atomic_load_n(&notes_n, __ATOMIC_SEQ_CST);
	return n < CT_NOTES_MAX ? n : CT_NOTES_MAX;
}

/* one CT_CTX_NOTE at the end of the context; the length is published last */
static void ctx_note(struct cutrace_header *h, const char *why)
{
	uint64_t len = h->ctx_len;
	size_t n = strnlen(why, 200);

	if (len > h->ctx_cap || h->ctx_cap - len < ct_field_size((uint32_t)n))
		return;
	ct_put_field((unsigned char *)h + h->ctx_off + len, CT_CTX_NOTE, why, (uint16_t)n);
	__atomic_store_n(&h->ctx_len, len + ct_field_size((uint32_t)n), __ATOMIC_RELEASE);
}

/* write the reasons not yet in the context of the mapped file */
static void notes_flush(void)
{
	struct cutrace_header *h = ct_ring_main.hdr;

	if (!h)
		return;
	if (__atomic_load_n(&notes_degrade, __ATOMIC_SEQ_CST))
		__atomic_fetch_or(&h->flags, CT_HF_DEGRADED, __ATOMIC_RELAXED);
	for (;;) {
		unsigned w;
		if (__atomic_exchange_n(&notes_lock, 1, __ATOMIC_SEQ_CST))
			return; /* the holder looks again after letting go */
		w = __atomic_load_n(&notes_written, __ATOMIC_SEQ_CST);
		for (unsigned n = notes_avail(); w < n; w++) {
			const char *why = __atomic_load_n(&notes[w], __ATOMIC_SEQ_CST);
			if (!why)
				break; /* claimed, not stored yet: its owner flushes */
			ctx_note(h, why);
		}
		__atomic_store_n(&notes_written, w, __ATOMIC_SEQ_CST);
		__atomic_store_n(&notes_lock, 0, __ATOMIC_SEQ_CST);
		if (w >= notes_avail() || !__atomic_load_n(&notes[w], __ATOMIC_SEQ_CST))
			return;
	}
}

/* rec: also put a note record in the timeline (not when recording failed);
 * degrade: the note says events were lost (CT_HF_DEGRADED), not a warning */
static void note_add(const char *why, bool rec, bool degrade)
{
	unsigned n = notes_avail(), i;

	if (degrade)
		__atomic_store_n(&notes_degrade, 1, __ATOMIC_SEQ_CST);

	for (i = 0; i < n; i++)
		if (__atomic_load_n(&notes[i], __ATOMIC_RELAXED) == why)
			break;
	if (i == n) {
		/* a new reason (two threads may both add it: harmless) */
		i = __atomic_fetch_add(&notes_n, 1, __ATOMIC_SEQ_CST);
		if (i < CT_NOTES_MAX)
			__atomic_store_n(&notes[i], why, __ATOMIC_SEQ_CST);
		if (degrade)
			ct_log(1, "degraded: %s", why);
	} else {
		rec = false; /* said already */
	}
	if (__atomic_load_n(&ct_trace_state, __ATOMIC_ACQUIRE) != TS_ACTIVE)
		return; /* create_trace / trace_get write it */
	if ((degrade && !(__atomic_load_n(&ct_ring_main.hdr->flags, __ATOMIC_RELAXED) & CT_HF_DEGRADED)) ||
	    __atomic_load_n(&notes_written, __ATOMIC_RELAXED) < notes_avail())
		notes_flush();
	if (rec && !ct_busy) {
		char text[240];
		size_t k = strnlen(why, sizeof text - 11);
		size_t p = degrade ? 10 : 0;
		memcpy(text, "degraded: ", p);
		memcpy(text + p, why, k);
		text[p + k] = 0;
		ct_busy++;
		ct_note(text);
		ct_busy--;
	}
}

static void mark_degraded(const char *why, bool rec)
{
	note_add(why, rec, true);
}

const char ct_why_lost[] = "a record could not be reserved in the ring (counted as lost): events are missing";
const char ct_why_unwrapped[] = "a CUDA function was handed out unwrapped (all its wrappers taken): "
				"calls through it are not recorded";

void ct_mark_degraded(const char *why)
{
	mark_degraded(why, true);
}

/* The real functions the hooks forward to, checked when the trace file is
 * created (resolution is complete by then): a missing one means a hook
 * bypasses the next library (a system call instead) or fails the call. */
static void check_reals(void)
{
	if (!ct_real.dlvsym || !ct_real.dlsym || !ct_real.dlopen || !ct_real.dlmopen || !ct_real.dlclose ||
	    !ct_real.dlerror || !ct_dl.dladdr1 || !ct_dl.dlinfo || !ct_dl.dlsym)
		mark_degraded("a libc dl* function could not be resolved: loader calls are not all traced", false);
	if (!ct_real.open || !ct_real.open64 || !ct_real.openat || !ct_real.openat64 ||
	    !ct_real.__open_2 || !ct_real.__open64_2 || !ct_real.__openat_2 || !ct_real.__openat64_2 ||
	    !ct_real.close || !ct_real.ioctl)
		mark_degraded("a libc open/close/ioctl could not be resolved: the system call is made instead", false);
}

/* ---- trace file creation ---------------------------------------------------- */

static void sanitize(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '.' || *s == '_'))
			*s = '_';
}

/* the largest size <= want that RLIMIT_FSIZE allows (truncate past it raises SIGXFSZ) */
static uint64_t size_within_rlimit(uint64_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (uint64_t)rl.rlim_cur < want)
		return (uint64_t)rl.rlim_cur & ~(uint64_t)4095;
	return want;
}

/* ---- process context ---------------------------------------------------------- */
struct ctxw {
	unsigned char *p, *end;
	unsigned char *base;
};

static void ctx_put(struct ctxw *c, uint16_t tag, const void *data, size_t len)
{
	if (len > 0xfff0)
		len = 0xfff0;
	if ((size_t)(c->end - c->p) < ct_field_size((uint32_t)len))
		return; /* context full: the rest is skipped, not truncated mid-field */
	c->p = ct_put_field(c->p, tag, data, (uint16_t)len);
}

static void ctx_str(struct ctxw *c, uint16_t tag, const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	ctx_put(c, tag, s, n);
}

/* allowlist: only variables that decide CUDA start-up; never secrets */
static bool env_allowed(const char *e)
{
	/* clang-format off */
	static const char *const exact[] = {
		"LD_LIBRARY_PATH", "LD_PRELOAD", "RANK", "LOCAL_RANK", "WORLD_SIZE",
		"LOCAL_WORLD_SIZE", "GROUP_RANK", "NODE_RANK", "SLURM_PROCID", "SLURM_LOCALID",
		"SLURM_JOB_ID", "SLURM_NODEID", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS",
		"SLURM_STEP_ID", "SLURMD_NODENAME",
		"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMIX_RANK",
		"MV2_COMM_WORLD_RANK", "GPU_DEVICE_ORDINAL", "PYTORCH_CUDA_ALLOC_CONF",
		"TORCHELASTIC_RUN_ID", "MASTER_PORT", "NCCL_NVLS_ENABLE", "NCCL_DEBUG",
		"NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_IB_DISABLE", NULL };
	/* clang-format on */
	static const char *const prefix[] = { "CUDA_", "NVIDIA_", "CUTRACE_", "__NV_", NULL };
	const char *eq = strchr(e, '=');
	size_t n;

	if (!eq)
		return false;
	n = (size_t)(eq - e);
	/* belt and braces: nothing that looks like a credential, whatever its
	 * prefix or case (common/redact.c: TOKEN, SECRET, PASS, PWD, KEY, AUTH,
	 * CRED, PRIVATE) */
	if (ct_secret_name(e, n))
		return false;
	for (int i = 0; exact[i]; i++)
		if (strlen(exact[i]) == n && !strncmp(e, exact[i], n))
			return true;
	for (int i = 0; prefix[i]; i++)
		if (!strncmp(e, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

static void read_driver_version(const char *text)
{
	/* first token N.N[.N] after the title (tracer/decode/ABI.md §8: parse, don't index) */
	for (const char *p = text; *p; p++) {
		unsigned a = 0, b = 0, c = 0;
		const char *q = p;
		if ((p == text || p[-1] == ' ') && parse_dec(&q, &a) && *q == '.' && (q++, parse_dec(&q, &b))) {
			if (*q == '.') {
				const char *r = q + 1;
				if (parse_dec(&r, &c))
					q = r;
			}
			if (a >= 100 && a < 10000 && b < 1000 && c < 1000 && (*q == ' ' || *q == '\n' || !*q)) {
				ct_drv_code = a * 1000000u + b * 1000u + c;
				return;
			}
		}
	}
}

/* the command line or a variable, redacted: static, the context is
 * filled once per process, by the thread that creates the file */
static char redacted[4096 + 512];

static void fill_context(struct cutrace_header *h)
{
	struct ctxw c;
	struct utsname u;
	char buf[4096];
	ssize_t n;

	c.base = (unsigned char *)trace_map + h->ctx_off;
	c.p = c.base;
	c.end = c.base + h->ctx_cap - CT_NOTES_ROOM; /* the rest is for degraded notes */

	n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	if (n > 0)
		ctx_put(&c, CT_CTX_EXE, buf, (size_t)n);
	n = ct_read_file("/proc/self/cmdline", buf, sizeof buf);
	if (n > 0) {
		uint32_t full = (uint32_t)n;
		if ((size_t)n >= sizeof buf - 1) {
			/* bounded: count the rest without keeping it */
			int fd = ct_sys_open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC, 0);
			char tmp[1024];
			ssize_t r;
			full = 0;
			while (fd >= 0 && (r = ct_sys_read(fd, tmp, sizeof tmp)) > 0)
				full += (uint32_t)r;
			if (fd >= 0)
				ct_sys_close(fd);
		}
		/* secret-looking values redacted (common/redact.c); the length
		 * recorded stays the real one */
		n = (ssize_t)ct_redact_argv(buf, (size_t)n, redacted, sizeof redacted);
		ctx_put(&c, CT_CTX_CMDLINE, redacted, (size_t)n);
		ctx_put(&c, CT_CTX_CMDLINE_LEN, &full, sizeof full);
	}
	if (uname(&u) == 0) {
		ctx_str(&c, CT_CTX_HOST, u.nodename, sizeof u.nodename);
		ctx_str(&c, CT_CTX_KERNEL, u.release, sizeof u.release);
		ctx_str(&c, CT_CTX_MACHINE, u.machine, sizeof u.machine);
	}
	if (getcwd(buf, sizeof buf))
		ctx_str(&c, CT_CTX_CWD, buf, sizeof buf);
	n = ct_read_file("/proc/driver/nvidia/version", buf, 1024);
	if (n > 0) {
		ctx_put(&c, CT_CTX_NV_VERSION, buf, (size_t)n);
		read_driver_version(buf);
	}
	n = ct_read_file("/sys/module/nvidia/version", buf, 256);
	if (n > 0) {
		ctx_put(&c, CT_CTX_NV_MODVERSION, buf, (size_t)n);
		if (!ct_drv_code)
			read_driver_version(buf);
	}
	/* the NVIDIA lines of /proc/devices: dynamic majors of uvm, caps, ... */
	n = ct_read_file("/proc/devices", buf, sizeof buf);
	if (n > 0) {
		char *line = buf, *nl;
		for (; line && *line; line = nl) {
			nl = strchr(line, '\n');
			if (nl)
				*nl++ = 0;
			if (strstr(line, "nvidia"))
				ctx_str(&c, CT_CTX_DEVICES, line, 128);
		}
	}
	/* how libraries are found: the loader, the toolkit's drop-ins, ld.so.preload */
	if (ct_program_interp())
		ctx_str(&c, CT_CTX_INTERP, ct_program_interp(), 256);
	if (ct_ldconf_dropins(buf, sizeof buf) > 0) {
		for (char *l = buf, *nl; l && *l; l = nl) {
			nl = strchr(l, '\n');
			if (nl)
				*nl++ = 0;
			ctx_str(&c, CT_CTX_LDCONF, l, 512);
		}
	}
	n = ct_read_file("/etc/ld.so.preload", buf, 1024);
	if (n > 0)
		ctx_put(&c, CT_CTX_PRELOAD_FILE, buf, (size_t)n);
	for (char **e = environ; e && *e; e++)
		if (env_allowed(*e)) {
			size_t k = ct_redact_str(*e, strnlen(*e, 2048), redacted, sizeof redacted);
			ctx_put(&c, CT_CTX_ENV, redacted, k);
		}
	if (ct_inject_spec())
		ctx_str(&c, CT_CTX_INJECT, ct_inject_spec(), 2048);
	h->ctx_len = (uint64_t)(c.p - c.base);
}

static int create_trace(void)
{
	char path[768], fname[200], host[128] = "host", why[1024];
	struct utsname u;
	struct cutrace_header *h;
	uint64_t size = size_within_rlimit(ct_cfg.size);
	int fd = -1, dfd = -1, err;

	if (uname(&u) == 0)
		snprintf(host, sizeof host, "%s", u.nodename);
	sanitize(host);

	/* the directory: opened component by component, every one checked
	 * through its fd (common/tracedir.c: no symbolic link others could have
	 * planted, nothing owned by another user, no world-writable directory
	 * without the sticky bit); the last one made 0700 if missing.  The file
	 * is then created relative to that fd. */
	if (size < CT_MIN_SIZE) {
		snprintf(why, sizeof why, "file size limit too small for a trace");
		goto fail;
	}
	dfd = ct_tracedir_open(ct_cfg.dir, 1, why, sizeof why);
	if (dfd < 0)
		goto fail;

	for (int attempt = 0; attempt < 8 && fd < 0; attempt++) {
		if (attempt == 0)
			snprintf(fname, sizeof fname, "%s-%d-%llu.cutrace", host, (int)ct_pid,
				 (unsigned long long)start_real);
		else
			snprintf(fname, sizeof fname, "%s-%d-%llu-%d.cutrace", host, (int)ct_pid,
				 (unsigned long long)start_real, attempt);
		snprintf(path, sizeof path, "%s/%s", ct_cfg.dir, fname);
		fd = (int)syscall(SYS_openat, dfd, fname, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				  0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		snprintf(why, sizeof why, "cannot create a trace file in %s: %s", ct_cfg.dir,
			 ct_errno_text(errno));
		goto fail_dir;
	}
	/* reserve the blocks now; halve on ENOSPC down to the minimum */
	for (;;) {
		err = posix_fallocate(fd, 0, (off_t)size);
		if (err == 0)
			break;
		if (err == EOPNOTSUPP || err == EINVAL) {
			/* no fallocate here: a sparse file would risk SIGBUS on a full disk */
			snprintf(why, sizeof why, "%s cannot preallocate files (%s)", ct_cfg.dir, ct_errno_text(err));
			goto fail_unlink;
		}
		if (err == ENOSPC && size / 2 >= CT_MIN_SIZE) {
			size /= 2;
			continue;
		}
		snprintf(why, sizeof why, "cannot allocate %llu bytes in %s: %s",
			 (unsigned long long)size, ct_cfg.dir, ct_errno_text(err));
		goto fail_unlink;
	}
	trace_map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (trace_map == MAP_FAILED) {
		trace_map = NULL;
		snprintf(why, sizeof why, "cannot map %s: %s", path, ct_errno_text(errno));
		goto fail_unlink;
	}
	ct_sys_close(fd);
	trace_len = size;
	/* from here a truncation of the file is a SIGBUS the shim takes (hooks_sig.c) */
	ct_bus_guard(trace_map, size);
	/* no readahead on faults: the first touch of a fresh fallocated file
	 * otherwise fills a whole readahead window of zero pages (about 2.5 ms
	 * on ext4 here, more than everything else a traced process pays) */
	(void)madvise(trace_map, size, MADV_RANDOM);

	h = trace_map;
	if (ct_ring_layout(h, size, CT_CTX_CAP) < 0) {
		snprintf(why, sizeof why, "trace size too small");
		ct_bus_guard_forget();
		munmap(trace_map, size);
		trace_map = NULL;
		(void)syscall(SYS_unlinkat, dfd, fname, 0);
		ct_sys_close(dfd);
		goto fail;
	}
	ct_sys_close(dfd);
	h->endian = CUTRACE_ENDIAN_PROBE;
	h->version_major = CUTRACE_VERSION_MAJOR;
	h->version_minor = CUTRACE_VERSION_MINOR;
	h->header_size = sizeof *h;
	h->slot_size = CUTRACE_SLOT_SIZE;
	h->word_size = sizeof(void *);
	h->pid = (uint32_t)ct_pid;
	h->ppid = (uint32_t)getppid();
	h->uid = getuid();
	h->gid = getgid();
	h->euid = geteuid();
	h->egid = getegid();
	h->start_realtime_ns = start_real;
	h->start_mono_ns = start_mono;
	h->create_realtime_ns = real_ns();
	h->create_mono_ns = ct_now_ns();
	h->writer_version = 100; /* 0.1.0 */
	if (is_fork_child)
		h->flags |= CT_HF_FORKED;
	if (ct_inj_active)
		h->flags |= CT_HF_INJECT;
	if (ct_inj_bad)
		h->flags |= CT_HF_INJECT_BAD;
	fill_context(h);
	/* record times through the TSC where that is safe (clock.h) */
	ct_clock_setup();
	ct_ring_attach(&ct_ring_main, trace_map);
	check_reals();
	if (notes_avail())
		notes_flush(); /* reasons seen before the file existed */
	/* the magic last: a reader never sees a half-initialised header as valid */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, CUTRACE_MAGIC, 8);
	ct_log(1, "tracing to %s (%llu bytes)", path, (unsigned long long)size);
	return 0;

fail_unlink:
	(void)syscall(SYS_unlinkat, dfd, fname, 0);
	ct_sys_close(fd);
fail_dir:
	ct_sys_close(dfd);
fail:
	/* once per process tree: a job's spawned workers all meet the same limit */
	ct_warn_tree("disabled", "tracing disabled: %s", why);
	return -1;
}

/* Returns true when the trace is active, creating it on first use. */
static bool trace_get(void)
{
	int st = __atomic_load_n(&ct_trace_state, __ATOMIC_ACQUIRE);

	if (likely(st == TS_ACTIVE))
		return true;
	if (st == TS_FAILED || ct_cfg.disabled || !ct_ready)
		return false;
	if (st == TS_NONE) {
		int expected = TS_NONE;
		/* a child of a raw fork comes here first (struct ct_proc) */
		if (!ct_own_process())
			return false;
		if (__atomic_compare_exchange_n(&ct_trace_state, &expected, TS_CREATING, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			int saved = errno;
			creator_tid = ct_tid();
			ct_busy++;
			int r = create_trace();
			ct_busy--;
			errno = saved;
			__atomic_store_n(&ct_trace_state, r == 0 ? TS_ACTIVE : TS_FAILED,
					 __ATOMIC_RELEASE);
			/* ct_inj_active and ct_cfg.disabled are fixed by ct_init */
			if (r == 0 && !ct_inj_active)
				__atomic_store_n(&ct_fast_ok, 1, __ATOMIC_RELEASE);
			/* reasons other threads gave while the file was being made */
			if (r == 0 && __atomic_load_n(&notes_written, __ATOMIC_SEQ_CST) < notes_avail())
				notes_flush();
			return r == 0;
		}
	}
	/* another thread is creating the file: wait a little, unless it is us
	 * (a signal handler interrupting the creation) */
	if (creator_tid == ct_tid()) {
		mark_degraded("an event in a signal handler was skipped while the trace file was being created", false);
		return false;
	}
	for (int i = 0; i < 2000; i++) {
		st = __atomic_load_n(&ct_trace_state, __ATOMIC_ACQUIRE);
		if (st != TS_CREATING)
			return st == TS_ACTIVE;
		sched_yield();
	}
	mark_degraded("an event was skipped: another thread took too long to create the trace file", false);
	return false;
}

bool ct_tracing(void)
{
	return !ct_cfg.disabled && ct_ready &&
	       __atomic_load_n(&ct_trace_state, __ATOMIC_RELAXED) != TS_FAILED;
}

/* ---- record writer ----------------------------------------------------------- */
bool ct_w_begin(struct ct_w *w, unsigned type, unsigned call, uint32_t payload, uint32_t flags)
{
	uint32_t size = (uint32_t)sizeof(struct cutrace_record) + payload;

	w->p = w->end = NULL;
	if (type == CT_REC_EXIT)
		size += sizeof(struct cutrace_exit);
	if (!trace_get())
		return false;
	if (unlikely(ct_ring_reserve_local(&ct_ring_main, &ct_tls_run, size, &w->s) < 0)) {
		mark_degraded(ct_why_lost, false);
		return false;
	}
	struct cutrace_record *r = w->s.rec;
	r->t_ns = ct_clock_ns();
	r->type = (uint16_t)type;
	r->call = (uint16_t)call;
	r->tid = (uint32_t)ct_tid();
	r->flags = flags;
	w->p = (unsigned char *)(r + 1);
	w->end = (unsigned char *)r + size;
	return true;
}

void ct_w_exit(struct ct_w *w, uint64_t enter_seq, int64_t ret, int err)
{
	struct cutrace_exit x = { enter_seq, ret, err, 0 };

	if (!w->p || (size_t)(w->end - w->p) < sizeof x)
		return;
	memcpy(w->p, &x, sizeof x);
	w->p += sizeof x;
}

void ct_w_field(struct ct_w *w, uint16_t tag, const void *data, uint32_t len)
{
	if (!w->p || len > 0xffff || (size_t)(w->end - w->p) < ct_field_size(len))
		return;
	w->p = ct_put_field(w->p, tag, data, (uint16_t)len);
}

unsigned char *ct_w_field_space(struct ct_w *w, uint16_t tag, uint32_t len)
{
	struct cutrace_field f = { tag, (uint16_t)len };
	unsigned char *d;

	if (!w->p || len > 0xffff || (size_t)(w->end - w->p) < ct_field_size(len))
		return NULL;
	memcpy(w->p, &f, sizeof f);
	d = w->p + sizeof f;
	for (uint32_t i = len; i < CT_FIELD_PAD(len); i++)
		d[i] = 0;
	w->p = d + CT_FIELD_PAD(len);
	return d;
}

void ct_w_str(struct ct_w *w, uint16_t tag, const char *s, uint32_t cap)
{
	uint32_t n = 0;

	while (s && s[n] && n < cap)
		n++;
	ct_w_field(w, tag, s, n);
}

void ct_w_i64(struct ct_w *w, uint16_t tag, int64_t v) { ct_w_field(w, tag, &v, sizeof v); }

void ct_w_flags(struct ct_w *w, uint32_t flags)
{
	if (w->p)
		w->s.rec->flags |= flags;
}

void ct_w_commit(struct ct_w *w)
{
	if (!w->p)
		return;
	/* whatever the caller did not use becomes one filler field */
	size_t left = (size_t)(w->end - w->p);
	if (left >= sizeof(struct cutrace_field)) {
		struct cutrace_field f = { CT_FLD_FILLER, (uint16_t)(left - sizeof f) };
		memcpy(w->p, &f, sizeof f);
	}
	ct_ring_commit(&ct_ring_main, &w->s);
	w->p = NULL;
}

void ct_note(const char *text)
{
	struct ct_w w;

	if (ct_w_begin(&w, CT_REC_NOTE, CT_CALL_cutrace_note, ct_strsz(text, 1024), 0)) {
		ct_w_str(&w, CT_FLD_TEXT, text, 1024);
		ct_w_commit(&w);
	}
}
