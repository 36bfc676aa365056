/*
 * doctor's library code: ELF inspection on real toolkit files, the /proc
 * parsers, the driver->CUDA table, the compatibility classes (the seed
 * article's matrix), the ld.so.cache reader, the loader emulation, the
 * kernel-module / container / environment checks on fake trees.
 */
#include "test_common.h"

#include <elf.h>

#include "compat.h"
#include "elfinfo.h"
#include "version.h"
#include "idname.h"

static struct ct_machine_report *run_check(const struct ct_machine_opts *o)
{
	struct ct_machine_report *r = calloc(1, sizeof *r);
	ck_assert_ptr_nonnull(r);
	ct_machine_check(r, o);
	return r;
}

/* a tree-rooted check with this environment (no real paths leak in) */
static struct ct_machine_report *check_tree(char **env)
{
	static const char *const sys[] = { "/sys1", "/sys2", NULL };
	static const char *const rt[] = { "/rt", NULL };
	struct ct_machine_opts o = {
		.root = tmp_root, .env = env, .ld_cache = "", .system_dirs = sys,
		.cudart_dirs = rt, .no_open = true, .no_python = true,
	};
	return run_check(&o);
}

static void write_elf32(const char *path)
{
	Elf32_Ehdr h;

	memset(&h, 0, sizeof h);
	memcpy(h.e_ident, ELFMAG, SELFMAG);
	h.e_ident[EI_CLASS] = ELFCLASS32;
	h.e_ident[EI_DATA] = ELFDATA2LSB;
	h.e_ident[EI_VERSION] = EV_CURRENT;
	h.e_type = ET_DYN;
	h.e_machine = EM_386;
	h.e_version = EV_CURRENT;
	h.e_ehsize = sizeof h;
	h.e_phentsize = sizeof(Elf32_Phdr);
	h.e_shentsize = sizeof(Elf32_Shdr);
	write_file(path, &h, sizeof h);
}

/* ---- elfinfo ---------------------------------------------------------- */

START_TEST(t_elf_stub)
{
	struct ct_elfinfo e;

	ck_assert_int_eq(ct_elf_inspect(CT_STUB_CUDA, &e), 0);
	ck_assert(e.ok);
	ck_assert_int_eq(e.elf_class, 64);
	ck_assert_int_eq(e.machine, EM_X86_64);
	ck_assert_str_eq(e.machine_name, "x86_64");
	ck_assert_int_eq(e.type, ET_DYN);
	ck_assert_str_eq(e.soname, "libcuda.so.1");
	ck_assert(e.has_cuInit && e.has_cuGetProcAddress_v2 && e.has_cuDriverGetVersion);
	ck_assert(!e.has_nvmlInit_v2);
	ck_assert_int_gt(e.n_defined, 100);
	ck_assert_uint_lt(e.max_func_size, 64);       /* stub bodies are a few bytes */
	ck_assert_uint_lt(e.size, 2u << 20);
	ck_assert(e.flags & CT_ELF_STUB);
	ck_assert_ptr_nonnull(strstr(e.why_stub, "stubs/"));
	ck_assert(!(e.flags & (CT_ELF_WRONG_CLASS | CT_ELF_WRONG_MACHINE | CT_ELF_COMPAT)));
}
END_TEST

