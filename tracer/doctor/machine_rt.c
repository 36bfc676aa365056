/*
 * doctor's checks of what the container runtime put here (issue 19, group 1;
 * failure catalog Part C, G1 and G4): the CDI specs of the NVIDIA container
 * toolkit against the running kernel module, the toolkit's ld.so.conf.d
 * drop-ins (00-compat-*, 00-nvcr-*), a musl loader (which ignores
 * /etc/ld.so.cache), and a container without /dev/nvidia-uvm while the
 * host's nvidia_uvm is loaded; and WSL2's layout (group 3, G3) instead of
 * /dev/nvidia*.
 *
 * CDI specs (/etc/cdi, /var/run/cdi; JSON or YAML) are read as text: the
 * driver version is the one in the file names the spec mounts
 * (libcuda.so.<ver>, libnvidia-ml.so.<ver>, /lib/firmware/nvidia/<ver>/),
 * which `nvidia-ctk cdi generate` writes from the driver it found; a spec
 * older than the module names files an upgrade removed (catalog G1:
 * HaveAGitGat/Tdarr#1423, "stat libEGL_nvidia.so.<old>").
 */
#define _GNU_SOURCE
#include "machine_int.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "version.h"

#define CDI_MAX_BYTES (1u << 20)

static const char *const cdi_dirs[] = { "/etc/cdi", "/var/run/cdi" };

/* the first "<marker><digits>.<digits>[.<digits>]" of text: the version */
static bool version_after(const char *text, const char *marker, char *ver, size_t len)
{
	for (const char *p = strstr(text, marker); p; p = strstr(p + 1, marker)) {
		const char *v = p + strlen(marker);
		size_t n = strspn(v, "0123456789.");
		unsigned parts[3];

		while (n && v[n - 1] == '.')
			n--;
		if (n && n < len && ct_version_parts(v, parts, 3) >= 2) {
			memcpy(ver, v, n);
			ver[n] = 0;
			return true;
		}
	}
	return false;
}

/* the host paths a spec mounts: "hostPath": "/x" (JSON) or hostPath: /x (YAML) */
static int missing_host_paths(struct ct_mctx *c, const char *text, char *first, size_t len)
{
	int missing = 0;

	for (const char *p = strstr(text, "hostPath"); p; p = strstr(p + 8, "hostPath")) {
		const char *v = p + 8;
		char path[PATH_MAX];
		size_t n;

		v += strspn(v, "\"': \t");
		if (*v != '/')
			continue;
		n = strcspn(v, "\"', \t\r\n}");
		if (!n || n >= sizeof path)
			continue;
		memcpy(path, v, n);
		path[n] = 0;
		if (!ct_m_exists(c, path)) {
			if (!missing++)
				ct_m_copy(first, len, path);
		}
	}
	return missing;
}

