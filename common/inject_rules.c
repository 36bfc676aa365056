/*
 * Parser of the fault-injection grammar (see inject_rules.h).  Runs in the
 * shim's constructor and in the CLI: no allocation, no locale-dependent
 * functions, every error names the offending part.
 */
#include "inject_rules.h"
#include "parse.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cutrace/format.h"
#include "cutrace_gen/shim_tables.h"

const char ct_rules_grammar[] =
	"CALL[:KEY=VALUE]...  (several rules separated by ';')\n"
	"  CALL  "
#define CT_RULE(call, fam, value) " " #call
#define CT_RULE_WRAP()            "\n        "
#include "hooks.def"
	"\n"
	"  match  lib=GLOB (dlopen)  path=GLOB (open)  dev=nvidiactl|nvidiaN|gpu|nvidia-uvm|nvidia-uvm-tools|\n"
	"         nvidia-caps|nvidia-modeset (open, ioctl)  nr=NAME|NUMBER (ioctl)  cmd=NUMBER (ioctl: RM control)\n"
	"         class=NUMBER (ioctl: RM_ALLOC class)  sym=NAME (cuGetProcAddress, dlsym)  rank=N (any call)\n"
	"  action error=ERRNO (open, ioctl, dlopen, dlsym)  retval=CODE (driver, runtime, NVML calls)\n"
	"         status=NV_STATUS (ioctl)  value=N (cuDriverGetVersion, cuDeviceGetCount, cudaGetDeviceCount,\n"
	"         cudaDriverGetVersion, cudaRuntimeGetVersion, nvmlDeviceGetCount; ioctl with cmd=: the\n"
	"         RM control's first 32-bit answer)\n"
	"         version=STRING (ioctl: the version handshake)  delay=DURATION (any call, e.g. 30s, 250ms)\n"
	"  when=N | N..M | N+   which matching calls, counted from 1 (default: all)\n"
	"  e.g.   open:path=/dev/nvidia-uvm:error=EPERM   cuInit:retval=CUDA_ERROR_NOT_INITIALIZED\n"
	"         ioctl:nr=UVM_REGISTER_GPU:error=EIO     dlopen:lib=libcuda.so.1:error=ENOENT";

/* ---- the calls ----------------------------------------------------------------- */
enum fam { F_IO_OPEN, F_IO_IOCTL, F_DLOPEN, F_DLSYM, F_DRIVER, F_RUNTIME, F_NVML };

/* the grammar's calls: common/hooks.def's CT_RULE rows */
enum rule_id {
#define CT_RULE(call, fam, value) R_##call,
#include "hooks.def"
	R_none /* a hook no rule targets */
};

static const struct {
	const char *name;
	enum fam fam;
	bool has_value; /* value= allowed */
} calls[] = {
#define CT_RULE(call, fam, value) { #call, F_##fam, value },
#include "hooks.def"
};

/* the hooks, each with the call of the grammar that targets it (R_none:
 * none; such hooks, munmap or dlerror, have no CT_CALL_* id either) */
static const struct {
	const char *name;
	unsigned char rule; /* enum rule_id */
} hook_rules[] = {
#define CT_LIBC(name, rule, RET, PARAMS)                 { #name, R_##rule },
#define CT_LOADER(name, rule, RET, PARAMS)               { #name, R_##rule },
#define CT_CUDA(name, lib, api, rule, RET, PARAMS, ARGS) { #name, R_##rule },
#include "hooks.def"
};

static const struct {
	const char *name;
	unsigned id;
} call_ids[] = {
#define CT_X_ID(id, name, fam) { #name, id },
	CUTRACE_CALLS(CT_X_ID)
#undef CT_X_ID
};
_Static_assert(CT_CALL__MAX <= 64, "a rule's calls are a 64-bit mask");

/* the CT_CALL_* bits of every hook that call ci of the grammar acts on (a
 * hook a rule targets has an id: unit_common checks every call's mask) */