/* the stub copied to libcuda.so.1 outside stubs/ is still a stub (size rule) */
START_TEST(t_elf_stub_copied)
{
	struct ct_elfinfo e;

	copy_file(CT_STUB_CUDA, T("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
	ck_assert_int_eq(ct_elf_inspect(T("/usr/lib/x86_64-linux-gnu/libcuda.so.1"), &e), 0);
	ck_assert(e.flags & CT_ELF_STUB);
	ck_assert_ptr_nonnull(strstr(e.why_stub, "KB"));
	/* with its logical path it is also in a host directory */
	ct_elf_classify(&e, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
	ck_assert(e.flags & CT_ELF_STUB);
	ck_assert(e.flags & CT_ELF_HOST);
}
END_TEST

START_TEST(t_elf_cudart)
{
	struct ct_elfinfo e;

	ck_assert_int_eq(ct_elf_inspect(CT_CUDART, &e), 0);
	ck_assert_int_eq(e.elf_class, 64);
	ck_assert_str_eq(e.machine_name, "x86_64");
	ck_assert_str_eq(e.soname, "libcudart.so.13");
	ck_assert_int_eq(strncmp(e.version, "13", 2), 0);
	ck_assert(e.version[2] == 0 || e.version[2] == '.');
	ck_assert_int_eq(ct_cuda_version_parse(e.version) / 1000, 13);
	ck_assert(e.has_cudaRuntimeGetVersion);
	ck_assert(!e.has_cuInit);
	ck_assert_int_ge(e.n_needed, 1);
	ck_assert(!(e.flags & CT_ELF_STUB));
}
END_TEST

START_TEST(t_elf_fake_driver)
{
	struct ct_elfinfo e;

	/* a regular file named libcuda.so.1: the version comes from .rodata */
	copy_file(CT_FAKE_CUDA, T("/a/libcuda.so.1"));
	ck_assert_int_eq(ct_elf_inspect(T("/a/libcuda.so.1"), &e), 0);
	ck_assert(!(e.flags & CT_ELF_STUB));
	ck_assert_uint_gt(e.size, 2u << 20);
	ck_assert_str_eq(e.version, "580.159.04");
	ck_assert_str_eq(e.version_from, "rodata");
	/* the usual symlink chain: the target's file name wins */
	copy_file(CT_FAKE_CUDA, T("/b/libcuda.so.570.86.15"));
	make_link("libcuda.so.570.86.15", T("/b/libcuda.so.1"));
	ck_assert_int_eq(ct_elf_inspect(T("/b/libcuda.so.1"), &e), 0);
	ck_assert_str_eq(e.version, "570.86.15");
	ck_assert_str_eq(e.version_from, "file name");
	ck_assert_ptr_nonnull(strstr(e.realpath, "libcuda.so.570.86.15"));
	/* compat copy */
	copy_file(CT_FAKE_CUDA, T("/usr/local/cuda-13.0/compat/libcuda.so.580.95.05"));
	ck_assert_int_eq(ct_elf_inspect(T("/usr/local/cuda-13.0/compat/libcuda.so.580.95.05"), &e), 0);
	ck_assert(e.flags & CT_ELF_COMPAT);
	ck_assert(!(e.flags & CT_ELF_STUB));
	ck_assert_str_eq(e.version, "580.95.05");
}
END_TEST

START_TEST(t_elf_nvml)
{
	struct ct_elfinfo e;

	ck_assert_int_eq(ct_elf_inspect(CT_FAKE_NVML, &e), 0);
	ck_assert_str_eq(e.soname, "libnvidia-ml.so.1");
	ck_assert(e.has_nvmlInit_v2);
	ck_assert(!e.has_cuInit);
	ck_assert(!(e.flags & CT_ELF_STUB));
}
END_TEST

START_TEST(t_elf_32bit)
{
	struct ct_elfinfo e;

	write_elf32(T("/lib32/libcuda.so.1"));
	ck_assert_int_eq(ct_elf_inspect(T("/lib32/libcuda.so.1"), &e), 0);
	ck_assert_int_eq(e.elf_class, 32);
	ck_assert_int_eq(e.machine, EM_386);
	ck_assert_str_eq(e.machine_name, "i386");
	ck_assert(e.flags & CT_ELF_WRONG_CLASS);
	ck_assert(e.flags & CT_ELF_WRONG_MACHINE);
}
END_TEST

START_TEST(t_elf_errors)
{
	struct ct_elfinfo e;

	write_str(T("/text.so"), "/* GNU ld script */\nINPUT(libfoo.so)\n");
	ck_assert_int_eq(ct_elf_inspect(T("/text.so"), &e), -1);
	ck_assert(!e.ok);
	ck_assert_msg(strstr(e.error, "not an ELF file"), "%s", e.error);
	ck_assert_ptr_nonnull(strstr(e.error, "text"));

	write_file(T("/bin.so"), "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11", 17);
	ck_assert_int_eq(ct_elf_inspect(T("/bin.so"), &e), -1);
	ck_assert_ptr_nonnull(strstr(e.error, "not an ELF file"));

	write_str(T("/empty.so"), "");
	ck_assert_int_eq(ct_elf_inspect(T("/empty.so"), &e), -1);
	ck_assert_msg(strstr(e.error, "too short"), "%s", e.error);

	ck_assert_int_eq(ct_elf_inspect(T("/missing.so"), &e), -1);
	ck_assert_msg(strstr(e.error, "cannot open") && strstr(e.error, "ENOENT"), "%s", e.error);

	mkdirs(T("/dir.so"));
	ck_assert_int_eq(ct_elf_inspect(T("/dir.so"), &e), -1);
	ck_assert_ptr_nonnull(strstr(e.error, "not a regular file"));
}
END_TEST

START_TEST(t_elf_version_from_name)
{
	char v[32];

	ck_assert_int_eq(ct_version_from_name("/usr/lib/libcuda.so.580.159.04", v, sizeof v), 0);
	ck_assert_str_eq(v, "580.159.04");
	ck_assert_int_eq(ct_version_from_name("libcudart.so.13.0.96", v, sizeof v), 0);
	ck_assert_str_eq(v, "13.0.96");
	ck_assert_int_eq(ct_version_from_name("libcudart-d0da41ae.so.11.0", v, sizeof v), 0);
	ck_assert_str_eq(v, "11.0");
	ck_assert_int_eq(ct_version_from_name("/x/libcuda.so", v, sizeof v), -1);
	ck_assert_int_eq(ct_version_from_name("libfoo.so.x", v, sizeof v), -1);
}
END_TEST

/* ---- parsers and tables ----------------------------------------------- */

START_TEST(t_nvrm_version)
{
	char v[32];
	const char *fl;

	/* open module, as measured on the 580 machine (tracer/decode/ABI.md §8) */
	ck_assert_int_eq(ct_parse_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
					       "580.159.04  Release Build  (nixbld@)  ", v, sizeof v, &fl), 0);
	ck_assert_str_eq(v, "580.159.04");
	ck_assert_str_eq(fl, "open");
	/* proprietary module title */
	ck_assert_int_eq(ct_parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  "
					       "Thu Feb 22 01:44:30 UTC 2024", v, sizeof v, &fl), 0);
	ck_assert_str_eq(v, "550.54.14");
	ck_assert_str_eq(fl, "proprietary");
	ck_assert_int_eq(ct_parse_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  "
					       "570.86.15  Release Build  (dvs-builder@U16)  Wed Jan 22 "
					       "00:52:09 UTC 2025", v, sizeof v, &fl), 0);
	ck_assert_str_eq(v, "570.86.15");
	ck_assert_int_eq(ct_parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.82.01",
					       v, sizeof v, NULL), 0);
	ck_assert_str_eq(v, "470.82.01");
	ck_assert_int_eq(ct_parse_nvrm_version("GCC version:  gcc version 15.3.0 (GCC) ", v, sizeof v, &fl), 0);
	ck_assert_int_eq(ct_parse_nvrm_version("nothing here x86_64", v, sizeof v, &fl), -1);
	ck_assert_str_eq(fl, "unknown");
}
END_TEST

