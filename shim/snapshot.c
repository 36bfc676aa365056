/*
 * The process snapshot (issue 19, groups 1 and 4; failure catalog Part C,
 * G1, G4, G5): how libcuda was found and what else sits between the program
 * and the driver.  Written once per process as a note, just before the
 * first cuInit or nvmlInit (libcuda and every preload are mapped by then,
 * and a call that hangs has it before it), or at the first failed dlopen of
 * libcuda (when there will be no cuInit):
 *
 *   CT_FLD_MAPLIBS  the driver libraries, preloaded objects and known
 *                   interposers mapped (/proc/self/maps), " (deleted)" kept:
 *                   a libcuda deleted under a running process or pod;
 *   CT_FLD_MOUNT    the mount the mapped libcuda comes from (mountinfo);
 *   CT_FLD_LDCACHE  what /etc/ld.so.cache says for libcuda.so.1 and libcuda.so.
 *
 * And, in the context (process_context(), called by trace.c): the program's
 * ELF interpreter (glibc or musl), the container toolkit's ld.so.conf.d
 * drop-ins and /etc/ld.so.preload.
 *
 * No malloc, no stdio: stack buffers and raw system calls; everything is
 * bounded (the note is at most a few KiB).  Not on a hot path: once.
 */
#include "shim.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int snap_done;

void ct_snapshot_reset(void)
{
	__atomic_store_n(&snap_done, 0, __ATOMIC_RELAXED);
}

/* ---- the program's interpreter ------------------------------------------------ */
/* PT_INTERP of the main program, from its program headers in memory (AT_PHDR) */
const char *ct_program_interp(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);
	uintptr_t bias = 0;
	bool have_bias = false;

	if (!ph || !n || n > 256)
		return NULL;
	for (unsigned long i = 0; i < n; i++)
		if (ph[i].p_type == PT_PHDR) {
			bias = (uintptr_t)ph - ph[i].p_vaddr;
			have_bias = true;
		}
	if (!have_bias)
		return NULL;
	for (unsigned long i = 0; i < n; i++)
		if (ph[i].p_type == PT_INTERP && ph[i].p_filesz > 1 && ph[i].p_filesz < 256) {
			const char *s = (const char *)(bias + ph[i].p_vaddr);
			return memchr(s, 0, ph[i].p_filesz) ? s : NULL;
		}
	return NULL;
}

/* ---- small helpers --------------------------------------------------------------- */
static const char *base_of(const char *p, size_t n, size_t *bn)
{
	size_t i = n;

	while (i && p[i - 1] != '/')
		i--;
	*bn = n - i;
	return p + i;
}

static bool starts(const char *s, size_t n, const char *pre)
{
	size_t k = strlen(pre);
	return n >= k && !memcmp(s, pre, k);
}

/* append "line\n" (without the final newline on the last one: the reader splits) */
static void add_line(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
	if (*len + n + 2 > cap)
		return;
	if (*len)
		buf[(*len)++] = '\n';
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = 0;
}

static bool has_line(const char *buf, size_t len, const char *s, size_t n)
{
	for (size_t i = 0; i + n <= len;) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - buf) : len;
		if (e - i == n && !memcmp(buf + i, s, n))
			return true;
		i = e + 1;
	}
	return false;
}

/* whether the base name b appears as an entry's base name in a list
 * separated by ':' or blanks (LD_PRELOAD, /etc/ld.so.preload) */
static bool in_list(const char *list, const char *b, size_t bn)
{
	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, ": \t\n"), en;
		const char *e = base_of(p, n, &en);
		if (n && en == bn && !memcmp(e, b, bn))
			return true;
		p += n;
		p += strspn(p, ": \t\n");
	}
	return false;
}

/* the objects worth naming: the driver's and the interposers' */
static bool map_interesting(const char *path, size_t n, const char *preload, const char *preload_file)
{
	size_t bn;
	const char *b = base_of(path, n, &bn);

	if (starts(b, bn, "libcutrace"))
		return false;
	return starts(b, bn, "libcuda.so") || starts(b, bn, "libnvidia-") || starts(b, bn, "libdxcore") ||
	       starts(b, bn, "libvgpu") /* HAMi-core and its forks */ ||
	       starts(b, bn, "libcuda-control") /* tkestack vcuda-controller */ || in_list(preload, b, bn) ||
	       in_list(preload_file, b, bn);
}