static uint64_t call_mask(size_t ci)
{
	uint64_t m = 0;

	for (size_t i = 0; i < sizeof hook_rules / sizeof hook_rules[0]; i++) {
		if (hook_rules[i].rule != ci)
			continue;
		for (size_t j = 0; j < sizeof call_ids / sizeof call_ids[0]; j++)
			if (!strcmp(call_ids[j].name, hook_rules[i].name))
				m |= 1ull << call_ids[j].id;
	}
	return m;
}
#define NCALLS (sizeof calls / sizeof calls[0])

/* ---- small parsers ------------------------------------------------------------------ */
static bool parse_i64(const char *s, int64_t *out)
{
	bool neg = false;
	uint64_t v = 0;
	int base = 10;

	if (*s == '-') {
		neg = true;
		s++;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return false;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (v > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

/* a plain decimal number (when=, rank=): no sign, no hex, no leading junk */
static bool parse_dec(const char *s, int64_t *out)
{
	int64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return true;
}

static bool parse_when(const char *s, uint64_t *lo, uint64_t *hi)
{
	char a[32];
	const char *dots = strstr(s, "..");
	size_t n = strlen(s);
	int64_t x, y;

	if (n == 0 || n >= sizeof a)
		return false;
	if (s[n - 1] == '+') {
		memcpy(a, s, n - 1);
		a[n - 1] = 0;
		if (!parse_dec(a, &x) || x < 1)
			return false;
		*lo = (uint64_t)x;
		*hi = UINT64_MAX;
		return true;
	}
	if (dots) {
		size_t k = (size_t)(dots - s);
		memcpy(a, s, k);
		a[k] = 0;
		if (!parse_dec(a, &x) || !parse_dec(dots + 2, &y) || x < 1 || y < x)
			return false;
		*lo = (uint64_t)x;
		*hi = (uint64_t)y;
		return true;
	}
	if (!parse_dec(s, &x) || x < 1)
		return false;
	*lo = *hi = (uint64_t)x;
	return true;
}

static bool lookup_code(const struct ct_gen_code *t, size_t n, const char *name, int64_t *out)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name)) {
			*out = t[i].value;
			return true;
		}
	return false;
}

int ct_rule_errno(const char *s, int64_t *out)
{
	if (parse_i64(s, out))
		return *out > 0 && *out < 4096 ? 0 : -1;
	for (size_t i = 0; i < CT_GEN_ERRNOS_N; i++)
		if (!strcmp(ct_gen_errnos[i].name, s)) {
			*out = ct_gen_errnos[i].value;
			return 0;
		}
	return -1;
}

static bool parse_dev(const char *s, int *kind, int *minor)
{
	*minor = CT_RULE_DEV_ANY_MINOR;
	if (!strncmp(s, "/dev/", 5))
		s += 5;
	if (!strcmp(s, "nvidiactl") || !strcmp(s, "ctl")) {
		*kind = CT_NODE_CTL;
		*minor = 255;
	} else if (!strcmp(s, "nvidia-uvm") || !strcmp(s, "uvm")) {
		*kind = CT_NODE_UVM;
	} else if (!strcmp(s, "nvidia-uvm-tools")) {
		*kind = CT_NODE_UVM_TOOLS;
	} else if (!strcmp(s, "nvidia-modeset")) {
		*kind = CT_NODE_MODESET;
	} else if (!strcmp(s, "nvidia-caps")) {
		*kind = CT_NODE_CAPS;
	} else if (!strcmp(s, "gpu") || !strcmp(s, "nvidiaN")) {
		*kind = CT_NODE_GPU;
	} else if (!strncmp(s, "nvidia", 6) && s[6] >= '0' && s[6] <= '9') {
		int64_t m;
		if (!parse_i64(s + 6, &m) || m < 0 || m > 255)
			return false;
		*kind = CT_NODE_GPU;
		*minor = (int)m;
	} else {
		return false;
	}
	return true;
}

