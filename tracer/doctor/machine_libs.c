/*
 * Which libcuda.so.1 / libnvidia-ml.so.1 the dynamic loader would load, the
 * libcudart copies on the machine, and the driver/runtime contract.
 *
 * The search emulates glibc's ld.so for a dlopen of a bare name from a
 * library without RPATH/RUNPATH (how libcudart loads libcuda.so.1):
 * LD_LIBRARY_PATH, then /etc/ld.so.cache, then the built-in system
 * directories.  During that search ld.so passes over files of the wrong ELF
 * class or machine and files it cannot open, but a file that is not ELF at
 * all ("invalid ELF header") ends the search with an error (elf/dl-load.c
 * open_verify: close_and_out vs. lose).  Not emulated: glibc-hwcaps
 * subdirectories, the caller's RPATH/RUNPATH, secure-exec mode.
 */
#define _GNU_SOURCE
#include "machine_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- ld.so.cache ------------------------------------------------------ */

/*
 * Format (glibc sysdeps/generic/dl-cache.h, new format, native byte
 * order): a 48-byte header {"glibc-ld.so.cache" "1.1", uint32 nlibs,
 * uint32 len_strings, uint8 flags, 3 pad, uint32 extension_offset,
 * 3 x uint32 unused}, then nlibs 24-byte entries {int32 flags, uint32 key,
 * uint32 value, uint32 osversion, uint64 hwcap}; key and value are offsets
 * of NUL-terminated strings from the start of that header.  An old-format
 * cache ("ld.so-1.7.0", 12-byte entries) may precede it; the new part then
 * starts at the 8-aligned end of the old one.
 */
#define CT_CACHE_MAGIC     "glibc-ld.so.cache1.1"
#define CT_CACHE_OLD_MAGIC "ld.so-1.7.0"
#define CT_CACHE_HDR       48u
#define CT_CACHE_ENTRY     24u
#define CT_CACHE_OLD_ENTRY 12u
#define CT_CACHE_MAX       (64u << 20)

/* entry flags: FLAG_TYPE_MASK 0x00ff (3 = FLAG_ELF_LIBC6), FLAG_REQUIRED_MASK
 * 0xff00: 0x0300 FLAG_X8664_LIB64, 0x0a00 FLAG_AARCH64_LIB64, 0 = none
 * (i386 and other 32-bit libraries on a biarch system) */
static int32_t host_cache_abi(void)
{
#if defined(__x86_64__) && defined(__LP64__)
	return 0x0300;
#elif defined(__aarch64__)
	return 0x0a00;
#else
	return -1;            /* unknown: accept every entry */
#endif
}

bool ct_ldcache_flags_match(int32_t flags)
{
	int32_t abi = host_cache_abi();
	return abi < 0 || (flags & 0xff00) == abi;
}

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

int ct_ldcache_lookup(const char *path, const char *name, bool prefix, ct_ldcache_cb cb, void *arg)
{
	struct stat st;
	unsigned char *buf;
	size_t off = 0, nlibs, size;
	size_t nl = strlen(name);
	int fd, matched = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)CT_CACHE_HDR || st.st_size > (off_t)CT_CACHE_MAX) {
		close(fd);
		return -1;
	}
	size = (size_t)st.st_size;
	buf = malloc(size + 1);
	if (!buf || pread(fd, buf, size, 0) != (ssize_t)size) {
		free(buf);
		close(fd);
		return -1;
	}
	close(fd);
	buf[size] = 0;   /* every string read below ends inside the buffer */
	if (!memcmp(buf, CT_CACHE_OLD_MAGIC, strlen(CT_CACHE_OLD_MAGIC))) {
		size_t old_n = rd32(buf + 12);
		off = (16 + old_n * CT_CACHE_OLD_ENTRY + 7) & ~(size_t)7;
	}
	if (off + CT_CACHE_HDR > size || memcmp(buf + off, CT_CACHE_MAGIC, strlen(CT_CACHE_MAGIC))) {
		free(buf);
		return -1;
	}
	nlibs = rd32(buf + off + 20);
	if (nlibs > (size - off - CT_CACHE_HDR) / CT_CACHE_ENTRY) {
		free(buf);
		return -1;
	}
	for (size_t i = 0; i < nlibs; i++) {
		const unsigned char *e = buf + off + CT_CACHE_HDR + i * CT_CACHE_ENTRY;
		int32_t flags = (int32_t)rd32(e);
		size_t key = rd32(e + 4), value = rd32(e + 8);
		const char *k, *v;

		if (off + key >= size || off + value >= size)
			continue;
		k = (const char *)buf + off + key;
		v = (const char *)buf + off + value;
		if (prefix ? strncmp(k, name, nl) : strcmp(k, name))
			continue;
		matched++;
		if (cb)
			cb(k, v, flags, arg);
	}
	free(buf);
	return matched;
}

/* ---- search places ---------------------------------------------------- */

#if defined(__aarch64__)
#define CT_TRIPLET "aarch64-linux-gnu"
#else
#define CT_TRIPLET "x86_64-linux-gnu"
#endif

