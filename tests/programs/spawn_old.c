/* spawn_old: a program as built before glibc 2.15, whose posix_spawn and
 * posix_spawnp references are @GLIBC_2.2.5 (x86-64 only: the compat versions
 * glibc keeps).  Those run a file without "#!" through /bin/sh; the default
 * GLIBC_2.15 ones fail it with ENOEXEC.  The shim's export takes the old
 * references too, so it must hand each caller the version it asked for.
 *
 *   spawn_old FILE    spawns FILE with both, prints "SPAWN r=R status=S" */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>

extern char **environ;

int spawn_225(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
              char *const[], char *const[]);
int spawnp_225(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
               char *const[], char *const[]);
__asm__(".symver spawn_225,posix_spawn@GLIBC_2.2.5");
__asm__(".symver spawnp_225,posix_spawnp@GLIBC_2.2.5");

static void run(const char *what, int r, pid_t pid)
{
    int st = -1;

    if (r == 0)
        waitpid(pid, &st, 0);
    printf("%s r=%d status=%d\n", what, r, st);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    char *av[] = { "noshebang", NULL };
    pid_t pid = 0;

    if (argc != 2) {
        fprintf(stderr, "usage: spawn_old FILE\n");
        return 2;
    }
    int r = spawn_225(&pid, argv[1], NULL, NULL, av, environ);

    run("posix_spawn", r, pid);
    r = spawnp_225(&pid, argv[1], NULL, NULL, av, environ);
    run("posix_spawnp", r, pid);
    return 0;
}
