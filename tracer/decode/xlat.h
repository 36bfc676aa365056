/*
 * Name tables: what the numbers in a trace mean.  Every table is data in
 * common/xlat/<family>.in with its source named, turned into C at build time
 * (common/xlat/gen_xlat.py); CUresult and cudaError names come from the CUDA
 * headers found at build time.  Where names or layouts differ by driver
 * version, lookups take the driver version recorded in the trace
 * (ct_drv_version code, 0 = unknown: use the newest table).
 */
#ifndef CT_XLAT_H
#define CT_XLAT_H

#include <stdbool.h>
#include <stdint.h>

#include "version.h" /* CT_DRV, ct_drv_version_parse */

/* errno: "ENOENT" (NULL if unknown); and the number from a name, -1 if unknown */
const char *ct_errno_name(int e);
int ct_errno_from_name(const char *name);

/* CUDA driver API CUresult, from cuda.h */
const char *ct_cu_result_name(int r);
int ct_cu_result_from_name(const char *name, int *out);   /* 0 ok, -1 unknown */
/* CUDA runtime cudaError_t, from driver_types.h */
const char *ct_cudart_error_name(int r);
int ct_cudart_error_from_name(const char *name, int *out);
/* NVML nvmlReturn_t */
const char *ct_nvml_return_name(int r);
int ct_nvml_return_from_name(const char *name, int *out); /* 0 ok, -1 unknown */

/* NV_STATUS, with per-version names (0x8B, 0x81/0x82 changed) */
const char *ct_nv_status_name(uint32_t status, uint32_t drv);
bool ct_nv_status_is_warning(uint32_t status);       /* NV_WARN_* (>= 0x10001) */
int ct_nv_status_from_name(const char *name, uint32_t drv, uint32_t *out);

/* Which node an escape must be sent to */
enum ct_nv_node_rule { CT_NODE_RULE_ANY, CT_NODE_RULE_CTL, CT_NODE_RULE_GPU };

/* NVIDIA frontend (200+k) and RM (0x27..0x5F) escapes, keyed by _IOC_NR */
struct ct_nv_escape {
	const char *name;        /* "NV_ESC_RM_CONTROL" */
	uint8_t nr;
	uint32_t size;           /* parameter block size, 0 = variable/array/unknown */
	uint32_t elem_size;      /* for arrays (CARD_INFO 72, ATTACH_GPUS_TO_FD 4) */
	int32_t status_off;      /* offset of an NV_STATUS in the block, -1 none */
	enum ct_nv_node_rule node;
	const char *params;      /* C type of the block ("NVOS64_PARAMETERS"), NULL unknown */
	uint32_t since, until;   /* driver versions this row holds for: [since, until), 0 = open */
	uint16_t flags;          /* CT_ESC_F_* */
};
#define CT_ESC_F_ARRAY       0x01u /* size = N * elem_size */
#define CT_ESC_F_NUMA_STATUS 0x02u /* status_off holds a NUMA state (NV_IOCTL_NUMA_STATUS_*), not an NV_STATUS */
#define CT_ESC_F_XFER        0x04u /* block is an nv_ioctl_xfer_t wrapping another escape */
#define CT_ESC_F_UNHANDLED   0x08u /* defined, but the kernel never handles it (-EINVAL) */
#define CT_ESC_F_ROOT_ONLY   0x10u

/* lookup by nr and the block size actually sent (RM_ALLOC has two forms).
 * Only nr & 0xFF is used (as the kernel does).  Picks, in order: the row for
 * this driver version whose size matches (size 0 = don't care); a row of
 * another version whose size matches; the row for this version; the newest.
 * So check since/until when the version matters.  NULL for unknown nr. */
const struct ct_nv_escape *ct_nv_escape(unsigned nr, uint32_t size, uint32_t drv);

/* NVIDIA PCI device ids (vendor 0x10de), Maxwell and later, from pci.ids
 * (common/xlat/pci_nvidia.in): the chip code ("GH100") and the product
 * ("H200 SXM 141GB", "" when pci.ids names none); NULL for an unknown id */
const char *ct_pci_nvidia_chip(uint32_t device, const char **product);
/* the architecture of a chip code: "Maxwell" (GM), "Pascal" (GP), "Volta"
 * (GV), "Turing" (TU), "Ampere" (GA), "Ada" (AD), "Hopper" (GH), "Blackwell"
 * (GB); NULL for anything else */
const char *ct_nvidia_arch(const char *chip);

/* RM classes and control commands */
const char *ct_rm_class_name(uint32_t cls);
const char *ct_rm_control_name(uint32_t cmd);
/* the name, or a structural description for unnamed controls:
 * "NV2080 legacy-GSS cat 0x81 idx 0x59", "NV2081_BINAPI 0x0108",
 * "NV2080 cat GPU(0x01) idx 0x99", "NVC36F cat 0x01 idx 0x08".  Returns buf. */
const char *ct_rm_control_describe(uint32_t cmd, char *buf, unsigned len);

/* nvidia-uvm commands (plain numbers, not _IOC-encoded) */
struct ct_uvm_cmd {
	const char *name;        /* "UVM_REGISTER_GPU" */
	uint32_t nr;
	uint32_t size;           /* params size for this driver version */
	int32_t status_off;      /* rmStatus offset, -1 none */
	uint32_t since, until;   /* driver versions this row holds for: [since, until), 0 = open */
	uint16_t flags;          /* CT_UVM_F_* */
};
#define CT_UVM_F_ABSENT     0x01u /* not defined in this driver version (size 0) */
#define CT_UVM_F_NO_PARAMS  0x02u /* UVM_DEINITIALIZE */
#define CT_UVM_F_TOOLS      0x04u /* routed on /dev/nvidia-uvm-tools */
#define CT_UVM_F_NOT_ROUTED 0x08u /* defined but not routed on Linux (-ENOSYS) */
/* the row for driver version drv (0 = newest); an ABSENT row when the command
 * is known but not defined in that version; NULL for unknown numbers */
const struct ct_uvm_cmd *ct_uvm_cmd(uint32_t nr, uint32_t drv);

/* name -> number for injection rules: "NV_ESC_RM_ALLOC" -> (CT_IOCTL_NS_NV, 0x2B),
 * "UVM_REGISTER_GPU" -> (CT_IOCTL_NS_UVM, 37). Returns 0 or -1. */
enum { CT_IOCTL_NS_NV = 1, CT_IOCTL_NS_UVM = 2 };
int ct_ioctl_from_name(const char *name, int *ns, uint32_t *nr);

/* flag words, formatted "O_RDWR|O_CLOEXEC" into buf */
const char *ct_open_flags_str(uint32_t flags, char *buf, unsigned len);
const char *ct_dlopen_flags_str(int flags, char *buf, unsigned len);

#endif
