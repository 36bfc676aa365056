/*
 * doctor's machine checks: device nodes, kernel module, container and
 * environment (the library and contract checks are in machine_libs.c, the
 * check context and its helpers in mctx.c, the output in machine_out.c).
 * Facts: tracer/decode/ABI.md §8 (node numbers, /proc and /sys formats);
 * meanings and fixes: the failure catalog (B.x, see SCENARIOS.md).
 */
#define _GNU_SOURCE
#include "machine_int.h"
#include "idname.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "selectors.h"
#include "version.h"
#include "xlat.h"

extern char **environ;

static const char *errname(int e)
{
	const char *n = ct_errno_name(e);
	return n ? n : "error";
}

/* ---- kernel module ---------------------------------------------------- */

/* "195 nvidia-frontend" (leading blanks allowed): major and name */
static bool parse_devices_line(const char *l, int *maj, char *name, size_t len)
{
	char *end;
	long v;
	size_t n;

	while (*l == ' ' || *l == '\t')
		l++;
	if (!(*l >= '0' && *l <= '9'))
		return false;
	v = strtol(l, &end, 10);
	if (v > 4095 || (*end != ' ' && *end != '\t'))
		return false;
	while (*end == ' ' || *end == '\t')
		end++;
	n = strcspn(end, " \t\r\n");
	if (!n || n >= len)
		return false;
	memcpy(name, end, n);
	name[n] = 0;
	*maj = (int)v;
	return true;
}

static void read_proc_devices(struct ct_mctx *c)
{
	struct ct_kmod *k = &c->r->kmod;
	char buf[16384], *save = NULL;
	bool chr = false;

	k->major_nvidia = k->major_nvidiactl = k->major_uvm = k->major_caps = -1;
	if (ct_m_read(c, "/proc/devices", buf, sizeof buf) < 0)
		return;
	k->proc_devices_read = true;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		int maj;
		char name[64];

		if (!strncmp(l, "Character devices", 17)) {
			chr = true;
			continue;
		}
		if (!strncmp(l, "Block devices", 13))
			chr = false;
		if (!chr || !parse_devices_line(l, &maj, name, sizeof name))
			continue;
		if (!strcmp(name, "nvidia"))
			k->major_nvidia = maj;
		else if (!strcmp(name, "nvidiactl"))
			k->major_nvidiactl = maj;
		else if (!strcmp(name, "nvidia-uvm"))
			k->major_uvm = maj;
		else if (!strcmp(name, "nvidia-caps"))
			k->major_caps = maj;
	}
}

/* "Model: \t NVIDIA H200" lines of /proc/driver/nvidia/gpus/<bus>/information */
static void info_field(const char *buf, const char *key, char *out, size_t len)
{
	const char *p = strstr(buf, key);
	size_t n;

	if (!p)
		return;
	p += strlen(key);
	while (*p == ' ' || *p == '\t' || *p == ':')
		p++;
	n = strcspn(p, "\n");
	if (n >= len)
		n = len - 1;
	memcpy(out, p, n);
	out[n] = 0;
	ct_m_chomp(out);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void read_gpus(struct ct_mctx *c)
{
	struct ct_kmod *k = &c->r->kmod;
	char p[PATH_MAX], *names[CT_MAX_GPUS];
	int n = 0;
	struct dirent *de;
	DIR *d;

	k->gpu_count = -1;
	ct_m_path(c, p, sizeof p, "/proc/driver/nvidia/gpus");
	d = opendir(p);
	if (!d)
		return;
	k->gpu_count = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n < CT_MAX_GPUS)
			names[n++] = strdup(de->d_name);
		k->gpu_count++;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof names[0], cmp_str);
	for (int i = 0; i < n; i++) {
		char logical[PATH_MAX], buf[4096];

		ct_m_copy(k->gpus[i].bus, sizeof k->gpus[i].bus, names[i]);
		snprintf(logical, sizeof logical, "/proc/driver/nvidia/gpus/%s/information", names[i]);
		if (ct_m_read(c, logical, buf, sizeof buf) > 0) {
			info_field(buf, "Model", k->gpus[i].model, sizeof k->gpus[i].model);
			info_field(buf, "GPU UUID", k->gpus[i].uuid, sizeof k->gpus[i].uuid);
			info_field(buf, "Device Minor", k->gpus[i].minor, sizeof k->gpus[i].minor);
		}
		free(names[i]);
	}
}

static void read_params(struct ct_mctx *c)
{
	struct ct_kmod *k = &c->r->kmod;
	char buf[8192], *save = NULL;

	if (ct_m_read(c, "/proc/driver/nvidia/params", buf, sizeof buf) <= 0)
		return;
	for (char *l = strtok_r(buf, "\n", &save); l && k->n_params < CT_MAX_PARAMS;
	     l = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(l, ':');
		char *v;
		if (!colon)
			continue;
		*colon = 0;
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		ct_m_copy(k->params[k->n_params].name, sizeof k->params[0].name, l);
		ct_m_copy(k->params[k->n_params].value, sizeof k->params[0].value, ct_m_chomp(v));
		k->n_params++;
	}
}

static const char *param(const struct ct_kmod *k, const char *name)
{
	for (int i = 0; i < k->n_params; i++)
		if (!strcmp(k->params[i].name, name))
			return k->params[i].value;
	return NULL;
}

