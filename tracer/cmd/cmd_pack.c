/*
 * cutrace pack DIR|FILE... -o BUNDLE: a job's traces in one compact bundle
 * for a bug report (out/pack.c).
 */
#include "cmd.h"
#include "opts.h"
#include "pack.h"

/* the options: --help and the parser are both made from this table */
static const struct ct_opt pack_opts[] = {
	{ "output", 'o', CT_ARG_STRING, "BUNDLE",
	  "the bundle to write (required; .tar: not compressed; '-': standard output); written "
	  "whole or not at all" },
	CT_OPT_ROW_COLOR, /* accepted as by every command (this one prints no colour) */
	CT_OPT_ROW_HELP,
	{ 0 },
};

static const struct ct_cmd_spec pack_spec = {
	.cmd = "pack",
	.opts = pack_opts,
	.usage = "usage: cutrace pack [OPTIONS] DIR|FILE... -o BUNDLE\n"
		 "\n"
		 "Put the traces of a job (every trace show would read in the DIRs and FILEs:\n"
		 "*.cutrace, *.cutrace.gz, *.cutrace.zst, bundles, -) into one tar.gz to send.\n"
		 "Each trace is stored as written: without the preallocated tail of its file\n"
		 "that nothing was written to, so a 16 MiB trace of one probe takes a few\n"
		 "hundred KiB before compression.  'cutrace show BUNDLE' reads it back; a\n"
		 "trace the reader finds damaged is stored whole, as it is on disk.\n",
	.after = "exit status: 0 packed, 1 packed but some input could not be read, 2 bad usage,\n"
		 "no trace found, or the bundle could not be written.\n",
};

int cmd_pack(int argc, char **argv)
{
	const char *out = NULL;
	struct ct_optval v;
	int k, next = 1;

	ct_opts_begin(&pack_spec);
	while ((k = ct_opts_next(&pack_spec, argc, argv, &next, &v)) != -1) {
		switch (k) {
		case -2: return CT_EXIT_USAGE;
		case CT_OPT_HELP: ct_opts_help(&pack_spec, stdout); return CT_EXIT_OK;
		case 'o': out = v.s; break;
		}
	}
	if (next >= argc)
		return ct_opts_error(&pack_spec, "no trace file or directory given");
	if (!out)
		return ct_opts_error(&pack_spec, "no bundle given: -o BUNDLE");
	return ct_pack_run(out, argv + next, argc - next);
}
