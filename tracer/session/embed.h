/* The files a one-file cutrace carries inside itself (embed.c). */
#ifndef CT_EMBED_H
#define CT_EMBED_H

#include <stdbool.h>
#include <stddef.h>

enum ct_embed { CT_EMBED_SHIM, CT_EMBED_PROBE };

/* does this cutrace carry the file (is it the one-file build)? */
bool ct_embed_has(enum ct_embed which);
size_t ct_embed_size(enum ct_embed which);
/* write the carried file where a program run with trace directory dir can
 * load or exec it (dir/.cutrace/NAME, or a memfd when dir is on a noexec
 * file system); its path into out.  -1 with the reason in why. */
int ct_embed_write(enum ct_embed which, const char *dir, char *out, size_t len, char *why, size_t whylen);

#endif