static void check_spec(struct ct_mctx *c, const char *logical, const char *text)
{
	struct ct_kmod *k = &c->r->kmod;
	const char *kver = k->version[0] ? k->version : k->sys_version;
	char ver[32] = "", from[40] = "", first[PATH_MAX] = "";
	static const char *const markers[] = { "libcuda.so.", "libnvidia-ml.so.", "/lib/firmware/nvidia/" };
	bool has_uvm = strstr(text, "/dev/nvidia-uvm") != NULL;
	int missing;
	struct ct_finding *f;

	/* only the NVIDIA vendor's specs */
	if (!strstr(text, "nvidia.com/"))
		return;
	for (size_t i = 0; i < sizeof markers / sizeof markers[0] && !ver[0]; i++)
		if (version_after(text, markers[i], ver, sizeof ver))
			snprintf(from, sizeof from, "%s%s", markers[i], ver);
	missing = missing_host_paths(c, text, first, sizeof first);
	if (ver[0] && kver[0] && ct_version_cmp(ver, kver) != 0) {
		f = ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_PROBLEM, CT_LAYER_LOADER,
			     "stale CDI spec %s: it was generated for driver %s (%s), the loaded kernel "
			     "module is %s; containers started with it fail ('stat ...%s: no such file') "
			     "or get the old driver's libraries",
			     logical, ver, from, kver, from);
		ct_m_fix(f,
			 "sudo nvidia-ctk cdi generate --output=%s (after every driver upgrade), then "
			 "recreate the containers",
			 logical);
	} else if (ver[0] && kver[0]) {
		ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_OK, CT_LAYER_LOADER,
			 "CDI spec %s: driver %s, the loaded kernel module's", logical, ver);
	} else {
		ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_INFO, CT_LAYER_LOADER,
			 "CDI spec %s names no driver version%s%s", logical,
			 kver[0] ? "" : " (and no kernel module version is known here)", "");
	}
	if (missing) {
		f = ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_WARN, CT_LAYER_LOADER,
			     "CDI spec %s mounts %d host path%s that do%s not exist here (first: %s)",
			     logical, missing, missing == 1 ? "" : "s", missing == 1 ? "es" : "", first);
		ct_m_fix(f, "sudo nvidia-ctk cdi generate --output=%s", logical);
	}
	if (!has_uvm && (k->uvm_loaded || k->major_uvm >= 0)) {
		f = ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_WARN, CT_LAYER_UVM,
			     "CDI spec %s has no /dev/nvidia-uvm although nvidia_uvm is loaded (it was "
			     "generated before the module loaded): its containers get no uvm node and "
			     "cuInit returns 999 there",
			     logical);
		ct_m_fix(f,
			 "sudo nvidia-ctk cdi generate --output=%s (now that nvidia_uvm is loaded; "
			 "load it at boot: nvidia-modprobe -u -c 0)",
			 logical);
	}
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* sorted names of the regular entries of a directory under root; count */
static int list_dir(struct ct_mctx *c, const char *logical, char **names, int max)
{
	char p[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int n = 0;

	ct_m_path(c, p, sizeof p, logical);
	if (!(d = opendir(p)))
		return 0;
	while ((de = readdir(d)) != NULL && n < max)
		if (de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof names[0], cmp_name);
	return n;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static void check_cdi(struct ct_mctx *c)
{
	char *text = malloc(CDI_MAX_BYTES);

	if (!text)
		return;
	for (size_t i = 0; i < sizeof cdi_dirs / sizeof cdi_dirs[0]; i++) {
		char *names[64];
		int n = list_dir(c, cdi_dirs[i], names, 64);

		for (int k = 0; k < n; k++) {
			char logical[PATH_MAX];

			snprintf(logical, sizeof logical, "%s/%s", cdi_dirs[i], names[k]);
			if ((ends_with(names[k], ".yaml") || ends_with(names[k], ".yml") ||
			     ends_with(names[k], ".json")) &&
			    ct_m_read(c, logical, text, CDI_MAX_BYTES) > 0)
				check_spec(c, logical, text);
			free(names[k]);
		}
	}
	free(text);
}

/* ---- ld.so.conf.d drop-ins of the toolkit -------------------------------- */

/* the first directory a drop-in lists */
static bool dropin_dir(struct ct_mctx *c, const char *logical, char *dir, size_t len)
{
	char buf[4096], *save = NULL;

	if (ct_m_read(c, logical, buf, sizeof buf) <= 0)
		return false;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		l += strspn(l, " \t");
		if (*l == '/') {
			ct_m_copy(dir, len, ct_m_chomp(l));
			return true;
		}
	}
	return false;
}

/* the version of the first libcuda.so.<ver> in a directory */
static bool libcuda_version_in(struct ct_mctx *c, const char *dir, char *ver, size_t len)
{
	char *names[256];
	int n = list_dir(c, dir, names, 256);
	bool found = false;

	for (int i = 0; i < n; i++) {
		if (!found && !strncmp(names[i], "libcuda.so.", 11) &&
		    ct_version_from_name(names[i], ver, len) == 0 && strchr(ver, '.'))
			found = true;
		free(names[i]);
	}
	return found;
}

static void check_dropins(struct ct_mctx *c)
{
	struct ct_kmod *k = &c->r->kmod;
	const char *kver = k->version[0] ? k->version : k->sys_version;
	char *names[128];
	int n = list_dir(c, "/etc/ld.so.conf.d", names, 128);

	for (int i = 0; i < n; i++) {
		char logical[PATH_MAX], dir[PATH_MAX] = "", ver[32] = "";
		bool compat = !strncmp(names[i], "00-compat-", 10), nvcr = !strncmp(names[i], "00-nvcr-", 8);
		struct ct_finding *f;

		snprintf(logical, sizeof logical, "/etc/ld.so.conf.d/%s", names[i]);
		free(names[i]);
		if (!compat && !nvcr)
			continue;
		if (!dropin_dir(c, logical, dir, sizeof dir)) {
			ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_INFO, CT_LAYER_LOADER,
				 "%s (written by the NVIDIA container runtime) lists no directory", logical);
			continue;
		}
		if (nvcr) {
			ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_INFO, CT_LAYER_LOADER,
				 "%s: the NVIDIA container runtime put %s into ld.so.cache (it is searched "
				 "before the system directories)",
				 logical, dir);
			continue;
		}
		if (!libcuda_version_in(c, dir, ver, sizeof ver)) {
			ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_INFO, CT_LAYER_LOADER,
				 "%s: the toolkit's enable-cuda-compat hook selected %s (no libcuda.so.<version> "
				 "there)",
				 logical, dir);
		} else if (kver[0] && ct_version_cmp(ver, kver) <= 0) {
			f = ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_WARN, CT_LAYER_LOADER,
				     "%s puts the cuda-compat libcuda %s of %s in front of the host driver %s, "
				     "which is not older: the compat library is not needed and must match the "
				     "kernel module exactly (else cuInit 803)",
				     logical, ver, dir, kver);
			ct_m_fix(f,
				 "rm %s && ldconfig (in the container), or use an image without "
				 "%s",
				 logical, dir);
		} else {
			ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_INFO, CT_LAYER_LOADER,
				 "%s: forward compatibility: the toolkit's enable-cuda-compat hook put the "
				 "cuda-compat libcuda %s (%s) in front of the host driver %s (data-center GPUs "
				 "only; 804 on others)",
				 logical, ver, dir, kver[0] ? kver : "(version unknown)");
		}
	}
}

