/*
 * ELF facts about driver and runtime libraries, read with libelf.  The file
 * is mapped read-only and never loaded: doctor must be able to look at a
 * 32-bit, foreign-machine or broken libcuda without running its code.
 */
#include "elfinfo.h"
#include "tracer.h"
#include "version.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xlat.h"

/* e_machine values from <elf.h> that CUDA libraries exist for, plus the
 * ones a wrong multilib directory typically holds */
static const struct {
	int em;
	const char *name;
} machines[] = {
	{ EM_X86_64, "x86_64" }, { EM_AARCH64, "aarch64" }, { EM_386, "i386" },
	{ EM_ARM, "arm" }, { EM_PPC64, "ppc64" }, { EM_PPC, "ppc" },
	{ EM_S390, "s390" }, { EM_RISCV, "riscv" }, { EM_MIPS, "mips" },
	{ EM_SPARCV9, "sparc64" }, { EM_IA_64, "ia64" }, { EM_LOONGARCH, "loongarch" },
};

const char *ct_elf_machine_name(int machine)
{
	for (size_t i = 0; i < sizeof machines / sizeof machines[0]; i++)
		if (machines[i].em == machine)
			return machines[i].name;
	return "unknown";
}

int ct_elf_host_class(void)
{
	return sizeof(void *) == 8 ? 64 : 32;
}

int ct_elf_host_machine(void)
{
#if defined(__x86_64__)
	return EM_X86_64;
#elif defined(__aarch64__)
	return EM_AARCH64;
#elif defined(__i386__)
	return EM_386;
#elif defined(__arm__)
	return EM_ARM;
#elif defined(__powerpc64__)
	return EM_PPC64;
#elif defined(__riscv)
	return EM_RISCV;
#elif defined(__s390__)
	return EM_S390;
#else
	return EM_NONE;
#endif
}

static const char *type_name(int t)
{
	switch (t) {
	case ET_DYN: return "shared object";
	case ET_EXEC: return "executable";
	case ET_REL: return "relocatable";
	case ET_CORE: return "core";
	default: return "unknown type";
	}
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Driver libraries: libcuda*, libnvidia-* (ml, ptxjitcompiler ...). */
static bool is_driver_lib(const struct ct_elfinfo *e)
{
	const char *b = base_name(e->realpath[0] ? e->realpath : e->path);

	if (!strncmp(e->soname, "libcuda.so", 10) || !strncmp(e->soname, "libnvidia-", 10))
		return true;
	return !strncmp(b, "libcuda.so", 10) || !strncmp(b, "libnvidia-", 10);
}

static bool is_libcuda(const struct ct_elfinfo *e)
{
	const char *b = base_name(e->path);
	const char *r = base_name(e->realpath);

	return !strcmp(e->soname, "libcuda.so.1") || !strncmp(b, "libcuda.so", 10) ||
	       !strncmp(r, "libcuda.so", 10);
}

/* A driver version found in a file name must look like one: "580.159.04",
 * not the SONAME major "1" of libcuda.so.1. */
static bool looks_like_driver_version(const char *v)
{
	return strchr(v, '.') && strlen(v) >= 5;
}

/* "NNN.NN.NN" / "NNN.NNN.NN": the driver's own version string.  Only the
 * three-part form is accepted, since two-part numbers ("470.00") can be
 * minimum versions quoted in messages. */
static bool is_driver_version_string(const char *s, size_t n)
{
	size_t i = 0, part = 0, digits = 0;

	if (n < 8 || n > 11)
		return false;
	for (; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			digits++;
		} else if (s[i] == '.' && digits > 0) {
			if ((part == 0 && digits != 3) || (part == 1 && digits < 2))
				return false;
			part++;
			digits = 0;
		} else {
			return false;
		}
	}
	return part == 2 && digits >= 2 && digits <= 3;
}

/* "580.159.04" -> comparable number */
static uint64_t version_key(const char *s)
{
	unsigned v[3];

	ct_version_parts(s, v, 3);
	return (uint64_t)v[0] * 1000000000ull + (uint64_t)v[1] * 1000000ull + v[2];
}

/*
 * Scan the NUL-terminated strings of .rodata for the driver version.  A
 * real libcuda carries more than its own: 580.159.04's .rodata also lists
 * 535.54.02, 550.54.09, ... 580.65.05 (measured on the H200 machine), older
 * branches it knows about.  Its own version is the newest of them, so the
 * highest one is taken.
 */