/* ---- glob ------------------------------------------------------------------------------ */
static bool glob_at(const char *p, const char *t)
{
	for (; *p; p++, t++) {
		if (*p == '*') {
			while (p[1] == '*')
				p++;
			if (!p[1])
				return true;
			for (; *t; t++)
				if (glob_at(p + 1, t))
					return true;
			return glob_at(p + 1, t);
		}
		if (!*t)
			return false;
		if (*p == '?')
			continue;
		if (*p == '[') {
			const char *q = p + 1;
			bool neg = *q == '!' || *q == '^', hit = false;
			if (neg)
				q++;
			for (; *q && *q != ']'; q++) {
				if (q[1] == '-' && q[2] && q[2] != ']') {
					hit |= *t >= *q && *t <= q[2];
					q += 2;
				} else {
					hit |= *t == *q;
				}
			}
			if (!*q || hit == neg)
				return false;
			p = q;
			continue;
		}
		if (*p == '\\' && p[1])
			p++;
		if (*p != *t)
			return false;
	}
	return !*t;
}

int ct_glob_match(const char *pattern, const char *text)
{
	const char *base;

	if (!pattern || !text)
		return 0;
	if (!strchr(pattern, '/') && (base = strrchr(text, '/')))
		text = base + 1;
	return glob_at(pattern, text);
}

/* ---- one rule ---------------------------------------------------------------------------- */
#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

