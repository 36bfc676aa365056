/*
 * `cutrace doctor --check` (health.h): one line and an exit status from
 * the machine checks and the probe.
 */
#include "health.h"

#include <stdio.h>
#include <string.h>

#include <math.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <time.h>

#include "diag.h"
#include "fmt.h"
#include "prom.h"
#include "tracer.h"

/* newlines and tabs of a text as spaces, so the line stays one line */
static void one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r' || *s == '\t')
			*s = ' ';
}

static void problem(char *buf, size_t len, enum ct_layer layer, const char *summary, const char *fix)
{
	snprintf(buf, len, "PROBLEM [%s] %s%s%s", ct_layer_name(layer), summary,
		 fix && fix[0] ? "; fix: " : "", fix ? fix : "");
}

int ct_health_line(const struct ct_machine_report *r, const struct ct_health_probe *p, char *buf, size_t len)
{
	const struct ct_finding *first = NULL;
	int rc;

	for (int i = 0; r && i < r->n_findings && !first; i++)
		if (r->findings[i].sev == CT_SEV_PROBLEM)
			first = &r->findings[i];
	if (p->status == 1 && p->v) {
		problem(buf, len, p->v->layer, p->v->summary, p->v->fix);
		rc = CT_HEALTH_PROBLEM;
	} else if (first) {
		problem(buf, len, first->layer, first->summary, first->fix);
		rc = CT_HEALTH_PROBLEM;
	} else if (p->status == -1) {
		snprintf(buf, len, "UNKNOWN could not check: %s",
			 p->why && p->why[0] ? p->why : "the probe did not run");
		rc = CT_HEALTH_UNKNOWN;
	} else {
		snprintf(buf, len, "OK %s",
			 p->status == -2 ? "machine checks passed (probe skipped)" : "CUDA initialized");
		if (p->status == 0 && p->devices >= 0)
			ct_appendf(buf, len, ": %d GPU%s", p->devices, p->devices == 1 ? "" : "s");
		if (p->status == 0 && p->v && p->v->contract.kernel_version[0])
			ct_appendf(buf, len, ", driver %s", p->v->contract.kernel_version);
		else if (r && r->kmod.version[0])
			ct_appendf(buf, len, ", driver %s", r->kmod.version);
		if (p->status == 0 && p->have_init && !ct_stable()) /* (--no-time: no time) */
			ct_appendf(buf, len, ", cuInit %.2f s", (double)p->init_ns / 1e9);
		rc = CT_HEALTH_OK;
	}
	if (rc != CT_HEALTH_UNKNOWN && r && r->n_warnings)
		ct_appendf(buf, len, " (%d warning%s)", r->n_warnings, r->n_warnings == 1 ? "" : "s");
	one_line(buf);
	return rc;
}

/* the layer and cause the check's line names: the probe's verdict, else
 * the first problem of the machine checks */
static void layer_cause(const struct ct_machine_report *r, const struct ct_health_probe *p,
			const char **layer, const char **cause)
{
	*layer = "none";
	*cause = "";
	if (p->status == 1 && p->v) {
		*layer = ct_layer_name(p->v->layer);
		*cause = p->v->step.set ? p->v->step.text : p->v->summary;
		return;
	}
	for (int i = 0; r && i < r->n_findings; i++)
		if (r->findings[i].sev == CT_SEV_PROBLEM) {
			*layer = ct_layer_name(r->findings[i].layer);
			*cause = r->findings[i].summary;
			return;
		}
}

/* the node of GPU i: "nvidiaN" from its Device Minor */
static void gpu_device(const struct ct_machine_report *r, int i, char *dev, size_t len)
{
	dev[0] = 0;
	if (r->kmod.gpus[i].minor[0])
		snprintf(dev, len, "nvidia%s", r->kmod.gpus[i].minor);
}

static const struct ct_devnode *node_of(const struct ct_machine_report *r, const char *dev)
{
	char path[64];

	snprintf(path, sizeof path, "/dev/%s", dev);
	for (int i = 0; i < r->n_nodes; i++)
		if (!strcmp(r->nodes[i].path, path))
			return &r->nodes[i];
	return NULL;
}