/* glibc's built-in system directories: Debian/Ubuntu multiarch ones, then
 * the Fedora/RHEL lib64 ones, then the plain ones */
static const char *const default_system_dirs[] = {
	"/lib/" CT_TRIPLET, "/usr/lib/" CT_TRIPLET, "/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL,
};

/* places driver libraries live without being on the search path: the
 * container toolkit's mount point, cuda-compat, toolkit stubs, WSL, the GPU
 * operator's driver root, Debian's alternatives dir, 32-bit multilib */
static const char *const default_off_path[] = {
	"/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/local/cuda/compat",
	"/usr/local/cuda-*/compat", "/usr/local/cuda/lib64/stubs", "/usr/local/cuda-*/lib64/stubs",
	"/usr/local/cuda/targets/*/lib/stubs", "/usr/local/cuda-*/targets/*/lib/stubs",
	"/usr/lib/wsl/lib", "/run/nvidia/driver/usr/lib64",
	"/run/nvidia/driver/usr/lib/" CT_TRIPLET, "/usr/lib/" CT_TRIPLET "/nvidia/current",
	"/usr/lib64/nvidia", "/usr/lib32", "/usr/lib/i386-linux-gnu", "/opt/conda/lib", NULL,
};

/* libcudart locations besides the loader's: toolkits and Python wheels */
static const char *const default_cudart_dirs[] = {
	"/usr/local/cuda/lib64", "/usr/local/cuda-*/lib64", "/usr/local/cuda/targets/*/lib",
	"/usr/local/cuda-*/targets/*/lib", "/usr/lib/cuda/lib64", "/opt/cuda/lib64",
	"/usr/lib/python3*/site-packages/nvidia/*/lib", "/usr/lib/python3/dist-packages/nvidia/*/lib",
	"/usr/local/lib/python3*/*-packages/nvidia/*/lib", "/usr/local/lib/python3*/*-packages/torch/lib",
	"/opt/conda/lib", "/opt/conda/lib/python3*/site-packages/nvidia/*/lib", NULL,
};

typedef void (*dir_cb)(struct ct_mctx *c, const char *logical_dir, const char *src, bool rooted,
		       void *arg);

