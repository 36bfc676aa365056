/*
 * cutrace replay: recreate the root failure of a recorded trace (from any
 * machine) around a command on this one.
 *
 * The recorded trace is diagnosed; its root step is read back and turned
 * into the injection rule that produces the same failure at the same place:
 * a failed open becomes open:path=...:error=..., a failing ioctl becomes
 * ioctl:nr=...(:cmd=/class=...):status=... or error=..., counted with when=
 * as in the recording, a version handshake mismatch becomes version=, a
 * missing library dlopen:...:error=..., a driver code retval=, a too-old
 * driver value=, a call that never returned delay=.  Then the command runs
 * under those rules and the new verdict is compared with the recorded one
 * (same layer, same kind of step, same final code).
 */
#include "tracer.h"
#include "diag.h"
#include "nvdecode.h"
#include "run.h"
#include "scenarios.h"
#include "xlat.h"
#include "inject_rules.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wformat-truncation"

/* a recorded call that never returned is replayed under this --timeout */
#define REPLAY_HANG_TIMEOUT "20s"

struct find {
	const struct ct_trace *t;
	uint64_t seq;
	uint32_t drv;
	struct ct_nv_ioctl nv;
	bool found;
	unsigned call;
	int64_t ret;
	int32_t err;
	bool has_exit;
	char path[512];
	char dlerror[300];
	char libname[256];
	int64_t out;
	/* matching earlier calls, for when= */
	unsigned same;
	/* the root ioctl's identity */
	bool is_ioctl;
	uint64_t req;
	uint32_t cmd, cls;
	unsigned nv_args;
	/* every ioctl until the root, to count those like it */
	struct { uint64_t req; uint32_t cmd, cls; } seen[4096];
	unsigned nseen;
};

static int find_cb(const struct ct_event *ev, void *user)
{
	struct find *f = user;

	/* the reader keeps the trace's device map up to date for each event */
	if (ev->call == CT_CALL_ioctl && ev->has_enter &&
	    ct_nv_decode(ev, f->drv, ct_trace_devmap(f->t), &f->nv) == 0) {
		uint32_t cmd = f->nv.args == CT_NV_A_RM_CONTROL ? f->nv.u.control.cmd : 0;
		uint32_t cls = f->nv.args == CT_NV_A_RM_ALLOC ? f->nv.u.alloc.hClass_in : 0;
		if (ev->seq == f->seq) {
			f->is_ioctl = true;
			f->req = ev->has_enter ? f->nv.request : 0;
			f->cmd = cmd;
			f->cls = cls;
			f->nv_args = f->nv.args;
			for (unsigned i = 0; i < f->nseen; i++)
				if (f->seen[i].req == f->req && f->seen[i].cmd == cmd && f->seen[i].cls == cls)
					f->same++;
		} else if (f->nseen < sizeof f->seen / sizeof f->seen[0]) {
			f->seen[f->nseen].req = f->nv.request;
			f->seen[f->nseen].cmd = cmd;
			f->seen[f->nseen].cls = cls;
			f->nseen++;
		}
	}
	if (ev->seq != f->seq)
		return 0;
	f->found = true;
	f->call = ev->call;
	f->ret = ev->ret;
	f->err = ev->err;
	f->has_exit = ev->has_exit;
	if (ev->has_enter) {
		ct_rec_str(&ev->enter, CT_FLD_PATH, f->path, sizeof f->path);
		ct_rec_str(&ev->enter, CT_FLD_LIBNAME, f->libname, sizeof f->libname);
	}
	if (ev->has_exit) {
		ct_rec_str(&ev->exit, CT_FLD_DLERROR, f->dlerror, sizeof f->dlerror);
		ct_rec_i64(&ev->exit, CT_FLD_OUT, &f->out);
	}
	return 1;
}

/* the CALL of the rule grammar for a recorded call id */
static const char *rule_call(unsigned call)
{
	if (call >= CT_CALL_open && call <= CT_CALL___openat64_2)
		return "open";
	switch (call) {
	case CT_CALL_dlopen: case CT_CALL_dlmopen: return "dlopen";
	case CT_CALL_dlsym: case CT_CALL_dlvsym: return "dlsym";
	case CT_CALL_cuGetProcAddress: case CT_CALL_cuGetProcAddress_v2: return "cuGetProcAddress";
	case CT_CALL_cuCtxCreate: case CT_CALL_cuCtxCreate_v2: case CT_CALL_cuCtxCreate_v3:
	case CT_CALL_cuCtxCreate_v4: return "cuCtxCreate";
	case CT_CALL_nvmlInit: case CT_CALL_nvmlInit_v2: case CT_CALL_nvmlInitWithFlags: return "nvmlInit";
	case CT_CALL_nvmlDeviceGetCount_v2: return "nvmlDeviceGetCount";
	default: return ct_call_name(call);
	}
}

