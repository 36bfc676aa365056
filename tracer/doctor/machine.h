/*
 * The machine checks of `cutrace doctor`: device nodes, the kernel module,
 * which driver libraries the loader would pick, container and environment
 * hints, and the driver/runtime version contract, each turned into
 * findings {severity, layer, summary, fix}.  Nothing here loads a driver
 * library or issues an ioctl; device nodes are only opened and closed.
 *
 * Every system path is read under opts->root, so tests build a fake /dev,
 * /proc, /sys and /etc in a temporary directory.
 */
#ifndef CT_MACHINE_H
#define CT_MACHINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "compat.h"
#include "diag.h"
#include "elfinfo.h"
#include "json.h"
#include "kmsg.h"

/* ---- findings ------------------------------------------------------- */

enum ct_severity { CT_SEV_OK, CT_SEV_INFO, CT_SEV_WARN, CT_SEV_PROBLEM };

/* The layer a finding belongs to: enum ct_layer and ct_layer_name() of
 * diag.h, the fixed vocabulary shared with the diagnosis of traces
 * ("loader", "device-node", "kernel-handshake", ...). */

const char *ct_severity_name(enum ct_severity s);  /* "ok" "info" "warn" "problem" */

enum ct_section {
	CT_SEC_DEVICES, CT_SEC_KMOD, CT_SEC_LIBS, CT_SEC_CONTAINER, CT_SEC_ENV, CT_SEC_CONTRACT,
	CT_SEC_COUNT
};
const char *ct_section_title(enum ct_section s);   /* "Device nodes" ... */
const char *ct_section_key(enum ct_section s);     /* "device_nodes" ... (JSON) */

struct ct_finding {
	enum ct_section section;
	enum ct_severity sev;
	enum ct_layer layer;
	char summary[320];
	char fix[320];                /* "" when nothing to do */
};

/* ---- facts ---------------------------------------------------------- */

struct ct_devnode {
	char path[128];               /* logical path, "/dev/nvidiactl" */
	const char *role;             /* "ctl" "gpu" "uvm" "uvm-tools" "modeset" "caps" "dxg" */
	int index;                    /* N of /dev/nvidiaN and nvidia-capN, else -1 */
	bool required;                /* CUDA init needs it */
	bool exists;
	bool is_chr;
	unsigned major, minor;
	int exp_major, exp_minor;     /* -1 = not known / any */
	bool major_ok, minor_ok;
	unsigned mode;                /* st_mode & 07777 */
	uid_t uid;
	gid_t gid;
	char owner[32], group[32];
	bool open_tried;
	const char *open_mode;        /* "O_RDWR" / "O_RDONLY" */
	int open_errno;               /* 0 = opened */
	bool group_member;            /* this user is in the node's group */
};

#define CT_MAX_NODES  48
#define CT_MAX_GPUS   16
#define CT_MAX_PARAMS 48

struct ct_kmod {
	bool proc_present;            /* /proc/driver/nvidia/version */
	char proc_line[256];          /* its first line */
	char version[32];             /* parsed from it */
	const char *flavor;           /* "open", "proprietary", "unknown" */
	bool sys_present;             /* /sys/module/nvidia/version */
	char sys_version[32];
	bool versions_disagree;
	bool nvidia_loaded;           /* /sys/module/nvidia */
	bool uvm_loaded;              /* /sys/module/nvidia_uvm */
	bool modeset_loaded;
	char uvm_disable_hmm[8];      /* /sys/module/nvidia_uvm/parameters/uvm_disable_hmm */
	bool proc_devices_read;
	int major_nvidia, major_nvidiactl, major_uvm, major_caps; /* /proc/devices, -1 absent */
	int gpu_count;                /* /proc/driver/nvidia/gpus entries, -1 unknown */
	/* sorted by bus id, the order of nvidia-smi's and dcgm-exporter's indexes */
	struct {
		char bus[32];
		char model[96];
		char uuid[64];
		char minor[8];
	} gpus[CT_MAX_GPUS];
	int n_params;
	struct { char name[48]; char value[48]; } params[CT_MAX_PARAMS];
};

