/*
 * Many processes, one job (diag.h, ct_summary_*): the failed processes
 * grouped by what failed (ct_verdict.group_key), with their hosts, ranks
 * and pids.
 */
#include "diag.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "ranges.h"
#include "tracer.h"

/* one group: what the group's line shows is the same (the layer, injected,
 * the summary, which carries no times, pids or handles), or the verdicts
 * agree on what failed (group_key) */
static bool same_group(const struct ct_verdict *a, const struct ct_verdict *b)
{
	if (a->ok != b->ok)
		return false;
	if (!strcmp(a->group_key, b->group_key))
		return true;
	return a->layer == b->layer && a->injected == b->injected && !strcmp(a->summary, b->summary);
}

bool ct_verdict_same_group(const struct ct_verdict *a, const struct ct_verdict *b)
{
	return same_group(a, b);
}

/* how the members of a group ended: " (exit 1)" when they all ended alike,
 * else " (38 exit 1, 2 killed by SIGKILL, 1 other)"; nothing when no end
 * is known */
static void print_ends(FILE *f, const struct ct_verdict *v, const int *idx, int m)
{
	char text[3][96], t[96];
	int count[3] = { 0 }, kinds = 0, other = 0, known = 0;

	for (int i = 0; i < m; i++) {
		const struct ct_proc_end *e = &v[idx[i]].end;
		int k;
		if (e->kind == CT_END_UNKNOWN || e->kind == CT_END_EXITED) {
			other++;
			continue;
		}
		known++;
		ct_end_text(e, t, sizeof t);
		for (k = 0; k < kinds && strcmp(text[k], t); k++)
			;
		if (k == kinds && kinds < 3)
			snprintf(text[kinds++], sizeof text[0], "%s", t);
		if (k < kinds)
			count[k]++;
		else
			other++;
	}
	if (!known)
		return;
	if (kinds == 1 && count[0] == m) {
		fprintf(f, " (%s)", text[0]);
		return;
	}
	fputs(" (", f);
	for (int k = 0; k < kinds; k++)
		fprintf(f, "%s%d %s", k ? ", " : "", count[k], text[k]);
	if (other)
		fprintf(f, ", %d other", other);
	fputc(')', f);
}

/*
 * The processes idx[0..m) of v in short: "ranks 0-511 on 64 hosts
 * node[01-64]" (ranges.h), then their pids when with_pids; no newline.
 * Without memory, nothing.
 */
static void print_set(FILE *f, const struct ct_verdict *v, const int *idx, int m, bool with_pids)
{
	int64_t *num = malloc(((size_t)m + 1) * sizeof *num);
	const char **hosts = malloc(((size_t)m + 1) * sizeof *hosts);
	char buf[1024];
	size_t k = 0, nh;
	int no_rank = 0;

	if (!num || !hosts)
		goto out;
	for (int i = 0; i < m; i++) {
		if (v[idx[i]].rank >= 0)
			num[k++] = v[idx[i]].rank;
		else
			no_rank++;
		hosts[i] = v[idx[i]].host;
	}
	if (k) {
		ct_ranges_ints(buf, sizeof buf, num, k);
		fprintf(f, "%s %s", k == 1 && !strchr(buf, '-') && !strchr(buf, ',') ? "rank" : "ranks", buf);
		if (no_rank)
			fprintf(f, " (%d without a rank)", no_rank);
	} else {
		fputs("no ranks", f);
	}
	nh = ct_ranges_hosts(buf, sizeof buf, hosts, (size_t)m);
	if (nh)
		fprintf(f, " on %zu host%s %s", nh, nh == 1 ? "" : "s", buf);
	if (with_pids) {
		for (int i = 0; i < m; i++)
			num[i] = ct_stable_id(v[idx[i]].pid);
		ct_ranges_ints(buf, sizeof buf, num, (size_t)m);
		/* --no-time: ordinals, "pids #1-40" */
		fprintf(f, ", pid%s %s%s", m == 1 ? "" : "s", ct_stable_ids() ? "#" : "", buf);
	}
out:
	free(num);
	free(hosts);
}

/* Groups of up to this many processes are listed one by one; larger ones
 * are written as ranges (print_set). */
#define SUMMARY_LIST_MAX 8

/* the members of the group of v[first]: up to SUMMARY_LIST_MAX each "host H
 * rank R pid P", ordered by host (hosts in order of appearance), ", " between
 * them; more as ranges; marks them done */