START_TEST(t_driver_table)
{
	ck_assert_int_eq(ct_driver_cuda_version("580.159.04"), 13000);
	ck_assert_int_eq(ct_driver_cuda_version("580.65.06"), 13000);
	ck_assert_int_eq(ct_driver_cuda_version("590.44.01"), 13010);
	ck_assert_int_eq(ct_driver_cuda_version("575.51.03"), 12090);
	ck_assert_int_eq(ct_driver_cuda_version("570.86.15"), 12080);
	ck_assert_int_eq(ct_driver_cuda_version("565.57.01"), 12060);   /* lower bound */
	ck_assert_int_eq(ct_driver_cuda_version("560.35.05"), 12060);
	ck_assert_int_eq(ct_driver_cuda_version("555.42.06"), 12050);
	ck_assert_int_eq(ct_driver_cuda_version("550.54.14"), 12040);
	ck_assert_int_eq(ct_driver_cuda_version("545.23.08"), 12030);
	ck_assert_int_eq(ct_driver_cuda_version("535.104.05"), 12020);
	ck_assert_int_eq(ct_driver_cuda_version("530.30.02"), 12010);
	ck_assert_int_eq(ct_driver_cuda_version("525.60.13"), 12000);
	ck_assert_int_eq(ct_driver_cuda_version("520.61.05"), 11080);
	ck_assert_int_eq(ct_driver_cuda_version("515.43.04"), 11070);
	ck_assert_int_eq(ct_driver_cuda_version("510.47.03"), 11060);
	ck_assert_int_eq(ct_driver_cuda_version("470.42.01"), 11040);
	ck_assert_int_eq(ct_driver_cuda_version("450.80.02"), 11000);
	ck_assert_int_eq(ct_driver_cuda_version("NVIDIA UNIX x86_64 Kernel Module  550.54.15"), 12040);
	ck_assert_int_eq(ct_driver_cuda_version("300.1"), 0);
	ck_assert_int_eq(ct_driver_cuda_version("x86_64"), 0);
	ck_assert_int_eq(ct_driver_cuda_version(NULL), 0);
}
END_TEST

START_TEST(t_cuda_version_parse)
{
	char b[16];

	ck_assert_int_eq(ct_cuda_version_parse("13.0.96"), 13000);
	ck_assert_int_eq(ct_cuda_version_parse("13"), 13000);
	ck_assert_int_eq(ct_cuda_version_parse("12.4"), 12040);
	ck_assert_int_eq(ct_cuda_version_parse("11.8.89"), 11080);
	ck_assert_int_eq(ct_cuda_version_parse("12040"), 12040);
	ck_assert_int_eq(ct_cuda_version_parse("v12"), 0);
	ck_assert_str_eq(ct_cuda_version_str(12040, b, sizeof b), "12.4");
	ck_assert_str_eq(ct_cuda_version_str(0, b, sizeof b), "unknown");
}
END_TEST

/* NVIDIA's CUDA compatibility matrix (tracer/diag/compat.c), plus the
 * measured CUDA 13 rows of tracer/decode/ABI.md Appendix C (cudart 13 on a driver reporting 12.4/12.9/11.4: 35). */
START_TEST(t_compat_matrix)
{
	struct ct_compat c;

	ck_assert_int_eq(ct_compat_classify(12040, 12040, false, &c), CT_COMPAT_NATIVE);
	ck_assert(c.ok && c.expect_error == 0);
	ck_assert_str_eq(c.name, "native");
	ck_assert_int_eq(ct_compat_classify(12040, 11080, false, &c), CT_COMPAT_BACKWARD);
	ck_assert(c.ok);
	ck_assert_ptr_null(c.fix);
	ck_assert_int_eq(ct_compat_classify(11040, 12040, false, &c), CT_COMPAT_MISMATCH);
	ck_assert(!c.ok);
	ck_assert_int_eq(c.expect_error, 35);
	ck_assert_ptr_nonnull(c.fix);
	ck_assert_ptr_nonnull(strstr(c.detail, "11.4"));
	ck_assert_ptr_nonnull(strstr(c.detail, "12.4"));
	ck_assert_int_eq(ct_compat_classify(11000, 11080, false, &c), CT_COMPAT_MINOR);
	ck_assert(c.ok && c.expect_error == 0);
	ck_assert_int_eq(ct_compat_classify(11040, 12040, true, &c), CT_COMPAT_FORWARD);
	ck_assert(c.ok);
	ck_assert_ptr_nonnull(strstr(c.rule, "804"));
	/* CUDA 13 rows */
	ck_assert_int_eq(ct_compat_classify(12090, 13000, false, &c), CT_COMPAT_MISMATCH);
	ck_assert_int_eq(c.expect_error, 35);
	ck_assert_int_eq(ct_compat_classify(13000, 13010, false, &c), CT_COMPAT_MINOR);
	ck_assert_int_eq(ct_compat_classify(13000, 12040, false, &c), CT_COMPAT_BACKWARD);
	/* no minor version compatibility before CUDA 11 */
	ck_assert_int_eq(ct_compat_classify(10000, 10020, false, &c), CT_COMPAT_MISMATCH);
	/* a compat library that is not needed is pointed out */
	ck_assert_int_eq(ct_compat_classify(13000, 12040, true, &c), CT_COMPAT_BACKWARD);
	ck_assert_ptr_nonnull(c.fix);
	ck_assert_int_eq(ct_compat_classify(0, 12040, false, &c), CT_COMPAT_UNKNOWN);
	ck_assert_int_eq(ct_compat_classify(13000, 0, false, &c), CT_COMPAT_UNKNOWN);
}
END_TEST

/* ---- ld.so.cache ------------------------------------------------------ */

struct cache_hits {
	int n;
	bool own; /* value, flags: the first entry of this machine's ELF class */
	char value[PATH_MAX];
	int32_t flags;
};

/* every entry counts; the one kept is the first of the machine's own class
 * (with gcc-multilib installed the first libc.so.6 is the i386 one) */
static void cache_hit(const char *key, const char *value, int32_t flags, void *arg)
{
	struct cache_hits *h = arg;
	(void)key;
	h->n++;
	if (!h->own && ct_ldcache_flags_match(flags)) {
		snprintf(h->value, sizeof h->value, "%s", value);
		h->flags = flags;
		h->own = true;
	}
}