static void collect_kmod(struct ct_mctx *c)
{
	struct ct_kmod *k = &c->r->kmod;
	char buf[1024];

	k->flavor = "unknown";
	read_proc_devices(c);
	if (ct_m_read(c, "/proc/driver/nvidia/version", buf, sizeof buf) > 0) {
		char *nl = strchr(buf, '\n');
		if (nl)
			*nl = 0;
		k->proc_present = true;
		ct_m_copy(k->proc_line, sizeof k->proc_line, ct_m_chomp(buf));
		ct_parse_nvrm_version(k->proc_line, k->version, sizeof k->version, &k->flavor);
	}
	if (ct_m_read(c, "/sys/module/nvidia/version", buf, sizeof buf) > 0) {
		k->sys_present = true;
		ct_m_copy(k->sys_version, sizeof k->sys_version, ct_m_chomp(buf));
	}
	k->nvidia_loaded = ct_m_exists(c, "/sys/module/nvidia");
	k->uvm_loaded = ct_m_exists(c, "/sys/module/nvidia_uvm");
	k->modeset_loaded = ct_m_exists(c, "/sys/module/nvidia_modeset");
	if (ct_m_read(c, "/sys/module/nvidia_uvm/parameters/uvm_disable_hmm", buf, sizeof buf) > 0)
		ct_m_copy(k->uvm_disable_hmm, sizeof k->uvm_disable_hmm, ct_m_chomp(buf));
	k->versions_disagree = k->version[0] && k->sys_version[0] && strcmp(k->version, k->sys_version);
	read_gpus(c);
	read_params(c);
}

static bool driver_present(const struct ct_kmod *k)
{
	return k->proc_present || k->sys_present || k->nvidia_loaded || k->major_nvidia >= 0 ||
	       k->major_nvidiactl >= 0;
}

static void check_kmod(struct ct_mctx *c)
{
	struct ct_machine_report *r = c->r;
	struct ct_kmod *k = &r->kmod;
	struct ct_finding *f;
	const char *mdf;

	if (!driver_present(k)) {
		if (r->wsl) {
			ct_m_add(c, CT_SEC_KMOD, CT_SEV_INFO, CT_LAYER_KERNEL_HANDSHAKE,
				 "no NVIDIA Linux kernel module: expected on WSL2, where the Windows "
				 "driver serves CUDA through /dev/dxg");
			return;
		}
		f = ct_m_add(c, CT_SEC_KMOD, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE,
			     "NVIDIA kernel module not loaded (no /proc/driver/nvidia/version, no "
			     "/sys/module/nvidia, no nvidia in /proc/devices)");
		ct_m_fix(f, "install the driver and 'sudo modprobe nvidia'; 'dmesg | grep -i nvrm' "
			    "shows why loading failed (Secure Boot signing, module not rebuilt for "
			    "this kernel); in a container this is the host's driver");
		return;
	}
	if (k->proc_present && k->version[0])
		ct_m_add(c, CT_SEC_KMOD, CT_SEV_OK, CT_LAYER_KERNEL_HANDSHAKE,
			 "kernel module %s (%s kernel module)", k->version, k->flavor);
	else if (!k->proc_present)
		ct_m_add(c, CT_SEC_KMOD, CT_SEV_INFO, CT_LAYER_KERNEL_HANDSHAKE,
			 "/proc/driver/nvidia/version is not readable here (module version from "
			 "/sys: %s)", k->sys_version[0] ? k->sys_version : "unknown");
	if (k->versions_disagree) {
		f = ct_m_add(c, CT_SEC_KMOD, CT_SEV_PROBLEM, CT_LAYER_KERNEL_HANDSHAKE,
			     "/proc/driver/nvidia/version says %s but /sys/module/nvidia/version says "
			     "%s: the loaded module is not the one the system expects",
			     k->version, k->sys_version);
		ct_m_fix(f, "reboot (or unload and reload the nvidia modules) so that one driver "
			    "version is loaded everywhere");
	}
	if (!k->uvm_loaded && k->major_uvm < 0) {
		f = ct_m_add(c, CT_SEC_KMOD, CT_SEV_PROBLEM, CT_LAYER_UVM,
			     "nvidia_uvm is not loaded (no /sys/module/nvidia_uvm, no nvidia-uvm in "
			     "/proc/devices): cuInit fails with 999 (CUDA unknown error) while "
			     "nvidia-smi still works");
		ct_m_fix(f, "sudo modprobe nvidia-uvm (or sudo nvidia-modprobe -u -c 0); "
			    "on the host when this is a container");
	}
	if (k->gpu_count == 0 && k->proc_present) {
		f = ct_m_add(c, CT_SEC_KMOD, CT_SEV_PROBLEM, CT_LAYER_RESOURCE_MANAGER,
			     "the driver is loaded but attached no GPU (/proc/driver/nvidia/gpus is "
			     "empty): cuInit returns 100");
		ct_m_fix(f, "'lspci -nn | grep -i nvidia' and 'dmesg | grep NVRM' (unsupported or "
			    "excluded GPU, RmInitAdapter failure, GPU fallen off the bus)");
	}
	if (!strcmp(k->flavor, "open") && !strcmp(k->uvm_disable_hmm, "N"))
		ct_m_add(c, CT_SEC_KMOD, CT_SEV_INFO, CT_LAYER_UVM,
			 "open kernel module with HMM enabled (uvm_disable_hmm=N): if cuInit "
			 "returns 3 on EL9+/newer kernels, 'options nvidia_uvm uvm_disable_hmm=1' "
			 "is the known workaround");
	mdf = param(k, "ModifyDeviceFiles");
	if (mdf && !strcmp(mdf, "0"))
		ct_m_add(c, CT_SEC_KMOD, CT_SEV_INFO, CT_LAYER_DEVICE_NODE,
			 "ModifyDeviceFiles=0: libcuda will not create or fix /dev/nvidia* nodes "
			 "itself (udev or the container runtime must)");
}

