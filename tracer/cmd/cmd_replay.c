/*
 * cutrace replay: recreate the root failure of a recorded trace (from any
 * machine) around a command on this one.
 *
 * The recorded trace is diagnosed; its root step is read back and turned
 * into the injection rule that produces the same failure at the same place:
 * a failed open becomes open:path=...:error=..., a failing ioctl becomes
 * ioctl:nr=...(:cmd=/class=...):status=... or error=..., counted with when=
 * as in the recording, a version handshake mismatch becomes version=, a
 * missing library dlopen:...:error=..., a driver code retval=, a too-old
 * driver value=, a call that never returned delay=  (session/replay.c).
 * Then the command runs under those rules and the new verdict is compared
 * with the recorded one (same layer, same kind of step, same final code).
 */
#include "cmd.h"
#include "diag.h"
#include "run.h"
#include "scenarios.h"
#include "inject_rules.h"
#include "opts.h"
#include "parse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* a recorded call that never returned is replayed under this --timeout */
#define REPLAY_HANG_TIMEOUT "20s"
/* the recorded failure happened here with no rule behind it */
#define REPLAY_EXIT_REAL 3

enum {
	O_PRINT = CT_OPT_FIRST_LONG
};

/* the options: --help and the parser are both made from this table */
static const struct ct_opt replay_opts[] = {
	{ "print", O_PRINT, CT_ARG_NONE, NULL, "only print the rules (and environment, timeout)" },
	{ "output", 'o', CT_ARG_STRING, "DIR", "trace directory of the new run" },
	{ "timeout", CT_RUN_O_TIMEOUT, CT_ARG_DURATION, "DURATION",
	  "kill CMD and its processes after DURATION; a recorded call that never returned is "
	  "replayed with --timeout " REPLAY_HANG_TIMEOUT " unless given" },
	{ "inject", CT_RUN_O_INJECT, CT_ARG_STRING, "RULE",
	  "more rules for the new run (CUTRACE_INJECT is kept as well); see --help-inject" },
	{ "size", CT_RUN_O_SIZE, CT_ARG_SIZE, "SIZE",
	  "trace file size of the new run (default 16M; 256K to 1G)" },
	CT_RUN_ROW_LIB,
	{ "no-time", CT_RUN_O_NO_TIME, CT_ARG_NONE, NULL,
	  "stable verdict lines: no times, pids as #1, #2, ... (--pids: the real ones)" },
	CT_RUN_ROW_PIDS,
	CT_OPT_ROW_COLOR,
	CT_RUN_ROW_HELP_INJECT_AS_RUN,
	CT_OPT_ROW_HELP,
	{ 0 },
};

static const struct ct_cmd_spec replay_spec = {
	.cmd = "replay",
	.opts = replay_opts,
	.in_order = true, /* TRACE, then more options, then CMD */
	.usage = "usage: cutrace replay [OPTIONS] TRACE [OPTIONS] [-- CMD [ARGS...]]\n\n"
		 "Derives the injection rules that recreate the root failure of TRACE (a trace file,\n"
		 "or a directory: its first failed process) and runs CMD under them, then checks\n"
		 "that the new verdict matches the recorded one (layer, kind of step, final code).\n"
		 "Options may come before or after TRACE (before '--').\n",
	.after = "exit status: 0 reproduced by injection (or --print), 1 not reproduced, 2 usage or\n"
		 "bad trace, 3 the same failure here for a real reason (no rule fired on it)\n",
};

/* the name under which the recording was made with `cutrace run --scenario`
 * (CUTRACE_SCENARIO in the recorded environment), or "" */
static void recorded_scenario(const char *path, char *out, size_t len)
{
	struct ct_trace *t;
	char err[256];
	const unsigned char *p;
	uint16_t n;
	static const char key[] = "CUTRACE_SCENARIO=";

	out[0] = 0;
	if (ct_trace_open(path, &t, err, sizeof err) < 0)
		return;
	for (unsigned i = 0; (p = ct_trace_ctx(t, CT_CTX_ENV, i, &n)); i++)
		if (n > sizeof key - 1 && !memcmp(p, key, sizeof key - 1)) {
			snprintf(out, len, "%.*s", (int)(n - (sizeof key - 1)), (const char *)p + sizeof key - 1);
			break;
		}
	ct_trace_close(t);
}

