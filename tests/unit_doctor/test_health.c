/*
 * doctor --check (tracer/doctor/health.c): the line and the exit status from
 * a machine report and the probe's result, for the cases the rig cannot
 * make on a GPU-less machine (a healthy node) and the order of findings;
 * the Prometheus metrics of a healthy node with two GPUs.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health.h"
#include "tracer.h"

static struct ct_machine_report *healthy_report(void)
{
	struct ct_machine_report *r = calloc(1, sizeof *r);
	ck_assert_ptr_nonnull(r);
	snprintf(r->kmod.version, sizeof r->kmod.version, "580.159.04");
	snprintf(r->kmod.sys_version, sizeof r->kmod.sys_version, "580.159.04");
	r->kmod.gpu_count = 2;
	for (int i = 0; i < 2; i++) {
		snprintf(r->kmod.gpus[i].bus, sizeof r->kmod.gpus[i].bus, "0000:%02x:00.0", 0x18 + i);
		snprintf(r->kmod.gpus[i].uuid, sizeof r->kmod.gpus[i].uuid,
			 "GPU-%d1b2c3d4-0000-1111-2222-333344445555", i);
		snprintf(r->kmod.gpus[i].model, sizeof r->kmod.gpus[i].model, "NVIDIA H200");
		snprintf(r->kmod.gpus[i].minor, sizeof r->kmod.gpus[i].minor, "%d", 1 - i);
		struct ct_devnode *n = &r->nodes[r->n_nodes++];
		snprintf(n->path, sizeof n->path, "/dev/nvidia%d", 1 - i);
		n->exists = n->is_chr = n->major_ok = n->minor_ok = n->open_tried = true;
		n->open_errno = i == 1 ? 13 : 0;
	}
	r->cuda.chosen = -1;
	return r;
}

static struct ct_verdict ok_verdict(void)
{
	struct ct_verdict v;
	memset(&v, 0, sizeof v);
	v.ok = true;
	v.contract.driver_version = 13000;
	snprintf(v.contract.kernel_version, sizeof v.contract.kernel_version, "580.159.04");
	return v;
}

START_TEST(t_healthy)
{
	struct ct_machine_report *r = healthy_report();
	struct ct_verdict v = ok_verdict();
	struct ct_health_probe p = {
		.status = 0, .v = &v, .have_init = true, .init_ns = 412000000, .devices = 8
	};
	char line[1024];

	ck_assert_int_eq(ct_health_line(r, &p, line, sizeof line), CT_HEALTH_OK);
	ck_assert_str_eq(line, "OK CUDA initialized: 8 GPUs, driver 580.159.04, cuInit 0.41 s");
	r->n_warnings = 2;
	ck_assert_int_eq(ct_health_line(r, &p, line, sizeof line), CT_HEALTH_OK);
	ck_assert_str_eq(line, "OK CUDA initialized: 8 GPUs, driver 580.159.04, cuInit 0.41 s (2 warnings)");
	/* --no-probe */
	struct ct_health_probe skipped = { .status = -2, .devices = -1 };
	r->n_warnings = 0;
	ck_assert_int_eq(ct_health_line(r, &skipped, line, sizeof line), CT_HEALTH_OK);
	ck_assert_str_eq(line, "OK machine checks passed (probe skipped), driver 580.159.04");
	free(r);
}
END_TEST

/* doctor --check --no-time: the line of a healthy node carries no time */
START_TEST(t_healthy_no_time)
{
	struct ct_machine_report *r = healthy_report();
	struct ct_verdict v = ok_verdict();
	struct ct_health_probe p = {
		.status = 0, .v = &v, .have_init = true, .init_ns = 412000000, .devices = 8
	};
	char line[1024];

	ct_stable_set(true, false);
	ck_assert_int_eq(ct_health_line(r, &p, line, sizeof line), CT_HEALTH_OK);
	ck_assert_str_eq(line, "OK CUDA initialized: 8 GPUs, driver 580.159.04");
	ct_stable_set(false, false);
	free(r);
}
END_TEST