/* ---- musl ---------------------------------------------------------------- */

static void check_musl(struct ct_mctx *c)
{
	char *names[64], loader[PATH_MAX] = "", arch[32] = "", pathfile[PATH_MAX], list[8192] = "";
	int n = list_dir(c, "/lib", names, 64);
	const struct ct_libsearch *s = &c->r->cuda;
	const char *llp = ct_m_env(c, "LD_LIBRARY_PATH");
	struct ct_finding *f;

	for (int i = 0; i < n; i++) {
		/* /lib/ld-musl-x86_64.so.1 */
		if (!loader[0] && !strncmp(names[i], "ld-musl-", 8) && ends_with(names[i], ".so.1")) {
			snprintf(loader, sizeof loader, "/lib/%s", names[i]);
			snprintf(arch, sizeof arch, "%.*s", (int)(strlen(names[i]) - 13), names[i] + 8);
		}
		free(names[i]);
	}
	if (!loader[0])
		return;
	snprintf(pathfile, sizeof pathfile, "/etc/ld-musl-%s.path", arch);
	ct_m_read(c, pathfile, list, sizeof list);
	if (s->chosen >= 0) {
		const struct ct_libcand *k = &s->c[s->chosen];
		char dir[CT_ELF_PATH_MAX];
		char *slash;

		ct_m_copy(dir, sizeof dir, k->path);
		if ((slash = strrchr(dir, '/')))
			*slash = 0;
		if (k->src == CT_SRC_LD_CACHE && !strstr(list, dir) && !(llp && strstr(llp, dir))) {
			f = ct_m_add(
				c, CT_SEC_LIBS, CT_SEV_WARN, CT_LAYER_LOADER,
				"musl loader %s here: programs linked against musl ignore /etc/ld.so.cache, "
				"and libcuda.so.1 (%s) is found only through the cache: a musl program "
				"cannot load it (the symptom can be a misleading 'Operation not permitted')",
				loader, k->path);
			ct_m_fix(f, "echo %s >> %s (or LD_LIBRARY_PATH=%s for the program)", dir, pathfile,
				 dir);
			return;
		}
	}
	ct_m_add(c, CT_SEC_LIBS, CT_SEV_INFO, CT_LAYER_LOADER,
		 "musl loader %s here: musl programs ignore /etc/ld.so.cache (they search "
		 "LD_LIBRARY_PATH, %s and /lib:/usr/local/lib:/usr/lib)",
		 loader, pathfile);
}

