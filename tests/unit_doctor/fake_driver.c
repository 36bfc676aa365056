/*
 * A stand-in "real" driver library for doctor's loader tests: it exports
 * the entry points doctor looks for and is larger than the 2 MiB stub
 * threshold (ct_elf_classify), with the driver version string in .rodata
 * like a real libcuda.  Never loaded by the tests, only inspected.
 */
#include <stddef.h>

#ifdef CT_FAKE_NVML
int nvmlInit_v2(void) { return 0; }
#else
int cuInit(unsigned int flags) { return flags ? 1 : 0; }
int cuDriverGetVersion(int *v) { if (!v) return 1; *v = 13000; return 0; }
int cuGetProcAddress_v2(const char *s, void **p, int v, unsigned long long f, int *st)
{
	(void)s; (void)v; (void)f; (void)st;
	if (p)
		*p = NULL;
	return 500;
}
#endif

/* the version strings a real driver library carries: its own and, like
 * the real 580.159.04 libcuda, older branches' (doctor takes the highest) */
__attribute__((used)) const char ct_fake_driver_old1[] = "535.54.02";
__attribute__((used)) const char ct_fake_driver_version[] = "580.159.04";
__attribute__((used)) const char ct_fake_driver_old2[] = "575.57.07";
/* non-zero so that it occupies the file (.rodata), not .bss */
__attribute__((used)) const unsigned char ct_fake_driver_padding[3u << 20] = { 1 };
