/*
 * doctor's hardware checks (failure catalog Part C, G2 and G10; B.14): the
 * NVIDIA GPUs on the PCI bus and the driver bound to each, named from
 * pci.ids; the module file built for the running kernel; Secure Boot and
 * kernel lockdown; the GSP firmware files of the loaded version; the kernel
 * log's NVRM lines (RmInitAdapter decoded).  Each path is read under the
 * check's root, so tests build them in a tree.
 */
#define _GNU_SOURCE
#include "machine_int.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmt.h"
#include "version.h"
#include "xlat.h"

/* efivars' SecureBoot variable: 4 bytes of attributes, then the value */
#define SECURE_BOOT_VAR "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

static unsigned long hex_file(struct ct_mctx *c, const char *dir, const char *name, bool *ok)
{
	char p[PATH_MAX], buf[32];

	snprintf(p, sizeof p, "%s/%s", dir, name);
	*ok = ct_m_read(c, p, buf, sizeof buf) > 0;
	return *ok ? strtoul(buf, NULL, 16) : 0;
}

static int cmp_pci(const void *a, const void *b)
{
	return strcmp(((const struct ct_pcidev *)a)->addr, ((const struct ct_pcidev *)b)->addr);
}

/* NVIDIA display-class functions (class 0x03xxxx: VGA and 3D controllers;
 * NVSwitches and audio functions are left out) */
static void collect_pci(struct ct_mctx *c)
{
	struct ct_hw *h = &c->r->hw;
	char p[PATH_MAX];
	struct dirent *de;
	DIR *d;

	ct_m_path(c, p, sizeof p, "/sys/bus/pci/devices");
	if (!(d = opendir(p)))
		return;
	while ((de = readdir(d)) != NULL && h->n_pci < CT_MAX_PCI) {
		char dir[PATH_MAX], link[PATH_MAX], target[PATH_MAX];
		struct ct_pcidev *g = &h->pci[h->n_pci];
		bool ok;
		ssize_t n;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof g->addr)
			continue;
		snprintf(dir, sizeof dir, "/sys/bus/pci/devices/%s", de->d_name);
		if (hex_file(c, dir, "vendor", &ok) != 0x10de || !ok)
			continue;
		memset(g, 0, sizeof *g);
		g->cls = (unsigned)hex_file(c, dir, "class", &ok);
		if (!ok || (g->cls >> 16) != 0x03)
			continue;
		g->device = (unsigned)hex_file(c, dir, "device", &ok);
		ct_m_copy(g->addr, sizeof g->addr, de->d_name);
		ct_m_path(c, link, sizeof link, dir);
		strncat(link, "/driver", sizeof link - strlen(link) - 1);
		n = readlink(link, target, sizeof target - 1);
		if (n > 0) {
			target[n] = 0;
			ct_m_copy(g->driver, sizeof g->driver,
				  strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
		}
		g->chip = ct_pci_nvidia_chip(g->device, &g->product);
		g->arch = ct_nvidia_arch(g->chip);
		h->n_pci++;
	}
	closedir(d);
	qsort(h->pci, (size_t)h->n_pci, sizeof h->pci[0], cmp_pci);
}

/* the nvidia.ko entry of modules.dep ("updates/dkms/nvidia.ko.zst: ...") */
static void collect_module_file(struct ct_mctx *c)
{
	struct ct_hw *h = &c->r->hw;
	char p[PATH_MAX], line[4096];
	FILE *f;

	snprintf(p, sizeof p, "%s/lib/modules/%s/modules.dep", c->root, h->kernel_release);
	if (!h->kernel_release[0] || !(f = fopen(p, "re")))
		return;
	h->modules_dep_read = true;
	while (fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':'), *base;
		if (!colon)
			continue;
		*colon = 0;
		base = strrchr(line, '/') ? strrchr(line, '/') + 1 : line;
		if (!strncmp(base, "nvidia.ko", 9) && (!base[9] || base[9] == '.')) {
			ct_m_copy(h->module_file, sizeof h->module_file, line);
			break;
		}
	}
	fclose(f);
}