static bool scan_rodata(Elf_Scn *scn, char *out, size_t outlen)
{
	Elf_Data *d = elf_rawdata(scn, NULL);
	const char *p, *end;
	uint64_t best = 0;

	if (!d || !d->d_buf || d->d_size == 0)
		return false;
	p = d->d_buf;
	end = p + d->d_size;
	while (p < end) {
		const char *z = memchr(p, 0, (size_t)(end - p));
		size_t n = z ? (size_t)(z - p) : (size_t)(end - p);

		if (n >= 8 && n < outlen && is_driver_version_string(p, n) &&
		    (p == (const char *)d->d_buf || p[-1] == 0)) {
			char v[16];
			memcpy(v, p, n);
			v[n] = 0;
			if (version_key(v) > best) {
				best = version_key(v);
				memcpy(out, v, n + 1);
			}
		}
		p += n + 1;
	}
	return best != 0;
}

static void read_dynamic(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct ct_elfinfo *e)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	const char *rpath = NULL, *runpath = NULL;
	GElf_Dyn dyn;

	if (!d || sh->sh_entsize == 0)
		return;
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
		if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag == DT_NEEDED) {
			e->n_needed++;
		} else if (dyn.d_tag == DT_SONAME) {
			const char *s = elf_strptr(elf, sh->sh_link, dyn.d_un.d_val);
			if (s)
				snprintf(e->soname, sizeof e->soname, "%s", s);
		} else if (dyn.d_tag == DT_RUNPATH) {
			runpath = elf_strptr(elf, sh->sh_link, dyn.d_un.d_val);
		} else if (dyn.d_tag == DT_RPATH) {
			rpath = elf_strptr(elf, sh->sh_link, dyn.d_un.d_val);
		}
	}
	/* ld.so ignores DT_RPATH when DT_RUNPATH is present */
	if (runpath || rpath)
		snprintf(e->runpath, sizeof e->runpath, "%s", runpath ? runpath : rpath);
}

static const struct {
	const char *name;
	unsigned bit;
} hook_names[] = {
	{ "cuInit", CT_ELF_DEF_CUINIT },
	{ "cuGetProcAddress", CT_ELF_DEF_GPA },
	{ "cuGetProcAddress_v2", CT_ELF_DEF_GPA },
	{ "dlsym", CT_ELF_DEF_DLSYM },
	{ "dlvsym", CT_ELF_DEF_DLSYM },
	{ "dlopen", CT_ELF_DEF_DLOPEN },
	{ "dlmopen", CT_ELF_DEF_DLOPEN },
	{ "ioctl", CT_ELF_DEF_IOCTL },
	{ "open", CT_ELF_DEF_OPEN },
	{ "open64", CT_ELF_DEF_OPEN },
	{ "openat", CT_ELF_DEF_OPEN },
	{ "openat64", CT_ELF_DEF_OPEN },
	{ "nvmlInit_v2", CT_ELF_DEF_NVML },
	{ "nvmlInit", CT_ELF_DEF_NVML },
};

static unsigned hook_bit(const char *name)
{
	if (name[0] != 'c' && name[0] != 'd' && name[0] != 'i' && name[0] != 'o' && name[0] != 'n')
		return 0;
	for (size_t i = 0; i < sizeof hook_names / sizeof hook_names[0]; i++)
		if (!strcmp(name, hook_names[i].name))
			return hook_names[i].bit;
	return 0;
}

const char *ct_elf_hooks_str(unsigned hooks, char *buf, size_t len)
{
	static const char *const words[] = { "cuInit", "cuGetProcAddress", "dlsym", "dlopen", "ioctl",
					     "open",   "nvmlInit" };
	size_t n = 0;

	if (len)
		buf[0] = 0;
	for (unsigned i = 0; i < sizeof words / sizeof words[0]; i++)
		if (hooks & (1u << i)) {
			int w = snprintf(buf + n, len > n ? len - n : 0, "%s%s", n ? ", " : "", words[i]);
			if (w < 0 || (size_t)w >= (len > n ? len - n : 0))
				break;
			n += (size_t)w;
		}
	return buf;
}

static void read_dynsym(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct ct_elfinfo *e)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Sym sym;

	if (!d || sh->sh_entsize == 0)
		return;
	for (size_t i = 1; i < sh->sh_size / sh->sh_entsize; i++) {
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym))
			break;
		if (sym.st_shndx == SHN_UNDEF)
			continue;
		e->n_defined++;
		if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size > e->max_func_size)
			e->max_func_size = sym.st_size;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		e->hooks |= hook_bit(name);
		if (name[0] != 'c' && name[0] != 'n')
			continue;
		if (!strcmp(name, "cuInit"))
			e->has_cuInit = true;
		else if (!strcmp(name, "cuGetProcAddress_v2"))
			e->has_cuGetProcAddress_v2 = true;
		else if (!strcmp(name, "cuDriverGetVersion"))
			e->has_cuDriverGetVersion = true;
		else if (!strcmp(name, "nvmlInit_v2"))
			e->has_nvmlInit_v2 = true;
		else if (!strcmp(name, "cudaRuntimeGetVersion"))
			e->has_cudaRuntimeGetVersion = true;
	}
}

