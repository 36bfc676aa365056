/* libcuda.so.1 test double: a small CUDA driver API that talks to the
 * (fake) NVIDIA kernel through the ordinary libc open()/ioctl() symbols, so
 * a preloaded shim sees every call the way it sees the real libcuda's.
 *
 * cuInit(0) issues a condensed version of the 580.159.04 sequence of
 * tracer/decode/ABI.md Appendix A, and maps failures to CUresults
 * following the MEASURED table in tracer/decode/ABI.md Appendix C
 * (what the real libcuda, libcudart and NVML return per fault).  Steps that table does not
 * cover are marked "(unmeasured)" with the choice made.
 *
 * Environment:
 *   FAKECUDA_VERSION=s          user-mode driver version compared with the
 *                               kernel's SYSTEM_GET_BUILD_VERSION (default
 *                               580.159.04) the way the real 580.159.04 does
 *                               (cu_version_check): a newer minor or branch
 *                               gives 803, an older branch 101, an older
 *                               minor or a newer patch level is accepted.
 *   FAKECUDA_DRIVER_VERSION=n   what cuDriverGetVersion reports (default 13000).
 *   FAKECUDA_COMPAT=1           behave like a cuda-compat libcuda on hardware
 *                               that does not support forward compatibility:
 *                               skip the version check, cuInit returns 804.
 *   FAKECUDA_DEBUG=1            log cuGetProcAddress / cuGetExportTable
 *                               queries to stderr.
 *   FAKECUDA_MIG=1              cuInit also opens the MIG access capability
 *                               /dev/nvidia-caps/nvidia-cap1; a failed open
 *                               gives 100.
 *   CUDA_VISIBLE_DEVICES        indices and GPU-UUID prefixes, parsed loosely
 *                               like the real driver: parsing stops at the
 *                               first entry that does not name a GPU.
 *
 * The prototypes are declared here rather than taken from cuda.h: cuda.h
 * renames cuGetProcAddress to cuGetProcAddress_v2, cuCtxCreate to
 * cuCtxCreate_v4 and so on (ABI.md §9), and this file
 * must define every versioned name itself. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rig_abi.h"

#define CU_API __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct ct_cuctx *CUcontext;
typedef struct { char bytes[16]; } CUuuid;
typedef uint64_t cuuint64_t;

/* CUresult values (cuda.h, CUDA 13.0, lines 2511-3179). */
enum {
    CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3, CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
    CUDA_ERROR_NO_DEVICE = 100, CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_CONTEXT = 201, CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_SUPPORTED = 801, CUDA_ERROR_SYSTEM_NOT_READY = 802,
    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
    CUDA_ERROR_UNKNOWN = 999,
};

/* CUdriverProcAddressQueryResult (cuda.h lines 2419-2423). */
enum { CU_SYMBOL_SUCCESS = 0, CU_SYMBOL_NOT_FOUND = 1, CU_SYMBOL_VERSION_NOT_SUFFICIENT = 2 };

/* ------------------------------------------------------------------ */
/* Driver state. */

#define CU_MAX_GPUS RIG_MAX_GPUS
#define CU_CTX_MAGIC 0x43545843u

struct ct_cuctx {
    uint32_t magic;
    int ordinal;
    int primary;
    unsigned flags;
    uint32_t h_vaspace, h_chgrp, h_channel, h_mem;
};

struct cu_gpu {
    uint32_t gpu_id;
    unsigned instance;          /* deviceInstance from GET_ID_INFO_V2 */
    int minor;                  /* /dev/nvidiaN; -1 if unknown */
    int fd;
    uint32_t h_device, h_subdevice;
    int compute_mode; /* QUERY_COMPUTE_MODE_RULES' answer */
    unsigned char uuid[16];
    struct ct_cuctx *primary_ctx;
    int primary_refs;
    unsigned primary_flags;
};

static pthread_mutex_t cu_lock = PTHREAD_MUTEX_INITIALIZER;
static int cu_inited;
static CUresult cu_init_result = CUDA_ERROR_NOT_INITIALIZED;
static int cu_ctl = -1, cu_uvm = -1, cu_uvm_mm = -1;
static uint32_t cu_client;
static uint32_t cu_next_handle = 0x5C000001u;    /* libcuda picks 0x5C0000nn itself */
static struct cu_gpu cu_gpus[CU_MAX_GPUS];
static int cu_ngpus;                             /* attached and opened, in ordinal order */
static uint64_t cu_next_va = 0x7f8000000000ull;
static int cu_debug = -1;

static __thread CUcontext cu_cur_stack[16];
static __thread int cu_cur_depth;

#define CU_CURRENT (cu_cur_depth ? cu_cur_stack[cu_cur_depth - 1] : NULL)

