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
#include "parse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* a recorded call that never returned is replayed under this --timeout */
#define REPLAY_HANG_TIMEOUT "20s"
/* the recorded failure happened here with no rule behind it */
#define REPLAY_EXIT_REAL 3

static void replay_usage(FILE *f)
{
	fprintf(f,
		"usage: cutrace replay [OPTIONS] TRACE [OPTIONS] [-- CMD [ARGS...]]\n\n"
		"Derives the injection rules that recreate the root failure of TRACE (a trace file,\n"
		"or a directory: its first failed process) and runs CMD under them, then checks\n"
		"that the new verdict matches the recorded one (layer, kind of step, final code).\n"
		"Options may come before or after TRACE (before '--').\n\n"
		"  --print             only print the rules (and environment, timeout)\n"
		"  -o DIR              trace directory of the new run\n"
		"  --timeout DURATION  kill CMD and its processes after DURATION; a recorded call\n"
		"                      that never returned is replayed with --timeout %s unless given\n"
		"  --inject RULE       more rules for the new run (CUTRACE_INJECT is kept as well)\n"
		"  --no-time           stable verdict lines: no times, pids as #1, #2, ... (--pids:\n"
		"                      the real ones)\n\n"
		"exit status: 0 reproduced by injection (or --print), 1 not reproduced, 2 usage or\n"
		"bad trace, 3 the same failure here for a real reason (no rule fired on it)\n",
		REPLAY_HANG_TIMEOUT);
}

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
	char rules[1024], env[512], why[512], err[512], scen_rec[64], **paths = NULL, **av, shown[4096];
	const char *trace_arg = NULL, *scenario = NULL, *trace_file = NULL;
	int ci, r, n, k = 0, cmd_at, status = 0, rc = CT_EXIT_PROBLEM;
	const struct ct_verdict *real = NULL;

	/* options may stand before and after TRACE: gather them (with their
	 * values) ahead of everything else, then the command after "--"; a
	 * word after TRACE that is not an option starts the command too */
	av = calloc((size_t)argc + 1, sizeof *av);
	if (!av)
		return CT_EXIT_PROBLEM;
	av[k++] = argv[0];
	cmd_at = argc;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			cmd_at = i + 1;
			break;
		}
		if (a[0] == '-' && a[1]) {
			av[k++] = argv[i];
			if (ct_run_opt_takes_value(a) && i + 1 < argc)
				av[k++] = argv[++i];
			continue;
		}
		if (!trace_arg) {
			trace_arg = a;
			continue;
		}
		cmd_at = i;
		break;
	}
	r = ct_run_parse_cmd("replay", k, av, &o, &ci, false);
	free(av);
	if (r == 1) {
		replay_usage(stdout);
		return CT_EXIT_OK;
	}
	if (r == 3) {
		printf("%s\n", ct_rules_grammar);
		return CT_EXIT_OK;
	}
	if (r < 0)
		return CT_EXIT_USAGE;
	if (!trace_arg) {
		ct_err("replay needs a trace file or directory (try 'cutrace replay --help')");
		return CT_EXIT_USAGE;
	}
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