START_TEST(t_ldcache_system)
{
	struct cache_hits h = { 0 };
	int n;

	if (access("/etc/ld.so.cache", R_OK) != 0)
		return;   /* no cache on this system: nothing to compare */
	n = ct_ldcache_lookup("/etc/ld.so.cache", "libc.so.6", false, cache_hit, &h);
	ck_assert_int_ge(n, 1);
	ck_assert_int_eq(h.n, n);
	ck_assert_msg(h.own, "no libc.so.6 of this machine's ELF class among %d entries", n);
	ck_assert_msg(strstr(h.value, "/libc.so.6"), "%s", h.value);
	ck_assert(ct_ldcache_flags_match(h.flags));
	ck_assert_int_eq(h.flags & 0xff, 3);                 /* FLAG_ELF_LIBC6 */
	ck_assert_int_ge(ct_ldcache_lookup("/etc/ld.so.cache", "libc.so", true, NULL, NULL), n);
	ck_assert_int_eq(ct_ldcache_lookup("/etc/ld.so.cache", "libnot-there.so.42", false, NULL, NULL), 0);
}
END_TEST

START_TEST(t_ldcache_bad_files)
{
	write_str(T("/cache"), "glibc-ld.so.cache1.1 but then nothing useful at all, just text.........");
	ck_assert_int_eq(ct_ldcache_lookup(T("/cache"), "libc.so.6", false, NULL, NULL), -1);
	write_str(T("/cache2"), "not a cache");
	ck_assert_int_eq(ct_ldcache_lookup(T("/cache2"), "libc.so.6", false, NULL, NULL), -1);
	ck_assert_int_eq(ct_ldcache_lookup(T("/none"), "libc.so.6", false, NULL, NULL), -1);
}
END_TEST

/* ---- the loader emulation --------------------------------------------- */

static char *envs(const char *fmt, const char *a, const char *b, const char *c)
{
	char *s;
	ck_assert_int_ge(asprintf(&s, fmt, a, b, c), 0);
	return s;
}

/* LD_LIBRARY_PATH = 32-bit dir : stubs dir : real dir */
START_TEST(t_loader_stub_first)
{
	char *env[2] = { NULL, NULL };
	struct ct_machine_report *r;

	write_elf32(T("/l32/libcuda.so.1"));
	copy_file(CT_STUB_CUDA, T("/toolkit/lib64/stubs/libcuda.so.1"));
	copy_file(CT_FAKE_CUDA, T("/usr/local/nvidia/lib64/libcuda.so.580.159.04"));
	make_link("libcuda.so.580.159.04", T("/usr/local/nvidia/lib64/libcuda.so.1"));
	env[0] = envs("LD_LIBRARY_PATH=%s:%s:%s", T("/l32"), T("/toolkit/lib64/stubs"),
		      T("/usr/local/nvidia/lib64"));
	r = check_tree(env);
	ck_assert_int_eq(r->cuda.n, 3);
	ck_assert_int_eq(r->cuda.c[0].state, CT_CAND_SKIPPED);
	ck_assert(r->cuda.c[0].elf.flags & CT_ELF_WRONG_CLASS);
	ck_assert_ptr_nonnull(strstr(r->cuda.c[0].note, "wrong ELF class"));
	ck_assert_int_eq(r->cuda.chosen, 1);
	ck_assert_int_eq(r->cuda.c[1].state, CT_CAND_CHOSEN);
	ck_assert_int_eq(r->cuda.c[1].src, CT_SRC_LD_LIBRARY_PATH);
	ck_assert(r->cuda.c[1].elf.flags & CT_ELF_STUB);
	ck_assert_int_eq(r->cuda.c[2].state, CT_CAND_SHADOWED);
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "toolkit stub");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "34");
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_LOADER, "stubs directory");    /* environment check */
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_LOADER, "32-bit");
	free(env[0]);
	free(r);
}
END_TEST

START_TEST(t_loader_wrong_class_skipped)
{
	char *env[2] = { NULL, NULL };
	struct ct_machine_report *r;

	write_elf32(T("/l32/libcuda.so.1"));
	copy_file(CT_FAKE_CUDA, T("/usr/local/nvidia/lib64/libcuda.so.580.159.04"));
	make_link("libcuda.so.580.159.04", T("/usr/local/nvidia/lib64/libcuda.so.1"));
	env[0] = envs("LD_LIBRARY_PATH=%s:%s%s", T("/l32"), T("/usr/local/nvidia/lib64"), "");
	r = check_tree(env);
	ck_assert_int_eq(r->cuda.chosen, 1);
	ck_assert_int_eq(r->cuda.c[0].state, CT_CAND_SKIPPED);
	ck_assert_str_eq(r->cuda.c[1].path, T("/usr/local/nvidia/lib64/libcuda.so.1"));
	ck_assert_str_eq(r->cuda.c[1].elf.version, "580.159.04");
	/* LD_LIBRARY_PATH paths are taken as they are: this one is under the
	 * temporary tree, not in the host's /usr/local/nvidia */
	ck_assert(!(r->cuda.c[1].elf.flags & CT_ELF_HOST));
	ck_assert(!(r->cuda.c[1].elf.flags & CT_ELF_STUB));
	CK_FIND(r, CT_SEV_OK, CT_LAYER_LOADER, "libcuda.so.1 ->");
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, NULL);
	ck_assert_str_eq(r->driver_version, "580.159.04");
	ck_assert_int_eq(r->driver_cuda_version, 13000);
	free(env[0]);
	free(r);
}
END_TEST

