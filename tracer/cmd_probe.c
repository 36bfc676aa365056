/*
 * cutrace probe: the bare driver probe (dlopen libcuda.so.1, cuInit, device
 * enumeration; /work/shared/seeds/001) under the shim, then its timeline and
 * the verdict.  It needs no GPU and no CUDA program of the user's: it is the
 * first thing to run on a machine where CUDA does not start.
 *
 * Also home of ct_run_report, the verdicts printed after `cutrace run`.
 */
#include "tracer.h"
#include "run.h"
#include "diag.h"
#include "json.h"
#include "machine.h"
#include "embed.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ct_run_report(const struct ct_run_opts *o, FILE *out)
{
	char **paths = NULL, err[512];
	int n, failed = 0, bad = 0;
	struct ct_verdict *v;

	n = ct_list_traces(o->dir, &paths, err, sizeof err);
	if (n <= 0) {
		if (!o->quiet)
			fprintf(out, "cutrace: no traced process touched CUDA (no trace files in %s)\n", o->dir);
		if (n == 0)
			ct_free_paths(paths, n);
		return 0;
	}
	v = calloc((size_t)n, sizeof *v);
	if (!v) {
		ct_free_paths(paths, n);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		if (ct_diagnose_file(paths[i], &v[i], err, sizeof err) < 0) {
			fprintf(out, "cutrace: %s: %s\n", paths[i], err);
			v[i].ok = true; /* not counted as a failed process */
			v[i].pid = 0;
			bad++;
			continue;
		}
		if (!v[i].ok)
			failed++;
		if (o->quiet && v[i].ok)
			continue;
		fputs("cutrace: ", out);
		ct_verdict_line(out, &v[i]);
		fputc('\n', out);
		if (!v[i].ok) {
			ct_verdict_text(out, &v[i]);
			/* -q: the verdict, without the timeline */
			if (!o->quiet && v[i].step.set) {
				fprintf(out, "  timeline around the failing step (%s):\n", paths[i]);
				ct_print_step_context(out, paths[i], &v[i], 4);
			}
		}
	}
	if (n - bad > 1 && !o->quiet) {
		/* compact the good entries so the summary only sees real verdicts */
		int k = 0;
		for (int i = 0; i < n; i++)
			if (v[i].pid)
				v[k++] = v[i];
		fputs("cutrace: ", out);
		ct_summary_text(out, v, k, bad);
	}
	if (!o->quiet)
		fprintf(out, "cutrace: traces in %s (cutrace show %s)\n", o->dir, o->dir);
	free(v);
	ct_free_paths(paths, n);
	return failed;
}

/* the probe next to cutrace (or in ../libexec/cutrace); "" for the one the
 * one-file cutrace carries, which probe_path writes out once the trace
 * directory is there */
static int find_probe(char *probe, size_t len)
{
	char self[PATH_MAX];

	probe[0] = 0;
	if (ct_embed_has(CT_EMBED_PROBE))
		return 0;
	if (ct_self_dir(self, sizeof self) < 0)
		return -1;
	snprintf(probe, len, "%s/cutrace-probe", self);
	if (access(probe, X_OK) == 0)
		return 0;
	snprintf(probe, len, "%s/../libexec/cutrace/cutrace-probe", self);
	return access(probe, X_OK) == 0 ? 0 : -1;
}

static int probe_path(char *probe, size_t len, const char *dir)
{
	char why[PATH_MAX + 128];

	if (probe[0])
		return 0;
	if (ct_embed_write(CT_EMBED_PROBE, dir, probe, len, why, sizeof why) < 0) {
		ct_err("cannot write out the probe this cutrace carries: %s", why);
		return -1;
	}
	return 0;
}