static int fail(struct ct_elfinfo *e, const char *fmt, const char *arg)
{
	e->ok = false;
	snprintf(e->error, sizeof e->error, fmt, arg);
	return -1;
}

static int fail_errno(struct ct_elfinfo *e, const char *what, int err)
{
	const char *n = ct_errno_name(err);

	e->ok = false;
	snprintf(e->error, sizeof e->error, "%s: %s (%s)", what, n ? n : "error", strerror(err));
	return -1;
}

/* Checks the identification bytes the way ld.so's open_verify does, so the
 * reason matches what dlopen would say. */
static int check_ident(struct ct_elfinfo *e, const unsigned char *id, ssize_t n)
{
	if (n < (ssize_t)EI_NIDENT)
		return fail(e, "file too short for an ELF header (%s)", n == 0 ? "empty" : "truncated");
	if (memcmp(id, ELFMAG, SELFMAG) != 0) {
		bool text = true;
		for (ssize_t i = 0; i < 8; i++)
			if (id[i] < 0x09 || id[i] > 0x7e)
				text = false;
		return fail(e, "not an ELF file (invalid ELF header%s)",
			    text ? "; it is text, e.g. a linker script" : "");
	}
	if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)
		return fail(e, "not an ELF file (invalid ELF class byte)%s", "");
	return 0;
}

static void find_version(struct ct_elfinfo *e, Elf_Scn *rodata)
{
	char v[32];
	bool driver = is_driver_lib(e);

	/* the name the symlink chain ends at carries the full version
	 * (libcuda.so.1 -> libcuda.so.580.159.04); then the name as given */
	const char *names[2] = { e->realpath, e->path };
	for (int i = 0; i < 2; i++) {
		if (!names[i][0] || ct_version_from_name(names[i], v, sizeof v))
			continue;
		if (driver && !looks_like_driver_version(v))
			continue;
		snprintf(e->version, sizeof e->version, "%s", v);
		e->version_from = "file name";
		return;
	}
	if (driver && rodata && scan_rodata(rodata, v, sizeof v)) {
		snprintf(e->version, sizeof e->version, "%s", v);
		e->version_from = "rodata";
		return;
	}
	/* runtime libraries: the SONAME major at least ("libcudart.so.13") */
	if (!driver && e->soname[0] && !ct_version_from_name(e->soname, v, sizeof v)) {
		snprintf(e->version, sizeof e->version, "%s", v);
		e->version_from = "file name";
	}
}

static int read_elf(int fd, struct ct_elfinfo *e)
{
	Elf *elf;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL, *rodata = NULL;
	size_t shstrndx = 0;
	bool have_strndx;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(e, "libelf: %s", elf_errmsg(-1));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return fail(e, "libelf cannot read it: %s", elf_errmsg(-1));
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		elf_end(elf);
		return fail(e, "corrupt ELF header: %s", elf_errmsg(-1));
	}
	e->elf_class = gelf_getclass(elf) == ELFCLASS32 ? 32 : 64;
	e->machine = eh.e_machine;
	e->machine_name = ct_elf_machine_name(eh.e_machine);
	e->type = eh.e_type;
	e->type_name = type_name(eh.e_type);
	e->little_endian = eh.e_ident[EI_DATA] == ELFDATA2LSB;

	have_strndx = elf_getshdrstrndx(elf, &shstrndx) == 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNAMIC)
			read_dynamic(elf, scn, &sh, e);
		else if (sh.sh_type == SHT_DYNSYM)
			read_dynsym(elf, scn, &sh, e);
		else if (sh.sh_type == SHT_PROGBITS && have_strndx &&
			 (name = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(name, ".rodata"))
			rodata = scn;
	}
	find_version(e, rodata);
	elf_end(elf);
	e->ok = true;
	return 0;
}

