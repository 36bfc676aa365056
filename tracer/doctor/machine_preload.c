/*
 * Other libraries in the CUDA call path (failure catalog G5): what
 * LD_PRELOAD and /etc/ld.so.preload load into every program, and what is
 * mapped into doctor's own process (which inherited the same preloads)
 * besides the C library, the loader, libcuda and cutrace.  Each is named
 * with the calls of CUDA's start-up path it defines (cuInit,
 * cuGetProcAddress, dlsym, dlopen, ioctl, open, nvmlInit, read from its
 * .dynsym without loading it): a preloaded object that defines them
 * answers them before libcuda or libc does.  HAMi-core's libvgpu.so is one
 * (it turns the driver's answer into a bare 100 or 999, Project-HAMi/HAMi#1202).
 */
#include "machine_int.h"
#include "elfinfo.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SEEN 48

struct seen {
	int n;
	char path[MAX_SEEN][CT_ELF_PATH_MAX]; /* logical paths already reported or skipped */
};

enum source {
	SRC_ENV,
	SRC_FILE,
	SRC_MAPS
};

static const char *base_of(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

static bool starts(const char *s, const char *pre)
{
	return !strncmp(s, pre, strlen(pre));
}

/* interposers known by name (the shim's snapshot names the same ones) */
static const char *known_interposer(const char *base)
{
	if (starts(base, "libvgpu"))
		return "HAMi-core's GPU-sharing interposer";
	if (starts(base, "libcuda-control"))
		return "tkestack's vcuda-controller";
	return NULL;
}

/* objects that are the stack itself: the loader, the C library, the driver, cutrace */
static bool is_stack(const char *base)
{
	static const char *const pre[] = { "ld-linux",    "ld64.so",    "libc.so",    "libc-",
					   "libdl.so",    "libdl-",     "libpthread", "libm.so",
					   "librt.so",    "libcuda.so", "libnvidia-", "libcutrace",
					   "libcudart.so" };
	for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
		if (starts(base, pre[i]))
			return true;
	return false;
}

static bool seen_add(struct seen *s, const char *logical)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->path[i], logical))
			return false;
	if (s->n < MAX_SEEN)
		ct_m_copy(s->path[s->n++], sizeof s->path[0], logical);
	return true;
}

/* a name without '/' as ld.so finds it: LD_LIBRARY_PATH, then the system
 * directories (under root); the logical path into out, or false */
static bool find_name(const struct ct_mctx *c, const char *name, char *out, size_t len)
{
	static const char *const sys[] = { "/lib64",
					   "/usr/lib64",
					   "/lib/x86_64-linux-gnu",
					   "/usr/lib/x86_64-linux-gnu",
					   "/lib/aarch64-linux-gnu",
					   "/usr/lib/aarch64-linux-gnu",
					   "/lib",
					   "/usr/lib",
					   NULL };
	const char *const *dirs = c->o->system_dirs ? c->o->system_dirs : sys;
	const char *llp = ct_m_env(c, "LD_LIBRARY_PATH");
	char p[PATH_MAX];

	for (const char *d = llp; d && *d;) {
		size_t n = strcspn(d, ":;");
		if (n) {
			snprintf(out, len, "%.*s/%s", (int)n, d, name);
			if (ct_m_exists(c, out))
				return true;
		}
		d += n;
		d += *d ? 1 : 0;
	}
	for (int i = 0; dirs[i]; i++) {
		snprintf(p, sizeof p, "%s/%s", dirs[i], name);
		if (ct_m_exists(c, p)) {
			ct_m_copy(out, len, p);
			return true;
		}
	}
	return false;
}