/* expand a glob under root and call cb with each directory, root stripped */
static void each_glob(struct ct_mctx *c, const char *pattern, bool rooted, const char *src,
		      dir_cb cb, void *arg)
{
	char p[PATH_MAX];
	size_t rl = rooted ? strlen(c->root) : 0;
	glob_t g;

	if (snprintf(p, sizeof p, "%s%s", rooted ? c->root : "", pattern) >= (int)sizeof p)
		return;
	if (glob(p, GLOB_ONLYDIR, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		cb(c, g.gl_pathv[i] + rl, src, rooted, arg);
	globfree(&g);
}

static void physical(const struct ct_mctx *c, const char *logical, bool rooted, char *buf, size_t len)
{
	if (snprintf(buf, len, "%s%s", rooted ? c->root : "", logical) >= (int)len)
		buf[0] = 0;    /* too long to exist */
}

/* ---- the loader search ------------------------------------------------ */

struct search_arg {
	struct ct_mctx *c;
	struct ct_libsearch *s;
	bool cache_taken;        /* ld.so uses the first compatible cache entry only */
};

static bool realpath_listed(const struct ct_libsearch *s, const char *phys)
{
	char rp[PATH_MAX];

	if (!realpath(phys, rp))
		return false;
	for (int i = 0; i < s->n; i++)
		if (s->c[i].elf.realpath[0] && !strcmp(s->c[i].elf.realpath, rp))
			return true;
	return false;
}

static struct ct_libcand *add_cand(struct ct_mctx *c, struct ct_libsearch *s, enum ct_cand_src src,
				   const char *logical, bool rooted)
{
	char phys[PATH_MAX];
	struct stat st, lst;
	struct ct_libcand *k;

	physical(c, logical, rooted, phys, sizeof phys);
	if (lstat(phys, &lst) < 0 || s->n >= CT_MAX_CAND)
		return NULL;
	/* the same file through another directory (merged /usr, a second
	 * LD_LIBRARY_PATH entry): ld.so would have stopped at the first */
	if (stat(phys, &st) == 0 && realpath_listed(s, phys))
		return NULL;
	k = &s->c[s->n++];
	memset(k, 0, sizeof *k);
	k->src = src;
	k->state = src == CT_SRC_OFF_PATH ? CT_CAND_OFF_PATH : CT_CAND_SHADOWED;
	ct_m_copy(k->path, sizeof k->path, logical);
	ct_elf_inspect(phys, &k->elf);
	ct_elf_classify(&k->elf, logical);
	if (S_ISLNK(lst.st_mode) && stat(phys, &st) < 0)
		snprintf(k->note, sizeof k->note, "dangling symlink: ld.so skips it");
	return k;
}

static void add_in_dir(struct ct_mctx *c, struct ct_libsearch *s, enum ct_cand_src src,
		       const char *dir, bool rooted)
{
	char logical[PATH_MAX];

	snprintf(logical, sizeof logical, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/",
		 s->name);
	add_cand(c, s, src, logical, rooted);
}

static void cache_cb(const char *key, const char *value, int32_t flags, void *arg)
{
	struct search_arg *a = arg;
	bool match = ct_ldcache_flags_match(flags);
	struct ct_libcand *k;

	(void)key;
	k = add_cand(a->c, a->s, CT_SRC_LD_CACHE, value, true);
	if (k && !match) {
		k->state = CT_CAND_SKIPPED;
		snprintf(k->note, sizeof k->note, "cache entry for another ABI (flags 0x%04x): not used",
			 (unsigned)flags);
	} else if (k && a->cache_taken) {
		snprintf(k->note, sizeof k->note, "later cache entry: ld.so uses only the first");
	}
	a->cache_taken = a->cache_taken || match;
}

static void cache_path(const struct ct_mctx *c, char *buf, size_t len)
{
	if (c->o->ld_cache)
		ct_m_copy(buf, len, c->o->ld_cache);
	else
		ct_m_path(c, buf, len, "/etc/ld.so.cache");
}

static void off_path_cb(struct ct_mctx *c, const char *dir, const char *src, bool rooted, void *arg)
{
	(void)src;
	add_in_dir(c, arg, CT_SRC_OFF_PATH, dir, rooted);
}

/* Decide what ld.so does with each on-path candidate, in order. */
static void evaluate(struct ct_libsearch *s)
{
	s->chosen = s->fatal = -1;
	for (int i = 0; i < s->n; i++) {
		struct ct_libcand *k = &s->c[i];

		if (k->state == CT_CAND_OFF_PATH || k->state == CT_CAND_SKIPPED)
			continue;
		if (s->chosen >= 0 || s->fatal >= 0) {
			k->state = CT_CAND_SHADOWED;
			if (!k->note[0])
				snprintf(k->note, sizeof k->note, "after the one ld.so loads");
			continue;
		}
		if (k->note[0] && !strncmp(k->note, "later cache", 11)) {
			k->state = CT_CAND_SHADOWED;
		} else if (!k->elf.ok) {
			/* unopenable files are passed over; a readable non-ELF
			 * file aborts the dlopen */
			if (!strncmp(k->elf.error, "cannot", 6) || k->note[0]) {
				k->state = CT_CAND_SKIPPED;
				if (!k->note[0])
					snprintf(k->note, sizeof k->note, "%s: ld.so skips it", k->elf.error);
			} else {
				k->state = CT_CAND_FATAL;
				snprintf(k->note, sizeof k->note, "dlopen fails here: %s", k->elf.error);
				s->fatal = i;
			}
		} else if (k->elf.flags & (CT_ELF_WRONG_CLASS | CT_ELF_WRONG_MACHINE)) {
			k->state = CT_CAND_SKIPPED;
			snprintf(k->note, sizeof k->note, "%s (%d-bit %s): ld.so skips it; loading this path "
				 "explicitly fails", k->elf.flags & CT_ELF_WRONG_CLASS ? "wrong ELF class"
				 : "wrong machine", k->elf.elf_class, k->elf.machine_name);
		} else {
			k->state = CT_CAND_CHOSEN;
			s->chosen = i;
		}
	}
}

static void search_lib(struct ct_mctx *c, struct ct_libsearch *s, const char *name)
{
	const char *ldlp = ct_m_env(c, "LD_LIBRARY_PATH");
	const char *const *sys = c->o->system_dirs ? c->o->system_dirs : default_system_dirs;
	const char *const *off = c->o->off_path_dirs ? c->o->off_path_dirs : default_off_path;
	struct search_arg a = { c, s, false };
	char cp[PATH_MAX];

	memset(s, 0, sizeof *s);
	ct_m_copy(s->name, sizeof s->name, name);
	if (ldlp && *ldlp) {
		const char *p = ldlp;
		while (1) {
			size_t n = strcspn(p, ":;");
			char dir[PATH_MAX];
			snprintf(dir, sizeof dir, "%.*s", (int)n, p);
			add_in_dir(c, s, CT_SRC_LD_LIBRARY_PATH, n ? dir : ".", false);
			if (!p[n])
				break;
			p += n + 1;
		}
	}
	cache_path(c, cp, sizeof cp);
	if (cp[0])
		ct_ldcache_lookup(cp, name, false, cache_cb, &a);
	for (int i = 0; sys[i]; i++)
		add_in_dir(c, s, CT_SRC_SYSTEM_DIR, sys[i], true);
	evaluate(s);
	for (int i = 0; off[i]; i++)
		each_glob(c, off[i], true, NULL, off_path_cb, s);
	for (int i = 0; i < 2; i++) {
		const char *h = ct_m_env(c, i ? "CUDA_PATH" : "CUDA_HOME");
		char d[PATH_MAX];
		if (!h || !*h)
			continue;
		snprintf(d, sizeof d, "%s/compat", h);
		add_in_dir(c, s, CT_SRC_OFF_PATH, d, false);
		snprintf(d, sizeof d, "%s/lib64/stubs", h);
		add_in_dir(c, s, CT_SRC_OFF_PATH, d, false);
	}
}

static const struct ct_libcand *chosen(const struct ct_libsearch *s)
{
	return s->chosen >= 0 ? &s->c[s->chosen] : NULL;
}

static const struct ct_libcand *best_off_path(const struct ct_libsearch *s)
{
	for (int i = 0; i < s->n; i++) {
		const struct ct_libcand *k = &s->c[i];
		if (k->state == CT_CAND_OFF_PATH && k->elf.ok &&
		    !(k->elf.flags & (CT_ELF_STUB | CT_ELF_WRONG_CLASS | CT_ELF_WRONG_MACHINE)))
			return k;
	}
	return NULL;
}

static void dir_of(const char *path, char *buf, size_t len)
{
	const char *s = strrchr(path, '/');
	snprintf(buf, len, "%.*s", s ? (int)(s - path) : 1, s ? path : ".");
}

static void check_libcuda(struct ct_mctx *c)
{
	struct ct_libsearch *s = &c->r->cuda;
	const struct ct_libcand *k = chosen(s), *off = best_off_path(s);
	struct ct_finding *f;
	char d[PATH_MAX];

	for (int i = 0; i < s->n; i++) {
		const struct ct_libcand *x = &s->c[i];
		if (x->state == CT_CAND_SKIPPED && x->elf.ok &&
		    (x->elf.flags & (CT_ELF_WRONG_CLASS | CT_ELF_WRONG_MACHINE)))
			ct_m_add(c, CT_SEC_LIBS, CT_SEV_INFO, CT_LAYER_LOADER,
				 "%s is %d-bit %s: ld.so skips it, but a program that loads that "
				 "path explicitly fails (\"wrong ELF class\", failure catalog B.15)",
				 x->path, x->elf.elf_class, x->elf.machine_name);
	}
	if (s->fatal >= 0) {
		const struct ct_libcand *x = &s->c[s->fatal];
		f = ct_m_add(c, CT_SEC_LIBS, CT_SEV_PROBLEM, CT_LAYER_LOADER,
			     "dlopen(\"libcuda.so.1\") fails: %s (%s) is %s", x->path,
			     ct_cand_src_name(x->src), x->elf.error);
		ct_m_fix(f, "remove or replace %s", x->path);
		return;
	}
	if (!k) {
		f = ct_m_add(c, CT_SEC_LIBS, CT_SEV_PROBLEM, CT_LAYER_LOADER,
			     "libcuda.so.1 is not on the loader's search path: the CUDA runtime "
			     "returns 35 (cudaErrorInsufficientDriver) although no driver version "
			     "was even checked");
		if (off) {
			dir_of(off->path, d, sizeof d);
			ct_m_fix(f, "a usable one is at %s: add %s to LD_LIBRARY_PATH, or to "
				    "/etc/ld.so.conf.d/ and run ldconfig", off->path, d);
		} else {
			ct_m_fix(f, "install the NVIDIA driver (its user-mode part provides "
				    "libcuda.so.1); in a container start it with GPUs (--gpus all "
				    "or CDI), which mounts the host's libcuda");
		}
		return;
	}
	if (k->elf.flags & CT_ELF_STUB) {
		f = ct_m_add(c, CT_SEC_LIBS, CT_SEV_PROBLEM, CT_LAYER_LOADER,
			     "libcuda.so.1 resolves to the toolkit stub %s (%s; via %s): cuInit "
			     "returns 34 (CUDA_ERROR_STUB_LIBRARY)", k->path, k->elf.why_stub,
			     ct_cand_src_name(k->src));
		dir_of(k->path, d, sizeof d);
		ct_m_fix(f, "%s %s (stubs are for linking only)",
			 k->src == CT_SRC_LD_LIBRARY_PATH ? "remove from LD_LIBRARY_PATH:" : "delete",
			 k->src == CT_SRC_LD_LIBRARY_PATH ? d : k->path);
		return;
	}
	if (!k->elf.has_cuInit) {
		f = ct_m_add(c, CT_SEC_LIBS, CT_SEV_PROBLEM, CT_LAYER_LOADER,
			     "%s defines no cuInit: it is not a CUDA driver library", k->path);
		ct_m_fix(f, "remove it from the search path");
		return;
	}
	ct_m_add(c, CT_SEC_LIBS, k->elf.flags & CT_ELF_COMPAT ? CT_SEV_INFO : CT_SEV_OK, CT_LAYER_LOADER,
		 "libcuda.so.1 -> %s%s%s (%s%s, via %s)%s", k->path,
		 k->elf.realpath[0] && strcmp(k->elf.realpath, k->path) ? " = " : "",
		 k->elf.realpath[0] && strcmp(k->elf.realpath, k->path) ? k->elf.realpath : "",
		 k->elf.version[0] ? "driver " : "version unknown", k->elf.version,
		 ct_cand_src_name(k->src),
		 k->elf.flags & CT_ELF_COMPAT ? ": a cuda-compat forward-compatibility copy" : "");
}

static void check_other_libs(struct ct_mctx *c)
{
	const struct ct_libcand *dev = chosen(&c->r->cuda_dev), *ml = chosen(&c->r->nvml);
	struct ct_finding *f;

	if (dev && (dev->elf.flags & CT_ELF_STUB)) {
		f = ct_m_add(c, CT_SEC_LIBS, CT_SEV_WARN, CT_LAYER_LOADER,
			     "libcuda.so (the unversioned name numba and some builds dlopen) resolves "
			     "to the stub %s: those programs get 34", dev->path);
		ct_m_fix(f, "take the stubs directory off LD_LIBRARY_PATH; the driver's libcuda.so "
			    "symlink should win");
	}
	if (!ml) {
		bool any = chosen(&c->r->cuda) || c->r->kmod.proc_present;
		f = ct_m_add(c, CT_SEC_LIBS, any ? CT_SEV_WARN : CT_SEV_INFO, CT_LAYER_LOADER,
			     "libnvidia-ml.so.1 (NVML) is not on the search path: nvidia-smi and "
			     "NVML-based checks fail (CUDA itself does not need it)");
		ct_m_fix(f, "it comes with the driver (container: NVIDIA_DRIVER_CAPABILITIES "
			    "must include utility)");
	} else if (ml->elf.flags & CT_ELF_STUB) {
		ct_m_add(c, CT_SEC_LIBS, CT_SEV_WARN, CT_LAYER_LOADER,
			 "libnvidia-ml.so.1 resolves to the toolkit stub %s", ml->path);
	} else {
		ct_m_add(c, CT_SEC_LIBS, CT_SEV_OK, CT_LAYER_LOADER, "libnvidia-ml.so.1 -> %s (%s)",
			 ml->path, ml->elf.version[0] ? ml->elf.version : "version unknown");
	}
}

/* ---- libcudart -------------------------------------------------------- */

static bool cudart_listed(const struct ct_machine_report *r, const char *rp)
{
	for (int i = 0; i < r->n_cudart; i++)
		if (!strcmp(r->cudart[i].elf.realpath, rp))
			return true;
	return false;
}

/* "nvidia_cuda_runtime_cu12-12.4.127.dist-info" -> "12.4.127" */
static bool dist_info_version(const char *name, char *out, size_t len)
{
	const char *dash = strchr(name, '-'), *end = strstr(name, ".dist-info");

	if (strncmp(name, "nvidia_cuda_runtime", 19) || !dash || !end || end <= dash + 1)
		return false;
	snprintf(out, len, "%.*s", (int)(end - dash - 1), dash + 1);
	return true;
}

static bool hint_dist_info(const char *pattern, char *out, size_t len)
{
	glob_t g;
	bool ok = false;

	if (glob(pattern, GLOB_ONLYDIR, NULL, &g) != 0)
		return false;
	for (size_t i = 0; i < g.gl_pathc && !ok; i++) {
		const char *b = strrchr(g.gl_pathv[i], '/');
		ok = dist_info_version(b ? b + 1 : g.gl_pathv[i], out, len);
	}
	globfree(&g);
	return ok;
}

static bool read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

/* The SONAME carries only the major (libcudart.so.13); the toolkit or wheel
 * it came with says the rest.  Tried in order: the toolkit's version.json,
 * a pip/toolkit dist-info directory, CUDART_VERSION in the toolkit's
 * cuda_runtime_api.h (line ~139 of 13.0's). */
static void cudart_version_hint(struct ct_cudart *k)
{
	char dir[PATH_MAX], p[PATH_MAX + 64], v[32];
	static char buf[65536];
	const char *s;
	int major = k->cuda_version / 1000;

	dir_of(k->elf.realpath[0] ? k->elf.realpath : k->elf.path, dir, sizeof dir);
	snprintf(p, sizeof p, "%s/../version.json", dir);
	if (read_small(p, buf, sizeof buf) && (s = strstr(buf, "\"cuda_cudart\"")) &&
	    (s = strstr(s, "\"version\"")) && (s = strchr(s + 9, '"')) &&
	    ct_cuda_version_parse(s + 1) / 1000 == major) {
		k->cuda_version = ct_cuda_version_parse(s + 1);
		snprintf(k->version_from, sizeof k->version_from, "toolkit version.json");
		k->version_exact = true;
		return;
	}
	snprintf(p, sizeof p, "%s/../dist-info/nvidia_cuda_runtime*.dist-info", dir);
	if (!hint_dist_info(p, v, sizeof v)) {
		snprintf(p, sizeof p, "%s/../../../nvidia_cuda_runtime*.dist-info", dir);
		if (!hint_dist_info(p, v, sizeof v))
			v[0] = 0;
	}
	if (v[0] && ct_cuda_version_parse(v) / 1000 == major) {
		k->cuda_version = ct_cuda_version_parse(v);
		snprintf(k->version_from, sizeof k->version_from, "dist-info %s", v);
		k->version_exact = true;
		return;
	}
	snprintf(p, sizeof p, "%s/../include/cuda_runtime_api.h", dir);
	if (read_small(p, buf, sizeof buf) && (s = strstr(buf, "#define CUDART_VERSION"))) {
		int cv = (int)strtol(s + 22, NULL, 10);
		if (cv / 1000 == major) {
			k->cuda_version = cv;
			snprintf(k->version_from, sizeof k->version_from, "include/cuda_runtime_api.h");
			k->version_exact = true;
		}
	}
}

static void add_cudart(struct ct_mctx *c, const char *logical, const char *src, bool rooted,
		       bool visible)
{
	struct ct_machine_report *r = c->r;
	char phys[PATH_MAX], rp[PATH_MAX];
	struct ct_cudart *k;

	physical(c, logical, rooted, phys, sizeof phys);
	if (!realpath(phys, rp) || cudart_listed(r, rp) || r->n_cudart >= CT_MAX_CUDART)
		return;
	k = &r->cudart[r->n_cudart++];
	memset(k, 0, sizeof *k);
	ct_m_copy(k->path, sizeof k->path, logical);
	k->src = src;
	k->loader_visible = visible;
	ct_elf_inspect(phys, &k->elf);
	ct_elf_classify(&k->elf, logical);
	if (!k->elf.ok)
		return;
	k->cuda_version = ct_cuda_version_parse(k->elf.version);
	k->version_exact = strchr(k->elf.version, '.') != NULL;
	snprintf(k->version_from, sizeof k->version_from, "%s", k->elf.version_from ? k->elf.version_from : "");
	if (!k->version_exact && k->cuda_version)
		cudart_version_hint(k);
}

/* libcudart.so, libcudart.so.13, libcudart.so.13.0.96, libcudart-1a2b3c4d.so.11.0
 * (torch's vendored copy); not libcudart_static.a */
static bool cudart_name(const char *n)
{
	return !strncmp(n, "libcudart", 9) && (n[9] == '.' || n[9] == '-') && strstr(n, ".so");
}

struct cudart_arg {
	bool visible;
};

static void cudart_dir_cb(struct ct_mctx *c, const char *dir, const char *src, bool rooted, void *arg)
{
	struct cudart_arg *a = arg;
	char phys[PATH_MAX], **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	physical(c, dir, rooted, phys, sizeof phys);
	d = opendir(phys);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!cudart_name(de->d_name))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 8) * sizeof *names);
			if (!nn)
				break;
			names = nn;
		}
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	/* longest name first: the fully versioned file is listed under its
	 * own name, its symlinks then dedupe onto it */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strlen(names[j]) > strlen(names[i])) {
				char *t = names[i];
				names[i] = names[j];
				names[j] = t;
			}
	for (size_t i = 0; i < n; i++) {
		char logical[PATH_MAX];
		if (names[i]) {
			snprintf(logical, sizeof logical, "%s/%s", dir, names[i]);
			add_cudart(c, logical, src, rooted, a->visible);
		}
		free(names[i]);
	}
	free(names);
}