/* DKMS builds: /var/lib/dkms/nvidia/<version>/<release>/ */
static void collect_dkms(struct ct_mctx *c)
{
	struct ct_hw *h = &c->r->hw;
	char p[PATH_MAX];
	struct dirent *de;
	DIR *d;

	ct_m_path(c, p, sizeof p, "/var/lib/dkms/nvidia");
	if (!h->kernel_release[0] || !(d = opendir(p)))
		return;
	while ((de = readdir(d)) != NULL) {
		char built[PATH_MAX];
		size_t used = strlen(h->dkms);
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(built, sizeof built, "/var/lib/dkms/nvidia/%s/%s", de->d_name, h->kernel_release);
		if (ct_m_exists(c, built) && used + strlen(de->d_name) + 2 < sizeof h->dkms)
			snprintf(h->dkms + used, sizeof h->dkms - used, "%s%s", used ? " " : "", de->d_name);
	}
	closedir(d);
}

static void collect_security(struct ct_mctx *c)
{
	struct ct_hw *h = &c->r->hw;
	char buf[128];
	ssize_t n;

	h->secure_boot = -1;
	n = ct_m_read(c, SECURE_BOOT_VAR, buf, sizeof buf);
	if (n >= 5)
		h->secure_boot = buf[4] == 1;
	else if (n < 0 && ct_m_exists(c, "/sys/firmware/efi"))
		h->secure_boot = -1; /* EFI, but the variable is not readable here */
	else if (n < 0 && !c->r->container.in_container && ct_m_exists(c, "/sys/firmware/acpi"))
		h->secure_boot =
			0; /* no EFI: legacy boot has no Secure Boot (a container masks /sys/firmware) */
	if (ct_m_read(c, "/sys/kernel/security/lockdown", buf, sizeof buf) > 0) {
		char *a = strchr(buf, '['), *b = a ? strchr(a, ']') : NULL;
		if (a && b) {
			*b = 0;
			ct_m_copy(h->lockdown, sizeof h->lockdown, a + 1);
		}
	}
}

static void collect_firmware(struct ct_mctx *c)
{
	struct ct_hw *h = &c->r->hw;
	static const char *const roots[] = { "/lib/firmware/nvidia", "/usr/lib/firmware/nvidia" };

	h->fw_count = -1;
	if (!c->r->kmod.version[0])
		return;
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
		char logical[PATH_MAX], p[PATH_MAX];
		struct dirent *de;
		DIR *d;

		snprintf(logical, sizeof logical, "%s/%s", roots[i], c->r->kmod.version);
		ct_m_path(c, p, sizeof p, logical);
		if (!(d = opendir(p)))
			continue;
		ct_m_copy(h->fw_dir, sizeof h->fw_dir, logical);
		h->fw_count = 0;
		while ((de = readdir(d)) != NULL) {
			size_t n = strlen(de->d_name), used = strlen(h->fw_files);
			if (strncmp(de->d_name, "gsp_", 4) || n < 8 || strcmp(de->d_name + n - 4, ".bin"))
				continue;
			h->fw_count++;
			if (used + n + 2 < sizeof h->fw_files)
				snprintf(h->fw_files + used, sizeof h->fw_files - used, "%s%s",
					 used ? " " : "", de->d_name);
		}
		closedir(d);
		return;
	}
	/* neither exists: "" fw_dir, count 0 */
	h->fw_count = 0;
}

/* ---- the checks -------------------------------------------------------- */

static const char *gpu_name(const struct ct_pcidev *g, char *buf, size_t len)
{
	snprintf(buf, len, "%s (10de:%04x%s%s%s%s%s%s%s)", g->addr, g->device, g->chip ? " " : "",
		 g->chip ? g->chip : ", not in cutrace's pci.ids table", g->product && *g->product ? " " : "",
		 g->product ? g->product : "", g->arch ? ", " : "", g->arch ? g->arch : "", "");
	return buf;
}

static unsigned branch_of(const char *version)
{
	unsigned v[3];
	return ct_version_parts(version, v, 3) > 0 ? v[0] : 0;
}

static bool dropped_by_590(const char *arch)
{
	return arch && (!strcmp(arch, "Maxwell") || !strcmp(arch, "Pascal") || !strcmp(arch, "Volta"));
}

/* the version the check holds the GPUs against: the loaded module's, else
 * the newest DKMS build for this kernel */