/* a readable non-ELF file ends ld.so's search with an error */
START_TEST(t_loader_invalid_elf_fatal)
{
	char *env[2] = { NULL, NULL };
	struct ct_machine_report *r;

	write_str(T("/bad/libcuda.so.1"), "this is not a library\n");
	copy_file(CT_FAKE_CUDA, T("/good/libcuda.so.1"));
	env[0] = envs("LD_LIBRARY_PATH=%s:%s%s", T("/bad"), T("/good"), "");
	r = check_tree(env);
	ck_assert_int_eq(r->cuda.chosen, -1);
	ck_assert_int_eq(r->cuda.fatal, 0);
	ck_assert_int_eq(r->cuda.c[0].state, CT_CAND_FATAL);
	ck_assert_int_eq(r->cuda.c[1].state, CT_CAND_SHADOWED);
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "dlopen(\"libcuda.so.1\") fails");
	free(env[0]);
	free(r);
}
END_TEST

/* nothing on the path, but a real library in /usr/local/nvidia/lib64 */
START_TEST(t_loader_not_found_offpath)
{
	char *env[] = { "PATH=/usr/bin", NULL };
	struct ct_machine_report *r;
	const struct ct_finding *f;

	copy_file(CT_FAKE_CUDA, T("/usr/local/nvidia/lib64/libcuda.so.580.159.04"));
	make_link("libcuda.so.580.159.04", T("/usr/local/nvidia/lib64/libcuda.so.1"));
	copy_file(CT_STUB_CUDA, T("/usr/local/cuda/lib64/stubs/libcuda.so"));
	r = check_tree(env);
	ck_assert_int_eq(r->cuda.chosen, -1);
	ck_assert_int_eq(r->cuda.n, 1);
	ck_assert_int_eq(r->cuda.c[0].state, CT_CAND_OFF_PATH);
	ck_assert_str_eq(r->cuda.c[0].path, "/usr/local/nvidia/lib64/libcuda.so.1");
	f = find(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "not on the loader's search path");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f->fix, "/usr/local/nvidia/lib64"));
	/* the stub is listed for the unversioned name, off the path */
	ck_assert_int_eq(r->cuda_dev.n, 1);
	ck_assert_int_eq(r->cuda_dev.c[0].state, CT_CAND_OFF_PATH);
	ck_assert(r->cuda_dev.c[0].elf.flags & CT_ELF_STUB);
	free(r);
}
END_TEST

/* ld.so.cache (built by the real ldconfig) before the system directories */
START_TEST(t_loader_cache_and_system)
{
	char *env[] = { NULL };
	char cmd[3 * PATH_MAX];
	static const char *const sys[] = { "/sys1", NULL };
	struct ct_machine_opts o = {
		.root = tmp_root, .env = env, .system_dirs = sys, .no_open = true, .no_python = true,
	};
	struct ct_machine_report *r;

	copy_file(CT_FAKE_CUDA, T("/cached/libcuda.so.580.159.04"));
	make_link("libcuda.so.580.159.04", T("/cached/libcuda.so.1"));
	copy_file(CT_FAKE_CUDA, T("/sys1/libcuda.so.1"));
	write_str(T("/etc/ld.so.conf"), "/cached\n");
	snprintf(cmd, sizeof cmd, "ldconfig -X -r %s -C /etc/ld.so.cache -f /etc/ld.so.conf 2>/dev/null",
		 tmp_root);
	if (system(cmd) != 0 || access(T("/etc/ld.so.cache"), R_OK) != 0) {
		fprintf(stderr, "t_loader_cache_and_system: ldconfig -r unavailable, cache part skipped\n");
		return;
	}
	r = run_check(&o);
	ck_assert_int_eq(r->cuda.n, 2);
	ck_assert_int_eq(r->cuda.c[0].src, CT_SRC_LD_CACHE);
	ck_assert_str_eq(r->cuda.c[0].path, "/cached/libcuda.so.1");
	ck_assert_int_eq(r->cuda.c[0].state, CT_CAND_CHOSEN);
	ck_assert_int_eq(r->cuda.c[1].src, CT_SRC_SYSTEM_DIR);
	ck_assert_int_eq(r->cuda.c[1].state, CT_CAND_SHADOWED);
	free(r);
}
END_TEST

/* ---- the contract on trees -------------------------------------------- */

static void real_driver(const char *dir, const char *version)
{
	char a[PATH_MAX], b[64];
	snprintf(b, sizeof b, "libcuda.so.%s", version);
	snprintf(a, sizeof a, "%s/%s", dir, b);
	copy_file(CT_FAKE_CUDA, a);
	snprintf(a, sizeof a, "%s/libcuda.so.1", dir);
	make_link(b, a);
}

static const struct ct_cudart *runtime(const struct ct_machine_report *r, const char *name)
{
	for (int i = 0; i < r->n_cudart; i++)
		if (strstr(r->cudart[i].path, name))
			return &r->cudart[i];
	return NULL;
}

START_TEST(t_contract_native_backward)
{
	char *env[2] = { NULL, NULL };
	struct ct_machine_report *r;
	const struct ct_cudart *k;

	real_driver(T("/drv"), "580.159.04");
	copy_file(CT_CUDART, T("/rt/libcudart.so.13.0.96"));
	copy_file(CT_CUDART, T("/rt/libcudart.so.12.4.127"));   /* named as a 12.4 runtime */
	env[0] = envs("LD_LIBRARY_PATH=%s%s%s", T("/drv"), "", "");
	r = check_tree(env);
	ck_assert_int_eq(r->driver_cuda_version, 13000);
	k = runtime(r, "libcudart.so.13.0.96");
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(k->cuda_version, 13000);
	ck_assert(k->version_exact);
	ck_assert(!k->loader_visible);
	ck_assert_int_eq(k->compat.cls, CT_COMPAT_NATIVE);
	k = runtime(r, "libcudart.so.12.4.127");
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(k->cuda_version, 12040);
	ck_assert_int_eq(k->compat.cls, CT_COMPAT_BACKWARD);
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_RUNTIME, NULL);
	free(env[0]);
	free(r);
}
END_TEST