START_TEST(t_problems_in_order)
{
	struct ct_machine_report *r = healthy_report();
	struct ct_verdict v = ok_verdict();
	struct ct_health_probe p = { .status = 0, .v = &v, .devices = 1 };
	char line[1024];

	/* a static problem while the probe (as root) succeeds */
	struct ct_finding *f = &r->findings[r->n_findings++];
	f->sev = CT_SEV_PROBLEM;
	f->layer = CT_LAYER_DEVICE_NODE;
	snprintf(f->summary, sizeof f->summary, "/dev/nvidia-uvm is mode 0600:\nusers cannot open it");
	snprintf(f->fix, sizeof f->fix, "chmod 0666 /dev/nvidia-uvm");
	r->n_problems = 1;
	ck_assert_int_eq(ct_health_line(r, &p, line, sizeof line), CT_HEALTH_PROBLEM);
	ck_assert_str_eq(line,
			 "PROBLEM [device-node] /dev/nvidia-uvm is mode 0600: users cannot open it; fix: chmod "
			 "0666 /dev/nvidia-uvm");
	/* the probe's failure comes first */
	v.ok = false;
	v.layer = CT_LAYER_KERNEL_HANDSHAKE;
	snprintf(v.summary, sizeof v.summary, "the kernel module 590.48.01 and libcuda 580.159.04 disagree");
	snprintf(v.fix, sizeof v.fix, "reboot");
	p.status = 1;
	ck_assert_int_eq(ct_health_line(r, &p, line, sizeof line), CT_HEALTH_PROBLEM);
	ck_assert_str_eq(line,
			 "PROBLEM [kernel-handshake] the kernel module 590.48.01 and libcuda 580.159.04 disagree; "
			 "fix: reboot");
	/* the probe could not run, a static problem: still a problem */
	struct ct_health_probe none = { .status = -1, .why = "cutrace-probe not found", .devices = -1 };
	ck_assert_int_eq(ct_health_line(r, &none, line, sizeof line), CT_HEALTH_PROBLEM);
	/* ... and without one: could not check */
	r->n_findings = r->n_problems = 0;
	ck_assert_int_eq(ct_health_line(r, &none, line, sizeof line), CT_HEALTH_UNKNOWN);
	ck_assert_str_eq(line, "UNKNOWN could not check: cutrace-probe not found");
	/* one line whatever the buffer */
	ck_assert_int_eq(ct_health_line(r, &none, line, 10), CT_HEALTH_UNKNOWN);
	ck_assert_str_eq(line, "UNKNOWN c");
	free(r);
}
END_TEST

START_TEST(t_prometheus_healthy)
{
	struct ct_machine_report *r = healthy_report();
	struct ct_verdict v = ok_verdict();
	struct ct_health_probe p = {
		.status = 0, .v = &v, .have_init = true, .init_ns = 412000000, .devices = 2
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	ct_health_prometheus(f, r, &p, CT_HEALTH_OK, "OK");
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "# TYPE cutrace_cuda_init_ok gauge\n"
					   "cutrace_cuda_init_ok{layer=\"none\",cause=\"\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "cutrace_check_status 0\n"));
	ck_assert_ptr_nonnull(strstr(text, "cutrace_probe_cuinit_seconds{result=\"CUDA_SUCCESS\"} 0.412\n"));
	ck_assert_ptr_nonnull(strstr(text, "cutrace_probe_devices 2\n"));
	ck_assert_ptr_nonnull(
		strstr(text, "cutrace_driver_info{driver_version=\"580.159.04\",kernel_module_version="
			     "\"580.159.04\",libcuda_version=\"\",libcuda_path=\"\",cuda_driver_version="
			     "\"13.0\",kernel_release=\""));
	/* dcgm-exporter's labels: gpu in bus order, device from the minor */
	ck_assert_ptr_nonnull(
		strstr(text,
		       "cutrace_gpu_info{gpu=\"0\",UUID=\"GPU-01b2c3d4-0000-1111-2222-333344445555\","
		       "device=\"nvidia1\",pci_bus_id=\"0000:18:00.0\",modelName=\"NVIDIA H200\"} 1\n"));
	ck_assert_ptr_nonnull(
		strstr(text, "cutrace_gpu_device_node_ok{gpu=\"0\",UUID=\"GPU-01b2c3d4-0000-1111-2222-"
			     "333344445555\",device=\"nvidia1\"} 1\n"));
	ck_assert_ptr_nonnull(
		strstr(text, "cutrace_gpu_device_node_ok{gpu=\"1\",UUID=\"GPU-11b2c3d4-0000-1111-2222-"
			     "333344445555\",device=\"nvidia0\"} 0\n"));
	free(text);
	free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("health");
	TCase *tc = tcase_create("health");
	tcase_add_test(tc, t_healthy);
	tcase_add_test(tc, t_healthy_no_time);
	tcase_add_test(tc, t_problems_in_order);
	tcase_add_test(tc, t_prometheus_healthy);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
