/*
 * cutrace doctor: check this machine's CUDA stack bottom-up (device nodes,
 * kernel module, libraries, container, environment, version contract),
 * then run the probe under the shim, and end with a one-line verdict.
 * Exit 0 healthy, 1 a problem found, 2 usage or internal error.
 */
#include "cmd.h"
#include "fmt.h"
#include "health.h"
#include "machine.h"
#include "opts.h"
#include "parse.h"
#include "run.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum {
	O_CHECK = CT_OPT_FIRST_LONG,
	O_FORMAT,
	O_JSON,
	O_TIMEOUT,
	O_NO_PROBE,
	O_NO_TIME,
	O_PIDS
};

/* the options: --help and the parser are both made from this table */
static const struct ct_opt doctor_opts[] = {
	{ "check", O_CHECK, CT_ARG_NONE, NULL,
	  "health check: one line on stdout, 'OK ...', 'PROBLEM [layer] summary; fix: ...' or "
	  "'UNKNOWN could not check: ...', and exit 0 healthy, 1 a problem, 2 could not check "
	  "(node-problem-detector custom plugins, Slurm's HealthCheckProgram); a healthy check "
	  "leaves no trace behind" },
	{ "format", O_FORMAT, CT_ARG_STRING, "FORMAT",
	  "text (default), json (one JSON document on stdout) or prometheus (metrics in the text "
	  "exposition format, for node-exporter's textfile collector; exit status as --check)" },
	{ "json", O_JSON, CT_ARG_NONE, NULL, "the same as --format=json" },
	{ "timeout", O_TIMEOUT, CT_ARG_DURATION, "DURATION",
	  "how long the probe may take (default 60s; 0: no limit): a probe that did not finish "
	  "is a problem, with the call it was in; with --check and prometheus: answer within "
	  "DURATION (default 20s; the probe gets 3/4 of what the machine checks leave)" },
	{ "no-probe", O_NO_PROBE, CT_ARG_NONE, NULL, "only the static checks" },
	{ "no-time", O_NO_TIME, CT_ARG_NONE, NULL,
	  "stable output, alike for two runs: the probe's verdict with no times, its pid as #1 "
	  "(--pids: the real one), its trace directory as run-<time>; --check without cuInit's "
	  "time; not with prometheus" },
	{ "pids", O_PIDS, CT_ARG_NONE, NULL, "with --no-time: the real pid" },
	CT_OPT_ROW_COLOR,
	CT_OPT_ROW_HELP,
	{ 0 },
};

static const struct ct_cmd_spec doctor_spec = {
	.cmd = "doctor",
	.opts = doctor_opts,
	.usage = "usage: cutrace doctor [--check] [--format=text|json|prometheus] [--timeout DURATION]\n"
		 "                      [--no-probe] [--no-time [--pids]] [--color[=WHEN]]\n\n"
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
		 "then runs `cutrace probe` (dlopen + cuInit under the shim) and prints a verdict.\n",
	.after = "exit status: 0 healthy, 1 a problem was found, 2 usage or internal error (with\n"
		 "--check or prometheus: could not check)\n",
};

struct doctor_args {
	bool json;
	bool no_probe;
	bool check;
	bool prometheus;
	bool no_time, keep_pids; /* --no-time, --pids: the probe's verdict without times or pids */
	uint64_t timeout_ns;
	const char *timeout_arg;
	uint64_t deadline_ns; /* monotonic: when the check must have answered */
};

#define CHECK_TIMEOUT_DEFAULT "20s"