/* seed row "Standard Mismatch": driver 470 (11.4), runtime 12.4 on the path */
START_TEST(t_contract_mismatch)
{
	char *env[2] = { NULL, NULL };
	struct ct_machine_report *r;
	const struct ct_cudart *k;

	real_driver(T("/drv"), "470.42.01");
	copy_file(CT_CUDART, T("/app/libcudart.so.12.4.127"));
	env[0] = envs("LD_LIBRARY_PATH=%s:%s%s", T("/drv"), T("/app"), "");
	r = check_tree(env);
	ck_assert_str_eq(r->driver_version, "470.42.01");
	ck_assert_int_eq(r->driver_cuda_version, 11040);
	k = runtime(r, "libcudart.so.12.4.127");
	ck_assert_ptr_nonnull(k);
	ck_assert(k->loader_visible);
	ck_assert_int_eq(k->compat.cls, CT_COMPAT_MISMATCH);
	ck_assert_int_eq(k->compat.expect_error, 35);
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_RUNTIME, "cudaErrorInsufficientDriver (35)");
	free(env[0]);
	free(r);
}
END_TEST

/* seed row "Forward Compat Overlay": kernel 470 (11.4), compat libcuda on
 * the path, runtime 12.4 */
START_TEST(t_contract_forward)
{
	char *env[2] = { NULL, NULL };
	struct ct_machine_report *r;
	const struct ct_cudart *k;

	write_str(T("/proc/driver/nvidia/version"),
		  "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.42.01  Tue Jun 15 21:26:37 UTC 2021\n"
		  "GCC version:  gcc version 9.3.0\n");
	write_str(T("/sys/module/nvidia/version"), "470.42.01\n");
	mkdirs(T("/sys/module/nvidia_uvm"));
	real_driver(T("/usr/local/cuda-12.4/compat"), "550.54.14");
	copy_file(CT_CUDART, T("/app/libcudart.so.12.4.127"));
	env[0] = envs("LD_LIBRARY_PATH=%s:%s%s", T("/usr/local/cuda-12.4/compat"), T("/app"), "");
	r = check_tree(env);
	ck_assert(r->compat_loaded);
	ck_assert_str_eq(r->driver_version, "470.42.01");
	ck_assert_str_eq(r->driver_version_from, "kernel module");
	k = runtime(r, "libcudart.so.12.4.127");
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(k->compat.cls, CT_COMPAT_FORWARD);
	ck_assert(k->compat.ok);
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_RUNTIME, NULL);
	/* a compat copy differing from the module is expected: no 803 finding */
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, NULL);
	free(env[0]);
	free(r);
}
END_TEST

/* failure catalog B.1: user-mode libcuda of another version than the module */
START_TEST(t_skew_803)
{
	char *env[2] = { NULL, NULL };
	struct ct_machine_report *r;

	write_str(T("/proc/driver/nvidia/version"),
		  "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \n");
	write_str(T("/sys/module/nvidia/version"), "580.159.04\n");
	real_driver(T("/old"), "570.86.15");
	env[0] = envs("LD_LIBRARY_PATH=%s%s%s", T("/old"), "", "");
	r = check_tree(env);
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, "803");
	free(env[0]);
	free(r);
}
END_TEST

/* ---- kernel module, container, environment on fake trees --------------- */

static void fake_driver_tree(const char *proc_version, const char *sys_version)
{
	write_str(T("/proc/driver/nvidia/version"), proc_version);
	write_str(T("/sys/module/nvidia/version"), sys_version);
	mkdirs(T("/sys/module/nvidia_uvm/parameters"));
	write_str(T("/sys/module/nvidia_uvm/parameters/uvm_disable_hmm"), "N\n");
	write_str(T("/proc/devices"), "Character devices:\n  1 mem\n195 nvidia\n195 nvidiactl\n"
		  "238 nvidia-uvm\n241 nvidia-caps\n\nBlock devices:\n  7 loop\n");
	write_str(T("/proc/driver/nvidia/gpus/0000:00:05.0/information"),
		  "Model: \t\t NVIDIA H200\nIRQ:   \t\t 42\nGPU UUID: \t GPU-8a1b2c3d-0000-1111-2222-333344445555\n"
		  "Bus Location: \t 0000:00:05.0\n");
	write_str(T("/proc/driver/nvidia/params"), "ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\n"
		  "DeviceFileMode: 438\n");
}

START_TEST(t_kmod_parse_and_disagree)
{
	char *env[] = { NULL };
	struct ct_machine_report *r;

	fake_driver_tree("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  "
			 "Release Build  (nixbld@)  \nGCC version:  gcc version 15.3.0 (GCC) \n",
			 "580.126.09\n");
	r = check_tree(env);
	ck_assert(r->kmod.proc_present);
	ck_assert_str_eq(r->kmod.version, "580.159.04");
	ck_assert_str_eq(r->kmod.flavor, "open");
	ck_assert_str_eq(r->kmod.sys_version, "580.126.09");
	ck_assert(r->kmod.versions_disagree);
	ck_assert(r->kmod.uvm_loaded);
	ck_assert_str_eq(r->kmod.uvm_disable_hmm, "N");
	ck_assert_int_eq(r->kmod.major_nvidia, 195);
	ck_assert_int_eq(r->kmod.major_uvm, 238);
	ck_assert_int_eq(r->kmod.major_caps, 241);
	ck_assert_int_eq(r->kmod.gpu_count, 1);
	ck_assert_str_eq(r->kmod.gpus[0].model, "NVIDIA H200");
	ck_assert_str_eq(r->kmod.gpus[0].uuid, "GPU-8a1b2c3d-0000-1111-2222-333344445555");
	ck_assert_int_eq(r->kmod.n_params, 3);
	ck_assert_str_eq(r->kmod.params[1].name, "ModifyDeviceFiles");
	ck_assert_str_eq(r->kmod.params[1].value, "1");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, "/sys/module/nvidia/version says 580.126.09");
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_UVM, "uvm_disable_hmm");
	/* driver loaded, nodes missing: the fix creates them */
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE, "no NVIDIA device nodes");
	ck_assert_ptr_nonnull(strstr(find(r, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE, "no NVIDIA")->fix,
				     "nvidia-modprobe"));
	free(r);
}
END_TEST

