/*
 * cutrace doctor: check this machine's CUDA stack bottom-up (device nodes,
 * kernel module, libraries, container, environment, version contract),
 * then run the probe under the shim, and end with a one-line verdict.
 * Exit 0 healthy, 1 a problem found, 2 usage or internal error.
 */
#include "cmd.h"
#include "machine.h"
#include "run.h"

#include <stdlib.h>
#include <string.h>

#include "parse.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cutrace doctor [--json] [--no-probe] [--timeout DURATION] [--color=auto|always|never]\n\n"
		"Checks this machine for what CUDA initialization needs, bottom-up:\n"
		"  device nodes      /dev/nvidiactl, /dev/nvidiaN, /dev/nvidia-uvm(-tools), caps:\n"
		"                    presence, numbers against /proc/devices, owner/mode, a real open\n"
		"  kernel module     /proc/driver/nvidia/version vs /sys/module/nvidia/version,\n"
		"                    nvidia_uvm, attached GPUs, module parameters\n"
		"  libraries         which libcuda.so.1 / libnvidia-ml.so.1 the loader would pick\n"
		"                    (LD_LIBRARY_PATH, ld.so.cache, system dirs) with ELF facts;\n"
		"                    stub and cuda-compat copies; every libcudart found\n"
		"  container         container markers, device cgroup, NVIDIA_* variables,\n"
		"                    CDI specs (/etc/cdi, /var/run/cdi) against the module,\n"
		"                    ld.so.conf.d 00-compat-*/00-nvcr-* drop-ins, musl\n"
		"  environment       CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH, ... sanity\n"
		"  contract          driver CUDA version vs each runtime (backward, minor, forward\n"
		"                    compatibility or cudaErrorInsufficientDriver)\n"
		"then runs `cutrace probe` (dlopen + cuInit under the shim) and prints a verdict.\n\n"
		"options:\n"
		"  --json            one JSON document on stdout\n"
		"  --no-probe        only the static checks\n"
		"  --timeout DURATION  how long the probe may take (default 60s; 0: no limit): a\n"
		"                    probe that did not finish is a problem, with the call it was in\n"
		"  --color=WHEN      auto (default: on a terminal, unless NO_COLOR), always, never\n"
		"  -h, --help        this help\n\n"
		"exit status: 0 healthy, 1 a problem was found, 2 usage or internal error\n");
}

struct doctor_args {
	bool json;
	bool no_probe;
	uint64_t timeout_ns;
	const char *timeout_arg;
};

static int parse_args(int argc, char **argv, struct doctor_args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];

		if (!strcmp(s, "--json")) {
			a->json = true;
		} else if (!strcmp(s, "--no-probe")) {
			a->no_probe = true;
		} else if (!strcmp(s, "--timeout") || !strncmp(s, "--timeout=", 10)) {
			const char *val = s[9] == '=' ? s + 10 : i + 1 < argc ? argv[++i] : NULL;
			if (!val) {
				ct_err("doctor: --timeout needs a value (try 'cutrace doctor --help')");
				return -1;
			}
			if (ct_parse_duration(val, &a->timeout_ns) < 0) {
				ct_err("doctor: --timeout '%s' is not a duration such as 20s, 500ms or 2m (0: none) "
				       "(try 'cutrace doctor --help')",
				       val);
				return -1;
			}
			a->timeout_arg = val;
		} else if (!strcmp(s, "--color") || !strcmp(s, "--color=auto")) {
			ct_color_set_mode(CT_COLOR_AUTO);
		} else if (!strcmp(s, "--color=always")) {
			ct_color_set_mode(CT_COLOR_ALWAYS);
		} else if (!strcmp(s, "--color=never")) {
			ct_color_set_mode(CT_COLOR_NEVER);
		} else if (!strncmp(s, "--color=", 8)) {
			ct_err("doctor: --color takes auto, always or never, not '%s'", s + 8);
			return -1;
		} else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			usage(stdout);
			return 1;
		} else if (s[0] == '-') {
			ct_err("doctor: unknown option '%s' (try 'cutrace doctor --help')", s);
			return -1;
		} else {
			ct_err("doctor: unexpected argument '%s' (doctor checks this machine; it takes "
			       "no program)", s);
			return -1;
		}
	}
	return 0;
}

static const char *probe_status(int prc, bool skipped)
{
	if (skipped || prc < 0)
		return "skipped";
	return prc == CT_EXIT_OK ? "ok" : ct_spawn_last()->timed_out ? "timed out" : "problem";
}