/* the hardware and what the kernel made of it (machine_hw.c) */
#define CT_MAX_PCI 16
struct ct_pcidev {
	char addr[16];                     /* "0000:01:00.0" */
	unsigned device;                   /* PCI device id (vendor 0x10de) */
	unsigned cls;                      /* PCI class, 0x030200 */
	char driver[32];                   /* the bound driver, "" none */
	const char *chip, *product, *arch; /* from pci.ids (xlat.h), NULL unknown */
};

struct ct_hw {
	char kernel_release[64]; /* /proc/sys/kernel/osrelease ("" unknown) */
	bool modules_dep_read;   /* /lib/modules/<release>/modules.dep */
	char module_file[192];   /* its nvidia.ko entry, "" none */
	char dkms[96];           /* versions under /var/lib/dkms/nvidia/<v>/<release>, "" none */
	int secure_boot;         /* 1 on, 0 off, -1 unknown (efivars) */
	char lockdown[24];       /* active mode of /sys/kernel/security/lockdown, "" unknown */
	int n_pci;               /* NVIDIA display-class devices in /sys/bus/pci */
	struct ct_pcidev pci[CT_MAX_PCI];
	char fw_dir[128]; /* the GSP firmware directory looked at, "" none */
	int fw_count;     /* gsp_*.bin files in it, -1 not looked */
	char fw_files[128];
	struct ct_kmsg kmsg; /* the kernel log's NVIDIA lines */
};

/* where the loader emulation found a candidate */
enum ct_cand_src { CT_SRC_LD_LIBRARY_PATH, CT_SRC_LD_CACHE, CT_SRC_SYSTEM_DIR, CT_SRC_OFF_PATH };
/* what ld.so does with it */
enum ct_cand_state {
	CT_CAND_CHOSEN,      /* the file dlopen would load */
	CT_CAND_SKIPPED,     /* ld.so passes over it (wrong class/machine, unreadable) */
	CT_CAND_FATAL,       /* ld.so stops here with an error: dlopen fails */
	CT_CAND_SHADOWED,    /* later on the path than the chosen one */
	CT_CAND_OFF_PATH,    /* exists, but not on the search path */
};
const char *ct_cand_src_name(enum ct_cand_src s);     /* "LD_LIBRARY_PATH" "ld.so.cache" ... */
const char *ct_cand_state_name(enum ct_cand_state s); /* "chosen" "skipped" ... */

struct ct_libcand {
	enum ct_cand_src src;
	enum ct_cand_state state;
	char path[CT_ELF_PATH_MAX];   /* logical path */
	char note[128];
	struct ct_elfinfo elf;
};

#define CT_MAX_CAND 24

struct ct_libsearch {
	char name[32];                /* "libcuda.so.1" */
	int n;
	struct ct_libcand c[CT_MAX_CAND];
	int chosen;                   /* index, -1 = none */
	int fatal;                    /* index of the file that makes dlopen fail, -1 */
};

#define CT_MAX_CUDART 16

struct ct_cudart {
	char path[CT_ELF_PATH_MAX];   /* logical path */
	const char *src;              /* "LD_LIBRARY_PATH" "ld.so.cache" "system dir" "toolkit" "python" "conda" */
	bool loader_visible;          /* found where ld.so looks by itself */
	struct ct_elfinfo elf;
	int cuda_version;             /* 13000; 0 unknown */
	bool version_exact;           /* the minor is known (not just the SONAME major) */
	char version_from[64];        /* "file name", "include/cuda_runtime_api.h", ... */
	struct ct_compat compat;
};