START_TEST(t_kmod_absent_uvm_missing)
{
	char *env[] = { NULL };
	struct ct_machine_report *r;

	r = check_tree(env);
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE, "not loaded");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE, "no NVIDIA device nodes");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_LOADER, "not on the loader's search path");
	ck_assert_int_eq(r->n_problems, 3);
	free(r);

	/* nvidia loaded, nvidia_uvm not */
	write_str(T("/proc/driver/nvidia/version"),
		  "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\n");
	write_str(T("/proc/devices"), "Character devices:\n195 nvidia\n195 nvidiactl\n");
	mkdirs(T("/sys/module/nvidia"));
	r = check_tree(env);
	ck_assert_str_eq(r->kmod.flavor, "proprietary");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_UVM, "nvidia_uvm is not loaded");
	CK_FIND(r, CT_SEV_OK, CT_LAYER_KERNEL_HANDSHAKE, "550.54.14");
	free(r);
}
END_TEST

START_TEST(t_container_cgroup)
{
	char *env[] = { "NVIDIA_VISIBLE_DEVICES=void", "NVIDIA_DRIVER_CAPABILITIES=utility", NULL };
	struct ct_machine_report *r;

	write_str(T("/.dockerenv"), "");
	write_str(T("/proc/self/cgroup"), "12:devices:/docker/abc\n11:memory:/docker/abc\n");
	write_str(T("/sys/fs/cgroup/devices/docker/abc/devices.list"), "c 1:3 rwm\nc 136:* rwm\n");
	write_str(T("/proc/self/status"), "Name:\tx\nNoNewPrivs:\t1\n");
	r = check_tree(env);
	ck_assert(r->container.in_container);
	ck_assert_int_eq(r->container.devices_allowed, 0);
	ck_assert_int_eq(r->container.no_new_privs, 1);
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE, "device cgroup");
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_DEVICE_NODE, "NVIDIA_VISIBLE_DEVICES=void");
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_LOADER, "lacks 'compute'");
	free(r);

	write_str(T("/sys/fs/cgroup/devices/docker/abc/devices.list"), "c 195:* rwm\nc 238:* rwm\n");
	r = check_tree(env);
	ck_assert_int_eq(r->container.devices_allowed, 1);
	free(r);

	write_str(T("/proc/self/cgroup"), "0::/system.slice/docker-abc.scope\n");
	r = check_tree(env);
	ck_assert(r->container.cgroup_v2);
	ck_assert_int_eq(r->container.devices_allowed, -1);
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_DEVICE_NODE, "BPF");
	free(r);
}
END_TEST

static struct ct_machine_report *with_cvd(const char *v)
{
	char *env[2] = { NULL, NULL };
	struct ct_machine_report *r;

	env[0] = envs("CUDA_VISIBLE_DEVICES=%s%s%s", v, "", "");
	r = check_tree(env);
	free(env[0]);
	return r;
}

START_TEST(t_env_cuda_visible_devices)
{
	struct ct_machine_report *r;

	fake_driver_tree("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  x\n",
			 "580.159.04\n");
	r = with_cvd("");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DRIVER_API, "empty");
	free(r);
	r = with_cvd("1");                        /* one GPU: index 1 is out of range */
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DRIVER_API, "out of range");
	free(r);
	r = with_cvd("0");
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_DRIVER_API, NULL);
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_DRIVER_API, "CUDA sees 1 GPU(s), renumbered");
	free(r);
	r = with_cvd("0,3");                      /* a later bad entry: warning */
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_DRIVER_API, "entry 1");
	free(r);
	r = with_cvd("GPU-8a1b2c3d");             /* UUID prefix of the fake GPU */
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_DRIVER_API, NULL);
	free(r);
	r = with_cvd("GPU-ffffffff");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DRIVER_API, "UUID");
	free(r);
	r = with_cvd("-1");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DRIVER_API, "negative");
	free(r);
	/* a repeated GPU hides every GPU (PyTorch's model of the driver, selectors.h) */
	r = with_cvd("0,0");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DRIVER_API, "entry 1 '0' names a GPU a second time");
	free(r);
	r = with_cvd("0gpu,+0"); /* strtoul-like: "0gpu" is 0, "+0" repeats it */
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DRIVER_API, "a second time");
	free(r);
	r = with_cvd("0,one,2");
	CK_FIND(r, CT_SEV_WARN, CT_LAYER_DRIVER_API, "entry 1 'one' is neither a GPU index");
	free(r);
	r = with_cvd("MIG-4f2a"); /* no /dev/nvidia-caps in the tree */
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DRIVER_API, "/dev/nvidia-caps is missing");
	free(r);
}
END_TEST

START_TEST(t_devices_regular_file)
{
	char *env[] = { NULL };
	struct ct_machine_report *r;

	write_str(T("/dev/nvidiactl"), "");
	r = check_tree(env);
	ck_assert(r->nodes[0].exists);
	ck_assert(!r->nodes[0].is_chr);
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE, "not a character device");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE, "no /dev/nvidiaN");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_UVM, "/dev/nvidia-uvm is missing");
	free(r);
}
END_TEST

