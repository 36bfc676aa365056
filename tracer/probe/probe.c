/* cutrace-probe: the bare driver probe (seed article 001).
 *
 * It strips every layer above the driver: no CUDA headers, no runtime, no
 * link against libcuda.  It dlopen()s libcuda.so.1, resolves a handful of
 * entry points with dlsym and calls cuInit(0) directly, so whatever fails is
 * the driver (or what it talks to), not a framework.  `cutrace probe` runs it
 * under the shim.
 *
 * Output (stable lines, one per call):
 *   libcuda: <path the loader used>
 *   cuInit(0) = N (NAME)
 *   cuDriverGetVersion() = N (NAME), version V
 *   cuDeviceGetCount() = N (NAME), count C
 *   device I: <name>                       (or cuDeviceGet(I) = N (NAME))
 *   cuDevicePrimaryCtxRetain(device 0) = N (NAME)          with --ctx
 *   nvmlInit_v2() = N / nvmlShutdown() = N                 with --nvml
 * Exit status: 0 if cuInit succeeded, 1 if it failed, 2 for bad usage,
 * 3 if libcuda could not be loaded at all. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;

typedef CUresult (*cu_init_fn)(unsigned int);
typedef CUresult (*cu_int_fn)(int *);
typedef CUresult (*cu_device_get_fn)(CUdevice *, int);
typedef CUresult (*cu_device_name_fn)(char *, int, CUdevice);
typedef CUresult (*cu_error_name_fn)(CUresult, const char **);
typedef CUresult (*cu_ctx_retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*cu_dev_fn)(CUdevice);
typedef int (*nvml_void_fn)(void);
typedef const char *(*nvml_string_fn)(int);

struct probe_opts {
    int ndev;
    int ctx;
    int nvml;
};

static struct {
    void *lib;
    cu_init_fn init;
    cu_int_fn driver_version, device_count;
    cu_device_get_fn device_get;
    cu_device_name_fn device_name;
    cu_error_name_fn error_name;
    cu_ctx_retain_fn ctx_retain;
    cu_dev_fn ctx_release;
} cu;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: cutrace-probe [-n N] [--ctx] [--nvml] [--help]\n"
            "Load libcuda.so.1 with dlopen, call cuInit(0) and list devices.\n"
            "  -n N      name at most N devices (default 2)\n"
            "  --ctx     also create a primary context on device 0\n"
            "  --nvml    also load libnvidia-ml.so.1 and call nvmlInit_v2/nvmlShutdown\n"
            "  --help    show this text\n"
            "Exit status: 0 cuInit succeeded, 1 it failed, 2 usage, 3 libcuda not loadable.\n");
}

static int parse_args(int argc, char **argv, struct probe_opts *o)
{
    o->ndev = 2;
    o->ctx = 0;
    o->nvml = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--ctx")) {
            o->ctx = 1;
        } else if (!strcmp(a, "--nvml")) {
            o->nvml = 1;
        } else if (!strcmp(a, "-n") && i + 1 == argc) {
            fprintf(stderr, "cutrace-probe: -n needs a device count\n");
            return -1;
        } else if (!strcmp(a, "-n")) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 0 || n > 1024) {
                fprintf(stderr, "cutrace-probe: -n wants a device count 0..1024, got '%s'\n", argv[i]);
                return -1;
            }
            o->ndev = (int)n;
        } else {
            fprintf(stderr, "cutrace-probe: unknown option '%s' (try --help)\n", a);
            return -1;
        }
    }
    return 0;
}

static const char *result_name(CUresult r)
{
    const char *s = NULL;
    if (cu.error_name && cu.error_name(r, &s) == 0 && s)
        return s;
    return "?";
}

static void *need(const char *name)
{
    void *p = dlsym(cu.lib, name);
    if (!p)
        printf("dlsym(%s) failed: %s\n", name, dlerror());
    return p;
}

/* Returns 0 if libcuda and the entry points the probe cannot do without
 * were found. */
