/*
 * The loader: dlopen, dlmopen, dlsym, dlvsym, dlclose and dlerror.
 *
 * Two glibc behaviours shape this file.
 *
 * 1. dlopen and dlsym look at their caller.  dlopen searches the *calling
 *    object's* DT_RPATH/DT_RUNPATH (and loads into its namespace); dlsym
 *    with RTLD_NEXT or RTLD_DEFAULT searches relative to the caller.  A hook
 *    that simply calls the real function makes libcutrace.so the caller:
 *    cuDNN's dlopen of its engine libraries through $ORIGIN would fail, and
 *    another preload's dlsym(RTLD_NEXT, "open") would find itself (the
 *    recursion of HAMi-core PR #326).  So every call we do not record leaves
 *    through a sibling call (a jump: glibc sees the original return address),
 *    and a recorded dlopen first works out, from the caller's own search
 *    list (dlinfo RTLD_DI_SERINFO), which file the caller would have loaded
 *    (dlsearch.c: glibc-hwcaps subdirectories, invalid files as glibc
 *    treats them), and loads exactly that; when it cannot be sure, it passes
 *    the call through unrecorded (a jump too, dlopen_planned) with a note in
 *    the trace, rather than change what the program loads.
 *
 * 2. dlerror() text is consumed by reading it.  When we read it to record a
 *    failure (or our own look-ups fail), we keep a per-thread copy and our
 *    dlerror hook hands it back, so the program sees what it would have seen.
 *    glibc forgets a pending error at the start of every dlopen, dlmopen,
 *    dlsym, dlvsym and dlclose (dlfcn/dlerror.c _dlerror_run; measured on
 *    2.36: a failed dlsym, then a good one, then dlerror() gives NULL), so
 *    each of those hooks forgets our copy too.
 */
#include "shim.h"
#include "dlsearch.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void *ct_cuda_wrap(const char *name, void *real) CT_HIDDEN;
bool ct_cuda_is_hooked(const char *name) CT_HIDDEN;
int ct_inject_dlopen(const char *file, char *msg, size_t msglen, uint32_t *rule, uint64_t *delay_ns) CT_HIDDEN;
int ct_inject_dlsym(const char *name, uint32_t *rule, uint64_t *delay_ns) CT_HIDDEN;
void ct_sleep_ns(uint64_t ns) CT_HIDDEN;

/* ---- library classification --------------------------------------------------- */
unsigned ct_lib_kind(const char *file)
{
	static const char *const other[] = {
		"libcublas", "libcudnn", "libnccl", "libnvrtc", "libcufft", "libcurand",
		"libcusparse", "libcusolver", "libnvJitLink", "libcupti", "libnvToolsExt",
		"libcufile", "libnvjpeg", "libnvperf", "libcuinj", "libnvblas", "libcudadevrt", NULL };
	const char *b;

	if (!file)
		return CT_LIB_OTHER;
	b = strrchr(file, '/');
	b = b ? b + 1 : file;
	if (!strncmp(b, "libcuda.so", 10))
		return CT_LIB_CUDA;
	if (!strncmp(b, "libcudart", 9))
		return CT_LIB_CUDART;
	if (!strncmp(b, "libnvidia-ml", 12))
		return CT_LIB_NVML;
	if (!strncmp(b, "libnvidia-", 10) || !strncmp(b, "libnvcuvid", 10))
		return CT_LIB_NVIDIA;
	if (!strncmp(b, "libdxcore", 9))
		return CT_LIB_DXCORE;
	for (int i = 0; other[i]; i++)
		if (!strncmp(b, other[i], strlen(other[i])))
			return CT_LIB_CUDA_OTHER;
	return CT_LIB_OTHER;
}

static inline bool lib_interesting(const char *file)
{
	const char *b;

	if (!file)
		return false;
	/* cheap filter first: every library we care about has "lib" + "cu"/"nv"/"dx" */
	b = strrchr(file, '/');
	b = b ? b + 1 : file;
	if (b[0] != 'l' || b[1] != 'i' || b[2] != 'b' ||
	    !((b[3] == 'c' && b[4] == 'u') || (b[3] == 'n' && b[4] == 'v') || (b[3] == 'd' && b[4] == 'x')))
		return false;
	return ct_lib_kind(b) != CT_LIB_OTHER;
}

/* CUDA driver (cuX...), runtime (cudaX...) and NVML (nvmlX...) names; not
 * curl_*, cudnn*, ... (the "cu" prefix alone is wrong: vgpu-manager PR #89) */