int ct_elf_inspect(const char *path, struct ct_elfinfo *e)
{
	unsigned char id[EI_NIDENT];
	struct stat st;
	char rp[PATH_MAX];
	ssize_t n;
	int fd, rc;

	memset(e, 0, sizeof *e);
	e->machine_name = "unknown";
	e->type_name = "unknown type";
	snprintf(e->path, sizeof e->path, "%s", path);
	if (realpath(path, rp) && strlen(rp) < sizeof e->realpath)
		memcpy(e->realpath, rp, strlen(rp) + 1);

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_errno(e, "cannot open", errno);
	if (fstat(fd, &st) < 0) {
		rc = fail_errno(e, "cannot stat", errno);
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(e, "not a regular file%s", S_ISDIR(st.st_mode) ? " (a directory)" : "");
	}
	e->size = (uint64_t)st.st_size;
	n = pread(fd, id, sizeof id, 0);
	if (n < 0) {
		rc = fail_errno(e, "cannot read", errno);
		close(fd);
		return rc;
	}
	rc = check_ident(e, id, n);
	if (rc == 0)
		rc = read_elf(fd, e);
	close(fd);
	ct_elf_classify(e, e->path);
	return rc;
}

/* Directories a GPU-enabled container runtime (nvidia-container-toolkit,
 * CDI, GPU operator driver container) or the host driver installer puts the
 * user-mode driver in.  From the toolkit's default library locations and
 * the H200 machine (/usr/local/nvidia/lib64, tests/fixtures/h200-580). */
static const char *const host_dirs[] = {
	"/usr/local/nvidia/", "/usr/lib/x86_64-linux-gnu/", "/lib/x86_64-linux-gnu/",
	"/usr/lib/aarch64-linux-gnu/", "/lib/aarch64-linux-gnu/", "/usr/lib64/", "/lib64/",
	"/run/nvidia/", "/usr/lib/wsl/",
};

static bool has_prefix_dir(const char *p)
{
	for (size_t i = 0; i < sizeof host_dirs / sizeof host_dirs[0]; i++)
		if (!strncmp(p, host_dirs[i], strlen(host_dirs[i])))
			return true;
	return false;
}

/*
 * The stub rule.  The CUDA Toolkit ships a link-time stub libcuda.so in
 * <toolkit>/lib64/stubs (targets/<arch>/lib/stubs): about 100 KB, every one
 * of its ~600 exported functions a few bytes long that returns
 * CUDA_ERROR_STUB_LIBRARY (34).  It exists so that programs link without a
 * driver; loaded at run time it makes cuInit fail with 34 (failure catalog
 * B.3).  A real libcuda.so.1 of any driver branch is tens of MB (96 MB for
 * 580.159.04, measured on the H200 machine).  So a library is a stub when
 *   - its path contains "/stubs/" (where the toolkit installs it), or
 *   - it is a libcuda (SONAME libcuda.so.1) smaller than 2 MiB: this catches
 *     the stub copied or symlinked to libcuda.so.1 outside stubs/, a common
 *     Dockerfile workaround for link errors.
 */
#define CT_STUB_MAX_SIZE (2u * 1024 * 1024)

void ct_elf_classify(struct ct_elfinfo *e, const char *logical)
{
	const char *paths[3] = { logical, e->path, e->realpath };

	e->flags = 0;
	e->why_stub[0] = 0;
	for (int i = 0; i < 3; i++) {
		if (!paths[i] || !paths[i][0])
			continue;
		if (strstr(paths[i], "/stubs/") && !(e->flags & CT_ELF_STUB)) {
			e->flags |= CT_ELF_STUB;
			snprintf(e->why_stub, sizeof e->why_stub, "in a stubs/ directory");
		}
		if (strstr(paths[i], "/compat/"))
			e->flags |= CT_ELF_COMPAT;
	}
	if (has_prefix_dir(logical) || (e->realpath[0] && has_prefix_dir(e->realpath)))
		e->flags |= CT_ELF_HOST;
	if (!e->ok)
		return;
	if (!(e->flags & CT_ELF_STUB) && is_libcuda(e) && e->size < CT_STUB_MAX_SIZE) {
		e->flags |= CT_ELF_STUB;
		snprintf(e->why_stub, sizeof e->why_stub,
			 "libcuda of %llu KB (the real driver library is tens of MB)",
			 (unsigned long long)(e->size / 1024));
	}
	if (e->elf_class != ct_elf_host_class())
		e->flags |= CT_ELF_WRONG_CLASS;
	if (e->machine != ct_elf_host_machine())
		e->flags |= CT_ELF_WRONG_MACHINE;
}

const char *ct_elf_flags_str(unsigned flags, char *buf, size_t len)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
		{ CT_ELF_STUB, "stub" }, { CT_ELF_COMPAT, "compat" }, { CT_ELF_HOST, "host" },
		{ CT_ELF_WRONG_CLASS, "wrong-class" }, { CT_ELF_WRONG_MACHINE, "wrong-machine" },
	};
	size_t used = 0;

	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		int w;
		if (!(flags & names[i].bit))
			continue;
		w = snprintf(buf + used, len - used, "%s%s", used ? "," : "", names[i].name);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
	return buf;
}