/* text and JSON writers on a populated report: no crash, JSON balanced */
START_TEST(t_output)
{
	char *env[2] = { NULL, NULL };
	struct ct_machine_report *r;
	char *buf = NULL;
	size_t n = 0;
	FILE *f;
	struct ct_json j;
	int depth = 0;

	fake_driver_tree("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  x\n",
			 "580.159.04\n");
	real_driver(T("/drv"), "580.159.04");
	copy_file(CT_CUDART, T("/rt/libcudart.so.13"));
	env[0] = envs("LD_LIBRARY_PATH=%s%s%s", T("/drv"), "", "");
	r = check_tree(env);
	f = open_memstream(&buf, &n);
	ct_machine_report_text(r, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "Device nodes"));
	ck_assert_ptr_nonnull(strstr(buf, "chosen"));
	ck_assert_ptr_nonnull(strstr(buf, "580.159.04"));
	free(buf);
	f = open_memstream(&buf, &n);
	ct_json_init(&j, f, false);
	ct_json_obj_begin(&j);
	ct_machine_report_json(r, &j);
	ct_json_obj_end(&j);
	fclose(f);
	for (size_t i = 0; i < n; i++)
		depth += buf[i] == '{' || buf[i] == '[' ? 1 : buf[i] == '}' || buf[i] == ']' ? -1 : 0;
	ck_assert_int_eq(depth, 0);    /* no brace inside strings in this report */
	ck_assert_ptr_nonnull(strstr(buf, "\"layer\":\"kernel-handshake\""));
	ck_assert_ptr_nonnull(strstr(buf, "\"state\":\"chosen\""));
	free(buf);
	free(env[0]);
	free(r);
}
END_TEST

/* doctor's owner/group names come from the passwd/group files themselves
 * (no NSS: the static one-file cutrace must not dlopen NSS modules) */
START_TEST(t_id_names)
{
	char b[16];

	write_str(T("/passwd"), "# comment\n\nroot:x:0:0:root:/root:/bin/bash\n"
		  "broken line\n:x:5:5::/:/bin/sh\nnoid:x::1::/:\nbad:x:4x:1::/:\n"
		  "averyveryverylongname:x:7:7::/:\nnvidia:x:1000:1000::/home:/bin/sh\n"
		  "dup:x:1000:1::/:\nlast:x:4294967295:0::/:");
	write_str(T("/group"), "root:x:0:\nvideo:x:44:alice,bob\nrender:x:105:\n");
	ck_assert_int_eq(ct_id_name(T("/passwd"), 0, b, sizeof b), 0);
	ck_assert_str_eq(b, "root");
	ck_assert_int_eq(ct_id_name(T("/passwd"), 1000, b, sizeof b), 0);
	ck_assert_str_eq(b, "nvidia"); /* the first entry wins */
	ck_assert_int_eq(ct_id_name(T("/passwd"), 4294967295u, b, sizeof b), 0);
	ck_assert_str_eq(b, "last");  /* no newline at the end */
	ck_assert_int_eq(ct_id_name(T("/passwd"), 5, b, sizeof b), -1); /* empty name */
	ck_assert_int_eq(ct_id_name(T("/passwd"), 4, b, sizeof b), -1); /* "4x" */
	ck_assert_int_eq(ct_id_name(T("/passwd"), 7, b, sizeof b), -1); /* too long for b */
	ck_assert_int_eq(ct_id_name(T("/passwd"), 1, b, sizeof b), -1);
	ck_assert_int_eq(ct_id_name(T("/group"), 44, b, sizeof b), 0);
	ck_assert_str_eq(b, "video");
	ck_assert_int_eq(ct_id_name(T("/group"), 105, b, sizeof b), 0);
	ck_assert_str_eq(b, "render");
	ck_assert_int_eq(ct_id_name(T("/missing"), 0, b, sizeof b), -1);
}
END_TEST

static Suite *doctor_suite(void)
{
	Suite *s = suite_create("doctor");
	TCase *elf = tcase_create("elfinfo"), *parse = tcase_create("parse"),
	      *loader = tcase_create("loader"), *machine = tcase_create("machine");

	tcase_add_checked_fixture(elf, tree_setup, tree_teardown);
	tcase_add_test(elf, t_elf_stub);
	tcase_add_test(elf, t_elf_stub_copied);
	tcase_add_test(elf, t_elf_cudart);
	tcase_add_test(elf, t_elf_fake_driver);
	tcase_add_test(elf, t_elf_nvml);
	tcase_add_test(elf, t_elf_32bit);
	tcase_add_test(elf, t_elf_errors);
	tcase_add_test(elf, t_elf_version_from_name);
	suite_add_tcase(s, elf);

	tcase_add_checked_fixture(parse, tree_setup, tree_teardown);
	tcase_add_test(parse, t_nvrm_version);
	tcase_add_test(parse, t_driver_table);
	tcase_add_test(parse, t_cuda_version_parse);
	tcase_add_test(parse, t_compat_matrix);
	tcase_add_test(parse, t_ldcache_system);
	tcase_add_test(parse, t_ldcache_bad_files);
	suite_add_tcase(s, parse);

	tcase_add_checked_fixture(loader, tree_setup, tree_teardown);
	tcase_set_timeout(loader, 30);
	tcase_add_test(loader, t_loader_stub_first);
	tcase_add_test(loader, t_loader_wrong_class_skipped);
	tcase_add_test(loader, t_loader_invalid_elf_fatal);
	tcase_add_test(loader, t_loader_not_found_offpath);
	tcase_add_test(loader, t_loader_cache_and_system);
	tcase_add_test(loader, t_contract_native_backward);
	tcase_add_test(loader, t_contract_mismatch);
	tcase_add_test(loader, t_contract_forward);
	tcase_add_test(loader, t_skew_803);
	suite_add_tcase(s, loader);

	tcase_add_checked_fixture(machine, tree_setup, tree_teardown);
	tcase_set_timeout(machine, 30);
	tcase_add_test(machine, t_kmod_parse_and_disagree);
	tcase_add_test(machine, t_kmod_absent_uvm_missing);
	tcase_add_test(machine, t_container_cgroup);
	tcase_add_test(machine, t_env_cuda_visible_devices);
	tcase_add_test(machine, t_devices_regular_file);
	tcase_add_test(machine, t_output);
	tcase_add_test(machine, t_id_names);
	suite_add_tcase(s, machine);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(doctor_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