static const char *driver_branch_version(const struct ct_machine_report *r, char *buf, size_t len)
{
	const char *best = NULL;
	char tmp[96];

	if (r->kmod.version[0])
		return r->kmod.version;
	ct_m_copy(tmp, sizeof tmp, r->hw.dkms);
	for (char *save = NULL, *t = strtok_r(tmp, " ", &save); t; t = strtok_r(NULL, " ", &save))
		if (!best || ct_version_cmp(t, best) > 0) {
			ct_m_copy(buf, len, t);
			best = buf;
		}
	return best;
}

static void check_pci(struct ct_mctx *c)
{
	struct ct_machine_report *r = c->r;
	const struct ct_kmod *k = &r->kmod;
	char name[160], vb[32];
	const char *drv_version = driver_branch_version(r, vb, sizeof vb);
	unsigned branch = drv_version ? branch_of(drv_version) : 0;
	struct ct_finding *f;

	for (int i = 0; i < r->hw.n_pci; i++) {
		const struct ct_pcidev *g = &r->hw.pci[i];

		gpu_name(g, name, sizeof name);
		if (branch >= 590 && dropped_by_590(g->arch)) {
			bool volta = !strcmp(g->arch, "Volta");
			f = ct_m_add(c, CT_SEC_KMOD, volta ? CT_SEV_WARN : CT_SEV_PROBLEM,
				     CT_LAYER_KERNEL_HANDSHAKE,
				     "GPU %s is a %s GPU and the driver is %s: the 590 branch dropped Maxwell and "
				     "Pascal%s (dmesg: 'supported through the NVIDIA 580.xx Legacy drivers ... will "
				     "ignore this GPU'), so no driver serves it",
				     name, g->arch, drv_version,
				     volta ? " (Volta too, not confirmed here)" : "");
			ct_m_fix(f,
				 "install the 580 branch, the last one for %s (e.g. 'sudo apt install "
				 "nvidia-driver-580' on Ubuntu, the 580xx legacy package elsewhere), then reboot",
				 g->arch);
			continue;
		}
		if (g->arch && !strcmp(g->arch, "Blackwell") && !strcmp(k->flavor, "proprietary")) {
			f = ct_m_add(c, CT_SEC_KMOD, CT_SEV_PROBLEM, CT_LAYER_RESOURCE_MANAGER,
				     "GPU %s needs the open kernel module, and the loaded one is proprietary "
				     "(dmesg: 'requires use of the NVIDIA open kernel modules', then 'RmInitAdapter "
				     "failed! (0x22:0x56:...)'; opens of its node fail with EIO)",
				     name);
			ct_m_fix(f,
				 "install the open flavour of the same version (e.g. 'sudo apt install "
				 "nvidia-driver-%u-open' on Ubuntu, 'nvidia-open' from NVIDIA's repositories, or the "
				 ".run with -m=kernel-open) and reboot",
				 branch ? branch : 580);
			continue;
		}
		if (!strcmp(g->driver, "nouveau")) {
			f = ct_m_add(c, CT_SEC_KMOD, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE,
				     "GPU %s is bound to nouveau, not to nvidia: CUDA cannot use it", name);
			ct_m_fix(f,
				 "blacklist nouveau ('blacklist nouveau' and 'options nouveau modeset=0' in "
				 "/etc/modprobe.d/blacklist-nouveau.conf), 'sudo update-initramfs -u' (dracut -f on "
				 "EL), and reboot");
		} else if (!strcmp(g->driver, "vfio-pci")) {
			ct_m_add(c, CT_SEC_KMOD, CT_SEV_INFO, CT_LAYER_NONE,
				 "GPU %s is bound to vfio-pci (passed to a virtual machine): not usable here",
				 name);
		} else if (!g->driver[0] && k->nvidia_loaded) {
			f = ct_m_add(c, CT_SEC_KMOD, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE,
				     "GPU %s has no driver bound although the nvidia module is loaded: the module "
				     "refused it (a GPU this branch does not support, excluded with NVreg_ExcludedGpus, "
				     "or its probe failed)",
				     name);
			ct_m_fix(f,
				 "'sudo dmesg | grep NVRM' says why; 'nvidia-smi -L' lists the GPUs the driver "
				 "took");
		} else if (!g->driver[0]) {
			ct_m_add(c, CT_SEC_KMOD, CT_SEV_INFO, CT_LAYER_KERNEL_HANDSHAKE,
				 "GPU %s has no driver bound (the nvidia module is not loaded)", name);
		}
	}
}

