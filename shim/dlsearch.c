/*
 * Which file would the caller's dlopen(NAME) take?  (hooks_dl.c, plan_dlopen)
 *
 * A recorded dlopen is made by the shim, so glibc searches the shim's list
 * (its DT_RUNPATH, LD_LIBRARY_PATH, ld.so.cache, the system directories)
 * instead of the caller's.  Where the two lists differ, the shim works out
 * what glibc would do for the caller, as glibc 2.36 does it (elf/dl-load.c
 * open_path and open_verify, measured on Debian 12):
 *
 *  - in each directory D of the list, first D/glibc-hwcaps/LEVEL/NAME for
 *    the levels the CPU supports, best first (glibc 2.33 and later;
 *    x86-64-v4, -v3, -v2 on x86-64), then the legacy hwcaps subdirectories
 *    (tls/, the platform, ...; up to glibc 2.36), then D/NAME;
 *  - a file of the wrong ELF class or machine is passed over ("wrong ELF
 *    class" only if nothing else is found); any other file stops the search
 *    there: loaded, or the dlopen fails on it ("file too short", "invalid
 *    ELF header", "ELF file data encoding not little-endian", ...).
 *
 * Where the caller's list and the shim's share their beginning (the
 * LD_LIBRARY_PATH directories before a DT_RUNPATH) and glibc decides there,
 * or where neither list's own part holds anything, the plain name is exact:
 * glibc searches that part for the shim exactly as for the caller, with its
 * own hwcaps and its own verdict on invalid files.  Only a decision inside
 * the caller's own directories is predicted, and a prediction the shim
 * cannot be sure of (hwcaps levels it cannot read, a legacy hwcaps
 * subdirectory that holds the name) is answered CT_SEARCH_UNSURE: the call
 * then goes through unrecorded, as the caller made it.
 *
 * Runs in a dlopen hook, never on a hot path: no malloc, the directory read
 * with getdents64 into a stack buffer.
 */
#include "shim.h"
#include "dlsearch.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- one candidate file, as open_verify sees it ----------------------------- */
enum {
	C_NONE,
	C_SKIP,
	C_STOP
};

#if defined(__x86_64__)
#define MY_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define MY_MACHINE EM_AARCH64
#elif defined(__i386__)
#define MY_MACHINE EM_386
#else
#define MY_MACHINE 0 /* not checked */
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MY_DATA ELFDATA2LSB
#else
#define MY_DATA ELFDATA2MSB
#endif

/* C_NONE: not there (or not readable: glibc goes on after ENOENT and
 * EACCES); C_SKIP: glibc passes it over (wrong class or machine); C_STOP:
 * glibc takes it, to load it or to fail on it */
