/* fidelity: glibc behaviours a program can see, printed one per line, for
 * tests/integration/it_fidelity.py to compare with and without the shim
 * (issue 15, "glibc fidelity"):
 *  - errno after dlerror() of a failed dlopen("libcuda.so.1") (glibc's
 *    dlerror formats the message then and leaves errno 2 on 2.36);
 *  - dlsym(RTLD_NEXT, "cuInit") from the main program, libcuda not loaded:
 *    NULL and glibc's text;
 *  - with argument "vfork": the program opens /dev/nvidiactl (the rig's fake
 *    kernel), a vfork child closes its copy of the fd and exits, the parent
 *    then makes an ioctl on the fd: the parent's trace must still show it;
 *  - with argument "rawfork" or "clone": the program opens /dev/nvidiactl
 *    and makes an ioctl (its trace is active), then starts a child by the
 *    fork system call itself (syscall(SYS_fork)) or by clone() without
 *    CLONE_VM: no pthread_atfork handler runs in it.  The child opens the
 *    node, makes an ioctl on its fd and on the inherited one, closes both
 *    and exits; the parent then makes one more ioctl.  Each prints its pid:
 *    the child's steps must be in a trace of its own, none in the parent's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* NV_ESC_CHECK_VERSION_STR-sized request; the result is not the point */
#define REQ _IOWR('F', 210, char[64])

static int inherited = -1;

/* the child of a raw fork or clone: its own open, an ioctl on each fd */
static int child_steps(void *unused)
{
    char buf[64] = { 0 };
    int fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
    int a = ioctl(fd, REQ, buf), b = ioctl(inherited, REQ, buf);

    (void)unused;
    printf("child pid %ld: open %s, ioctls %s\n", (long)syscall(SYS_getpid), fd >= 0 ? "ok" : "failed",
           a == 0 && b == 0 ? "ok" : "failed");
    fflush(stdout);
    close(fd);
    close(inherited);
    _exit(0);
}

static int rawfork(int use_clone)
{
    static char stack[256 << 10];
    char buf[64] = { 0 };
    pid_t pid;
    int st = 0, e;

    inherited = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
    e = ioctl(inherited, REQ, buf);
    printf("parent pid %ld: open %s, ioctl %s\n", (long)getpid(), inherited >= 0 ? "ok" : "failed",
           e == 0 ? "ok" : "failed");
    fflush(stdout);
    if (use_clone) {
        pid = clone(child_steps, stack + sizeof stack, SIGCHLD, NULL);
    } else {
#ifdef SYS_fork
        pid = (pid_t)syscall(SYS_fork);
#else
        pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
        if (pid == 0)
            child_steps(NULL);
    }
    if (pid < 0)
        return 1;
    waitpid(pid, &st, 0);
    e = ioctl(inherited, REQ, buf);
    printf("child %ld exit %d, parent ioctl %s\n", (long)pid, WEXITSTATUS(st), e == 0 ? "ok" : "failed");
    close(inherited);
    return 0;
}

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
        e = ioctl(fd, REQ, buf);
        printf("child exit %d, parent ioctl %s\n", WEXITSTATUS(st), e == 0 ? "ok" : "failed");
        close(fd);
        return 0;
    }
    if (argc > 1 && (!strcmp(argv[1], "rawfork") || !strcmp(argv[1], "clone")))
        return rawfork(!strcmp(argv[1], "clone"));
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