/* ---- device nodes ----------------------------------------------------- */

static bool in_group(gid_t g)
{
	gid_t groups[256];
	int n;

	if (g == getegid() || g == getgid())
		return true;
	n = getgroups(256, groups);
	for (int i = 0; i < n; i++)
		if (groups[i] == g)
			return true;
	return false;
}

static struct ct_devnode *add_node(struct ct_mctx *c, const char *path, const char *role, int index,
				   bool required, int exp_major, int exp_minor)
{
	struct ct_machine_report *r = c->r;
	struct ct_devnode *n;

	if (r->n_nodes >= CT_MAX_NODES)
		return NULL;
	n = &r->nodes[r->n_nodes++];
	memset(n, 0, sizeof *n);
	ct_m_copy(n->path, sizeof n->path, path);
	n->role = role;
	n->index = index;
	n->required = required;
	n->exp_major = exp_major;
	n->exp_minor = exp_minor;
	return n;
}

static void inspect_node(struct ct_mctx *c, struct ct_devnode *n)
{
	char p[PATH_MAX];
	struct stat st;

	ct_m_path(c, p, sizeof p, n->path);
	if (stat(p, &st) < 0)
		return;
	n->exists = true;
	n->is_chr = S_ISCHR(st.st_mode);
	n->mode = st.st_mode & 07777;
	n->uid = st.st_uid;
	n->gid = st.st_gid;
	if (ct_id_name("/etc/passwd", st.st_uid, n->owner, sizeof n->owner) < 0)
		snprintf(n->owner, sizeof n->owner, "%u", (unsigned)st.st_uid);
	if (ct_id_name("/etc/group", st.st_gid, n->group, sizeof n->group) < 0)
		snprintf(n->group, sizeof n->group, "%u", (unsigned)st.st_gid);
	n->group_member = in_group(st.st_gid);
	if (n->is_chr) {
		n->major = major(st.st_rdev);
		n->minor = minor(st.st_rdev);
	}
	n->major_ok = n->is_chr && (n->exp_major < 0 || n->major == (unsigned)n->exp_major);
	n->minor_ok = n->is_chr && (n->exp_minor < 0 || n->minor == (unsigned)n->exp_minor);
	/* Only character devices are opened: a FIFO or a directory in their
	 * place is reported, not poked.  The caps nodes are 0400/0444 by
	 * design and opened read-only by libcuda, so doctor does the same. */
	n->open_mode = !strcmp(n->role, "caps") ? "O_RDONLY" : "O_RDWR";
	if (n->is_chr && !c->o->no_open) {
		int fl = (!strcmp(n->role, "caps") ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOCTTY;
		int fd = open(p, fl);
		n->open_tried = true;
		n->open_errno = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
	}
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* numbers N of entries named <prefix>N in a directory, sorted */
static int scan_numbered(struct ct_mctx *c, const char *dir, const char *prefix, int *out, int max)
{
	char p[PATH_MAX];
	size_t pl = strlen(prefix);
	struct dirent *de;
	DIR *d;
	int n = 0;

	ct_m_path(c, p, sizeof p, dir);
	d = opendir(p);
	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL && n < max) {
		const char *s = de->d_name + pl;
		char *end;
		long v;
		if (strncmp(de->d_name, prefix, pl) || !(*s >= '0' && *s <= '9'))
			continue;
		v = strtol(s, &end, 10);
		if (*end == 0 && v >= 0 && v < 100000)
			out[n++] = (int)v;
	}
	closedir(d);
	qsort(out, (size_t)n, sizeof out[0], cmp_int);
	return n;
}

/* major 195 is fixed for nvidia/nvidiactl (nv-chardev-numbers.h, ABI.md §8) */
#define CT_NV_MAJOR 195

static void collect_nodes(struct ct_mctx *c)
{
	const struct ct_kmod *k = &c->r->kmod;
	int nv = k->major_nvidia >= 0 ? k->major_nvidia : CT_NV_MAJOR;
	int ctl = k->major_nvidiactl >= 0 ? k->major_nvidiactl : nv;
	int idx[CT_MAX_NODES];
	int n;

	add_node(c, "/dev/nvidiactl", "ctl", -1, true, ctl, 255);
	n = scan_numbered(c, "/dev", "nvidia", idx, 32);
	for (int i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "/dev/nvidia%d", idx[i]);
		add_node(c, path, "gpu", idx[i], true, nv, idx[i]);
	}
	add_node(c, "/dev/nvidia-uvm", "uvm", -1, true, k->major_uvm, 0);
	add_node(c, "/dev/nvidia-uvm-tools", "uvm-tools", -1, false, k->major_uvm, 1);
	add_node(c, "/dev/nvidia-modeset", "modeset", -1, false, nv, 254);
	n = scan_numbered(c, "/dev/nvidia-caps", "nvidia-cap", idx, 8);
	for (int i = 0; i < n; i++) {
		char path[80];
		snprintf(path, sizeof path, "/dev/nvidia-caps/nvidia-cap%d", idx[i]);
		add_node(c, path, "caps", idx[i], false, k->major_caps, idx[i]);
	}
	add_node(c, "/dev/dxg", "dxg", -1, false, -1, -1);
	for (int i = 0; i < c->r->n_nodes; i++)
		inspect_node(c, &c->r->nodes[i]);
	c->r->wsl = c->r->nodes[c->r->n_nodes - 1].exists;
}

