/* dlwhich: dlopen(NAME) (default libcuda.so.1) and print what glibc loaded,
 * by the link map and by /proc/self/maps, or the dlerror() text, for
 * it_fidelity.py to compare with and without the shim (issue 15, "glibc
 * fidelity": which file the caller's dlopen takes).  Built with the
 * DT_RUNPATH $ORIGIN/rp1:$ORIGIN/rp2, so its search list differs from the
 * shim's and the shim has to follow the caller's search; the test copies it
 * into a directory of its own, next to rp1/ and rp2/. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "libcuda.so.1";
    struct link_map *lm = NULL;
    char line[4096];
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    FILE *f;

    if (!h) {
        printf("failed: %s\n", dlerror());
        return 0;
    }
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm)
        printf("link_map: %s\n", lm->l_name);
    f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        if (p && strstr(p, name)) {
            printf("maps: %s", p);
            break;
        }
    }
    if (f)
        fclose(f);
    return 0;
}