static void nr_key(const struct find *f, char *buf, size_t len)
{
	if (f->nv.named && (!strncmp(f->nv.name, "NV_ESC_", 7) || !strncmp(f->nv.name, "UVM_", 4)))
		snprintf(buf, len, "nr=%s", f->nv.name);
	else
		snprintf(buf, len, "nr=0x%x", f->nv.nr);
}

/*
 * Rules (and environment) that recreate v's root failure.  Returns 0, or -1
 * with why when it cannot be recreated from user space.
 */
int ct_replay_rules(const char *path, const struct ct_verdict *v, char *rules, size_t len,
		    char *env, size_t envlen, const char **scenario, char *why, size_t whylen)
{
	struct ct_trace *t;
	struct find *f;
	char err[256], nr[80];

	rules[0] = env[0] = 0;
	*scenario = NULL;
	if (v->ok) {
		snprintf(why, whylen, "the recorded process did not fail: nothing to replay");
		return -1;
	}
	if (v->contract.libcuda_kind && !strcmp(v->contract.libcuda_kind, "stub") && v->layer == CT_LAYER_LOADER) {
		*scenario = "stub-library";
		return 0;
	}
	if (!v->step.set) {
		snprintf(why, whylen, "the verdict names no step");
		return -1;
	}
	if (ct_trace_open(path, &t, err, sizeof err) < 0) {
		snprintf(why, whylen, "%s", err);
		return -1;
	}
	f = calloc(1, sizeof *f);
	if (!f) {
		ct_trace_close(t);
		return -1;
	}
	f->t = t;
	f->seq = v->step.seq;
	f->drv = ct_trace_driver_version(t);
	ct_trace_events(t, find_cb, f);
	ct_trace_close(t);
	if (!f->found) {
		snprintf(why, whylen, "the root step (seq %" PRIu64 ") is not in the trace", v->step.seq);
		free(f);
		return -1;
	}

	if (v->hung) {
		if (f->is_ioctl) {
			nr_key(f, nr, sizeof nr);
			snprintf(rules, len, "ioctl:%s:delay=1h", nr);
		} else {
			snprintf(rules, len, "%s:delay=1h", rule_call(f->call));
		}
	} else if (f->call >= CT_CALL_open && f->call <= CT_CALL___openat64_2) {
		const char *en = ct_errno_name(f->err);
		snprintf(rules, len, "open:path=%s:error=%s", f->path, en ? en : "EIO");
	} else if (f->call == CT_CALL_dlopen || f->call == CT_CALL_dlmopen) {
		const char *base = strrchr(f->libname, '/'), *so;
		base = base ? base + 1 : f->libname;
		/* a library that is not there is missing under every name the
		 * program may try next (cutrace-probe, like libcudart, falls back
		 * from libcuda.so.1 to libcuda.so): libX.so.1 becomes libX.so* */
		so = strstr(base, ".so");
		snprintf(rules, len, "dlopen:lib=%.*s%s:error=%s", so ? (int)(so - base) + 3 : (int)strlen(base), base,
			 so ? "*" : "",
			 strstr(f->dlerror, "ELFCLASS32") ? "ELFCLASS32" : strstr(f->dlerror, "ELFCLASS64") ? "ELFCLASS64"
			 : strstr(f->dlerror, "Permission denied") ? "EACCES" : "ENOENT");
	} else if (f->is_ioctl) {
		char extra[64] = "", when[32] = "";
		nr_key(f, nr, sizeof nr);
		if (f->cmd)
			snprintf(extra, sizeof extra, ":cmd=0x%x", f->cmd);
		else if (f->nv_args == CT_NV_A_RM_ALLOC)
			snprintf(extra, sizeof extra, ":class=0x%x", f->cls);
		if (f->same)
			snprintf(when, sizeof when, ":when=%u", f->same + 1);
		if (v->layer == CT_LAYER_KERNEL_HANDSHAKE && f->nv.handshake.kernel[0]) {
			/* recreate "client != kernel" here: answer with the recorded
			 * kernel version, unless that is this machine's own kernel
			 * module, then with the recorded client's version */
			char local[64] = "", bumped[40];
			const char *ver = f->nv.handshake.kernel;
			FILE *mv = fopen("/sys/module/nvidia/version", "r");
			if (mv) {
				if (fgets(local, sizeof local, mv))
					local[strcspn(local, "\n")] = 0;
				fclose(mv);
			}
			if (local[0] && !strcmp(local, ver)) {
				const char *client = f->nv.handshake.client[0] ? f->nv.handshake.client
						     : v->contract.libcuda_version;
				unsigned cv[2], kv[3];
				if (ct_version_parts(client, cv, 2) == 2 && ct_version_parts(local, kv, 3) == 3 &&
				    (cv[0] < kv[0] || (cv[0] == kv[0] && cv[1] < kv[1]))) {
					/* the recorded client was older than its kernel.
					 * Measured with libcuda 580.159.04 (tests/fixtures/
					 * h200-580/README.md): a kernel that reports an older
					 * version, or a
					 * newer patch level, is accepted; a newer minor or
					 * major gives 803.  So the kernel here reports a minor
					 * one above its own */
					snprintf(bumped, sizeof bumped, "%u.%u.%02u", kv[0], kv[1] + 1, kv[2]);
					ver = bumped;
				} else if (client[0]) {
					ver = client;
				}
			}
			snprintf(rules, len, "ioctl:%s:version=%s", f->nv.handshake.source == CT_NV_HS_CHECK_VERSION_STR
				 ? "nr=NV_ESC_CHECK_VERSION_STR" : "cmd=0x101", ver);
		}
		else if (f->nv.returned && f->nv.ret < 0) {
			const char *en = ct_errno_name(f->nv.err);
			snprintf(rules, len, "ioctl:%s%s:error=%s%s", nr, extra, en ? en : "EIO", when);
		} else if (f->nv.has_status)
			snprintf(rules, len, "ioctl:%s%s:status=0x%x%s", nr, extra, f->nv.status, when);
		else if (f->nv.args == CT_NV_A_CARD_INFO) {
			snprintf(why, whylen, "an empty CARD_INFO cannot be injected; use scenario ctl-denied or card-info-failed");
			free(f);
			return -1;
		} else {
			snprintf(why, whylen, "the failing ioctl carries neither an errno nor a status");
			free(f);
			return -1;
		}
	} else if (v->layer == CT_LAYER_RUNTIME && v->contract.driver_version) {
		snprintf(rules, len, "cuDriverGetVersion:value=%d", v->contract.driver_version);
	} else if (v->layer == CT_LAYER_DRIVER_API && v->final_code == 100 && strstr(v->summary, "CUDA_VISIBLE_DEVICES='")) {
		const char *q = strstr(v->summary, "CUDA_VISIBLE_DEVICES='") + 22, *e = strchr(q, '\'');
		snprintf(env, envlen, "CUDA_VISIBLE_DEVICES=%.*s", e ? (int)(e - q) : 0, q);
	} else if (ct_call_family(f->call) == CT_FAM_DRIVER || ct_call_family(f->call) == CT_FAM_RUNTIME ||
		   ct_call_family(f->call) == CT_FAM_NVML) {
		if (v->layer == CT_LAYER_KERNEL_HANDSHAKE && v->contract.kernel_version[0] && f->call == CT_CALL_cuInit &&
		    v->final_code != 803)
			snprintf(rules, len, "ioctl:cmd=0x101:version=%s", v->contract.kernel_version);
		else
			snprintf(rules, len, "%s:retval=%d", rule_call(f->call), (int)f->ret);
	} else {
		snprintf(why, whylen, "no rule recreates a failing %s", ct_call_name(f->call));
		free(f);
		return -1;
	}
	free(f);
	return 0;
}

