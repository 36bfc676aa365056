/*
 * Forced into every translation unit of a program that must start on any
 * glibc from 2.17 although it is built on a newer one (`-include floor.h`):
 * the calls that glibc 2.34 moved from libdl/libpthread into libc (and gave
 * a new default version there) are bound to the version every glibc has.
 * Before 2.34 those versions live in libdl.so.2 and libpthread.so.0, so the
 * program must also carry them as NEEDED entries (the build links them with
 * --no-as-needed); the loader looks a versioned symbol up in every loaded
 * object, not only in the file the version was recorded against.
 *
 * Versions: `objdump -T` of glibc 2.31's libdl.so.2 / libpthread.so.0 and of
 * glibc 2.36's libc.so.6 (x86_64; aarch64 starts at GLIBC_2.17).
 */
#ifndef CT_PROBE_FLOOR_H
#define CT_PROBE_FLOOR_H

#if defined(__x86_64__)
#define CT_FLOOR_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define CT_FLOOR_BASE "GLIBC_2.17"
#endif

#ifdef CT_FLOOR_BASE
#define CT_FLOOR_SYMVER(name, ver) __asm__(".symver " #name "," #name "@" ver)
CT_FLOOR_SYMVER(dlopen, CT_FLOOR_BASE);
CT_FLOOR_SYMVER(dlsym, CT_FLOOR_BASE);
CT_FLOOR_SYMVER(dlvsym, CT_FLOOR_BASE);
CT_FLOOR_SYMVER(dlerror, CT_FLOOR_BASE);
CT_FLOOR_SYMVER(dlclose, CT_FLOOR_BASE);
CT_FLOOR_SYMVER(dladdr, CT_FLOOR_BASE);
#if defined(__x86_64__)
CT_FLOOR_SYMVER(dlinfo, "GLIBC_2.3.3");
CT_FLOOR_SYMVER(dladdr1, "GLIBC_2.3.3");
#else
CT_FLOOR_SYMVER(dlinfo, CT_FLOOR_BASE);
CT_FLOOR_SYMVER(dladdr1, CT_FLOOR_BASE);
#endif
CT_FLOOR_SYMVER(pthread_once, CT_FLOOR_BASE);
CT_FLOOR_SYMVER(pthread_create, CT_FLOOR_BASE);
CT_FLOOR_SYMVER(pthread_join, CT_FLOOR_BASE);
CT_FLOOR_SYMVER(pthread_key_create, CT_FLOOR_BASE);
CT_FLOOR_SYMVER(pthread_getspecific, CT_FLOOR_BASE);
CT_FLOOR_SYMVER(pthread_setspecific, CT_FLOOR_BASE);
#endif

#endif
