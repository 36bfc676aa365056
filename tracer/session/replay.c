/*
 * The rules that recreate a recorded failure (run.h, ct_replay_rules): the
 * recorded trace is diagnosed, its root step read back and turned into the
 * injection rule that produces the same failure at the same place: a failed
 * open becomes open:path=...:error=..., a failing ioctl becomes
 * ioctl:nr=...(:cmd=/class=...):status=... or error=..., counted with when=
 * as in the recording, a version handshake mismatch becomes version=, a
 * missing library dlopen:...:error=..., a driver code retval=, a too-old
 * driver value=, a call that never returned delay=.
 */
#include "tracer.h"
#include "run.h"
#include "diag.h"
#include "nvdecode.h"
#include "inject_rules.h"
#include "scenarios.h"
#include "version.h"
#include "xlat.h"
#include "cutrace_gen/codes.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wformat-truncation"

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
 * Recorded strings come from a file somebody sent: they are carried into a
 * rule only as a literal the grammar cannot read as structure.  A path= or
 * lib= value is a glob: its glob characters are escaped with '\\', and the
 * grammar's separators (':' between keys, ';' between rules) and control
 * bytes become '?' (any one byte), so the rule still matches the recorded
 * name and nothing else changes.  false when it does not fit.
 */
static bool glob_literal(const char *s, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (o + 3 > len)
			return false;
		if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\')
			out[o++] = '\\';
		else if (c == ':' || c == ';' || c < 0x20 || c == 0x7f)
			c = '?';
		out[o++] = (char)c;
	}
	if (!len)
		return false;
	out[o] = 0;
	return o > 0;
}

/* a recorded version string ("580.159.04") safe as a rule value */
static bool version_ok(const char *v)
{
	if (!*v || strlen(v) >= CT_RULE_VER)
		return false;
	for (; *v; v++)
		if (!((*v >= '0' && *v <= '9') || (*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') ||
		      *v == '.' || *v == '-' || *v == '_' || *v == '+'))
			return false;
	return true;
}

/*
 * The rule text built from a recording must read back as exactly one rule
 * of the intended call whose glob (when there is one) matches the recorded
 * name: a recorded string that changed the rule's structure never runs.
 */
static bool rule_reads_back(const char *rules, const char *call, const char *subject, char *why,
			    size_t whylen)
{
	struct ct_rule r[CT_RULES_MAX];
	char err[300];
	int n = ct_rules_parse(rules, r, CT_RULES_MAX, err, sizeof err);

	if (n != 1) {
		snprintf(why, whylen,
			 "the rule derived from the recording does not read back as one rule (%s)",
			 n < 0 ? err : "several rules");
		return false;
	}
	if (strcmp(r[0].call_name, call)) {
		snprintf(why, whylen, "the rule derived from the recording reads back as a %s rule, not %s",
			 r[0].call_name, call);
		return false;
	}
	if (subject && (!(r[0].keys & (CT_RK_PATH | CT_RK_LIB)) || !ct_glob_match(r[0].glob, subject))) {
		snprintf(why, whylen, "the rule derived from the recording does not match the recorded name");
		return false;
	}
	return true;
}

/* CUDA_VISIBLE_DEVICES as recorded: printable, no blanks */
static bool env_value_ok(const char *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] <= 0x20 || (unsigned char)v[i] >= 0x7f)
			return false;
	return true;
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
		char glob[CT_RULE_GLOB];
		if (!glob_literal(f->path, sizeof f->path, glob, sizeof glob)) {
			snprintf(why, whylen, "the recorded path is empty or too long for a rule");
			free(f);
			return -1;
		}
		snprintf(rules, len, "open:path=%s:error=%s", glob, en ? en : "EIO");
		if (!rule_reads_back(rules, "open", f->path, why, whylen)) {
			rules[0] = 0;
			free(f);
			return -1;
		}
	} else if (f->call == CT_CALL_dlopen || f->call == CT_CALL_dlmopen) {
		const char *base = strrchr(f->libname, '/'), *so;
		char glob[CT_RULE_GLOB];
		base = base ? base + 1 : f->libname;
		/* a library that is not there is missing under every name the
		 * program may try next (cutrace-probe, like libcudart, falls back
		 * from libcuda.so.1 to libcuda.so): libX.so.1 becomes libX.so* */
		so = strstr(base, ".so");
		if (!glob_literal(base, so ? (size_t)(so - base) + 3 : strlen(base), glob, sizeof glob - 1)) {
			snprintf(why, whylen, "the recorded library name is empty or too long for a rule");
			free(f);
			return -1;
		}
		snprintf(rules, len, "dlopen:lib=%s%s:error=%s", glob, so ? "*" : "",
			 strstr(f->dlerror, "ELFCLASS32")          ? "ELFCLASS32"
			 : strstr(f->dlerror, "ELFCLASS64")        ? "ELFCLASS64"
			 : strstr(f->dlerror, "Permission denied") ? "EACCES"
								   : "ENOENT");
		if (!rule_reads_back(rules, "dlopen", base, why, whylen)) {
			rules[0] = 0;
			free(f);
			return -1;
		}
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
			if (!version_ok(ver)) {
				snprintf(why, whylen, "the recorded version is not a version string");
				free(f);
				return -1;
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
	} else if (v->layer == CT_LAYER_DRIVER_API && v->final_code == CT_CUDA_ERROR_NO_DEVICE && strstr(v->summary, "CUDA_VISIBLE_DEVICES='")) {
		const char *q = strstr(v->summary, "CUDA_VISIBLE_DEVICES='") + 22, *e = strchr(q, '\'');
		if (!env_value_ok(q, e ? (size_t)(e - q) : 0)) {
			snprintf(why, whylen,
				 "the recorded CUDA_VISIBLE_DEVICES has blanks or control bytes");
			free(f);
			return -1;
		}
		snprintf(env, envlen, "CUDA_VISIBLE_DEVICES=%.*s", e ? (int)(e - q) : 0, q);
	} else if (ct_call_family(f->call) == CT_FAM_DRIVER || ct_call_family(f->call) == CT_FAM_RUNTIME ||
		   ct_call_family(f->call) == CT_FAM_NVML) {
		if (v->layer == CT_LAYER_KERNEL_HANDSHAKE && v->contract.kernel_version[0] &&
		    f->call == CT_CALL_cuInit && v->final_code != CT_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) {
			if (!version_ok(v->contract.kernel_version)) {
				snprintf(why, whylen, "the recorded kernel version is not a version string");
				free(f);
				return -1;
			}
			snprintf(rules, len, "ioctl:cmd=0x101:version=%s", v->contract.kernel_version);
		} else
			snprintf(rules, len, "%s:retval=%d", rule_call(f->call), (int)f->ret);
	} else {
		snprintf(why, whylen, "no rule recreates a failing %s", ct_call_name(f->call));
		free(f);
		return -1;
	}
	free(f);
	return 0;
}
