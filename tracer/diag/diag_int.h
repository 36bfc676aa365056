/*
 * Internal to the diag room: the facts one pass over a process's events
 * collects (facts.c) and the verdict's rules read (rules.c).
 */
#ifndef CT_DIAG_INT_H
#define CT_DIAG_INT_H

#include <stdarg.h>
#include <string.h>

#include "diag.h"
#include "fmt.h"
#include "tracer.h"

/* one observation: the step it was made at, and its values */
struct fact {
	struct ct_diag_step s;
	int code;                /* errno, status, return code */
	unsigned node_kind;
	char what[200];          /* short description for the summary */
	char path[128];
};

struct ct_diag {
	struct ct_trace *t;
	uint32_t drv;
	uint64_t t0;
	bool have_t0;

	/* loader */
	bool cuda_loaded;
	char cuda_path[256];
	char cuda_req[256]; /* the name the program asked dlopen for */
	uint64_t cuda_size;
	char cuda_ver[32];
	bool cuda_stub, cuda_compat;
	struct fact cuda_load;       /* the successful load */
	struct fact cuda_load_fail;  /* the first failed load */
	char cuda_dlerror[300];
	bool cudart_loaded;
	char cudart_path[256];
	int cudart_ver;
	bool nvml_loaded;
	char nvml_path[256]; /* the libnvidia-ml the loader picked, the name asked for, its version */
	char nvml_req[256];
	char nvml_ver[32];
	struct fact nvml_load_fail;  /* the first failed load of NVML */
	char nvml_dlerror[300];
	bool deepbind;
	char deepbind_lib[128];

	/* kernel boundary */
	bool nv_open_ok;             /* an NVIDIA node was opened */
	bool nv_ioctl_seen;          /* an NVIDIA ioctl was made */
	struct fact open_fail;       /* first failed open of a driver node (not caps) */
	struct fact caps_fail;       /* first failed open of an nvidia-caps node */
	bool hs_seen;
	char hs_kernel[64];
	struct fact hs_event;        /* the first answered handshake */
	struct fact hs_mismatch;
	struct fact rm_fail;
	struct fact uvm_fail;
	int cards;                   /* GPUs CARD_INFO listed, -1 never answered */
	/* what the driver did before it opened a node (format 1.5, family fs) */
	bool fs_mknod_seen; /* libcuda made a /dev/nvidia* node itself */
	int fs_mknod_err;   /* its errno (0: made) */
	char fs_mknod_path[64];
	uint64_t fs_mknod_rdev; /* major << 32 | minor */
	int fs_modprobe;        /* stat of nvidia-modprobe: 0 unseen, 1 there, -1 absent */
	char fs_modprobe_path[64];
	/* the helper it ran (format 1.6): how often, how many failed, the last */
	int helper_runs, helper_failed;
	char helper_path[64];
	char helper_how[96]; /* "exited 1", "its exec failed: EACCES, ..." (ct_proc_outcome) */
	struct fact card_empty;

	/* driver API */
	bool cuinit_seen;
	struct fact cuinit;          /* the first cuInit */
	char cvd[160];
	bool cvd_set;
	int drv_version;
	struct fact drvver;          /* the cuDriverGetVersion that reported it */
	bool devcount_seen;
	int dev_count;
	struct fact devcount_fail;
	struct fact devget_fail;
	struct fact ctx_fail;
	int gpa_max_ver;
	int gpa_notfound[2]; /* cuGetProcAddress _v2 [0] and v1 [1] look-ups answered NOT_FOUND */
	struct fact gpa_notfound_first;

	/* runtime, NVML */
	int rt_version, rt_drv_version;
	struct fact rt_fail;
	struct fact nvml_fail;

	/* the process snapshot (format 1.3): how libcuda was found, what sits
	 * between the program and the driver (issue 19, G1, G4, G5) */
	struct fact snap;
	bool cuda_deleted;     /* the mapped libcuda file was deleted */
	char cuda_mapped[256]; /* libcuda's path as mapped */
	char cuda_mount[256];  /* "<mount point> <root> <fstype> <source>" */
	bool mount_deleted;    /* that mount's root was deleted on the host */
	char interposer[128];  /* a known interposer mapped (HAMi-core's libvgpu.so, ...) */
	char interposer_path[256];
	int ldcache_so1, ldcache_so; /* in ld.so.cache: -1 unknown, 0 absent, 1 present */
	char ldcache_so1_path[200];
	bool rm_fail_nostatus; /* rm_fail is -1 EINVAL with no RM status */
	int nv_ioctls;         /* NVIDIA ioctls that returned */

	/* what RM answered libcuda at cuInit (ABI.md §7; catalog G6 against B.10):
	 * the last answers; -1 never asked */
	int virt_mode;     /* GPU_GET_VIRTUALIZATION_MODE: 2 VGX, a vGPU guest */
	int compute_rules; /* GPU_QUERY_COMPUTE_MODE_RULES: 0 Default ... 3 Exclusive Process */
	struct fact virt;  /* the step that answered virt_mode */
	/* the GPU UUIDs RM answered (GPU_GET_GID_INFO, GPU_GET_UUID_FROM_GPU_ID), each
	 * once, in the order first seen: what CUDA_VISIBLE_DEVICES's GPU- entries are
	 * matched against (catalog G7) */
	char gpu_uuid[32][48];
	int n_gpu_uuid;

	/* WSL2 (issue 19 group 3, catalog G3) */
	bool wsl;             /* a WSL kernel release, or /dev/dxg opened */
	struct fact dxg_fail; /* the first failed ioctl on /dev/dxg */
	bool dxcore_loaded;
	struct fact dxcore_fail; /* the first failed load of libdxcore */
	char dxcore_dlerror[300];

	/* calls that never returned */
	struct fact unfinished;      /* first driver/runtime/NVML call without exit */
	int unfinished_fam;
	struct fact unfinished_io;   /* last NVIDIA open/ioctl without exit */
	struct fact unfinished_ld;   /* last dlopen/dlmopen/dlsym/dlvsym without exit */
	struct fact first_injected;  /* the first record any rule marked (a delay too) */
	struct fact first_cause;     /* the first a rule changed the outcome of: an error,
				      * a code, a status, a value or a version (not a delay,
				      * not a capability node libcuda tolerates) */
	bool delay_marks;            /* the trace marks delayed calls (some record has one) */
	struct fact slow; /* the slowest call that returned (driver, runtime, NVML, loader) */
	uint64_t slow_ns;
	struct ct_proc_end end_hint; /* ct_diag_set_end */
	uint64_t last_t;
	uint64_t events;

	/* scratch: an ioctl describe did not decode (ct_nv_decode clears it);
	 * last, so that ct_diag_begin clears only what comes before it */
	struct ct_nv_ioctl nv;
};

static inline bool ct_diag_has(const char *s, const char *needle)
{
	return s && strstr(s, needle);
}

#endif