static void cu_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cu_log(const char *fmt, ...)
{
    if (cu_debug < 0) {
        const char *s = getenv("FAKECUDA_DEBUG");
        cu_debug = s && *s && *s != '0';
    }
    if (!cu_debug)
        return;
    char buf[512];
    int n = snprintf(buf, sizeof buf, "fakecuda[%d]: ", (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
}

static const char *cu_env(const char *name, const char *dflt)
{
    const char *s = getenv(name);
    return s && *s ? s : dflt;
}

/* ------------------------------------------------------------------ */
/* Talking to the kernel.  Every call goes through the libc ioctl symbol. */

static int cu_esc(int fd, unsigned nr, void *p, unsigned size)
{
    return ioctl(fd, RIG_IOWR(nr, size), p);
}

/* RM_ALLOC with an NVOS64 block (what libcuda 580 always uses).  Returns the
 * RM status, or -1 if the ioctl itself failed; *handle is in/out. */
static int64_t cu_rm_alloc(uint32_t parent, uint32_t *handle, uint32_t cls,
                           void *params, uint32_t psize)
{
    unsigned char b[RIG_NVOS64_SIZE] = { 0 };
    rig_put32(b, 0, cls == NV01_ROOT_CLIENT ? 0 : cu_client);
    rig_put32(b, 4, parent);
    rig_put32(b, 8, *handle);
    rig_put32(b, 12, cls);
    rig_put64(b, 16, (uint64_t)(uintptr_t)params);
    rig_put32(b, 32, psize);
    if (cu_esc(cu_ctl, NV_ESC_RM_ALLOC, b, sizeof b) != 0)
        return -1;
    *handle = rig_get32(b, 8);
    return rig_get32(b, 40);
}

static int64_t cu_alloc_client(uint32_t *client)
{
    unsigned char p[120] = { 0 };                /* NV0000_ALLOC_PARAMETERS (570+) */
    rig_put32(p, 4, (uint32_t)getpid());
    snprintf((char *)p + 8, 100, "fakecuda");
    *client = 0;
    return cu_rm_alloc(0, client, NV01_ROOT_CLIENT, p, sizeof p);
}

static int64_t cu_rm_control(uint32_t object, uint32_t cmd, void *params, uint32_t psize)
{
    unsigned char b[RIG_NVOS54_SIZE] = { 0 };
    rig_put32(b, 0, cu_client);
    rig_put32(b, 4, object ? object : cu_client);
    rig_put32(b, 8, cmd);
    rig_put64(b, 16, (uint64_t)(uintptr_t)params);
    rig_put32(b, 24, psize);
    if (cu_esc(cu_ctl, NV_ESC_RM_CONTROL, b, sizeof b) != 0)
        return -1;
    return rig_get32(b, 28);
}

static void cu_rm_free(uint32_t parent, uint32_t handle)
{
    unsigned char b[RIG_NVOS00_SIZE] = { 0 };
    rig_put32(b, 0, cu_client);
    rig_put32(b, 4, parent);
    rig_put32(b, 8, handle);
    cu_esc(cu_ctl, NV_ESC_RM_FREE, b, sizeof b);
}

/* UVM requests are plain numbers; returns rmStatus or -1. */
static int64_t cu_uvm_call(int fd, unsigned long req, void *p, unsigned status_off)
{
    if (ioctl(fd, req, p) != 0)
        return -1;
    return rig_get32(p, status_off);
}

/* ------------------------------------------------------------------ */
/* cuInit steps.  Each returns CUDA_SUCCESS or the CUresult to report. */

struct cu_card {
    uint32_t gpu_id;
    int minor;
};

static struct cu_card cu_cards[CU_MAX_GPUS];
static int cu_ncards = -1;                       /* -1: CARD_INFO failed */

static CUresult cu_open_ctl(void)
{
    cu_ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
    /* libcuda retries read-only after EPERM (failure catalog B.11, SCENARIOS.md: seen in strace). */
    if (cu_ctl < 0 && errno == EPERM)
        cu_ctl = open("/dev/nvidiactl", O_RDONLY | O_CLOEXEC);
    return cu_ctl < 0 ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}

/* SYS_PARAMS failures are ignored (measured: EPERM -> cuInit 0). */
static void cu_sys_params(void)
{
    unsigned char p[8];
    rig_put64(p, 0, 0x40000000ull);
    cu_esc(cu_ctl, NV_ESC_SYS_PARAMS, p, sizeof p);
}

/* CARD_INFO x32.  Measured on the H200 (tests/fixtures/h200-580/i11): when
 * every CARD_INFO fails with EIO, cuInit returns 100; a reply without any
 * valid entry gives 100 too.  (ABI.md Appendix C's "CARD_INFO EIO -> 0" failed
 * only the first of libcuda's two CARD_INFO calls.) */
static CUresult cu_card_info(void)
{
    static unsigned char cards[32 * RIG_CARD_INFO_SIZE];
    memset(cards, 0, sizeof cards);
    cu_ncards = -1;
    if (cu_esc(cu_ctl, NV_ESC_CARD_INFO, cards, sizeof cards) != 0)
        return CUDA_ERROR_NO_DEVICE;
    cu_ncards = 0;
    for (int i = 0; i < 32; i++) {
        const unsigned char *e = cards + i * RIG_CARD_INFO_SIZE;
        if (!e[RIG_CARD_VALID])
            continue;
        cu_cards[cu_ncards].gpu_id = rig_get32(e, RIG_CARD_GPU_ID);
        cu_cards[cu_ncards].minor = (int)rig_get32(e, RIG_CARD_MINOR);
        cu_ncards++;
    }
    return cu_ncards ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

/* What libcuda 580.159.04 makes of the kernel module's version (MEASURED on
 * the H200 with ioctl:cmd=0x101:version=V, tests/fixtures/h200-580/README.md):
 * 580.95.05 -> cuInit 0, 580.159.05 -> 0, 580.173.02 -> 803, 590.48.01 -> 803,
 * 575.51.02 -> 101 (libcuda takes the older branch's ioctl layouts and fails
 * later; here it fails at once, with the same code).  An older patch level of
 * the same minor is (unmeasured) accepted like an older minor; a version
 * that is not N.N[.N] is a mismatch (803). */
static CUresult cu_version_check(const char *kernel, const char *mine)
{
    unsigned k[3] = { 0 }, m[3] = { 0 };
    if (!strcmp(kernel, mine))
        return CUDA_SUCCESS;
    if (sscanf(kernel, "%u.%u.%u", &k[0], &k[1], &k[2]) < 2 ||
        sscanf(mine, "%u.%u.%u", &m[0], &m[1], &m[2]) < 2)
        return CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
    if (k[0] < m[0])
        return CUDA_ERROR_INVALID_DEVICE;        /* older branch */
    if (k[0] > m[0] || k[1] > m[1])
        return CUDA_ERROR_SYSTEM_DRIVER_MISMATCH; /* newer branch or minor */
    return CUDA_SUCCESS;                         /* older minor, other patch */
}

/* The handshake libcuda 580 does instead of CHECK_VERSION_STR (ABI.md §4): a
 * throwaway client asks SYSTEM_GET_BUILD_VERSION.  Measured: status 0x1b ->
 * 100, status 0x3 -> 0 (the check is skipped).  A failing first RM_ALLOC is
 * retried (measured: EINVAL -> cuInit 0). */
static CUresult cu_version_handshake(void)
{
    int64_t st = cu_alloc_client(&cu_client);
    if (st < 0)
        st = cu_alloc_client(&cu_client);
    if (st != 0)
        return CUDA_ERROR_UNKNOWN;               /* (unmeasured) */
    char drv[256] = "", ver[256] = "", title[256] = "";
    unsigned char p[RIG_BUILD_VERSION_SIZE] = { 0 };
    rig_put32(p, 0, sizeof ver);
    rig_put64(p, 8, (uint64_t)(uintptr_t)drv);
    rig_put64(p, 16, (uint64_t)(uintptr_t)ver);
    rig_put64(p, 24, (uint64_t)(uintptr_t)title);
    st = cu_rm_control(0, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION, p, sizeof p);
    cu_rm_free(0, cu_client);
    cu_client = 0;
    if (st == NV_ERR_INSUFFICIENT_PERMISSIONS)
        return CUDA_ERROR_NO_DEVICE;
    if (st != 0 || getenv("FAKECUDA_COMPAT"))
        return CUDA_SUCCESS;                     /* nothing to compare */
    const char *mine = cu_env("FAKECUDA_VERSION", RIG_DEFAULT_VERSION);
    CUresult r = cu_version_check(ver, mine);
    if (r)
        cu_log("kernel module %s, libcuda %s: %d", ver, mine, r);
    return r;
}

static CUresult cu_open_client(void)
{
    if (cu_alloc_client(&cu_client) != 0)
        return CUDA_ERROR_UNKNOWN;               /* (unmeasured) */
    /* Confidential-compute object; optional, like on non-CC systems. */
    uint32_t h = cu_next_handle++;
    unsigned char cc[8] = { 0 };
    cu_rm_alloc(cu_client, &h, NV_CONFIDENTIAL_COMPUTE, cc, sizeof cc);
    return CUDA_SUCCESS;
}

/* Measured: /dev/nvidia-uvm open failure or UVM_INITIALIZE failure -> 999. */
static CUresult cu_open_uvm(void)
{
    cu_uvm = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
    if (cu_uvm < 0)
        return CUDA_ERROR_UNKNOWN;
    cu_uvm_mm = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
    if (cu_uvm_mm < 0)
        return CUDA_ERROR_UNKNOWN;
    unsigned char init[RIG_UVM_INIT_SIZE] = { 0 };
    if (cu_uvm_call(cu_uvm, UVM_INITIALIZE, init, 8) != 0)
        return CUDA_ERROR_UNKNOWN;
    unsigned char mm[RIG_UVM_MM_INIT_SIZE] = { 0 };
    rig_put32(mm, 0, (uint32_t)cu_uvm);
    int64_t st = cu_uvm_call(cu_uvm_mm, UVM_MM_INITIALIZE, mm, 4);
    if (st != 0 && st != NV_WARN_NOTHING_TO_DO)
        return CUDA_ERROR_UNKNOWN;               /* (unmeasured) */
    unsigned char pma[RIG_UVM_PAGEABLE_SIZE] = { 0 };
    if (cu_uvm_call(cu_uvm, UVM_PAGEABLE_MEM_ACCESS, pma, 4) != 0)
        return CUDA_ERROR_UNKNOWN;               /* (unmeasured) */
    return CUDA_SUCCESS;
}

/* Probe, attach and list GPUs.  Fills ids[] with the attached gpu ids. */
static CUresult cu_attach(uint32_t *ids, int *nids)
{
    unsigned char probed[RIG_PROBED_IDS_SIZE];
    memset(probed, 0xff, sizeof probed);
    if (cu_rm_control(0, NV0000_CTRL_CMD_GPU_GET_PROBED_IDS, probed, sizeof probed) != 0)
        return CUDA_ERROR_NO_DEVICE;             /* (unmeasured) */
    unsigned char attach[RIG_ATTACH_IDS_SIZE];
    memset(attach, 0xff, sizeof attach);
    int n = 0;
    for (int i = 0; i < RIG_MAX_GPUS; i++) {
        uint32_t id = rig_get32(probed, 4 * i);
        if (id == RIG_GPU_INVALID_ID)
            break;
        rig_put32(attach, 4 * n++, id);
    }
    if (!n)
        return CUDA_ERROR_NO_DEVICE;
    if (cu_rm_control(0, NV0000_CTRL_CMD_GPU_ATTACH_IDS, attach, sizeof attach) != 0)
        return CUDA_ERROR_NO_DEVICE;             /* (unmeasured) */
    unsigned char attached[RIG_ATTACHED_IDS_SIZE];
    memset(attached, 0xff, sizeof attached);
    if (cu_rm_control(0, NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS, attached, sizeof attached) != 0)
        return CUDA_ERROR_NO_DEVICE;             /* (unmeasured) */
    *nids = 0;
    for (int i = 0; i < RIG_MAX_GPUS; i++) {
        uint32_t id = rig_get32(attached, 4 * i);
        if (id == RIG_GPU_INVALID_ID)
            break;
        ids[(*nids)++] = id;
    }
    return *nids ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

static int cu_minor_for(uint32_t gpu_id, unsigned instance)
{
    for (int i = 0; i < cu_ncards; i++)
        if (cu_cards[i].gpu_id == gpu_id)
            return cu_cards[i].minor;
    /* CARD_INFO failed: fall back to the device instance (unmeasured). */
    return (int)instance;
}

/* CUDA_VISIBLE_DEVICES: returns how many of the N attached GPUs are
 * visible, in order[] (indices into the attached list). */
/* UUID string of an attached GPU, asked from RM (only needed to match
 * GPU-<uuid> entries).  Returns 0 on success. */
static int cu_uuid_of(uint32_t gpu_id, char out[41])
{
    unsigned char p[RIG_UUID_FROM_ID_SIZE] = { 0 };
    rig_put32(p, 0, gpu_id);
    if (cu_rm_control(0, NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID, p, sizeof p) != 0)
        return -1;
    memcpy(out, p + 8, 40);
    out[40] = '\0';
    return 0;
}

static int cu_visible(const uint32_t *ids, int n, int *order)
{
    const char *env = getenv("CUDA_VISIBLE_DEVICES");
    if (!env) {
        for (int i = 0; i < n; i++)
            order[i] = i;
        return n;
    }
    int count = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", env);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        size_t len = strlen(tok);
        while (len && tok[len - 1] == ' ')
            tok[--len] = '\0';
        int pick = -1;
        if (!strncasecmp(tok, "GPU-", 4)) {
            for (int i = 0; i < n; i++) {
                char s[41];
                if (!cu_uuid_of(ids[i], s) && len > 4 && !strncasecmp(s, tok, len))
                    pick = pick == -1 ? i : -2;  /* ambiguous prefix */
            }
        } else {
            char *end;
            long v = strtol(tok, &end, 10);
            if (end != tok && *end == '\0' && v >= 0 && v < n)
                pick = (int)v;
        }
        for (int k = 0; k < count; k++)
            if (order[k] == pick)
                pick = -1;                       /* duplicates end the list too */
        if (pick < 0)
            break;
        order[count++] = pick;
    }
    return count;
}

/* GPU UUID from the subdevice (NV2080_CTRL_CMD_GPU_GET_GID_INFO, binary). */
static int cu_gpu_uuid(struct cu_gpu *g)
{
    unsigned char p[RIG_GID_INFO_SIZE] = { 0 };
    rig_put32(p, 4, RIG_GID_FORMAT_BINARY);
    if (cu_rm_control(g->h_subdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, p, sizeof p) != 0 ||
        rig_get32(p, 8) != 16)
        return -1;
    memcpy(g->uuid, p + 12, 16);
    return 0;
}

/* RM status of a device-level allocation -> CUresult (unmeasured). */
static CUresult cu_map_rm_status(int64_t st)
{
    if (st == NV_ERR_INSUFFICIENT_PERMISSIONS)
        return CUDA_ERROR_NO_DEVICE;
    return CUDA_ERROR_UNKNOWN;
}

/* Open /dev/nvidiaN and create the device and subdevice objects. */
static CUresult cu_open_gpu(struct cu_gpu *g)
{
    char path[32];
    snprintf(path, sizeof path, "/dev/nvidia%d", g->minor);
    /* FAKECUDA_NONBLOCK: open as the 550.40.07+ kernel allows, O_NONBLOCK,
     * and learn the deferred open's result from WAIT_OPEN_COMPLETE
     * (ABI.md §8); libcuda 580 was never seen doing it (ABI.md Appendix A),
     * so its answer, the blocking open's 100, is a model */
    int nonblock = getenv("FAKECUDA_NONBLOCK") != NULL;
    g->fd = open(path, O_RDWR | O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
    if (g->fd < 0)
        return CUDA_ERROR_NO_DEVICE;             /* measured for EPERM */
    if (nonblock) {
        unsigned char w[8] = { 0 };
        if (cu_esc(g->fd, NV_ESC_WAIT_OPEN_COMPLETE, w, sizeof w) != 0 || rig_get32(w, 0) != 0)
            return CUDA_ERROR_NO_DEVICE;
    }
    unsigned char reg[4];
    rig_put32(reg, 0, (uint32_t)cu_ctl);
    if (cu_esc(g->fd, NV_ESC_REGISTER_FD, reg, sizeof reg) != 0)
        return CUDA_ERROR_UNKNOWN;               /* (unmeasured) */
    static unsigned char numa[560];
    cu_esc(g->fd, NV_ESC_NUMA_INFO, numa, sizeof numa);
    if (getenv("FAKECUDA_MIG")) {                /* MIG: the access capability node (failure catalog */
        int cap = open("/dev/nvidia-caps/nvidia-cap1", O_RDONLY | O_CLOEXEC);  /* B.13, SCENARIOS.md: 100) */
        if (cap < 0)
            return CUDA_ERROR_NO_DEVICE;
        close(cap);
    }
    unsigned char dev[56] = { 0 };               /* NV0080_ALLOC_PARAMETERS */
    rig_put32(dev, 0, g->instance);
    g->h_device = cu_next_handle++;
    int64_t st = cu_rm_alloc(cu_client, &g->h_device, NV01_DEVICE_0, dev, sizeof dev);
    if (st != 0)
        return cu_map_rm_status(st);
    unsigned char sub[4] = { 0 };
    g->h_subdevice = cu_next_handle++;
    st = cu_rm_alloc(g->h_device, &g->h_subdevice, NV20_SUBDEVICE_0, sub, sizeof sub);
    if (st != 0)
        return cu_map_rm_status(st);
    /* what libcuda 580 asks at cuInit (ABI.md §7): a vGPU guest, the compute mode */
    unsigned char virt[RIG_VIRT_MODE_SIZE] = { 0 }, rules[RIG_COMPUTE_RULES_SIZE] = { 0 };
    cu_rm_control(g->h_device, NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE, virt, sizeof virt);
    cu_rm_control(g->h_subdevice, NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES, rules, sizeof rules);
    g->compute_mode = (int)rig_get32(rules, 0);
    return cu_gpu_uuid(g) ? CUDA_ERROR_UNKNOWN : CUDA_SUCCESS;
}

static CUresult cu_open_gpus(void)
{
    uint32_t ids[RIG_MAX_GPUS];
    int nids = 0;
    CUresult r = cu_attach(ids, &nids);
    if (r)
        return r;
    unsigned instance[RIG_MAX_GPUS];
    for (int i = 0; i < nids; i++) {
        unsigned char p[RIG_ID_INFO_V2_SIZE] = { 0 };
        rig_put32(p, 0, ids[i]);
        if (cu_rm_control(0, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, p, sizeof p) != 0)
            return CUDA_ERROR_NO_DEVICE;         /* (unmeasured) */
        instance[i] = rig_get32(p, 8);
    }
    int order[RIG_MAX_GPUS];
    int nvis = cu_visible(ids, nids, order);
    if (!nvis)
        return CUDA_ERROR_NO_DEVICE;             /* measured: "" and =7 -> 100 */
    cu_ngpus = 0;
    for (int k = 0; k < nvis; k++) {
        struct cu_gpu *g = &cu_gpus[cu_ngpus];
        memset(g, 0, sizeof *g);
        g->gpu_id = ids[order[k]];
        g->instance = instance[order[k]];
        g->minor = cu_minor_for(g->gpu_id, g->instance);
        r = cu_open_gpu(g);
        if (r == CUDA_ERROR_NO_DEVICE && g->fd < 0)
            continue;                            /* unusable GPU: skip it */
        if (r)
            return r;
        cu_ngpus++;
    }
    return cu_ngpus ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

/* NVSwitch systems: the fabric manager must have finished (failure catalog B.8, SCENARIOS.md). */
static CUresult cu_fabric(void)
{
    unsigned char p[RIG_FABRIC_STATUS_SIZE] = { 0 };
    if (cu_rm_control(0, NV0000_CTRL_CMD_SYSTEM_GET_FABRIC_STATUS, p, sizeof p) != 0)
        return CUDA_SUCCESS;
    uint32_t s = rig_get32(p, 0);
    return s == RIG_FABRIC_UNINITIALIZED || s == RIG_FABRIC_IN_PROGRESS
               ? CUDA_ERROR_SYSTEM_NOT_READY : CUDA_SUCCESS;
}

/* Measured: UVM_REGISTER_GPU (0x25) failing with EIO -> cuInit 3. */
static CUresult cu_uvm_register(void)
{
    for (int i = 0; i < cu_ngpus; i++) {
        unsigned char p[RIG_UVM_REGISTER_GPU_SIZE] = { 0 };
        memcpy(p, cu_gpus[i].uuid, 16);
        rig_put32(p, 24, (uint32_t)cu_ctl);
        rig_put32(p, 28, cu_client);
        if (cu_uvm_call(cu_uvm, UVM_REGISTER_GPU, p, 36) != 0)
            return CUDA_ERROR_NOT_INITIALIZED;
    }
    unsigned char rg[RIG_UVM_RANGE_GROUP_SIZE] = { 0 };
    if (cu_uvm_call(cu_uvm, UVM_CREATE_RANGE_GROUP, rg, 8) != 0)
        return CUDA_ERROR_UNKNOWN;               /* (unmeasured) */
    return CUDA_SUCCESS;
}

static void cu_close_all(void)
{
    for (int i = 0; i < CU_MAX_GPUS; i++)
        if (cu_gpus[i].fd >= 0) {
            close(cu_gpus[i].fd);
            cu_gpus[i].fd = -1;
        }
    int *fds[] = { &cu_uvm_mm, &cu_uvm, &cu_ctl };
    for (size_t i = 0; i < 3; i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
    cu_ngpus = 0;
}

static CUresult cu_do_init(void)
{
    CUresult r;
    if ((r = cu_open_ctl()))
        return r;
    cu_sys_params();
    if ((r = cu_card_info()) || (r = cu_version_handshake()) || (r = cu_open_client()) ||
        (r = cu_open_uvm()) || (r = cu_open_gpus()) || (r = cu_fabric()) ||
        (r = cu_uvm_register())) {
        cu_close_all();
        return r;
    }
    if (getenv("FAKECUDA_COMPAT")) {
        cu_close_all();
        return CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE;
    }
    return CUDA_SUCCESS;
}

CU_API CUresult cuInit(unsigned int flags)
{
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&cu_lock);
    if (!cu_inited) {
        for (int i = 0; i < CU_MAX_GPUS; i++)
            cu_gpus[i].fd = -1;
        cu_init_result = cu_do_init();
        cu_inited = 1;                           /* later calls return the cached result */
    }
    CUresult r = cu_init_result;
    pthread_mutex_unlock(&cu_lock);
    return r;
}

CU_API CUresult cuDriverGetVersion(int *version)
{
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = atoi(cu_env("FAKECUDA_DRIVER_VERSION", "13000"));
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Devices. */

static CUresult cu_ready(void)
{
    return cu_inited && cu_init_result == CUDA_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

static CUresult cu_check_dev(CUdevice dev)
{
    CUresult r = cu_ready();
    if (r)
        return r;
    return dev >= 0 && dev < cu_ngpus ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CU_API CUresult cuDeviceGetCount(int *count)
{
    CUresult r = cu_ready();
    if (r)
        return r;
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = cu_ngpus;
    return CUDA_SUCCESS;
}

CU_API CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    CUresult r = cu_ready();
    if (r)
        return r;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= cu_ngpus)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = ordinal;
    return CUDA_SUCCESS;
}

CU_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    CUresult r = cu_check_dev(dev);
    if (r)
        return r;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", RIG_GPU_NAME);
    return CUDA_SUCCESS;
}

/* A plausible H200 (compute capability 9.0). */
static int cu_attribute(int attr, CUdevice dev)
{
    switch (attr) {
    case 1: return 1024;                         /* MAX_THREADS_PER_BLOCK */
    case 2: case 3: return 1024;                 /* MAX_BLOCK_DIM_X/Y */
    case 4: return 64;                           /* MAX_BLOCK_DIM_Z */
    case 5: return 2147483647;                   /* MAX_GRID_DIM_X */
    case 6: case 7: return 65535;
    case 8: return 49152;                        /* MAX_SHARED_MEMORY_PER_BLOCK */
    case 9: return 65536;                        /* TOTAL_CONSTANT_MEMORY */
    case 10: return 32;                          /* WARP_SIZE */
    case 11: return 2147483647;                  /* MAX_PITCH */
    case 12: return 65536;                       /* MAX_REGISTERS_PER_BLOCK */
    case 13: return 1980000;                     /* CLOCK_RATE */
    case 14: return 512;                         /* TEXTURE_ALIGNMENT */
    case 15: return 1;                           /* GPU_OVERLAP */
    case 16: return 132;                         /* MULTIPROCESSOR_COUNT */
    case 19: return 1;                           /* CAN_MAP_HOST_MEMORY */
    case 20: return cu_gpus[dev].compute_mode;   /* COMPUTE_MODE: RM's rules (CUcomputemode) */
    case 31: return 1;                           /* CONCURRENT_KERNELS */
    case 32: return 1;                           /* ECC_ENABLED */
    case 33: return dev + 1;                     /* PCI_BUS_ID (see rig_abi.h) */
    case 34: return 0;                           /* PCI_DEVICE_ID */
    case 36: return 2619000;                     /* MEMORY_CLOCK_RATE */
    case 37: return 6144;                        /* GLOBAL_MEMORY_BUS_WIDTH */
    case 38: return 52428800;                    /* L2_CACHE_SIZE */
    case 39: return 2048;                        /* MAX_THREADS_PER_MULTIPROCESSOR */
    case 40: return 3;                           /* ASYNC_ENGINE_COUNT */
    case 41: return 1;                           /* UNIFIED_ADDRESSING */
    case 50: return 0;                           /* PCI_DOMAIN_ID */
    case 75: return 9;                           /* COMPUTE_CAPABILITY_MAJOR */
    case 76: return 0;                           /* COMPUTE_CAPABILITY_MINOR */
    case 78: case 79: case 80: return 1;
    case 81: return 233472;                      /* MAX_SHARED_MEMORY_PER_MULTIPROCESSOR */
    case 82: return 65536;
    case 83: return 1;                           /* MANAGED_MEMORY */
    case 89: return 1;                           /* CONCURRENT_MANAGED_ACCESS */
    case 95: return 1;                           /* COOPERATIVE_LAUNCH */
    case 97: return 232448;                      /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
    case 102: return 1;                          /* VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
    case 115: return 1;                          /* MEMORY_POOLS_SUPPORTED */
    default: return 0;
    }
}

CU_API CUresult cuDeviceGetAttribute(int *value, int attr, CUdevice dev)
{
    CUresult r = cu_check_dev(dev);
    if (r)
        return r;
    if (!value || attr < 1 || attr >= 148)       /* CU_DEVICE_ATTRIBUTE_MAX is 148 */
        return CUDA_ERROR_INVALID_VALUE;
    *value = cu_attribute(attr, dev);
    return CUDA_SUCCESS;
}

CU_API CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    CUresult r = cu_check_dev(dev);
    if (r)
        return r;
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    *major = 9;
    *minor = 0;
    return CUDA_SUCCESS;
}

CU_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    CUresult r = cu_check_dev(dev);
    if (r)
        return r;
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = 150754820096ull;                    /* 143771 MiB, an H200 */
    return CUDA_SUCCESS;
}

CU_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    CUresult r = cu_check_dev(dev);
    if (r)
        return r;
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(uuid->bytes, cu_gpus[dev].uuid, 16);
    return CUDA_SUCCESS;
}

CU_API CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    return cuDeviceGetUuid(uuid, dev);
}

CU_API CUresult cuDeviceGetPCIBusId(char *bus, int len, CUdevice dev)
{
    CUresult r = cu_check_dev(dev);
    if (r)
        return r;
    if (!bus || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(bus, (size_t)len, "00000000:%02X:00.0", cu_gpus[dev].gpu_id >> 8);
    return CUDA_SUCCESS;
}

CU_API CUresult cuDeviceGetLuid(char *luid, unsigned int *mask, CUdevice dev)
{
    (void)luid;
    (void)mask;
    CUresult r = cu_check_dev(dev);
    return r ? r : CUDA_ERROR_NOT_SUPPORTED;     /* Windows only */
}

/* ------------------------------------------------------------------ */
/* Contexts.  Creating one allocates the objects the 580 trace shows for
 * context creation: a VA space, a channel group, a channel, memory on the
 * GPU node, and registers the VA space and channel with UVM. */

/* RM status of a context allocation -> CUresult.  NV_ERR_IN_USE is what an
 * exclusive-process GPU held by another process answers (failure catalog
 * B.10 in SCENARIOS.md; the exact status is unverified there). */
static CUresult cu_ctx_status(int64_t st)
{
    if (st == NV_ERR_IN_USE || st == NV_ERR_INSUFFICIENT_PERMISSIONS)
        return CUDA_ERROR_DEVICE_UNAVAILABLE;
    if (st == 0x51)                              /* NV_ERR_NO_MEMORY */
        return CUDA_ERROR_OUT_OF_MEMORY;
    return CUDA_ERROR_UNKNOWN;
}

static CUresult cu_ctx_rm_objects(struct cu_gpu *g, struct ct_cuctx *c)
{
    unsigned char va[64] = { 0 }, grp[32] = { 0 }, ch[128] = { 0 };
    int64_t st;
    c->h_vaspace = cu_next_handle++;
    if ((st = cu_rm_alloc(g->h_device, &c->h_vaspace, FERMI_VASPACE_A, va, sizeof va)))
        return cu_ctx_status(st);
    c->h_chgrp = cu_next_handle++;
    if ((st = cu_rm_alloc(g->h_device, &c->h_chgrp, KEPLER_CHANNEL_GROUP_A, grp, sizeof grp)))
        return cu_ctx_status(st);
    c->h_channel = cu_next_handle++;
    if ((st = cu_rm_alloc(c->h_chgrp, &c->h_channel, HOPPER_CHANNEL_GPFIFO_A, ch, sizeof ch)))
        return cu_ctx_status(st);
    /* System memory for the push buffer: RM_ALLOC_MEMORY must use the GPU node. */
    unsigned char mem[RIG_NVOS02_FD_SIZE] = { 0 };
    c->h_mem = cu_next_handle++;
    rig_put32(mem, 0, cu_client);
    rig_put32(mem, 4, g->h_device);
    rig_put32(mem, 8, c->h_mem);
    rig_put32(mem, 12, NV01_MEMORY_SYSTEM_OS_DESCRIPTOR);
    rig_put64(mem, 32, (1u << 20) - 1);          /* limit */
    rig_put32(mem, 48, (uint32_t)-1);            /* fd: not mapped */
    if (cu_esc(g->fd, NV_ESC_RM_ALLOC_MEMORY, mem, sizeof mem) != 0)
        return CUDA_ERROR_UNKNOWN;
    if ((st = rig_get32(mem, 40)))
        return cu_ctx_status(st);
    return CUDA_SUCCESS;
}

static CUresult cu_ctx_uvm(struct cu_gpu *g, struct ct_cuctx *c)
{
    unsigned char vas[RIG_UVM_GPU_VASPACE_SIZE] = { 0 };
    memcpy(vas, g->uuid, 16);
    rig_put32(vas, 16, (uint32_t)cu_ctl);
    rig_put32(vas, 20, cu_client);
    rig_put32(vas, 24, c->h_vaspace);
    if (cu_uvm_call(cu_uvm, UVM_REGISTER_GPU_VASPACE, vas, 28) != 0)
        return CUDA_ERROR_UNKNOWN;
    unsigned char ch[RIG_UVM_CHANNEL_SIZE] = { 0 };
    memcpy(ch, g->uuid, 16);
    rig_put32(ch, 16, (uint32_t)cu_ctl);
    rig_put32(ch, 20, cu_client);
    rig_put32(ch, 24, c->h_channel);
    rig_put64(ch, 32, 0x7fff00000000ull);
    rig_put64(ch, 40, 2u << 20);
    if (cu_uvm_call(cu_uvm, UVM_REGISTER_CHANNEL, ch, 48) != 0)
        return CUDA_ERROR_UNKNOWN;
    return CUDA_SUCCESS;
}

static void cu_ctx_free(struct ct_cuctx *c)
{
    struct cu_gpu *g = &cu_gpus[c->ordinal];
    uint32_t hs[] = { c->h_mem, c->h_channel, c->h_chgrp, c->h_vaspace };
    for (size_t i = 0; i < 4; i++)
        if (hs[i])
            cu_rm_free(g->h_device, hs[i]);
    c->magic = 0;
    free(c);
}

/* Called with cu_lock held. */
static CUresult cu_ctx_new(CUdevice dev, unsigned flags, int primary, struct ct_cuctx **out)
{
    struct ct_cuctx *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->magic = CU_CTX_MAGIC;
    c->ordinal = dev;
    c->primary = primary;
    c->flags = flags;
    CUresult r = cu_ctx_rm_objects(&cu_gpus[dev], c);
    if (!r)
        r = cu_ctx_uvm(&cu_gpus[dev], c);
    if (r) {
        cu_ctx_free(c);
        return r;
    }
    *out = c;
    return CUDA_SUCCESS;
}

static int cu_ctx_ok(CUcontext c)
{
    return c && c->magic == CU_CTX_MAGIC;
}

CU_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CUresult r = cu_check_dev(dev);
    if (r)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&cu_lock);
    struct cu_gpu *g = &cu_gpus[dev];
    if (!g->primary_ctx)
        r = cu_ctx_new(dev, g->primary_flags, 1, &g->primary_ctx);
    if (!r) {
        g->primary_refs++;
        *pctx = g->primary_ctx;
    }
    pthread_mutex_unlock(&cu_lock);
    return r;
}