static void check_one(struct ct_mctx *c, struct seen *s, enum source src, const char *entry)
{
	static struct ct_elfinfo e;
	const char *where = src == SRC_ENV ? "LD_PRELOAD" : "/etc/ld.so.preload";
	char logical[CT_ELF_PATH_MAX], phys[PATH_MAX], defs[96];
	const char *base = base_of(entry), *known;
	enum ct_section sec = src == SRC_ENV ? CT_SEC_ENV : CT_SEC_LIBS;
	struct ct_finding *f;
	bool hooks_cuda;

	if (!*entry || starts(base, "libcutrace"))
		return;
	if (strchr(entry, '/')) {
		ct_m_copy(logical, sizeof logical, entry);
	} else if (!find_name(c, entry, logical, sizeof logical)) {
		if (!seen_add(s, entry))
			return;
		f = ct_m_add(c, sec, CT_SEV_WARN, CT_LAYER_LOADER,
			     "%s names %s, which the loader does not find: every program prints \"object '%s' "
			     "... cannot be preloaded\" and runs without it",
			     where, entry, entry);
		ct_m_fix(f, "remove %s from %s, or give its full path", entry, where);
		return;
	}
	if (!seen_add(s, logical))
		return;
	/* mapped objects are this machine's own files; preloads are read under root */
	if (src == SRC_MAPS)
		ct_m_copy(phys, sizeof phys, logical);
	else
		ct_m_path(c, phys, sizeof phys, logical);
	memset(&e, 0, sizeof e);
	if (ct_elf_inspect(phys, &e) < 0) {
		if (src == SRC_MAPS)
			return;
		f = ct_m_add(c, sec, CT_SEV_WARN, CT_LAYER_LOADER,
			     "%s names %s, which cannot be preloaded (%s): every program prints \"object '%s' "
			     "... cannot be preloaded\" and runs without it",
			     where, logical, e.error, logical);
		ct_m_fix(f, "remove %s from %s", logical, where);
		return;
	}
	if (src == SRC_MAPS && is_stack(base))
		return;
	known = known_interposer(base);
	ct_elf_hooks_str(e.hooks, defs, sizeof defs);
	hooks_cuda = e.hooks & (CT_ELF_DEF_CUINIT | CT_ELF_DEF_GPA | CT_ELF_DEF_DLSYM | CT_ELF_DEF_IOCTL |
				CT_ELF_DEF_NVML);
	if (src == SRC_MAPS && !known && !hooks_cuda)
		return;
	if (!known && !e.hooks) {
		ct_m_add(c, sec, CT_SEV_INFO, CT_LAYER_LOADER,
			 "%s loads %s into every program; it defines none of cuInit, cuGetProcAddress, dlsym, "
			 "dlopen, ioctl, open, nvmlInit",
			 where, logical);
		return;
	}
	if (src == SRC_MAPS)
		f = ct_m_add(c, CT_SEC_LIBS, hooks_cuda || known ? CT_SEV_WARN : CT_SEV_INFO, CT_LAYER_LOADER,
			     "%s%s%s%s is mapped into this process (so into the programs started from here, "
			     "though neither LD_PRELOAD nor /etc/ld.so.preload names it) and defines %s: CUDA "
			     "calls pass through it, and it may answer for the driver",
			     logical, known ? " (" : "", known ? known : "", known ? ")" : "",
			     defs[0] ? defs : "nothing on the CUDA path");
	else
		f = ct_m_add(c, sec, hooks_cuda || known ? CT_SEV_WARN : CT_SEV_INFO, CT_LAYER_LOADER,
			     "%s loads %s%s%s%s into every program%s; it defines %s: CUDA calls pass through it, "
			     "and it may answer for the driver",
			     where, logical, known ? " (" : "", known ? known : "", known ? ")" : "",
			     src == SRC_FILE ? " on this machine" : "",
			     defs[0] ? defs : "nothing on the CUDA path");
	if (src == SRC_ENV)
		ct_m_fix(f,
			 "when CUDA fails, run once without it (unset LD_PRELOAD, or drop %s from it) and "
			 "compare the verdicts of 'cutrace run'%s",
			 logical,
			 known && starts(base, "libvgpu") ? "; for HAMi: a pod without the vGPU resource"
							  : "");
	else if (src == SRC_FILE)
		ct_m_fix(f,
			 "when CUDA fails, remove the line %s from /etc/ld.so.preload (it applies to every "
			 "process), run once more and compare the verdicts of 'cutrace run'",
			 logical);
	else
		ct_m_fix(f, "find who loads it (a wrapper script, a container entrypoint, an audit library: "
			    "LD_AUDIT) and run once without it");
}

/* entries of a list separated by ':' or blanks (ld.so's own rule for both) */
static void each_entry(struct ct_mctx *c, struct seen *s, enum source src, const char *list)
{
	char one[CT_ELF_PATH_MAX];

	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, ": \t\n");
		if (n && n < sizeof one) {
			memcpy(one, p, n);
			one[n] = 0;
			check_one(c, s, src, one);
		}
		p += n;
		p += strspn(p, ": \t\n");
	}
}

/* the file names of a maps file (fields: address perms offset dev inode path) */
static void each_mapped(struct ct_mctx *c, struct seen *s, const char *maps)
{
	FILE *fp = fopen(maps, "re");
	char line[PATH_MAX + 128];

	if (!fp)
		return;
	while (fgets(line, sizeof line, fp)) {
		char *p = strchr(line, '/');
		if (!p)
			continue;
		ct_m_chomp(p);
		if (strstr(p, " (deleted)"))
			*strstr(p, " (deleted)") = 0;
		if (!strstr(base_of(p), ".so"))
			continue; /* the program itself, data files */
		check_one(c, s, SRC_MAPS, p);
	}
	fclose(fp);
}

void ct_m_check_preload(struct ct_mctx *c)
{
	static struct seen s;
	static char file[4096];
	const char *v;

	memset(&s, 0, sizeof s);
	if ((v = ct_m_env(c, "LD_PRELOAD")) != NULL && *v)
		each_entry(c, &s, SRC_ENV, v);
	if (ct_m_read(c, "/etc/ld.so.preload", file, sizeof file) > 0)
		each_entry(c, &s, SRC_FILE, file);
	/* this process: what the loader really mapped (only on the machine itself) */
	v = c->o->maps ? c->o->maps : (c->root[0] ? "" : "/proc/self/maps");
	if (*v)
		each_mapped(c, &s, v);
}
