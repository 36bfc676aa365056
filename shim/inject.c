/*
 * Fault injection inside the traced process.
 *
 * Rules come from CUTRACE_INJECT (the grammar is in inject_rules.c, shared
 * with the CLI).  They are parsed once at start-up into a fixed table; with
 * no rules ct_inj_active is 0 and no hook looks further.  A malformed
 * CUTRACE_INJECT gives one warning on stderr and injects nothing.
 *
 * Where each action acts, so that the real stack produces the error users
 * see in the field:
 *   open    error=  the open fails with that errno, the real open is skipped
 *   ioctl   error=  fails before reaching the kernel
 *           status= the real ioctl runs, then the NV_STATUS is written into
 *                   the block's status field (where the driver writes it)
 *           version= the real ioctl runs, then the kernel's version string in
 *                   the handshake reply is replaced (CHECK_VERSION_STR, or the
 *                   strings of NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION[_V2])
 *   dlopen  error=  fails like the loader would, with its message in dlerror()
 *   calls   retval= returns the code without calling the real function
 *           value=  the real call runs, then the reported number is replaced
 *   any     delay=  sleeps before the real call (a hang, with a long delay),
 *                   after the call's enter record is in the file
 */
#include "shim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inject_rules.h"
#include "cutrace_gen/shim_tables.h"

int ct_inj_active;
int ct_inj_bad;
static struct ct_rule rules[CT_RULES_MAX];
static bool rule_on[CT_RULES_MAX];
static int nrules;

/* tracer/decode/ABI.md §2: escape numbers the actions need */
#define NR_RM_CONTROL  0x2a
#define NR_RM_ALLOC    0x2b
#define NR_CHECK_VERSION_STR 210
#define CMD_GET_BUILD_VERSION    0x101u
#define CMD_GET_BUILD_VERSION_V2 0x13eu

static int my_rank(void)
{
	static const char *const vars[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK",
					    "PMI_RANK", "LOCAL_RANK", NULL };
	for (int i = 0; vars[i]; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v) {
			char *end;
			long r = strtol(v, &end, 10);
			if (!*end && r >= 0)
				return (int)r;
		}
	}
	return -1;
}

/* the note every trace of the tree carries (its context keeps 200 bytes) */
static char inj_note[400];
static char inj_err[300];
static pid_t inj_said_by; /* 0: this process said it on stderr */

static void inj_note_set(const char *err)
{
	if (err != inj_err)
		snprintf(inj_err, sizeof inj_err, "%s", err);
	if (inj_said_by > 0)
		snprintf(inj_note, sizeof inj_note,
			 "CUTRACE_INJECT refused, nothing is injected (said on stderr by pid %d): %s",
			 (int)inj_said_by, inj_err);
	else if (inj_said_by < 0)
		snprintf(inj_note, sizeof inj_note,
			 "CUTRACE_INJECT refused, nothing is injected (said on stderr by another process of "
			 "its tree): %s",
			 inj_err);
	else
		snprintf(inj_note, sizeof inj_note, "CUTRACE_INJECT refused, nothing is injected: %s",
			 inj_err);
	ct_note_ctx(inj_note);
}

void ct_inject_init(void)
{
	const char *spec = getenv("CUTRACE_INJECT");
	char err[300];
	int n, rank;

	if (!spec || !*spec)
		return;
	n = ct_rules_parse(spec, rules, CT_RULES_MAX, err, sizeof err);
	if (n < 0) {
		ct_inj_bad = 1;
		/* once per process tree, not once per exec'd image; every
		 * trace says it in its notes */
		inj_said_by = ct_warn_tree("inject", "ignoring CUTRACE_INJECT, nothing is injected: %s", err);
		inj_note_set(err);
		return;
	}
	rank = my_rank();
	for (int i = 0; i < n; i++) {
		rule_on[i] = !(rules[i].keys & CT_RK_RANK) || rules[i].rank == rank;
		if (rule_on[i])
			ct_inj_active = 1;
	}
	nrules = n;
	ct_log(1, "%d injection rule(s), %s in this process (rank %d)", n,
	       ct_inj_active ? "active" : "none active", rank);
}

void ct_inject_after_fork(void)
{
	/* a child counts its own calls (when= is per process) */
	for (int i = 0; i < nrules; i++)
		__atomic_store_n(&rules[i].seen, 0, __ATOMIC_RELAXED);
	/* its notes start empty: the refused rules are noted again, as
	 * said on stderr by the parent (or whoever in the tree said it) */
	if (ct_inj_bad) {
		if (!inj_said_by)
			inj_said_by = getppid();
		inj_note_set(inj_err);
	}
}

const char *ct_inject_spec(void) CT_HIDDEN;
const char *ct_inject_spec(void)
{
	return (ct_inj_active || ct_inj_bad) ? getenv("CUTRACE_INJECT") : NULL;
}

