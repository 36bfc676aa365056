/* NVIDIA driver ABI constants shared by the test doubles (fake kernel,
 * fake libcuda, fake NVML).  Every number comes from tracer/decode/ABI.md
 * (which cites NVIDIA/open-gpu-kernel-modules 595.45.04 and the observed
 * 580.159.04 trace); the section is named next to each group.  The doubles
 * model the 580.159.04 kernel module: where a size changed across versions,
 * the 580 value is used.
 *
 * Nothing here is copied from NVIDIA headers: these are offsets into byte
 * blocks, read and written with rig_get32()/rig_put32() so the doubles never
 * depend on struct padding rules. */
#ifndef CUTRACE_RIG_ABI_H
#define CUTRACE_RIG_ABI_H

#include <stdint.h>
#include <string.h>

/* ---- ABI.md §1: request encoding on the nvidia frontend ---------------- */
#define RIG_NV_MAGIC          0x46u            /* 'F' */
#define RIG_IOC_NR(req)       ((unsigned)(req) & 0xFFu)
#define RIG_IOC_SIZE(req)     (((unsigned)(req) >> 16) & 0x3FFFu)
#define RIG_IOWR(nr, size)    ((3ul << 30) | ((unsigned long)(size) << 16) | \
                               (RIG_NV_MAGIC << 8) | (unsigned long)(nr))
#define RIG_MAX_IOCTL_SIZE    16384u           /* NV_ABSOLUTE_MAX_IOCTL_SIZE */

/* ---- ABI.md §2a: frontend escapes (NV_IOCTL_BASE 200 + k) -------------- */
#define NV_ESC_CARD_INFO            200
#define NV_ESC_REGISTER_FD          201
#define NV_ESC_ALLOC_OS_EVENT       206
#define NV_ESC_FREE_OS_EVENT        207
#define NV_ESC_STATUS_CODE          209
#define NV_ESC_CHECK_VERSION_STR    210
#define NV_ESC_IOCTL_XFER_CMD       211
#define NV_ESC_ATTACH_GPUS_TO_FD    212
#define NV_ESC_QUERY_DEVICE_INTR    213
#define NV_ESC_SYS_PARAMS           214
#define NV_ESC_NUMA_INFO            215
#define NV_ESC_SET_NUMA_STATUS      216
#define NV_ESC_EXPORT_TO_DMABUF_FD  217
#define NV_ESC_WAIT_OPEN_COMPLETE   218

/* ---- ABI.md §2b: RM escapes ---------------------------------------------- */
#define NV_ESC_RM_ALLOC_MEMORY      0x27
#define NV_ESC_RM_ALLOC_OBJECT      0x28
#define NV_ESC_RM_FREE              0x29
#define NV_ESC_RM_CONTROL           0x2A
#define NV_ESC_RM_ALLOC             0x2B
#define NV_ESC_RM_DUP_OBJECT        0x34
#define NV_ESC_RM_SHARE             0x35
#define NV_ESC_RM_I2C_ACCESS        0x39
#define NV_ESC_RM_IDLE_CHANNELS     0x41
#define NV_ESC_RM_VID_HEAP_CONTROL  0x4A
#define NV_ESC_RM_ACCESS_REGISTRY   0x4D
#define NV_ESC_RM_MAP_MEMORY        0x4E
#define NV_ESC_RM_UNMAP_MEMORY      0x4F
#define NV_ESC_RM_GET_EVENT_DATA    0x52
#define NV_ESC_RM_ALLOC_CONTEXT_DMA2 0x54
#define NV_ESC_RM_MAP_MEMORY_DMA    0x57
#define NV_ESC_RM_UNMAP_MEMORY_DMA  0x58
#define NV_ESC_RM_BIND_CONTEXT_DMA  0x59
#define NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO 0x5E

