/* Which file the caller's dlopen would take (dlsearch.c). */
#ifndef CT_DLSEARCH_H
#define CT_DLSEARCH_H

#include <dlfcn.h>
#include <stddef.h>

enum {
	CT_SEARCH_NAME,   /* the plain name, loaded by the shim, takes the same file */
	CT_SEARCH_PATH,   /* the caller would take out (to load, or to fail on) */
	CT_SEARCH_UNSURE, /* the shim cannot tell: pass the call through */
};
/* theirs: the caller's search list, mine: the shim's (RTLD_DI_SERINFO; they
 * differ); file: a name without '/' */
int ct_dl_search(const Dl_serinfo *theirs, const Dl_serinfo *mine, const char *file, char *out, size_t outlen)
	__attribute__((visibility("hidden")));

#endif