/* ---- the uvm node of a container ------------------------------------------ */

static void check_container_uvm(struct ct_mctx *c)
{
	struct ct_machine_report *r = c->r;
	const struct ct_devnode *uvm = NULL, *ctl = NULL;
	struct ct_finding *f;

	for (int i = 0; i < r->n_nodes; i++) {
		if (!strcmp(r->nodes[i].role, "uvm"))
			uvm = &r->nodes[i];
		else if (!strcmp(r->nodes[i].role, "ctl"))
			ctl = &r->nodes[i];
	}
	if (!r->container.in_container || !uvm || uvm->exists || !ctl || !ctl->exists ||
	    r->kmod.major_uvm < 0)
		return;
	f = ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_PROBLEM, CT_LAYER_UVM,
		     "this container has /dev/nvidiactl but no /dev/nvidia-uvm although the host's "
		     "nvidia_uvm is loaded (/proc/devices lists nvidia-uvm, major %d): the runtime's CDI "
		     "spec was generated before nvidia_uvm loaded, or the node was not passed; cuInit "
		     "returns 999 here while nvidia-smi works",
		     r->kmod.major_uvm);
	ct_m_fix(f, "on the host: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml and "
		    "recreate the container (or pass --device /dev/nvidia-uvm --device "
		    "/dev/nvidia-uvm-tools)");
}

/* ---- WSL2 ---------------------------------------------------------------- */
/*
 * WSL2 (issue 19 group 3, catalog G3): no /dev/nvidia* at all; CUDA is the
 * Windows driver's libcuda in /usr/lib/wsl/lib (mounted from the Windows
 * driver store, /usr/lib/wsl/drivers/<inf dir>/libcuda.so.1.1), which
 * reaches the GPU through libdxcore.so and /dev/dxg.  A Linux libcuda or
 * the toolkit stub first on the path shadows it (cuInit 100:
 * numba/numba#7106, NVIDIA/cuml#5624).
 */
