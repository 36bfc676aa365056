/*
 * cutrace pack DIR|FILE... -o BUNDLE: a job's traces in one compact bundle
 * for a bug report (out/pack.c).
 */
#include "cmd.h"
#include "pack.h"

#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: cutrace pack [OPTIONS] DIR|FILE... -o BUNDLE\n"
		   "\n"
		   "Put the traces of a job (every trace show would read in the DIRs and FILEs:\n"
		   "*.cutrace, *.cutrace.gz, *.cutrace.zst, bundles, -) into one tar.gz to send.\n"
		   "Each trace is stored as written: without the preallocated tail of its file\n"
		   "that nothing was written to, so a 16 MiB trace of one probe takes a few\n"
		   "hundred KiB before compression.  'cutrace show BUNDLE' reads it back; a\n"
		   "trace the reader finds damaged is stored whole, as it is on disk.\n"
		   "\n"
		   "options:\n"
		   "  -o, --output=BUNDLE  the bundle to write (required; .tar: not compressed;\n"
		   "                       '-': standard output); written whole or not at all\n"
		   "  -h, --help           this help\n"
		   "\n"
		   "exit status: 0 packed, 1 packed but some input could not be read, 2 bad usage,\n"
		   "no trace found, or the bundle could not be written.\n");
}

int cmd_pack(int argc, char **argv)
{
	const char *out = NULL;
	char **args = calloc((size_t)argc + 1, sizeof *args);
	int nargs = 0, rc;
	bool opts_done = false;

	if (!args)
		ct_die(CT_EXIT_USAGE, "out of memory");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (opts_done || a[0] != '-' || !a[1]) {
			args[nargs++] = argv[i];
		} else if (!strcmp(a, "--")) {
			opts_done = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			free(args);
			return CT_EXIT_OK;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (i + 1 >= argc) {
				ct_err("pack: %s needs a value (try 'cutrace pack --help')", a);
				free(args);
				return CT_EXIT_USAGE;
			}
			out = argv[++i];
		} else if (!strncmp(a, "--output=", 9)) {
			out = a + 9;
		} else if (!strncmp(a, "-o", 2)) {
			out = a + 2;
		} else {
			ct_err("pack: unknown option '%s' (try 'cutrace pack --help')", a);
			free(args);
			return CT_EXIT_USAGE;
		}
	}
	if (!out || !*out || nargs == 0) {
		ct_err("pack: %s (try 'cutrace pack --help')",
		       nargs ? "no bundle given: -o BUNDLE" : "no trace file or directory given");
		free(args);
		return CT_EXIT_USAGE;
	}
	rc = ct_pack_run(out, args, nargs);
	free(args);
	return rc;
}