static int candidate(const char *path)
{
	ElfW(Ehdr) eh;
	ssize_t n;
	int fd = ct_sys_open(path, O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return C_NONE;
	n = ct_sys_read(fd, &eh, sizeof eh);
	ct_sys_close(fd);
	if (n != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return C_STOP; /* "file too short", "invalid ELF header", a directory */
	if (eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
		return C_SKIP;
	if (eh.e_ident[EI_DATA] != MY_DATA || eh.e_ident[EI_VERSION] != EV_CURRENT ||
	    eh.e_version != EV_CURRENT)
		return C_STOP;
	if (MY_MACHINE && eh.e_machine != MY_MACHINE)
		return C_SKIP;
	return C_STOP;
}

/* ---- what glibc this is, what the CPU supports ---------------------------------- */
static int glibc_minor(void)
{
	static int minor = -1;
	const char *v;

	if (minor < 0) {
		int m = 0;
		v = gnu_get_libc_version();
		if (v && v[0] == '2' && v[1] == '.')
			for (v += 2; *v >= '0' && *v <= '9'; v++)
				m = m * 10 + (*v - '0');
		minor = m;
	}
	return minor;
}

#define LV_UNKNOWN -1
#if defined(__x86_64__)
/* glibc's view of the CPU (<sys/platform/x86.h>, GLIBC_2.33): the features
 * it found usable, after the glibc.cpu.hwcaps tunable; looked up at run time
 * so that the shim still loads on glibc 2.17 */
struct ct_cpuid_leaf {
	unsigned int cpuid[4]; /* eax ebx ecx edx */
	unsigned int active[4];
};
enum {
	R_EBX = 1,
	R_ECX = 2,
	R_EDX = 3
};
#define ON(l, r, b) (((l)->active[r] >> (b)) & 1u)

static const char *const x86_levels[] = { "x86-64-v4", "x86-64-v3", "x86-64-v2" };

/* the x86-64-vN levels glibc searches, as a mask of x86_levels[] (bit i),
 * from the same features sysdeps/x86/get-isa-level.h (glibc 2.33) tests */
static int x86_level_mask(void)
{
	typedef const struct ct_cpuid_leaf *(*leaf_fn)(unsigned int);
	static int mask = -2;
	leaf_fn f;
	const struct ct_cpuid_leaf *l1, *l7, *l81;
	int m = 0;

	if (mask != -2)
		return mask;
	f = ct_dl.dlvsym ? (leaf_fn)ct_dl.dlvsym(RTLD_DEFAULT, "__x86_get_cpuid_feature_leaf", "GLIBC_2.33")
			 : NULL;
	if (!f || !(l1 = f(0)) || !(l7 = f(1)) || !(l81 = f(2))) {
		mask = LV_UNKNOWN;
		return mask;
	}
	/* baseline: CMOV CX8 FPU FXSR MMX SSE SSE2 (FPU: present, not "usable") */
	if (ON(l1, R_EDX, 15) && ON(l1, R_EDX, 8) && ((l1->cpuid[R_EDX] >> 0) & 1u) && ON(l1, R_EDX, 24) &&
	    ON(l1, R_EDX, 23) && ON(l1, R_EDX, 25) && ON(l1, R_EDX, 26) &&
	    /* v2: CMPXCHG16B LAHF64_SAHF64 POPCNT SSE3 SSSE3 SSE4_1 SSE4_2 */
	    ON(l1, R_ECX, 13) && ON(l81, R_ECX, 0) && ON(l1, R_ECX, 23) && ON(l1, R_ECX, 0) &&
	    ON(l1, R_ECX, 9) && ON(l1, R_ECX, 19) && ON(l1, R_ECX, 20)) {
		m |= 4;
		/* v3: AVX AVX2 BMI1 BMI2 F16C FMA LZCNT MOVBE */
		if (ON(l1, R_ECX, 28) && ON(l7, R_EBX, 5) && ON(l7, R_EBX, 3) && ON(l7, R_EBX, 8) &&
		    ON(l1, R_ECX, 29) && ON(l1, R_ECX, 12) && ON(l81, R_ECX, 5) && ON(l1, R_ECX, 22)) {
			m |= 2;
			/* v4: AVX512F AVX512BW AVX512CD AVX512DQ AVX512VL */
			if (ON(l7, R_EBX, 16) && ON(l7, R_EBX, 30) && ON(l7, R_EBX, 28) &&
			    ON(l7, R_EBX, 17) && ON(l7, R_EBX, 31))
				m |= 1;
		}
	}
	mask = m;
	return mask;
}
#endif

/* ---- one directory of the list -------------------------------------------------- */
enum {
	D_NONE,
	D_TAKE,
	D_UNSURE
};

static bool join(char *out, size_t len, const char *a, const char *b, const char *c)
{
	int n = snprintf(out, len, "%s/%s%s%s", a, b, *c ? "/" : "", c);

	return n > 0 && (size_t)n < len;
}

/* D/glibc-hwcaps/: D_TAKE (out) for the best level the CPU has that holds a
 * file glibc takes; D_UNSURE when some subdirectory holds one and the levels
 * are not known */
static int hwcaps(const char *dir, const char *file, char *out, size_t outlen)
{
	char sub[PATH_MAX], buf[1024];
	bool found = false;
	int fd;
	long n;

	if (glibc_minor() < 33 || !join(sub, sizeof sub, dir, "glibc-hwcaps", ""))
		return D_NONE;
	fd = ct_sys_open(sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return D_NONE;
#if defined(__x86_64__)
	if (x86_level_mask() != LV_UNKNOWN) {
		ct_sys_close(fd);
		for (int i = 0; i < 3; i++) {
			if (!(x86_level_mask() & (1 << i)) || !join(out, outlen, sub, x86_levels[i], file))
				continue;
			if (candidate(out) == C_STOP)
				return D_TAKE;
		}
		return D_NONE;
	}
#endif
	/* levels not known: does any subdirectory hold a file glibc would take? */
	while (!found && (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (long off = 0; off < n && !found;) {
			const struct dirent64 *d = (const struct dirent64 *)(const void *)(buf + off);
			off += d->d_reclen;
			if (d->d_name[0] == '.' || !join(out, outlen, sub, d->d_name, file))
				continue;
			found = candidate(out) == C_STOP;
		}
	}
	ct_sys_close(fd);
	return found ? D_UNSURE : D_NONE;
}

/* the legacy hwcaps subdirectories (glibc up to 2.36): which of them glibc
 * searches depends on AT_PLATFORM, AT_HWCAP and glibc.cpu.hwcap_mask; the
 * shim only tells whether one of the usual ones holds the name */
static bool legacy(const char *dir, const char *file)
{
	static const char *const subs[] = { "tls", "haswell", "xeon_phi", "avx512_1" };
	const char *plat = (const char *)getauxval(AT_PLATFORM);
	char p[PATH_MAX], t[256];

	if (glibc_minor() >= 37)
		return false;
	for (unsigned i = 0; i < sizeof subs / sizeof subs[0]; i++)
		if (join(p, sizeof p, dir, subs[i], file) && candidate(p) == C_STOP)
			return true;
	if (plat && *plat && strlen(plat) < 64) {
		if (join(p, sizeof p, dir, plat, file) && candidate(p) == C_STOP)
			return true;
		snprintf(t, sizeof t, "tls/%s", plat);
		if (join(p, sizeof p, dir, t, file) && candidate(p) == C_STOP)
			return true;
	}
	return false;
}

/* D_TAKE: glibc takes out; D_STOPS: glibc stops in dir, on a file the shim
 * cannot name; D_MAYBE: it may stop there or go on */
enum {
	D_STOPS = 3,
	D_MAYBE = D_UNSURE
};

static int in_dir(const char *dir, const char *file, char *out, size_t outlen)
{
	int r = hwcaps(dir, file, out, outlen);
	bool unsure = r == D_UNSURE || legacy(dir, file);

	if (r == D_TAKE)
		return D_TAKE;
	if (join(out, outlen, dir, file, "") && candidate(out) == C_STOP)
		return unsure ? D_STOPS : D_TAKE;
	return unsure ? D_MAYBE : D_NONE;
}

/* ---- the two lists -------------------------------------------------------------- */
static const char *nth(const Dl_serinfo *si, unsigned i)
{
	return si->dls_serpath[i].dls_name;
}

int ct_dl_search(const Dl_serinfo *theirs, const Dl_serinfo *mine, const char *file, char *out, size_t outlen)
{
	unsigned nt = theirs->dls_cnt, nm = mine->dls_cnt, p = 0, q = 0, i;
	bool maybe = false;

	/* (RTLD_DI_SERINFO's dls_flags are 0 in glibc: the lists are compared
	 * by name) the shared beginning, and the shared end (the system
	 * directories, with ld.so.cache searched just before them by both) */
	while (p < nt && p < nm && !strcmp(nth(theirs, p), nth(mine, p)))
		p++;
	while (q < nt - p && q < nm - p && !strcmp(nth(theirs, nt - 1 - q), nth(mine, nm - 1 - q)))
		q++;
	/* 1. the shared beginning: a decision there is glibc's for the shim too */
	for (i = 0; i < p; i++) {
		int r = in_dir(nth(theirs, i), file, out, outlen);
		if (r == D_TAKE || r == D_STOPS)
			return CT_SEARCH_NAME;
		if (r == D_MAYBE)
			maybe = true; /* glibc may decide here, or go on */
	}
	/* 2. the caller's own directories: predicted */
	for (i = p; i < nt - q; i++) {
		int r = in_dir(nth(theirs, i), file, out, outlen);
		if (r == D_TAKE && !maybe)
			return CT_SEARCH_PATH;
		if (r != D_NONE)
			return CT_SEARCH_UNSURE;
	}
	/* 3. nothing there: the name is exact if the shim's own directories
	 * hold nothing either (glibc then goes on to the shared end for both) */
	for (i = p; i < nm - q; i++)
		if (in_dir(nth(mine, i), file, out, outlen) != D_NONE)
			return CT_SEARCH_UNSURE;
	return CT_SEARCH_NAME;
}