static inline bool upper(char c) { return c >= 'A' && c <= 'Z'; }
static inline bool sym_interesting(const char *n)
{
	if (!n)
		return false;
	if (n[0] == 'c' && n[1] == 'u')
		return upper(n[2]) || (n[2] == 'd' && n[3] == 'a' && upper(n[4]));
	return n[0] == 'n' && n[1] == 'v' && n[2] == 'm' && n[3] == 'l' && upper(n[4]);
}

/* ---- dlerror bookkeeping ------------------------------------------------------- */
static CT_TLS char dlerr_buf[512];
static CT_TLS int dlerr_pending;
/* the errno glibc's dlerror() left when it gave us the kept text (it formats
 * the message then: 2 measured on 2.36 after a failed dlopen); the program's
 * dlerror() that hands the copy back leaves the same.  -1: none (a text we
 * built, or an injected failure) */
static CT_TLS int dlerr_errno = -1;

static void keep_error(const char *e)
{
	size_t n;

	dlerr_errno = -1;
	if (!e) {
		return;
	}
	n = strlen(e);
	if (n > sizeof dlerr_buf - 1)
		n = sizeof dlerr_buf - 1;
	memcpy(dlerr_buf, e, n);
	dlerr_buf[n] = 0;
	dlerr_pending = 1;
}

/* Before our own dl* calls: park the program's pending error (if any). */
void ct_dl_park(void) CT_HIDDEN;
void ct_dl_unpark(void) CT_HIDDEN;
/* read glibc's pending error into our copy, with the errno its dlerror
 * leaves (kept for the program's dlerror); the program's errno is untouched */
static void keep_glibc_error(void)
{
	int saved = errno, after;
	const char *e = ct_dl.dlerror ? ct_dl.dlerror() : NULL;

	after = errno;
	errno = saved;
	keep_error(e);
	if (e)
		dlerr_errno = after;
}

static void internal_begin(void)
{
	keep_glibc_error();
}

/* After them: drop whatever error our calls left behind. */
static void internal_end(void)
{
	if (ct_dl.dlerror)
		(void)ct_dl.dlerror();
}

void ct_dl_park(void) { internal_begin(); }
void ct_dl_unpark(void) { internal_end(); }

/* The program called dlopen/dlmopen/dlsym/dlvsym/dlclose: glibc drops the
 * error it had pending (the real call, or our first internal one, does that
 * in glibc), we drop our copy.  Not for calls made while the shim itself is
 * working: those are ours, and the program's error must survive them. */
static inline void dl_call_starts(void)
{
	if (!ct_busy)
		dlerr_pending = 0;
}

CT_EXPORT char *dlerror(void);
char *dlerror(void)
{
	char *e;

	if (unlikely(!ct_real.dlerror))
		ct_resolve();
	e = ct_real.dlerror ? ct_real.dlerror() : NULL;
	if (e) {
		/* glibc has a newer error than the one we kept */
		dlerr_pending = 0;
		return e;
	}
	if (dlerr_pending) {
		dlerr_pending = 0;
		if (dlerr_errno >= 0)
			errno = dlerr_errno;
		return dlerr_buf;
	}
	return NULL;
}

/* ---- which file would the caller load? ------------------------------------------ */
struct dlplan {
	const char *path;     /* what to pass to the real dlopen */
	char buf[PATH_MAX];
	long lmid;
	bool mopen;           /* use dlmopen(lmid, ...) */
	bool passthrough;     /* cannot reproduce the caller's search: do not record */
	bool searched;        /* path was found in the caller's own search list */
	bool unsure;          /* passthrough: the caller's search could not be followed */
};

#define SERINFO_MAX 8192

static Dl_serinfo *serinfo(void *handle, void *buf)
{
	Dl_serinfo sz;
	Dl_serinfo *si = buf;

	if (!ct_dl.dlinfo || ct_dl.dlinfo(handle, RTLD_DI_SERINFOSIZE, &sz) != 0 || sz.dls_size > SERINFO_MAX)
		return NULL;
	si->dls_size = sz.dls_size;
	si->dls_cnt = sz.dls_cnt;
	if (ct_dl.dlinfo(handle, RTLD_DI_SERINFO, si) != 0)
		return NULL;
	return si;
}

static bool same_list(const Dl_serinfo *a, const Dl_serinfo *b)
{
	if (a->dls_cnt != b->dls_cnt)
		return false;
	for (unsigned i = 0; i < a->dls_cnt; i++)
		if (strcmp(a->dls_serpath[i].dls_name, b->dls_serpath[i].dls_name))
			return false;
	return true;
}

