/*
 * Files the CLI writes (`show -o`, `pack -o`): never lose what was there.
 * The output goes to a temporary file in the target's directory and is
 * renamed over the target only when everything was written; an output that
 * is one of the inputs (same device and inode) is refused before anything
 * is opened for writing.  Outputs that cannot be renamed over (`-`,
 * /dev/stdout, /dev/null, a FIFO or a terminal) are written directly.
 */
#ifndef CT_OUTFILE_H
#define CT_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct ct_outfile {
	FILE *f;
	char *path;     /* the name asked for */
	char *target;   /* the file the rename replaces (symbolic links resolved) */
	char *tmp;      /* the temporary file, NULL when written directly */
	bool is_stdout; /* "-": standard output */
};

/*
 * 0 when path may be written while the n inputs are read; -1 with one
 * sentence in err when path is one of them (the same file, by device and
 * inode) or a directory.  A path that does not exist yet is fine.
 */
int ct_outfile_check(const char *path, char *const *inputs, int n, char *err, size_t errlen);
/* Open the temporary file next to path ("-": standard output); -1 with err. */
int ct_outfile_open(struct ct_outfile *o, const char *path, char *err, size_t errlen);
/* Flush, sync and rename the temporary file onto the target; -1 with err
 * (the temporary file is removed, the target left as it was). */
int ct_outfile_commit(struct ct_outfile *o, char *err, size_t errlen);
/* Give the output up: the temporary file is removed, the target unchanged.
 * Returns true when the target was left untouched (false: written directly). */
bool ct_outfile_discard(struct ct_outfile *o);

#endif
