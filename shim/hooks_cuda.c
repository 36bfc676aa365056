/*
 * Driver API, runtime and NVML entry points.
 *
 * Programs reach these three ways, and each must land here:
 *  - linked (-lcuda, -lcudart, -lnvidia-ml): our exported definitions come
 *    first in the global scope; the real one is the next definition
 *    (RTLD_NEXT, or a search of the loaded objects when the library was
 *    loaded RTLD_LOCAL, as Python extensions are);
 *  - dlopen + dlsym (the bare probe, ctypes, ATen): the dlsym hook hands out
 *    a wrapper bound to the real pointer it found (ct_cuda_wrap; one wrapper
 *    per distinct real function, see CT_SLOTS);
 *  - cuGetProcAddress(_v2) (libcudart, shared and static): cudart asks for
 *    "cuGetProcAddress" itself and uses the answer for every later look-up
 *    (tracer/decode/ABI.md Appendix C), so what cuGetProcAddress returns is
 *    wrapped too, recursively.  A name with several ABIs (cuGetProcAddress v1/v2,
 *    cuCtxCreate v1..v4) is wrapped only when the returned pointer is
 *    identified as one of the exported variants: a wrapper with the wrong
 *    signature would corrupt the call, an unwrapped pointer only loses sight
 *    of it.
 *
 * Prototypes are declared here rather than taken from cuda.h, which renames
 * cuGetProcAddress and cuCtxCreate with macros (tracer/decode/ABI.md §9).
 */
#include "shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef int cudaError_t;
typedef int nvmlReturn_t;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_NOT_INITIALIZED 3
#define cudaErrorInitializationError 3
#define NVML_ERROR_UNINITIALIZED 1

void ct_dl_park(void) CT_HIDDEN;
void ct_dl_unpark(void) CT_HIDDEN;
int ct_inject_call(unsigned call, const char *sym, int64_t *retval, uint64_t *delay_ns,
		   uint32_t *rule) CT_HIDDEN;
int ct_inject_value(unsigned call, int64_t *value, uint32_t *rule) CT_HIDDEN;
void ct_sleep_ns(uint64_t ns) CT_HIDDEN;

/* ---- the hook table --------------------------------------------------------------- */
enum {
#define CT_CUDA(name, lib, api, rule, RET, PARAMS, ARGS) H_##name,
#include "hooks.def"
	H__COUNT
};

/*
 * Several libcuda (or libcudart, libnvidia-ml) objects can be loaded at once
 * -- a stub and the driver, a compat copy and the host's -- and a program
 * unloads and reloads them.  A wrapper must keep calling the function it was
 * handed out for, so each hooked name has CT_SLOTS entry points: slot 0 is
 * the exported definition (what linked code binds to; its real function is
 * also found lazily), slots 1.. are private trampolines.  Each slot holds the
 * one real function it forwards to; a further distinct real function gets no
 * wrapper (dlsym hands out the real pointer: that library is not traced, but
 * it runs).  A slot is freed when the object its real function lives in is
 * unloaded (ct_cuda_sweep, after dlclose).  No locks: slots are claimed and
 * freed by compare-and-swap, read with one acquire load per call.
 */
#define CT_SLOTS 4

struct hook {
	const char *name;          /* exported symbol */
	const char *api;           /* the name cuGetProcAddress is asked for */
	const char *lib;           /* where the real one lives, for RTLD_LOCAL loads */
	unsigned call;
	bool per_caller;           /* slot 0 forwards by caller (a CUDART row) */
	void *wrap[CT_SLOTS];      /* [0] the exported wrapper, [1..] trampolines */
	void *real[CT_SLOTS];      /* the real function behind each; NULL: free */
};

/* the lib column of common/hooks.def */
#define LIB_CUDA   "libcuda.so"
#define LIB_CUDART "libcudart"
#define LIB_NVML   "libnvidia-ml"
#define PER_CALLER_CUDA   false
#define PER_CALLER_CUDART true
#define PER_CALLER_NVML   false

/* wrappers, defined below */
#define CT_CUDA(name, lib, api, rule, RET, PARAMS, ARGS) CT_EXPORT RET name PARAMS;
#include "hooks.def"

/* the table itself is at the end of the file, after the trampolines */
static struct hook hooks[H__COUNT];

static struct hook *hook_by_name(const char *name)
{
	for (int i = 0; i < H__COUNT; i++)
		if (!strcmp(hooks[i].name, name))
			return &hooks[i];
	return NULL;
}

bool ct_cuda_is_hooked(const char *name) CT_HIDDEN;
bool ct_cuda_is_hooked(const char *name)
{
	return hook_by_name(name) != NULL;
}

/* the wrapper that forwards to `real`: the slot already holding it, else the
 * first free one; `real` itself when every slot holds another function */
static void *bind_real(struct hook *h, void *real)
{
	/* a runtime row's exported definition serves each caller its own
	 * cudart (rt_real): never one fixed function */
	int first = h->per_caller ? 1 : 0;

	for (int k = first; k < CT_SLOTS; k++)
		if (__atomic_load_n(&h->real[k], __ATOMIC_ACQUIRE) == real)
			return h->wrap[k];
	for (int k = first; k < CT_SLOTS; k++) {
		void *cur = NULL;
		if (__atomic_compare_exchange_n(&h->real[k], &cur, real, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) || cur == real)
			return h->wrap[k];
	}
	ct_log(2, "%s at %p: every wrapper is taken, handed out unwrapped", h->name, real);
	return real;
}

/* dlsym found the real function `p` for `name` (never our own export: the
 * caller looked past it): what to hand to the program */
void *ct_cuda_wrap(const char *name, void *p) CT_HIDDEN;
void *ct_cuda_wrap(const char *name, void *p)
{
	struct hook *h = hook_by_name(name);

	if (!h || !p || ct_addr_is_ours(p))
		return p;
	return bind_real(h, p);
}

/* the real function behind slot s of hook i; NULL when none is known.  Only
 * the exported wrapper (slot 0) looks one up: linked code calls it without
 * a dlsym that would have told us which library it means */