/* ---- /proc/self/maps --------------------------------------------------------------- */
static void scan_maps(char *out, size_t cap, size_t *len, char *cuda, size_t cudalen)
{
	char buf[4096], line[1024];
	const char *preload = getenv("LD_PRELOAD");
	char pfile[1024];
	size_t ll = 0;
	bool skip = false;
	ssize_t n;
	int fd;

	if (ct_read_file("/etc/ld.so.preload", pfile, sizeof pfile) <= 0)
		pfile[0] = 0;
	cuda[0] = 0;
	fd = ct_sys_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	while ((n = ct_sys_read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];
			const char *path;
			size_t pn;

			if (c != '\n') {
				if (ll < sizeof line - 1)
					line[ll++] = c;
				else
					skip = true; /* a line longer than we keep: not named */
				continue;
			}
			line[ll] = 0;
			path = skip ? NULL : strchr(line, '/');
			pn = path ? ll - (size_t)(path - line) : 0;
			if (path &&
			    map_interesting(path,
					    pn - (pn > 10 && !memcmp(path + pn - 10, " (deleted)", 10) ? 10
												       : 0),
					    preload, pfile) &&
			    !has_line(out, *len, path, pn)) {
				add_line(out, cap, len, path, pn);
				size_t bn;
				const char *b = base_of(path, pn, &bn);
				if (!cuda[0] && starts(b, bn, "libcuda.so") && pn < cudalen) {
					memcpy(cuda, path, pn);
					cuda[pn] = 0;
				}
			}
			ll = 0;
			skip = false;
		}
	}
	ct_sys_close(fd);
}

/* ---- /proc/self/mountinfo ----------------------------------------------------------- */
/* field k (0-based, blank separated) of a mountinfo line */
static const char *mi_field(const char *l, int k, size_t *n)
{
	const char *p = l;

	for (int i = 0; i < k; i++) {
		p += strcspn(p, " ");
		if (!*p)
			return NULL;
		p++;
	}
	*n = strcspn(p, " ");
	return p;
}

/* "<id> <parent> <maj:min> <root> <mount point> <options> [optional...] - <fstype> <source> <super>" */
static void find_mount(const char *file, char *out, size_t cap)
{
	char buf[4096], line[1024], best[1024];
	size_t ll = 0, bestlen = 0, flen = strlen(file);
	ssize_t n;
	int fd = ct_sys_open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC, 0);

	out[0] = best[0] = 0;
	if (fd < 0)
		return;
	while ((n = ct_sys_read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			size_t mn = 0, rn = 0, tn = 0, sn = 0;
			const char *mp, *root, *dash, *fs, *src;

			if (buf[i] != '\n') {
				if (ll < sizeof line - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			ll = 0;
			mp = mi_field(line, 4, &mn);
			root = mi_field(line, 3, &rn);
			dash = strstr(line, " - ");
			if (!mp || !root || !dash)
				continue;
			/* the mount point must be a prefix of the file at a '/' */
			if (mn > flen || memcmp(mp, file, mn) ||
			    !(mn == 1 || file[mn] == '/' || file[mn] == 0) || mn < bestlen)
				continue;
			fs = mi_field(dash + 3, 0, &tn);
			src = mi_field(dash + 3, 1, &sn);
			if (!fs || !src)
				continue;
			bestlen = mn;
			if ((size_t)snprintf(best, sizeof best, "%.*s %.*s %.*s %.*s", (int)mn, mp, (int)rn,
					     root, (int)tn, fs, (int)sn, src) >= sizeof best)
				best[0] = 0;
		}
	}
	ct_sys_close(fd);
	if (best[0] && strlen(best) < cap)
		memcpy(out, best, strlen(best) + 1);
}

/* ---- /etc/ld.so.cache ------------------------------------------------------------------ */
/*
 * glibc's cache (sysdeps/generic/dl-cache.h; the same reading as doctor's
 * ct_ldcache_lookup, tracer/doctor/machine_libs.c): an optional old-format
 * part ("ld.so-1.7.0", 12-byte entries), then "glibc-ld.so.cache1.1", a
 * 48-byte header with nlibs at +20 and 24-byte entries {flags, key, value,
 * osversion, hwcap}; key and value are offsets from that header.
 */
static bool flags_match(int32_t flags)
{
#if defined(__x86_64__) && defined(__LP64__)
	return (flags & 0xff00) == 0x0300;
#elif defined(__aarch64__)
	return (flags & 0xff00) == 0x0a00;
#else
	(void)flags;
	return true;
#endif
}

static void ldcache_lookup(char *out, size_t cap, size_t *len)
{
	static const char *const names[] = { "libcuda.so.1", "libcuda.so" };
	struct stat st;
	const unsigned char *m;
	size_t size, off = 0, nlibs;
	int fd = ct_sys_open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC, 0);
	uint32_t v32;

	if (fd < 0 || ct_sys_fstat(fd, &st) < 0 || st.st_size < 48 || st.st_size > (64 << 20)) {
		if (fd >= 0)
			ct_sys_close(fd);
		add_line(out, cap, len, "-", 1);
		return;
	}
	size = (size_t)st.st_size;
	/* raw system calls: the shim's own munmap hook must not see these */
	m = (const unsigned char *)syscall(SYS_mmap, NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	ct_sys_close(fd);
	if (m == MAP_FAILED || (uintptr_t)m > (uintptr_t)-4096) {
		add_line(out, cap, len, "-", 1);
		return;
	}
	if (!memcmp(m, "ld.so-1.7.0", 11)) {
		memcpy(&v32, m + 12, 4);
		off = (16 + (size_t)v32 * 12 + 7) & ~(size_t)7;
	}
	if (off + 48 > size || memcmp(m + off, "glibc-ld.so.cache1.1", 20)) {
		syscall(SYS_munmap, m, size);
		add_line(out, cap, len, "-", 1);
		return;
	}
	memcpy(&v32, m + off + 20, 4);
	nlibs = v32;
	if (nlibs > (size - off - 48) / 24)
		nlibs = 0;
	for (int k = 0; k < 2; k++) {
		char item[600];
		size_t nl = strlen(names[k]);
		int il = snprintf(item, sizeof item, "%s=", names[k]);

		for (size_t i = 0; i < nlibs; i++) {
			const unsigned char *e = m + off + 48 + i * 24;
			int32_t flags;
			uint32_t key, value;
			memcpy(&flags, e, 4);
			memcpy(&key, e + 4, 4);
			memcpy(&value, e + 8, 4);
			if (off + key + nl + 1 > size || off + value >= size || !flags_match(flags) ||
			    memcmp(m + off + key, names[k], nl + 1))
				continue;
			const char *v = (const char *)m + off + value;
			size_t vn = strnlen(v, size - off - value);
			if (vn < sizeof item - (size_t)il - 1) {
				memcpy(item + il, v, vn);
				il += (int)vn;
			}
			break;
		}
		add_line(out, cap, len, item, (size_t)il);
	}
	syscall(SYS_munmap, m, size);
}

/* ---- ld.so.conf.d drop-ins (for the context) ------------------------------------------ */
struct ct_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* "00-compat-1.conf=/usr/local/cuda/compat\n00-nvcr-2.conf=/x" of the toolkit's drop-ins */
int ct_ldconf_dropins(char *out, size_t cap)
{
	_Alignas(8) char buf[4096];
	size_t len = 0;
	long n;
	int fd = ct_sys_open("/etc/ld.so.conf.d", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);

	out[0] = 0;
	if (fd < 0)
		return 0;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (long i = 0; i < n;) {
			struct ct_dirent64 *de = (struct ct_dirent64 *)(buf + i);
			const char *name = de->d_name;
			i += de->d_reclen;
			if (strncmp(name, "00-compat-", 10) && strncmp(name, "00-nvcr-", 8))
				continue;
			char path[320], text[512], item[400];
			const char *dir = "";
			size_t dn = 0;
			if ((size_t)snprintf(path, sizeof path, "/etc/ld.so.conf.d/%s", name) >= sizeof path)
				continue;
			if (ct_read_file(path, text, sizeof text) > 0) {
				for (char *l = text; *l; l += strcspn(l, "\n"), l += *l == '\n') {
					l += strspn(l, " \t");
					if (*l == '/') {
						dir = l;
						dn = strcspn(l, " \t\r\n");
						break;
					}
				}
			}
			int il = snprintf(item, sizeof item, "%s=%.*s", name, (int)dn, dir);
			if (il > 0 && (size_t)il < sizeof item)
				add_line(out, cap, &len, item, (size_t)il);
		}
	}
	ct_sys_close(fd);
	return (int)len;
}