struct ct_container {
	bool dockerenv, containerenv;
	bool in_container;
	char pid1_cgroup[160];        /* first line of /proc/1/cgroup */
	bool cgroup_read;             /* /proc/self/cgroup was readable */
	bool cgroup_v2;
	char devices_list[192];       /* v1 devices.list path read, "" none */
	int devices_allowed;          /* v1: 1 allowed, 0 denied, -1 unknown */
	int no_new_privs;             /* /proc/self/status NoNewPrivs, -1 unknown */
	char toolkit_files[256];      /* nvidia-container-toolkit files present */
};

#define CT_MAX_ENV 32
#define CT_MAX_FINDINGS 96

struct ct_machine_report {
	char root[256];
	uid_t uid;
	int n_nodes;
	struct ct_devnode nodes[CT_MAX_NODES];
	bool wsl;                     /* /dev/dxg present */
	struct ct_kmod kmod;
	struct ct_hw hw;              /* PCI devices, module file, Secure Boot, firmware, kernel log */
	struct ct_libsearch cuda;     /* libcuda.so.1 */
	struct ct_libsearch cuda_dev; /* libcuda.so (what numba & co. dlopen) */
	struct ct_libsearch nvml;     /* libnvidia-ml.so.1 */
	int n_cudart;
	struct ct_cudart cudart[CT_MAX_CUDART];
	struct ct_container container;
	int n_env;
	struct { char name[40]; char value[256]; } env[CT_MAX_ENV];
	/* the contract */
	char driver_version[32];      /* the driver the runtimes are compared with */
	const char *driver_version_from;
	int driver_cuda_version;
	bool compat_loaded;
	int n_findings;
	struct ct_finding findings[CT_MAX_FINDINGS];
	int n_problems, n_warnings;
};

struct ct_machine_opts {
	const char *root;                /* prefix of every system path; NULL/"" = "/" */
	char *const *env;                /* "K=V" list, NULL-terminated; NULL = environ */
	const char *ld_cache;            /* NULL = <root>/etc/ld.so.cache, "" = none */
	const char *const *system_dirs;  /* ld.so's default dirs; NULL = built-in, under root */
	const char *const *off_path_dirs;/* also look here (not searched by ld.so); NULL = built-in */
	const char *const *cudart_dirs;  /* extra libcudart places; NULL = built-in */
	bool no_open;                    /* do not open device nodes */
	bool no_python;                  /* do not ask python3 for its site-packages */
	const char *kmsg;                /* the kernel log to read; NULL = <root>/dev/kmsg, "" = none */
	const char *maps;                /* mapped objects to check (a maps file); NULL = /proc/self/maps
					    on the machine itself, none under a root; "" = none */
};

/* Run every check and fill *r (large: allocate it).  Returns the exit code
 * the checks imply: CT_EXIT_OK, or CT_EXIT_PROBLEM when a finding is a
 * problem. */
int ct_machine_check(struct ct_machine_report *r, const struct ct_machine_opts *o);

/* Text: sections with their facts and findings (colour per ct_c(f, ...)). */
void ct_machine_report_text(const struct ct_machine_report *r, FILE *f);
/* JSON: the report's members, written into an object the caller opened. */
void ct_machine_report_json(const struct ct_machine_report *r, struct ct_json *j);
/* One-line verdict of the checks into buf; returns the exit code. */
int ct_machine_verdict(const struct ct_machine_report *r, char *buf, size_t len);

/* ---- reusable pieces (tested on their own) --------------------------- */

/* Entries of an ld.so.cache file (glibc "glibc-ld.so.cache1.1" format) whose
 * key equals name (or starts with it, prefix = true), in cache order.
 * flags: the entry's flags word (ABI, e.g. 0x0303 libc6,x86-64).  Returns
 * the number of entries matched, -1 if the file is unreadable or of an
 * unknown format. */
typedef void (*ct_ldcache_cb)(const char *key, const char *value, int32_t flags, void *arg);
int ct_ldcache_lookup(const char *cache_path, const char *name, bool prefix,
		      ct_ldcache_cb cb, void *arg);
/* whether a cache entry's flags match this process's ABI */
bool ct_ldcache_flags_match(int32_t flags);

#endif