static struct ct_devnode *node(struct ct_machine_report *r, const char *role)
{
	for (int i = 0; i < r->n_nodes; i++)
		if (!strcmp(r->nodes[i].role, role))
			return &r->nodes[i];
	return NULL;
}

static int gpu_node_count(const struct ct_machine_report *r)
{
	int n = 0;
	for (int i = 0; i < r->n_nodes; i++)
		n += !strcmp(r->nodes[i].role, "gpu") && r->nodes[i].exists;
	return n;
}

/* What an open() errno on a node means for CUDA init (catalog B.11, B.14,
 * ABI.md §8 open return codes). */
static void open_failure(struct ct_mctx *c, const struct ct_devnode *n)
{
	enum ct_severity sev = n->required ? CT_SEV_PROBLEM
			       : !strcmp(n->role, "caps") ? CT_SEV_WARN : CT_SEV_INFO;
	enum ct_layer layer = !strncmp(n->role, "uvm", 3) ? CT_LAYER_UVM : CT_LAYER_DEVICE_NODE;
	const char *en = errname(n->open_errno);
	struct ct_finding *f;

	switch (n->open_errno) {
	case EACCES:
		f = ct_m_add(c, CT_SEC_DEVICES, sev, layer,
			     "cannot open %s (%s): mode %04o %s:%s, and uid %u is %sin group %s",
			     n->path, en, n->mode, n->owner, n->group, (unsigned)getuid(),
			     n->group_member ? "" : "not ", n->group);
		ct_m_fix(f, "add the user to group '%s' (then log in again), or fix the node mode "
			    "(udev rule / NVreg_DeviceFileMode); SELinux: container_use_devices",
			 n->group);
		break;
	case EPERM:
		f = ct_m_add(c, CT_SEC_DEVICES, sev, layer,
			     "cannot open %s (EPERM): the device cgroup or an LSM denies c %u:%u",
			     n->path, n->major, n->minor);
		ct_m_fix(f, "pass the device to the container (--device %s, --gpus, CDI); after "
			    "'systemctl daemon-reload' recreate the container or run 'nvidia-ctk "
			    "system create-dev-char-symlinks --create-all'", n->path);
		break;
	case ENXIO:
	case ENODEV:
		f = ct_m_add(c, CT_SEC_DEVICES, sev, !strcmp(n->role, "gpu") ? CT_LAYER_RESOURCE_MANAGER : layer,
			     "cannot open %s (%s): no driver behind c %u:%u (module not loaded, stale "
			     "node, or the GPU is gone)", n->path, en, n->major, n->minor);
		ct_m_fix(f, "check 'cat /proc/devices' and 'dmesg | grep NVRM'; recreate the node "
			    "with nvidia-modprobe");
		break;
	case EIO:
		f = ct_m_add(c, CT_SEC_DEVICES, sev, CT_LAYER_RESOURCE_MANAGER,
			     "cannot open %s (EIO): the GPU failed to initialize (RmInitAdapter)",
			     n->path);
		ct_m_fix(f, "'dmesg | grep -E \"RmInitAdapter|rm_init_adapter|GSP\"'; reset or "
			    "power-cycle the GPU, check the GSP firmware matches the driver");
		break;
	case EBUSY:
		f = ct_m_add(c, CT_SEC_DEVICES, sev, CT_LAYER_RESOURCE_MANAGER,
			     "cannot open %s (EBUSY): the GPU does not accept opens now "
			     "(sequestered, resetting, or held exclusively)", n->path);
		ct_m_fix(f, "nvidia-smi -q | grep -iE 'compute mode|pending|retired'");
		break;
	default:
		(void)ct_m_add(c, CT_SEC_DEVICES, sev, layer, "cannot open %s: %s (%s)", n->path, en,
			       strerror(n->open_errno));
		break;
	}
}

static void check_node(struct ct_mctx *c, const struct ct_devnode *n, bool *bad)
{
	enum ct_severity sev = n->required ? CT_SEV_PROBLEM : CT_SEV_WARN;
	struct ct_finding *f;

	if (!n->exists)
		return;
	if (!n->is_chr) {
		f = ct_m_add(c, CT_SEC_DEVICES, sev, CT_LAYER_DEVICE_NODE,
			     "%s exists but is not a character device", n->path);
		ct_m_fix(f, "remove it and let nvidia-modprobe / udev / the container runtime "
			    "create the node");
		*bad = true;
		return;
	}
	if (!n->major_ok || !n->minor_ok) {
		char want[32];
		if (n->exp_major >= 0)
			snprintf(want, sizeof want, "%d:%d", n->exp_major, n->exp_minor);
		else
			snprintf(want, sizeof want, "?:%d", n->exp_minor);
		f = ct_m_add(c, CT_SEC_DEVICES, sev, CT_LAYER_DEVICE_NODE,
			     "%s is c %u:%u, expected %s (per /proc/devices): libcuda "
			     "would talk to the wrong device", n->path, n->major, n->minor, want);
		ct_m_fix(f, "recreate it: sudo rm %s && sudo nvidia-modprobe -c 0 -u", n->path);
		*bad = true;
	}
	if (n->open_tried && n->open_errno) {
		open_failure(c, n);
		if (n->required)
			*bad = true;
	}
}