static void cudart_cache_cb(const char *key, const char *value, int32_t flags, void *arg)
{
	struct ct_mctx *c = arg;
	(void)key;
	if (ct_ldcache_flags_match(flags))
		add_cudart(c, value, "ld.so.cache", true, true);
}

/* site-packages of the python3 on PATH (pip wheels: nvidia/cuda_runtime/lib) */
static void python_dirs(struct ct_mctx *c, struct cudart_arg *a)
{
	static const char cmd[] =
		"python3 -c 'import site,sys; print(\"\\n\".join(site.getsitepackages()"
		"+[site.getusersitepackages()]))' 2>/dev/null </dev/null";
	char line[PATH_MAX];
	FILE *p;

	if (c->o->no_python || c->root[0])
		return;
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof line, p)) {
		char pat[PATH_MAX + 32];
		ct_m_chomp(line);
		if (!line[0])
			continue;
		snprintf(pat, sizeof pat, "%s/nvidia/*/lib", line);
		each_glob(c, pat, false, "python", cudart_dir_cb, a);
		snprintf(pat, sizeof pat, "%s/torch/lib", line);
		each_glob(c, pat, false, "python", cudart_dir_cb, a);
		/* auditwheel-vendored copies: torchvision.libs/libcudart.<hash>.so.13 */
		snprintf(pat, sizeof pat, "%s/*.libs", line);
		each_glob(c, pat, false, "python", cudart_dir_cb, a);
	}
	pclose(p);
}

