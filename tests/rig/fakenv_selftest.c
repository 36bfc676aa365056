/* Self-test of libfakenv.so: run with LD_PRELOAD=libfakenv.so (no shim).
 * It talks to the fake kernel directly and checks the conventions the
 * integration tests rely on: node numbers, size/node/nr validation, the
 * version check, XFER, RM and UVM statuses, EFAULT on bad pointers, and the
 * fault knobs.  usage: fakenv_selftest basic|knobs|hang
 *   knobs expects FAKENV_GPUS=2 FAKENV_ESC_ERRNO=0xd6=EPERM:1
 *     FAKENV_RM_CONTROL_STATUS=0x215=0x1b FAKENV_UVM_STATUS=37=0x1a
 *     FAKENV_DENY=/dev/nvidia-uvm-tools=EACCES FAKENV_MISSING=<caps glob, see selftests.cmake>
 *     FAKENV_GPU_OPEN_ERRNO=EIO FAKENV_RM_ALLOC_STATUS=0xa06c=0x17
 *     FAKENV_UVM_ERRNO=39=EIO
 *   hang expects FAKENV_HANG_CMD=0xd6 FAKENV_HANG_SEC=1
 * Prints one "ok"/"FAIL" line per check; exit status = number of failures. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "rig_abi.h"

int __open_2(const char *path, int flags);

static int failures;

#define CHECK(cond, what)                                                      \
    do {                                                                       \
        if (cond)                                                              \
            printf("ok   %s\n", what);                                         \
        else {                                                                 \
            printf("FAIL %s (line %d, errno %d)\n", what, __LINE__, errno);    \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static int esc(int fd, unsigned nr, void *p, unsigned size)
{
    errno = 0;
    return ioctl(fd, RIG_IOWR(nr, size), p);
}

static int rdev_is(int fd, unsigned maj, unsigned min)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == maj &&
           minor(st.st_rdev) == min;
}

static uint32_t alloc_client(int ctl, uint32_t cls)
{
    unsigned char b[RIG_NVOS64_SIZE] = { 0 };
    rig_put32(b, 12, cls);
    if (esc(ctl, NV_ESC_RM_ALLOC, b, sizeof b) || rig_get32(b, 40) || rig_get32(b, 12) != 0x41)
        return 0;
    return rig_get32(b, 8);
}

static uint32_t control(int ctl, uint32_t client, uint32_t cmd, void *p, uint32_t size)
{
    unsigned char b[RIG_NVOS54_SIZE] = { 0 };
    rig_put32(b, 0, client);
    rig_put32(b, 4, client);
    rig_put32(b, 8, cmd);
    rig_put64(b, 16, (uint64_t)(uintptr_t)p);
    rig_put32(b, 24, size);
    if (esc(ctl, NV_ESC_RM_CONTROL, b, sizeof b))
        return 0xdeadu;
    return rig_get32(b, 28);
}

static int64_t uvm(int fd, unsigned long req, void *p, unsigned status_off)
{
    errno = 0;
    if (ioctl(fd, req, p))
        return -errno;
    return rig_get32(p, status_off);
}

static void test_nodes(void)
{
    int ctl = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
    CHECK(ctl >= 0 && rdev_is(ctl, 195, 255), "nvidiactl is 195:255");
    char buf[64] = "", link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", ctl);
    ssize_t n = readlink(link, buf, sizeof buf - 1);
    CHECK(n == 14 && !strncmp(buf, "/dev/nvidiactl", 14), "readlink names the node");
    int g0 = __open_2("/dev/nvidia0", O_RDWR);
    CHECK(g0 >= 0 && rdev_is(g0, 195, 0), "__open_2 nvidia0 is 195:0");
    int u = openat(AT_FDCWD, "/dev/nvidia-uvm", O_RDWR);
    CHECK(u >= 0 && rdev_is(u, 238, 0), "openat nvidia-uvm is 238:0");
    int t = open64("/dev/nvidia-uvm-tools", O_RDWR);
    CHECK(t >= 0 && rdev_is(t, 238, 1), "open64 nvidia-uvm-tools is 238:1");
    int c = open("/dev/nvidia-caps/nvidia-cap2", O_RDONLY);
    CHECK(c >= 0 && rdev_is(c, 241, 2), "nvidia-cap2 is 241:2");
    struct stat st;
    CHECK(stat("/dev/nvidia0", &st) == 0 && st.st_rdev == makedev(195, 0), "stat nvidia0");
    errno = 0;
    CHECK(open("/dev/nvidia1", O_RDWR) < 0 && errno == ENOENT, "nvidia1 absent with 1 GPU");
    errno = 0;
    CHECK(open("/dev/nvidia-modeset", O_RDWR) < 0 && errno == ENOENT, "other nvidia nodes absent");
    CHECK(close(c) == 0 && close(t) == 0, "close");
    errno = 0;
    CHECK(ioctl(t, RIG_IOWR(NV_ESC_SYS_PARAMS, 8), buf) < 0 && errno == EBADF, "closed fd is forgotten");
    close(u);
    close(g0);
    close(ctl);
}

static void test_frontend(void)
{
    int ctl = open("/dev/nvidiactl", O_RDWR);
    int g0 = open("/dev/nvidia0", O_RDWR);
    unsigned char b[16] = { 0 };
    CHECK(esc(ctl, 199, b, 8) < 0 && errno == EINVAL, "unknown escape -> EINVAL");
    CHECK(esc(ctl, NV_ESC_SYS_PARAMS, b, 16) < 0 && errno == EINVAL, "size mismatch -> EINVAL");
    static unsigned char numa[560];
    CHECK(esc(ctl, NV_ESC_NUMA_INFO, numa, 560) < 0 && errno == EINVAL, "gpu-only escape on ctl -> EINVAL");
    CHECK(esc(g0, NV_ESC_NUMA_INFO, numa, 560) == 0, "NUMA_INFO on nvidia0");
    CHECK(esc(ctl, NV_ESC_SYS_PARAMS, (void *)8, 8) < 0 && errno == EFAULT, "bad pointer -> EFAULT");
    rig_put64(b, 0, 0x40000000ull);
    CHECK(esc(ctl, NV_ESC_SYS_PARAMS, b, 8) == 0, "SYS_PARAMS");
    rig_put64(b, 0, 0x8000000ull);
    CHECK(esc(ctl, NV_ESC_SYS_PARAMS, b, 8) < 0 && errno == EBUSY, "SYS_PARAMS change -> EBUSY");

    static unsigned char cards[32 * RIG_CARD_INFO_SIZE];
    CHECK(esc(g0, NV_ESC_CARD_INFO, cards, sizeof cards) < 0 && errno == EINVAL, "CARD_INFO on nvidia0 -> EINVAL");
    CHECK(esc(ctl, NV_ESC_CARD_INFO, cards, sizeof cards) == 0 && cards[0] == 1 &&
              rig_get32(cards, RIG_CARD_MINOR) == 0 && cards[RIG_CARD_INFO_SIZE] == 0,
          "CARD_INFO x32: one valid entry, minor 0");
    uint16_t vendor, device;
    memcpy(&vendor, cards + RIG_CARD_VENDOR, 2);
    memcpy(&device, cards + RIG_CARD_DEVICE, 2);
    CHECK(vendor == 0x10de && device == 0x2335, "CARD_INFO 10de:2335");

    unsigned char reg[4];
    rig_put32(reg, 0, (uint32_t)g0);
    CHECK(esc(g0, NV_ESC_REGISTER_FD, reg, 4) < 0 && errno == EINVAL, "REGISTER_FD with a non-ctl fd -> EINVAL");
    rig_put32(reg, 0, (uint32_t)ctl);
    CHECK(esc(g0, NV_ESC_REGISTER_FD, reg, 4) == 0, "REGISTER_FD");
    CHECK(esc(g0, NV_ESC_REGISTER_FD, reg, 4) < 0 && errno == EINVAL, "REGISTER_FD twice -> EINVAL");

    unsigned char v[RIG_VERSION_STR_SIZE] = { 0 };
    strcpy((char *)v + 8, "580.159.04");
    CHECK(esc(ctl, NV_ESC_CHECK_VERSION_STR, v, sizeof v) == 0 && rig_get32(v, 4) == 1, "version strict match");
    memset(v, 0, sizeof v);
    strcpy((char *)v + 8, "575.51.02");
    CHECK(esc(ctl, NV_ESC_CHECK_VERSION_STR, v, sizeof v) < 0 && errno == EINVAL && rig_get32(v, 4) == 1 &&
              !strcmp((char *)v + 8, "580.159.04"),
          "version mismatch: EINVAL, reply 1, kernel string copied back");
    memset(v, 0, sizeof v);
    rig_put32(v, 0, '1');
    strcpy((char *)v + 8, "580.65.06");
    CHECK(esc(ctl, NV_ESC_CHECK_VERSION_STR, v, sizeof v) == 0, "version relaxed: same branch");
    memset(v, 0, sizeof v);
    rig_put32(v, 0, '2');
    CHECK(esc(ctl, NV_ESC_CHECK_VERSION_STR, v, sizeof v) == 0 && !strcmp((char *)v + 8, "580.159.04"),
          "version query");
    memset(v, 0, sizeof v);
    CHECK(esc(g0, NV_ESC_CHECK_VERSION_STR, v, sizeof v) < 0 && errno == EINVAL && rig_get32(v, 4) == 0,
          "version check on nvidia0: EINVAL, reply untouched");

    unsigned char inner[8], x[16];
    rig_put64(inner, 0, 0x40000000ull);
    rig_put32(x, 0, NV_ESC_SYS_PARAMS);
    rig_put32(x, 4, 8);
    rig_put64(x, 8, (uint64_t)(uintptr_t)inner);
    CHECK(esc(ctl, NV_ESC_IOCTL_XFER_CMD, x, 16) == 0, "XFER wrapping SYS_PARAMS");
    rig_put32(x, 4, 20000);
    CHECK(esc(ctl, NV_ESC_IOCTL_XFER_CMD, x, 16) < 0 && errno == EINVAL, "XFER inner size > 16384 -> EINVAL");
    CHECK(esc(ctl, NV_ESC_IOCTL_XFER_CMD, x, 8) < 0 && errno == EINVAL, "XFER outer size != 16 -> EINVAL");
    close(g0);
    close(ctl);
}

static void test_rm(void)
{
    int ctl = open("/dev/nvidiactl", O_RDWR);
    int g0 = open("/dev/nvidia0", O_RDWR);
    uint32_t client = alloc_client(ctl, NV01_ROOT);
    CHECK((client & 0xFFFF0000u) == 0xC1D00000u, "RM_ALLOC root client: RM handle, class 0 -> 0x41");
    char drv[128], ver[128], title[128];
    unsigned char bv[RIG_BUILD_VERSION_SIZE] = { 0 };
    rig_put32(bv, 0, 16);
    rig_put64(bv, 8, (uint64_t)(uintptr_t)drv);
    rig_put64(bv, 16, (uint64_t)(uintptr_t)ver);
    rig_put64(bv, 24, (uint64_t)(uintptr_t)title);
    CHECK(control(ctl, client, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION, bv, sizeof bv) ==
              NV_ERR_BUFFER_TOO_SMALL,
          "GET_BUILD_VERSION with short buffers -> BUFFER_TOO_SMALL");
    rig_put32(bv, 0, 128);
    rig_put64(bv, 8, (uint64_t)(uintptr_t)drv);
    rig_put64(bv, 16, (uint64_t)(uintptr_t)ver);
    rig_put64(bv, 24, (uint64_t)(uintptr_t)title);
    CHECK(control(ctl, client, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION, bv, sizeof bv) == 0 &&
              !strcmp(ver, "580.159.04"),
          "GET_BUILD_VERSION writes the user buffers");
    unsigned char probed[RIG_PROBED_IDS_SIZE];
    CHECK(control(ctl, client, NV0000_CTRL_CMD_GPU_GET_PROBED_IDS, probed, 256) == NV_ERR_INVALID_PARAM_STRUCT,
          "control paramsSize mismatch -> INVALID_PARAM_STRUCT");
    CHECK(control(ctl, client, NV0000_CTRL_CMD_GPU_GET_PROBED_IDS, (void *)16, sizeof probed) ==
              NV_ERR_INVALID_ARGUMENT,
          "control bad params pointer -> INVALID_ARGUMENT, no crash");
    CHECK(control(ctl, client, NV0000_CTRL_CMD_GPU_GET_PROBED_IDS, probed, sizeof probed) == 0 &&
              rig_get32(probed, 0) == rig_gpu_id(0) && rig_get32(probed, 4) == RIG_GPU_INVALID_ID,
          "GET_PROBED_IDS lists one GPU");
    CHECK(control(ctl, 0x1234, NV0000_CTRL_CMD_GPU_GET_PROBED_IDS, probed, sizeof probed) == NV_ERR_INVALID_CLIENT,
          "control on a dead client -> INVALID_CLIENT");
    CHECK(control(ctl, client, 0x20800110, NULL, 0) == 0, "unmodelled control -> NV_OK");
    unsigned char fab[4];
    CHECK(control(ctl, client, NV0000_CTRL_CMD_SYSTEM_GET_FABRIC_STATUS, fab, 4) == 0 &&
              rig_get32(fab, 0) == RIG_FABRIC_SKIP,
          "fabric status SKIP");
    unsigned char mem[RIG_NVOS02_FD_SIZE] = { 0 };
    rig_put32(mem, 0, client);
    CHECK(esc(ctl, NV_ESC_RM_ALLOC_MEMORY, mem, sizeof mem) < 0 && errno == EINVAL, "RM_ALLOC_MEMORY on ctl -> EINVAL");
    CHECK(esc(g0, NV_ESC_RM_ALLOC_MEMORY, mem, sizeof mem) == 0 && rig_get32(mem, 40) == 0, "RM_ALLOC_MEMORY on nvidia0");
    unsigned char fr[RIG_NVOS00_SIZE] = { 0 };
    rig_put32(fr, 0, client);
    rig_put32(fr, 8, client);
    CHECK(esc(ctl, NV_ESC_RM_FREE, fr, sizeof fr) == 0 && rig_get32(fr, 12) == 0, "RM_FREE client");
    CHECK(esc(ctl, NV_ESC_RM_FREE, fr, sizeof fr) == 0 && rig_get32(fr, 12) == NV_ERR_INVALID_CLIENT,
          "RM_FREE again -> INVALID_CLIENT");
    close(g0);
    close(ctl);
}

static void test_uvm(void)
{
    int ctl = open("/dev/nvidiactl", O_RDWR);
    uint32_t client = alloc_client(ctl, NV01_ROOT_CLIENT);
    int u = open("/dev/nvidia-uvm", O_RDWR), u2 = open("/dev/nvidia-uvm", O_RDWR);
    unsigned char p[64] = { 0 };
    CHECK(uvm(u, UVM_PAGEABLE_MEM_ACCESS, p, 4) == NV_ERR_ILLEGAL_ACTION, "UVM before INITIALIZE -> ILLEGAL_ACTION");
    CHECK(uvm(u, 12345, p, 0) == -ENOSYS, "unknown UVM command -> ENOSYS");
    memset(p, 0, sizeof p);
    CHECK(uvm(u, UVM_INITIALIZE, p, 8) == 0, "UVM_INITIALIZE");
    CHECK(uvm(u, UVM_INITIALIZE, p, 8) == 0, "UVM_INITIALIZE again, same flags");
    rig_put64(p, 0, 1);
    CHECK(uvm(u, UVM_INITIALIZE, p, 8) == NV_ERR_INVALID_ARGUMENT, "UVM_INITIALIZE other flags -> INVALID_ARGUMENT");
    memset(p, 0, sizeof p);
    rig_put32(p, 0, (uint32_t)u);
    CHECK(uvm(u, UVM_MM_INITIALIZE, p, 4) == NV_ERR_IN_USE, "MM_INITIALIZE on the primary fd -> IN_USE");
    CHECK(uvm(u2, UVM_MM_INITIALIZE, p, 4) == 0, "MM_INITIALIZE on a second fd");
    memset(p, 0, sizeof p);
    rig_put32(p, 24, (uint32_t)ctl);
    rig_put32(p, 28, client);
    CHECK(uvm(u, UVM_REGISTER_GPU, p, 36) == NV_ERR_GPU_UUID_NOT_FOUND, "REGISTER_GPU unknown uuid");
    rig_gpu_uuid(0, p);
    CHECK(uvm(u, UVM_REGISTER_GPU, p, 36) == 0, "REGISTER_GPU");
    CHECK(uvm(u, UVM_REGISTER_GPU, p, 36) == NV_ERR_IN_USE, "REGISTER_GPU twice -> IN_USE");
    static unsigned char map[RIG_UVM_MAP_EXTERNAL_SIZE];
    CHECK(uvm(u, UVM_MAP_EXTERNAL_ALLOCATION, map, RIG_UVM_MAP_EXT_STATUS) == 0, "MAP_EXTERNAL_ALLOCATION (9264 bytes)");
    close(u2);
    close(u);
    close(ctl);
}

static void test_knobs(void)
{
    int ctl = open("/dev/nvidiactl", O_RDWR);
    unsigned char b[8] = { 0 };
    CHECK(esc(ctl, NV_ESC_SYS_PARAMS, b, 8) < 0 && errno == EPERM, "ESC_ERRNO 0xd6=EPERM:1 fires");
    CHECK(esc(ctl, NV_ESC_SYS_PARAMS, b, 8) == 0, "ESC_ERRNO :1 fires once");
    static unsigned char cards[32 * RIG_CARD_INFO_SIZE];
    CHECK(esc(ctl, NV_ESC_CARD_INFO, cards, RIG_CARD_INFO_SIZE) < 0 && errno == EINVAL,
          "CARD_INFO shorter than the GPU count -> EINVAL");
    CHECK(esc(ctl, NV_ESC_CARD_INFO, cards, sizeof cards) == 0 && cards[RIG_CARD_INFO_SIZE] == 1 &&
              rig_get32(cards, RIG_CARD_INFO_SIZE + RIG_CARD_MINOR) == 1,
          "FAKENV_GPUS=2: two entries");
    uint32_t client = alloc_client(ctl, NV01_ROOT_CLIENT);
    unsigned char att[RIG_ATTACH_IDS_SIZE];
    memset(att, 0xff, sizeof att);
    CHECK(control(ctl, client, NV0000_CTRL_CMD_GPU_ATTACH_IDS, att, sizeof att) == NV_ERR_INSUFFICIENT_PERMISSIONS,
          "RM_CONTROL_STATUS 0x215=0x1b");
    unsigned char a[RIG_NVOS64_SIZE] = { 0 };
    rig_put32(a, 0, client);
    rig_put32(a, 8, 0x5c000100);
    rig_put32(a, 12, KEPLER_CHANNEL_GROUP_A);
    CHECK(esc(ctl, NV_ESC_RM_ALLOC, a, sizeof a) == 0 && rig_get32(a, 40) == NV_ERR_IN_USE,
          "RM_ALLOC_STATUS 0xa06c=0x17");
    errno = 0;
    CHECK(open("/dev/nvidia0", O_RDWR) < 0 && errno == EIO, "GPU_OPEN_ERRNO=EIO");
    int g = open("/dev/nvidia1", O_RDWR | O_NONBLOCK);
    CHECK(g >= 0, "O_NONBLOCK open succeeds, error deferred");
    CHECK(esc(g, NV_ESC_NUMA_INFO, cards, 560) < 0 && errno == EIO, "deferred open: ioctls get EIO");
    unsigned char w[8] = { 0 };
    CHECK(esc(g, NV_ESC_WAIT_OPEN_COMPLETE, w, 8) == 0 && (int)rig_get32(w, 0) == -EIO,
          "WAIT_OPEN_COMPLETE reports rc=-EIO");
    errno = 0;
    CHECK(open("/dev/nvidia-uvm-tools", O_RDWR) < 0 && errno == EACCES, "DENY uvm-tools=EACCES");
    errno = 0;
    CHECK(open("/dev/nvidia-caps/nvidia-cap1", O_RDWR) < 0 && errno == ENOENT, "MISSING pattern");
    struct stat st;
    CHECK(stat("/dev/nvidia-caps/nvidia-cap1", &st) < 0 && errno == ENOENT, "MISSING applies to stat");
    int u = open("/dev/nvidia-uvm", O_RDWR);
    unsigned char p[40] = { 0 };
    uvm(u, UVM_INITIALIZE, p, 8);
    CHECK(uvm(u, UVM_REGISTER_GPU, p, 36) == NV_ERR_INSUFFICIENT_RESOURCES, "UVM_STATUS 37=0x1a");
    CHECK(uvm(u, UVM_PAGEABLE_MEM_ACCESS, p, 4) == -EIO, "UVM_ERRNO 39=EIO");
}

/* Several threads open, query and close nodes at once: fd bookkeeping and
 * RM state must stay consistent (each thread's client answers its controls). */