static void check_devices(struct ct_mctx *c)
{
	struct ct_machine_report *r = c->r;
	const struct ct_kmod *k = &r->kmod;
	struct ct_devnode *ctl = node(r, "ctl"), *uvm = node(r, "uvm"), *tools = node(r, "uvm-tools");
	int gpus = gpu_node_count(r);
	bool bad = false;
	struct ct_finding *f;

	if (r->wsl)
		ct_m_add(c, CT_SEC_DEVICES, CT_SEV_INFO, CT_LAYER_DEVICE_NODE,
			 "/dev/dxg present: WSL2 GPU paravirtualization; CUDA uses "
			 "/usr/lib/wsl/lib/libcuda.so.1 and /dev/dxg, not /dev/nvidia*");
	if (!ctl->exists && !gpus && !uvm->exists && !r->wsl) {
		f = ct_m_add(c, CT_SEC_DEVICES, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE,
			     "no NVIDIA device nodes: /dev/nvidiactl, /dev/nvidia0.. and "
			     "/dev/nvidia-uvm are missing (cuInit returns 100 'no CUDA-capable "
			     "device')");
		if (driver_present(k))
			ct_m_fix(f, "the driver is loaded: create the nodes with 'sudo nvidia-modprobe "
				    "-c 0 -u'; in a container start it with GPUs (--gpus all, "
				    "--runtime=nvidia, or CDI --device nvidia.com/gpu=all)");
		else
			ct_m_fix(f, "no NVIDIA driver on this machine: install and load it; in a "
				    "container start it with GPUs (--gpus all / CDI)");
		bad = true;
	} else if (!r->wsl) {
		if (!ctl->exists) {
			f = ct_m_add(c, CT_SEC_DEVICES, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE,
				     "/dev/nvidiactl is missing: cuInit returns 100");
			ct_m_fix(f, "sudo nvidia-modprobe -c 0; in a container pass --device "
				    "/dev/nvidiactl (or --gpus)");
			bad = true;
		}
		if (!gpus) {
			f = ct_m_add(c, CT_SEC_DEVICES, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE,
				     "no /dev/nvidiaN GPU node: no GPU is visible (cuInit returns 100)");
			ct_m_fix(f, "sudo nvidia-modprobe -c 0; in a container check "
				    "NVIDIA_VISIBLE_DEVICES / --gpus and the device plugin");
			bad = true;
		} else if (k->gpu_count > gpus) {
			ct_m_add(c, CT_SEC_DEVICES, CT_SEV_INFO, CT_LAYER_DEVICE_NODE,
				 "%d GPU node(s) for %d GPU(s) the driver attached: only some GPUs "
				 "are passed to this environment", gpus, k->gpu_count);
		}
		if (!uvm->exists) {
			/* without the module, the Kernel module section says so */
			enum ct_severity sev = (k->uvm_loaded || k->major_uvm >= 0 || !driver_present(k))
					       ? CT_SEV_PROBLEM : CT_SEV_INFO;
			f = ct_m_add(c, CT_SEC_DEVICES, sev, CT_LAYER_UVM,
				     "/dev/nvidia-uvm is missing: cuInit fails with 999 (CUDA unknown "
				     "error) unless nvidia-modprobe can create it%s",
				     r->container.no_new_privs == 1
				     ? " (it cannot here: NoNewPrivs=1 disables its setuid)" : "");
			if (k->major_uvm >= 0)
				ct_m_fix(f, "sudo nvidia-modprobe -u -c 0 (or mknod -m 666 "
					    "/dev/nvidia-uvm c %d 0); in a container pass "
					    "/dev/nvidia-uvm and /dev/nvidia-uvm-tools", k->major_uvm);
			else
				ct_m_fix(f, "load nvidia_uvm first (sudo modprobe nvidia-uvm), then "
					    "sudo nvidia-modprobe -u -c 0");
			bad = bad || sev == CT_SEV_PROBLEM;
		} else if (!tools->exists) {
			ct_m_add(c, CT_SEC_DEVICES, CT_SEV_INFO, CT_LAYER_UVM,
				 "/dev/nvidia-uvm-tools is missing: CUDA runs, profilers and "
				 "debuggers cannot attach");
		}
	}
	for (int i = 0; i < r->n_nodes; i++)
		if (strcmp(r->nodes[i].role, "dxg"))
			check_node(c, &r->nodes[i], &bad);
	if (!bad && (ctl->exists || r->wsl))
		ct_m_add(c, CT_SEC_DEVICES, CT_SEV_OK, CT_LAYER_DEVICE_NODE,
			 "%s", r->wsl && !ctl->exists ? "WSL2 device /dev/dxg present"
			 : c->o->no_open ? "device nodes present with the right numbers (not opened: --no-open)"
			 : "device nodes present, with the right numbers, and open for this user");
}

/* ---- container -------------------------------------------------------- */

/* cgroup v1 devices.list: "a *:* rwm" or "c 195:* rwm" lines */
static bool devlist_allows(const char *list, int maj)
{
	char want[32], want2[32];

	if (strstr(list, "a *:* rwm") || strstr(list, "a *:* rw"))
		return true;
	snprintf(want, sizeof want, "c %d:* rw", maj);
	snprintf(want2, sizeof want2, "c %d:255 rw", maj);
	return strstr(list, want) || strstr(list, want2);
}

