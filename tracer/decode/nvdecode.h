/*
 * NVIDIA ioctl decoder: one recorded ioctl event -> what the driver was asked
 * and what it answered, in the driver's own names.
 *
 *   ioctl(5, 0xc020462a) = 0
 * becomes
 *   RM_CONTROL NV0000_CTRL_CMD_GPU_ATTACH_IDS -> NV_ERR_INSUFFICIENT_PERMISSIONS
 *
 * Facts come from ABI.md (cited by section); the name
 * tables and per-version layouts from xlat.h.  Every value the tables do not
 * name is still shown structurally ("_IOC(RW,'F',0xd9,2608)", "UVM cmd
 * 0x1234", "NV2080 legacy-GSS cat 0x81 idx 0x59", "class 0x1234"); nothing is
 * dropped.  Decoding follows the driver version of the trace (0 = unknown:
 * the newest tables).
 *
 * What the shim records for an ioctl is described in shim/capture.c: the
 * block before and after the call (first 1024 bytes + the last 64 of bigger
 * blocks), the RM_CONTROL / RM_ALLOC parameters behind the block's pointer,
 * the GET_BUILD_VERSION strings, and the XFER inner block (with, for an
 * RM_CONTROL / RM_ALLOC inside, its parameters as a second PAYLOAD).
 *
 * A block that was not recorded (the program's pointer was bad: -EFAULT)
 * names no command or class: "RM_CONTROL (parameter block unreadable)".
 */
#ifndef CT_NVDECODE_H
#define CT_NVDECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "devmap.h"
#include "trace.h"

struct ct_json;

/* "nvidiactl", "nvidia0", "nvidia-uvm", "nvidia-caps/nvidia-cap1", ... into buf */
const char *ct_nv_node_name(uint32_t node, char *buf, unsigned len);

/* ---- the decoded ioctl ---------------------------------------------------------- */

enum ct_nv_family {
	CT_NV_FAM_NOT_NVIDIA = 0, /* not on an NVIDIA node (or not an ioctl) */
	CT_NV_FAM_FRONTEND,       /* nv.c escapes 200+k on nvidiactl / nvidiaN */
	CT_NV_FAM_RM,             /* NV_ESC_RM_* (0x27..0x5F) on nvidiactl / nvidiaN */
	CT_NV_FAM_UVM,            /* plain command numbers on nvidia-uvm(-tools) */
	CT_NV_FAM_OTHER,          /* another NVIDIA node (caps, modeset, nvswitch, ...) */
};

/* what kind of value `status` holds */
enum ct_nv_status_kind {
	CT_NV_ST_NONE = 0,     /* the escape reports only through errno */
	CT_NV_ST_NV_STATUS,    /* an NV_STATUS: status/Status/rmStatus/adapterStatus */
};

/* the per-escape arguments held in ct_nv_ioctl.u (which member is valid) */
enum ct_nv_args {
	CT_NV_A_NONE = 0,
	CT_NV_A_SYS_PARAMS, CT_NV_A_REGISTER_FD, CT_NV_A_ATTACH_GPUS, CT_NV_A_OS_EVENT,
	CT_NV_A_STATUS_CODE, CT_NV_A_WAIT_OPEN, CT_NV_A_NUMA_INFO, CT_NV_A_VERSION_STR,
	CT_NV_A_RM_CONTROL, CT_NV_A_RM_ALLOC, CT_NV_A_RM_FREE, CT_NV_A_RM_ALLOC_MEMORY,
	CT_NV_A_RM_MAP_MEMORY, CT_NV_A_RM_UNMAP_MEMORY, CT_NV_A_RM_UPDATE_MAPPING,
	CT_NV_A_UVM,
	/* CARD_INFO uses the cards[] array, not the union */
	CT_NV_A_CARD_INFO,
};

/* ct_nv_ioctl.unknown: what the tables could not name (golden tests count these) */
#define CT_NV_UNK_ESCAPE  0x01u /* frontend/RM nr without a name */
#define CT_NV_UNK_CLASS   0x02u /* RM_ALLOC / RM_ALLOC_MEMORY class without a name */
#define CT_NV_UNK_CONTROL 0x04u /* RM control without a name or a structural form */
#define CT_NV_UNK_UVM     0x08u /* UVM command number without a name */

