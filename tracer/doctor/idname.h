/* User and group names from /etc/passwd and /etc/group (idname.c). */
#ifndef CT_IDNAME_H
#define CT_IDNAME_H

#include <stddef.h>

/* the name of id in a passwd- or group-format file; 0, or -1 (not found,
 * unreadable, or longer than len - 1) */
int ct_id_name(const char *file, unsigned id, char *buf, size_t len);

#endif
