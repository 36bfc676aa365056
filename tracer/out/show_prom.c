/*
 * `cutrace show --format=prometheus`: a job's summary as Prometheus metrics
 * (text exposition format, base/prom.h) for node-exporter's textfile
 * collector: processes healthy and failed, failed ones by layer, and each
 * group of failures (one verdict) with its ranks and hosts in short
 * (base/ranges.h).
 */
#include "show.h"

#include <stdlib.h>
#include <string.h>

#include "prom.h"
#include "ranges.h"

static const enum ct_layer layers[] = {
	CT_LAYER_LOADER, CT_LAYER_DEVICE_NODE, CT_LAYER_KERNEL_HANDSHAKE, CT_LAYER_RESOURCE_MANAGER,
	CT_LAYER_UVM,    CT_LAYER_DRIVER_API,  CT_LAYER_RUNTIME
};

static bool same_group(const struct ct_verdict *a, const struct ct_verdict *b)
{
	return a->ok == b->ok && !strcmp(a->group_key, b->group_key);
}

/* ranks and hosts of the members of v[first]'s group, marked done */
static int group_sets(const struct ct_verdict *v, int n, char *done, int first, char *ranks, size_t rlen,
		      char *hosts, size_t hlen, size_t *nhosts)
{
	int64_t *num = malloc(((size_t)n + 1) * sizeof *num);
	const char **h = malloc(((size_t)n + 1) * sizeof *h);
	size_t k = 0, m = 0;

	ranks[0] = hosts[0] = 0;
	*nhosts = 0;
	for (int i = first; i < n; i++) {
		if (done[i] || !same_group(&v[first], &v[i]))
			continue;
		done[i] = 1;
		if (num && v[i].rank >= 0)
			num[k++] = v[i].rank;
		if (h)
			h[m++] = v[i].host;
	}
	if (num)
		ct_ranges_ints(ranks, rlen, num, k);
	if (h)
		*nhosts = ct_ranges_hosts(hosts, hlen, h, m);
	free(num);
	free(h);
	return (int)m;
}

static int prom_end(struct ct_show_ctx *c)
{
	FILE *f = c->out;
	const struct ct_verdict *v = c->verdicts;
	int n = c->n_verdicts, ok = 0;
	char *done = calloc((size_t)n + 1, 1);
	const char **hosts = malloc(((size_t)n + 1) * sizeof *hosts);
	char buf[256], ranks[256], hl[256];

	for (int i = 0; i < n; i++)
		ok += v[i].ok;
	ct_prom_family(f, "cutrace_job_processes", "gauge",
		       "Traced processes of the job (cutrace show), by whether CUDA initialized in them");
	ct_prom_sample(f, "cutrace_job_processes", ok, "state", "healthy", CT_PROM_END);
	ct_prom_sample(f, "cutrace_job_processes", n - ok, "state", "failed", CT_PROM_END);
	ct_prom_family(f, "cutrace_job_failed_processes", "gauge",
		       "Processes of the job whose CUDA start-up failed, by the layer that failed");
	for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) {
		int k = 0;
		for (int i = 0; i < n; i++)
			k += !v[i].ok && v[i].layer == layers[l];
		ct_prom_sample(f, "cutrace_job_failed_processes", k, "layer", ct_layer_name(layers[l]),
			       CT_PROM_END);
	}
	ct_prom_family(f, "cutrace_job_unreadable_traces", "gauge",
		       "Trace files of the job that could not be read");
	ct_prom_sample(f, "cutrace_job_unreadable_traces", c->n_unreadable, CT_PROM_END);
	if (hosts) {
		for (int i = 0; i < n; i++)
			hosts[i] = v[i].host;
		ct_prom_family(f, "cutrace_job_hosts", "gauge", "Hosts the job's traced processes ran on");
		ct_prom_sample(f, "cutrace_job_hosts",
			       (double)ct_ranges_hosts(buf, sizeof buf, hosts, (size_t)n), CT_PROM_END);
	}
	bool family = false;
	for (int i = 0; done && i < n; i++) {
		size_t nh;
		if (done[i] || v[i].ok)
			continue;
		if (!family) {
			ct_prom_family(f, "cutrace_job_failure_group_processes", "gauge",
				       "Failed processes of the job that share one verdict (layer, root step, code), "
				       "with their ranks and hosts in short");
			family = true;
		}
		int m = group_sets(v, n, done, i, ranks, sizeof ranks, hl, sizeof hl, &nh);
		ct_prom_sample(f, "cutrace_job_failure_group_processes", m, "layer",
			       ct_layer_name(v[i].layer), "cause",
			       v[i].step.set ? v[i].step.text : v[i].summary, "injected",
			       v[i].injected ? "1" : "0", "ranks", ranks, "hosts", hl, CT_PROM_END);
	}
	free(done);
	free(hosts);
	return ferror(f) ? -1 : 0;
}

const struct ct_show_ops ct_show_prom_ops = {
	.name = "prometheus",
	.end = prom_end,
};
