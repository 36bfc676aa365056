/*
 * The trace directory, opened so that nobody else can redirect or swap it
 * (issue 15): the shim before it creates a trace file (shim/trace.c) and
 * `cutrace run` before it makes a run directory (tracer/session/run.c) walk
 * the path the same way.  Raw system calls, no allocation: the shim calls
 * it from inside any hook.
 */
#ifndef CT_TRACEDIR_H
#define CT_TRACEDIR_H

#include <stddef.h>

/*
 * Open directory `path` component by component from "/" (or the working
 * directory for a relative path), each with O_PATH|O_DIRECTORY|O_NOFOLLOW
 * and checked through the opened fd (fstat):
 *  - a symbolic link is followed only where it sits in a directory owned by
 *    root or by us that nobody else can write to (/var/run -> /run): one
 *    planted in /tmp, or in any directory others can write to, is refused;
 *  - every component is owned by root or by the effective user, also when
 *    that user is root (another user who owns a directory on the way could
 *    rename what lies below it);
 *  - none is world-writable without the sticky bit.
 * With create, a missing LAST component is made (mode 0700); missing
 * parents are not.  Returns an O_PATH fd of the directory (close it), or -1
 * with the reason in why.
 */
int ct_tracedir_open(const char *path, int create, char *why, size_t whylen);

#endif
