/* After a run: the verdict of every traced process (run.h, ct_run_report). */
#include "tracer.h"
#include "kmsg.h"
#include "run.h"
#include "diag.h"
#include "xlat.h"

#include <stdlib.h>
#include <string.h>

/* how each traced process ended, from what the run saw: the wait status of
 * its child (the last image of that pid: an exec replaced the others), the
 * processes its --timeout killed, and those still running */
void ct_run_proc_ends(const char *dir, char **paths, int n, struct ct_proc_end *ends)
{
	struct id {
		uint32_t pid;
		uint64_t start;
		bool exited, ok;
	} *ids = calloc((size_t)n, sizeof *ids);
	char err[256];

	if (!ids)
		return;
	for (int i = 0; i < n; i++) {
		struct ct_trace *t;
		if (ct_trace_open(paths[i], &t, err, sizeof err) < 0)
			continue;
		const struct cutrace_header *h = ct_trace_header(t);
		ids[i] = (struct id){ h->pid, h->start_mono_ns, (h->flags & CT_HF_EXITED) != 0, true };
		ct_trace_close(t);
	}
	for (int i = 0; i < n; i++) {
		bool last_image = true;
		if (!ids[i].ok)
			continue;
		for (int k = 0; k < n; k++)
			if (k != i && ids[k].ok && ids[k].pid == ids[i].pid && ids[k].start > ids[i].start)
				last_image = false;
		ct_spawn_end_of(dir, ids[i].pid, last_image, ids[i].exited, &ends[i]);
	}
	free(ids);
}

/* A GPU that failed to start, or was lost, in a real (not injected) failure
 * on this machine: the kernel log says why, where it is readable
 * (/dev/kmsg; optional, tracer/diag/kmsg.h) */
static void kernel_log_note(const struct ct_verdict *v, int n, FILE *out)
{
	struct ct_kmsg k;
	bool gpu = false;

	for (int i = 0; i < n && !gpu; i++)
		gpu = !v[i].ok && !v[i].injected &&
		      (strstr(v[i].summary, "failed to initialize in the kernel") ||
		       strstr(v[i].summary, "the GPU is lost"));
	if (!gpu)
		return;
	ct_kmsg_scan("/dev/kmsg", 100000, &k);
	if (!k.read) {
		fprintf(out,
			"cutrace: the kernel log is not readable here (%s): 'sudo dmesg | grep NVRM' "
			"says why the GPU failed\n",
			strerror(k.err));
		return;
	}
	if (k.rminit) {
		const char *sn = ct_rminit_stage_name(k.stage), *st = ct_rminit_stage_text(k.stage);
		const char *status = ct_nv_status_name(k.status, 0);
		fprintf(out, "cutrace: kernel log: RmInitAdapter failed! (0x%x:0x%x:%u) = %s, %s: %s\n",
			k.stage, k.status, k.src_line, sn ? sn : "unknown stage",
			status ? status : "unknown NV_STATUS",
			st ? st : "see tracer/decode/ABI.md Appendix B");
	}
	for (int kind = CT_KMSG_NEEDS_OPEN; kind <= CT_KMSG_FELL_OFF; kind++)
		if (k.line[kind][0])
			fprintf(out, "cutrace: kernel log: %s\n", k.line[kind]);
	if (!k.rminit && !k.line[CT_KMSG_FELL_OFF][0] && !k.line[CT_KMSG_FIRMWARE][0] && ct_stable())
		fprintf(out, "cutrace: kernel log: no RmInitAdapter or 'fallen off the bus' line\n");
	else if (!k.rminit && !k.line[CT_KMSG_FELL_OFF][0] && !k.line[CT_KMSG_FIRMWARE][0])
		fprintf(out,
			"cutrace: kernel log: no RmInitAdapter or 'fallen off the bus' line (%u lines read)\n",
			k.records);
}