/* doctor's last step: the probe under the shim, and its verdict */
int ct_doctor_run_probe(struct ct_json *j, FILE *text)
{
	struct ct_run_opts o;
	char probe[PATH_MAX], err[512], **paths = NULL;
	char *pargv[] = { probe, NULL };
	char *av[] = { "probe", NULL };
	struct ct_verdict v;
	int ci, status = 0, n, rc = -1;
	bool have = false;

	memset(&v, 0, sizeof v);
	if (find_probe(probe, sizeof probe) < 0 || ct_run_parse(1, av, &o, &ci, false) < 0 ||
	    ct_run_setup(&o) < 0 || probe_path(probe, sizeof probe, o.dir) < 0) {
		if (j) {
			ct_json_obj_begin(j);
			ct_json_kstr(j, "status", "skipped");
			ct_json_kstr(j, "reason", "cutrace-probe or libcutrace.so not found");
			ct_json_obj_end(j);
		} else {
			fprintf(text, "  probe skipped: cutrace-probe or libcutrace.so not found\n");
		}
		return -1;
	}
	o.mute_child = true;
	if (ct_spawn_traced(&o, pargv, &status) >= 0) {
		n = ct_list_traces(o.dir, &paths, err, sizeof err);
		for (int i = 0; i < n; i++) {
			struct ct_verdict x;
			if (ct_diagnose_file(paths[i], &x, err, sizeof err) < 0)
				continue;
			if (!have || (!x.ok && v.ok)) {
				v = x;
				have = true;
			}
		}
		if (n > 0)
			ct_free_paths(paths, n);
	}
	if (have)
		rc = v.ok ? 0 : 1;
	if (j) {
		ct_json_obj_begin(j);
		ct_json_kstr(j, "status", have ? (v.ok ? "ok" : "failed") : "no trace");
		ct_json_kstr(j, "trace_dir", o.dir);
		ct_json_kint(j, "exit_status", status);
		if (have) {
			ct_json_key(j, "verdict");
			ct_verdict_json(j, &v);
		}
		ct_json_obj_end(j);
	} else if (have) {
		fputs("  ", text);
		ct_verdict_line(text, &v);
		fputc('\n', text);
		if (!v.ok)
			ct_verdict_text(text, &v);
		fprintf(text, "  trace: cutrace show %s\n", o.dir);
	} else {
		fprintf(text, "  the probe left no trace (%s): libcutrace.so could not trace it\n", o.dir);
	}
	return rc;
}

static void probe_usage(FILE *f)
{
	fprintf(f,
		"usage: cutrace probe [-o DIR] [--inject RULE]... [--scenario NAME] [--ctx] [--nvml]\n"
		"                     [--json] [-q] [--size SIZE] [--lib PATH] [--color=WHEN]\n\n"
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
		"  --lib PATH           libcutrace.so to preload (default: found next to cutrace)\n"
		"  --color=WHEN         auto (default: on a terminal, unless NO_COLOR), always, never\n"
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
		char *hav[] = { "run", "--help-inject", NULL };
		return cmd_run(2, hav);
	}
	if (r < 0 || ci < ac) {
		if (r == 0)
			ct_err("probe: unexpected argument '%s': the probe runs its own program (try 'cutrace probe --help')",
			       av[ci]);
		free(av);
		return CT_EXIT_USAGE;
	}
	free(av);
	if (find_probe(probe, sizeof probe) < 0) {
		ct_err("cutrace-probe not found next to cutrace");
		return CT_EXIT_USAGE;
	}
	if (ct_run_setup(&o) < 0 || probe_path(probe, sizeof probe, o.dir) < 0)
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
		char color[32];
		char *sav[6];
		int sc = 0;
		snprintf(color, sizeof color, "--color=%s", ct_color_on(stdout) ? "always" : "never");
		sav[sc++] = "show";
		sav[sc++] = o.json ? "--json" : color;
		sav[sc++] = (char *)o.dir;
		sav[sc] = NULL;
		fflush(stdout);
		cmd_show(sc, sav);
		fflush(stdout);
	}
	if (o.json) {
		struct ct_run_opts q = o;
		q.quiet = true;
		failed = ct_run_report(&q, stderr);
	} else {
		failed = ct_run_report(&o, stdout);
	}
	return failed ? CT_EXIT_PROBLEM : CT_EXIT_OK;
}