static void plan_dlopen(struct dlplan *pl, const char *file, const void *caller)
{
	struct link_map *lm = NULL, *self = NULL;
	_Alignas(16) unsigned char b1[SERINFO_MAX], b2[SERINFO_MAX];
	Dl_serinfo *mine, *theirs;
	void *h;
	int r;

	pl->path = file;
	pl->passthrough = pl->searched = pl->unsure = false;
	if (!file)
		return;
	if (strchr(file, '$')) {
		/* $ORIGIN/$LIB/$PLATFORM expand relative to the caller */
		pl->passthrough = true;
		return;
	}
	if (!(lm = ct_link_map_of(caller))) {
		pl->passthrough = true;
		return;
	}
	if (!pl->mopen && ct_dl.dlinfo) {
		Lmid_t id = LM_ID_BASE;
		if (ct_dl.dlinfo(lm, RTLD_DI_LMID, &id) == 0 && id != LM_ID_BASE) {
			pl->mopen = true;
			pl->lmid = id;
		}
	}
	if (strchr(file, '/'))
		return; /* a path: the same for every caller */
	/* already loaded: dlopen matches it by name whoever asks */
	h = pl->mopen ? ct_dl.dlmopen(pl->lmid, file, RTLD_LAZY | RTLD_NOLOAD)
		      : ct_dl.dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
	if (h) {
		ct_dl.dlclose(h);
		return;
	}
	if (!(self = ct_link_map_of((const void *)plan_dlopen))) {
		pl->passthrough = true;
		return;
	}
	theirs = serinfo(lm, b1);
	mine = serinfo(self, b2);
	if (!theirs || !mine) {
		pl->passthrough = true;
		return;
	}
	if (same_list(theirs, mine))
		return;
	/* glibc's search for the caller, where it differs from ours (dlsearch.c) */
	r = ct_dl_search(theirs, mine, file, pl->buf, sizeof pl->buf);
	if (r == CT_SEARCH_PATH) {
		pl->path = pl->buf;
		pl->searched = true;
	} else if (r == CT_SEARCH_UNSURE) {
		pl->passthrough = true;
		pl->unsure = true;
	}
}

/* ---- recording ------------------------------------------------------------------- */
/*
 * The canonical path of a loaded object, without realpath() (which may
 * allocate for a long path): open its file O_PATH and read the fd's link in
 * /proc.  Also gives its size (fstat of the O_PATH fd).  false when that
 * fails (no /proc, a file deleted since it was loaded): the caller keeps
 * the loader's own name.  errno is preserved.
 */
static bool object_path(const char *name, char *out, size_t outlen, struct stat *st, bool *have_st)
{
	char link[32] = "/proc/self/fd/", digits[12];
	int saved = errno, fd, k = 0, i = 14;
	ssize_t n;

	*have_st = false;
	fd = ct_sys_open(name, O_PATH | O_CLOEXEC, 0);
	if (fd < 0) {
		errno = saved;
		return false;
	}
	for (unsigned v = (unsigned)fd; k == 0 || v; v /= 10)
		digits[k++] = (char)('0' + v % 10);
	while (k)
		link[i++] = digits[--k];
	link[i] = 0;
	n = readlink(link, out, outlen - 1);
	*have_st = ct_sys_fstat(fd, st) == 0;
	ct_sys_close(fd);
	errno = saved;
	if (n <= 0 || (size_t)n >= outlen - 1 || out[0] != '/')
		return false;
	out[n] = 0;
	/* the object's file was replaced or removed since it was opened */
	if ((size_t)n > 10 && !memcmp(out + n - 10, " (deleted)", 10))
		return false;
	return true;
}

static void record_dlopen_exit(struct ct_w *w, unsigned call, uint64_t seq, void *h,
			       const struct dlplan *pl, const char *errtext, int injected, uint32_t rule)
{
	char real[PATH_MAX];
	struct link_map *lm = NULL;
	struct stat st;
	bool have_real = false, have_size = false;
	uint32_t kind = CT_LIB_OTHER, psz;

	real[0] = 0;
	if (h && ct_dl.dlinfo && ct_dl.dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name &&
	    lm->l_name[0]) {
		have_real = object_path(lm->l_name, real, sizeof real, &st, &have_size);
		if (!have_real) {
			size_t n = strnlen(lm->l_name, sizeof real - 1);
			memcpy(real, lm->l_name, n);
			real[n] = 0;
			have_real = n > 0;
			have_size = have_real && ct_sys_fstatat(AT_FDCWD, real, &st, 0) == 0;
		}
	}
	if (have_real) {
		kind = ct_lib_kind(real);
	} else {
		kind = ct_lib_kind(pl->path);
	}
	psz = ct_fsz(8) + ct_fsz(4) + (have_real ? ct_strsz(real, 1024) : 0) +
	      (have_size ? ct_fsz(8) : 0) + (pl->searched ? ct_strsz(pl->path, 1024) : 0) +
	      (errtext ? ct_strsz(errtext, 512) : 0) + (injected ? ct_fsz(8) : 0);
	if (!ct_w_begin(w, CT_REC_EXIT, call, psz, injected ? CT_RF_INJECTED : 0))
		return;
	ct_w_exit(w, seq, (int64_t)(uintptr_t)h, 0);
	ct_w_u64(w, CT_FLD_HANDLE, (uint64_t)(uintptr_t)h);
	ct_w_u32(w, CT_FLD_LIBKIND, kind);
	if (have_real)
		ct_w_str(w, CT_FLD_REALPATH, real, 1024);
	if (have_size)
		ct_w_u64(w, CT_FLD_FILESIZE, (uint64_t)st.st_size);
	if (pl->searched)
		ct_w_str(w, CT_FLD_SEARCHED, pl->path, 1024);
	if (errtext)
		ct_w_str(w, CT_FLD_DLERROR, errtext, 512);
	if (injected) {
		uint32_t inj[2] = { rule, injected == 2 ? CT_INJ_ERROR : CT_INJ_DELAY };
		ct_w_field(w, CT_FLD_INJECT, inj, sizeof inj);
	}
	ct_w_commit(w);
}

