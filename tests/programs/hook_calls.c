/* hook_calls: reaches every hooked entry point that the path programs
 * (probe, probe_linked, rt_probe) do not, so that a test can check each is
 * in the trace with its arguments and result.  Run under the rig (fake
 * libcuda on LD_LIBRARY_PATH, fake kernel preloaded after the shim).
 *
 *   - the eight open entry points on /dev/nvidiactl, each fd closed again;
 *   - dlopen("libcuda.so.1") + dlsym of cuInit, cuDeviceGet, cuCtxCreate_v2
 *     and cuGetProcAddress_v2; cuCtxCreate_v2 called through the dlsym
 *     pointer;
 *   - cuGetProcAddress_v2("cuCtxCreate", version 11040) with a symbol-status
 *     pointer, the answer (cuCtxCreate_v3) called; a look-up of a name the
 *     driver does not have, with a status pointer too;
 *   - dlmopen(LM_ID_NEWLM, "libcuda.so.1") and dlvsym(h, "cuInit", VER).
 *
 * Prototypes are declared here (cuda.h renames cuGetProcAddress and
 * cuCtxCreate with macros).  Lines printed: "NAME=RESULT [key=value]";
 * exit 0 when every step did what the fake driver promises.
 * usage: hook_calls [DLVSYM_VERSION]   (default "GLIBC_2.2.5": no such
 * version in libcuda, so dlvsym fails with the loader's message) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;

/* the FORTIFY entry points, declared by hand: <fcntl.h> only has them
 * inside its _FORTIFY_SOURCE wrappers */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

static int bad;

static void one_open(const char *name, int fd)
{
    printf("%s=%s\n", name, fd >= 0 ? "ok" : "failed");
    if (fd < 0)
        bad = 1;
    else
        close(fd);
}

int main(int argc, char **argv)
{
    const char *ver = argc > 1 ? argv[1] : "GLIBC_2.2.5";
    const char *ctl = "/dev/nvidiactl";

    setvbuf(stdout, NULL, _IOLBF, 0);
    one_open("open", open(ctl, O_RDWR | O_CLOEXEC));
    one_open("open64", open64(ctl, O_RDWR | O_CLOEXEC));
    one_open("openat", openat(AT_FDCWD, ctl, O_RDWR | O_CLOEXEC));
    one_open("openat64", openat64(AT_FDCWD, ctl, O_RDWR | O_CLOEXEC));
    one_open("__open_2", __open_2(ctl, O_RDWR | O_CLOEXEC));
    one_open("__open64_2", __open64_2(ctl, O_RDWR | O_CLOEXEC));
    one_open("__openat_2", __openat_2(AT_FDCWD, ctl, O_RDWR | O_CLOEXEC));
    one_open("__openat64_2", __openat64_2(AT_FDCWD, ctl, O_RDWR | O_CLOEXEC));

    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (!h) {
        printf("dlopen=failed %s\n", dlerror());
        return 1;
    }
    CUresult (*init)(unsigned) = (CUresult (*)(unsigned))dlsym(h, "cuInit");
    CUresult (*get)(CUdevice *, int) = (CUresult (*)(CUdevice *, int))dlsym(h, "cuDeviceGet");
    CUresult (*create2)(CUcontext *, unsigned, CUdevice) =
        (CUresult (*)(CUcontext *, unsigned, CUdevice))dlsym(h, "cuCtxCreate_v2");
    CUresult (*gpa2)(const char *, void **, int, uint64_t, int *) =
        (CUresult (*)(const char *, void **, int, uint64_t, int *))dlsym(h, "cuGetProcAddress_v2");
    if (!init || !get || !create2 || !gpa2) {
        printf("dlsym=failed\n");
        return 1;
    }
    CUresult r = init(0);
    printf("cuInit=%d\n", r);
    CUdevice dev = -1;
    r = get(&dev, 0);
    printf("cuDeviceGet=%d dev=%d\n", r, dev);
    CUcontext c2 = NULL;
    r = create2(&c2, 0, dev);
    printf("cuCtxCreate_v2=%d ctx=%s\n", r, c2 ? "set" : "null");
    bad |= r != 0;

    void *pfn = NULL;
    int status = -1;
    r = gpa2("cuCtxCreate", &pfn, 11040, 0, &status);
    printf("cuGetProcAddress_v2(cuCtxCreate)=%d status=%d\n", r, status);
    bad |= r != 0 || status != 0 || !pfn;
    if (pfn) {
        CUresult (*create3)(CUcontext *, void *, int, unsigned, CUdevice) =
            (CUresult (*)(CUcontext *, void *, int, unsigned, CUdevice))pfn;
        CUcontext c3 = NULL;
        r = create3(&c3, NULL, 0, 4, dev);
        printf("cuCtxCreate_v3=%d ctx=%s\n", r, c3 ? "set" : "null");
        bad |= r != 0;
    }
    void *none = (void *)1;
    status = -1;
    r = gpa2("cuNoSuchFunction", &none, 12000, 0, &status);
    printf("cuGetProcAddress_v2(cuNoSuchFunction)=%d status=%d\n", r, status);
    bad |= r == 0 || status != 1;

    void *hm = dlmopen(LM_ID_NEWLM, "libcuda.so.1", RTLD_NOW);
    printf("dlmopen=%s\n", hm ? "ok" : dlerror());
    bad |= !hm;
    void *v = dlvsym(h, "cuInit", ver);
    printf("dlvsym=%s\n", v ? "found" : "null");
    if (!v)
        (void)dlerror();
    return bad;
}
