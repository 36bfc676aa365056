/* fidelity: glibc behaviours a program can see, printed one per line, for
 * tests/integration/it_fidelity.py to compare with and without the shim
 * (issue 15, "glibc fidelity"):
 *  - errno after dlerror() of a failed dlopen("libcuda.so.1") (glibc's
 *    dlerror formats the message then and leaves errno 2 on 2.36);
 *  - dlsym(RTLD_NEXT, "cuInit") from the main program, libcuda not loaded:
 *    NULL and glibc's text;
 *  - with argument "vfork": the program opens /dev/nvidiactl (the rig's fake
 *    kernel), a vfork child closes its copy of the fd and exits, the parent
 *    then makes an ioctl on the fd: the parent's trace must still show it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    void *h, *p;
    const char *m;
    int e;

    if (argc > 1 && !strcmp(argv[1], "vfork")) {
        int fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC), st = 0;
        pid_t pid;
        char buf[64] = { 0 };

        printf("open %s\n", fd >= 0 ? "ok" : "failed");
        pid = vfork();
        if (pid == 0) {
            close(fd);
            _exit(0);
        }
        waitpid(pid, &st, 0);
        /* NV_ESC_CHECK_VERSION_STR-sized request; the result is not the point */
        e = ioctl(fd, _IOWR('F', 210, char[64]), buf);
        printf("child exit %d, parent ioctl %s\n", WEXITSTATUS(st), e == 0 ? "ok" : "failed");
        close(fd);
        return 0;
    }
    dlerror();
    errno = 77;
    h = dlopen("libcuda.so.1", RTLD_NOW);
    m = dlerror();
    e = errno;
    printf("dlopen %s, dlerror %s, errno after dlerror %d\n", h ? "loaded" : "NULL", m ? "text" : "none", e);
    p = dlsym(RTLD_NEXT, "cuInit");
    m = dlerror();
    printf("dlsym(RTLD_NEXT, cuInit) %s, dlerror: %s\n", p ? "found" : "NULL", m ? m : "none");
    return 0;
}