static void cu_forget_current(CUcontext c)
{
    for (int i = 0; i < cu_cur_depth; i++)
        if (cu_cur_stack[i] == c)
            cu_cur_stack[i] = NULL;
}

static CUresult cu_primary_release(CUdevice dev, int force)
{
    CUresult r = cu_check_dev(dev);
    if (r)
        return r;
    pthread_mutex_lock(&cu_lock);
    struct cu_gpu *g = &cu_gpus[dev];
    if (!g->primary_ctx) {
        pthread_mutex_unlock(&cu_lock);
        return force ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    }
    if (force || --g->primary_refs <= 0) {
        cu_forget_current(g->primary_ctx);
        cu_ctx_free(g->primary_ctx);
        g->primary_ctx = NULL;
        g->primary_refs = 0;
    }
    pthread_mutex_unlock(&cu_lock);
    return CUDA_SUCCESS;
}

CU_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cu_primary_release(dev, 0); }
CU_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) { return cu_primary_release(dev, 0); }
CU_API CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return cu_primary_release(dev, 1); }
CU_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) { return cu_primary_release(dev, 1); }

CU_API CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    CUresult r = cu_check_dev(dev);
    if (r)
        return r;
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&cu_lock);
    *flags = cu_gpus[dev].primary_flags;
    *active = cu_gpus[dev].primary_ctx != NULL;
    pthread_mutex_unlock(&cu_lock);
    return CUDA_SUCCESS;
}

