/* helper_run: run a helper named nvidia-modprobe the ways a driver or a
 * program does (format 1.6, shim/hooks_proc.c), so that a test can check
 * that the parent's trace has each run with its path, arguments and wait
 * status, and that other children are not recorded.
 *
 *   helper_run [--no-cuda] DIR
 *
 * Unless --no-cuda, libcuda.so.1 is dlopen()ed first (the rig's fake on
 * LD_LIBRARY_PATH): the shim records only in a process that touched CUDA.
 * DIR holds an executable DIR/nvidia-modprobe (the test writes it: it exits
 * with its first argument's number, default 1).  The runs, in order:
 *   1. fork + execle(DIR/nvidia-modprobe, "nvidia-modprobe", "-c", "0", "-u",
 *      NULL, envp={NULL}) + waitpid(pid, &st, 0)      (libcuda 535's way)
 *   2. fork + execv of it with argument "0" + waitpid(pid, NULL, 0)
 *   3. fork + execl of DIR/missing/nvidia-modprobe (ENOENT; the child
 *      _exit(127)s) + wait4
 *   4. posix_spawn of it with argument "3" + waitpid
 *   5. fork + execl("/bin/true") + waitpid: not a helper, not recorded
 * Each line printed: "RUN N pid=P status=S" (S: the raw wait status; -1
 * when the status was not asked for); exit 0. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void report(int n, pid_t pid, int st)
{
    printf("RUN %d pid=%d status=%d\n", n, (int)pid, st);
}

int main(int argc, char **argv)
{
    int cuda = 1, st;
    const char *dir;
    char helper[512], missing[512];
    char *const noenv[] = { NULL };
    pid_t pid;

    if (argc > 1 && !strcmp(argv[1], "--no-cuda")) {
        cuda = 0;
        argv++;
        argc--;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: helper_run [--no-cuda] DIR\n");
        return 2;
    }
    dir = argv[1];
    snprintf(helper, sizeof helper, "%s/nvidia-modprobe", dir);
    snprintf(missing, sizeof missing, "%s/missing/nvidia-modprobe", dir);
    if (cuda && !dlopen("libcuda.so.1", RTLD_NOW)) {
        fprintf(stderr, "helper_run: %s\n", dlerror());
        return 1;
    }
    fflush(stdout);

    /* 1 */
    if ((pid = fork()) == 0) {
        execle(helper, "nvidia-modprobe", "-c", "0", "-u", (char *)NULL, noenv);
        _exit(126);
    }
    waitpid(pid, &st, 0);
    report(1, pid, st);

    /* 2 */
    if ((pid = fork()) == 0) {
        char *const av[] = { "nvidia-modprobe", "0", NULL };
        execv(helper, av);
        _exit(126);
    }
    waitpid(pid, NULL, 0);
    report(2, pid, -1);

    /* 3 */
    if ((pid = fork()) == 0) {
        execl(missing, "nvidia-modprobe", (char *)NULL);
        _exit(127);
    }
    wait4(pid, &st, 0, NULL);
    report(3, pid, st);

    /* 4 */
    {
        char *const av[] = { "nvidia-modprobe", "3", NULL };
        if (posix_spawn(&pid, helper, NULL, NULL, av, environ) != 0) {
            perror("posix_spawn");
            return 1;
        }
        waitpid(pid, &st, 0);
        report(4, pid, st);
    }

    /* 5 */
    if ((pid = fork()) == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(126);
    }
    waitpid(pid, &st, 0);
    report(5, pid, st);
    return 0;
}