static void collect_container(struct ct_mctx *c)
{
	struct ct_container *k = &c->r->container;
	char buf[8192], *save = NULL;
	const char *files[] = {
		"/usr/bin/nvidia-container-cli", "/usr/bin/nvidia-container-runtime-hook",
		"/etc/nvidia-container-runtime/config.toml", "/etc/cdi/nvidia.yaml",
		"/var/run/cdi/nvidia.yaml",
	};
	const char *env_container = ct_m_env(c, "container");

	k->devices_allowed = -1;
	k->no_new_privs = -1;
	k->dockerenv = ct_m_exists(c, "/.dockerenv");
	k->containerenv = ct_m_exists(c, "/run/.containerenv");
	if (ct_m_read(c, "/proc/1/cgroup", buf, sizeof buf) > 0) {
		char *nl = strchr(buf, '\n');
		if (nl)
			*nl = 0;
		ct_m_copy(k->pid1_cgroup, sizeof k->pid1_cgroup, buf);
	}
	k->in_container = k->dockerenv || k->containerenv || (env_container && *env_container) ||
			  strstr(k->pid1_cgroup, "docker") || strstr(k->pid1_cgroup, "kubepods") ||
			  strstr(k->pid1_cgroup, "containerd") || strstr(k->pid1_cgroup, "libpod") ||
			  strstr(k->pid1_cgroup, "lxc");
	if (ct_m_read(c, "/proc/self/cgroup", buf, sizeof buf) > 0) {
		char *devpath = NULL;
		int lines = 0;

		k->cgroup_read = true;
		for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char *a = strchr(l, ':'), *b = a ? strchr(a + 1, ':') : NULL;
			lines++;
			if (!a || !b)
				continue;
			*b = 0;
			if (strstr(a + 1, "devices"))
				devpath = b + 1;
		}
		k->cgroup_v2 = lines == 1 && !devpath && !strncmp(buf, "0:", 2);
		if (devpath) {
			char logical[PATH_MAX], list[8192];
			snprintf(logical, sizeof logical, "/sys/fs/cgroup/devices%s/devices.list",
				 !strcmp(devpath, "/") ? "" : devpath);
			if (ct_m_read(c, logical, list, sizeof list) > 0) {
				ct_m_copy(k->devices_list, sizeof k->devices_list, logical);
				k->devices_allowed = devlist_allows(list, CT_NV_MAJOR);
			}
		}
	}
	if (ct_m_read(c, "/proc/self/status", buf, sizeof buf) > 0) {
		const char *p = strstr(buf, "NoNewPrivs:");
		if (p)
			k->no_new_privs = (int)strtol(p + 11, NULL, 10);
	}
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		size_t used = strlen(k->toolkit_files);
		if (ct_m_exists(c, files[i]))
			snprintf(k->toolkit_files + used, sizeof k->toolkit_files - used, "%s%s",
				 used ? " " : "", files[i]);
	}
}

static void check_container(struct ct_mctx *c)
{
	struct ct_container *k = &c->r->container;
	const char *nvd = ct_m_env(c, "NVIDIA_VISIBLE_DEVICES");
	const char *caps = ct_m_env(c, "NVIDIA_DRIVER_CAPABILITIES");
	struct ct_finding *f;

	if (k->in_container)
		ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_INFO, CT_LAYER_NONE,
			 "running in a container (%s%s%s)", k->dockerenv ? "/.dockerenv" : "",
			 k->dockerenv && k->containerenv ? ", " : "",
			 k->containerenv ? "/run/.containerenv" : !k->dockerenv ? "cgroup or $container" : "");
	else
		ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_INFO, CT_LAYER_NONE,
			 "no container detected (no /.dockerenv, /run/.containerenv or container "
			 "cgroup)");
	if (k->devices_allowed == 0) {
		f = ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE,
			     "the device cgroup (%s) does not allow c %d:* : opens of /dev/nvidia* "
			     "fail with EPERM", k->devices_list, CT_NV_MAJOR);
		ct_m_fix(f, "recreate the container with the GPU devices (--gpus / --device); if "
			    "it happened after 'systemctl daemon-reload', see nvidia-container-toolkit "
			    "issue 48 (create-dev-char-symlinks)");
	} else if (k->devices_allowed == 1) {
		ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_OK, CT_LAYER_DEVICE_NODE,
			 "device cgroup v1 allows c %d:* (%s)", CT_NV_MAJOR, k->devices_list);
	} else if (k->cgroup_v2 && k->in_container) {
		ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_INFO, CT_LAYER_DEVICE_NODE,
			 "cgroup v2: device access is a BPF program that cannot be read from inside; "
			 "an EPERM from open() on a present node is its signature");
	}
	if (nvd && (!*nvd || !strcmp(nvd, "void") || !strcmp(nvd, "none"))) {
		f = ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_WARN, CT_LAYER_DEVICE_NODE,
			     "NVIDIA_VISIBLE_DEVICES=%s: the container runtime passes no GPU%s", nvd,
			     !strcmp(nvd, "none") ? " (driver libraries only)" : "");
		ct_m_fix(f, "set NVIDIA_VISIBLE_DEVICES=all (or GPU indices/UUIDs) when starting "
			    "the container");
	}
	if (caps && *caps && !strstr(caps, "compute") && !strstr(caps, "all")) {
		f = ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_WARN, CT_LAYER_LOADER,
			     "NVIDIA_DRIVER_CAPABILITIES=%s lacks 'compute': the runtime does not "
			     "inject libcuda.so.1", caps);
		ct_m_fix(f, "NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all)");
	}
	if (k->toolkit_files[0])
		ct_m_add(c, CT_SEC_CONTAINER, CT_SEV_INFO, CT_LAYER_NONE,
			 "NVIDIA container toolkit files here: %s", k->toolkit_files);
}

/* ---- environment ------------------------------------------------------ */