/* ---- ABI.md §3: parameter block sizes and status offsets --------------- */
#define RIG_CARD_INFO_SIZE     72    /* nv_ioctl_card_info_t */
#define RIG_CARD_VALID         0
#define RIG_CARD_PCI_DOMAIN    4
#define RIG_CARD_PCI_BUS       8
#define RIG_CARD_PCI_SLOT      9
#define RIG_CARD_PCI_FUNC      10
#define RIG_CARD_VENDOR        12
#define RIG_CARD_DEVICE        14
#define RIG_CARD_GPU_ID        16
#define RIG_CARD_IRQ           20
#define RIG_CARD_REG_ADDR      24
#define RIG_CARD_REG_SIZE      32
#define RIG_CARD_FB_ADDR       40
#define RIG_CARD_FB_SIZE       48
#define RIG_CARD_MINOR         56
#define RIG_CARD_DEV_NAME      60

#define RIG_VERSION_STR_SIZE   72    /* nv_ioctl_rm_api_version_t */
#define RIG_VERSION_CMD_STRICT  0
#define RIG_VERSION_CMD_RELAXED '1'
#define RIG_VERSION_CMD_QUERY   '2'
#define RIG_VERSION_STRING_OFF  8
#define RIG_VERSION_STRING_LEN  64

#define RIG_NVOS21_SIZE        32    /* RM_ALLOC short form, status @28 (535+) */
#define RIG_NVOS64_SIZE        48    /* RM_ALLOC with rights, status @40 (535+) */
#define RIG_NVOS54_SIZE        32    /* RM_CONTROL: cmd @8, params @16, size @24, status @28 */
#define RIG_NVOS00_SIZE        16    /* RM_FREE: hRoot @0, parent @4, old @8, status @12 */
#define RIG_NVOS02_FD_SIZE     56    /* RM_ALLOC_MEMORY with fd, status @40 */
#define RIG_NVOS33_FD_SIZE     56    /* RM_MAP_MEMORY with fd, status @40 */

/* ---- ABI.md §5: NV_STATUS values used by the doubles --------------------- */
#define NV_OK                          0x00000000u
#define NV_ERR_BUFFER_TOO_SMALL        0x00000002u
#define NV_ERR_BUSY_RETRY              0x00000003u
#define NV_ERR_GPU_UUID_NOT_FOUND      0x00000012u
#define NV_ERR_ILLEGAL_ACTION          0x00000016u
#define NV_ERR_IN_USE                  0x00000017u
#define NV_ERR_INSUFFICIENT_RESOURCES  0x0000001Au
#define NV_ERR_INSUFFICIENT_PERMISSIONS 0x0000001Bu
#define NV_ERR_INVALID_ARGUMENT        0x0000001Fu
#define NV_ERR_INVALID_CLIENT          0x00000023u
#define NV_ERR_INVALID_OBJECT_HANDLE   0x00000033u
#define NV_ERR_INVALID_PARAM_STRUCT    0x0000003Au
#define NV_ERR_INVALID_POINTER         0x0000003Du
#define NV_ERR_NOT_SUPPORTED           0x00000056u
#define NV_ERR_GENERIC                 0x0000FFFFu
#define NV_WARN_NOTHING_TO_DO          0x00010006u

/* ---- ABI.md §7: RM classes and control commands ------------------------ */
#define NV01_ROOT               0x0000u
#define NV01_ROOT_NON_PRIV      0x0001u
#define NV01_ROOT_CLIENT        0x0041u
#define NV01_EVENT              0x0005u
#define NV01_EVENT_KERNEL_CALLBACK 0x0078u
#define NV01_EVENT_OS_EVENT     0x0079u
#define NV01_EVENT_KERNEL_CALLBACK_EX 0x007Eu
#define NV01_MEMORY_LOCAL_USER  0x0040u
#define NV01_MEMORY_SYSTEM_OS_DESCRIPTOR 0x0071u
#define NV01_DEVICE_0           0x0080u
#define NV20_SUBDEVICE_0        0x2080u
#define FERMI_VASPACE_A         0x90F1u
#define KEPLER_CHANNEL_GROUP_A  0xA06Cu
#define HOPPER_CHANNEL_GPFIFO_A 0xC86Fu
#define HOPPER_COMPUTE_A        0xCBC0u
#define NV_CONFIDENTIAL_COMPUTE 0xCB33u

