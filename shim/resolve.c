/*
 * Finding the real functions behind our hooks.
 *
 * The shim exports dlsym and dlvsym itself, and a reference from inside the
 * shim to either name binds to the shim's own definition (an unversioned
 * definition satisfies even a versioned reference such as dlvsym@GLIBC_2.34:
 * measured here, it recursed forever).  So the loader's own dl* functions
 * (ct_dl) are found without calling any of them: we walk the loaded objects
 * with dl_iterate_phdr and look each name up in libc's (before glibc 2.34
 * libdl's) dynamic symbol table, default version.  The real functions the
 * hooks forward to (ct_real) are then looked up with that dlsym, RTLD_NEXT
 * from the shim and no version: the next definition in lookup order, which
 * is another interposer's when one is preloaded after the shim (HAMi-core's
 * unversioned dlopen/dlsym, the rig's fake kernel).  No shim file calls
 * dlsym/dlvsym by name: every call goes through ct_real or ct_dl (the
 * integration test shim_exports, t_shim_exports in tests/integration/itest.py,
 * enforces it).
 */
#include "shim.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct ct_real ct_real;
struct ct_dl ct_dl;

/* ---- raw system calls: never interposed, usable before resolution ------- */
int ct_sys_open(const char *path, int flags, int mode)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int ct_sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

ssize_t ct_sys_read(int fd, void *buf, size_t n)
{
	return syscall(SYS_read, fd, buf, n);
}

ssize_t ct_sys_write(int fd, const void *buf, size_t n)
{
	return syscall(SYS_write, fd, buf, n);
}

pid_t ct_sys_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* x86_64 and aarch64 have newfstatat, whose struct stat is glibc's */
int ct_sys_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
#ifdef SYS_newfstatat
	return (int)syscall(SYS_newfstatat, dirfd, path, st, flags);
#else
	return (int)syscall(SYS_fstatat64, dirfd, path, st, flags);
#endif
}

int ct_sys_fstat(int fd, struct stat *st)
{
	return ct_sys_fstatat(fd, "", st, AT_EMPTY_PATH);
}

/* The texts glibc's strerror gives in the C locale (string/errlist.h of
 * glibc; Linux errno numbers from asm-generic/errno-base.h and errno.h), for
 * the errors the shim can meet or inject; others read "Unknown error N" as
 * glibc prints them. */
const char *ct_errno_text(int e)
{
	static CT_TLS char unknown[32];

	switch (e) {
	case EPERM: return "Operation not permitted";
	case ENOENT: return "No such file or directory";
	case ESRCH: return "No such process";
	case EINTR: return "Interrupted system call";
	case EIO: return "Input/output error";
	case ENXIO: return "No such device or address";
	case E2BIG: return "Argument list too long";
	case ENOEXEC: return "Exec format error";
	case EBADF: return "Bad file descriptor";
	case ECHILD: return "No child processes";
	case EAGAIN: return "Resource temporarily unavailable";
	case ENOMEM: return "Cannot allocate memory";
	case EACCES: return "Permission denied";
	case EFAULT: return "Bad address";
	case EBUSY: return "Device or resource busy";
	case EEXIST: return "File exists";
	case EXDEV: return "Invalid cross-device link";
	case ENODEV: return "No such device";
	case ENOTDIR: return "Not a directory";
	case EISDIR: return "Is a directory";
	case EINVAL: return "Invalid argument";
	case ENFILE: return "Too many open files in system";
	case EMFILE: return "Too many open files";
	case ENOTTY: return "Inappropriate ioctl for device";
	case ETXTBSY: return "Text file busy";
	case EFBIG: return "File too large";
	case ENOSPC: return "No space left on device";
	case ESPIPE: return "Illegal seek";
	case EROFS: return "Read-only file system";
	case EMLINK: return "Too many links";
	case EPIPE: return "Broken pipe";
	case ERANGE: return "Numerical result out of range";
	case ENAMETOOLONG: return "File name too long";
	case ENOSYS: return "Function not implemented";
	case ELOOP: return "Too many levels of symbolic links";
	case ENODATA: return "No data available";
	case ETIME: return "Timer expired";
	case EOVERFLOW: return "Value too large for defined data type";
	case ELIBBAD: return "Accessing a corrupted shared library";
	case EOPNOTSUPP: return "Operation not supported";
	case ETIMEDOUT: return "Connection timed out";
	case EDQUOT: return "Disk quota exceeded";
	case ECANCELED: return "Operation canceled";
	}
	snprintf(unknown, sizeof unknown, "Unknown error %d", e);
	return unknown;
}