void ct_sleep_ns(uint64_t ns) CT_HIDDEN;
void ct_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	int saved = errno;

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	errno = saved;
}

/* count one matching call and say whether `when` selects it */
static bool when_hits(struct ct_rule *r)
{
	uint64_t n = __atomic_add_fetch(&r->seen, 1, __ATOMIC_RELAXED);
	return n >= r->when_lo && n <= r->when_hi;
}

static bool covers(const struct ct_rule *r, unsigned call)
{
	return call < 64 && (r->calls & (1ull << call));
}

static bool dev_matches(const struct ct_rule *r, uint32_t node)
{
	if (!(r->keys & CT_RK_DEV))
		return true;
	if ((int)(node >> 16) != r->dev_kind)
		return false;
	return r->dev_minor == CT_RULE_DEV_ANY_MINOR || (int)(node & 0xffff) == r->dev_minor;
}

/* ---- open ------------------------------------------------------------------------------ */
/* The delay is handed back (*delay_ns), not slept here: the caller records
 * the enter first, so an open held forever still shows in the trace. */
int ct_inject_open(unsigned call, const char *path, int flags, int *err, uint32_t *rule,
		   uint64_t *delay_ns) CT_HIDDEN;
int ct_inject_open(unsigned call, const char *path, int flags, int *err, uint32_t *rule,
		   uint64_t *delay_ns)
{
	(void)flags;
	*delay_ns = 0;
	for (int i = 0; i < nrules; i++) {
		struct ct_rule *r = &rules[i];
		if (!rule_on[i] || !covers(r, call))
			continue;
		if ((r->keys & CT_RK_PATH) && !ct_glob_match(r->glob, path))
			continue;
		if ((r->keys & CT_RK_DEV) && !dev_matches(r, ct_classify_path(path)))
			continue;
		if (!when_hits(r))
			continue;
		*rule = (uint32_t)i;
		*delay_ns = r->delay_ns;
		if (r->action == CT_INJ_ERROR) {
			*err = (int)r->value;
			return 2;
		}
		return 1;
	}
	return 0;
}

/* ---- ioctl -------------------------------------------------------------------------------- */
static bool is_uvm(uint32_t node)
{
	unsigned k = node >> 16;
	return k == CT_NODE_UVM || k == CT_NODE_UVM_TOOLS;
}

static bool read_u32(const void *base, size_t off, uint32_t *v)
{
	return ct_safe_copy(v, (const unsigned char *)base + off, 4) == 4;
}

/* is this request part of the version handshake? */
static bool is_handshake(uint32_t node, unsigned long req, void *arg)
{
	uint32_t cmd;
	unsigned nr = (unsigned)(req & 0xff);

	if (is_uvm(node))
		return false;
	if (nr == NR_CHECK_VERSION_STR)
		return true;
	return nr == NR_RM_CONTROL && read_u32(arg, 8, &cmd) &&
	       (cmd == CMD_GET_BUILD_VERSION || cmd == CMD_GET_BUILD_VERSION_V2);
}

static bool ioctl_matches(const struct ct_rule *r, uint32_t node, unsigned long req, void *arg)
{
	uint32_t v;

	if (!dev_matches(r, node))
		return false;
	if (r->keys & CT_RK_NR) {
		if (r->nr_ns == 2 || (r->nr_ns == 0 && is_uvm(node))) {
			if (!is_uvm(node) || (uint32_t)req != r->nr)
				return false;
		} else if (is_uvm(node) || (req & 0xff) != r->nr) {
			return false;
		}
	}
	if ((r->keys & CT_RK_CMD) &&
	    (is_uvm(node) || (req & 0xff) != NR_RM_CONTROL || !read_u32(arg, 8, &v) || v != r->cmd))
		return false;
	if ((r->keys & CT_RK_CLASS) &&
	    (is_uvm(node) || (req & 0xff) != NR_RM_ALLOC || !read_u32(arg, 12, &v) || v != r->cls))
		return false;
	if (r->action == CT_INJ_VERSION && !is_handshake(node, req, arg))
		return false;
	return true;
}

/* The delay is handed back (*delay_ns), not slept here: the caller records
 * the enter first, so a call held forever still shows in the trace. */
int ct_inject_ioctl_before(uint32_t node, unsigned long req, void *arg, int *err, uint32_t *after,
			   uint32_t *rule, uint64_t *delay_ns) CT_HIDDEN;