static void *dlopen_recorded(unsigned call, struct dlplan *pl, const char *file, int flags)
{
	struct ct_w w;
	uint64_t seq = 0;
	void *h;
	int saved = errno;
	bool rec;
	char injmsg[512];
	uint32_t rule = 0;
	uint64_t delay_ns = 0;
	int injected = 0;
	const char *errtext = NULL;

	/* the injection is decided first: the enter record says it (a held
	 * dlopen then reads as an injected call that never returned) */
	if (unlikely(ct_inj_active))
		injected = ct_inject_dlopen(file, injmsg, sizeof injmsg, &rule, &delay_ns);
	rec = ct_w_begin(&w, CT_REC_ENTER, call,
			 ct_strsz(file, 1024) + ct_fsz(4) + (call == CT_CALL_dlmopen ? ct_fsz(8) : 0) +
				 (injected ? ct_fsz(8) : 0),
			 injected ? CT_RF_INJECTED : 0);
	if (rec) {
		seq = w.s.seq;
		ct_w_str(&w, CT_FLD_LIBNAME, file, 1024);
		ct_w_u32(&w, CT_FLD_DLFLAGS, (uint32_t)flags);
		if (call == CT_CALL_dlmopen)
			ct_w_i64(&w, CT_FLD_LMID, pl->lmid);
		if (injected) {
			uint32_t inj[2] = { rule, injected == 2 ? CT_INJ_ERROR : CT_INJ_DELAY };
			ct_w_field(&w, CT_FLD_INJECT, inj, sizeof inj);
		}
		ct_w_commit(&w);
	}
	if (delay_ns)
		ct_sleep_ns(delay_ns);
	if (injected == 2) {
		h = NULL;
		keep_error(injmsg);
		errtext = injmsg;
	} else {
		errno = saved;
		h = pl->mopen ? ct_real.dlmopen(pl->lmid, pl->path, flags) : ct_real.dlopen(pl->path, flags);
		saved = errno;
		if (!h) {
			/* read the reason now (it is consumed) and keep it for the program */
			keep_glibc_error();
			errtext = dlerr_pending ? dlerr_buf : NULL;
		}
	}
	if (rec)
		record_dlopen_exit(&w, call, seq, h, pl, errtext, injected, rule);
	/* no libcuda: there will be no cuInit to take the snapshot before */
	if (rec && !h && ct_lib_kind(file) == CT_LIB_CUDA)
		ct_snapshot();
	errno = saved;
	return h;
}

/* A dlopen passed through because the caller's search could not be followed
 * (dlsearch.c): the trace says so, since the call itself is not in it. */
static __attribute__((noinline)) void note_unsure(const char *file)
{
	char text[400];
	int saved = errno;

	snprintf(text, sizeof text,
		 "dlopen(\"%.200s\") not recorded: which file the caller's search takes could not be told "
		 "(glibc-hwcaps levels not known, or a legacy hwcaps subdirectory holds it); passed through",
		 file);
	ct_busy++;
	ct_note(text);
	ct_busy--;
	errno = saved;
}

/* what dlopen_planned returns for "pass the call through" */
static const char pass_marker;
#define DL_PASS ((void *)&pass_marker)

/*
 * Plan and, unless the plan says pass through (DL_PASS), make the recorded
 * dlopen.  Out of line and with the plan in its own frame: the exported
 * dlopen and dlmopen then keep no local whose address is taken, so that
 * their pass-through is a sibling call (a jump) and glibc sees the
 * program's return address (its search list, its $ORIGIN, its namespace).
 */