static int parse_one(char *text, struct ct_rule *r, char *err, size_t errlen)
{
	char *part, *next, *colon;
	int ci = -1;
	bool have_action = false;

	memset(r, 0, sizeof *r);
	r->rank = -1;
	r->when_lo = 1;
	r->when_hi = UINT64_MAX;
	r->dev_minor = CT_RULE_DEV_ANY_MINOR;

	colon = strchr(text, ':');
	if (colon)
		*colon = 0;
	for (size_t i = 0; i < NCALLS; i++)
		if (!strcmp(text, calls[i].name))
			ci = (int)i;
	if (ci < 0)
		FAIL("unknown call '%.64s'", text);
	snprintf(r->call_name, sizeof r->call_name, "%.31s", text);
	r->calls = call_mask(ci);
	enum fam fam = calls[ci].fam;

	for (part = colon ? colon + 1 : NULL; part; part = next) {
		char *eq;
		const char *k = part, *v;
		next = strchr(part, ':');
		if (next)
			*next++ = 0;
		if (!*part)
			FAIL("empty KEY=VALUE part (two ':' in a row, or a ':' at the end)");
		eq = strchr(part, '=');
		if (!eq || eq == part)
			FAIL("'%s' is not KEY=VALUE", part);
		*eq = 0;
		v = eq + 1;
		if (!*v)
			FAIL("%s= needs a value", k);

		if (!strcmp(k, "lib") || !strcmp(k, "path")) {
			bool lib = k[0] == 'l';
			if (lib ? fam != F_DLOPEN : fam != F_IO_OPEN)
				FAIL("%s= applies to %s, not to %s", k, lib ? "dlopen" : "open", r->call_name);
			if (strlen(v) >= sizeof r->glob)
				FAIL("%s= pattern is too long", k);
			snprintf(r->glob, sizeof r->glob, "%s", v);
			r->keys |= lib ? CT_RK_LIB : CT_RK_PATH;
		} else if (!strcmp(k, "dev")) {
			if (fam != F_IO_IOCTL && fam != F_IO_OPEN)
				FAIL("dev= applies to ioctl and open, not to %s", r->call_name);
			if (!parse_dev(v, &r->dev_kind, &r->dev_minor))
				FAIL("unknown device '%s' (nvidiactl, nvidiaN, gpu, nvidia-uvm, nvidia-uvm-tools, nvidia-caps, nvidia-modeset)", v);
			r->keys |= CT_RK_DEV;
		} else if (!strcmp(k, "nr")) {
			int64_t n;
			if (fam != F_IO_IOCTL)
				FAIL("nr= applies to ioctl, not to %s", r->call_name);
			r->keys |= CT_RK_NR;
			if (parse_i64(v, &n)) {
				if (n < 0 || n > 0xffffffffll)
					FAIL("nr=%s is out of range", v);
				r->nr = (uint32_t)n;
				r->nr_ns = 0;
			} else {
				bool found = false;
				for (size_t i = 0; i < CT_GEN_IOCTL_NAMES_N && !found; i++)
					if (!strcmp(ct_gen_ioctl_names[i].name, v)) {
						r->nr = ct_gen_ioctl_names[i].nr;
						r->nr_ns = ct_gen_ioctl_names[i].ns;
						found = true;
					}
				if (!found)
					FAIL("unknown ioctl '%s' (use a name such as NV_ESC_RM_ALLOC or UVM_REGISTER_GPU, or a number)", v);
			}
		} else if (!strcmp(k, "cmd") || !strcmp(k, "class")) {
			int64_t n;
			if (fam != F_IO_IOCTL)
				FAIL("%s= applies to ioctl, not to %s", k, r->call_name);
			if (!parse_i64(v, &n) || n < 0 || n > 0xffffffffll)
				FAIL("%s=%s is not a number", k, v);
			if (k[1] == 'm') {
				r->cmd = (uint32_t)n;
				r->keys |= CT_RK_CMD;
			} else {
				r->cls = (uint32_t)n;
				r->keys |= CT_RK_CLASS;
			}
		} else if (!strcmp(k, "sym")) {
			if (fam != F_DLSYM && !(r->calls & ((1ull << CT_CALL_cuGetProcAddress) |
							   (1ull << CT_CALL_cuGetProcAddress_v2))))
				FAIL("sym= applies to cuGetProcAddress and dlsym, not to %s", r->call_name);
			if (strlen(v) >= sizeof r->sym)
				FAIL("sym= is too long");
			snprintf(r->sym, sizeof r->sym, "%s", v);
			r->keys |= CT_RK_SYM;
		} else if (!strcmp(k, "rank")) {
			int64_t n;
			if (!parse_dec(v, &n) || n > 1000000)
				FAIL("rank=%s is not a rank number", v);
			r->rank = (int)n;
			r->keys |= CT_RK_RANK;
		} else if (!strcmp(k, "when")) {
			if (!parse_when(v, &r->when_lo, &r->when_hi))
				FAIL("when=%s is not N, N..M or N+ (counted from 1)", v);
		} else if (!strcmp(k, "delay")) {
			if (ct_parse_duration(v, &r->delay_ns) < 0)
				FAIL("delay=%s is not a duration such as 30s, 250ms or 1.5s", v);
			if (!have_action)
				r->action = CT_INJ_DELAY;
		} else if (!strcmp(k, "error") || !strcmp(k, "retval") || !strcmp(k, "status") ||
			   !strcmp(k, "value") || !strcmp(k, "version")) {
			if (have_action)
				FAIL("only one of error=, retval=, status=, value=, version= per rule");
			have_action = true;
			if (!strcmp(k, "error")) {
				if (fam != F_IO_OPEN && fam != F_IO_IOCTL && fam != F_DLOPEN && fam != F_DLSYM)
					FAIL("error= applies to open, ioctl, dlopen and dlsym; %s returns a code: use retval=", r->call_name);
				if (fam == F_DLOPEN && (!strcmp(v, "ELFCLASS32") || !strcmp(v, "ELFCLASS64"))) {
					r->elfclass = v[8] == '3' ? 32 : 64;
					r->value = 8; /* ENOEXEC, what the loader sets */
				} else if (ct_rule_errno(v, &r->value) < 0) {
					FAIL("unknown errno '%s' (e.g. ENOENT, EPERM, EACCES, EIO, EINVAL)", v);
				}
				r->action = CT_INJ_ERROR;
			} else if (!strcmp(k, "retval")) {
				bool ok;
				if (fam != F_DRIVER && fam != F_RUNTIME && fam != F_NVML)
					FAIL("retval= applies to driver, runtime and NVML calls; for %s use error=", r->call_name);
				if (parse_i64(v, &r->value)) {
					/* CUresult, cudaError_t and nvmlReturn_t are all >= 0 */
					if (r->value < 0 || r->value > 0x7fffffff)
						FAIL("retval=%s is not a code (a name or a number >= 0)", v);
					ok = true;
				}
				else if (fam == F_DRIVER)
					ok = lookup_code(ct_gen_cu_results, CT_GEN_CU_RESULTS_N, v, &r->value);
				else if (fam == F_RUNTIME)
					ok = lookup_code(ct_gen_cudart_errors, CT_GEN_CUDART_ERRORS_N, v, &r->value);
				else
					ok = lookup_code(ct_gen_nvml_returns, CT_GEN_NVML_RETURNS_N, v, &r->value);
				if (!ok)
					FAIL("unknown %s code '%s'", fam == F_DRIVER ? "CUresult" :
						       fam == F_RUNTIME ? "cudaError" : "NVML return", v);
				r->action = CT_INJ_RETVAL;
			} else if (!strcmp(k, "status")) {
				if (fam != F_IO_IOCTL)
					FAIL("status= applies to ioctl, not to %s", r->call_name);
				if (!parse_i64(v, &r->value) &&
				    !lookup_code(ct_gen_nv_status, CT_GEN_NV_STATUS_N, v, &r->value))
					FAIL("unknown NV_STATUS '%s' (e.g. NV_ERR_INSUFFICIENT_PERMISSIONS or 0x1b)", v);
				if (r->value < 0 || r->value > 0xffffffffll)
					FAIL("status=%s is out of range", v);
				r->action = CT_INJ_STATUS;
			} else if (!strcmp(k, "value")) {
				if (!calls[ci].has_value && fam != F_IO_IOCTL)
					FAIL("value= applies to version and count queries and RM controls (ioctl with "
					     "cmd=), not to %s",
					     r->call_name);
				if (!parse_i64(v, &r->value) || r->value < 0 || r->value > 0x7fffffff)
					FAIL("value=%s is not a number", v);
				r->action = CT_INJ_VALUE;
			} else {
				if (fam != F_IO_IOCTL)
					FAIL("version= applies to ioctl (the version handshake), not to %s", r->call_name);
				if (strlen(v) >= sizeof r->version)
					FAIL("version= is too long");
				snprintf(r->version, sizeof r->version, "%s", v);
				r->action = CT_INJ_VERSION;
			}
		} else {
			FAIL("unknown key '%s'", k);
		}
	}
	if (have_action && r->action == CT_INJ_VALUE && fam == F_IO_IOCTL && !(r->keys & CT_RK_CMD))
		FAIL("value= on ioctl needs cmd= (the RM control whose answer it replaces)");
	if (!have_action && !r->delay_ns)
		FAIL("rule '%s' has no action (error=, retval=, status=, value=, version= or delay=)", r->call_name);
	return 0;
}