static void collect_cudart(struct ct_mctx *c)
{
	const char *ldlp = ct_m_env(c, "LD_LIBRARY_PATH");
	const char *const *sys = c->o->system_dirs ? c->o->system_dirs : default_system_dirs;
	const char *const *extra = c->o->cudart_dirs ? c->o->cudart_dirs : default_cudart_dirs;
	struct cudart_arg vis = { true }, hid = { false };
	char cp[PATH_MAX];
	static const char *const env_dirs[][2] = {
		{ "CUDA_HOME", "/lib64" }, { "CUDA_PATH", "/lib64" }, { "CONDA_PREFIX", "/lib" },
		{ "CONDA_PREFIX", "/lib/python3*/site-packages/nvidia/*/lib" },
		{ "VIRTUAL_ENV", "/lib/python3*/site-packages/nvidia/*/lib" },
		{ "VIRTUAL_ENV", "/lib/python3*/site-packages/torch/lib" },
	};

	if (ldlp && *ldlp) {
		const char *p = ldlp;
		while (1) {
			size_t n = strcspn(p, ":;");
			char dir[PATH_MAX];
			snprintf(dir, sizeof dir, "%.*s", (int)n, p);
			if (n)
				cudart_dir_cb(c, dir, "LD_LIBRARY_PATH", false, &vis);
			if (!p[n])
				break;
			p += n + 1;
		}
	}
	cache_path(c, cp, sizeof cp);
	if (cp[0])
		ct_ldcache_lookup(cp, "libcudart", true, cudart_cache_cb, c);
	for (int i = 0; sys[i]; i++)
		cudart_dir_cb(c, sys[i], "system dir", true, &vis);
	for (size_t i = 0; i < sizeof env_dirs / sizeof env_dirs[0]; i++) {
		const char *v = ct_m_env(c, env_dirs[i][0]);
		char pat[PATH_MAX];
		if (!v || !*v)
			continue;
		snprintf(pat, sizeof pat, "%s%s", v, env_dirs[i][1]);
		each_glob(c, pat, false, env_dirs[i][0][0] == 'C' && env_dirs[i][0][1] == 'U'
			  ? "toolkit" : env_dirs[i][0][1] == 'O' ? "conda" : "python", cudart_dir_cb, &hid);
	}
	for (int i = 0; extra[i]; i++)
		each_glob(c, extra[i], true, strstr(extra[i], "python") ? "python"
			  : strstr(extra[i], "conda") ? "conda" : "toolkit", cudart_dir_cb, &hid);
	python_dirs(c, &hid);
}