static int load_libcuda(void)
{
    const char *names[] = { "libcuda.so.1", "libcuda.so" };
    for (size_t i = 0; i < 2 && !cu.lib; i++) {
        cu.lib = dlopen(names[i], RTLD_NOW);
        if (!cu.lib)
            printf("dlopen(%s) failed: %s\n", names[i], dlerror());
    }
    if (!cu.lib)
        return -1;
    cu.init = (cu_init_fn)need("cuInit");
    cu.driver_version = (cu_int_fn)need("cuDriverGetVersion");
    cu.device_count = (cu_int_fn)need("cuDeviceGetCount");
    cu.device_get = (cu_device_get_fn)need("cuDeviceGet");
    cu.device_name = (cu_device_name_fn)need("cuDeviceGetName");
    cu.error_name = (cu_error_name_fn)dlsym(cu.lib, "cuGetErrorName");
    cu.ctx_retain = (cu_ctx_retain_fn)dlsym(cu.lib, "cuDevicePrimaryCtxRetain");
    cu.ctx_release = (cu_dev_fn)dlsym(cu.lib, "cuDevicePrimaryCtxRelease_v2");
    if (!cu.ctx_release)
        cu.ctx_release = (cu_dev_fn)dlsym(cu.lib, "cuDevicePrimaryCtxRelease");
    /* The handle's link map names the file the loader picked; dladdr() of a
     * symbol would name the shim's wrapper when the probe runs under cutrace. */
    struct link_map *map = NULL;
    if (dlinfo(cu.lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
        printf("libcuda: %s\n", map->l_name);
    return cu.init ? 0 : -1;
}

static void list_devices(int ndev)
{
    int count = 0;
    CUresult r = cu.device_count ? cu.device_count(&count) : -1;
    if (!cu.device_count)
        return;
    printf("cuDeviceGetCount() = %d (%s), count %d\n", r, result_name(r), r ? 0 : count);
    if (r || !cu.device_get || !cu.device_name)
        return;
    for (int i = 0; i < count && i < ndev; i++) {
        CUdevice dev;
        char name[256];
        if ((r = cu.device_get(&dev, i))) {
            printf("cuDeviceGet(%d) = %d (%s)\n", i, r, result_name(r));
            continue;
        }
        if ((r = cu.device_name(name, sizeof name, dev)))
            printf("cuDeviceGetName(%d) = %d (%s)\n", i, r, result_name(r));
        else
            printf("device %d: %s\n", i, name);
    }
}

/* "a primary-context creation": the step where exclusive-process and
 * out-of-memory failures show up. */
static void make_context(void)
{
    if (!cu.ctx_retain || !cu.device_get) {
        printf("cuDevicePrimaryCtxRetain: not exported\n");
        return;
    }
    CUdevice dev;
    CUcontext ctx = NULL;
    CUresult r = cu.device_get(&dev, 0);
    if (r) {
        printf("cuDeviceGet(0) = %d (%s)\n", r, result_name(r));
        return;
    }
    r = cu.ctx_retain(&ctx, dev);
    printf("cuDevicePrimaryCtxRetain(device 0) = %d (%s)\n", r, result_name(r));
    if (!r && cu.ctx_release)
        cu.ctx_release(dev);
}

static void probe_nvml(void)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!h) {
        printf("dlopen(libnvidia-ml.so.1) failed: %s\n", dlerror());
        return;
    }
    nvml_void_fn init = (nvml_void_fn)dlsym(h, "nvmlInit_v2");
    nvml_void_fn shutdown = (nvml_void_fn)dlsym(h, "nvmlShutdown");
    nvml_string_fn text = (nvml_string_fn)dlsym(h, "nvmlErrorString");
    if (!init || !shutdown) {
        printf("libnvidia-ml.so.1: nvmlInit_v2/nvmlShutdown not exported\n");
        return;
    }
    int r = init();
    printf("nvmlInit_v2() = %d (%s)\n", r, text ? text(r) : "?");
    if (!r) {
        r = shutdown();
        printf("nvmlShutdown() = %d\n", r);
    }
}

int main(int argc, char **argv)
{
    struct probe_opts o;
    if (parse_args(argc, argv, &o))
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (load_libcuda()) {
        if (o.nvml)
            probe_nvml();
        return 3;
    }
    CUresult r = cu.init(0);
    printf("cuInit(0) = %d (%s)\n", r, result_name(r));
    if (cu.driver_version) {
        int v = 0;
        CUresult rv = cu.driver_version(&v);
        printf("cuDriverGetVersion() = %d (%s), version %d\n", rv, result_name(rv), rv ? 0 : v);
    }
    if (!r) {
        list_devices(o.ndev);
        if (o.ctx)
            make_context();
    }
    if (o.nvml)
        probe_nvml();
    return r ? 1 : 0;
}
