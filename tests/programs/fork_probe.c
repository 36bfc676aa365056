/* fork_probe: process-tree paths.  The parent initialises CUDA, then forks;
 * the child (which inherits the parent's driver fds and state) opens
 * /dev/nvidiactl itself and sends an ioctl, and -- with --exec -- replaces
 * itself with another program (e.g. cutrace-probe), so a tracer must follow
 * fork and exec.  Lines: "parent_NAME=RESULT", "child_NAME=RESULT"; the
 * exec'd program prints its own lines in between. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int (*cu_init_fn)(unsigned int);

/* _IOWR('F', 214 NV_ESC_SYS_PARAMS, 8) */
#define SYS_PARAMS_REQ ((3ul << 30) | (8ul << 16) | (0x46ul << 8) | 214ul)

static int child(char **exec_argv)
{
    int fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
    printf("child_open=%s\n", fd >= 0 ? "ok" : "failed");
    if (fd >= 0) {
        unsigned long long memblock = 0x40000000ull;
        printf("child_SYS_PARAMS=%d\n", ioctl(fd, SYS_PARAMS_REQ, &memblock));
        close(fd);
    }
    if (exec_argv) {
        fflush(stdout);
        execv(exec_argv[0], exec_argv);
        printf("child_exec=failed\n");
        return 127;
    }
    return 0;
}

int main(int argc, char **argv)
{
    char **exec_argv = NULL;
    if (argc > 2 && !strcmp(argv[1], "--exec"))
        exec_argv = argv + 2;
    else if (argc > 1) {
        fprintf(stderr, "usage: fork_probe [--exec PROGRAM [ARGS...]]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    cu_init_fn init = h ? (cu_init_fn)dlsym(h, "cuInit") : NULL;
    int r = init ? init(0) : -1;
    printf("parent_cuInit=%d\n", r);
    pid_t pid = fork();
    if (pid < 0) {
        printf("parent_fork=failed\n");
        return 1;
    }
    if (pid == 0)
        _exit(child(exec_argv));
    int status = 0;
    waitpid(pid, &status, 0);
    printf("parent_child_status=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return r ? 1 : 0;
}