ssize_t ct_read_file(const char *path, char *buf, size_t len)
{
	int fd = ct_sys_open(path, O_RDONLY | O_CLOEXEC, 0);
	size_t got = 0;

	if (fd < 0 || len == 0)
		return -1;
	while (got + 1 < len) {
		ssize_t r = ct_sys_read(fd, buf + got, len - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	ct_sys_close(fd);
	buf[got] = 0;
	return (ssize_t)got;
}

/* ---- libc's dlvsym from its ELF symbol table ----------------------------- */
static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

struct find_sym {
	const char *name;
	void *addr;
};

/* Dynamic-section pointers are relocated in memory by some loaders and not
 * by others; a value below the load base is still an offset. */
static uintptr_t dyn_ptr(uintptr_t base, uintptr_t v)
{
	return v < base ? v + base : v;
}

/* the tables of one loaded object's dynamic section */
struct dyn_tabs {
	const ElfW(Sym) * symtab;
	const char *strtab;
	const uint32_t *gnuhash, *sysvhash;
	const ElfW(Half) * versym;
	const char *verneed;
	uint32_t nverneed;
};

static void dyn_tabs(uintptr_t base, const ElfW(Dyn) * dyn, struct dyn_tabs *t)
{
	memset(t, 0, sizeof *t);
	for (; dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t v = dyn_ptr(base, dyn->d_un.d_ptr);
		switch (dyn->d_tag) {
		case DT_SYMTAB: t->symtab = (const void *)v; break;
		case DT_STRTAB: t->strtab = (const void *)v; break;
		case DT_GNU_HASH: t->gnuhash = (const void *)v; break;
		case DT_HASH: t->sysvhash = (const void *)v; break;
		case DT_VERSYM: t->versym = (const void *)v; break;
		case DT_VERNEED: t->verneed = (const void *)v; break;
		case DT_VERNEEDNUM: t->nverneed = (uint32_t)dyn->d_un.d_val; break;
		}
	}
}

static int find_in_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_sym *fs = data;
	const ElfW(Dyn) *dyn = NULL;
	struct dyn_tabs t;
	uintptr_t base = info->dlpi_addr;
	const char *n = info->dlpi_name;

	(void)size;
	if (!n || (!strstr(n, "/libc.so") && !strstr(n, "/libdl.so") &&
		   strncmp(n, "libc.so", 7) && strncmp(n, "libdl.so", 8)))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(base + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 0;
	dyn_tabs(base, dyn, &t);
	const ElfW(Sym) *symtab = t.symtab;
	const char *strtab = t.strtab;
	const uint32_t *gnuhash = t.gnuhash, *sysvhash = t.sysvhash;
	const ElfW(Half) *versym = t.versym;
	if (!symtab || !strtab)
		return 0;

	if (gnuhash) {
		uint32_t nbuckets = gnuhash[0], symoffset = gnuhash[1];
		uint32_t bloom_size = gnuhash[2];
		const ElfW(Addr) *bloom = (const void *)&gnuhash[4];
		const uint32_t *buckets = (const void *)&bloom[bloom_size];
		const uint32_t *chain = &buckets[nbuckets];
		uint32_t h = gnu_hash(fs->name);
		uint32_t idx;

		if (!nbuckets)
			return 0;
		idx = buckets[h % nbuckets];
		if (idx < symoffset)
			return 0;
		for (;; idx++) {
			uint32_t h2 = chain[idx - symoffset];
			const ElfW(Sym) *s = &symtab[idx];
			/* the default version only: hidden (old) versions have bit 15 */
			if ((h2 | 1) == (h | 1) && s->st_shndx != SHN_UNDEF &&
			    !strcmp(strtab + s->st_name, fs->name) &&
			    !(versym && (versym[idx] & 0x8000))) {
				fs->addr = (void *)(base + s->st_value);
				return 1;
			}
			if (h2 & 1)
				break;
		}
	} else if (sysvhash) {
		uint32_t nchain = sysvhash[1];
		for (uint32_t idx = 0; idx < nchain; idx++) {
			const ElfW(Sym) *s = &symtab[idx];
			if (s->st_shndx != SHN_UNDEF && s->st_name &&
			    !strcmp(strtab + s->st_name, fs->name) &&
			    !(versym && (versym[idx] & 0x8000))) {
				fs->addr = (void *)(base + s->st_value);
				return 1;
			}
		}
	}
	return 0;
}

static void *libc_symbol(const char *name)
{
	struct find_sym fs = { name, NULL };

	dl_iterate_phdr(find_in_object, &fs);
	return fs.addr;
}

static int resolve_state; /* 0 not yet, 1 running, 2 done */

/*
 * Every real function is the next definition after the shim, looked up by
 * name without a version with the loader's own dlsym (so an unversioned
 * dlopen or dlsym of an interposer preloaded after the shim is found, as
 * glibc finds it for a program that calls them; a look-up by version, e.g.
 * dlvsym(..., "GLIBC_2.34"), skips such a definition and does not exist
 * before glibc 2.34).  The loader's own functions come first, from its symbol
 * table (libc_symbol: no dl* call, so our own dlsym hook is never entered).
 */
void ct_resolve(void)
{
	int expected = 0;

	if (__atomic_load_n(&resolve_state, __ATOMIC_ACQUIRE) == 2)
		return;
	if (!__atomic_compare_exchange_n(&resolve_state, &expected, 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return; /* another thread (or we, re-entered) is resolving: hooks fall back to syscalls */

	ct_busy++;
#define D(f) ct_dl.f = (__typeof__(ct_dl.f))libc_symbol(#f)
	D(dlopen);
	D(dlmopen);
	D(dlsym);
	D(dlvsym);
	D(dlclose);
	D(dlerror);
	D(dladdr1);
	D(dlinfo);
#undef D
	if (ct_dl.dlsym) {
		ct_dl.dl_find_object = (__typeof__(ct_dl.dl_find_object))ct_dl.dlsym(RTLD_DEFAULT,
										     "_dl_find_object");
		(void)(ct_dl.dlerror ? ct_dl.dlerror() : NULL); /* before 2.35: not found, forget it */
		/* the loader hooks of common/hooks.def: the next definition, else the loader's */
#define CT_LOADER(name, rule, RET, PARAMS)                                                                   \
	{                                                                                                    \
		void *p_ = ct_dl.dlsym(RTLD_NEXT, #name);                                                    \
		ct_real.name = p_ && !ct_addr_is_ours(p_) ? (RET(*) PARAMS)p_ : ct_dl.name;                  \
	}
#include "hooks.def"
		/* the libc hooks */
#define CT_LIBC(name, rule, RET, PARAMS) ct_real.name = (RET(*) PARAMS)ct_dl.dlsym(RTLD_NEXT, #name);
#include "hooks.def"
		ct_real.fstat = (__typeof__(ct_real.fstat))ct_dl.dlsym(RTLD_NEXT, "fstat");
		(void)(ct_dl.dlerror ? ct_dl.dlerror() : NULL);
		/* glibc 2.33 kept __xstat, __xstat64 and __xmknod only as compat
		 * symbols, which a look-up without a version does not return; the
		 * old binaries that call them (libcuda 535) bind to the base version */
#if defined(__x86_64__)
#define CT_BASE_GLIBC "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define CT_BASE_GLIBC "GLIBC_2.17"
#endif
#ifdef CT_BASE_GLIBC
#define COMPAT(name)                                                                                         \
	if (!ct_real.name && ct_dl.dlvsym)                                                                   \
		ct_real.name = (__typeof__(ct_real.name))ct_dl.dlvsym(RTLD_NEXT, #name, CT_BASE_GLIBC);
		COMPAT(__xstat)
		COMPAT(__xstat64)
		COMPAT(__xmknod)
#undef COMPAT
		(void)(ct_dl.dlerror ? ct_dl.dlerror() : NULL);
#endif
	}
	ct_busy--;
	__atomic_store_n(&resolve_state, 2, __ATOMIC_RELEASE);
}

struct link_map *ct_link_map_of(const void *addr)
{
#if defined(__GLIBC_PREREQ) && __GLIBC_PREREQ(2, 35)
	struct dl_find_object fo;

	if (ct_dl.dl_find_object)
		return ct_dl.dl_find_object((void *)(uintptr_t)addr, &fo) == 0 ? fo.dlfo_link_map : NULL;
#endif
	{
		Dl_info info;
		struct link_map *lm = NULL;

		if (ct_dl.dladdr1 && ct_dl.dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP))
			return lm;
	}
	return NULL;
}

/* ---- our own address range ------------------------------------------------ */
static uintptr_t self_lo, self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t me = (uintptr_t)data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz) {
			uintptr_t a = UINTPTR_MAX, b = 0;
			for (int j = 0; j < info->dlpi_phnum; j++) {
				const ElfW(Phdr) *q = &info->dlpi_phdr[j];
				if (q->p_type != PT_LOAD)
					continue;
				if (info->dlpi_addr + q->p_vaddr < a)
					a = info->dlpi_addr + q->p_vaddr;
				if (info->dlpi_addr + q->p_vaddr + q->p_memsz > b)
					b = info->dlpi_addr + q->p_vaddr + q->p_memsz;
			}
			self_lo = a;
			self_hi = b;
			return 1;
		}
	}
	return 0;
}

bool ct_addr_is_ours(const void *addr)
{
	if (!self_hi)
		dl_iterate_phdr(find_self, (void *)(uintptr_t)&ct_addr_is_ours);
	return (uintptr_t)addr >= self_lo && (uintptr_t)addr < self_hi;
}

/* ---- next definition of a CUDA symbol -------------------------------------- */
struct find_lib {
	const char *hint;
	const char *name;
	void *addr;
};

static int find_in_lib(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_lib *fl = data;
	void *h, *p;

	(void)size;
	if (!info->dlpi_name || !*info->dlpi_name || !strstr(info->dlpi_name, fl->hint))
		return 0;
	/* RTLD_NOLOAD only takes a reference on an object that is already there */
	h = ct_dl.dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	p = ct_dl.dlsym(h, fl->name);
	ct_dl.dlclose(h);
	if (p && !ct_addr_is_ours(p)) {
		fl->addr = p;
		return 1;
	}
	return 0;
}

void *ct_resolve_next(const char *name, const char *lib_hint)
{
	void *p;

	ct_ensure_init();
	if (!ct_dl.dlsym)
		return NULL;
	p = ct_dl.dlsym(RTLD_NEXT, name);
	if (p && !ct_addr_is_ours(p))
		return p;
	if (lib_hint && ct_dl.dlopen) {
		struct find_lib fl = { lib_hint, name, NULL };
		ct_busy++;
		dl_iterate_phdr(find_in_lib, &fl);
		ct_busy--;
		return fl.addr;
	}
	return NULL;
}

/* ---- the definition a caller would have bound to ----------------------------- */
/*
 * Linked code that calls one of our runtime exports (cudaMalloc, ...) would
 * have bound, without the shim, to the first definition in its own lookup
 * scope that satisfies its reference: the global scope first (the shim is in
 * it, so: the objects after the shim), then its local scope (itself and its
 * dependencies: an extension dlopen()ed RTLD_LOCAL sees its own libcudart
 * there and nowhere else).  A reference carries the version the caller was
 * linked against (cudaMalloc@libcudart.so.13): glibc skips a definition of
 * another version (cudaMalloc@@libcudart.so.11.0 of a cudart in the global
 * scope), so the look-ups use that version.  No _dl_find_object (glibc 2.35):
 * the caller's object is found with dl_iterate_phdr, its version in its own
 * dynamic section; only on a cache miss (shim/hooks_cuda.c).
 */
struct caller_obj {
	uintptr_t ra; /* the return address into the caller */
	const char *sym;
	const char *file; /* the caller's object as the loader names it ("": the program) */
	uintptr_t lo, hi; /* its loaded span */
	const char *ver;  /* the version its reference to sym needs, NULL: none */
	bool found;
};

/* how many entries .dynsym has: DT_HASH says it, DT_GNU_HASH only through
 * the end of its last chain */
static uint32_t dynsym_count(const uint32_t *gnuhash, const uint32_t *sysvhash)
{
	if (sysvhash)
		return sysvhash[1];
	if (gnuhash) {
		uint32_t nb = gnuhash[0], off = gnuhash[1], bs = gnuhash[2], last = 0;
		const ElfW(Addr) *bloom = (const void *)&gnuhash[4];
		const uint32_t *buckets = (const void *)&bloom[bs];
		const uint32_t *chain = &buckets[nb];

		for (uint32_t b = 0; b < nb; b++)
			if (buckets[b] > last)
				last = buckets[b];
		if (last < off)
			return off;
		while (!(chain[last - off] & 1))
			last++;
		return last + 1;
	}
	return 0;
}

/* the version the object's undefined reference to sym asks for (its
 * DT_VERNEED entry), NULL for an unversioned reference or none */
static const char *needed_version(uintptr_t base, const ElfW(Dyn) * dyn, const char *sym)
{
	struct dyn_tabs t;
	uint32_t n;

	dyn_tabs(base, dyn, &t);
	const ElfW(Sym) *symtab = t.symtab;
	const char *strtab = t.strtab;
	const ElfW(Half) *versym = t.versym;
	const char *verneed = t.verneed;
	uint32_t nverneed = t.nverneed;
	if (!symtab || !strtab || !versym || !verneed)
		return NULL;
	n = dynsym_count(t.gnuhash, t.sysvhash);
	for (uint32_t i = 1; i < n; i++) {
		const ElfW(Sym) *s = &symtab[i];
		unsigned want;
		const char *vn = verneed;

		if (s->st_shndx != SHN_UNDEF || !s->st_name || strcmp(strtab + s->st_name, sym))
			continue;
		want = versym[i] & 0x7fff;
		if (want < 2)
			return NULL; /* local or global: unversioned */
		for (uint32_t k = 0; k < nverneed; k++) {
			const ElfW(Verneed) *need = (const void *)vn;
			const char *ax = vn + need->vn_aux;
			for (unsigned j = 0; j < need->vn_cnt; j++) {
				const ElfW(Vernaux) *aux = (const void *)ax;
				if (aux->vna_other == want)
					return strtab + aux->vna_name;
				ax += aux->vna_next;
			}
			vn += need->vn_next;
		}
		return NULL;
	}
	return NULL;
}

static int find_caller(struct dl_phdr_info *info, size_t size, void *data)
{
	struct caller_obj *co = data;
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	bool in = false;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)a;
		if (ph->p_type != PT_LOAD)
			continue;
		if (co->ra >= a && co->ra < a + ph->p_memsz)
			in = true;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (!in)
		return 0;
	co->found = true;
	co->file = info->dlpi_name ? info->dlpi_name : "";
	co->lo = lo;
	co->hi = hi;
	co->ver = dyn ? needed_version(info->dlpi_addr, dyn, co->sym) : NULL;
	return 1;
}

static void *sym_ver(void *h, const char *name, const char *ver)
{
	void *p = ver && ct_dl.dlvsym ? ct_dl.dlvsym(h, name, ver) : ct_dl.dlsym(h, name);

	return p && !ct_addr_is_ours(p) ? p : NULL;
}

void *ct_resolve_for_caller(const char *name, const char *lib_hint, const void *ra, uintptr_t *lo,
			    uintptr_t *hi)
{
	struct caller_obj co = { (uintptr_t)ra, name, NULL, 0, 0, NULL, false };
	void *p = NULL;

	ct_ensure_init();
	*lo = *hi = 0;
	if (!ct_dl.dlsym || !ra || ct_addr_is_ours(ra))
		return ct_resolve_next(name, lib_hint);
	ct_busy++;
	dl_iterate_phdr(find_caller, &co);
	if (co.found) {
		*lo = co.lo;
		*hi = co.hi;
		/* the global scope, after the shim */
		p = sym_ver(RTLD_NEXT, name, co.ver);
		/* the caller's local scope: itself and its dependencies, in the
		 * loader's order (RTLD_NOLOAD: a reference on what is there) */
		if (!p && co.file[0] && ct_dl.dlopen) {
			void *h = ct_dl.dlopen(co.file, RTLD_LAZY | RTLD_NOLOAD);
			if (h) {
				p = sym_ver(h, name, co.ver);
				ct_dl.dlclose(h);
			}
		}
		if (ct_dl.dlerror)
			(void)ct_dl.dlerror();
	}
	ct_busy--;
	/* nothing in the caller's scopes (it reached our export without a
	 * reference of its own): the first loaded definition, as before */
	return p ? p : ct_resolve_next(name, lib_hint);
}
