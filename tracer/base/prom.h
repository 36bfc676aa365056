/*
 * Prometheus text exposition format (prom.c), for node-exporter's textfile
 * collector: metric families with HELP and TYPE, samples with escaped
 * labels.  https://prometheus.io/docs/instrumenting/exposition_formats/
 */
#ifndef CT_PROM_H
#define CT_PROM_H

#include <stdio.h>

/* "# HELP name help" and "# TYPE name type" (type: "gauge", "counter", ...) */
void ct_prom_family(FILE *f, const char *name, const char *type, const char *help);
/* name{k1="v1",...} value: label pairs as (key, value) arguments ended by
 * CT_PROM_END (a typed NULL); a NULL value writes ""; values escaped */
#define CT_PROM_END ((const char *)0)
void ct_prom_sample(FILE *f, const char *name, double value, ...) __attribute__((sentinel));

#endif