static void *thread_body(void *arg)
{
    (void)arg;
    long bad = 0;
    for (int i = 0; i < 200; i++) {
        int ctl = open("/dev/nvidiactl", O_RDWR);
        int u = open("/dev/nvidia-uvm", O_RDWR);
        uint32_t client = alloc_client(ctl, NV01_ROOT_CLIENT);
        unsigned char probed[RIG_PROBED_IDS_SIZE];
        unsigned char init[RIG_UVM_INIT_SIZE] = { 0 };
        if (!client || control(ctl, client, NV0000_CTRL_CMD_GPU_GET_PROBED_IDS, probed, sizeof probed) ||
            !rdev_is(ctl, 195, 255) || uvm(u, UVM_INITIALIZE, init, 8) != 0)
            bad++;
        unsigned char fr[RIG_NVOS00_SIZE] = { 0 };
        rig_put32(fr, 0, client);
        rig_put32(fr, 8, client);
        esc(ctl, NV_ESC_RM_FREE, fr, sizeof fr);
        close(u);
        close(ctl);
    }
    return (void *)bad;
}

static void test_threads(void)
{
    pthread_t t[8];
    long bad = 0;
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, thread_body, NULL);
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad += (long)r;
    }
    CHECK(bad == 0, "8 threads x 200 open/alloc/control/UVM init/free/close");
}

static void test_hang(void)
{
    int ctl = open("/dev/nvidiactl", O_RDWR);
    unsigned char b[8] = { 0 };
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int r = esc(ctl, NV_ESC_SYS_PARAMS, b, 8);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(r == 0 && t1.tv_sec - t0.tv_sec >= 1, "HANG_CMD 0xd6 sleeps HANG_SEC");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "basic";
    if (!strcmp(mode, "basic")) {
        test_nodes();
        test_frontend();
        test_rm();
        test_uvm();
        test_threads();
    } else if (!strcmp(mode, "knobs")) {
        test_knobs();
    } else if (!strcmp(mode, "hang")) {
        test_hang();
    } else {
        fprintf(stderr, "usage: fakenv_selftest basic|knobs|hang\n");
        return 2;
    }
    return failures;
}
