/*
 * rel_dlcycle [STUB_LIBCUDA]: loader patterns that a dlsym/dlopen hook can
 * get wrong.
 *   1. dlopen libcuda.so.1, dlsym + call cuInit and cuDriverGetVersion,
 *      dlclose -- three times (the library may be unloaded and come back
 *      at another address);
 *   2. the same with RTLD_DEEPBIND (the library's own references bind
 *      inside it first);
 *   3. two different libcuda objects at once (the fake one from the search
 *      path and STUB_LIBCUDA, the toolkit's stub, by path): each pointer
 *      dlsym returned must keep calling its own library;
 *   4. dlsym(RTLD_DEFAULT, "cuInit") while libcuda is loaded RTLD_LOCAL:
 *      NULL, as the loader says (only RTLD_GLOBAL loads are in the default
 *      scope), and after an RTLD_GLOBAL load: found.
 * It prints one line per step; run with and without the shim, the lines
 * must be the same.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*init_fn)(unsigned);
typedef int (*ver_fn)(int *);

static void cycle(const char *label, int flags)
{
	for (int i = 0; i < 3; i++) {
		void *h = dlopen("libcuda.so.1", flags);
		if (!h) {
			printf("%s %d: dlopen failed: %s\n", label, i, dlerror());
			continue;
		}
		init_fn in = (init_fn)dlsym(h, "cuInit");
		ver_fn ve = (ver_fn)dlsym(h, "cuDriverGetVersion");
		int v = -1, r1 = in ? in(0) : -1, r2 = ve ? ve(&v) : -1;
		printf("%s %d: cuInit=%d cuDriverGetVersion=%d version=%d dlclose=%d\n", label, i, r1, r2, v,
		       dlclose(h));
	}
}

int main(int argc, char **argv)
{
	void *p;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cycle("cycle", RTLD_NOW);
	cycle("lazy-local", RTLD_LAZY | RTLD_LOCAL);
	cycle("deepbind", RTLD_NOW | RTLD_DEEPBIND);

	void *fake = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	p = dlsym(RTLD_DEFAULT, "cuInit");
	printf("RTLD_DEFAULT cuInit with libcuda RTLD_LOCAL: %s\n", p ? "found" : "NULL");
	if (argc > 1) {
		void *stub = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		init_fn a = fake ? (init_fn)dlsym(fake, "cuInit") : NULL;
		init_fn b = stub ? (init_fn)dlsym(stub, "cuInit") : NULL;
		printf("two libcudas: fake=%s stub=%s\n", a ? "ok" : "none", b ? "ok" : "none");
		if (a && b) {
			int rb = b(0), ra = a(0);
			printf("  stub cuInit=%d, then fake cuInit=%d, stub again=%d\n", rb, ra, b(0));
		}
		if (stub)
			dlclose(stub);
	}
	void *g = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	p = dlsym(RTLD_DEFAULT, "cuInit");
	printf("RTLD_DEFAULT cuInit after an RTLD_GLOBAL load: %s\n", p ? "found" : "NULL");
	if (p)
		printf("  cuInit=%d\n", ((init_fn)p)(0));
	if (g)
		dlclose(g);
	if (fake)
		dlclose(fake);
	return 0;
}