void ct_m_check_libs(struct ct_mctx *c)
{
	struct ct_machine_report *r = c->r;

	search_lib(c, &r->cuda, "libcuda.so.1");
	search_lib(c, &r->cuda_dev, "libcuda.so");
	search_lib(c, &r->nvml, "libnvidia-ml.so.1");
	collect_cudart(c);
	check_libcuda(c);
	check_other_libs(c);
	if (!r->n_cudart)
		ct_m_add(c, CT_SEC_LIBS, CT_SEV_INFO, CT_LAYER_RUNTIME,
			 "no libcudart found (programs may link it statically or bring their own)");
}

/* ---- the contract ----------------------------------------------------- */

static bool consumer_gpu(const struct ct_kmod *k)
{
	for (int i = 0; i < k->gpu_count && i < CT_MAX_GPUS; i++)
		if (strstr(k->gpus[i].model, "GeForce"))
			return true;
	return false;
}

/* User-mode and kernel-mode driver must be the same build (failure catalog
 * B.1): libcuda checks with the kernel at cuInit (803 on mismatch), NVML
 * separately ("Driver/library version mismatch"). */
static void check_skew(struct ct_mctx *c, const struct ct_libcand *cu)
{
	const struct ct_kmod *k = &c->r->kmod;
	const struct ct_libcand *ml = chosen(&c->r->nvml);
	struct ct_finding *f;

	if (!k->version[0])
		return;
	if (cu && cu->elf.version[0] && strcmp(cu->elf.version, k->version)) {
		if (cu->elf.flags & CT_ELF_COMPAT) {
			int kc = ct_driver_cuda_version(k->version), cc = ct_driver_cuda_version(cu->elf.version);
			if (cc <= kc)
				ct_m_add(c, CT_SEC_CONTRACT, CT_SEV_WARN, CT_LAYER_KERNEL_HANDSHAKE,
					 "the cuda-compat libcuda %s is not newer than the kernel module %s: "
					 "it adds nothing and its version differs from the module's",
					 cu->elf.version, k->version);
		} else {
			f = ct_m_add(c, CT_SEC_CONTRACT, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE,
				     "libcuda %s (%s) does not match the kernel module %s: cuInit fails "
				     "with 803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)", cu->elf.version,
				     cu->path, k->version);
			ct_m_fix(f, "reboot after a driver upgrade (or reload the modules), or remove the "
				    "stale libcuda from the search path");
		}
	}
	if (ml && ml->elf.version[0] && strcmp(ml->elf.version, k->version) &&
	    !(ml->elf.flags & CT_ELF_STUB)) {
		f = ct_m_add(c, CT_SEC_CONTRACT, CT_SEV_WARN, CT_LAYER_KERNEL_HANDSHAKE,
			     "libnvidia-ml %s does not match the kernel module %s: NVML (nvidia-smi) "
			     "fails with 'Driver/library version mismatch'", ml->elf.version, k->version);
		ct_m_fix(f, "reboot or reload the modules so both are the same version");
	}
}

