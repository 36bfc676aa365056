/*
 * cutrace show FILE|DIR...: decode trace files.  The options are read here;
 * the showing itself is out/show.c (ct_show_run).
 */
#include "cmd.h"
#include "opts.h"
#include "show.h"

enum {
	O_FORMAT = CT_OPT_FIRST_LONG,
	O_JSON,
	O_SUMMARY,
	O_NO_TIME,
	O_ALL,
	O_EXPAND,
	O_ONLY,
	O_RAW,
	O_PIDS,
};

/* the options: --help and the parser are both made from this table */
static const struct ct_opt show_opts[] = {
	{ "format", O_FORMAT, CT_ARG_STRING, "FORMAT",
	  "text (default), json, chrome or prometheus (the job's summary as "
	  "metrics for node-exporter's textfile collector)" },
	{ "json", O_JSON, CT_ARG_NONE, NULL, "the same as --format=json" },
	{ "output", 'o', CT_ARG_STRING, "FILE", "write to FILE instead of standard output" },
	{ "summary", O_SUMMARY, CT_ARG_NONE, NULL,
	  "only the job summary (text): processes healthy and failed, ranks "
	  "and hosts, failures grouped by verdict" },
	{ "no-time", O_NO_TIME, CT_ARG_NONE, NULL,
	  "stable output, alike for two runs of one program: no times, durations or start time, "
	  "addresses as <addr>, pids and tids as #1, #2, ... in the order they started "
	  "(not with --format=chrome)" },
	{ "pids", O_PIDS, CT_ARG_NONE, NULL, "with --no-time: keep the real pids and tids" },
	{ "all", O_ALL, CT_ARG_NONE, NULL,
	  "a job: every process's timeline (default: the summary, then one "
	  "process of each group)" },
	{ "expand", O_EXPAND, CT_ARG_NONE, NULL,
	  "every look-up line (default: a run of successful dlsym or "
	  "cuGetProcAddress calls is folded, 'cuGetProcAddress x 379 more')" },
	{ "only", O_ONLY, CT_ARG_STRING, "LIST",
	  "only these calls in the timeline: dl, cuda, cudart, nvml, open, "
	  "ioctl, close, io (e.g. --only=dl,cuda,ioctl); the verdict still "
	  "sees every call" },
	{ "raw", O_RAW, CT_ARG_NONE, NULL, "JSON: include the recorded parameter blocks as hex" },
	CT_OPT_ROW_COLOR,
	CT_OPT_ROW_HELP,
	{ 0 },
};

static const struct ct_cmd_spec show_spec = {
	.cmd = "show",
	.opts = show_opts,
	.usage = "usage: cutrace show [OPTIONS] FILE|DIR...\n"
		 "\n"
		 "Decode cutrace trace files: one block per process, then its calls in order.\n"
		 "A DIR means every *.cutrace file in it and in its subdirectories (one per\n"
		 "host of a job on a shared filesystem, say), sorted by path.  With more than\n"
		 "one trace, the text output starts with a summary of the whole job: how many\n"
		 "processes were healthy, and the failed ones grouped by verdict with their\n"
		 "hosts, ranks and pids.\n",
	.after = "text timeline: one line per call,\n"
		 "  +TIME ms [TID] call(arguments) = result  details  <duration>  MARKS\n"
		 "TIME counts from the process's first event; [TID] is shown for threads other\n"
		 "than the main one; calls made inside another call of the same thread (the\n"
		 "ioctls of cuInit) are indented.  MARKS: FAILED (the call failed: errno,\n"
		 "CUresult, NV status, NULL handle), NEVER RETURNED (no exit record: the call\n"
		 "hung or the process died in it), [injected: ...] (a cutrace rule produced\n"
		 "the result).  Lines starting with ** are notes from the shim.\n"
		 "\n"
		 "exit status: 0 every process shown initialized CUDA (or did not fail), 1 some\n"
		 "process failed (its verdict says why), 2 bad usage or no readable trace.\n",
};

int cmd_show(int argc, char **argv)
{
	struct ct_show_opts o = { .ops = ct_show_format("text") };
	struct ct_optval v;
	int k, next = 1;
	bool keep_pids = false, raw = false;

	ct_opts_begin(&show_spec);
	while ((k = ct_opts_next(&show_spec, argc, argv, &next, &v)) != -1) {
		char bad[64];
		switch (k) {
		case -2: return CT_EXIT_USAGE;
		case CT_OPT_HELP: ct_opts_help(&show_spec, stdout); return CT_EXIT_OK;
		case O_JSON: o.ops = ct_show_format("json"); break;
		case O_SUMMARY: o.summary_only = true; break;
		case O_NO_TIME: o.no_time = true; break;
		case O_ALL: o.all = true; break;
		case O_EXPAND: o.expand = true; break;
		case O_ONLY:
			if (ct_show_parse_only(v.s, &o.only, bad, sizeof bad) < 0)
				return ct_opts_error(
					&show_spec,
					"--only takes dl, cuda, cudart, nvml, open, ioctl, close or io, not '%s'",
					bad);
			break;
		case O_PIDS: keep_pids = true; break;
		case O_RAW: raw = true; break;
		case O_FORMAT:
			if (!(o.ops = ct_show_format(v.s)))
				return ct_opts_error(&show_spec,
						     "--format takes text, json, chrome or prometheus, not '%s'",
						     v.s);
			break;
		case 'o': o.out_path = v.s; break;
		}
	}
	if (next >= argc)
		return ct_opts_error(&show_spec, "no trace file or directory given");
	if (raw && o.ops != ct_show_format("json")) {
		ct_err("show: --raw adds parameter blocks to the JSON output only: use it with --json");
		return CT_EXIT_USAGE;
	}
	if (o.no_time && o.ops == ct_show_format("chrome")) {
		/* a Chrome trace is its times: not silently kept */
		ct_err("show: --no-time is for text, JSON and prometheus: a Chrome trace is timestamps "
		       "and durations");
		return CT_EXIT_USAGE;
	}
	ct_desc_json_raw = raw;
	if (ct_opts_stable(&show_spec, o.no_time, keep_pids) < 0)
		return CT_EXIT_USAGE;
	return ct_show_run(&o, argv + next, argc - next);
}