static void check_wsl(struct ct_mctx *c)
{
	struct ct_machine_report *r = c->r;
	char ver[512] = "", *names[32], store[PATH_MAX] = "";
	bool kernel = false;
	int n, stores = 0;
	struct ct_finding *f;
	const struct ct_libsearch *ls[] = { &r->cuda, &r->cuda_dev };

	if (ct_m_read(c, "/proc/version", ver, sizeof ver) > 0)
		kernel = strstr(ver, "microsoft") || strstr(ver, "Microsoft") || strstr(ver, "WSL");
	if (!kernel && !r->wsl)
		return;
	if (kernel && !r->wsl) {
		f = ct_m_add(c, CT_SEC_DEVICES, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE,
			     "a WSL2 kernel (/proc/version) but no /dev/dxg: GPU paravirtualization is off here (or "
			     "the container got no /dev/dxg), so CUDA sees no GPU (cuInit 100)");
		ct_m_fix(f,
			 "update WSL and the Windows NVIDIA driver (wsl --update, then wsl --shutdown); in a "
			 "container on WSL pass --device /dev/dxg and mount /usr/lib/wsl (docker run --gpus all "
			 "does)");
	}
	if (!ct_m_exists(c, "/usr/lib/wsl/lib/libcuda.so.1")) {
		f = ct_m_add(c, CT_SEC_LIBS, CT_SEV_PROBLEM, CT_LAYER_LOADER,
			     "WSL2 without /usr/lib/wsl/lib/libcuda.so.1: the Windows NVIDIA driver's CUDA library "
			     "is not mounted here");
		ct_m_fix(f,
			 "install or update the NVIDIA driver on Windows (not in WSL), then wsl --shutdown; in "
			 "a container mount /usr/lib/wsl (-v /usr/lib/wsl:/usr/lib/wsl, or --gpus all)");
	}
	if (!ct_m_exists(c, "/usr/lib/wsl/lib/libdxcore.so")) {
		f = ct_m_add(c, CT_SEC_LIBS, CT_SEV_PROBLEM, CT_LAYER_LOADER,
			     "WSL2 without /usr/lib/wsl/lib/libdxcore.so: the WSL libcuda reaches the GPU through "
			     "it (containers need it too, docker/buildx#3295)");
		ct_m_fix(f, "mount /usr/lib/wsl into the container (or update WSL: wsl --update)");
	}
	n = list_dir(c, "/usr/lib/wsl/drivers", names, 32);
	for (int i = 0; i < n; i++) {
		char lib[PATH_MAX];
		snprintf(lib, sizeof lib, "/usr/lib/wsl/drivers/%s/libcuda.so.1.1", names[i]);
		if (ct_m_exists(c, lib) && !stores++)
			ct_m_copy(store, sizeof store, lib);
		free(names[i]);
	}
	if (stores)
		ct_m_add(c, CT_SEC_LIBS, CT_SEV_OK, CT_LAYER_LOADER,
			 "WSL2: the Windows driver store provides %s%s", store,
			 stores > 1 ? " (and more driver directories)" : "");
	else
		ct_m_add(c, CT_SEC_LIBS, CT_SEV_WARN, CT_LAYER_LOADER,
			 "WSL2: no /usr/lib/wsl/drivers/*/libcuda.so.1.1 (the Windows driver store is not mounted)");
	for (size_t k = 0; k < sizeof ls / sizeof ls[0]; k++) {
		const struct ct_libsearch *s = ls[k];
		const struct ct_libcand *cand = s->chosen >= 0 ? &s->c[s->chosen] : NULL;
		char dir[CT_ELF_PATH_MAX], *sl;

		if (!cand || !strncmp(cand->path, "/usr/lib/wsl/", 13))
			continue;
		ct_m_copy(dir, sizeof dir, cand->path);
		if ((sl = strrchr(dir, '/')))
			*sl = 0;
		f = ct_m_add(c, CT_SEC_LIBS, CT_SEV_PROBLEM, CT_LAYER_LOADER,
			     "WSL2: %s resolves to %s (%s, %s), not to /usr/lib/wsl/lib: %s shadows the Windows "
			     "driver's and looks for /dev/nvidia*, which WSL does not have (cuInit 100)",
			     s->name, cand->path, ct_cand_src_name(cand->src),
			     (cand->elf.flags & CT_ELF_STUB) ? "the toolkit stub"
							     : "a Linux driver's library",
			     (cand->elf.flags & CT_ELF_STUB) ? "the stub" : "it");
		if (cand->elf.flags & CT_ELF_STUB)
			ct_m_fix(f, "remove %s from LD_LIBRARY_PATH (stubs are for linking only)", dir);
		else
			ct_m_fix(f,
				 "never install a Linux NVIDIA driver inside WSL: dpkg -S %s names its package, "
				 "sudo apt-get remove --purge it, take %s out of LD_LIBRARY_PATH and run sudo "
				 "ldconfig (/etc/ld.so.conf.d/ld.wsl.conf puts /usr/lib/wsl/lib first)",
				 cand->path, dir);
	}
}

void ct_m_check_runtime(struct ct_mctx *c)
{
	check_wsl(c);
	check_cdi(c);
	check_dropins(c);
	check_musl(c);
	check_container_uvm(c);
}