int ct_rules_parse(const char *spec, struct ct_rule *rules, int max, char *err, size_t errlen)
{
	char buf[2048];
	char *save = NULL, *rule;
	int n = 0;

	if (!spec)
		return 0;
	if (strlen(spec) >= sizeof buf) {
		snprintf(err, errlen, "the rules are longer than %zu bytes", sizeof buf - 1);
		return -1;
	}
	snprintf(buf, sizeof buf, "%s", spec);
	for (rule = strtok_r(buf, ";", &save); rule; rule = strtok_r(NULL, ";", &save)) {
		char one[512], why[256];
		while (*rule == ' ' || *rule == '\t' || *rule == '\n')
			rule++;
		size_t len = strlen(rule);
		while (len && (rule[len - 1] == ' ' || rule[len - 1] == '\t' || rule[len - 1] == '\n'))
			rule[--len] = 0;
		if (!len)
			continue;
		if (n >= max) {
			snprintf(err, errlen, "more than %d rules", max);
			return -1;
		}
		if (len >= sizeof one) {
			snprintf(err, errlen, "rule '%.40s...' is too long", rule);
			return -1;
		}
		memcpy(one, rule, len + 1);
		if (parse_one(one, &rules[n], why, sizeof why) < 0) {
			snprintf(err, errlen, "bad rule '%s': %s", rule, why);
			return -1;
		}
		n++;
	}
	if (n == 0) {
		snprintf(err, errlen, "no rule in '%.60s' (want CALL:KEY=VALUE...)", spec);
		return -1;
	}
	return n;
}