CU_API CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    CUresult r = cu_check_dev(dev);
    if (r)
        return r;
    pthread_mutex_lock(&cu_lock);
    cu_gpus[dev].primary_flags = flags;
    pthread_mutex_unlock(&cu_lock);
    return CUDA_SUCCESS;
}

CU_API CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    return cuDevicePrimaryCtxSetFlags(dev, flags);
}

static CUresult cu_ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    CUresult r = cu_check_dev(dev);
    if (r)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&cu_lock);
    r = cu_ctx_new(dev, flags, 0, pctx);
    pthread_mutex_unlock(&cu_lock);
    if (!r && cu_cur_depth < 16)
        cu_cur_stack[cu_cur_depth++] = *pctx;    /* a new context becomes current */
    return r;
}

/* The four generations of cuCtxCreate (cudaTypedefs.h: PFN_cuCtxCreate_v2000,
 * _v3020, _v11040, _v12050). */
CU_API CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return cu_ctx_create(pctx, flags, dev);
}

CU_API CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return cu_ctx_create(pctx, flags, dev);
}

CU_API CUresult cuCtxCreate_v3(CUcontext *pctx, void *affinity, int n, unsigned int flags, CUdevice dev)
{
    if (n < 0 || (n > 0 && !affinity))
        return CUDA_ERROR_INVALID_VALUE;
    return cu_ctx_create(pctx, flags, dev);
}

