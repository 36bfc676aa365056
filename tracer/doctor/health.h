/*
 * `cutrace doctor --check` (health.c): the machine checks and the probe
 * folded into one line and an exit status, as node-problem-detector's
 * custom plugins and Slurm's HealthCheckProgram expect them.
 */
#ifndef CT_HEALTH_H
#define CT_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "machine.h"

/* exit statuses of a check: NPD custom plugin (0 OK, 1 NonOK, other
 * Unknown) */
enum {
	CT_HEALTH_OK = 0,
	CT_HEALTH_PROBLEM = 1,
	CT_HEALTH_UNKNOWN = 2
};

struct ct_health_probe {
	int status;                 /* 0 CUDA initialized, 1 failed, -1 could not run, -2 skipped */
	const char *why;            /* status -1: why */
	const struct ct_verdict *v; /* status 0/1 */
	bool have_init;
	uint64_t init_ns; /* cuInit's duration */
	int init_code;    /* what cuInit returned */
	int devices;      /* -1 unknown */
};

/*
 * One line into buf (no newline; newlines in texts become spaces) and the
 * exit status:
 *   OK CUDA initialized: 8 GPUs, driver 580.159.04, cuInit 0.41 s
 *   PROBLEM [device-node] SUMMARY; fix: FIX
 *   UNKNOWN could not check: WHY
 * The probe's failure comes first (its verdict names the root cause), then
 * the first problem of the machine checks; a probe that could not run with
 * no problem found is UNKNOWN.
 */
int ct_health_line(const struct ct_machine_report *r, const struct ct_health_probe *p, char *buf, size_t len);

/*
 * The same as Prometheus metrics (text exposition format, prom.h), for
 * node-exporter's textfile collector; rc is ct_health_line's.  Per GPU the
 * labels of dcgm-exporter (gpu = index in bus-id order, UUID, device =
 * nvidiaN, pci_bus_id, modelName) so the two join.
 */
void ct_health_prometheus(FILE *f, const struct ct_machine_report *r, const struct ct_health_probe *p, int rc,
			  const char *line);

#endif
