/*
 * cutrace run: run a program with the shim preloaded, then say per traced
 * process whether CUDA initialization worked and, if not, where and why
 * (the running itself is session/run.c, the verdicts session/report.c).
 */
#include "cmd.h"
#include "run.h"

#include <stdio.h>

#include "inject_rules.h"

/* the options: --help and the parser are both made from this table */
static const struct ct_opt run_opts[] = {
	{ "output", 'o', CT_ARG_STRING, "DIR",
	  "trace directory (created with its parents if missing; must be yours and hold no "
	  "traces yet)" },
	{ "inject", CT_RUN_O_INJECT, CT_ARG_STRING, "RULE",
	  "inject a fault (repeatable); see 'cutrace run --help-inject'" },
	{ "scenario", CT_RUN_O_SCENARIO, CT_ARG_STRING, "NAME",
	  "inject the rules of a named scenario (see 'cutrace scenarios')" },
	{ "quiet", 'q', CT_ARG_NONE, NULL, "print only the verdicts of processes that failed" },
	{ "size", CT_RUN_O_SIZE, CT_ARG_SIZE, "SIZE",
	  "trace file size per process (default 16M; 256K to 1G)" },
	{ "timeout", CT_RUN_O_TIMEOUT, CT_ARG_DURATION, "DURATION",
	  "SIGKILL CMD and every process it started after DURATION (e.g. 20s, 2m): a hang "
	  "becomes a verdict; exit status 137" },
	CT_RUN_ROW_LIB,
	{ "no-time", CT_RUN_O_NO_TIME, CT_ARG_NONE, NULL,
	  "stable verdicts, alike for two runs of one program: no times, addresses as <addr>, "
	  "pids as #1, #2, ... (as 'cutrace show')" },
	CT_RUN_ROW_PIDS,
	CT_OPT_ROW_COLOR,
	{ "help-inject", CT_RUN_O_HELP_INJECT, CT_ARG_NONE, NULL, "print the fault injection rule grammar" },
	CT_OPT_ROW_HELP,
	{ 0 },
};

static const struct ct_cmd_spec run_spec = {
	.cmd = "run",
	.opts = run_opts,
	.in_order = true, /* the options end at CMD */
	.usage = "usage: cutrace run [OPTIONS] [--] CMD [ARGS...]\n\n"
		 "Runs CMD with libcutrace.so preloaded, writes one trace per process into DIR\n"
		 "(default: a new directory under $CUTRACE_DIR or /tmp/cutrace-UID) and prints a\n"
		 "verdict per traced process on stderr.  Exits with CMD's status (128+N if signal N\n"
		 "killed it), 2 on usage errors.\n",
	.after = "Rules in CUTRACE_INJECT (from the environment) are checked like --inject and kept:\n"
		 "the program gets those first, then the --inject and --scenario rules.\n",
};

int cmd_run(int argc, char **argv)
{
	struct ct_run_opts o;
	struct ct_optval v;
	int ci = 1, status = 0, r, k;

	ct_run_opts_init(&o);
	ct_opts_begin(&run_spec);
	while ((k = ct_opts_next(&run_spec, argc, argv, &ci, &v)) != -1) {
		if (k == -2 || ct_run_opt(&run_spec, &o, k, &v) < 0)
			return CT_EXIT_USAGE;
		if (k == CT_OPT_HELP) {
			ct_opts_help(&run_spec, stdout);
			return CT_EXIT_OK;
		}
		if (k == CT_RUN_O_HELP_INJECT) {
			printf("%s\n", ct_rules_grammar);
			return CT_EXIT_OK;
		}
	}
	if (ci >= argc)
		return ct_opts_error(&run_spec, "no command to run (cutrace run [OPTIONS] -- CMD [ARGS...])");
	if (ct_opts_stable(&run_spec, o.no_time, o.keep_pids) < 0)
		return CT_EXIT_USAGE;
	if (ct_run_setup(&o) < 0)
		return CT_EXIT_USAGE;
	if (ct_tracing_off_reason()[0])
		ct_warn("tracing is off: %s", ct_tracing_off_reason());
	r = ct_spawn_traced(&o, argv + ci, &status);
	if (r < 0)
		return CT_EXIT_USAGE;
	if (r > 0) {
		ct_run_dir_remove_empty(&o); /* it never ran: nothing to keep */
		return status;
	}
	ct_run_report(&o, stderr);
	return status;
}