static __attribute__((noinline)) void *dlopen_planned(const char *file, int flags, const void *caller,
						      bool mopen, Lmid_t lmid)
{
	struct dlplan pl;

	pl.mopen = mopen;
	pl.lmid = lmid;
	ct_busy++;
	internal_end(); /* the call resets the program's pending error: an injected failure too */
	plan_dlopen(&pl, file, caller);
	internal_end();
	ct_busy--;
	if (unlikely(pl.unsure))
		note_unsure(file);
	if (pl.passthrough || !lib_interesting(file))
		return DL_PASS;
	return dlopen_recorded(pl.mopen ? CT_CALL_dlmopen : CT_CALL_dlopen, &pl, file, flags);
}

static inline bool dl_fast(const char *file)
{
	if (ct_busy || !lib_interesting(file))
		return true;
	ct_ensure_init();
	return ct_cfg.disabled || !ct_real.dlopen;
}

CT_EXPORT void *dlopen(const char *file, int flags);
void *dlopen(const char *file, int flags)
{
	void *h;

	if (unlikely(!ct_real.dlopen)) {
		ct_resolve();
		if (!ct_real.dlopen)
			return NULL;
	}
	dl_call_starts();
	if (dl_fast(file) && likely(!ct_inj_active))
		return ct_real.dlopen(file, flags); /* sibling call: caller preserved */
	h = dlopen_planned(file, flags, __builtin_return_address(0), false, 0);
	if (h != DL_PASS)
		return h;
	return ct_real.dlopen(file, flags); /* sibling call too */
}

CT_EXPORT void *dlmopen(Lmid_t lmid, const char *file, int flags);
void *dlmopen(Lmid_t lmid, const char *file, int flags)
{
	void *h;

	if (unlikely(!ct_real.dlmopen)) {
		ct_resolve();
		if (!ct_real.dlmopen)
			return NULL;
	}
	dl_call_starts();
	if (dl_fast(file) && likely(!ct_inj_active))
		return ct_real.dlmopen(lmid, file, flags);
	h = dlopen_planned(file, flags, __builtin_return_address(0), true, lmid);
	if (h != DL_PASS)
		return h;
	return ct_real.dlmopen(lmid, file, flags);
}

/* ---- dlsym / dlvsym ------------------------------------------------------------- */
/* the shim's own look-ups: the loader's dlsym/dlvsym, never another
 * interposer's (ct_dl, resolve.c) */
static void *sym_in(void *h, const char *name, const char *ver)
{
	return ver ? ct_dl.dlvsym(h, name, ver) : ct_dl.dlsym(h, name);
}

/* dladdr's file name for the object holding addr: its l_name, and for the
 * main program (whose l_name is empty) the loader's argv[0] -- the name glibc
 * puts in its messages (elf/dl-addr.c, DSO_FILENAME in elf/dl-lookup.c;
 * measured on 2.36, also after the program changed argv[0]) */
static bool file_of(const void *addr, const char **file)
{
	Dl_info info;
	void *lm = NULL;

	if (!addr || !ct_dl.dladdr1 || !ct_dl.dladdr1(addr, &info, &lm, RTLD_DL_LINKMAP))
		return false;
	*file = info.dli_fname;
	return true;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(const void **)data = info->dlpi_phdr; /* the main program comes first */
	return 1;
}

static const char *main_file(void)
{
	const void *phdr = NULL;
	const char *f = NULL;

	dl_iterate_phdr(first_object, &phdr);
	return file_of(phdr, &f) ? f : NULL;
}

/* the object glibc names when a look-up fails: the handle's, or for
 * RTLD_DEFAULT the caller's (the main program when the caller is in none) */