/* which runtimes a program would actually load by SONAME */
static bool first_visible_of_soname(const struct ct_machine_report *r, int idx)
{
	const struct ct_cudart *k = &r->cudart[idx];

	if (!k->loader_visible)
		return false;
	for (int i = 0; i < idx; i++)
		if (r->cudart[i].loader_visible && !strcmp(r->cudart[i].elf.soname, k->elf.soname))
			return false;
	return true;
}

static void classify_runtime(struct ct_mctx *c, int idx, int host_cuda, int compat_cuda)
{
	struct ct_machine_report *r = c->r;
	struct ct_cudart *k = &r->cudart[idx];
	enum ct_severity sev;
	struct ct_finding *f;
	char v[16];

	if (!k->elf.ok || (k->elf.flags & (CT_ELF_WRONG_CLASS | CT_ELF_WRONG_MACHINE)))
		return;
	ct_compat_classify(host_cuda, k->cuda_version, r->compat_loaded, &k->compat);
	ct_cuda_version_str(k->cuda_version, v, sizeof v);
	switch (k->compat.cls) {
	case CT_COMPAT_MISMATCH:
		sev = first_visible_of_soname(r, idx) ? CT_SEV_PROBLEM : CT_SEV_WARN;
		break;
	case CT_COMPAT_FORWARD:
		sev = consumer_gpu(&r->kmod) ? CT_SEV_WARN : CT_SEV_INFO;
		break;
	case CT_COMPAT_MINOR:
	case CT_COMPAT_UNKNOWN:
		sev = CT_SEV_INFO;
		break;
	default:
		sev = CT_SEV_OK;
	}
	f = ct_m_add(c, CT_SEC_CONTRACT, sev, CT_LAYER_RUNTIME, "%s (CUDA %s%s): %s, %s%s. %s",
		     k->path, v, k->version_exact ? "" : ".x", k->compat.name, k->compat.detail,
		     k->compat.expect_error ? " -> cudaErrorInsufficientDriver (35)" : "",
		     k->compat.rule);
	if (k->compat.fix)
		ct_m_fix(f, "%s", k->compat.fix);
	/* a compat libcuda must itself support the runtime */
	if (r->compat_loaded && compat_cuda && k->cuda_version > compat_cuda &&
	    (compat_cuda / 1000 != k->cuda_version / 1000)) {
		f = ct_m_add(c, CT_SEC_CONTRACT, CT_SEV_PROBLEM, CT_LAYER_RUNTIME,
			     "the cuda-compat libcuda supports CUDA %d.%d only, older than %s's %s: 35",
			     compat_cuda / 1000, compat_cuda % 1000 / 10, k->path, v);
		ct_m_fix(f, "install the cuda-compat package matching the runtime");
	}
}