CU_API CUresult cuCtxCreate_v4(CUcontext *pctx, void *params, unsigned int flags, CUdevice dev)
{
    (void)params;                                /* CUctxCreateParams: optional */
    return cu_ctx_create(pctx, flags, dev);
}

CU_API CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    CUresult r = cu_ready();
    if (r)
        return r;
    if (!cu_ctx_ok(ctx) || ctx->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    cu_forget_current(ctx);
    pthread_mutex_lock(&cu_lock);
    cu_ctx_free(ctx);
    pthread_mutex_unlock(&cu_lock);
    return CUDA_SUCCESS;
}

CU_API CUresult cuCtxDestroy(CUcontext ctx) { return cuCtxDestroy_v2(ctx); }

CU_API CUresult cuCtxSetCurrent(CUcontext ctx)
{
    CUresult r = cu_ready();
    if (r)
        return r;
    if (ctx && !cu_ctx_ok(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!cu_cur_depth)
        cu_cur_depth = 1;
    cu_cur_stack[cu_cur_depth - 1] = ctx;
    return CUDA_SUCCESS;
}

CU_API CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    CUresult r = cu_ready();
    if (r)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = CU_CURRENT;
    return CUDA_SUCCESS;
}

CU_API CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    CUresult r = cu_ready();
    if (r)
        return r;
    if (!cu_ctx_ok(ctx) || cu_cur_depth >= 16)
        return CUDA_ERROR_INVALID_CONTEXT;
    cu_cur_stack[cu_cur_depth++] = ctx;
    return CUDA_SUCCESS;
}

