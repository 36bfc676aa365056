/*
 * SIGBUS guard: a trace file truncated or replaced under a running program
 * must never kill it.
 *
 * The trace is a MAP_SHARED mapping of a file whose fd is closed.  When
 * someone truncates that file (`truncate -s 0`, logrotate's copytruncate),
 * the next store into a page past the new end raises SIGBUS, which kills the
 * program (exit 135).  Nothing can stop another process from truncating the
 * file, so the shim owns SIGBUS while a trace is mapped:
 *
 *  - when the trace file is mapped, the shim's handler is installed and the
 *    action the program had is kept as the program's (app_act);
 *  - a fault the kernel raises at an address inside the trace mapping
 *    replaces the whole mapping with anonymous zero pages (MAP_FIXED, one
 *    system call, atomic for the other threads) and turns recording off
 *    (TS_FAILED: the file is gone, there is nothing left to record into);
 *    the faulting store is then retried and lands in the anonymous page;
 *  - every other SIGBUS goes to the program's action: its handler (with
 *    SA_SIGINFO or without, SA_RESETHAND applied as the kernel would), or
 *    for SIG_DFL/SIG_IGN the disposition itself is put back and the fault
 *    retried (or the signal raised again), so the program dies exactly as it
 *    would have;
 *  - sigaction, signal, bsd_signal, sysv_signal and __sysv_signal on SIGBUS
 *    are answered from app_act while the guard is on: the program sees and
 *    changes its own action (its mask and SA_RESTART/SA_ONSTACK/SA_NODEFER
 *    go to the kernel's action of the shim's handler), the shim's handler
 *    stays in front.  Every other signal, and SIGBUS before the guard is on,
 *    goes straight to the next definition.
 *
 * Not covered (RELIABILITY.md): a thread that has SIGBUS blocked when the
 * fault comes (the kernel then kills the process whatever the handler), an
 * action set by the raw rt_sigaction system call (Go without cgo), sigset().
 */
#include "shim.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static struct sigaction app_act; /* the program's action for SIGBUS */
static int guard_on;             /* our handler is the kernel's action */
static uintptr_t map_lo, map_hi; /* the trace mapping, 0 when none */
static int map_state;            /* 0 mapped, 1 being replaced, 2 replaced */

/* the next sigaction (common/hooks.def; resolved by ct_init, so it is there
 * in a signal handler: sigaction is async-signal-safe, dlsym is not) */
static sigaction_fn next_sigaction(void)
{
	if (unlikely(!ct_real.sigaction))
		ct_ensure_init();
	return ct_real.sigaction;
}

