/*
 * cutrace run: run a program with the shim preloaded, then say per traced
 * process whether CUDA initialization worked and, if not, where and why
 * (the running itself is session/run.c, the verdicts session/report.c).
 */
#include "cmd.h"
#include "run.h"

#include <stdio.h>

#include "inject_rules.h"

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: cutrace run [-o DIR] [--inject RULE]... [--scenario NAME] [-q] [--size SIZE]\n"
		"                   [--timeout DURATION] [--color=auto|always|never] -- CMD [ARGS...]\n\n"
		"Runs CMD with libcutrace.so preloaded, writes one trace per process into DIR\n"
		"(default: a new directory under $CUTRACE_DIR or /tmp/cutrace-UID) and prints a\n"
		"verdict per traced process on stderr.  Exits with CMD's status (128+N if signal N\n"
		"killed it), 2 on usage errors.\n\n"
		"  -o, --output DIR     trace directory (created with its parents if missing; must be yours)\n"
		"  --inject RULE        inject a fault (repeatable); see 'cutrace run --help-inject'\n"
		"  --scenario NAME      inject the rules of a named scenario (see 'cutrace scenarios')\n"
		"  -q, --quiet          print only the verdicts of processes that failed\n"
		"  --size SIZE          trace file size per process (default 16M)\n"
		"  --timeout DURATION   SIGKILL CMD and every process it started after DURATION\n"
		"                       (e.g. 20s, 2m): a hang becomes a verdict; exit status 137\n"
		"  --lib PATH           libcutrace.so to preload (default: found next to cutrace)\n"
		"  --no-time            stable verdicts, alike for two runs of one program: no times,\n"
		"                       addresses as <addr>, pids as #1, #2, ... (as 'cutrace show')\n"
		"  --pids               with --no-time: the real pids\n\n"
		"Rules in CUTRACE_INJECT (from the environment) are checked like --inject and kept:\n"
		"the program gets those first, then the --inject and --scenario rules.\n");
}

int cmd_run(int argc, char **argv)
{
	struct ct_run_opts o;
	int ci, status = 0, r;

	r = ct_run_parse_cmd("run", argc, argv, &o, &ci, true);
	if (r == 1) {
		run_usage(stdout);
		return CT_EXIT_OK;
	}
	if (r == 3) {
		printf("%s\n", ct_rules_grammar);
		return CT_EXIT_OK;
	}
	if (r < 0)
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