int ct_run_report(const struct ct_run_opts *o, FILE *out)
{
	char **paths = NULL, err[512], shown[4096];
	int n, failed = 0, bad = 0;
	struct ct_verdict *v;
	struct ct_proc_end *ends;
	char **paths_ok;

	n = ct_list_traces(o->dir, &paths, err, sizeof err);
	if (n > 0 && ct_stable()) {
		/* --no-time: in the order the processes started, numbered so */
		uint32_t *pids = calloc((size_t)n, sizeof *pids);
		if (pids) {
			ct_list_order_by_start(paths, n, NULL, pids);
			for (int i = 0; i < n; i++)
				ct_stable_id(pids[i]);
			free(pids);
		}
	}
	if (n <= 0) {
		const char *off = ct_tracing_off_reason();
		if (n == 0)
			ct_free_paths(paths, n);
		/* say why nothing was recorded: tracing off is not "no CUDA" */
		if (off[0]) {
			fprintf(out,
				"cutrace: nothing was recorded: tracing was off (CUTRACE_DISABLE, above)\n");
			ct_run_dir_remove_empty(o);
		} else if (ct_run_dir_remove_empty(o)) {
			if (!o->quiet)
				fprintf(out,
					"cutrace: no traced process touched CUDA%s (nothing recorded; no trace "
					"directory kept)\n",
					ct_spawn_last()->timed_out ? " before the --timeout" : "");
		} else if (!o->quiet) {
			fprintf(out, "cutrace: no traced process touched CUDA (no trace files in %s)\n",
				ct_run_dir_shown(o, shown, sizeof shown));
		}
		return 0;
	}
	v = calloc((size_t)n, sizeof *v);
	ends = calloc((size_t)n, sizeof *ends);
	paths_ok = calloc((size_t)n, sizeof *paths_ok);
	if (!v || !ends || !paths_ok) {
		free(v);
		free(ends);
		free(paths_ok);
		ct_free_paths(paths, n);
		return 0;
	}
	ct_run_proc_ends(o->dir, paths, n, ends);
	for (int i = 0; i < n; i++) {
		if (ct_diagnose_file_end(paths[i], &ends[i], &v[i], err, sizeof err) < 0) {
			fprintf(out, "cutrace: %s: %s\n", paths[i], err);
			v[i].pid = 0; /* left out below */
			bad++;
			continue;
		}
		if (!v[i].ok)
			failed++;
	}
	/* the readable ones, with their paths alongside */
	int k = 0;
	for (int i = 0; i < n; i++)
		if (!(v[i].pid == 0 && !v[i].summary[0])) {
			v[k] = v[i];
			paths_ok[k++] = paths[i];
		}
	if (k == 1) {
		/* one process: its line says the summary, the block the rest */
		if (!o->quiet || !v[0].ok) {
			fputs("cutrace: ", out);
			ct_verdict_line(out, &v[0]);
			fputc('\n', out);
		}
		if (!v[0].ok) {
			ct_verdict_details(out, &v[0]);
			if (!o->quiet && !o->no_context && v[0].step.set) {
				fprintf(out, "  timeline around the failing step (%s):\n",
					ct_stable_path(paths_ok[0], v[0].pid, shown, sizeof shown));
				ct_print_step_context(out, paths_ok[0], &v[0], 4);
			}
		}
	} else if (k > 1 && (!o->quiet || failed)) {
		/* a job: the summary, each group once with its first member's
		 * details (and, without -q, the timeline around its step) */
		fputs("cutrace: ", out);
		ct_summary_text_ex(out, v, k, bad, o->quiet || o->no_context ? NULL : paths_ok, true);
	}
	kernel_log_note(v, k, out);
	if (!o->quiet)
		fprintf(out, "cutrace: traces in %s (cutrace show %s)\n",
			ct_run_dir_shown(o, shown, sizeof shown), ct_run_dir_shown(o, shown, sizeof shown));
	free(v);
	free(ends);
	free(paths_ok);
	ct_free_paths(paths, n);
	return failed;
}