static void lose_trace(void)
{
	int expected = 0;

	if (__atomic_compare_exchange_n(&map_state, &expected, 1, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		__atomic_store_n(&ct_fast_ok, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&ct_trace_state, TS_FAILED, __ATOMIC_RELEASE);
		/* MAP_FIXED replaces the file pages in one step: a thread that
		 * faults meanwhile finds map_state 1 and waits below */
		syscall(SYS_mmap, (void *)map_lo, (size_t)(map_hi - map_lo), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		__atomic_store_n(&map_state, 2, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&map_state, __ATOMIC_ACQUIRE) == 1)
		syscall(SYS_sched_yield);
}

static void bus_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	uintptr_t a = (uintptr_t)si->si_addr;
	struct sigaction app;

	/* a fault of the kernel (si_code > 0) inside the trace: not the program's */
	if (si->si_code > 0 && a >= __atomic_load_n(&map_lo, __ATOMIC_ACQUIRE) &&
	    a < __atomic_load_n(&map_hi, __ATOMIC_ACQUIRE)) {
		lose_trace();
		errno = saved;
		return; /* the store is retried, into the anonymous page */
	}
	app = app_act;
	if (app.sa_handler == SIG_DFL || app.sa_handler == SIG_IGN) {
		sigaction_fn f = next_sigaction();
		struct sigaction d;

		if (app.sa_handler == SIG_IGN && si->si_code <= 0) {
			errno = saved;
			return; /* sent by kill/tgkill/sigqueue: ignored, as the kernel would */
		}
		/* a fault with SIG_IGN kills too (the kernel forces SIG_DFL) */
		memset(&d, 0, sizeof d);
		d.sa_handler = SIG_DFL;
		__atomic_store_n(&guard_on, 0, __ATOMIC_RELEASE);
		if (f)
			f(SIGBUS, &d, NULL);
		if (si->si_code <= 0)
			syscall(SYS_tgkill, getpid(), ct_sys_gettid(), SIGBUS); /* pending until we return */
		errno = saved;
		return; /* a fault is retried and now kills as it would have */
	}
	if (app.sa_flags & SA_RESETHAND) {
		app_act.sa_handler = SIG_DFL;
		app_act.sa_flags &= ~SA_SIGINFO;
	}
	errno = saved;
	if (app.sa_flags & SA_SIGINFO)
		app.sa_sigaction(sig, si, uc);
	else
		app.sa_handler(sig);
}

static int kernel_act(const struct sigaction *app)
{
	struct sigaction k;
	sigaction_fn f = next_sigaction();

	if (!f)
		return -1;
	memset(&k, 0, sizeof k);
	k.sa_sigaction = bus_handler;
	k.sa_mask = app->sa_mask;
	k.sa_flags = SA_SIGINFO | (app->sa_flags & (SA_ONSTACK | SA_RESTART | SA_NODEFER));
	return f(SIGBUS, &k, NULL);
}

void ct_bus_guard(void *map, size_t len)
{
	sigaction_fn f = next_sigaction();

	if (!f)
		return;
	__atomic_store_n(&map_state, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&map_lo, (uintptr_t)map, __ATOMIC_RELEASE);
	__atomic_store_n(&map_hi, (uintptr_t)map + len, __ATOMIC_RELEASE);
	if (__atomic_load_n(&guard_on, __ATOMIC_ACQUIRE))
		return; /* a fork child's new trace: the handler is inherited */
	if (f(SIGBUS, NULL, &app_act) < 0)
		return;
	__atomic_store_n(&guard_on, 1, __ATOMIC_RELEASE);
	if (kernel_act(&app_act) < 0) {
		__atomic_store_n(&guard_on, 0, __ATOMIC_RELEASE);
		ct_mark_degraded(
			"the SIGBUS guard could not be installed: truncating the trace file kills the program");
	}
}

void ct_bus_guard_forget(void)
{
	__atomic_store_n(&map_hi, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&map_lo, 0, __ATOMIC_RELEASE);
}

bool ct_bus_trace_lost(void)
{
	return __atomic_load_n(&map_state, __ATOMIC_ACQUIRE) != 0;
}

/* ---- the program's view of SIGBUS ------------------------------------------- */
static int app_sigaction(const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev = app_act;

	if (act) {
		app_act = *act;
		if (kernel_act(act) < 0) {
			app_act = prev;
			return -1;
		}
	}
	if (old)
		*old = prev;
	return 0;
}

CT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigaction_fn f;

	if (sig == SIGBUS && __atomic_load_n(&guard_on, __ATOMIC_ACQUIRE))
		return app_sigaction(act, old);
	f = next_sigaction();
	if (unlikely(!f)) {
		errno = ENOSYS;
		return -1;
	}
	return f(sig, act, old);
}

CT_EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (sig == SIGBUS && __atomic_load_n(&guard_on, __ATOMIC_ACQUIRE))
		return app_sigaction(act, old);
	if (unlikely(!ct_real.__sigaction))
		ct_ensure_init();
	if (unlikely(!ct_real.__sigaction)) {
		errno = ENOSYS;
		return -1;
	}
	return ct_real.__sigaction(sig, act, old);
}

/* signal() as glibc makes it: BSD semantics (SA_RESTART, the signal blocked
 * in its handler); sysv_signal: SA_RESETHAND | SA_NODEFER */
static ct_sighandler_t set_handler(int sig, ct_sighandler_t h, int flags,
				   ct_sighandler_t (**real)(int, ct_sighandler_t))
{
	struct sigaction a, o;

	if (sig == SIGBUS && __atomic_load_n(&guard_on, __ATOMIC_ACQUIRE)) {
		memset(&a, 0, sizeof a);
		a.sa_handler = h;
		sigemptyset(&a.sa_mask);
		if (!(flags & SA_NODEFER))
			sigaddset(&a.sa_mask, sig);
		a.sa_flags = flags;
		if (app_sigaction(&a, &o) < 0)
			return SIG_ERR;
		return o.sa_handler;
	}
	if (unlikely(!*real))
		ct_ensure_init();
	if (unlikely(!*real)) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	return (*real)(sig, h);
}

CT_EXPORT ct_sighandler_t signal(int sig, ct_sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART, &ct_real.signal);
}

CT_EXPORT ct_sighandler_t bsd_signal(int sig, ct_sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART, &ct_real.bsd_signal);
}

CT_EXPORT ct_sighandler_t sysv_signal(int sig, ct_sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, &ct_real.sysv_signal);
}

CT_EXPORT ct_sighandler_t __sysv_signal(int sig, ct_sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, &ct_real.__sysv_signal);
}