static bool same_kind(const char *a, const char *b)
{
	if (!strncmp(a, "open", 4) && !strncmp(b, "open", 4))
		return true;
	if (!strncmp(a, "__open", 6) || !strncmp(b, "__open", 6))
		return strstr(a, "open") && strstr(b, "open");
	if (!strncmp(a, "cuCtxCreate", 11) && !strncmp(b, "cuCtxCreate", 11))
		return true;
	if (!strncmp(a, "nvmlInit", 8) && !strncmp(b, "nvmlInit", 8))
		return true;
	if (!strncmp(a, "cuGetProcAddress", 16) && !strncmp(b, "cuGetProcAddress", 16))
		return true;
	if (!strncmp(a, "dl", 2) && !strncmp(b, "dl", 2))
		return !strcmp(a + 2, b + 2) || (strstr(a, "open") && strstr(b, "open"));
	return !strcmp(a, b);
}

int cmd_replay(int argc, char **argv)
{
	struct ct_run_opts o;
	struct ct_verdict rec, *got = NULL;
	char rules[1024], env[512], why[512], err[512], scen_rec[64], **paths = NULL, shown[4096];
	const char *trace_arg = NULL, *scenario = NULL, *trace_file = NULL;
	struct ct_optval v;
	int ci = 1, n, k, cmd_at, status = 0, rc = CT_EXIT_PROBLEM;
	const struct ct_verdict *real = NULL;

	/* options may stand before and after TRACE; CMD comes after "--", or
	 * is the first word after TRACE that is not an option */
	ct_run_opts_init(&o);
	ct_opts_begin(&replay_spec);
	cmd_at = argc;
	for (;;) {
		k = ct_opts_next(&replay_spec, argc, argv, &ci, &v);
		if (k == -1) {
			if (ci >= argc)
				break;
			if (ci > 1 && !strcmp(argv[ci - 1], "--")) {
				cmd_at = ci; /* getopt took "--": CMD follows */
				break;
			}
			if (trace_arg) {
				cmd_at = ci;
				break;
			}
			trace_arg = argv[ci];
			ct_opts_resume(ci + 1); /* more options may follow TRACE */
			continue;
		}
		if (k == -2 || ct_run_opt(&replay_spec, &o, k, &v) < 0)
			return CT_EXIT_USAGE;
		if (k == CT_OPT_HELP) {
			ct_opts_help(&replay_spec, stdout);
			return CT_EXIT_OK;
		}
		if (k == CT_RUN_O_HELP_INJECT) {
			printf("%s\n", ct_rules_grammar);
			return CT_EXIT_OK;
		}
		if (k == O_PRINT)
			o.print_only = true;
	}
	if (ct_opts_stable(&replay_spec, o.no_time, o.keep_pids) < 0)
		return CT_EXIT_USAGE;
	if (!trace_arg)
		return ct_opts_error(&replay_spec, "needs a trace file or directory (TRACE)");
	ci = cmd_at;
	/* the trace first: a missing file is named before anything else */
	n = ct_list_traces(trace_arg, &paths, err, sizeof err);
	if (n <= 0) {
		if (n < 0)
			ct_err("%s", err);
		else
			ct_err("%s: no trace files", trace_arg);
		return CT_EXIT_USAGE;
	}
	if (!o.print_only && ci >= argc) {
		ct_err("no command to run (cutrace replay TRACE -- CMD [ARGS...]); use --print to only see the rules");
		ct_free_paths(paths, n);
		return CT_EXIT_USAGE;
	}
	/* the first failed process of the recording */
	for (int i = 0; i < n && !trace_file; i++) {
		if (ct_diagnose_file(paths[i], &rec, err, sizeof err) < 0) {
			ct_err("%s: %s", paths[i], err);
			continue;
		}
		if (!rec.ok)
			trace_file = paths[i];
	}
	if (!trace_file) {
		ct_err("%s: no failed process in the recording: nothing to replay", trace_arg);
		ct_free_paths(paths, n);
		return CT_EXIT_USAGE;
	}
	recorded_scenario(trace_file, scen_rec, sizeof scen_rec);
	if (ct_replay_rules(trace_file, &rec, rules, sizeof rules, env, sizeof env, &scenario, why, sizeof why) < 0) {
		/* a recording made with --scenario can always be made again with it */
		if (!scen_rec[0] || !ct_scenario_find(scen_rec)) {
			ct_err("%s: cannot replay: %s", trace_file, why);
			ct_free_paths(paths, n);
			return CT_EXIT_USAGE;
		}
		rules[0] = env[0] = 0;
		scenario = scen_rec;
	}
	if (rec.hung && !o.timeout_ns) {
		/* the replayed call never returns either: it must be ended */
		ct_parse_duration(REPLAY_HANG_TIMEOUT, &o.timeout_ns);
		o.timeout_arg = REPLAY_HANG_TIMEOUT;
	}
	printf("recorded: ");
	ct_verdict_line(stdout, &rec);
	printf("\n");
	if (scen_rec[0])
		printf("recorded with: --scenario %s\n", scen_rec);
	if (rules[0])
		printf("rules:    %s\n", rules);
	if (env[0])
		printf("env:      %s\n", env);
	if (scenario)
		printf("scenario: %s\n", scenario);
	if (o.timeout_ns)
		printf("timeout:  %s%s\n", o.timeout_arg,
		       rec.hung ? " (the recorded call never returned: the replayed program is killed then)" : "");
	fflush(stdout);
	if (o.print_only) {
		ct_free_paths(paths, n);
		return CT_EXIT_OK;
	}
	if (rules[0]) {
		size_t used = strlen(o.inject);
		snprintf(o.inject + used, 4096 - used, "%s%s", used ? ";" : "", rules);
	}
	if (env[0])
		o.env[o.nenv++] = env;
	if (scenario)
		o.scenario = scenario;
	if (ct_run_setup(&o) < 0 || ct_spawn_traced(&o, argv + ci, &status) < 0) {
		ct_free_paths(paths, n);
		return CT_EXIT_USAGE;
	}
	ct_free_paths(paths, n);
	paths = NULL;
	n = ct_list_traces(o.dir, &paths, err, sizeof err);
	if (n > 0 && o.no_time)
		ct_list_order_by_start(paths, n, NULL, NULL); /* the order the processes started */
	got = n > 0 ? calloc((size_t)n, sizeof *got) : NULL;
	for (int i = 0; got && i < n; i++) {
		if (ct_diagnose_file(paths[i], &got[i], err, sizeof err) < 0 || got[i].ok)
			continue;
		printf("replayed: ");
		ct_verdict_line(stdout, &got[i]);
		printf("\n");
		if (got[i].layer == rec.layer && same_kind(got[i].step.call, rec.step.call) &&
		    got[i].final_code == rec.final_code && got[i].hung == rec.hung) {
			/* the same failure: made by the rules, or here already */
			if (got[i].injected || (env[0] && !rules[0])) {
				/* a replay that only changes the environment (no-visible-device)
				 * fires no rule: the change it made is the injection */
				printf("replay: reproduced by %s (layer %s, step %s, final code %d); traces in %s\n",
				       got[i].injected ? "injection" : "the environment change",
				       ct_layer_name(rec.layer), rec.step.call, rec.final_code,
				       ct_run_dir_shown(&o, shown, sizeof shown));
				rc = CT_EXIT_OK;
			} else {
				printf("replay: failed here for a real reason, not by injection: no rule fired on the "
				       "failing step or before it (layer %s, step %s, final code %d, as recorded); "
				       "traces in %s\n",
				       ct_layer_name(rec.layer), rec.step.call, rec.final_code,
				       ct_run_dir_shown(&o, shown, sizeof shown));
				rc = REPLAY_EXIT_REAL;
			}
			break;
		}
		if (!got[i].injected && !real)
			real = &got[i];
	}
	if (rc != CT_EXIT_OK && rc != REPLAY_EXIT_REAL && real)
		printf("replay: NOT reproduced, and this machine fails for a real reason (no rule fired on it): "
		       "recorded layer %s, step %s, final code %d; here layer %s, step %s, final code %d; traces in %s\n",
		       ct_layer_name(rec.layer), rec.step.call, rec.final_code, ct_layer_name(real->layer),
		       real->step.call, real->final_code, ct_run_dir_shown(&o, shown, sizeof shown));
	else if (rc != CT_EXIT_OK && rc != REPLAY_EXIT_REAL)
		printf("replay: NOT reproduced: recorded layer %s, step %s, final code %d; traces in %s\n",
		       ct_layer_name(rec.layer), rec.step.call, rec.final_code,
		       ct_run_dir_shown(&o, shown, sizeof shown));
	free(got);
	if (n > 0)
		ct_free_paths(paths, n);
	(void)status;
	return rc;
}