static void check_module_file(struct ct_mctx *c)
{
	struct ct_machine_report *r = c->r;
	const struct ct_kmod *k = &r->kmod;
	const struct ct_hw *h = &r->hw;
	struct ct_finding *f;
	bool loaded = k->nvidia_loaded || k->proc_present;

	if (!h->kernel_release[0])
		return;
	if (h->secure_boot == 1 || (h->lockdown[0] && strcmp(h->lockdown, "none")))
		ct_m_add(c, CT_SEC_KMOD, CT_SEV_INFO, CT_LAYER_KERNEL_HANDSHAKE,
			 "Secure Boot %s, kernel lockdown %s: only modules signed with an enrolled key load",
			 h->secure_boot == 1   ? "on"
			 : h->secure_boot == 0 ? "off"
					       : "unknown",
			 h->lockdown[0] ? h->lockdown : "unknown");
	/* a container sees the host's kernel but rarely its /lib/modules */
	if (!h->modules_dep_read) {
		if (!loaded && !r->container.in_container)
			ct_m_add(c, CT_SEC_KMOD, CT_SEV_INFO, CT_LAYER_KERNEL_HANDSHAKE,
				 "/lib/modules/%s/modules.dep is not readable: cannot tell whether nvidia.ko "
				 "was built for this kernel",
				 h->kernel_release);
		return;
	}
	if (!loaded && !h->module_file[0]) {
		f = ct_m_add(c, CT_SEC_KMOD, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE,
			     "no nvidia.ko for the running kernel %s (not in /lib/modules/%s/modules.dep)%s%s: the "
			     "driver was not built for this kernel (DKMS failed after a kernel update, or the "
			     "kernel's prebuilt module package is missing)",
			     h->kernel_release, h->kernel_release, h->dkms[0] ? "; DKMS lists " : "",
			     h->dkms);
		ct_m_fix(f,
			 "sudo dkms autoinstall -k %s (its log: /var/lib/dkms/nvidia/*/build/make.log; "
			 "the kernel headers must be installed), or install the driver's module package for "
			 "this kernel (Ubuntu: linux-modules-nvidia-<branch>-$(uname -r)); then sudo modprobe nvidia",
			 h->kernel_release);
	} else if (!loaded && (h->secure_boot == 1 || !strcmp(h->lockdown, "integrity") ||
			       !strcmp(h->lockdown, "confidentiality"))) {
		f = ct_m_add(c, CT_SEC_KMOD, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE,
			     "nvidia.ko exists for this kernel (%s) but is not loaded, and Secure Boot/lockdown "
			     "is on: a module signed with a key the firmware does not know is refused%s%s",
			     h->module_file, h->kmsg.line[CT_KMSG_KEY_REJECTED][0] ? " (kernel log: " : "",
			     h->kmsg.line[CT_KMSG_KEY_REJECTED]);
		if (h->kmsg.line[CT_KMSG_KEY_REJECTED][0])
			ct_appendf(f->summary, sizeof f->summary, ")");
		ct_m_fix(f,
			 "enroll the DKMS signing key: 'sudo mokutil --import /var/lib/dkms/mok.pub' and "
			 "confirm it at the next boot (or sign the module yourself, or turn Secure Boot off); "
			 "then sudo modprobe nvidia");
	} else if (!loaded) {
		ct_m_add(c, CT_SEC_KMOD, CT_SEV_INFO, CT_LAYER_KERNEL_HANDSHAKE,
			 "nvidia.ko for this kernel: %s (not loaded)", h->module_file);
	} else {
		ct_m_add(c, CT_SEC_KMOD, CT_SEV_OK, CT_LAYER_KERNEL_HANDSHAKE,
			 "module file for kernel %s: %s%s%s", h->kernel_release,
			 h->module_file[0] ? h->module_file : "none in modules.dep",
			 h->dkms[0] ? " (DKMS: " : "", h->dkms[0] ? h->dkms : "");
		if (h->dkms[0])
			ct_appendf(r->findings[r->n_findings - 1].summary, sizeof r->findings[0].summary,
				   ")");
	}
	/* DKMS built another version for this kernel than the one loaded: the
	 * next boot switches; until then the new user space mismatches (B.1) */
	if (loaded && k->version[0] && h->dkms[0] && !strstr(h->dkms, k->version)) {
		f = ct_m_add(c, CT_SEC_KMOD, CT_SEV_WARN, CT_LAYER_KERNEL_HANDSHAKE,
			     "DKMS built nvidia %s for this kernel but %s is loaded: the driver was upgraded "
			     "without a reboot, and user-space libraries of the new version fail against the "
			     "loaded module (cuInit 803, NVML 'Driver/library version mismatch')",
			     h->dkms, k->version);
		ct_m_fix(f, "reboot (or unload and reload the modules: sudo rmmod nvidia_uvm nvidia_drm "
			    "nvidia_modeset nvidia && sudo modprobe nvidia nvidia_uvm)");
	}
}