static void *real_at(int i, int s)
{
	void *p = __atomic_load_n(&hooks[i].real[s], __ATOMIC_ACQUIRE);
	void *cur = NULL;

	if (likely(p != NULL) || s != 0)
		return p;
	ct_ensure_init();
	ct_busy++;
	ct_dl_park();
	p = ct_resolve_next(hooks[i].name, hooks[i].lib);
	ct_dl_unpark();
	ct_busy--;
	if (p && !__atomic_compare_exchange_n(&hooks[i].real[0], &cur, p, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE))
		p = cur; /* bound meanwhile (by dlsym or another thread): use that */
	return p;
}

/*
 * The runtime's exported definitions (slot 0 of the CUDART rows) are what
 * linked code binds to, and one process may hold several cudarts: two Python
 * extensions loaded RTLD_LOCAL, one linked to cudart 13 and one to cudart
 * 11.8, each bind to their own without the shim.  So slot 0 of a runtime row
 * forwards each call to the cudart its caller would have bound to
 * (ct_resolve_for_caller), found once per caller object and kept in a small
 * fixed table: one row per caller object (its loaded span), one real
 * function per hook.  No locks, no malloc: rows are claimed by
 * compare-and-swap and read with acquire loads; FREE rows are only at the
 * end (a row leaves FREE for good; a row of an unloaded object is DEAD and
 * may be claimed again).  A row's state word carries a generation that
 * every change of state moves on, and a reader takes what it read of a row
 * only when the state word is the same after it (a seqlock): a row dropped
 * and claimed again for another object meanwhile is never half seen.  With
 * more callers than rows the call is resolved each time, uncached.
 */
#define RT_CALLERS 16
enum {
	RC_FREE,
	RC_FILLING,
	RC_READY,
	RC_DEAD
};
#define RC_KIND(st)       ((st)&3u)
#define RC_NEXT(st, kind) ((((st) >> 2) + 1u) << 2 | (kind)) /* the next generation */

struct rt_caller {
	unsigned state;       /* generation << 2 | RC_... */
	uintptr_t lo, hi;     /* the caller object's span (atomic accesses) */
	void *real[H__COUNT]; /* by hook; NULL: not looked up yet */
};
static struct rt_caller rt_callers[RT_CALLERS];