/* one valid CARD_INFO entry (ABI.md §3 nv_ioctl_card_info_t) */
struct ct_nv_card {
	uint32_t domain;
	uint8_t bus, slot, function;
	uint16_t vendor, device;
	uint32_t gpu_id;
	uint32_t minor;          /* the N of /dev/nvidiaN (ABI.md §11.13: not PCI order) */
	uint16_t interrupt_line;
	uint64_t reg_address, reg_size, fb_address, fb_size;
	char dev_name[11];
};
#define CT_NV_MAX_CARDS 64

/*
 * The version handshake, first class because a mismatch is a root cause.
 * Two sources (ABI.md §4):
 *  - NV_ESC_CHECK_VERSION_STR (NVML, gVisor...): client string = the block
 *    before the call, kernel string = the block after; -EINVAL with reply 1
 *    and different strings = MISMATCH.
 *  - RM control 0x101 NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION (libcuda 580)
 *    and its _V2 form 0x13E: only the kernel side is in the ioctl; result
 *    REPORTED until ct_nv_handshake_compare() is given the client version
 *    (e.g. from the libcuda.so.X.Y.Z a dlopen loaded).
 */
enum ct_nv_hs_source { CT_NV_HS_NONE = 0, CT_NV_HS_CHECK_VERSION_STR, CT_NV_HS_BUILD_VERSION,
		       CT_NV_HS_BUILD_VERSION_V2 };
enum ct_nv_hs_result {
	CT_NV_HS_UNKNOWN = 0,  /* not answered (no exit, status failure, unreadable) */
	CT_NV_HS_MATCH,        /* client and kernel agree (per the command's rule) */
	CT_NV_HS_MISMATCH,     /* the kernel rejected the client's version */
	CT_NV_HS_REPORTED,     /* the kernel told its version, nothing compared */
};
struct ct_nv_handshake {
	enum ct_nv_hs_source source;
	enum ct_nv_hs_result result;
	uint32_t cmd;            /* CHECK_VERSION_STR cmd (0 strict, '1' relaxed, '2' query) */
	uint32_t reply;          /* CHECK_VERSION_STR reply (1 = the kernel processed it) */
	char client[65];         /* the client's version string ("" unknown) */
	char kernel[257];        /* the kernel's version (driverVersion for 0x101/0x13E) */
	char version[257];       /* 0x101/0x13E: the build "version" string */
	char branch[257];        /* 0x13E (560+): driverBranch */
	char title[257];         /* 0x101/0x13E: title */
	uint32_t changelist, official_changelist;
	uint32_t client_drv, kernel_drv; /* parsed version codes, 0 unknown */
};

struct ct_nv_ioctl {
	enum ct_nv_family family;
	/* the node the ioctl went to */
	uint32_t node;           /* CT_NODE_* << 16 | minor (after the device map) */
	unsigned node_kind, node_minor;
	char node_name[48];      /* "nvidiactl", "nvidia0", "nvidia-uvm", ... */
	bool node_from_rdev;     /* classified from the open's device number */
	uint32_t shim_node;      /* the shim's own view (CT_FLD_NODE): it sized the
				    recorded block for that kind of node */
	int32_t fd;
	uint64_t request, argp;

	/* the escape or command */
	char name[64];           /* "NV_ESC_RM_CONTROL", "UVM_REGISTER_GPU", "_IOC(RW,'F',0xd9,2608)", "UVM cmd 0x1234" */
	char short_name[64];     /* name without "NV_ESC_" ("RM_CONTROL") */
	bool named;              /* name came from a table */
	uint32_t nr;             /* _IOC_NR (frontend/RM) or the UVM command number */
	unsigned dir;            /* _IOC_DIR: 0 none, 1 write, 2 read, 3 both (frontend/RM) */
	uint8_t ioc_type;        /* _IOC_TYPE ('F' = 0x46 from libcuda) */
	uint32_t ioc_size;       /* _IOC_SIZE of the request (frontend/RM) */
	uint32_t size;           /* parameter block size the shim used (BLOCK_SIZE) */
	uint32_t expected_size;  /* what this driver version expects, 0 variable/unknown */
	const char *params_type; /* "NVOS64_PARAMETERS", NULL unknown */