static bool gpu_failed(const struct ct_machine_report *r)
{
	if (r->kmod.proc_present && r->kmod.gpu_count == 0)
		return true;
	for (int i = 0; i < r->hw.n_pci; i++)
		if (!r->hw.pci[i].driver[0] && r->kmod.nvidia_loaded)
			return true;
	for (int i = 0; i < r->n_nodes; i++)
		if (!strcmp(r->nodes[i].role, "gpu") && r->nodes[i].open_tried &&
		    r->nodes[i].open_errno == EIO)
			return true;
	return false;
}

static bool needs_gsp(const struct ct_machine_report *r)
{
	if (!strcmp(r->kmod.flavor, "open"))
		return true;
	for (int i = 0; i < r->hw.n_pci; i++) {
		const char *a = r->hw.pci[i].arch;
		if (a && strcmp(a, "Maxwell") && strcmp(a, "Pascal") && strcmp(a, "Volta"))
			return true;
	}
	return false;
}

static void check_firmware(struct ct_mctx *c)
{
	struct ct_machine_report *r = c->r;
	const struct ct_hw *h = &r->hw;
	struct ct_finding *f;
	enum ct_severity sev;

	if (h->fw_count < 0)
		return;
	if (h->fw_count > 0) {
		ct_m_add(c, CT_SEC_KMOD, CT_SEV_OK, CT_LAYER_RESOURCE_MANAGER, "GSP firmware for %s: %s/{%s}",
			 r->kmod.version, h->fw_dir, h->fw_files);
		return;
	}
	if (!needs_gsp(r))
		return;
	/* firmware is loaded by the host's kernel: a container rarely has it */
	sev = r->container.in_container ? CT_SEV_INFO : gpu_failed(r) ? CT_SEV_PROBLEM : CT_SEV_WARN;
	f = ct_m_add(c, CT_SEC_KMOD, sev, CT_LAYER_RESOURCE_MANAGER,
		     "no GSP firmware for the loaded driver %s (%s/gsp_*.bin%s): GPUs from Turing on cannot "
		     "start their GSP (RmInitAdapter 0x61 FIRMWARE_FETCH_FAILED, opens fail with EIO)%s",
		     r->kmod.version, h->fw_dir[0] ? h->fw_dir : "/lib/firmware/nvidia/<version>",
		     h->fw_dir[0] ? " missing" : ": no such directory",
		     r->container.in_container ? "; in a container the host's /lib/firmware is usually not "
						 "visible, so this may be fine"
					       : "");
	ct_m_fix(f,
		 "reinstall driver %s completely, firmware included (a half-finished upgrade leaves the "
		 "module without its firmware), and reboot",
		 r->kmod.version);
}