static const char *const env_names[] = {
	"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH",
	"LD_PRELOAD", "LIBRARY_PATH", "CUDA_MODULE_LOADING", "CUDA_LAUNCH_BLOCKING",
	"CUDA_CACHE_DISABLE", "CUDA_FORCE_PTX_JIT", "CUDA_DISABLE_PTX_JIT",
	"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY", "CUDA_DEVICE_MAX_CONNECTIONS",
	"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "NVIDIA_VISIBLE_DEVICES",
	"NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA", "PYTORCH_NVML_BASED_CUDA_CHECK",
	"CONDA_PREFIX", "VIRTUAL_ENV",
};

static int visible_gpu_count(const struct ct_machine_report *r)
{
	if (r->kmod.gpu_count > 0)
		return r->kmod.gpu_count;
	return gpu_node_count(r) > 0 ? gpu_node_count(r) : -1;
}

/* CUDA_VISIBLE_DEVICES, read as the driver reads it (tracer/diag/selectors.h:
 * the list ends at the first invalid entry, a repeated GPU hides them all):
 * "" and an invalid first entry hide every GPU (cuInit and
 * cudaGetDeviceCount give 100, tracer/decode/ABI.md Appendix C). */
static void check_cvd(struct ct_mctx *c, const char *v)
{
	struct ct_machine_report *r = c->r;
	int count = visible_gpu_count(r), n = 0;
	const char *uuids[CT_MAX_GPUS];
	struct ct_sel sel;
	struct ct_finding *f;
	bool first;

	for (int i = 0; i < r->kmod.gpu_count && i < CT_MAX_GPUS; i++)
		uuids[n++] = r->kmod.gpus[i].uuid;
	ct_sel_cuda(v, count, uuids, r->kmod.gpu_count == n ? n : 0, &sel);
	if (sel.stop == CT_SEL_EMPTY) {
		f = ct_m_add(c, CT_SEC_ENV, CT_SEV_PROBLEM, CT_LAYER_DRIVER_API,
			     "CUDA_VISIBLE_DEVICES is set but empty: CUDA sees no GPU (cuInit 100)");
		ct_m_fix(f, "unset CUDA_VISIBLE_DEVICES or list GPU indices/UUIDs");
		return;
	}
	if (sel.stop != CT_SEL_END) {
		first = sel.stop_at == 0 || sel.stop == CT_SEL_DUPLICATE;
		f = ct_m_add(c, CT_SEC_ENV, first ? CT_SEV_PROBLEM : CT_SEV_WARN, CT_LAYER_DRIVER_API,
			     "CUDA_VISIBLE_DEVICES=%s: entry %d '%s' %s%s: %s", v, sel.stop_at, sel.stop_tok,
			     ct_sel_stop_text(sel.stop), count > 0 ? "" : " (GPU count unknown)",
			     first ? "no GPU is visible (cuInit 100)"
				   : "CUDA stops there and ignores the later entries");
		if (sel.stop == CT_SEL_DUPLICATE)
			ct_m_fix(f,
				 "name each GPU once (a repeated GPU hides every GPU: PyTorch's model of the "
				 "driver, torch/cuda _parse_visible_devices)");
		else if (count > 0)
			ct_m_fix(f, "use indices 0..%d (or UUIDs from nvidia-smi -L)", count - 1);
		else
			ct_m_fix(f, "use indices or UUIDs from nvidia-smi -L");
		return;
	}
	for (const char *p = v; (p = strcasestr(p, "MIG-")) != NULL; p += 4) {
		if (!node(r, "caps") || !node(r, "caps")->exists) {
			f = ct_m_add(c, CT_SEC_ENV, CT_SEV_PROBLEM, CT_LAYER_DRIVER_API,
				     "CUDA_VISIBLE_DEVICES=%s names a MIG device but /dev/nvidia-caps is missing: "
				     "CUDA cannot open a MIG instance (cuInit 100)",
				     v);
			ct_m_fix(f, "pass /dev/nvidia-caps/* to the container (CDI, --device), or list the "
				    "MIG devices with 'nvidia-smi -L' on the host");
			return;
		}
		break;
	}
	ct_m_add(c, CT_SEC_ENV, CT_SEV_INFO, CT_LAYER_DRIVER_API,
		 "CUDA_VISIBLE_DEVICES=%s: CUDA sees %s%d GPU(s), renumbered from 0", v,
		 sel.visible < 0 ? "up to " : "", sel.visible < 0 ? sel.entries : sel.visible);
}

/* NVIDIA_VISIBLE_DEVICES asks the container runtime for GPUs: fewer GPU
 * nodes here than it names means the runtime did not pass them all */
static void check_nvd(struct ct_mctx *c, const char *v)
{
	struct ct_machine_report *r = c->r;
	int want = ct_sel_nvidia(v), have = gpu_node_count(r);
	struct ct_finding *f;

	if (want > 0 && r->container.in_container && have < want) {
		f = ct_m_add(
			c, CT_SEC_CONTAINER, have ? CT_SEV_WARN : CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE,
			"NVIDIA_VISIBLE_DEVICES=%s names %d GPU(s) but %d /dev/nvidiaN node(s) are here: the "
			"container runtime did not inject them all (an index or UUID the host does not have, "
			"or a runtime that ignores the variable: CDI mode uses --device nvidia.com/gpu=...)",
			v, want, have);
		ct_m_fix(f, "check the host's 'nvidia-smi -L' against NVIDIA_VISIBLE_DEVICES, and start the "
			    "container with the NVIDIA runtime or the CDI devices it should get");
	}
}

