/*
 * cutrace probe: the bare driver probe (dlopen libcuda.so.1, cuInit, device
 * enumeration; tracer/probe/probe.c) under the shim, then its timeline and
 * the verdict.  It needs no GPU and no CUDA program of the user's: it is the
 * first thing to run on a machine where CUDA does not start.
 */
#include "cmd.h"
#include "run.h"
#include "show.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject_rules.h"

static void probe_usage(FILE *f)
{
	fprintf(f, "usage: cutrace probe [-o DIR] [--inject RULE]... [--scenario NAME] [--ctx] [--nvml]\n"
		   "                     [--json] [-q] [--size SIZE] [--timeout DURATION] [--lib PATH]\n"
		   "                     [--color=WHEN]\n\n"
		   "Runs the bare driver probe (dlopen libcuda.so.1, cuInit, cuDriverGetVersion,\n"
		   "cuDeviceGetCount, device names) under the shim, prints its timeline and the\n"
		   "verdict.  Works on any machine: without a GPU or driver it says what is missing.\n\n"
		   "  -o, --output DIR     trace directory (default: a new one under $CUTRACE_DIR\n"
		   "                       or /tmp/cutrace-UID)\n"
		   "  --inject RULE        inject a fault (repeatable); see 'cutrace run --help-inject'\n"
		   "  --scenario NAME      inject a named scenario's rules (see 'cutrace scenarios')\n"
		   "  --ctx                also create a primary context on device 0\n"
		   "  --nvml               also initialise NVML\n"
		   "  --json               print the trace as one JSON document (as 'cutrace show\n"
		   "                       --json') on stdout; the probe's own output goes to stderr\n"
		   "  -q, --quiet          after the timeline, print the verdict only if the probe failed\n"
		   "  --size SIZE          trace file size (default 16M)\n"
		   "  --timeout DURATION   kill the probe after DURATION (default 60s; 0: no limit):\n"
		   "                       a call that did not return by then is the finding\n"
		   "  --lib PATH           libcutrace.so to preload (default: found next to cutrace)\n"
		   "  --color=WHEN         auto (default: on a terminal, unless NO_COLOR), always, never\n"
		   "  --no-time            stable output, alike for two runs: no times, addresses as\n"
		   "                       <addr>, pids as #1, #2, ... (--pids: the real ones)\n"
		   "  -h, --help           this help\n\n"
		   "exit status: 0 CUDA initialized, 1 it failed (the verdict says where), 2 usage error\n");
}

int cmd_probe(int argc, char **argv)
{
	struct ct_run_opts o;
	char probe[PATH_MAX];
	char *pargv[8];
	int pargc = 0, ci, status = 0, r, failed;
	bool ctx = false, nvml = false;
	char **av = calloc((size_t)argc + 1, sizeof *av);
	int ac = 0;

	if (!av)
		return CT_EXIT_USAGE;
	/* take out the probe's own options, hand the rest to the run parser */
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--ctx"))
			ctx = true;
		else if (!strcmp(argv[i], "--nvml"))
			nvml = true;
		else
			av[ac++] = argv[i];
	}
	r = ct_run_parse_cmd("probe", ac, av, &o, &ci, false); /* one-line usage errors */
	if (r == 1) {
		probe_usage(stdout);
		free(av);
		return CT_EXIT_OK;
	}
	if (r == 3) {
		free(av);
		printf("%s\n", ct_rules_grammar); /* as 'cutrace run --help-inject' */
		return CT_EXIT_OK;
	}
	if (r < 0 || ci < ac) {
		if (r == 0)
			ct_err("probe: unexpected argument '%s': the probe runs its own program (try 'cutrace probe --help')",
			       av[ci]);
		free(av);
		return CT_EXIT_USAGE;
	}
	free(av);
	/* a driver call that never returns must not hold the probe forever */
	if (!o.timeout_arg) {
		o.timeout_ns = CT_PROBE_TIMEOUT_NS;
		o.timeout_arg = CT_PROBE_TIMEOUT;
	}
	if (ct_find_probe(probe, sizeof probe) < 0) {
		ct_err("cutrace-probe not found next to cutrace");
		return CT_EXIT_USAGE;
	}
	if (ct_run_setup(&o) < 0 || ct_probe_path(probe, sizeof probe, o.dir) < 0)
		return CT_EXIT_USAGE;
	pargv[pargc++] = probe;
	if (ctx)
		pargv[pargc++] = "--ctx";
	if (nvml)
		pargv[pargc++] = "--nvml";
	pargv[pargc] = NULL;

	fflush(stdout);
	{
		/* with --json stdout is one JSON document: the probe's own lines go
		 * to stderr (the child inherits this fd 1) */
		int saved = o.json ? dup(1) : -1;
		if (saved >= 0)
			dup2(2, 1);
		r = ct_spawn_traced(&o, pargv, &status);
		if (saved >= 0) {
			dup2(saved, 1);
			close(saved);
		}
		if (r < 0)
			return CT_EXIT_USAGE;
	}
	fflush(stdout);
	if (!o.json)
		printf("\n");
	{
		/* the timeline, as 'cutrace show [--json] DIR' prints it; the text
		 * keeps the colour decided for standard output now */
		/* the verdict once: the report below prints it */
		struct ct_show_opts so = { .ops = ct_show_format(o.json ? "json" : "text"),
					   .no_verdict = true,
					   .no_time = o.no_time };
		char *dir = (char *)o.dir;
		if (!o.json)
			ct_color_set_mode(ct_color_on(stdout) ? CT_COLOR_ALWAYS : CT_COLOR_NEVER);
		fflush(stdout);
		ct_show_run(&so, &dir, 1);
		fflush(stdout);
	}
	if (o.json) {
		struct ct_run_opts q = o;
		q.quiet = true;
		failed = ct_run_report(&q, stderr);
	} else {
		o.no_context = true; /* the whole timeline is just above */
		failed = ct_run_report(&o, stdout);
	}
	/* a probe that did not finish is a finding, whatever its trace says */
	return failed || ct_spawn_last()->timed_out ? CT_EXIT_PROBLEM : CT_EXIT_OK;
}