static void check_kmsg(struct ct_mctx *c)
{
	struct ct_machine_report *r = c->r;
	const struct ct_kmsg *m = &r->hw.kmsg;
	enum ct_severity sev = gpu_failed(r) ? CT_SEV_PROBLEM : CT_SEV_WARN;
	struct ct_finding *f;

	if (!m->read) {
		if (m->err && m->err != ENOENT)
			ct_m_add(c, CT_SEC_KMOD, CT_SEV_INFO, CT_LAYER_NONE,
				 "the kernel log is not readable here (%s): 'sudo dmesg | grep NVRM' shows "
				 "the driver's own reasons",
				 ct_errno_name(m->err) ? ct_errno_name(m->err) : strerror(m->err));
		return;
	}
	if (m->rminit) {
		const char *sn = ct_rminit_stage_name(m->stage), *st = ct_rminit_stage_text(m->stage);
		const char *status = ct_nv_status_name(m->status, 0);
		f = ct_m_add(c, CT_SEC_KMOD, sev, CT_LAYER_RESOURCE_MANAGER,
			     "kernel log: a GPU failed to initialize: RmInitAdapter failed! (0x%x:0x%x:%u) = "
			     "%s, %s: %s",
			     m->stage, m->status, m->src_line, sn ? sn : "unknown stage",
			     status ? status : "unknown NV_STATUS",
			     st ? st : "see tracer/decode/ABI.md Appendix B");
		if (m->stage >= 0x60 && m->stage <= 0x63)
			ct_m_fix(f,
				 "the GSP firmware: reinstall the driver (firmware included) of the loaded "
				 "version, reset the GPU (nvidia-smi -r) or power-cycle; for GSP off: "
				 "NVreg_EnableGpuFirmware=0 (proprietary module only)");
		else if (m->stage == 0x22 && m->line[CT_KMSG_NEEDS_OPEN][0])
			ct_m_fix(f, "this GPU needs the open kernel module: install the -open flavour of the "
				    "driver and reboot");
		else
			ct_m_fix(f,
				 "reset or power-cycle the GPU; check Resizable BAR / Above 4G decoding in "
				 "the firmware setup and 'sudo dmesg | grep NVRM' for the line before it");
	}
	if (m->line[CT_KMSG_NEEDS_OPEN][0] && !m->rminit) {
		f = ct_m_add(c, CT_SEC_KMOD, sev, CT_LAYER_RESOURCE_MANAGER, "kernel log: %s",
			     m->line[CT_KMSG_NEEDS_OPEN]);
		ct_m_fix(f,
			 "install the open flavour of the driver (nvidia-driver-<branch>-open / nvidia-open) "
			 "and reboot");
	}
	if (m->line[CT_KMSG_LEGACY][0]) {
		f = ct_m_add(c, CT_SEC_KMOD, sev, CT_LAYER_KERNEL_HANDSHAKE, "kernel log: %s",
			     m->line[CT_KMSG_LEGACY]);
		ct_m_fix(f, "this GPU needs an older (legacy) driver branch: the 580 branch for Maxwell and "
			    "Pascal");
	}
	if (m->line[CT_KMSG_FIRMWARE][0] && !m->rminit)
		ct_m_add(c, CT_SEC_KMOD, sev, CT_LAYER_RESOURCE_MANAGER, "kernel log: %s",
			 m->line[CT_KMSG_FIRMWARE]);
	if (m->line[CT_KMSG_FELL_OFF][0]) {
		f = ct_m_add(c, CT_SEC_KMOD, CT_SEV_PROBLEM, CT_LAYER_RESOURCE_MANAGER,
			     "kernel log: %s (NV_ERR_GPU_IS_LOST: every call on that GPU fails until it is reset)",
			     m->line[CT_KMSG_FELL_OFF]);
		ct_m_fix(f,
			 "reset the GPU (sudo nvidia-smi -r -i <index>) or reboot; if it recurs check power, "
			 "cooling and the PCIe slot (Xid 79)");
	}
	if (m->line[CT_KMSG_API_MISMATCH][0])
		ct_m_add(c, CT_SEC_KMOD, CT_SEV_WARN, CT_LAYER_KERNEL_HANDSHAKE, "kernel log: %s",
			 m->line[CT_KMSG_API_MISMATCH]);
	if (m->line[CT_KMSG_XID][0])
		ct_m_add(c, CT_SEC_KMOD, CT_SEV_INFO, CT_LAYER_RESOURCE_MANAGER, "kernel log, last Xid: %s",
			 m->line[CT_KMSG_XID]);
}

/* IMEX channels (fabric memory; catalog Part C, G9): nv-reg.h of the open
 * kernel module (NVreg_ImexChannelCount, default 2048, 0 disables;
 * NVreg_CreateImexChannel0): the driver creates no
 * /dev/nvidia-caps-imex-channels/channelN node itself, the administrator
 * does, with the major of "nvidia-caps-imex-channels" in /proc/devices */