static void check_ld_library_path(struct ct_mctx *c, const char *v)
{
	const char *p = v;
	struct ct_finding *f;

	while (1) {
		size_t n = strcspn(p, ":;");
		char dir[PATH_MAX];

		snprintf(dir, sizeof dir, "%.*s", (int)n, p);
		if (!n) {
			ct_m_add(c, CT_SEC_ENV, CT_SEV_INFO, CT_LAYER_LOADER,
				 "LD_LIBRARY_PATH has an empty entry: the loader searches the current "
				 "directory there");
		} else if (strstr(dir, "/stubs")) {
			f = ct_m_add(c, CT_SEC_ENV, CT_SEV_WARN, CT_LAYER_LOADER,
				     "LD_LIBRARY_PATH contains the toolkit stubs directory %s: programs "
				     "that dlopen libcuda.so get the stub (CUDA_ERROR_STUB_LIBRARY, 34)", dir);
			ct_m_fix(f, "remove %s from LD_LIBRARY_PATH (stubs are for linking only: use "
				    "LIBRARY_PATH or -L at build time)", dir);
		}
		if (!p[n])
			break;
		p += n + 1;
	}
}

static void check_env(struct ct_mctx *c)
{
	struct ct_machine_report *r = c->r;
	const char *v;
	struct ct_finding *f;

	for (size_t i = 0; i < sizeof env_names / sizeof env_names[0] && r->n_env < CT_MAX_ENV; i++) {
		v = ct_m_env(c, env_names[i]);
		if (!v)
			continue;
		ct_m_copy(r->env[r->n_env].name, sizeof r->env[0].name, env_names[i]);
		ct_m_copy(r->env[r->n_env].value, sizeof r->env[0].value, v);
		r->n_env++;
	}
	if ((v = ct_m_env(c, "CUDA_VISIBLE_DEVICES")) != NULL)
		check_cvd(c, v);
	if ((v = ct_m_env(c, "NVIDIA_VISIBLE_DEVICES")) != NULL)
		check_nvd(c, v);
	if ((v = ct_m_env(c, "CUDA_DEVICE_ORDER")) != NULL && strcmp(v, "FASTEST_FIRST") &&
	    strcmp(v, "PCI_BUS_ID")) {
		f = ct_m_add(c, CT_SEC_ENV, CT_SEV_WARN, CT_LAYER_DRIVER_API,
			     "CUDA_DEVICE_ORDER=%s is not FASTEST_FIRST or PCI_BUS_ID", v);
		ct_m_fix(f, "use PCI_BUS_ID to match nvidia-smi numbering");
	}
	if ((v = ct_m_env(c, "CUDA_MODULE_LOADING")) != NULL && strcmp(v, "LAZY") &&
	    strcmp(v, "EAGER") && strcmp(v, "DEFAULT"))
		ct_m_add(c, CT_SEC_ENV, CT_SEV_WARN, CT_LAYER_RUNTIME,
			 "CUDA_MODULE_LOADING=%s is not LAZY or EAGER", v);
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "CUDA_PATH" : "CUDA_HOME";
		struct stat st;
		if ((v = ct_m_env(c, name)) != NULL && *v && (stat(v, &st) < 0 || !S_ISDIR(st.st_mode)))
			ct_m_add(c, CT_SEC_ENV, CT_SEV_WARN, CT_LAYER_RUNTIME,
				 "%s=%s is not a directory", name, v);
	}
	if ((v = ct_m_env(c, "LD_LIBRARY_PATH")) != NULL)
		check_ld_library_path(c, v);
	if ((v = ct_m_env(c, "CUDA_MPS_PIPE_DIRECTORY")) != NULL)
		ct_m_add(c, CT_SEC_ENV, CT_SEV_INFO, CT_LAYER_DRIVER_API,
			 "CUDA_MPS_PIPE_DIRECTORY=%s: CUDA connects to an MPS server there "
			 "(805 if none runs)", v);
}

/* ---- top level -------------------------------------------------------- */

int ct_machine_check(struct ct_machine_report *r, const struct ct_machine_opts *o)
{
	static const struct ct_machine_opts none;
	struct ct_mctx c;

	memset(r, 0, sizeof *r);
	c.r = r;
	c.o = o ? o : &none;
	c.root = c.o->root && strcmp(c.o->root, "/") ? c.o->root : "";
	c.env = c.o->env ? c.o->env : environ;
	ct_m_copy(r->root, sizeof r->root, c.root);
	r->uid = getuid();

	collect_kmod(&c);
	collect_container(&c);
	collect_nodes(&c);
	check_devices(&c);
	check_kmod(&c);
	ct_m_check_hw(&c);
	ct_m_check_libs(&c);
	check_container(&c);
	ct_m_check_runtime(&c);
	check_env(&c);
	ct_m_check_preload(&c);
	ct_m_check_contract(&c);
	return r->n_problems ? CT_EXIT_PROBLEM : CT_EXIT_OK;
}

int ct_machine_verdict(const struct ct_machine_report *r, char *buf, size_t len)
{
	const struct ct_finding *first = NULL;

	for (int i = 0; i < r->n_findings && !first; i++)
		if (r->findings[i].sev == CT_SEV_PROBLEM)
			first = &r->findings[i];
	if (first) {
		snprintf(buf, len, "PROBLEM: %d problem%s, %d warning%s; first: [%s] %s",
			 r->n_problems, r->n_problems == 1 ? "" : "s", r->n_warnings,
			 r->n_warnings == 1 ? "" : "s", ct_layer_name(first->layer), first->summary);
		return CT_EXIT_PROBLEM;
	}
	if (r->n_warnings)
		snprintf(buf, len, "healthy with %d warning%s", r->n_warnings,
			 r->n_warnings == 1 ? "" : "s");
	else
		snprintf(buf, len, "healthy: no problem found");
	return CT_EXIT_OK;
}