static int parse_args(int argc, char **argv, struct doctor_args *a)
{
	struct ct_optval v;
	int k, next = 1;

	ct_opts_begin(&doctor_spec);
	while ((k = ct_opts_next(&doctor_spec, argc, argv, &next, &v)) != -1) {
		switch (k) {
		case -2: return -1;
		case CT_OPT_HELP: ct_opts_help(&doctor_spec, stdout); return 1;
		case O_JSON: a->json = true, a->prometheus = false; break;
		case O_FORMAT:
			if (!strcmp(v.s, "json"))
				a->json = true, a->prometheus = false;
			else if (!strcmp(v.s, "text"))
				a->json = a->prometheus = false;
			else if (!strcmp(v.s, "prometheus"))
				a->prometheus = true, a->json = false;
			else
				return ct_opts_error(&doctor_spec,
						     "--format takes text, json or prometheus, not '%s'",
						     v.s),
				       -1;
			break;
		case O_CHECK: a->check = true; break;
		case O_NO_PROBE: a->no_probe = true; break;
		case O_NO_TIME: a->no_time = true; break;
		case O_PIDS: a->keep_pids = true; break;
		case O_TIMEOUT:
			a->timeout_ns = v.n;
			a->timeout_arg = v.s;
			break;
		}
	}
	if (next < argc)
		return ct_opts_error(&doctor_spec,
				     "unexpected argument '%s' (doctor checks this machine; it takes no program)",
				     argv[next]),
		       -1;
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

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the work of --check and --format=prometheus, in the child: checks, probe,
 * the line or the metrics into fd; exits with the check's status */
static void check_child(const struct doctor_args *a, int fd)
{
	struct ct_machine_opts o = { 0 };
	struct ct_machine_report *r = calloc(1, sizeof *r);
	struct ct_probe_result *pr = calloc(1, sizeof *pr);
	struct ct_health_probe hp = { .status = -2, .devices = -1 };
	char line[1024];
	FILE *f = fdopen(fd, "w");
	int rc;

	if (!r || !pr || !f)
		_exit(CT_HEALTH_UNKNOWN);
	ct_machine_check(r, &o);
	/* the probe gets 3/4 of what is left: a hang in cuInit is killed in
	 * time to become a verdict */
	uint64_t now = mono_ns(), left = a->deadline_ns > now ? a->deadline_ns - now : 0;
	if (!a->no_probe && left / 4 * 3 < 100000000ull) {
		hp.status = -1;
		hp.why = "the machine checks left no time for the probe (--timeout)";
	} else if (!a->no_probe) {
		ct_probe_quiet(pr, left / 4 * 3);
		hp.status = pr->status;
		hp.why = pr->why;
		hp.v = pr->status >= 0 ? &pr->v : NULL;
		hp.have_init = pr->have_init;
		hp.init_ns = pr->init_ns;
		hp.init_code = pr->init_code;
		hp.devices = pr->devices;
	}
	rc = ct_health_line(r, &hp, line, sizeof line);
	if (rc == CT_HEALTH_OK && !a->no_probe)
		ct_probe_discard(pr);
	else if (!a->no_probe && pr->dir[0] && pr->status >= 0 && !a->prometheus)
		ct_appendf(line, sizeof line, " (trace: %s)", pr->dir_shown);
	if (a->prometheus)
		ct_health_prometheus(f, r, &hp, rc, line);
	else
		fprintf(f, "%s\n", line);
	if (fclose(f) != 0)
		_exit(CT_HEALTH_UNKNOWN);
	_exit(rc);
}

/*
 * --check and --format=prometheus: the checks run in a child, bounded by
 * --timeout; only a complete answer is printed.  A child that does not
 * finish in time (a device node or file system not answering) is killed
 * with its process group and the answer is UNKNOWN.
 */
static int doctor_check(struct doctor_args *a)
{
	int pfd[2], status = 0, rc = CT_HEALTH_UNKNOWN;
	char *out = NULL;
	size_t len = 0, cap = 0;
	uint64_t deadline;
	pid_t pid;
	bool done = false;

	if (!a->timeout_arg) {
		ct_parse_duration(CHECK_TIMEOUT_DEFAULT, &a->timeout_ns);
		a->timeout_arg = CHECK_TIMEOUT_DEFAULT;
	}
	/* --timeout 0: no limit */
	deadline = a->deadline_ns = a->timeout_ns ? mono_ns() + a->timeout_ns : UINT64_MAX / 2;
	fflush(NULL);
	if (pipe(pfd) < 0 || (pid = fork()) < 0) {
		printf("UNKNOWN could not check: %s\n", strerror(errno));
		return CT_HEALTH_UNKNOWN;
	}
	if (pid == 0) {
		setpgid(0, 0);
		close(pfd[0]);
		check_child(a, pfd[1]);
	}
	setpgid(pid, pid);
	close(pfd[1]);
	for (;;) {
		uint64_t now = mono_ns();
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		if (now >= deadline)
			break;
		int left = (int)((deadline - now) / 1000000) + 1;
		int k = poll(&p, 1, left);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			continue;
		if (len + 4096 > cap) {
			char *n = realloc(out, cap = cap ? cap * 2 : 65536);
			if (!n)
				break;
			out = n;
		}
		ssize_t got = read(pfd[0], out + len, cap - len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			done = true;
			break;
		}
		len += (size_t)got;
	}
	close(pfd[0]);
	if (done) {
		/* the child closed its end: it is exiting */
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) <= 1)
			rc = WEXITSTATUS(status);
		else
			done = false;
	}
	if (!done) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		waitpid(pid, &status, WNOHANG);
		char line[512];
		snprintf(line, sizeof line,
			 "UNKNOWN could not check: no answer within %s (a device node, the driver "
			 "or a file system not answering?)",
			 a->timeout_arg ? a->timeout_arg : "the timeout");
		if (a->prometheus)
			ct_health_prometheus(stdout, NULL,
					     &(struct ct_health_probe){ .status = -1, .devices = -1 },
					     CT_HEALTH_UNKNOWN, line);
		else
			printf("%s\n", line);
		free(out);
		return CT_HEALTH_UNKNOWN;
	}
	fwrite(out, 1, len, stdout);
	free(out);
	return rc;
}

int cmd_doctor(int argc, char **argv)
{
	struct doctor_args a = { 0 };
	struct ct_machine_opts o = { 0 };
	struct ct_machine_report *r;
	int rc = parse_args(argc, argv, &a);

	if (rc)
		return rc < 0 ? CT_EXIT_USAGE : CT_EXIT_OK;
	if (a.no_time && a.prometheus) {
		/* the metrics are the check's time and cuInit's: not silently kept */
		ct_err("doctor: --no-time is for text and JSON: Prometheus metrics carry the check's times "
		       "(try 'cutrace doctor --help')");
		return CT_EXIT_USAGE;
	}
	if (ct_opts_stable(&doctor_spec, a.no_time, a.keep_pids) < 0)
		return CT_EXIT_USAGE;
	if (!a.timeout_arg && !a.check && !a.prometheus) {
		a.timeout_ns = CT_PROBE_TIMEOUT_NS;
		a.timeout_arg = CT_PROBE_TIMEOUT;
	}
	if (a.check || a.prometheus) {
		rc = doctor_check(&a);
		if (fflush(stdout) != 0)
			return CT_HEALTH_UNKNOWN;
		return rc;
	}
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
