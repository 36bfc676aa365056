/*
 * `cutrace pack DIR|FILE... -o BUNDLE`: the traces of a job in one tar.gz
 * (plain tar when BUNDLE ends in .tar), each stored as written (without the
 * preallocated tail nothing was written to), with the member
 * cutrace-pack.txt ("SIZE NAME" lines) giving each one's full size, so that
 * `cutrace show BUNDLE` reads them as the files they were.
 */
#ifndef CT_PACK_H
#define CT_PACK_H

/* returns the exit code: 0 packed, 1 packed but some input was unreadable,
 * 2 nothing packed or the bundle could not be written */
int ct_pack_run(const char *out_path, char **args, int nargs);

#endif