#define NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION     0x00000101u /* 40 bytes */
#define NV0000_CTRL_CMD_SYSTEM_GET_FABRIC_STATUS     0x00000136u /* 4 bytes  */
#define NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2  0x0000013Eu /* 1032 (560+) */
#define NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS         0x00000201u /* 128 */
#define NV0000_CTRL_CMD_GPU_GET_ID_INFO              0x00000202u /* 40  */
#define NV0000_CTRL_CMD_GPU_GET_INIT_STATUS          0x00000203u /* 8   */
#define NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2           0x00000205u /* 32  */
#define NV0000_CTRL_CMD_GPU_GET_PROBED_IDS           0x00000214u /* 384 (580+) */
#define NV0000_CTRL_CMD_GPU_ATTACH_IDS               0x00000215u /* 132 */
#define NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID     0x00000275u /* 268 */
#define NV2080_CTRL_CMD_GPU_GET_GID_INFO             0x2080014Au /* 268 */
#define NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE  0x00800289u /* 8 (580) */
#define NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES 0x20800131u /* 4 */

#define RIG_BUILD_VERSION_SIZE     40
#define RIG_BUILD_VERSION_V2_SIZE  1032
#define RIG_PROBED_IDS_SIZE        384
#define RIG_ATTACH_IDS_SIZE        132
#define RIG_ATTACHED_IDS_SIZE      128
#define RIG_ID_INFO_SIZE           40
#define RIG_ID_INFO_V2_SIZE        32
#define RIG_INIT_STATUS_SIZE       8
#define RIG_FABRIC_STATUS_SIZE     4
#define RIG_VIRT_MODE_SIZE         8
#define RIG_COMPUTE_RULES_SIZE     4
#define RIG_GID_INFO_SIZE          268  /* index @0, flags @4, length @8, data[256] @12 */
#define RIG_UUID_FROM_ID_SIZE      268  /* gpuId @0, flags @4, gpuUuid[256] @8, uuidStrLen @264 */
#define RIG_GPU_INVALID_ID         0xFFFFFFFFu  /* NV0000_CTRL_GPU_INVALID_ID */
#define RIG_ATTACH_ALL_PROBED      0x0000FFFFu
#define RIG_MAX_GPUS               32

/* NV0000_CTRL_GET_SYSTEM_FABRIC_STATUS (ctrl0000system.h, 595.45.04). */
#define RIG_FABRIC_SKIP            1u
#define RIG_FABRIC_UNINITIALIZED   2u
#define RIG_FABRIC_IN_PROGRESS     3u
#define RIG_FABRIC_INITIALIZED     4u

/* Format bits of GET_GID_INFO / GET_UUID_FROM_GPU_ID flags: 0 = ASCII,
 * 2 = binary (16 bytes). */
#define RIG_GID_FORMAT_MASK        3u
#define RIG_GID_FORMAT_BINARY      2u

/* ---- ABI.md §6: UVM (plain request numbers, size implied by the command) ------- */
#define UVM_INITIALIZE                0x30000001ul
#define UVM_DEINITIALIZE              0x30000002ul
#define UVM_CREATE_RANGE_GROUP        23
#define UVM_DESTROY_RANGE_GROUP       24
#define UVM_REGISTER_GPU_VASPACE      25
#define UVM_UNREGISTER_GPU_VASPACE    26
#define UVM_REGISTER_CHANNEL          27
#define UVM_UNREGISTER_CHANNEL        28
#define UVM_MAP_EXTERNAL_ALLOCATION   33
#define UVM_FREE                      34
#define UVM_REGISTER_GPU              37
#define UVM_UNREGISTER_GPU            38
#define UVM_PAGEABLE_MEM_ACCESS       39
#define UVM_MAP_DYNAMIC_PARALLELISM_REGION 65
#define UVM_ALLOC_SEMAPHORE_POOL      68
#define UVM_VALIDATE_VA_RANGE         72
#define UVM_CREATE_EXTERNAL_RANGE     73
#define UVM_MM_INITIALIZE             75

