/*
 * The bare driver probe (tracer/probe/probe.c: dlopen libcuda.so.1, cuInit,
 * device enumeration) under the shim: where it is installed, and doctor's
 * last step, which runs it and reports its verdict.
 */
#define _GNU_SOURCE /* nftw */
#include "tracer.h"
#include "run.h"
#include "diag.h"
#include "json.h"
#include "embed.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the probe next to cutrace (or in ../libexec/cutrace); "" for the one the
 * one-file cutrace carries, which ct_probe_path writes out once the trace
 * directory is there */
int ct_find_probe(char *probe, size_t len)
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

int ct_probe_path(char *probe, size_t len, const char *dir)
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
int ct_doctor_run_probe(struct ct_json *j, FILE *text, uint64_t timeout_ns, const char *timeout_arg)
{
	struct ct_run_opts o;
	char probe[PATH_MAX], err[512], **paths = NULL, shown[PATH_MAX];
	char *pargv[] = { probe, NULL };
	struct ct_verdict v;
	int status = 0, n, rc = -1;
	bool have = false, timed_out = false;

	memset(&v, 0, sizeof v);
	if (ct_find_probe(probe, sizeof probe) < 0 || (ct_run_opts_init(&o), ct_run_setup(&o) < 0) ||
	    ct_probe_path(probe, sizeof probe, o.dir) < 0) {
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
	o.timeout_ns = timeout_ns;
	o.timeout_arg = timeout_arg;
	if (ct_spawn_traced(&o, pargv, &status) >= 0) {
		struct ct_proc_end *ends = NULL;
		n = ct_list_traces(o.dir, &paths, err, sizeof err);
		if (n > 0 && (ends = calloc((size_t)n, sizeof *ends)))
			ct_run_proc_ends(o.dir, paths, n, ends);
		for (int i = 0; i < n; i++) {
			struct ct_verdict x;
			if (ct_diagnose_file_end(paths[i], ends ? &ends[i] : NULL, &x, err, sizeof err) < 0)
				continue;
			if (!have || (!x.ok && v.ok)) {
				v = x;
				have = true;
			}
		}
		free(ends);
		if (n > 0)
			ct_free_paths(paths, n);
	}
	timed_out = ct_spawn_last()->timed_out;
	if (have)
		rc = v.ok && !timed_out ? 0 : 1;
	else if (timed_out)
		rc = 1;
	if (j) {
		ct_json_obj_begin(j);
		ct_json_kstr(j, "status",
			     timed_out ? "timed out"
			     : have    ? (v.ok ? "ok" : "failed")
				       : "no trace");
		ct_json_kstr(j, "trace_dir", ct_run_dir_shown(&o, shown, sizeof shown));
		ct_json_kint(j, "exit_status", status);
		ct_json_kstr(j, "timeout", timeout_ns ? ct_spawn_last()->limit : NULL);
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
		fprintf(text, "  trace: cutrace show %s\n", ct_run_dir_shown(&o, shown, sizeof shown));
	} else if (timed_out) {
		fprintf(text, "  the probe did not finish within %s and left no trace (%s)\n",
			ct_spawn_last()->limit, ct_run_dir_shown(&o, shown, sizeof shown));
	} else {
		fprintf(text, "  the probe left no trace (%s): libcutrace.so could not trace it\n",
			ct_run_dir_shown(&o, shown, sizeof shown));
	}
	return rc;
}

/* ---- the probe for health checks and metrics ---------------------------------- */

struct probe_scan {
	struct ct_probe_result *pr;
};

static int scan_event(const struct ct_event *ev, void *user)
{
	struct ct_probe_result *pr = ((struct probe_scan *)user)->pr;
	struct ct_fieldv f;

	if (ev->type != CT_REC_ENTER || !ev->has_exit)
		return 0;
	if (ev->call == CT_CALL_cuInit && !pr->have_init) {
		pr->have_init = true;
		pr->init_ns = ev->dur_ns;
		pr->init_code = (int)ev->ret;
	} else if (ev->call == CT_CALL_cuDeviceGetCount && ev->ret == 0 && pr->devices < 0 &&
		   ct_ev_field(ev, CT_FLD_OUT, &f) && f.len == 8) {
		int64_t n;
		memcpy(&n, f.data, 8);
		pr->devices = n >= 0 && n < 1 << 20 ? (int)n : -1;
	}
	return 0;
}

int ct_probe_quiet(struct ct_probe_result *pr, uint64_t timeout_ns)
{
	struct ct_run_opts o;
	char probe[PATH_MAX], err[512], **paths = NULL;
	char *pargv[] = { probe, NULL };
	char chosen[PATH_MAX] = "";
	int status = 0, n;
	bool have = false;

	memset(pr, 0, sizeof *pr);
	pr->status = -1;
	pr->devices = -1;
	if (ct_find_probe(probe, sizeof probe) < 0 || (ct_run_opts_init(&o), ct_run_setup(&o) < 0) ||
	    ct_probe_path(probe, sizeof probe, o.dir) < 0) {
		snprintf(pr->why, sizeof pr->why, "cutrace-probe or libcutrace.so not found");
		return -1;
	}
	snprintf(pr->dir, sizeof pr->dir, "%s", o.dir);
	snprintf(pr->dir_shown, sizeof pr->dir_shown, "%s", ct_run_dir_shown(&o, chosen, sizeof chosen));
	chosen[0] = '\0';
	o.mute_child = true;
	o.timeout_ns = timeout_ns;
	char limit[32];
	snprintf(limit, sizeof limit, "%.1fs", (double)timeout_ns / 1e9);
	o.timeout_arg = limit;
	if (ct_spawn_traced(&o, pargv, &status) < 0) {
		snprintf(pr->why, sizeof pr->why, "the probe could not be started");
		return -1;
	}
	n = ct_list_traces(o.dir, &paths, err, sizeof err);
	struct ct_proc_end *ends = n > 0 ? calloc((size_t)n, sizeof *ends) : NULL;
	if (ends)
		ct_run_proc_ends(o.dir, paths, n, ends);
	for (int i = 0; i < n; i++) {
		struct ct_verdict x;
		if (ct_diagnose_file_end(paths[i], ends ? &ends[i] : NULL, &x, err, sizeof err) < 0)
			continue;
		if (!have || (!x.ok && pr->v.ok)) {
			pr->v = x;
			snprintf(chosen, sizeof chosen, "%s", paths[i]);
			have = true;
		}
	}
	free(ends);
	if (n > 0)
		ct_free_paths(paths, n);
	if (!have) {
		snprintf(pr->why, sizeof pr->why, "the probe %sleft no trace in %s (exit status %d)",
			 ct_spawn_last()->timed_out ? "did not finish in time and " : "", pr->dir_shown,
			 status);
		return -1;
	}
	struct ct_trace *t;
	if (ct_trace_open(chosen, &t, err, sizeof err) == 0) {
		struct probe_scan sc = { pr };
		ct_trace_events(t, scan_event, &sc);
		ct_trace_close(t);
	}
	pr->status = pr->v.ok && !ct_spawn_last()->timed_out ? 0 : 1;
	return pr->status;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

void ct_probe_discard(const struct ct_probe_result *pr)
{
	/* only a run-... directory this cutrace made (never a user's -o) */
	const char *b = strrchr(pr->dir, '/');

	if (pr->dir[0] == '/' && b && !strncmp(b + 1, "run-", 4))
		nftw(pr->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}