static int finish_verdict(const struct ct_machine_report *r, int prc, char *buf, size_t len)
{
	int rc = ct_machine_verdict(r, buf, len);

	if (prc == CT_EXIT_PROBLEM && rc == CT_EXIT_OK) {
		if (ct_spawn_last()->timed_out)
			snprintf(buf, len,
				 "PROBLEM: the machine checks pass but the probe did not finish within %s "
				 "(see Probe)",
				 ct_spawn_last()->limit);
		else
			snprintf(buf, len,
				 "PROBLEM: the machine checks pass but the probe fails (see Probe)");
		rc = CT_EXIT_PROBLEM;
	}
	return rc;
}

static int doctor_json(const struct ct_machine_report *r, bool no_probe, const struct doctor_args *a)
{
	struct ct_json j;
	char verdict[512];
	int prc = -1, rc;

	ct_json_init(&j, stdout, true);
	ct_json_obj_begin(&j);
	ct_json_kstr(&j, "cutrace_version", CUTRACE_VERSION);
	ct_machine_report_json(r, &j);
	ct_json_key(&j, "probe");
	if (no_probe) {
		ct_json_obj_begin(&j);
		ct_json_kstr(&j, "status", "skipped");
		ct_json_kstr(&j, "reason", "--no-probe");
		ct_json_obj_end(&j);
	} else {
		fflush(stdout);
		prc = ct_doctor_run_probe(&j, NULL, a->timeout_ns, a->timeout_arg);
	}
	rc = finish_verdict(r, prc, verdict, sizeof verdict);
	ct_json_key(&j, "verdict");
	ct_json_obj_begin(&j);
	ct_json_kstr(&j, "status", rc == CT_EXIT_OK ? "healthy" : "problem");
	ct_json_kint(&j, "exit_code", rc);
	ct_json_kint(&j, "problems", r->n_problems);
	ct_json_kint(&j, "warnings", r->n_warnings);
	ct_json_kstr(&j, "probe", probe_status(prc, no_probe));
	ct_json_kstr(&j, "summary", verdict);
	ct_json_obj_end(&j);
	ct_json_obj_end(&j);
	ct_json_end(&j);
	return rc;
}

static int doctor_text(const struct ct_machine_report *r, bool no_probe, const struct doctor_args *a)
{
	FILE *f = stdout;
	char verdict[512];
	int prc = -1, rc;

	fprintf(f, "%scutrace doctor%s %s: this machine, bottom-up\n\n", ct_c(f, CT_C_BOLD),
		ct_c(f, CT_C_RESET), CUTRACE_VERSION);
	ct_machine_report_text(r, f);
	fprintf(f, "%sProbe%s\n", ct_c(f, CT_C_BOLD), ct_c(f, CT_C_RESET));
	if (no_probe) {
		fprintf(f, "  skipped (--no-probe)\n");
	} else {
		fflush(f);
		prc = ct_doctor_run_probe(NULL, f, a->timeout_ns, a->timeout_arg);
	}
	fputc('\n', f);
	rc = finish_verdict(r, prc, verdict, sizeof verdict);
	fprintf(f, "%sverdict:%s %s%s%s\n", ct_c(f, CT_C_BOLD), ct_c(f, CT_C_RESET),
		ct_c(f, rc ? CT_C_RED : r->n_warnings ? CT_C_YELLOW : CT_C_GREEN), verdict,
		ct_c(f, CT_C_RESET));
	return rc;
}

int cmd_doctor(int argc, char **argv)
{
	struct doctor_args a = { false, false, CT_PROBE_TIMEOUT_NS, CT_PROBE_TIMEOUT };
	struct ct_machine_opts o = { 0 };
	struct ct_machine_report *r;
	int rc = parse_args(argc, argv, &a);

	if (rc)
		return rc < 0 ? CT_EXIT_USAGE : CT_EXIT_OK;
	r = calloc(1, sizeof *r);
	if (!r) {
		ct_err("doctor: out of memory");
		return CT_EXIT_USAGE;
	}
	ct_machine_check(r, &o);
	rc = a.json ? doctor_json(r, a.no_probe, &a) : doctor_text(r, a.no_probe, &a);
	free(r);
	if (fflush(stdout) != 0) {
		ct_err("doctor: cannot write the report");
		return CT_EXIT_USAGE;
	}
	return rc;
}