void ct_health_prometheus(FILE *f, const struct ct_machine_report *r, const struct ct_health_probe *p, int rc,
			  const char *line)
{
	const char *layer, *cause;
	struct utsname u;
	char buf[64];

	layer_cause(r, p, &layer, &cause);
	ct_prom_family(f, "cutrace_cuda_init_ok", "gauge",
		       "1 when CUDA initializes on this node (cutrace doctor: machine checks and the cuInit probe), "
		       "0 when not; layer and cause name what failed");
	ct_prom_sample(f, "cutrace_cuda_init_ok",
		       rc == CT_HEALTH_PROBLEM ? 0
		       : rc == CT_HEALTH_OK    ? 1
					       : NAN,
		       "layer", layer, "cause", cause, CT_PROM_END);
	ct_prom_family(f, "cutrace_check_status", "gauge",
		       "cutrace doctor --check's exit status: 0 healthy, 1 a problem, 2 could not check");
	(void)line;
	ct_prom_sample(f, "cutrace_check_status", rc, CT_PROM_END);
	ct_prom_family(f, "cutrace_check_timestamp_seconds", "gauge",
		       "When cutrace doctor checked, Unix time");
	ct_prom_sample(f, "cutrace_check_timestamp_seconds", (double)time(NULL), CT_PROM_END);
	ct_prom_family(f, "cutrace_doctor_findings", "gauge",
		       "Findings of cutrace doctor's machine checks by severity");
	ct_prom_sample(f, "cutrace_doctor_findings", r ? r->n_problems : 0, "severity", "problem",
		       CT_PROM_END);
	ct_prom_sample(f, "cutrace_doctor_findings", r ? r->n_warnings : 0, "severity", "warn", CT_PROM_END);
	if ((p->status == 0 || p->status == 1) && p->have_init) {
		ct_prom_family(f, "cutrace_probe_cuinit_seconds", "gauge",
			       "How long cuInit took in cutrace's probe (under the shim), seconds");
		ct_prom_sample(f, "cutrace_probe_cuinit_seconds", (double)p->init_ns / 1e9, "result",
			       p->v && p->v->final_name[0] && p->init_code ? p->v->final_name
			       : p->init_code                              ? "error"
									   : "CUDA_SUCCESS",
			       CT_PROM_END);
	}
	if ((p->status == 0 || p->status == 1) && p->devices >= 0) {
		ct_prom_family(f, "cutrace_probe_devices", "gauge",
			       "CUDA devices the probe's cuDeviceGetCount saw");
		ct_prom_sample(f, "cutrace_probe_devices", p->devices, CT_PROM_END);
	}
	/* versions as an info metric */
	const struct ct_verdict *v = p->v;
	char cuda[32] = "";
	if (v && v->contract.driver_version)
		snprintf(cuda, sizeof cuda, "%d.%d", v->contract.driver_version / 1000,
			 v->contract.driver_version % 1000 / 10);
	if (uname(&u) < 0)
		u.release[0] = 0;
	ct_prom_family(f, "cutrace_driver_info", "gauge",
		       "Versions of the NVIDIA stack on this node: kernel module, libcuda the loader picks, the CUDA "
		       "version the driver reports, the Linux kernel; always 1");
	ct_prom_sample(f, "cutrace_driver_info", 1, "driver_version", r ? r->kmod.version : "",
		       "kernel_module_version", r ? r->kmod.sys_version : "", "libcuda_version",
		       v && v->contract.libcuda_version[0] ? v->contract.libcuda_version : "", "libcuda_path",
		       v && v->contract.libcuda_path[0] ? v->contract.libcuda_path
		       : r && r->cuda.chosen >= 0       ? r->cuda.c[r->cuda.chosen].path
							: "",
		       "cuda_driver_version", cuda, "kernel_release", u.release, CT_PROM_END);
	if (!r || r->kmod.gpu_count <= 0)
		return;
	ct_prom_family(f, "cutrace_gpu_info", "gauge",
		       "A GPU the kernel module attached (/proc/driver/nvidia/gpus), with dcgm-exporter's labels; "
		       "always 1");
	for (int i = 0; i < r->kmod.gpu_count && i < CT_MAX_GPUS; i++) {
		char dev[32];
		snprintf(buf, sizeof buf, "%d", i);
		gpu_device(r, i, dev, sizeof dev);
		ct_prom_sample(f, "cutrace_gpu_info", 1, "gpu", buf, "UUID", r->kmod.gpus[i].uuid, "device",
			       dev, "pci_bus_id", r->kmod.gpus[i].bus, "modelName", r->kmod.gpus[i].model,
			       CT_PROM_END);
	}
	ct_prom_family(f, "cutrace_gpu_device_node_ok", "gauge",
		       "1 when the GPU's /dev/nvidiaN exists with the right numbers and opens, 0 when not");
	for (int i = 0; i < r->kmod.gpu_count && i < CT_MAX_GPUS; i++) {
		char dev[32];
		const struct ct_devnode *n;
		snprintf(buf, sizeof buf, "%d", i);
		gpu_device(r, i, dev, sizeof dev);
		if (!dev[0] || !(n = node_of(r, dev)))
			continue;
		bool ok = n->exists && n->is_chr && n->major_ok && n->minor_ok &&
			  (!n->open_tried || !n->open_errno);
		ct_prom_sample(f, "cutrace_gpu_device_node_ok", ok, "gpu", buf, "UUID", r->kmod.gpus[i].uuid,
			       "device", dev, CT_PROM_END);
	}
}
