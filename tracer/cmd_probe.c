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
			fprintf(out, "  timeline around the failing step (%s):\n", paths[i]);
			ct_print_step_context(out, paths[i], &v[i], 4);
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

static void probe_usage(FILE *f)
{
	fprintf(f,
		"usage: cutrace probe [-o DIR] [--inject RULE]... [--scenario NAME] [--ctx] [--nvml]\n"
		"                     [--json] [--color=auto|always|never]\n\n"
		"Runs the bare driver probe (dlopen libcuda.so.1, cuInit, cuDriverGetVersion,\n"
		"cuDeviceGetCount, device names) under the shim, prints its timeline and the\n"
		"verdict.  Works on any machine: without a GPU or driver it says what is missing.\n\n"
		"  --ctx      also create a primary context on device 0\n"
		"  --nvml     also initialise NVML\n"
		"  --json     print the trace as JSON (show --json) instead of the timeline\n"
		"  other options as for 'cutrace run'\n\n"
		"exit status: 0 CUDA initialized, 1 it failed (the verdict says where), 2 usage error\n");
}

int cmd_probe(int argc, char **argv)
{
	struct ct_run_opts o;
	char probe[PATH_MAX], self[PATH_MAX];
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
	r = ct_run_parse(ac, av, &o, &ci, false);
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
			ct_err("probe takes no command (unexpected '%s')", av[ci]);
		probe_usage(stderr);
		free(av);
		return CT_EXIT_USAGE;
	}
	free(av);
	if (ct_self_dir(self, sizeof self) < 0) {
		ct_err("cannot find my own directory");
		return CT_EXIT_USAGE;
	}
	snprintf(probe, sizeof probe, "%s/cutrace-probe", self);
	if (access(probe, X_OK) < 0) {
		snprintf(probe, sizeof probe, "%s/../libexec/cutrace/cutrace-probe", self);
		if (access(probe, X_OK) < 0) {
			ct_err("cutrace-probe not found next to cutrace (%s)", self);
			return CT_EXIT_USAGE;
		}
	}
	if (ct_run_setup(&o) < 0)
		return CT_EXIT_USAGE;
	pargv[pargc++] = probe;
	if (ctx)
		pargv[pargc++] = "--ctx";
	if (nvml)
		pargv[pargc++] = "--nvml";
	pargv[pargc] = NULL;

	fflush(stdout);
	if (ct_spawn_traced(&o, pargv, &status) < 0)
		return CT_EXIT_USAGE;
	fflush(stdout);
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