static void rt_remember(int i, uintptr_t lo, uintptr_t hi, void *p)
{
	static int full_said;

	for (int k = 0; k < RT_CALLERS; k++) {
		struct rt_caller *c = &rt_callers[k];
		unsigned st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		void *cur = NULL;
		if (RC_KIND(st) != RC_READY || __atomic_load_n(&c->lo, __ATOMIC_RELAXED) != lo ||
		    __atomic_load_n(&c->hi, __ATOMIC_RELAXED) != hi)
			continue;
		if (__atomic_compare_exchange_n(&c->real[i], &cur, p, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != st) /* the row changed hands */
			__atomic_compare_exchange_n(&c->real[i], &p, NULL, false, __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE);
		return;
	}
	for (int k = 0; k < RT_CALLERS; k++) {
		struct rt_caller *c = &rt_callers[k];
		unsigned st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		if ((RC_KIND(st) != RC_FREE && RC_KIND(st) != RC_DEAD) ||
		    !__atomic_compare_exchange_n(&c->state, &st, RC_NEXT(st, RC_FILLING), false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		for (int j = 0; j < H__COUNT; j++)
			__atomic_store_n(&c->real[j], NULL, __ATOMIC_RELAXED);
		__atomic_store_n(&c->lo, lo, __ATOMIC_RELAXED);
		__atomic_store_n(&c->hi, hi, __ATOMIC_RELAXED);
		__atomic_store_n(&c->real[i], p, __ATOMIC_RELAXED);
		__atomic_store_n(&c->state, RC_NEXT(st, RC_READY), __ATOMIC_RELEASE);
		return;
	}
	if (!__atomic_exchange_n(&full_said, 1, __ATOMIC_RELAXED))
		ct_log(2, "more than %d objects call the runtime: %s resolved on each call", RT_CALLERS,
		       hooks[i].name);
}

static __attribute__((noinline)) void *rt_real_slow(int i, const void *ra)
{
	uintptr_t lo, hi;
	void *p;
	int e = errno; /* the look-up's dlopen/dlvsym leave the program's errno alone */

	ct_ensure_init();
	ct_busy++;
	ct_dl_park();
	p = ct_resolve_for_caller(hooks[i].name, hooks[i].lib, ra, &lo, &hi);
	ct_dl_unpark();
	ct_busy--;
	if (p && hi > lo)
		rt_remember(i, lo, hi, p);
	errno = e;
	return p;
}

/* the real function behind slot s of runtime hook i for the caller at ra */
static inline void *rt_real(int i, int s, const void *ra)
{
	uintptr_t a = (uintptr_t)ra;

	if (s != 0)
		return real_at(i, s);
	for (int k = 0; k < RT_CALLERS; k++) {
		struct rt_caller *c = &rt_callers[k];
		unsigned st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		uintptr_t lo, hi;
		if (RC_KIND(st) == RC_FREE)
			break;
		if (RC_KIND(st) != RC_READY)
			continue;
		lo = __atomic_load_n(&c->lo, __ATOMIC_RELAXED);
		hi = __atomic_load_n(&c->hi, __ATOMIC_RELAXED);
		if (a - lo < hi - lo) {
			void *p = __atomic_load_n(&c->real[i], __ATOMIC_RELAXED);
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (likely(p != NULL) && likely(__atomic_load_n(&c->state, __ATOMIC_RELAXED) == st))
				return p;
			break;
		}
	}
	return rt_real_slow(i, ra);
}

/* ---- forgetting unloaded libraries -------------------------------------------------- */
bool ct_cuda_bound(void) CT_HIDDEN;
void ct_cuda_sweep(void) CT_HIDDEN;

/* true when some slot holds a real function (dlclose checks before sweeping) */
bool ct_cuda_bound(void)
{
	for (int i = 0; i < H__COUNT; i++)
		for (int k = 0; k < CT_SLOTS; k++)
			if (__atomic_load_n(&hooks[i].real[k], __ATOMIC_RELAXED))
				return true;
	for (int k = 0; k < RT_CALLERS; k++)
		if (RC_KIND(__atomic_load_n(&rt_callers[k].state, __ATOMIC_RELAXED)) == RC_READY)
			return true;
	return false;
}

struct sweep {
	void *seen[H__COUNT][CT_SLOTS];   /* the real pointers when the sweep began */
	bool live[H__COUNT][CT_SLOTS];    /* found inside a loaded object */
	uintptr_t clo[RT_CALLERS];        /* rt_callers: the READY rows' callers */
	unsigned cst[RT_CALLERS];         /* and their state words */
	bool clive[RT_CALLERS];
	void *cseen[RT_CALLERS][H__COUNT];
	bool creal_live[RT_CALLERS][H__COUNT];
};

static int sweep_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sweep *sw = data;

	(void)size;
	for (int j = 0; j < info->dlpi_phnum; j++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[j];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD)
			continue;
		for (int i = 0; i < H__COUNT; i++)
			for (int k = 0; k < CT_SLOTS; k++) {
				uintptr_t a = (uintptr_t)sw->seen[i][k];
				if (a && a >= lo && a < hi)
					sw->live[i][k] = true;
			}
		for (int k = 0; k < RT_CALLERS; k++) {
			if (sw->clo[k] && sw->clo[k] >= lo && sw->clo[k] < hi)
				sw->clive[k] = true;
			for (int i = 0; i < H__COUNT; i++) {
				uintptr_t a = (uintptr_t)sw->cseen[k][i];
				if (a && a >= lo && a < hi)
					sw->creal_live[k][i] = true;
			}
		}
	}
	return 0;
}

/*
 * After a dlclose that unloaded something: free every slot whose real
 * function no longer lies in a loaded object, so that no wrapper jumps into
 * memory that is gone (or holds another library now) and the next look-up
 * binds the library loaded in its place.  A slot whose object is still there
 * (another handle, RTLD_NODELETE) keeps its function: the program may still
 * call through the pointer it got.
 */
void ct_cuda_sweep(void)
{
	struct sweep sw;
	bool any = false;

	memset(&sw, 0, sizeof sw);
	for (int i = 0; i < H__COUNT; i++)
		for (int k = 0; k < CT_SLOTS; k++) {
			sw.seen[i][k] = __atomic_load_n(&hooks[i].real[k], __ATOMIC_ACQUIRE);
			any |= sw.seen[i][k] != NULL;
		}
	for (int k = 0; k < RT_CALLERS; k++) {
		unsigned st = __atomic_load_n(&rt_callers[k].state, __ATOMIC_ACQUIRE);
		if (RC_KIND(st) != RC_READY)
			continue;
		sw.cst[k] = st;
		sw.clo[k] = __atomic_load_n(&rt_callers[k].lo, __ATOMIC_RELAXED);
		for (int i = 0; i < H__COUNT; i++)
			sw.cseen[k][i] = __atomic_load_n(&rt_callers[k].real[i], __ATOMIC_ACQUIRE);
		any = true;
	}
	if (!any)
		return;
	dl_iterate_phdr(sweep_object, &sw);
	/* a caller row whose caller or one of whose cudarts is gone: dead, its
	 * callers (if any come back) look up again */
	for (int k = 0; k < RT_CALLERS; k++) {
		bool dead = sw.clo[k] && !sw.clive[k];
		unsigned st = sw.cst[k];
		for (int i = 0; i < H__COUNT && sw.clo[k]; i++)
			dead |= sw.cseen[k][i] && !sw.creal_live[k][i];
		/* only the row as it was checked; its functions are left: a DEAD
		 * row is never read, and the next owner clears them (rt_remember) */
		if (dead && __atomic_compare_exchange_n(&rt_callers[k].state, &st, RC_NEXT(st, RC_DEAD),
							false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			ct_log(2, "runtime caller %d: unloaded, forgotten", k);
	}
	for (int i = 0; i < H__COUNT; i++)
		for (int k = 0; k < CT_SLOTS; k++) {
			void *cur = sw.seen[i][k];
			if (!cur || sw.live[i][k])
				continue;
			/* only if it still holds what was checked: a slot bound meanwhile stays */
			if (__atomic_compare_exchange_n(&hooks[i].real[k], &cur, NULL, false, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
				ct_log(2, "%s: %p was unloaded, wrapper %d freed", hooks[i].name, sw.seen[i][k], k);
		}
}

/* which exported variant of hook group `api` is the function at p? */
static struct hook *identify(const char *api, void *p, int cuda_version)
{
	struct hook *only = NULL;
	int n = 0;
	struct link_map *lm = NULL;

	for (int i = 0; i < H__COUNT; i++) {
		if (!hooks[i].api || strcmp(hooks[i].api, api))
			continue;
		only = &hooks[i];
		n++;
	}
	if (n == 0)
		return NULL;
	if (n == 1)
		return only;
	ct_dl_park();
	if ((lm = ct_link_map_of(p))) {
		for (int i = 0; i < H__COUNT; i++) {
			if (!hooks[i].api || strcmp(hooks[i].api, api))
				continue;
			if (ct_dl.dlsym(lm, hooks[i].name) == p) {
				ct_dl_unpark();
				return &hooks[i];
			}
		}
	}
	ct_dl_unpark();
	ct_log(2, "cuGetProcAddress(%s, %d) returned %p: not an exported variant", api, cuda_version, p);
	/* cuGetProcAddress became the 5-argument form at CUDA 12.0 (cuda.h 13.0,
	 * line 159 and the _v2 prototype); the driver answers by requested version */
	if (!strcmp(api, "cuGetProcAddress"))
		return &hooks[cuda_version >= 12000 ? H_cuGetProcAddress_v2 : H_cuGetProcAddress];
	return NULL;
}

/* ---- recording helpers --------------------------------------------------------------- */
struct callrec {
	struct ct_w w;
	uint64_t seq;
	bool on;
	unsigned call;
	uint64_t t0;
};

struct outvals {
	bool has_out;
	int64_t out;
	bool has_ptr;
	uint64_t ptr;
	const char *text;
	bool injected;
	uint32_t rule, action;
	/* decided before the enter is recorded (inject_decide) */
	bool replace;            /* retval=: the result replaces the call */
	int64_t retval;
	uint64_t delay_ns;       /* delay=: held after the enter is recorded */
};

/* the injection mark of a record: {rule, action} */
static void put_inject(struct ct_w *w, uint32_t rule, uint32_t action)
{
	uint32_t inj[2] = { rule, action };
	ct_w_field(w, CT_FLD_INJECT, inj, sizeof inj);
}

/* the action an enter record is marked with: a held call is held by delay= */
static uint32_t enter_action(const struct outvals *o)
{
	return o->delay_ns ? CT_INJ_DELAY : CT_INJ_RETVAL;
}

/* o (may be NULL): an injection decided for this call marks the enter too,
 * so a call held by delay= and never returning still reads as injected */
static void rec_enter(struct callrec *c, unsigned call, int nargs, int64_t a1, int64_t a2,
		      const char *env_name, const struct outvals *o)
{
	const char *ev = env_name ? getenv(env_name) : NULL;
	char envbuf[300];
	uint32_t psz = (nargs > 0 ? ct_fsz(8) : 0) + (nargs > 1 ? ct_fsz(8) : 0);

	if (ev) {
		size_t n = strlen(env_name);
		if (n + 2 < sizeof envbuf) {
			memcpy(envbuf, env_name, n);
			envbuf[n] = '=';
			snprintf(envbuf + n + 1, sizeof envbuf - n - 1, "%s", ev);
			psz += ct_strsz(envbuf, sizeof envbuf);
		} else {
			ev = NULL;
		}
	}
	bool inj = o && o->injected;

	if (inj)
		psz += ct_fsz(8);
	c->call = call;
	c->on = false;
	if (ct_busy || ct_cfg.disabled)
		return;
	c->on = ct_w_begin(&c->w, CT_REC_ENTER, call, psz, inj ? CT_RF_INJECTED : 0);
	if (!c->on)
		return;
	c->seq = c->w.s.seq;
	if (inj)
		put_inject(&c->w, o->rule, enter_action(o));
	if (nargs > 0)
		ct_w_i64(&c->w, CT_FLD_ARG, a1);
	if (nargs > 1)
		ct_w_i64(&c->w, CT_FLD_ARG2, a2);
	if (ev)
		ct_w_str(&c->w, CT_FLD_ENV, envbuf, sizeof envbuf);
	ct_w_commit(&c->w);
}

static void rec_exit(struct callrec *c, int64_t ret, const struct outvals *o)
{
	uint32_t psz;

	if (!c->on)
		return;
	psz = (o && o->has_out ? ct_fsz(8) : 0) + (o && o->has_ptr ? ct_fsz(8) : 0) +
	      (o && o->text ? ct_strsz(o->text, 256) : 0) + (o && o->injected ? ct_fsz(8) : 0);
	if (!ct_w_begin(&c->w, CT_REC_EXIT, c->call, psz, o && o->injected ? CT_RF_INJECTED : 0))
		return;
	ct_w_exit(&c->w, c->seq, ret, 0);
	if (o && o->has_out)
		ct_w_i64(&c->w, CT_FLD_OUT, o->out);
	if (o && o->has_ptr)
		ct_w_u64(&c->w, CT_FLD_OUTPTR, o->ptr);
	if (o && o->text)
		ct_w_str(&c->w, CT_FLD_TEXT, o->text, 256);
	if (o && o->injected)
		put_inject(&c->w, o->rule, o->action);
	ct_w_commit(&c->w);
}

/* Which rule acts on this call, decided before its enter is recorded (the
 * enter then carries the mark: a call held forever by delay= is still seen
 * as injected).  Nothing is done yet: inject_before does it. */
static void inject_decide(unsigned call, const char *sym, struct outvals *o)
{
	uint64_t delay = 0;
	uint32_t rule = 0;
	int64_t v = 0;
	int r;

	if (likely(!ct_inj_active))
		return;
	r = ct_inject_call(call, sym, &v, &delay, &rule);
	if (r <= 0)
		return;
	o->injected = true;
	o->rule = rule;
	o->delay_ns = delay;
	o->replace = r == 2;
	o->retval = v;
	o->action = o->replace ? CT_INJ_RETVAL : CT_INJ_DELAY;
}

/* after the enter is recorded: hold the call (delay=), and say whether an
 * injected result replaces it (retval=, returned in *ret) */
static bool inject_before(int64_t *ret, struct outvals *o)
{
	if (likely(!o->injected))
		return false;
	if (o->delay_ns)
		ct_sleep_ns(o->delay_ns);
	if (o->replace) {
		*ret = o->retval;
		return true;
	}
	return false;
}

static void inject_value(unsigned call, int *value, struct outvals *o)
{
	int64_t v = *value;
	uint32_t rule = 0;

	if (likely(!ct_inj_active))
		return;
	if (ct_inject_value(call, &v, &rule) > 0) {
		*value = (int)v;
		o->out = v;
		o->injected = true;
		o->rule = rule;
		o->action = CT_INJ_VALUE;
	}
}

/* errno is the program's: the driver may set it, we must not */
#define SAVE_ERRNO int saved_errno_ = errno
#define RESTORE_ERRNO errno = saved_errno_

/* ---- driver API ----------------------------------------------------------------------- */
static CUresult cuInit_at(int s_, unsigned flags)
{
	CUresult (*real)(unsigned) = (CUresult (*)(unsigned))real_at(H_cuInit, s_);
	struct callrec c;
	struct outvals o = { 0 };
	int64_t r = CUDA_ERROR_NOT_INITIALIZED;

	ct_snapshot(); /* once: how libcuda was found, what sits in between */
	inject_decide(CT_CALL_cuInit, NULL, &o);
	rec_enter(&c, CT_CALL_cuInit, 1, flags, 0, "CUDA_VISIBLE_DEVICES", &o);
	if (!inject_before(&r, &o) && real) {
		r = real(flags);
	}
	SAVE_ERRNO;
	rec_exit(&c, r, &o);
	RESTORE_ERRNO;
	return (CUresult)r;
}

static CUresult cuDriverGetVersion_at(int s_, int *v)
{
	CUresult (*real)(int *) = (CUresult (*)(int *))real_at(H_cuDriverGetVersion, s_);
	struct callrec c;
	struct outvals o = { 0 };
	int64_t r = CUDA_ERROR_NOT_INITIALIZED;

	inject_decide(CT_CALL_cuDriverGetVersion, NULL, &o);
	rec_enter(&c, CT_CALL_cuDriverGetVersion, 0, 0, 0, NULL, &o);
	if (!inject_before(&r, &o) && real) {
		r = real(v);
		if (r == CUDA_SUCCESS && v) {
			o.has_out = true;
			o.out = *v;
			inject_value(CT_CALL_cuDriverGetVersion, v, &o);
		}
	}
	SAVE_ERRNO;
	rec_exit(&c, r, &o);
	RESTORE_ERRNO;
	return (CUresult)r;
}

static CUresult cuDeviceGetCount_at(int s_, int *n)
{
	CUresult (*real)(int *) = (CUresult (*)(int *))real_at(H_cuDeviceGetCount, s_);
	struct callrec c;
	struct outvals o = { 0 };
	int64_t r = CUDA_ERROR_NOT_INITIALIZED;

	inject_decide(CT_CALL_cuDeviceGetCount, NULL, &o);
	rec_enter(&c, CT_CALL_cuDeviceGetCount, 0, 0, 0, NULL, &o);
	if (!inject_before(&r, &o) && real) {
		r = real(n);
		if (r == CUDA_SUCCESS && n) {
			o.has_out = true;
			o.out = *n;
			inject_value(CT_CALL_cuDeviceGetCount, n, &o);
		}
	}
	SAVE_ERRNO;
	rec_exit(&c, r, &o);
	RESTORE_ERRNO;
	return (CUresult)r;
}

static CUresult cuDeviceGet_at(int s_, CUdevice *d, int ordinal)
{
	CUresult (*real)(CUdevice *, int) = (CUresult (*)(CUdevice *, int))real_at(H_cuDeviceGet, s_);
	struct callrec c;
	struct outvals o = { 0 };
	int64_t r = CUDA_ERROR_NOT_INITIALIZED;

	inject_decide(CT_CALL_cuDeviceGet, NULL, &o);
	rec_enter(&c, CT_CALL_cuDeviceGet, 1, ordinal, 0, NULL, &o);
	if (!inject_before(&r, &o) && real) {
		r = real(d, ordinal);
		if (r == CUDA_SUCCESS && d) {
			o.has_out = true;
			o.out = *d;
		}
	}
	SAVE_ERRNO;
	rec_exit(&c, r, &o);
	RESTORE_ERRNO;
	return (CUresult)r;
}

static CUresult cuDeviceGetName_at(int s_, char *name, int len, CUdevice dev)
{
	CUresult (*real)(char *, int, CUdevice) =
		(CUresult (*)(char *, int, CUdevice))real_at(H_cuDeviceGetName, s_);
	struct callrec c;
	struct outvals o = { 0 };
	int64_t r = CUDA_ERROR_NOT_INITIALIZED;

	inject_decide(CT_CALL_cuDeviceGetName, NULL, &o);
	rec_enter(&c, CT_CALL_cuDeviceGetName, 1, dev, 0, NULL, &o);
	if (!inject_before(&r, &o) && real) {
		r = real(name, len, dev);
		if (r == CUDA_SUCCESS && name && len > 0 && memchr(name, 0, (size_t)len))
			o.text = name;
	}
	SAVE_ERRNO;
	rec_exit(&c, r, &o);
	RESTORE_ERRNO;
	return (CUresult)r;
}

static CUresult cuDevicePrimaryCtxRetain_at(int s_, CUcontext *ctx, CUdevice dev)
{
	CUresult (*real)(CUcontext *, CUdevice) =
		(CUresult (*)(CUcontext *, CUdevice))real_at(H_cuDevicePrimaryCtxRetain, s_);
	struct callrec c;
	struct outvals o = { 0 };
	int64_t r = CUDA_ERROR_NOT_INITIALIZED;

	inject_decide(CT_CALL_cuDevicePrimaryCtxRetain, NULL, &o);
	rec_enter(&c, CT_CALL_cuDevicePrimaryCtxRetain, 1, dev, 0, NULL, &o);
	if (!inject_before(&r, &o) && real) {
		r = real(ctx, dev);
		if (r == CUDA_SUCCESS && ctx) {
			o.has_ptr = true;
			o.ptr = (uint64_t)(uintptr_t)*ctx;
		}
	}
	SAVE_ERRNO;
	rec_exit(&c, r, &o);
	RESTORE_ERRNO;
	return (CUresult)r;
}

/* the four cuCtxCreate ABIs share their bookkeeping */
#define CTX_CREATE_BODY(H, CALL, CALLREAL)                                           \
	struct callrec c;                                                             \
	struct outvals o = { 0 };                                                     \
	int64_t r = CUDA_ERROR_NOT_INITIALIZED;                                       \
	void *real_ = real_at(H, s_);                                                     \
	inject_decide(CALL, NULL, &o);                                                \
	rec_enter(&c, CALL, 2, flags, dev, NULL, &o);                                 \
	if (!inject_before(&r, &o) && real_) {                                        \
		r = CALLREAL;                                                         \
		if (r == CUDA_SUCCESS && ctx) {                                       \
			o.has_ptr = true;                                             \
			o.ptr = (uint64_t)(uintptr_t)*ctx;                            \
		}                                                                     \
	}                                                                             \
	SAVE_ERRNO;                                                                   \
	rec_exit(&c, r, &o);                                                          \
	RESTORE_ERRNO;                                                                \
	return (CUresult)r

typedef CUresult (*ctx_v2_fn)(CUcontext *, unsigned, CUdevice);
typedef CUresult (*ctx_v3_fn)(CUcontext *, void *, int, unsigned, CUdevice);
typedef CUresult (*ctx_v4_fn)(CUcontext *, void *, unsigned, CUdevice);

static CUresult cuCtxCreate_at(int s_, CUcontext *ctx, unsigned flags, CUdevice dev)
{
	CTX_CREATE_BODY(H_cuCtxCreate, CT_CALL_cuCtxCreate, ((ctx_v2_fn)real_)(ctx, flags, dev));
}

static CUresult cuCtxCreate_v2_at(int s_, CUcontext *ctx, unsigned flags, CUdevice dev)
{
	CTX_CREATE_BODY(H_cuCtxCreate_v2, CT_CALL_cuCtxCreate_v2, ((ctx_v2_fn)real_)(ctx, flags, dev));
}

static CUresult cuCtxCreate_v3_at(int s_, CUcontext *ctx, void *params, int n, unsigned flags, CUdevice dev)
{
	CTX_CREATE_BODY(H_cuCtxCreate_v3, CT_CALL_cuCtxCreate_v3,
			((ctx_v3_fn)real_)(ctx, params, n, flags, dev));
}

static CUresult cuCtxCreate_v4_at(int s_, CUcontext *ctx, void *params, unsigned flags, CUdevice dev)
{
	CTX_CREATE_BODY(H_cuCtxCreate_v4, CT_CALL_cuCtxCreate_v4,
			((ctx_v4_fn)real_)(ctx, params, flags, dev));
}

static CUresult cuCtxSetCurrent_at(int s_, CUcontext ctx)
{
	CUresult (*real)(CUcontext) = (CUresult (*)(CUcontext))real_at(H_cuCtxSetCurrent, s_);
	struct callrec c;
	struct outvals o = { 0 };
	int64_t r = CUDA_ERROR_NOT_INITIALIZED;

	inject_decide(CT_CALL_cuCtxSetCurrent, NULL, &o);
	rec_enter(&c, CT_CALL_cuCtxSetCurrent, 1, (int64_t)(uintptr_t)ctx, 0, NULL, &o);
	if (!inject_before(&r, &o) && real)
		r = real(ctx);
	SAVE_ERRNO;
	rec_exit(&c, r, &o);
	RESTORE_ERRNO;
	return (CUresult)r;
}

/* ---- cuGetProcAddress ----------------------------------------------------------------- */
static void gpa_enter(struct callrec *c, unsigned call, const char *sym, int ver, uint64_t flags,
		      const struct outvals *o)
{
	bool inj = o->injected;

	c->call = call;
	c->on = false;
	if (ct_busy || ct_cfg.disabled)
		return;
	c->on = ct_w_begin(&c->w, CT_REC_ENTER, call,
			   ct_strsz(sym, 256) + ct_fsz(4) + ct_fsz(8) + (inj ? ct_fsz(8) : 0),
			   inj ? CT_RF_INJECTED : 0);
	if (!c->on)
		return;
	c->seq = c->w.s.seq;
	if (inj)
		put_inject(&c->w, o->rule, enter_action(o));
	ct_w_str(&c->w, CT_FLD_SYMBOL, sym, 256);
	ct_w_u32(&c->w, CT_FLD_CUDAVER, (uint32_t)ver);
	ct_w_u64(&c->w, CT_FLD_GPAFLAGS, flags);
	ct_w_commit(&c->w);
}

static void gpa_exit(struct callrec *c, int64_t r, void *real_pfn, bool wrapped, bool has_status,
		     int status, const struct outvals *o)
{
	uint32_t psz = ct_fsz(8) + ct_fsz(4) + (has_status ? ct_fsz(4) : 0) +
		       (o->injected ? ct_fsz(8) : 0);

	if (!c->on || !ct_w_begin(&c->w, CT_REC_EXIT, c->call, psz, o->injected ? CT_RF_INJECTED : 0))
		return;
	ct_w_exit(&c->w, c->seq, r, 0);
	ct_w_u64(&c->w, CT_FLD_PFN, (uint64_t)(uintptr_t)real_pfn);
	ct_w_u32(&c->w, CT_FLD_WRAPPED, wrapped);
	if (has_status)
		ct_w_u32(&c->w, CT_FLD_SYMSTATUS, (uint32_t)status);
	if (o->injected)
		put_inject(&c->w, o->rule, o->action);
	ct_w_commit(&c->w);
}

/* An injected failure looks like the driver's own: no function is handed out
 * (*pfn = NULL, as the real driver leaves it on failure) and cuGetProcAddress_v2
 * says the symbol was not found (CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, 1). */
static void gpa_injected_failure(void **pfn, int *status)
{
	if (pfn)
		*pfn = NULL;
	if (status)
		*status = 1;
}

/* replace *pfn by our wrapper when it is one of the functions we trace */
static bool gpa_substitute(const char *sym, void **pfn, int ver)
{
	struct hook *h;
	void *w;

	if (!sym || !pfn || !*pfn)
		return false;
	/* a driver whose own table points at its exported symbols, bound to
	 * ours by the preload, hands out our wrapper already */
	if (ct_addr_is_ours(*pfn))
		return true;
	ct_busy++;
	h = identify(sym, *pfn, ver);
	ct_busy--;
	if (!h)
		return false;
	w = bind_real(h, *pfn);
	if (w == *pfn) {
		ct_mark_degraded(ct_why_unwrapped); /* every wrapper of this name is taken */
		return false;
	}
	*pfn = w;
	return true;
}

static CUresult cuGetProcAddress_at(int s_, const char *sym, void **pfn, int ver, uint64_t flags)
{
	CUresult (*real)(const char *, void **, int, uint64_t) =
		(CUresult (*)(const char *, void **, int, uint64_t))real_at(H_cuGetProcAddress, s_);
	struct callrec c;
	struct outvals o = { 0 };
	int64_t r = CUDA_ERROR_NOT_INITIALIZED;
	void *got = NULL;
	bool wrapped = false;

	inject_decide(CT_CALL_cuGetProcAddress, sym, &o);
	gpa_enter(&c, CT_CALL_cuGetProcAddress, sym, ver, flags, &o);
	if (inject_before(&r, &o)) {
		if (r != CUDA_SUCCESS)
			gpa_injected_failure(pfn, NULL);
	} else if (real) {
		r = real(sym, pfn, ver, flags);
		if (r == CUDA_SUCCESS && pfn) {
			got = *pfn;
			wrapped = gpa_substitute(sym, pfn, ver);
		}
	}
	SAVE_ERRNO;
	gpa_exit(&c, r, got, wrapped, false, 0, &o);
	RESTORE_ERRNO;
	return (CUresult)r;
}

static CUresult cuGetProcAddress_v2_at(int s_, const char *sym, void **pfn, int ver, uint64_t flags, int *status)
{
	CUresult (*real)(const char *, void **, int, uint64_t, int *) =
		(CUresult (*)(const char *, void **, int, uint64_t, int *))real_at(H_cuGetProcAddress_v2, s_);
	struct callrec c;
	struct outvals o = { 0 };
	int64_t r = CUDA_ERROR_NOT_INITIALIZED;
	void *got = NULL;
	bool wrapped = false;

	inject_decide(CT_CALL_cuGetProcAddress_v2, sym, &o);
	gpa_enter(&c, CT_CALL_cuGetProcAddress_v2, sym, ver, flags, &o);
	if (inject_before(&r, &o)) {
		if (r != CUDA_SUCCESS)
			gpa_injected_failure(pfn, status);
	} else if (real) {
		r = real(sym, pfn, ver, flags, status);
		if (r == CUDA_SUCCESS && pfn) {
			got = *pfn;
			wrapped = gpa_substitute(sym, pfn, ver);
		}
	}
	SAVE_ERRNO;
	gpa_exit(&c, r, got, wrapped, status != NULL, status ? *status : 0, &o);
	RESTORE_ERRNO;
	return (CUresult)r;
}

/* ---- NVML ----------------------------------------------------------------------------- */
#define NVML_INIT_BODY(H, CALL, ARGS, NARGS, A1)                                         \
	nvmlReturn_t (*real)() = (nvmlReturn_t (*)())real_at(H, s_);                          \
	struct callrec c;                                                                 \
	struct outvals o = { 0 };                                                         \
	int64_t r = NVML_ERROR_UNINITIALIZED;                                             \
	inject_decide(CALL, NULL, &o);                                                    \
	rec_enter(&c, CALL, NARGS, A1, 0, NULL, &o);                                      \
	if (!inject_before(&r, &o) && real)                                               \
		r = real ARGS;                                                            \
	SAVE_ERRNO;                                                                       \
	rec_exit(&c, r, &o);                                                              \
	RESTORE_ERRNO;                                                                    \
	return (nvmlReturn_t)r

/* each takes the process snapshot first (snapshot.c), once */
static nvmlReturn_t nvmlInit_at(int s_)
{
	ct_snapshot();
	NVML_INIT_BODY(H_nvmlInit, CT_CALL_nvmlInit, (), 0, 0);
}
static nvmlReturn_t nvmlInit_v2_at(int s_)
{
	ct_snapshot();
	NVML_INIT_BODY(H_nvmlInit_v2, CT_CALL_nvmlInit_v2, (), 0, 0);
}
static nvmlReturn_t nvmlInitWithFlags_at(int s_, unsigned flags)
{
	ct_snapshot();
	NVML_INIT_BODY(H_nvmlInitWithFlags, CT_CALL_nvmlInitWithFlags, (flags), 1, flags);
}

static nvmlReturn_t nvmlDeviceGetCount_v2_at(int s_, unsigned *n)
{
	nvmlReturn_t (*real)(unsigned *) = (nvmlReturn_t (*)(unsigned *))real_at(H_nvmlDeviceGetCount_v2, s_);
	struct callrec c;
	struct outvals o = { 0 };
	int64_t r = NVML_ERROR_UNINITIALIZED;

	inject_decide(CT_CALL_nvmlDeviceGetCount_v2, NULL, &o);
	rec_enter(&c, CT_CALL_nvmlDeviceGetCount_v2, 0, 0, 0, NULL, &o);
	if (!inject_before(&r, &o) && real) {
		r = real(n);
		if (r == 0 && n) {
			int v = *n > 0x7fffffffu ? 0x7fffffff : (int)*n;
			o.has_out = true;
			o.out = *n;
			inject_value(CT_CALL_nvmlDeviceGetCount_v2, &v, &o);
			if (o.injected)
				*n = (unsigned)v;
		}
	}
	SAVE_ERRNO;
	rec_exit(&c, r, &o);
	RESTORE_ERRNO;
	return (nvmlReturn_t)r;
}

/* ---- runtime ---------------------------------------------------------------------------- */
static cudaError_t rt_out_int(int h, unsigned call, int s_, const void *ra_, int *p)
{
	cudaError_t (*real)(int *) = (cudaError_t(*)(int *))rt_real(h, s_, ra_);
	struct callrec c;
	struct outvals o = { 0 };
	int64_t r = cudaErrorInitializationError;

	inject_decide(call, NULL, &o);
	rec_enter(&c, call, 0, 0, 0, call == CT_CALL_cudaGetDeviceCount ? "CUDA_VISIBLE_DEVICES" : NULL, &o);
	if (!inject_before(&r, &o) && real) {
		r = real(p);
		if (r == 0 && p) {
			o.has_out = true;
			o.out = *p;
			/* value= is allowed on the count and the two versions only
			 * (inject_rules.c): no rule of cudaGetDevice ever matches */
			inject_value(call, p, &o);
		}
	}
	SAVE_ERRNO;
	rec_exit(&c, r, &o);
	RESTORE_ERRNO;
	return (cudaError_t)r;
}

#define RT_OUT_INT(n)                                                                                        \
	static cudaError_t n##_at(int s_, const void *ra_, int *p)                                           \
	{                                                                                                    \
		return rt_out_int(H_##n, CT_CALL_##n, s_, ra_, p);                                           \
	}
RT_OUT_INT(cudaGetDeviceCount)
RT_OUT_INT(cudaRuntimeGetVersion)
RT_OUT_INT(cudaDriverGetVersion)
RT_OUT_INT(cudaGetDevice)

static cudaError_t cudaSetDevice_at(int s_, const void *ra_, int dev)
{
	cudaError_t (*real)(int) = (cudaError_t(*)(int))rt_real(H_cudaSetDevice, s_, ra_);
	struct callrec c;
	struct outvals o = { 0 };
	int64_t r = cudaErrorInitializationError;

	inject_decide(CT_CALL_cudaSetDevice, NULL, &o);
	rec_enter(&c, CT_CALL_cudaSetDevice, 1, dev, 0, NULL, &o);
	if (!inject_before(&r, &o) && real)
		r = real(dev);
	SAVE_ERRNO;
	rec_exit(&c, r, &o);
	RESTORE_ERRNO;
	return (cudaError_t)r;
}

/*
 * cudaMalloc and cudaFree are called in loops by some programs: record the
 * first ones (initialization happens there: cudaFree(0) is the classic way to
 * create the context) and every failure after that.
 */
#define RT_HOT_RECORDED 32
static unsigned hot_seen;

static bool hot_record_now(void)
{
	return __atomic_fetch_add(&hot_seen, 1, __ATOMIC_RELAXED) < RT_HOT_RECORDED;
}

static cudaError_t cudaFree_at(int s_, const void *ra_, void *p)
{
	cudaError_t (*real)(void *) = (cudaError_t(*)(void *))rt_real(H_cudaFree, s_, ra_);
	struct callrec c = { .on = false };
	struct outvals o = { 0 };
	int64_t r = cudaErrorInitializationError;
	bool now = hot_record_now();

	inject_decide(CT_CALL_cudaFree, NULL, &o);
	if (now || ct_inj_active)
		rec_enter(&c, CT_CALL_cudaFree, 1, (int64_t)(uintptr_t)p, 0, NULL, &o);
	if (!inject_before(&r, &o) && real)
		r = real(p);
	SAVE_ERRNO;
	if (!c.on && r != 0)
		rec_enter(&c, CT_CALL_cudaFree, 1, (int64_t)(uintptr_t)p, 0, NULL, &o);
	rec_exit(&c, r, &o);
	RESTORE_ERRNO;
	return (cudaError_t)r;
}

static cudaError_t cudaMalloc_at(int s_, const void *ra_, void **p, size_t size)
{
	cudaError_t (*real)(void **, size_t) = (cudaError_t(*)(void **, size_t))rt_real(H_cudaMalloc, s_,
											ra_);
	struct callrec c = { .on = false };
	struct outvals o = { 0 };
	int64_t r = cudaErrorInitializationError;
	bool now = hot_record_now();

	inject_decide(CT_CALL_cudaMalloc, NULL, &o);
	if (now || ct_inj_active)
		rec_enter(&c, CT_CALL_cudaMalloc, 1, (int64_t)size, 0, NULL, &o);
	if (!inject_before(&r, &o) && real) {
		r = real(p, size);
		if (r == 0 && p) {
			o.has_ptr = true;
			o.ptr = (uint64_t)(uintptr_t)*p;
		}
	}
	SAVE_ERRNO;
	if (!c.on && r != 0)
		rec_enter(&c, CT_CALL_cudaMalloc, 1, (int64_t)size, 0, NULL, &o);
	rec_exit(&c, r, &o);
	RESTORE_ERRNO;
	return (cudaError_t)r;
}

/* ---- entry points and the hook table ------------------------------------------------- */
/* Each hook's exported definition (slot 0) and its trampolines (slots 1..3):
 * the same body, told which slot's real function to call (and, for a
 * runtime row, the caller's return address: rt_real). */
#define CT_CUDA(name, lib, api, rule, RET, PARAMS, ARGS)                                                     \
	RET name PARAMS                                                                                      \
	{                                                                                                    \
		const int s_ = 0;                                                                            \
		const void *ra_ = __builtin_return_address(0);                                               \
		(void)ra_;                                                                                   \
		return name##_at ARGS;                                                                       \
	}                                                                                                    \
	CT_SLOT(name, 1, RET, PARAMS, ARGS)                                                                  \
	CT_SLOT(name, 2, RET, PARAMS, ARGS)                                                                  \
	CT_SLOT(name, 3, RET, PARAMS, ARGS)
#define CT_SLOT(name, k, RET, PARAMS, ARGS)                                                                  \
	static RET name##_s##k PARAMS                                                                        \
	{                                                                                                    \
		const int s_ = k;                                                                            \
		const void *ra_ = NULL;                                                                      \
		(void)ra_;                                                                                   \
		return name##_at ARGS;                                                                       \
	}
#include "hooks.def"

_Static_assert(CT_SLOTS == 4, "the entry points and the table spell out four slots");
static struct hook hooks[H__COUNT] = {
#define CT_CUDA(name, lib, api, rule, RET, PARAMS, ARGS)                                                     \
	[H_##name] = { #name,                                                                                \
		       api,                                                                                  \
		       LIB_##lib,                                                                            \
		       CT_CALL_##name,                                                                       \
		       PER_CALLER_##lib,                                                                     \
		       { (void *)name, (void *)name##_s1, (void *)name##_s2, (void *)name##_s3 },            \
		       { NULL } },
#include "hooks.def"
};