int ct_inject_ioctl_before(uint32_t node, unsigned long req, void *arg, int *err, uint32_t *after,
			   uint32_t *rule, uint64_t *delay_ns)
{
	int res = 0;

	*after = 0;
	*delay_ns = 0;
	for (int i = 0; i < nrules; i++) {
		struct ct_rule *r = &rules[i];
		if (!rule_on[i] || !covers(r, CT_CALL_ioctl) || !ioctl_matches(r, node, req, arg))
			continue;
		if (!when_hits(r))
			continue;
		*rule = (uint32_t)i;
		*delay_ns += r->delay_ns;
		if (r->action == CT_INJ_ERROR) {
			*err = (int)r->value;
			return 2;
		}
		if (r->action == CT_INJ_STATUS || r->action == CT_INJ_VERSION || r->action == CT_INJ_VALUE)
			*after |= 1u << i;
		res = 1;
	}
	return res;
}

/* where the driver writes the NV_STATUS of this request, -1 if nowhere */
static int status_offset(uint32_t node, unsigned long req)
{
	if (is_uvm(node)) {
		int off = -1;
		for (unsigned i = 0; i < CT_GEN_UVM_SIZES_N; i++) {
			const struct ct_gen_uvm_size *s = &ct_gen_uvm_sizes[i];
			if (s->nr == (uint32_t)req && (off < 0 || !ct_drv_code || s->min_drv <= ct_drv_code))
				off = s->status_off;
		}
		return off;
	}
	uint32_t nr = (uint32_t)(req & 0xff), size = (uint32_t)((req >> 16) & 0x3fff);
	int off = -1;
	for (unsigned i = 0; i < CT_GEN_ESC_STATUS_N; i++) {
		const struct ct_gen_esc_status *s = &ct_gen_esc_status[i];
		if (s->nr == nr && (s->size == 0 || s->size == size) &&
		    (off < 0 || !ct_drv_code || s->min_drv <= ct_drv_code))
			off = s->status_off;
	}
	return off;
}

static void put_version(char *dst, size_t cap, const char *v)
{
	size_t n = strlen(v);

	if (!cap)
		return;
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	memset(dst + n, 0, cap - n);
}

/* replace the kernel's answer in a handshake block the kernel just wrote */
static void inject_version(unsigned long req, void *arg, const char *v, int *ret, int *err)
{
	unsigned char *b = arg;

	if ((req & 0xff) == NR_CHECK_VERSION_STR) {
		char client[65];
		/* the kernel copies its own string over the client's when they
		 * differ, sets reply = RECOGNIZED and fails with -EINVAL (ABI.md §4) */
		memcpy(client, b + 8, 64);
		client[64] = 0;
		if (strcmp(client, v)) {
			uint32_t one = 1;
			memcpy(b + 4, &one, 4);
			put_version((char *)b + 8, 64, v);
			*ret = -1;
			*err = EINVAL;
		}
		return;
	}
	/* RM_CONTROL: payload pointer @16, command @8 */
	uint32_t cmd, size_strings;
	uint64_t pay;
	memcpy(&cmd, b + 8, 4);
	memcpy(&pay, b + 16, 8);
	if (!pay || *ret != 0)
		return;
	if (cmd == CMD_GET_BUILD_VERSION) {
		unsigned char *p = (unsigned char *)(uintptr_t)pay;
		uint64_t drv, ver;
		memcpy(&size_strings, p, 4);
		memcpy(&drv, p + 8, 8);
		memcpy(&ver, p + 16, 8);
		if (drv)
			put_version((char *)(uintptr_t)drv, size_strings, v);
		if (ver)
			put_version((char *)(uintptr_t)ver, size_strings, v);
	} else if (cmd == CMD_GET_BUILD_VERSION_V2) {
		/* inline: driverVersion @0, version @256 (both 256 bytes) */
		put_version((char *)(uintptr_t)pay, 256, v);
		put_version((char *)(uintptr_t)pay + 256, 256, v);
	}
}

/* value= on an RM control (cmd=): the control's first 32-bit answer, written
 * over what RM wrote when the real call succeeded (NVOS54: params @16,
 * paramsSize @24, status @28; ABI.md §3) */
static bool inject_answer(uint32_t node, unsigned long req, void *arg, uint32_t v, int ret)
{
	unsigned char *b = arg;
	uint32_t st, size, old;
	uint64_t pay;

	if (is_uvm(node) || (req & 0xff) != NR_RM_CONTROL || ret != 0)
		return false;
	memcpy(&pay, b + 16, 8);
	memcpy(&size, b + 24, 4);
	memcpy(&st, b + 28, 4);
	/* RM wrote its answer there (it copies the params back on success): the
	 * pages are the program's and writable; read them first all the same */
	if (!pay || size < 4 || st != 0 || !read_u32((const void *)(uintptr_t)pay, 0, &old))
		return false;
	memcpy((void *)(uintptr_t)pay, &v, 4);
	return true;
}

int ct_inject_ioctl_after(uint32_t node, unsigned long req, void *arg, uint32_t after, int *ret,
			  int *err, uint32_t *rule, uint32_t *action) CT_HIDDEN;