#define RIG_UVM_INIT_SIZE             16   /* flags @0, rmStatus @8 */
#define RIG_UVM_MM_INIT_SIZE          8    /* uvmFd @0, rmStatus @4 */
#define RIG_UVM_PAGEABLE_SIZE         8    /* @0 bool, rmStatus @4 */
#define RIG_UVM_REGISTER_GPU_SIZE     40   /* uuid @0, numa @16/@20, ctlFd @24, hClient @28, hSmc @32, rmStatus @36 */
#define RIG_UVM_RANGE_GROUP_SIZE      16   /* id @0, rmStatus @8 */
#define RIG_UVM_GPU_VASPACE_SIZE      32   /* uuid @0, ctlFd @16, hClient @20, hVaSpace @24, rmStatus @28 */
#define RIG_UVM_CHANNEL_SIZE          56   /* uuid @0, ctlFd @16, hClient @20, hChannel @24, base @32, len @40, rmStatus @48 */
#define RIG_UVM_RANGE_SIZE            24   /* base @0, length @8, rmStatus @16 */
#define RIG_UVM_MAP_EXTERNAL_SIZE     9264 /* 550.54.14+, rmStatus @9260 */
#define RIG_UVM_MAP_EXT_CTLFD         9248
#define RIG_UVM_MAP_EXT_HCLIENT       9252
#define RIG_UVM_MAP_EXT_HMEMORY       9256
#define RIG_UVM_MAP_EXT_STATUS        9260

/* ---- ABI.md §8: device numbers ------------------------------------------ */
#define RIG_NV_MAJOR        195
#define RIG_NV_CTL_MINOR    255
#define RIG_UVM_MAJOR       238   /* dynamic; the value observed on the 580 VM */
#define RIG_CAPS_MAJOR      241   /* dynamic; observed */

/* The simulated GPU (Appendix A observed H200: 10de:2335). */
#define RIG_PCI_VENDOR      0x10DEu
#define RIG_PCI_DEVICE      0x2335u
#define RIG_GPU_NAME        "NVIDIA H200"
#define RIG_DEFAULT_VERSION "580.159.04"

/* PCI bus of simulated GPU n is n+1 (bus 0 is the host bridge on real
 * machines); RM's gpu_id is (domain << 16) | (bus << 8) | slot, which gives
 * the observed 0x6 for 0000:00:06.0. */
static inline uint32_t rig_gpu_id(unsigned n) { return (uint32_t)(n + 1) << 8; }

/* Simulated GPU UUID: fixed bytes, last one is the GPU index. */
static inline void rig_gpu_uuid(unsigned n, unsigned char out[16])
{
    static const unsigned char base[16] = {
        0x5a, 0x1e, 0xc0, 0xde, 0x0f, 0xa7, 0x4e, 0x11,
        0x9c, 0x2d, 0x63, 0x70, 0x58, 0x41, 0xb2, 0x00 };
    memcpy(out, base, 16);
    out[15] = (unsigned char)n;
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (41 bytes with NUL). */
static inline void rig_uuid_str(const unsigned char u[16], char out[41])
{
    static const char hex[] = "0123456789abcdef";
    char *p = out;
    memcpy(p, "GPU-", 4);
    p += 4;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        *p++ = hex[u[i] >> 4];
        *p++ = hex[u[i] & 15];
    }
    *p = '\0';
}

static inline uint32_t rig_get32(const void *b, unsigned off)
{
    uint32_t v;
    memcpy(&v, (const char *)b + off, 4);
    return v;
}

static inline uint64_t rig_get64(const void *b, unsigned off)
{
    uint64_t v;
    memcpy(&v, (const char *)b + off, 8);
    return v;
}

static inline void rig_put32(void *b, unsigned off, uint32_t v)
{
    memcpy((char *)b + off, &v, 4);
}

static inline void rig_put64(void *b, unsigned off, uint64_t v)
{
    memcpy((char *)b + off, &v, 8);
}

#endif