static void replay_usage(FILE *f)
{
	fprintf(f,
		"usage: cutrace replay [OPTIONS] TRACE [OPTIONS] [-- CMD [ARGS...]]\n\n"
		"Derives the injection rules that recreate the root failure of TRACE (a trace file,\n"
		"or a directory: its first failed process) and runs CMD under them, then checks\n"
		"that the new verdict matches the recorded one (layer, kind of step, final code).\n"
		"Options may come before or after TRACE (before '--').\n\n"
		"  --print             only print the rules (and environment, timeout)\n"
		"  -o DIR              trace directory of the new run\n"
		"  --timeout DURATION  kill CMD and its processes after DURATION; a recorded call\n"
		"                      that never returned is replayed with --timeout %s unless given\n"
		"  --inject RULE       more rules for the new run (CUTRACE_INJECT is kept as well)\n\n"
		"exit status: 0 reproduced (or --print), 1 not reproduced, 2 usage or bad trace\n",
		REPLAY_HANG_TIMEOUT);
}

/* the name under which the recording was made with `cutrace run --scenario`
 * (CUTRACE_SCENARIO in the recorded environment), or "" */
static void recorded_scenario(const char *path, char *out, size_t len)
{
	struct ct_trace *t;
	char err[256];
	const unsigned char *p;
	uint16_t n;
	static const char key[] = "CUTRACE_SCENARIO=";

	out[0] = 0;
	if (ct_trace_open(path, &t, err, sizeof err) < 0)
		return;
	for (unsigned i = 0; (p = ct_trace_ctx(t, CT_CTX_ENV, i, &n)); i++)
		if (n > sizeof key - 1 && !memcmp(p, key, sizeof key - 1)) {
			snprintf(out, len, "%.*s", (int)(n - (sizeof key - 1)), (const char *)p + sizeof key - 1);
			break;
		}
	ct_trace_close(t);
}