int ct_inject_ioctl_after(uint32_t node, unsigned long req, void *arg, uint32_t after, int *ret,
			  int *err, uint32_t *rule, uint32_t *action)
{
	int done = 0;

	for (int i = 0; i < nrules && after; i++) {
		struct ct_rule *r = &rules[i];
		if (!(after & (1u << i)))
			continue;
		after &= ~(1u << i);
		/* -EFAULT means the block was never read back: nothing to change */
		if (*ret < 0 && *err == EFAULT)
			continue;
		if (r->action == CT_INJ_STATUS) {
			int off = status_offset(node, req);
			uint32_t st = (uint32_t)r->value;
			if (off < 0)
				continue;
			memcpy((unsigned char *)arg + off, &st, 4);
		} else if (r->action == CT_INJ_VALUE) {
			if (!inject_answer(node, req, arg, (uint32_t)r->value, *ret))
				continue;
		} else {
			inject_version(req, arg, r->version, ret, err);
		}
		*rule = (uint32_t)i;
		*action = (uint32_t)r->action;
		done = 1;
	}
	return done;
}

/* ---- dlopen / dlsym ------------------------------------------------------------------------ */
/* dlopen/dlsym: the delay is handed back (*delay_ns), the caller sleeps after
 * writing the call's enter record, so a held call reads as one */
int ct_inject_dlopen(const char *file, char *msg, size_t msglen, uint32_t *rule, uint64_t *delay_ns) CT_HIDDEN;
int ct_inject_dlopen(const char *file, char *msg, size_t msglen, uint32_t *rule, uint64_t *delay_ns)
{
	for (int i = 0; i < nrules; i++) {
		struct ct_rule *r = &rules[i];
		if (!rule_on[i] || !covers(r, CT_CALL_dlopen))
			continue;
		if ((r->keys & CT_RK_LIB) && !ct_glob_match(r->glob, file ? file : ""))
			continue;
		if (!when_hits(r))
			continue;
		*rule = (uint32_t)i;
		*delay_ns = r->delay_ns;
		if (r->action != CT_INJ_ERROR)
			return 1;
		/* the loader's own wording (elf/dl-load.c) */
		if (r->elfclass)
			snprintf(msg, msglen, "%s: wrong ELF class: ELFCLASS%d", file, r->elfclass);
		else
			snprintf(msg, msglen, "%s: cannot open shared object file: %s", file,
				 ct_errno_text((int)r->value));
		return 2;
	}
	return 0;
}

int ct_inject_dlsym(const char *name, uint32_t *rule, uint64_t *delay_ns) CT_HIDDEN;
int ct_inject_dlsym(const char *name, uint32_t *rule, uint64_t *delay_ns)
{
	for (int i = 0; i < nrules; i++) {
		struct ct_rule *r = &rules[i];
		if (!rule_on[i] || !covers(r, CT_CALL_dlsym))
			continue;
		if ((r->keys & CT_RK_SYM) && !ct_glob_match(r->sym, name))
			continue;
		if (!when_hits(r))
			continue;
		*rule = (uint32_t)i;
		*delay_ns = r->delay_ns;
		return r->action == CT_INJ_ERROR ? 2 : 1;
	}
	return 0;
}

/* ---- driver, runtime and NVML calls ------------------------------------------------------------ */
int ct_inject_call(unsigned call, const char *sym, int64_t *retval, uint64_t *delay_ns,
		   uint32_t *rule) CT_HIDDEN;
int ct_inject_call(unsigned call, const char *sym, int64_t *retval, uint64_t *delay_ns,
		   uint32_t *rule)
{
	for (int i = 0; i < nrules; i++) {
		struct ct_rule *r = &rules[i];
		if (!rule_on[i] || !covers(r, call))
			continue;
		if (r->action != CT_INJ_RETVAL && r->action != CT_INJ_DELAY)
			continue;
		if ((r->keys & CT_RK_SYM) && !ct_glob_match(r->sym, sym ? sym : ""))
			continue;
		if (!when_hits(r))
			continue;
		*rule = (uint32_t)i;
		*delay_ns = r->delay_ns;
		if (r->action == CT_INJ_RETVAL) {
			*retval = r->value;
			return 2;
		}
		return 1;
	}
	return 0;
}

int ct_inject_value(unsigned call, int64_t *value, uint32_t *rule) CT_HIDDEN;
int ct_inject_value(unsigned call, int64_t *value, uint32_t *rule)
{
	for (int i = 0; i < nrules; i++) {
		struct ct_rule *r = &rules[i];
		if (!rule_on[i] || !covers(r, call) || r->action != CT_INJ_VALUE)
			continue;
		if (!when_hits(r))
			continue;
		if (r->delay_ns)
			ct_sleep_ns(r->delay_ns);
		*rule = (uint32_t)i;
		*value = r->value;
		return 1;
	}
	return 0;
}
