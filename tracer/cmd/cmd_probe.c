/*
 * cutrace probe: the bare driver probe (dlopen libcuda.so.1, cuInit, device
 * enumeration; tracer/probe/probe.c) under the shim, then its timeline and
 * the verdict.  It needs no GPU and no CUDA program of the user's: it is the
 * first thing to run on a machine where CUDA does not start.
 */
#include "cmd.h"
#include "run.h"
#include "opts.h"
#include "show.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject_rules.h"

enum {
	O_CTX = CT_OPT_FIRST_LONG,
	O_NVML,
	O_JSON
};

/* the options: --help and the parser are both made from this table */
static const struct ct_opt probe_opts[] = {
	{ "output", 'o', CT_ARG_STRING, "DIR",
	  "trace directory (default: a new one under $CUTRACE_DIR or /tmp/cutrace-UID)" },
	{ "inject", CT_RUN_O_INJECT, CT_ARG_STRING, "RULE",
	  "inject a fault (repeatable); see 'cutrace run --help-inject'" },
	{ "scenario", CT_RUN_O_SCENARIO, CT_ARG_STRING, "NAME",
	  "inject a named scenario's rules (see 'cutrace scenarios')" },
	{ "ctx", O_CTX, CT_ARG_NONE, NULL, "also create a primary context on device 0" },
	{ "nvml", O_NVML, CT_ARG_NONE, NULL, "also initialise NVML" },
	{ "json", O_JSON, CT_ARG_NONE, NULL,
	  "print the trace as one JSON document (as 'cutrace show --json') on stdout; the "
	  "probe's own output goes to stderr" },
	{ "quiet", 'q', CT_ARG_NONE, NULL, "after the timeline, print the verdict only if the probe failed" },
	{ "size", CT_RUN_O_SIZE, CT_ARG_SIZE, "SIZE", "trace file size (default 16M; 256K to 1G)" },
	{ "timeout", CT_RUN_O_TIMEOUT, CT_ARG_DURATION, "DURATION",
	  "kill the probe after DURATION (default 60s; 0: no limit): a call that did not "
	  "return by then is the finding" },
	CT_RUN_ROW_LIB,
	{ "no-time", CT_RUN_O_NO_TIME, CT_ARG_NONE, NULL,
	  "stable output, alike for two runs: no times, addresses as <addr>, pids as #1, #2, ..." },
	CT_RUN_ROW_PIDS,
	CT_OPT_ROW_COLOR,
	CT_RUN_ROW_HELP_INJECT_AS_RUN,
	CT_OPT_ROW_HELP,
	{ 0 },
};

static const struct ct_cmd_spec probe_spec = {
	.cmd = "probe",
	.opts = probe_opts,
	.in_order = true,
	.usage = "usage: cutrace probe [OPTIONS]\n\n"
		 "Runs the bare driver probe (dlopen libcuda.so.1, cuInit, cuDriverGetVersion,\n"
		 "cuDeviceGetCount, device names) under the shim, prints its timeline and the\n"
		 "verdict.  Works on any machine: without a GPU or driver it says what is missing.\n",
	.after = "exit status: 0 CUDA initialized, 1 it failed (the verdict says where), 2 usage error\n",
};

int cmd_probe(int argc, char **argv)
{
	struct ct_run_opts o;
	struct ct_optval v;
	char probe[PATH_MAX];
	char *pargv[8];
	int pargc = 0, ci = 1, status = 0, r, failed, k;
	bool ctx = false, nvml = false;

	ct_run_opts_init(&o);
	ct_opts_begin(&probe_spec);
	while ((k = ct_opts_next(&probe_spec, argc, argv, &ci, &v)) != -1) {
		if (k == -2 || ct_run_opt(&probe_spec, &o, k, &v) < 0)
			return CT_EXIT_USAGE;
		switch (k) {
		case CT_OPT_HELP: ct_opts_help(&probe_spec, stdout); return CT_EXIT_OK;
		case CT_RUN_O_HELP_INJECT: printf("%s\n", ct_rules_grammar); return CT_EXIT_OK;
		case O_CTX: ctx = true; break;
		case O_NVML: nvml = true; break;
		case O_JSON: o.json = true; break;
		}
	}
	if (ci < argc)
		return ct_opts_error(&probe_spec, "unexpected argument '%s': the probe runs its own program",
				     argv[ci]);
	if (ct_opts_stable(&probe_spec, o.no_time, o.keep_pids) < 0)
		return CT_EXIT_USAGE;
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