CU_API CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    CUresult r = cu_ready();
    if (r)
        return r;
    if (!cu_cur_depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUcontext c = cu_cur_stack[--cu_cur_depth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}

CU_API CUresult cuCtxPushCurrent(CUcontext ctx) { return cuCtxPushCurrent_v2(ctx); }
CU_API CUresult cuCtxPopCurrent(CUcontext *pctx) { return cuCtxPopCurrent_v2(pctx); }

static CUresult cu_current_or(CUcontext ctx, CUcontext *out)
{
    CUresult r = cu_ready();
    if (r)
        return r;
    *out = ctx ? ctx : CU_CURRENT;
    return cu_ctx_ok(*out) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CU_API CUresult cuCtxGetDevice(CUdevice *dev)
{
    CUcontext c;
    CUresult r = cu_current_or(NULL, &c);
    if (r)
        return r;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = c->ordinal;
    return CUDA_SUCCESS;
}

CU_API CUresult cuCtxGetDevice_v2(CUdevice *dev, CUcontext ctx)
{
    CUcontext c;
    CUresult r = cu_current_or(ctx, &c);
    if (r)
        return r;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = c->ordinal;
    return CUDA_SUCCESS;
}

CU_API CUresult cuCtxSynchronize(void)
{
    CUcontext c;
    return cu_current_or(NULL, &c);
}

CU_API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    CUcontext c;
    return cu_current_or(ctx, &c);
}

CU_API CUresult cuCtxGetFlags(unsigned int *flags)
{
    CUcontext c;
    CUresult r = cu_current_or(NULL, &c);
    if (r)
        return r;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

CU_API CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    CUcontext c;
    CUresult r = cu_current_or(ctx, &c);
    if (r)
        return r;
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = 3020;                             /* contexts of the _v2+ API */
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Memory: an RM allocation on the device plus a UVM external mapping,
 * handed out from a bump allocator of fake device addresses. */

#define CU_MAX_ALLOCS 256

static struct { CUdeviceptr va; size_t size; uint32_t handle; int ordinal; } cu_allocs[CU_MAX_ALLOCS];

static CUresult cu_mem_map(struct cu_gpu *g, uint32_t h_mem, CUdeviceptr va, size_t size)
{
    unsigned char rng[RIG_UVM_RANGE_SIZE] = { 0 };
    rig_put64(rng, 0, va);
    rig_put64(rng, 8, size);
    if (cu_uvm_call(cu_uvm, UVM_CREATE_EXTERNAL_RANGE, rng, 16) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    static unsigned char map[RIG_UVM_MAP_EXTERNAL_SIZE];
    memset(map, 0, sizeof map);
    rig_put64(map, 0, va);
    rig_put64(map, 8, size);
    memcpy(map + 24, g->uuid, 16);               /* perGpuAttributes[0].gpuUuid */
    rig_put64(map, 9240, 1);                     /* gpuAttributesCount */
    rig_put32(map, RIG_UVM_MAP_EXT_CTLFD, (uint32_t)cu_ctl);
    rig_put32(map, RIG_UVM_MAP_EXT_HCLIENT, cu_client);
    rig_put32(map, RIG_UVM_MAP_EXT_HMEMORY, h_mem);
    if (cu_uvm_call(cu_uvm, UVM_MAP_EXTERNAL_ALLOCATION, map, RIG_UVM_MAP_EXT_STATUS) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    return CUDA_SUCCESS;
}

CU_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    CUcontext c;
    CUresult r = cu_current_or(NULL, &c);
    if (r)
        return r;
    if (!dptr || !size)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&cu_lock);
    int slot = -1;
    for (int i = 0; i < CU_MAX_ALLOCS && slot < 0; i++)
        if (!cu_allocs[i].va)
            slot = i;
    struct cu_gpu *g = &cu_gpus[c->ordinal];
    uint32_t h = cu_next_handle++;
    unsigned char p[128] = { 0 };                /* NV_MEMORY_ALLOCATION_PARAMS */
    rig_put64(p, 56, size);
    int64_t st = slot < 0 ? 0x51 : cu_rm_alloc(g->h_device, &h, NV01_MEMORY_LOCAL_USER, p, sizeof p);
    size_t rounded = (size + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
    CUdeviceptr va = cu_next_va;
    if (st == 0)
        r = cu_mem_map(g, h, va, rounded);
    else
        r = st == 0x51 ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_UNKNOWN;
    if (!r) {
        cu_next_va += rounded;
        cu_allocs[slot].va = va;
        cu_allocs[slot].size = rounded;
        cu_allocs[slot].handle = h;
        cu_allocs[slot].ordinal = c->ordinal;
        *dptr = va;
    }
    pthread_mutex_unlock(&cu_lock);
    return r;
}

CU_API CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    CUresult r = cu_ready();
    if (r)
        return r;
    if (!dptr)
        return CUDA_SUCCESS;
    pthread_mutex_lock(&cu_lock);
    r = CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < CU_MAX_ALLOCS; i++)
        if (cu_allocs[i].va == dptr) {
            cu_rm_free(cu_gpus[cu_allocs[i].ordinal].h_device, cu_allocs[i].handle);
            memset(&cu_allocs[i], 0, sizeof cu_allocs[i]);
            r = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&cu_lock);
    return r;
}

CU_API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    CUcontext c;
    CUresult r = cu_current_or(NULL, &c);
    if (r)
        return r;
    if (!free_bytes || !total)
        return CUDA_ERROR_INVALID_VALUE;
    *total = 150754820096ull;
    *free_bytes = *total - (cu_next_va - 0x7f8000000000ull);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Errors. */

/* Every CUresult in cuda.h (CUDA 13.0, lines 2511-3179). */
static const struct { int code; const char *name; } cu_names[] = {
    {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"}, {4, "CUDA_ERROR_DEINITIALIZED"},
    {5, "CUDA_ERROR_PROFILER_DISABLED"}, {6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED"},
    {7, "CUDA_ERROR_PROFILER_ALREADY_STARTED"}, {8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED"},
    {34, "CUDA_ERROR_STUB_LIBRARY"}, {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"}, {100, "CUDA_ERROR_NO_DEVICE"},
    {101, "CUDA_ERROR_INVALID_DEVICE"}, {102, "CUDA_ERROR_DEVICE_NOT_LICENSED"},
    {200, "CUDA_ERROR_INVALID_IMAGE"}, {201, "CUDA_ERROR_INVALID_CONTEXT"},
    {202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT"}, {205, "CUDA_ERROR_MAP_FAILED"},
    {206, "CUDA_ERROR_UNMAP_FAILED"}, {207, "CUDA_ERROR_ARRAY_IS_MAPPED"},
    {208, "CUDA_ERROR_ALREADY_MAPPED"}, {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {210, "CUDA_ERROR_ALREADY_ACQUIRED"}, {211, "CUDA_ERROR_NOT_MAPPED"},
    {212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY"}, {213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE"}, {215, "CUDA_ERROR_UNSUPPORTED_LIMIT"},
    {216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE"}, {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"},
    {218, "CUDA_ERROR_INVALID_PTX"}, {219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT"},
    {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE"}, {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"}, {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"},
    {224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY"}, {225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC"},
    {226, "CUDA_ERROR_CONTAINED"}, {300, "CUDA_ERROR_INVALID_SOURCE"},
    {301, "CUDA_ERROR_FILE_NOT_FOUND"}, {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND"},
    {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"}, {304, "CUDA_ERROR_OPERATING_SYSTEM"},
    {400, "CUDA_ERROR_INVALID_HANDLE"}, {401, "CUDA_ERROR_ILLEGAL_STATE"},
    {402, "CUDA_ERROR_LOSSY_QUERY"}, {500, "CUDA_ERROR_NOT_FOUND"}, {600, "CUDA_ERROR_NOT_READY"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}, {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT"}, {703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING"},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"}, {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"},
    {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"}, {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
    {710, "CUDA_ERROR_ASSERT"}, {711, "CUDA_ERROR_TOO_MANY_PEERS"},
    {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"}, {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR"}, {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS"}, {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE"},
    {718, "CUDA_ERROR_INVALID_PC"}, {719, "CUDA_ERROR_LAUNCH_FAILED"},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"}, {721, "CUDA_ERROR_TENSOR_MEMORY_LEAK"},
    {800, "CUDA_ERROR_NOT_PERMITTED"}, {801, "CUDA_ERROR_NOT_SUPPORTED"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY"}, {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"}, {805, "CUDA_ERROR_MPS_CONNECTION_FAILED"},
    {806, "CUDA_ERROR_MPS_RPC_FAILURE"}, {807, "CUDA_ERROR_MPS_SERVER_NOT_READY"},
    {808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED"}, {809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED"},
    {810, "CUDA_ERROR_MPS_CLIENT_TERMINATED"}, {811, "CUDA_ERROR_CDP_NOT_SUPPORTED"},
    {812, "CUDA_ERROR_CDP_VERSION_MISMATCH"}, {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"}, {902, "CUDA_ERROR_STREAM_CAPTURE_MERGE"},
    {903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED"}, {904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED"},
    {905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION"}, {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"},
    {907, "CUDA_ERROR_CAPTURED_EVENT"}, {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD"},
    {909, "CUDA_ERROR_TIMEOUT"}, {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"},
    {911, "CUDA_ERROR_EXTERNAL_DEVICE"}, {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE"},
    {913, "CUDA_ERROR_FUNCTION_NOT_LOADED"}, {914, "CUDA_ERROR_INVALID_RESOURCE_TYPE"},
    {915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION"}, {916, "CUDA_ERROR_KEY_ROTATION"},
    {999, "CUDA_ERROR_UNKNOWN"},
};

/* Descriptions (this file's wording) for the codes tests meet. */
static const struct { int code; const char *text; } cu_texts[] = {
    {0, "no error"}, {1, "invalid argument"}, {2, "out of memory"},
    {3, "initialization error"}, {34, "CUDA driver is a stub library"},
    {46, "CUDA-capable device(s) is/are busy or unavailable"},
    {100, "no CUDA-capable device is detected"}, {101, "invalid device ordinal"},
    {201, "invalid device context"}, {500, "named symbol not found"},
    {801, "operation not supported"}, {802, "system not yet initialized"},
    {803, "system has unsupported display driver / cuda driver combination"},
    {804, "forward compatibility was attempted on non supported HW"},
    {999, "unknown error"},
};

CU_API CUresult cuGetErrorName(CUresult error, const char **str)
{
    if (!str)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof cu_names / sizeof cu_names[0]; i++)
        if (cu_names[i].code == error) {
            *str = cu_names[i].name;
            return CUDA_SUCCESS;
        }
    *str = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CU_API CUresult cuGetErrorString(CUresult error, const char **str)
{
    if (!str)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof cu_texts / sizeof cu_texts[0]; i++)
        if (cu_texts[i].code == error) {
            *str = cu_texts[i].text;
            return CUDA_SUCCESS;
        }
    return cuGetErrorName(error, str);
}

/* Private interfaces of the real driver, keyed by UUID.  The double offers
 * none; tests/rig/README.md says what the real libcudart does without them. */
CU_API CUresult cuGetExportTable(const void **table, const CUuuid *id)
{
    if (!table || !id)
        return CUDA_ERROR_INVALID_VALUE;
    const unsigned char *u = (const unsigned char *)id->bytes;
    cu_log("cuGetExportTable %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
           u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
           u[13], u[14], u[15]);
    *table = NULL;
    return CUDA_ERROR_NOT_FOUND;
}

/* ------------------------------------------------------------------ */
/* cuGetProcAddress: name -> function, by the API version each generation
 * appeared in (the PFN_<name>_v<version> typedefs of cudaTypedefs.h,
 * CUDA 13.0).  A request for version V gets the newest entry <= V. */

CU_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);
CU_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                    int *status);

static const struct { const char *name; int version; void *fn; } cu_procs[] = {
    { "cuInit", 2000, (void *)cuInit },
    { "cuDriverGetVersion", 2020, (void *)cuDriverGetVersion },
    { "cuGetProcAddress", 11030, (void *)cuGetProcAddress },
    { "cuGetProcAddress", 12000, (void *)cuGetProcAddress_v2 },
    { "cuGetErrorString", 6000, (void *)cuGetErrorString },
    { "cuGetErrorName", 6000, (void *)cuGetErrorName },
    { "cuGetExportTable", 3000, (void *)cuGetExportTable },
    { "cuDeviceGetCount", 2000, (void *)cuDeviceGetCount },
    { "cuDeviceGet", 2000, (void *)cuDeviceGet },
    { "cuDeviceGetName", 2000, (void *)cuDeviceGetName },
    { "cuDeviceGetAttribute", 2000, (void *)cuDeviceGetAttribute },
    { "cuDeviceComputeCapability", 2000, (void *)cuDeviceComputeCapability },
    { "cuDeviceTotalMem", 3020, (void *)cuDeviceTotalMem_v2 },
    { "cuDeviceGetUuid", 9020, (void *)cuDeviceGetUuid },
    { "cuDeviceGetUuid", 11040, (void *)cuDeviceGetUuid_v2 },
    { "cuDeviceGetPCIBusId", 4010, (void *)cuDeviceGetPCIBusId },
    { "cuDeviceGetLuid", 10000, (void *)cuDeviceGetLuid },
    { "cuDevicePrimaryCtxRetain", 7000, (void *)cuDevicePrimaryCtxRetain },
    { "cuDevicePrimaryCtxRelease", 7000, (void *)cuDevicePrimaryCtxRelease },
    { "cuDevicePrimaryCtxRelease", 11000, (void *)cuDevicePrimaryCtxRelease_v2 },
    { "cuDevicePrimaryCtxReset", 7000, (void *)cuDevicePrimaryCtxReset },
    { "cuDevicePrimaryCtxReset", 11000, (void *)cuDevicePrimaryCtxReset_v2 },
    { "cuDevicePrimaryCtxSetFlags", 7000, (void *)cuDevicePrimaryCtxSetFlags },
    { "cuDevicePrimaryCtxSetFlags", 11000, (void *)cuDevicePrimaryCtxSetFlags_v2 },
    { "cuDevicePrimaryCtxGetState", 7000, (void *)cuDevicePrimaryCtxGetState },
    { "cuCtxCreate", 2000, (void *)cuCtxCreate },
    { "cuCtxCreate", 3020, (void *)cuCtxCreate_v2 },
    { "cuCtxCreate", 11040, (void *)cuCtxCreate_v3 },
    { "cuCtxCreate", 12050, (void *)cuCtxCreate_v4 },
    { "cuCtxDestroy", 2000, (void *)cuCtxDestroy },
    { "cuCtxDestroy", 4000, (void *)cuCtxDestroy_v2 },
    { "cuCtxSetCurrent", 4000, (void *)cuCtxSetCurrent },
    { "cuCtxGetCurrent", 4000, (void *)cuCtxGetCurrent },
    { "cuCtxPushCurrent", 2000, (void *)cuCtxPushCurrent },
    { "cuCtxPushCurrent", 4000, (void *)cuCtxPushCurrent_v2 },
    { "cuCtxPopCurrent", 2000, (void *)cuCtxPopCurrent },
    { "cuCtxPopCurrent", 4000, (void *)cuCtxPopCurrent_v2 },
    { "cuCtxGetDevice", 2000, (void *)cuCtxGetDevice },
    { "cuCtxGetDevice", 13000, (void *)cuCtxGetDevice_v2 },
    { "cuCtxSynchronize", 2000, (void *)cuCtxSynchronize },
    { "cuCtxSynchronize", 13000, (void *)cuCtxSynchronize_v2 },
    { "cuCtxGetFlags", 7000, (void *)cuCtxGetFlags },
    { "cuCtxGetApiVersion", 3020, (void *)cuCtxGetApiVersion },
    { "cuMemAlloc", 3020, (void *)cuMemAlloc_v2 },
    { "cuMemFree", 3020, (void *)cuMemFree_v2 },
    { "cuMemGetInfo", 3020, (void *)cuMemGetInfo_v2 },
};

static int cu_lookup(const char *symbol, int version, void **pfn)
{
    int best = -1, known = 0;
    for (size_t i = 0; i < sizeof cu_procs / sizeof cu_procs[0]; i++) {
        if (strcmp(cu_procs[i].name, symbol))
            continue;
        known = 1;
        if (cu_procs[i].version <= version &&
            (best < 0 || cu_procs[i].version > cu_procs[best].version))
            best = (int)i;
    }
    if (best < 0) {
        *pfn = NULL;
        return known ? CU_SYMBOL_VERSION_NOT_SUFFICIENT : CU_SYMBOL_NOT_FOUND;
    }
    *pfn = cu_procs[best].fn;
    return CU_SYMBOL_SUCCESS;
}

CU_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                    int *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    int s = cu_lookup(symbol, version, pfn);
    cu_log("cuGetProcAddress(\"%s\", %d, flags %llu) -> %s", symbol, version,
           (unsigned long long)flags, s == 0 ? "found" : s == 1 ? "not found" : "version");
    if (status)
        *status = s;
    return s == CU_SYMBOL_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CU_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