void ct_m_check_contract(struct ct_mctx *c)
{
	struct ct_machine_report *r = c->r;
	const struct ct_libcand *cu = chosen(&r->cuda);
	int host_cuda = 0, compat_cuda = 0;
	char v[16];

	if (cu && (cu->elf.flags & CT_ELF_STUB))
		cu = NULL;
	r->compat_loaded = cu && (cu->elf.flags & CT_ELF_COMPAT);
	if (cu && !r->compat_loaded && cu->elf.version[0]) {
		ct_m_copy(r->driver_version, sizeof r->driver_version, cu->elf.version);
		r->driver_version_from = "libcuda.so.1";
	} else if (r->kmod.version[0]) {
		ct_m_copy(r->driver_version, sizeof r->driver_version, r->kmod.version);
		r->driver_version_from = "kernel module";
	}
	if (r->compat_loaded)
		compat_cuda = ct_driver_cuda_version(cu->elf.version);
	host_cuda = ct_driver_cuda_version(r->driver_version);
	r->driver_cuda_version = host_cuda;
	check_skew(c, cu);
	if (!host_cuda) {
		ct_m_add(c, CT_SEC_CONTRACT, CT_SEV_INFO, CT_LAYER_RUNTIME,
			 "no driver version to compare runtimes with (%s)",
			 r->driver_version[0] ? "version not in the table" : "no libcuda.so.1, no kernel module");
		for (int i = 0; i < r->n_cudart; i++)
			if (r->cudart[i].cuda_version)
				ct_m_add(c, CT_SEC_CONTRACT, CT_SEV_INFO, CT_LAYER_RUNTIME,
					 "runtime %s: CUDA %s%s, needs a driver supporting it", r->cudart[i].path,
					 ct_cuda_version_str(r->cudart[i].cuda_version, v, sizeof v),
					 r->cudart[i].version_exact ? "" : ".x");
		return;
	}
	ct_m_add(c, CT_SEC_CONTRACT, CT_SEV_INFO, CT_LAYER_RUNTIME,
		 "driver %s (from %s) supports CUDA up to %s%s", r->driver_version,
		 r->driver_version_from, ct_cuda_version_str(host_cuda, v, sizeof v),
		 r->compat_loaded ? "; the loaded libcuda is a cuda-compat copy" : "");
	for (int i = 0; i < r->n_cudart; i++)
		classify_runtime(c, i, host_cuda, compat_cuda);
}

const char *ct_cand_src_name(enum ct_cand_src s)
{
	static const char *const n[] = { "LD_LIBRARY_PATH", "ld.so.cache", "system dir", "off path" };
	return (unsigned)s < 4 ? n[s] : "?";
}

const char *ct_cand_state_name(enum ct_cand_state s)
{
	static const char *const n[] = { "chosen", "skipped", "fatal", "shadowed", "off-path" };
	return (unsigned)s < 5 ? n[s] : "?";
}