static const char *blame_file(void *h, const void *caller)
{
	struct link_map *lm = NULL;
	const char *f = NULL;

	if (h == RTLD_DEFAULT)
		return file_of(caller, &f) ? f : main_file();
	if (!ct_dl.dlinfo || ct_dl.dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
		return NULL;
	if (lm->l_name && lm->l_name[0])
		return lm->l_name;
	return file_of(lm->l_ld, &f) ? f : main_file();
}

/* glibc's text for a symbol that is not there (elf/dl-lookup.c; the format
 * measured on 2.36): "<file>: undefined symbol: <name>[, version <ver>]" */
static void keep_undefined(const char *file, const char *name, const char *ver)
{
	if (!file)
		file = "<main program>";
	if (ver)
		snprintf(dlerr_buf, sizeof dlerr_buf, "%s: undefined symbol: %s, version %s", file, name, ver);
	else
		snprintf(dlerr_buf, sizeof dlerr_buf, "%s: undefined symbol: %s", file, name);
	dlerr_pending = 1;
	dlerr_errno = -1;
}

/* RTLD_DEFAULT also covers a dlopen'ed caller's own dependencies (its local
 * scope): the look-up through the caller's link map searches those.  When
 * it fails, glibc's text names the caller, as RTLD_DEFAULT's does. */
static void *in_caller_scope(const char *name, const char *ver, const void *caller)
{
	struct link_map *lm = ct_link_map_of(caller);
	const char *f = NULL;
	void *p;

	if (!lm) {
		keep_undefined(main_file(), name, ver);
		return NULL;
	}
	p = sym_in(lm, name, ver);
	if (p && !ct_addr_is_ours(p))
		return p;
	if (p) /* the caller's scope holds the shim: the global one, searched already */
		keep_undefined(file_of(caller, &f) ? f : NULL, name, ver);
	else
		keep_glibc_error();
	return NULL;
}

/*
 * An object that satisfies an RTLD_DEFAULT look-up is kept as long as the
 * caller (elf/dl-lookup.c add_dependency): marked NODELETE when the caller is
 * never unloaded (the main program, its dependencies, preloads -- and the
 * shim), made a dependency of a dlopen'ed caller.  A definition found
 * through RTLD_NEXT got neither: mark its object NODELETE as glibc would
 * have (measured: without this, dlsym(RTLD_DEFAULT, "cuInit") from main,
 * then dlclose, unloaded a libcuda that stays without the shim).  For a
 * dlopen'ed caller that is a little stronger than glibc, never weaker.
 */
static void pin_like_glibc(const void *p)
{
	struct link_map *lm = ct_link_map_of(p);
	void *h;

	if (!lm || !lm->l_name || !lm->l_name[0])
		return; /* the main program is never unloaded */
	/* RTLD_NOLOAD matches the loaded object by this exact name; RTLD_NODELETE
	 * on an object already there promotes it (dlopen(3)) */
	h = ct_dl.dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
	if (h)
		ct_dl.dlclose(h);
	internal_end();
}

/*
 * What the program's own look-up would have found without the shim.  The
 * real dlsym runs with the shim as its caller, and a hooked name finds our
 * own export first: the shim is in the global scope, and in the main
 * program's.  So:
 *  - our export found: the next definition after the shim in the same order
 *    (RTLD_NEXT from the shim searches the rest of the global scope, which
 *    is the main program's scope too); not the RTLD_LOCAL objects the
 *    wrappers search when linked code calls them (ct_resolve_next): without
 *    the shim a libcuda loaded RTLD_LOCAL is not in the default scope; for
 *    RTLD_DEFAULT its object is pinned as glibc pins it (pin_like_glibc);
 *  - RTLD_DEFAULT, nothing in the global scope: the caller's own scope;
 *  - nothing: glibc's own text where one of our look-ups produced it with the
 *    same object name, else the same text built as glibc builds it.
 * glibc's error state is clear on return; a failure is in our copy.
 */
static void *lookup(void *h, const char *name, const char *ver, const void *caller)
{
	/* the program's own look-up goes to the next dlsym/dlvsym (another
	 * interposer's, if one follows the shim), once; the retries are ours */
	void *p = ver ? ct_real.dlvsym(h, name, ver) : ct_real.dlsym(h, name);

	if (p && !ct_addr_is_ours(p))
		return p;
	if (p) {
		p = sym_in(RTLD_NEXT, name, ver);
		if (p) {
			if (h == RTLD_DEFAULT)
				pin_like_glibc(p);
			return p;
		}
		internal_end(); /* its text names the shim */
		if (h != RTLD_DEFAULT) {
			keep_undefined(blame_file(h, caller), name, ver);
			return NULL;
		}
	} else if (h != RTLD_DEFAULT) {
		keep_glibc_error(); /* names the handle's object, as it should */
		return NULL;
	} else {
		internal_end(); /* names the shim, not the caller */
	}
	return in_caller_scope(name, ver, caller);
}

static __attribute__((noinline)) void *dlsym_slow(void *h, const char *name, const char *ver,
						  const void *caller)
{
	struct ct_w w;
	uint64_t seq = 0;
	void *p, *out;
	int saved = errno;
	bool rec;
	unsigned call = ver ? CT_CALL_dlvsym : CT_CALL_dlsym;
	int injected = 0;
	uint32_t rule = 0;
	uint64_t delay_ns = 0;
	bool unwrapped = false;

	if (unlikely(ct_inj_active))
		injected = ct_inject_dlsym(name, &rule, &delay_ns);
	rec = ct_w_begin(&w, CT_REC_ENTER, call,
			 ct_fsz(8) + ct_strsz(name, 256) + (ver ? ct_strsz(ver, 64) : 0) +
				 (injected ? ct_fsz(8) : 0),
			 injected ? CT_RF_INJECTED : 0);
	if (rec) {
		seq = w.s.seq;
		ct_w_u64(&w, CT_FLD_HANDLE, (uint64_t)(uintptr_t)h);
		ct_w_str(&w, CT_FLD_SYMBOL, name, 256);
		if (ver)
			ct_w_str(&w, CT_FLD_SYMVER, ver, 64);
		if (injected) {
			uint32_t inj[2] = { rule, injected == 2 ? CT_INJ_ERROR : CT_INJ_DELAY };
			ct_w_field(&w, CT_FLD_INJECT, inj, sizeof inj);
		}
		ct_w_commit(&w);
	}
	if (delay_ns)
		ct_sleep_ns(delay_ns);
	if (injected == 2) {
		/* as if the symbol were not there; the program's older error is gone */
		internal_end();
		keep_undefined(blame_file(h, caller), name, ver);
		internal_end();
		p = NULL;
	} else {
		p = lookup(h, name, ver, caller);
	}
	out = p;
	if (p && ct_cuda_is_hooked(name)) {
		out = ct_cuda_wrap(name, p);
		/* every wrapper of this name holds another library's function */
		unwrapped = out == p && !ct_addr_is_ours(p);
	}
	if (rec && ct_w_begin(&w, CT_REC_EXIT, call, ct_fsz(8) + ct_fsz(4) + (injected ? ct_fsz(8) : 0) +
			      (!out && dlerr_pending ? ct_strsz(dlerr_buf, 512) : 0),
			      injected ? CT_RF_INJECTED : 0)) {
		ct_w_exit(&w, seq, (int64_t)(uintptr_t)out, 0);
		ct_w_u64(&w, CT_FLD_PFN, (uint64_t)(uintptr_t)p);
		ct_w_u32(&w, CT_FLD_WRAPPED, out && out != p);
		if (!out && dlerr_pending)
			ct_w_str(&w, CT_FLD_DLERROR, dlerr_buf, 512);
		if (injected) {
			uint32_t inj[2] = { rule, injected == 2 ? CT_INJ_ERROR : CT_INJ_DELAY };
			ct_w_field(&w, CT_FLD_INJECT, inj, sizeof inj);
		}
		ct_w_commit(&w);
	}
	if (unlikely(unwrapped))
		ct_mark_degraded(ct_why_unwrapped);
	errno = saved;
	return out;
}

/*
 * dlsym(RTLD_NEXT, name) of a name the shim exports, from an object that
 * comes before the shim in the global scope (the main program, an earlier
 * preload): glibc would search the objects after the caller, and the shim is
 * one of them, so the real look-up finds our own export where the program
 * without the shim finds the next definition or nothing.  Answer as glibc
 * would: the objects between the caller and the shim, then those after the
 * shim; a definition found is handed out wrapped (as dlsym hands out every
 * hooked name), none is a failure with glibc's text.  NEXT_NA: the caller is
 * not before the shim, the real look-up (a sibling call) is already right.
 */
#define NEXT_NA ((void *)-1)
static __attribute__((noinline)) void *next_before_shim(const char *name, const char *ver, const void *caller)
{
	struct link_map *me, *lm, *l;
	const char *f = NULL;
	int saved = errno;
	void *p = NULL;

	ct_busy++;
	me = ct_link_map_of((const void *)next_before_shim);
	lm = ct_link_map_of(caller);
	for (l = lm; l && l != me; l = l->l_next)
		;
	if (!me || !lm || lm == me || l != me) {
		ct_busy--;
		errno = saved;
		return NEXT_NA;
	}
	internal_end(); /* the program's dlsym forgets an older error, as glibc's does */
	for (l = lm->l_next; l && l != me && !p; l = l->l_next) {
		p = sym_in(l, name, ver);
		if (p && ct_link_map_of(p) != l)
			p = NULL; /* found in one of l's dependencies: its own turn comes */
	}
	if (!p)
		p = sym_in(RTLD_NEXT, name, ver);
	internal_end();
	if (p)
		p = ct_cuda_wrap(name, p);
	else
		keep_undefined(file_of(caller, &f) ? f : main_file(), name, ver);
	ct_busy--;
	errno = saved;
	return p;
}

CT_EXPORT void *dlsym(void *h, const char *name);
void *dlsym(void *h, const char *name)
{
	if (unlikely(!ct_real.dlsym)) {
		ct_resolve();
		if (!ct_real.dlsym)
			return NULL;
	}
	dl_call_starts();
	if (unlikely(h == RTLD_NEXT) && !ct_busy && sym_interesting(name) && ct_cuda_is_hooked(name)) {
		void *p = next_before_shim(name, NULL, __builtin_return_address(0));
		if (p != NEXT_NA)
			return p;
	}
	/* RTLD_NEXT is relative to the caller: only a sibling call keeps that */
	if (h == RTLD_NEXT || ct_busy || !sym_interesting(name))
		return ct_real.dlsym(h, name);
	ct_ensure_init();
	if (ct_cfg.disabled)
		return ct_real.dlsym(h, name);
	return dlsym_slow(h, name, NULL, __builtin_return_address(0));
}

CT_EXPORT void *dlvsym(void *h, const char *name, const char *ver);
void *dlvsym(void *h, const char *name, const char *ver)
{
	if (unlikely(!ct_real.dlvsym)) {
		ct_resolve();
		if (!ct_real.dlvsym)
			return NULL;
	}
	const char *v = ver;

	/* glibc declares ver nonnull; a program may still pass NULL */
	__asm__("" : "+r"(v));
	dl_call_starts();
	if (unlikely(h == RTLD_NEXT) && !ct_busy && v && sym_interesting(name) && ct_cuda_is_hooked(name)) {
		void *p = next_before_shim(name, v, __builtin_return_address(0));
		if (p != NEXT_NA)
			return p;
	}
	if (h == RTLD_NEXT || ct_busy || !sym_interesting(name) || !v)
		return ct_real.dlvsym(h, name, ver);
	ct_ensure_init();
	if (ct_cfg.disabled)
		return ct_real.dlvsym(h, name, ver);
	return dlsym_slow(h, name, ver, __builtin_return_address(0));
}

/* ---- dlclose ------------------------------------------------------------------- */
void ct_cuda_sweep(void) CT_HIDDEN;
bool ct_cuda_bound(void) CT_HIDDEN;

/* dl_iterate_phdr's count of objects unloaded so far; ULLONG_MAX: unknown */
static int count_unloads(struct dl_phdr_info *info, size_t size, void *data)
{
	*(unsigned long long *)data =
		size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs ? info->dlpi_subs
											   : ULLONG_MAX;
	return 1;
}

static unsigned long long unloads(void)
{
	unsigned long long n = ULLONG_MAX;

	dl_iterate_phdr(count_unloads, &n);
	return n;
}

/*
 * Recorded for the NVIDIA libraries; and for any object while a wrapper
 * holds a real function: when the call unloaded something (the library, or
 * one it pulled in), the wrappers whose function went with it are freed
 * (ct_cuda_sweep), else a later look-up and call would jump into memory that
 * is gone.  Nothing after the real dlclose touches glibc's dlerror state.
 */
static __attribute__((noinline)) int dlclose_slow(void *h)
{
	struct link_map *lm = NULL;
	struct ct_w w;
	uint64_t seq = 0;
	unsigned long long before = 0;
	int r, saved;
	bool rec = false, bound;

	ct_busy++;
	bound = ct_cuda_bound();
	if (bound)
		before = unloads();
	if (!ct_ready || ct_cfg.disabled || ct_dl.dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm ||
	    !lib_interesting(lm->l_name))
		lm = NULL;
	internal_end();
	ct_busy--;
	if (lm && ct_w_begin(&w, CT_REC_ENTER, CT_CALL_dlclose,
			     ct_fsz(8) + ct_strsz(lm->l_name, 1024), 0)) {
		rec = true;
		seq = w.s.seq;
		ct_w_u64(&w, CT_FLD_HANDLE, (uint64_t)(uintptr_t)h);
		ct_w_str(&w, CT_FLD_REALPATH, lm->l_name, 1024);
		ct_w_commit(&w);
	}
	r = ct_real.dlclose(h);
	saved = errno;
	if (bound && (before == ULLONG_MAX || unloads() != before)) {
		ct_busy++;
		ct_cuda_sweep();
		ct_busy--;
	}
	if (rec && ct_w_begin(&w, CT_REC_EXIT, CT_CALL_dlclose, 0, 0)) {
		ct_w_exit(&w, seq, r, 0);
		ct_w_commit(&w);
	}
	errno = saved;
	return r;
}

CT_EXPORT int dlclose(void *h);
int dlclose(void *h)
{
	if (unlikely(!ct_real.dlclose)) {
		ct_resolve();
		if (!ct_real.dlclose)
			return -1;
	}
	void *hh = h;

	__asm__("" : "+r"(hh)); /* declared nonnull, may be NULL anyway */
	dl_call_starts();
	if (!hh || ct_busy || !ct_dl.dlinfo)
		return ct_real.dlclose(h);
	/* not recording (a wrapper may still hold a function: see dlclose_slow) */
	if ((!ct_ready || ct_cfg.disabled) && !ct_cuda_bound())
		return ct_real.dlclose(h);
	return dlclose_slow(h);
}
