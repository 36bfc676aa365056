/*
 * cutrace show FILE|DIR...: decode trace files.  The options are read here;
 * the showing itself is out/show.c (ct_show_run).
 */
#include "cmd.h"
#include "show.h"

#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cutrace show [OPTIONS] FILE|DIR...\n"
		"\n"
		"Decode cutrace trace files: one block per process, then its calls in order.\n"
		"A DIR means every *.cutrace file in it and in its subdirectories (one per\n"
		"host of a job on a shared filesystem, say), sorted by path.  With more than\n"
		"one trace, the text output starts with a summary of the whole job: how many\n"
		"processes were healthy, and the failed ones grouped by verdict with their\n"
		"hosts, ranks and pids.\n"
		"\n"
		"options:\n"
		"  --format=text|json|chrome|prometheus  output format (default text; prometheus:\n"
		"                             the job's summary as metrics for node-exporter's\n"
		"                             textfile collector)\n"
		"  --json                     the same as --format=json\n"
		"  -o, --output=FILE          write to FILE instead of standard output\n"
		"  --summary                  only the job summary (text): processes healthy and\n"
		"                             failed, ranks and hosts, failures grouped by verdict\n"
		"  --no-time                  stable output, alike for two runs of one program: no\n"
		"                             times, durations or start time, addresses as <addr>,\n"
		"                             pids and tids as #1, #2, ... in the order they started\n"
		"  --pids                     with --no-time: keep the real pids and tids\n"
		"  --all                      a job: every process's timeline (default: the summary,\n"
		"                             then one process of each group)\n"
		"  --expand                   every look-up line (default: a run of successful dlsym or\n"
		"                             cuGetProcAddress calls is folded, 'cuGetProcAddress x 379 more')\n"
		"  --only=LIST                only these calls in the timeline: dl, cuda, cudart, nvml,\n"
		"                             open, ioctl, close, io (e.g. --only=dl,cuda,ioctl); the\n"
		"                             verdict still sees every call\n"
		"  --raw                      JSON: include the recorded parameter blocks as hex\n"
		"  --color=auto|always|never  colour the text output (auto: on a terminal, unless NO_COLOR)\n"
		"  -h, --help                 this help\n"
		"\n"
		"text timeline: one line per call,\n"
		"  +TIME ms [TID] call(arguments) = result  details  <duration>  MARKS\n"
		"TIME counts from the process's first event; [TID] is shown for threads other\n"
		"than the main one; calls made inside another call of the same thread (the\n"
		"ioctls of cuInit) are indented.  MARKS: FAILED (the call failed: errno,\n"
		"CUresult, NV status, NULL handle), NEVER RETURNED (no exit record: the call\n"
		"hung or the process died in it), [injected: ...] (a cutrace rule produced\n"
		"the result).  Lines starting with ** are notes from the shim.\n"
		"\n"
		"exit status: 0 every process shown initialized CUDA (or did not fail), 1 some\n"
		"process failed (its verdict says why), 2 bad usage or no readable trace.\n");
}

/* "--opt=VALUE" or "--opt VALUE": the value, advancing *i for the second form */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n))
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n])
		return NULL;
	if (*i + 1 >= argc) {
		ct_err("show: %s needs a value", name);
		return "";
	}
	return argv[++*i];
}

int cmd_show(int argc, char **argv)
{
	struct ct_show_opts o = { .ops = ct_show_format("text") };
	const char *out_path = NULL, *v;
	char **args = calloc((size_t)argc + 1, sizeof *args);
	int nargs = 0, rc;
	bool opts_done = false, keep_pids = false, raw = false;

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
		} else if (!strcmp(a, "--json")) {
			o.ops = ct_show_format("json");
		} else if (!strcmp(a, "--summary")) {
			o.summary_only = true;
		} else if (!strcmp(a, "--no-time")) {
			o.no_time = true;
		} else if (!strcmp(a, "--pids")) {
			keep_pids = true;
		} else if (!strcmp(a, "--all")) {
			o.all = true;
		} else if (!strcmp(a, "--expand")) {
			o.expand = true;
		} else if ((v = opt_value(argc, argv, &i, "--only"))) {
			char bad[64];
			if (!*v)
				goto bad_usage;
			if (ct_show_parse_only(v, &o.only, bad, sizeof bad) < 0) {
				ct_err("show: --only takes dl, cuda, cudart, nvml, open, ioctl, close or io, not '%s' "
				       "(try 'cutrace show --help')",
				       bad);
				free(args);
				return CT_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--raw")) {
			raw = true;
		} else if ((v = opt_value(argc, argv, &i, "--format"))) {
			if (!*v)
				goto bad_usage;
			if (!(o.ops = ct_show_format(v))) {
				ct_err("show: unknown format '%s' (text, json, chrome or prometheus)", v);
				free(args);
				return CT_EXIT_USAGE;
			}
		} else if ((v = opt_value(argc, argv, &i, "--color")) ||
			   (v = opt_value(argc, argv, &i, "--colour"))) {
			if (!*v)
				goto bad_usage;
			if (!strcmp(v, "auto"))
				ct_color_set_mode(CT_COLOR_AUTO);
			else if (!strcmp(v, "always"))
				ct_color_set_mode(CT_COLOR_ALWAYS);
			else if (!strcmp(v, "never"))
				ct_color_set_mode(CT_COLOR_NEVER);
			else {
				ct_err("show: --color takes auto, always or never, not '%s'", v);
				free(args);
				return CT_EXIT_USAGE;
			}
		} else if ((v = opt_value(argc, argv, &i, "--output")) ||
			   (v = opt_value(argc, argv, &i, "-o"))) {
			if (!*v)
				goto bad_usage;
			out_path = v;
		} else if (!strncmp(a, "-o", 2) && a[2] != '-') {
			out_path = a + 2;
		} else {
			ct_err("show: unknown option '%s' (try 'cutrace show --help')", a);
			free(args);
			return CT_EXIT_USAGE;
		}
	}
	if (nargs == 0) {
		ct_err("show: no trace file or directory given (try 'cutrace show --help')");
		free(args);
		return CT_EXIT_USAGE;
	}
	if (raw && o.ops != ct_show_format("json")) {
		ct_err("show: --raw adds parameter blocks to the JSON output only: use it with --json");
		free(args);
		return CT_EXIT_USAGE;
	}
	ct_desc_json_raw = raw;
	ct_stable_set(o.no_time, keep_pids);
	o.out_path = out_path;
	rc = ct_show_run(&o, args, nargs);
	free(args);
	return rc;

bad_usage: /* opt_value said what was missing */
	free(args);
	return CT_EXIT_USAGE;
}