	/* XFER: the fields above describe the inner escape */
	bool via_xfer;
	uint32_t xfer_cmd, xfer_size;
	uint64_t xfer_ptr;

	/* the outcome */
	bool returned;           /* an exit record exists */
	int64_t ret;
	int32_t err;             /* errno when ret < 0 */
	bool injected;           /* CT_RF_INJECTED: a cutrace rule produced (part of) it */
	uint32_t inject_rule, inject_action;
	bool unreadable;         /* CT_RF_UNREADABLE: some user memory was not readable */
	bool has_status;
	enum ct_nv_status_kind status_kind;
	uint32_t status;         /* NV_STATUS */
	int32_t status_off;      /* where it was read in the block, -1 none */
	const char *status_name; /* version-aware name, NULL when the value has none */
	bool is_warning;         /* NV_WARN_*: not a failure (ABI.md §11.11) */
	bool ok;                 /* returned, ret >= 0, no failing status or rc */

	unsigned unknown;        /* CT_NV_UNK_* */
	char warning[512];       /* "; "-separated: wrong node, block size, ... ("" none) */
	char summary[320];       /* one line for the timeline */

	enum ct_nv_args args;
	union {
		struct { uint64_t memblock_size; } sys_params;
		struct { int32_t ctl_fd; } register_fd;
		struct { unsigned n; uint32_t ids[16]; } attach;      /* first 16 ids */
		struct { uint32_t hClient, hDevice, fd; } os_event;
		struct { uint32_t domain; uint8_t bus, slot; } status_code;
		struct { int32_t rc; } wait_open;                     /* adapterStatus in status */
		struct {
			int32_t nid, state;
			const char *state_name;  /* NV_IOCTL_NUMA_STATUS_* (a NUMA state, ABI.md §11.12) */
			uint64_t memblock_size, numa_mem_addr, numa_mem_size;
			uint32_t offline_count;
		} numa;
		struct {
			uint32_t hClient, hObject, cmd, flags, params_size;
			uint64_t params;
			bool cmd_named;          /* cmd_name is a table name */
			bool cmd_structural;     /* legacy-GSS / BINAPI / category description */
			bool cmd_unreadable;     /* no command recorded (block unreadable or too
						    short): cmd_name says which, cmd is 0 */
			char cmd_name[80];
			/* the answer of GPU_GET_VIRTUALIZATION_MODE (virtualizationMode) and
			 * GPU_QUERY_COMPUTE_MODE_RULES (rules), from the payload (ABI.md §7) */
			bool has_answer;
			uint32_t answer;
			/* the GPU UUID of GPU_GET_GID_INFO and GPU_GET_UUID_FROM_GPU_ID
			 * ("GPU-8a1b2c3d-...", either format), "" none (ABI.md §7) */
			char uuid[48];
		} control;
		struct {
			uint32_t hRoot, hParent;
			uint32_t hObject_in, hObject_out;  /* 0 in: RM picks; the handle out */
			uint32_t hClass_in, hClass_out;    /* the kernel rewrites 0/1 -> 0x41 (ABI.md §11.15) */
			uint32_t params_size, flags;
			uint64_t pAllocParms, pRightsRequested;
			bool nvos64;                       /* NVOS64 (else NVOS21) */
			bool class_named;
			bool class_unreadable;             /* no class recorded: class_name says why */
			char class_name[48];
			/* from the allocation parameters (PAYLOAD): NV01_DEVICE_0's
			 * deviceId, NV20_SUBDEVICE_0's subDeviceId (ABI.md §7) */
			bool has_instance;
			uint32_t instance;
		} alloc;
		struct { uint32_t hRoot, hParent, hObjectOld; } free;
		struct {
			uint32_t hRoot, hParent, hObject_in, hObject_out, hClass, flags;
			uint64_t pMemory, limit;
			int32_t fd;              /* @48: the fd that will be mmap()ed */
			bool class_named;
			bool class_unreadable;   /* no class recorded: class_name says why */
			char class_name[48];
		} alloc_memory;
		struct {
			uint32_t hClient, hDevice, hMemory, flags;
			uint64_t offset, length, pLinearAddress;
			int32_t fd;              /* @48: the fd that will be mmap()ed next */
		} map_memory;
		struct {
			uint32_t hClient, hDevice, hMemory, flags;
			uint64_t pLinearAddress;
		} unmap_memory;
		struct {
			uint32_t hClient, hDevice, hMemory;
			uint64_t pOldCpuAddress, pNewCpuAddress;
		} update_mapping;
		struct {
			bool has_uuid;
			uint8_t uuid[16];
			bool has_ctrl_fd, has_handles, has_range;
			int32_t rm_ctrl_fd;
			uint32_t hClient, hObject;   /* hVaSpace / hChannel / hMemory */
			uint64_t base, length;
			uint64_t flags;              /* UVM_INITIALIZE */
			int32_t uvm_fd;              /* UVM_MM_INITIALIZE */
			uint64_t range_group_id;     /* UVM_CREATE_RANGE_GROUP */
			int32_t numa_node;           /* UVM_REGISTER_GPU, -1 none */
			bool numa_enabled, pageable;
		} uvm;
	} u;