static void print_members(FILE *f, const struct ct_verdict *v, int n, char *done, int first, int members)
{
	int shown = 0, listed[SUMMARY_LIST_MAX];

	if (members > SUMMARY_LIST_MAX) {
		int *idx = malloc((size_t)members * sizeof *idx), m = 0;
		for (int k = first; k < n; k++)
			if (!done[k] && same_group(&v[first], &v[k])) {
				done[k] = 1;
				if (idx && m < members)
					idx[m++] = k;
			}
		fputc(' ', f);
		if (idx) {
			print_set(f, v, idx, m, true);
			print_ends(f, v, idx, m);
		}
		fputc('\n', f);
		free(idx);
		return;
	}

	for (int i = first; i < n; i++) {
		if (done[i] || !same_group(&v[first], &v[i]))
			continue;
		/* every not yet listed member on v[i]'s host */
		for (int k = i; k < n; k++) {
			if (done[k] || !same_group(&v[first], &v[k]) || strcmp(v[k].host, v[i].host))
				continue;
			done[k] = 1;
			fputs(shown ? ", " : " ", f);
			if (v[k].host[0])
				fprintf(f, "host %s ", v[k].host);
			if (v[k].rank >= 0)
				fprintf(f, "rank %d ", v[k].rank);
			char id[16];
			fprintf(f, "pid %s", ct_stable_idstr(v[k].pid, id, sizeof id));
			if (shown < SUMMARY_LIST_MAX)
				listed[shown] = k;
			shown++;
		}
	}
	print_ends(f, v, listed, shown < SUMMARY_LIST_MAX ? shown : SUMMARY_LIST_MAX);
	fputc('\n', f);
}

void ct_summary_text(FILE *f, const struct ct_verdict *v, int n, int unreadable)
{
	ct_summary_text_ex(f, v, n, unreadable, NULL, false);
}

void ct_summary_text_ex(FILE *f, const struct ct_verdict *v, int n, int unreadable,
			char *const *context_paths, bool details)
{
	int ok = 0, failed = 0;
	char *done = calloc((size_t)n + 1, 1);

	for (int i = 0; i < n; i++)
		v[i].ok ? ok++ : failed++;
	fprintf(f, "%s%d process%s traced: %d healthy, %d failed%s", ct_c(f, CT_C_BOLD), n, n == 1 ? "" : "es", ok,
		failed, ct_c(f, CT_C_RESET));
	if (unreadable)
		fprintf(f, ", %d unreadable trace file%s", unreadable, unreadable == 1 ? "" : "s");
	fputc('\n', f);
	/* the whole job in short: "ranks 0-4095 on 64 hosts node[01-64]" */
	int *all = n > 1 ? malloc((size_t)n * sizeof *all) : NULL;
	if (all) {
		for (int i = 0; i < n; i++)
			all[i] = i;
		fputs("  ", f);
		print_set(f, v, all, n, false);
		fputc('\n', f);
		free(all);
	}
	for (int i = 0; done && i < n; i++) {
		int members = 0;
		if (done[i] || v[i].ok)
			continue;
		for (int k = i; k < n; k++)
			if (!done[k] && same_group(&v[i], &v[k]))
				members++;
		fprintf(f, "  %sFAILED%s [%s]%s %s\n", ct_c(f, CT_C_RED), ct_c(f, CT_C_RESET), ct_layer_name(v[i].layer),
			v[i].injected ? " (injected)" : "", v[i].summary);
		fprintf(f, "    %d process%s:", members, members == 1 ? "" : "es");
		print_members(f, v, n, done, i, members);
		if (details) {
			/* the group's first member says the rest once for all */
			ct_verdict_details(f, &v[i]);
			if (context_paths && v[i].step.set) {
				char shown[4096];
				fprintf(f, "  timeline around the failing step (%s):\n",
					ct_stable_path(context_paths[i], v[i].pid, shown, sizeof shown));
				ct_print_step_context(f, context_paths[i], &v[i], 4);
			}
		}
	}
	free(done);
}

void ct_summary_json(struct ct_json *j, const struct ct_verdict *v, int n, int unreadable)
{
	int ok = 0;
	char *done = calloc((size_t)n + 1, 1);

	for (int i = 0; i < n; i++)
		ok += v[i].ok;
	ct_json_obj_begin(j);
	ct_json_kint(j, "processes", n);
	ct_json_kint(j, "healthy", ok);
	ct_json_kint(j, "failed", n - ok);
	ct_json_kint(j, "unreadable", unreadable);
	ct_json_key(j, "groups");
	ct_json_arr_begin(j);
	for (int i = 0; done && i < n; i++) {
		if (done[i] || v[i].ok)
			continue;
		int members = 0;
		for (int k = i; k < n; k++)
			if (!done[k] && same_group(&v[i], &v[k]))
				members++;
		ct_json_obj_begin(j);
		ct_json_kstr(j, "layer", ct_layer_name(v[i].layer));
		ct_json_kstr(j, "summary", v[i].summary);
		ct_json_kstr(j, "step_call", v[i].step.set ? v[i].step.call : NULL);
		ct_json_key(j, "final_code");
		if (v[i].final.set)
			ct_json_int(j, v[i].final_code);
		else
			ct_json_null(j);
		ct_json_kbool(j, "injected", v[i].injected);
		ct_json_kbool(j, "hung", v[i].hung);
		ct_json_kint(j, "count", members);
		ct_json_key(j, "members");
		ct_json_arr_begin(j);
		for (int k = i; k < n; k++) {
			if (done[k] || !same_group(&v[i], &v[k]))
				continue;
			done[k] = 1;
			ct_json_obj_begin(j);
			ct_json_kuint(j, "pid", ct_stable_id(v[k].pid));
			ct_json_kstr(j, "host", v[k].host);
			ct_json_key(j, "rank");
			if (v[k].rank >= 0)
				ct_json_int(j, v[k].rank);
			else
				ct_json_null(j);
			ct_json_obj_end(j);
		}
		ct_json_arr_end(j);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	ct_json_obj_end(j);
	free(done);
}