static bool same_kind(const char *a, const char *b)
{
	if (!strncmp(a, "open", 4) && !strncmp(b, "open", 4))
		return true;
	if (!strncmp(a, "__open", 6) || !strncmp(b, "__open", 6))
		return strstr(a, "open") && strstr(b, "open");
	if (!strncmp(a, "cuCtxCreate", 11) && !strncmp(b, "cuCtxCreate", 11))
		return true;
	if (!strncmp(a, "nvmlInit", 8) && !strncmp(b, "nvmlInit", 8))
		return true;
	if (!strncmp(a, "cuGetProcAddress", 16) && !strncmp(b, "cuGetProcAddress", 16))
		return true;
	if (!strncmp(a, "dl", 2) && !strncmp(b, "dl", 2))
		return !strcmp(a + 2, b + 2) || (strstr(a, "open") && strstr(b, "open"));
	return !strcmp(a, b);
}

int cmd_replay(int argc, char **argv)
{
	struct ct_run_opts o;
	struct ct_verdict rec, *got = NULL;
	char rules[1024], env[512], why[512], err[512], scen_rec[64], **paths = NULL, **av;
	const char *trace_arg = NULL, *scenario = NULL, *trace_file = NULL;
	int ci, r, n, k = 0, cmd_at, status = 0, rc = CT_EXIT_PROBLEM;

	/* options may stand before and after TRACE: gather them (with their
	 * values) ahead of everything else, then the command after "--"; a
	 * word after TRACE that is not an option starts the command too */
	av = calloc((size_t)argc + 1, sizeof *av);
	if (!av)
		return CT_EXIT_PROBLEM;
	av[k++] = argv[0];
	cmd_at = argc;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			cmd_at = i + 1;
			break;
		}
		if (a[0] == '-' && a[1]) {
			av[k++] = argv[i];
			if (ct_run_opt_takes_value(a) && i + 1 < argc)
				av[k++] = argv[++i];
			continue;
		}
		if (!trace_arg) {
			trace_arg = a;
			continue;
		}
		cmd_at = i;
		break;
	}
	r = ct_run_parse_cmd("replay", k, av, &o, &ci, false);
	free(av);
	if (r == 1) {
		replay_usage(stdout);
		return CT_EXIT_OK;
	}
	if (r == 3) {
		printf("%s\n", ct_rules_grammar);
		return CT_EXIT_OK;
	}
	if (r < 0)
		return CT_EXIT_USAGE;
	if (!trace_arg) {
		ct_err("replay needs a trace file or directory (try 'cutrace replay --help')");
		return CT_EXIT_USAGE;
	}
	ci = cmd_at;
	/* the trace first: a missing file is named before anything else */
	n = ct_list_traces(trace_arg, &paths, err, sizeof err);
	if (n <= 0) {
		if (n < 0)
			ct_err("%s", err);
		else
			ct_err("%s: no trace files", trace_arg);
		return CT_EXIT_USAGE;
	}
	if (!o.print_only && ci >= argc) {
		ct_err("no command to run (cutrace replay TRACE -- CMD [ARGS...]); use --print to only see the rules");
		ct_free_paths(paths, n);
		return CT_EXIT_USAGE;
	}
	/* the first failed process of the recording */
	for (int i = 0; i < n && !trace_file; i++) {
		if (ct_diagnose_file(paths[i], &rec, err, sizeof err) < 0) {
			ct_err("%s: %s", paths[i], err);
			continue;
		}
		if (!rec.ok)
			trace_file = paths[i];
	}
	if (!trace_file) {
		ct_err("%s: no failed process in the recording: nothing to replay", trace_arg);
		ct_free_paths(paths, n);
		return CT_EXIT_USAGE;
	}
	recorded_scenario(trace_file, scen_rec, sizeof scen_rec);
	if (ct_replay_rules(trace_file, &rec, rules, sizeof rules, env, sizeof env, &scenario, why, sizeof why) < 0) {
		/* a recording made with --scenario can always be made again with it */
		if (!scen_rec[0] || !ct_scenario_find(scen_rec)) {
			ct_err("%s: cannot replay: %s", trace_file, why);
			ct_free_paths(paths, n);
			return CT_EXIT_USAGE;
		}
		rules[0] = env[0] = 0;
		scenario = scen_rec;
	}
	if (rec.hung && !o.timeout_ns) {
		/* the replayed call never returns either: it must be ended */
		ct_rule_duration(REPLAY_HANG_TIMEOUT, &o.timeout_ns);
		o.timeout_arg = REPLAY_HANG_TIMEOUT;
	}
	printf("recorded: ");
	ct_verdict_line(stdout, &rec);
	printf("\n");
	if (scen_rec[0])
		printf("recorded with: --scenario %s\n", scen_rec);
	if (rules[0])
		printf("rules:    %s\n", rules);
	if (env[0])
		printf("env:      %s\n", env);
	if (scenario)
		printf("scenario: %s\n", scenario);
	if (o.timeout_ns)
		printf("timeout:  %s%s\n", o.timeout_arg,
		       rec.hung ? " (the recorded call never returned: the replayed program is killed then)" : "");
	fflush(stdout);
	if (o.print_only) {
		ct_free_paths(paths, n);
		return CT_EXIT_OK;
	}
	if (rules[0]) {
		size_t used = strlen(o.inject);
		snprintf(o.inject + used, 4096 - used, "%s%s", used ? ";" : "", rules);
	}
	if (env[0])
		o.env[o.nenv++] = env;
	if (scenario)
		o.scenario = scenario;
	if (ct_run_setup(&o) < 0 || ct_spawn_traced(&o, argv + ci, &status) < 0) {
		ct_free_paths(paths, n);
		return CT_EXIT_USAGE;
	}
	ct_free_paths(paths, n);
	paths = NULL;
	n = ct_list_traces(o.dir, &paths, err, sizeof err);
	got = n > 0 ? calloc((size_t)n, sizeof *got) : NULL;
	for (int i = 0; got && i < n; i++) {
		if (ct_diagnose_file(paths[i], &got[i], err, sizeof err) < 0 || got[i].ok)
			continue;
		printf("replayed: ");
		ct_verdict_line(stdout, &got[i]);
		printf("\n");
		if (got[i].layer == rec.layer && same_kind(got[i].step.call, rec.step.call) &&
		    got[i].final_code == rec.final_code && got[i].hung == rec.hung) {
			printf("replay: reproduced (layer %s, step %s, final code %d); traces in %s\n",
			       ct_layer_name(rec.layer), rec.step.call, rec.final_code, o.dir);
			rc = CT_EXIT_OK;
			break;
		}
	}
	if (rc != CT_EXIT_OK)
		printf("replay: NOT reproduced: recorded layer %s, step %s, final code %d; traces in %s\n",
		       ct_layer_name(rec.layer), rec.step.call, rec.final_code, o.dir);
	free(got);
	if (n > 0)
		ct_free_paths(paths, n);
	(void)status;
	return rc;
}