	/* CARD_INFO: the valid entries (ct_nv_decode clears everything before
	 * cards[] and the handshake; entries are valid below ncards only) */
	unsigned ncards;         /* valid entries */
	unsigned card_slots;     /* entries the caller offered (size / 72) */
	struct ct_nv_card cards[CT_NV_MAX_CARDS];

	/* CHECK_VERSION_STR / GET_BUILD_VERSION(_V2) */
	struct ct_nv_handshake handshake;
};

/*
 * Decode one event.  drv: driver version code (ct_trace_driver_version; 0 =
 * unknown, newest tables).  devs may be NULL (then the shim's node word is
 * used as it is).  Returns 0 when ev is an ioctl (decoded, even if on a
 * non-NVIDIA fd: family says so), -1 when it is not an ioctl event or lacks
 * its enter record (out is still cleared and given a summary).
 */
int ct_nv_decode(const struct ct_event *ev, uint32_t drv, const struct ct_nv_devmap *devs,
		 struct ct_nv_ioctl *out);

/*
 * Compare a GET_BUILD_VERSION handshake with the client's version (e.g.
 * "580.95.05" from libcuda.so.580.95.05).  Sets client/client_drv and turns
 * REPORTED into MATCH or MISMATCH by the rule libcuda 580.159.04 applied on
 * the H200: a module of its own branch with the same or an older minor is
 * accepted (any patch); a newer minor or another branch is not (a compat
 * libcuda 580.95.05 on a 580.159.04 module fails cuInit with 803).  Returns
 * the result.
 */
enum ct_nv_hs_result ct_nv_handshake_compare(struct ct_nv_handshake *h, const char *client);

/* names for the enums above ("frontend", "MISMATCH", ...) */
const char *ct_nv_family_name(enum ct_nv_family f);
const char *ct_nv_hs_result_name(enum ct_nv_hs_result r);
const char *ct_nv_hs_source_name(enum ct_nv_hs_source s);
/* NV_IOCTL_NUMA_STATUS_* name without the prefix ("ONLINE"), NULL unknown */
const char *ct_nv_numa_state_name(int32_t state);

/* Write the decoded ioctl as one JSON object value (after a key or in an array). */
void ct_nv_json(struct ct_json *j, const struct ct_nv_ioctl *d);

/* RM's virtualization mode (GPU_GET_VIRTUALIZATION_MODE: "VGX (vGPU guest)") and compute-mode
 * rules (GPU_QUERY_COMPUTE_MODE_RULES: "EXCLUSIVE_COMPUTE_PROCESS (Exclusive Process)");
 * NULL for a value the headers do not define */
const char *ct_nv_virt_mode_name(uint32_t mode);
const char *ct_nv_compute_rules_name(uint32_t rules);
#define CT_NV_VIRT_MODE_VGX         2u /* NV0080_CTRL_GPU_VIRTUALIZATION_MODE_VGX: a vGPU guest */
#define CT_NV_COMPUTE_RULES_NONE    0u /* NV2080_CTRL_GPU_COMPUTE_MODE_RULES_NONE: Default */
#define CT_NV_CMD_GPU_GET_VIRT_MODE 0x00800289u
#define CT_NV_CMD_GPU_COMPUTE_RULES 0x20800131u
#define CT_NV_CMD_GPU_GET_GID_INFO  0x2080014Au
#define CT_NV_CMD_GPU_UUID_FROM_ID  0x00000275u

#endif