/* ---- the note ------------------------------------------------------------------------- */
void ct_snapshot(void)
{
	char maps[3072], cuda[1024], mount[1200], cache[1300];
	size_t ml = 0, cl = 0;
	struct ct_w w;
	int saved = errno;

	if (__atomic_load_n(&snap_done, __ATOMIC_RELAXED) || !ct_tracing() ||
	    __atomic_exchange_n(&snap_done, 1, __ATOMIC_ACQ_REL))
		return;
	ct_busy++;
	maps[0] = cache[0] = 0;
	scan_maps(maps, sizeof maps, &ml, cuda, sizeof cuda);
	mount[0] = 0;
	if (cuda[0]) {
		size_t n = strlen(cuda);
		if (n > 10 && !strcmp(cuda + n - 10, " (deleted)"))
			cuda[n - 10] = 0;
		find_mount(cuda, mount, sizeof mount);
	}
	ldcache_lookup(cache, sizeof cache, &cl);
	if (ct_w_begin(&w, CT_REC_NOTE, CT_CALL_cutrace_note,
		       ct_strsz("process snapshot", 64) + ct_strsz(maps, sizeof maps) +
			       (mount[0] ? ct_strsz(mount, sizeof mount) : 0) + ct_strsz(cache, sizeof cache),
		       0)) {
		ct_w_str(&w, CT_FLD_TEXT, "process snapshot", 64);
		ct_w_str(&w, CT_FLD_MAPLIBS, maps, sizeof maps);
		if (mount[0])
			ct_w_str(&w, CT_FLD_MOUNT, mount, sizeof mount);
		ct_w_str(&w, CT_FLD_LDCACHE, cache, sizeof cache);
		ct_w_commit(&w);
	}
	ct_busy--;
	errno = saved;
}