static void check_imex(struct ct_mctx *c)
{
	struct ct_machine_report *r = c->r;
	char buf[16384], p[PATH_MAX];
	const char *l;
	int major = -1, nodes = 0, bad = 0;
	unsigned bad_major = 0;
	struct dirent *de;
	struct ct_finding *f;
	DIR *d;

	if (ct_m_read(c, "/proc/devices", buf, sizeof buf) <= 0 ||
	    !(l = strstr(buf, " nvidia-caps-imex-channels\n")))
		return;
	while (l > buf && l[-1] >= '0' && l[-1] <= '9')
		l--;
	major = (int)strtol(l, NULL, 10);
	for (int i = 0; i < r->kmod.n_params; i++)
		if (!strcmp(r->kmod.params[i].name, "ImexChannelCount") &&
		    !strcmp(r->kmod.params[i].value, "0"))
			return; /* IMEX switched off on purpose */
	ct_m_path(c, p, sizeof p, "/dev/nvidia-caps-imex-channels");
	if ((d = opendir(p)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			char node_path[PATH_MAX + 256];
			struct stat st;
			if (strncmp(de->d_name, "channel", 7))
				continue;
			snprintf(node_path, sizeof node_path, "%s/%s", p, de->d_name);
			if (stat(node_path, &st) < 0)
				continue;
			nodes++;
			if (!S_ISCHR(st.st_mode) || (int)major(st.st_rdev) != major) {
				bad++;
				bad_major = major(st.st_rdev);
			}
		}
		closedir(d);
	}
	if (!nodes) {
		f = ct_m_add(c, CT_SEC_DEVICES, CT_SEV_INFO, CT_LAYER_DEVICE_NODE,
			     "the driver offers IMEX channels (major %d) but /dev/nvidia-caps-imex-channels has no "
			     "channel node: fabric memory (cuMemCreate / cuMemImportFromShareableHandle with "
			     "CU_MEM_HANDLE_TYPE_FABRIC, multi-node NVLink, NCCL's MNNVL) fails with "
			     "CUDA_ERROR_NOT_PERMITTED; the driver creates none itself",
			     major);
		ct_m_fix(f,
			 "sudo mkdir -p /dev/nvidia-caps-imex-channels && sudo mknod -m 666 "
			 "/dev/nvidia-caps-imex-channels/channel0 c %d 0 (or 'options nvidia "
			 "NVreg_CreateImexChannel0=1' and reload the module); in a container pass the node (CDI, "
			 "--device)",
			 major);
	} else if (bad) {
		f = ct_m_add(
			c, CT_SEC_DEVICES, CT_SEV_WARN, CT_LAYER_DEVICE_NODE,
			"%d IMEX channel node(s) are not character devices of major %d (one is major %u): the "
			"driver sees no channel there, and fabric memory fails with CUDA_ERROR_NOT_PERMITTED",
			bad, major, bad_major);
		ct_m_fix(f,
			 "recreate them: sudo rm /dev/nvidia-caps-imex-channels/channel0 && sudo mknod -m 666 "
			 "/dev/nvidia-caps-imex-channels/channel0 c %d 0",
			 major);
	}
}

void ct_m_check_hw(struct ct_mctx *c)
{
	struct ct_hw *h = &c->r->hw;
	char buf[128], kp[PATH_MAX];

	if (ct_m_read(c, "/proc/sys/kernel/osrelease", buf, sizeof buf) > 0)
		ct_m_copy(h->kernel_release, sizeof h->kernel_release, ct_m_chomp(buf));
	collect_pci(c);
	collect_module_file(c);
	collect_dkms(c);
	collect_security(c);
	collect_firmware(c);
	if (!c->o->kmsg)
		ct_m_path(c, kp, sizeof kp, "/dev/kmsg");
	if (!c->o->kmsg || *c->o->kmsg)
		ct_kmsg_scan(c->o->kmsg ? c->o->kmsg : kp, 100000, &h->kmsg);

	check_pci(c);
	check_module_file(c);
	check_firmware(c);
	check_kmsg(c);
	check_imex(c);
}
