/* fs_calls: the file-system calls a driver makes on NVIDIA paths before it
 * opens a node (format 1.5, shim/hooks_fs.c), each next to the same call on
 * a path that is not NVIDIA's, so that a test can check that the first are
 * in the trace with their arguments and results and the second are not.
 *
 *   fs_calls [--no-cuda] DIR
 *
 * Unless --no-cuda, libcuda.so.1 is dlopen()ed first (the rig's fake on
 * LD_LIBRARY_PATH): the shim records these calls only in a process that has
 * touched CUDA.  DIR: a writable directory for the non-NVIDIA twins.  On
 * NVIDIA paths: stat, __xstat (glibc before 2.33, through dlsym), access,
 * fopen, open of /proc/devices and /proc/driver/nvidia/version; mknod,
 * mknodat, chmod, chown, symlink, unlink and remove of a FIFO
 * /dev/nvidia-cutrace-test-PID (as an ordinary user these fail EACCES: the
 * failures are recorded too).  Each line printed: "NAME PATH = RET errno=E"
 * (errno 0 when the call succeeded; for fopen RET is 1 for a stream, 0 for
 * NULL); exit 0. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static void say(const char *name, const char *path, long r)
{
    printf("%s %s = %ld errno=%d\n", name, path, r, r < 0 ? errno : 0);
}

static void say_st(const char *name, const char *path, int r, const struct stat *st)
{
    int e = errno;

    printf("%s %s = %d errno=%d", name, path, r, r < 0 ? e : 0);
    if (r == 0)
        printf(" mode=0%o", (unsigned)st->st_mode);
    printf("\n");
}

static void fs_twice(const char *nv, const char *other, int which)
{
    const char *paths[2] = { nv, other };
    struct stat st;
    int (*xstat)(int, const char *,
                 struct stat *) = (int (*)(int, const char *, struct stat *))dlsym(RTLD_DEFAULT, "__xstat");

    for (int i = 0; i < 2; i++) {
        const char *p = paths[i];
        int r;
        FILE *f;

        errno = 0;
        switch (which) {
        case 0:
            r = stat(p, &st);
            say_st("stat", p, r, &st);
            break;
        case 1:
            if (!xstat)
                return;
            r = xstat(1, p, &st);
            say_st("__xstat", p, r, &st);
            break;
        case 2: say("access", p, access(p, R_OK)); break;
        case 3:
            f = fopen(p, "r");
            printf("fopen %s = %d errno=%d\n", p, f != NULL, f ? 0 : errno);
            if (f)
                fclose(f);
            break;
        case 4:
            r = open(p, O_RDONLY | O_CLOEXEC);
            say("open", p, r);
            if (r >= 0)
                close(r);
            break;
        }
    }
}

int main(int argc, char **argv)
{
    int cuda = 1;
    char nod[64], nod2[64], lnk[64], o_nod[512], o_nod2[512], o_lnk[512];

    if (argc > 1 && !strcmp(argv[1], "--no-cuda")) {
        cuda = 0;
        argc--;
        argv++;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: fs_calls [--no-cuda] DIR\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (cuda && !dlopen("libcuda.so.1", RTLD_NOW)) {
        fprintf(stderr, "fs_calls: dlopen(libcuda.so.1): %s\n", dlerror());
        return 1;
    }
    fs_twice("/proc/devices", "/proc/self/status", 0);
    fs_twice("/sys/module/nvidia", "/sys/module", 0);
    fs_twice("/proc/driver/nvidia/version", "/proc/version", 1);
    fs_twice("/proc/driver/nvidia/version", "/proc/version", 2);
    fs_twice("/proc/modules", "/proc/cpuinfo", 3);
    fs_twice("/proc/devices", "/proc/stat", 4);
    fs_twice("/sys/module/nvidia/initstate", "/sys/kernel/mm", 2);

    snprintf(nod, sizeof nod, "/dev/nvidia-cutrace-test-%d", (int)getpid());
    snprintf(nod2, sizeof nod2, "/dev/nvidia-cutrace-test2-%d", (int)getpid());
    snprintf(lnk, sizeof lnk, "/dev/nvidia-cutrace-link-%d", (int)getpid());
    snprintf(o_nod, sizeof o_nod, "%s/fifo", argv[1]);
    snprintf(o_nod2, sizeof o_nod2, "%s/fifo2", argv[1]);
    snprintf(o_lnk, sizeof o_lnk, "%s/link", argv[1]);
    /* NVIDIA's, then the twin; each pair back to back */
    errno = 0;
    say("mknod", nod, mknod(nod, S_IFIFO | 0600, 0));
    say("mknod", o_nod, mknod(o_nod, S_IFIFO | 0600, 0));
    say("mknodat", nod2, mknodat(AT_FDCWD, nod2, S_IFIFO | 0600, makedev(195, 254)));
    say("mknodat", o_nod2, mknodat(AT_FDCWD, o_nod2, S_IFIFO | 0600, makedev(195, 254)));
    say("chmod", nod, chmod(nod, 0666));
    say("chmod", o_nod, chmod(o_nod, 0666));
    say("chown", nod, chown(nod, getuid(), getgid()));
    say("chown", o_nod, chown(o_nod, getuid(), getgid()));
    say("symlink", lnk, symlink(nod + 5, lnk));
    say("symlink", o_lnk, symlink("fifo", o_lnk));
    say("unlink", lnk, unlink(lnk));
    say("unlink", o_lnk, unlink(o_lnk));
    say("unlink", nod, unlink(nod));
    say("unlink", o_nod, unlink(o_nod));
    say("remove", nod2, remove(nod2));
    say("remove", o_nod2, remove(o_nod2));
    return 0;
}
