/* libnvidia-ml.so.1 test double.  nvmlInit opens /dev/nvidiactl and runs
 * the version handshake the real NVML does (tracer/decode/ABI.md Appendix C: NV_ESC_CHECK_
 * VERSION_STR strict, in {cmd=0, reply=0, "580.159.04"}), then lists the GPUs
 * with CARD_INFO and allocates a root client.  Failure mapping follows the
 * measured table of ABI.md Appendix C:
 *   open nvidiactl EACCES/EPERM -> 999, ENOENT -> 17, CARD_INFO EIO -> 17,
 *   first RM_ALLOC EINVAL -> 17, version mismatch -> 18 (LIB_RM_VERSION_MISMATCH),
 *   anything about UVM or the GPU nodes -> 0 (NVML does not use them).
 * Environment: FAKENVML_VERSION=s (default 580.159.04).
 * Return codes: nvml.h (NVML_SUCCESS 0 ... NVML_ERROR_UNKNOWN 999). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rig_abi.h"

#define NVML_API __attribute__((visibility("default")))

typedef int nvmlReturn_t;

enum {
    NVML_SUCCESS = 0, NVML_ERROR_UNINITIALIZED = 1, NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_INSUFFICIENT_SIZE = 7, NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_OPERATING_SYSTEM = 17, NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_UNKNOWN = 999,
};

static pthread_mutex_t nv_lock = PTHREAD_MUTEX_INITIALIZER;
static int nv_refs, nv_ctl = -1, nv_count;
static uint32_t nv_client;

static const char *nv_version(void)
{
    const char *s = getenv("FAKENVML_VERSION");
    return s && *s ? s : RIG_DEFAULT_VERSION;
}

static int nv_esc(unsigned nr, void *p, unsigned size)
{
    return ioctl(nv_ctl, RIG_IOWR(nr, size), p);
}

static nvmlReturn_t nv_check_version(void)
{
    unsigned char b[RIG_VERSION_STR_SIZE] = { 0 };
    rig_put32(b, 0, RIG_VERSION_CMD_STRICT);
    snprintf((char *)b + RIG_VERSION_STRING_OFF, RIG_VERSION_STRING_LEN, "%s", nv_version());
    if (nv_esc(NV_ESC_CHECK_VERSION_STR, b, sizeof b) == 0)
        return NVML_SUCCESS;
    /* reply=1 with EINVAL: the kernel recognised the request and disagreed. */
    return rig_get32(b, 4) == 1 && errno == EINVAL ? NVML_ERROR_LIB_RM_VERSION_MISMATCH
                                                   : NVML_ERROR_OPERATING_SYSTEM;
}

static nvmlReturn_t nv_list_gpus(void)
{
    static unsigned char cards[32 * RIG_CARD_INFO_SIZE];
    memset(cards, 0, sizeof cards);
    if (nv_esc(NV_ESC_CARD_INFO, cards, sizeof cards) != 0)
        return NVML_ERROR_OPERATING_SYSTEM;
    nv_count = 0;
    for (int i = 0; i < 32; i++)
        nv_count += cards[i * RIG_CARD_INFO_SIZE + RIG_CARD_VALID] != 0;
    return NVML_SUCCESS;
}

static nvmlReturn_t nv_alloc_client(void)
{
    unsigned char b[RIG_NVOS64_SIZE] = { 0 };
    rig_put32(b, 12, NV01_ROOT_CLIENT);
    if (nv_esc(NV_ESC_RM_ALLOC, b, sizeof b) != 0)
        return NVML_ERROR_OPERATING_SYSTEM;
    if (rig_get32(b, 40) != NV_OK)
        return NVML_ERROR_UNKNOWN;
    nv_client = rig_get32(b, 8);
    return NVML_SUCCESS;
}

static nvmlReturn_t nv_init_locked(void)
{
    nv_ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
    if (nv_ctl < 0)
        return errno == ENOENT ? NVML_ERROR_OPERATING_SYSTEM : NVML_ERROR_UNKNOWN;
    nvmlReturn_t r = nv_check_version();
    if (!r)
        r = nv_list_gpus();
    if (!r)
        r = nv_alloc_client();
    if (r) {
        close(nv_ctl);
        nv_ctl = -1;
    }
    return r;
}

NVML_API nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    (void)flags;
    pthread_mutex_lock(&nv_lock);
    nvmlReturn_t r = NVML_SUCCESS;
    if (nv_refs == 0)
        r = nv_init_locked();
    if (!r)
        nv_refs++;
    pthread_mutex_unlock(&nv_lock);
    return r;
}

NVML_API nvmlReturn_t nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
NVML_API nvmlReturn_t nvmlInit(void) { return nvmlInitWithFlags(0); }

NVML_API nvmlReturn_t nvmlShutdown(void)
{
    pthread_mutex_lock(&nv_lock);
    nvmlReturn_t r = NVML_SUCCESS;
    if (nv_refs == 0) {
        r = NVML_ERROR_UNINITIALIZED;
    } else if (--nv_refs == 0) {
        unsigned char b[RIG_NVOS00_SIZE] = { 0 };
        rig_put32(b, 0, nv_client);
        rig_put32(b, 8, nv_client);
        nv_esc(NV_ESC_RM_FREE, b, sizeof b);
        close(nv_ctl);
        nv_ctl = -1;
    }
    pthread_mutex_unlock(&nv_lock);
    return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&nv_lock);
    nvmlReturn_t r = nv_refs ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
    if (!r)
        *count = (unsigned)nv_count;
    pthread_mutex_unlock(&nv_lock);
    return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetCount(unsigned int *count)
{
    return nvmlDeviceGetCount_v2(count);
}

NVML_API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    if (!version)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!nv_refs)
        return NVML_ERROR_UNINITIALIZED;
    if (strlen(nv_version()) + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    snprintf(version, length, "%s", nv_version());
    return NVML_SUCCESS;
}

/* Strings: this file's wording. */
NVML_API const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_OPERATING_SYSTEM: return "Operating System Error";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "Driver/library version mismatch";
    case NVML_ERROR_UNKNOWN: return "Unknown Error";
    default: return "Unknown Error";
    }
}
