/*
 * One event -> the strings a person (text timeline) or a program (JSON,
 * Chrome trace, diagnosis) sees: call name, target, result, ok/failed, and
 * the recorded arguments as key/value pairs.
 *
 * Everything ioctl-specific sits behind ct_describe_ioctl() in
 * describe_ioctl.c, so the NVIDIA decoder can replace it without touching
 * the rest.  ct_describe() is stateless and allocation-free: the strings
 * live in the ct_desc itself (or are static), and bytes arguments point into
 * the trace, valid while the event is (during the ct_trace_events callback).
 */
#ifndef CT_DESCRIBE_H
#define CT_DESCRIBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

struct ct_json;
struct ct_nv_ioctl;

/* ---- ioctl ------------------------------------------------------------------- */

struct ct_ioctl_desc {
	char name[96];           /* "NV_ESC_RM_CONTROL", "UVM_INITIALIZE", "_IOC(RW,'F',0x2a,32)", "UVM cmd 0x30000001" */
	bool named;              /* name came from a table (else structural) */
	char node[48];           /* "nvidiactl", "nvidia0", "nvidia-uvm", ... ("fd" when unknown) */
	uint32_t node_word;      /* CT_FLD_NODE: CT_NODE_* << 16 | minor (0 unknown) */
	int32_t fd;              /* -1 when not recorded */
	uint64_t request;
	bool has_status;         /* a driver status was read from the block after the call */
	uint32_t status;         /* NV_STATUS */
	const char *status_name; /* "NV_ERR_INVALID_ARGUMENT", NULL when unnamed */
	bool is_warning;         /* NV_WARN_*: not a failure */
	bool has_ok;             /* ok overrides the generic ioctl rule (ret >= 0) */
	bool ok;
	char detail[256];        /* extra text for the timeline ("" none): command, class, ... */
};

/*
 * Fill *out for an ioctl event (out is cleared first).  For events that are
 * not ioctls, out gets node "fd" and name "ioctl".
 */
void ct_describe_ioctl(const struct ct_trace *t, const struct ct_event *ev, struct ct_ioctl_desc *out);
/* the decoded form behind the last ct_describe_ioctl() call (valid until the next) */
const struct ct_nv_ioctl *ct_describe_last_nv(void);

/* "nvidiactl", "nvidia0", "nvidia-uvm", ... for a CT_FLD_NODE word, into buf */
const char *ct_node_name(uint32_t node, char *buf, size_t len);

/* ---- any event ------------------------------------------------------------------ */

enum ct_arg_kind {
	CT_ARG_STR,    /* s */
	CT_ARG_INT,    /* i */
	CT_ARG_UINT,   /* u */
	CT_ARG_HEX,    /* u, shown (and written to JSON) as a "0x..." string */
	CT_ARG_BOOL,   /* b */
	CT_ARG_BYTES,  /* bytes/len: raw memory, written to JSON as a hex string */
};

struct ct_desc_arg {
	const char *key;         /* static string ("path", "flags", "block_in", ...) */
	size_t klen;             /* strlen(key) */
	enum ct_arg_kind kind;
	const char *s;
	int64_t i;
	uint64_t u;
	bool b;
	const unsigned char *bytes;
	uint32_t len;
};

#define CT_DESC_MAX_ARGS 32

struct ct_desc {
	const char *call;        /* "openat", "ioctl", "cuInit", "note", "call#77" */
	int fam;                 /* CT_FAM_*, 0 unknown */
	const char *family;      /* "io", "loader", "driver", "runtime", "nvml", "shim", "unknown" */
	bool is_note;            /* an instant event (CT_REC_NOTE) */
	bool returned;           /* has an exit record (notes: true) */
	bool ok;                 /* the call succeeded (see describe.c for the rule per family) */
	bool injected;           /* CT_RF_INJECTED or an INJECT field */
	bool has_inject;
	uint32_t inject_rule, inject_action;
	bool has_result;         /* ret is meaningful (the call returned) */
	bool ret_is_addr;        /* ret is a handle or pointer (dlopen, dlsym) */
	int64_t ret;
	int32_t err;             /* errno (0 none) */
	const char *errno_name;  /* "ENOENT", NULL when err == 0 or unknown */
	const char *result_name; /* errno name / CUresult / cudaError / nvmlReturn / "NULL"; NULL none */
	char target[512];        /* path, library, symbol, "fd 3 (nvidiactl) req 0xc020462a", "" */
	char text_args[768];     /* what the text timeline puts inside call(...) */
	char result[192];        /* text result: "3", "-1 ENOENT (No such file or directory)",
				  * "CUDA_ERROR_NO_DEVICE (100)", "NULL", "?" (never returned) */
	char detail[640];        /* text after the result ("-> 13000", dlerror, status, ...), "" none */
	bool is_ioctl;
	struct ct_ioctl_desc ioctl;  /* valid when is_ioctl */
	const struct ct_nv_ioctl *nv; /* the decoded ioctl (describe's scratch), NULL none */
	unsigned nargs;
	uint64_t arg_klens;      /* bit min(klen, 63) set for each argument's key */
	struct ct_desc_arg args[CT_DESC_MAX_ARGS];
	/* storage for string arguments (ct_describe clears the scalars before target, the
	 * first byte of each string, and counts nargs and arena_used from 0) */
	size_t arena_used;
	char arena[4096];
};

/* Describe one event (d is overwritten).  t gives the driver version for names. */
void ct_describe(const struct ct_trace *t, const struct ct_event *ev, struct ct_desc *d);
/* The same, with the key/value arguments (nargs, args[]) only when `what`
 * has CT_DESC_ARGS: the text timeline and the diagnosis use the strings
 * alone, and collecting every field as an argument is a good part of the
 * cost per event.  ct_describe() is ct_describe_ex(..., CT_DESC_ARGS). */
#define CT_DESC_ARGS 1u
void ct_describe_ex(const struct ct_trace *t, const struct ct_event *ev, struct ct_desc *d, unsigned what);
/* format 1.6: a record of a helper process the driver ran (waitpid, wait4,
 * posix_spawn*: shim/hooks_proc.c) */
static inline bool ct_proc_call(unsigned call)
{
	return call >= CT_CALL_waitpid && call <= CT_CALL_posix_spawnp;
}
/* such a helper exec'd and exited 0 */
bool ct_proc_ok(const struct ct_event *ev);
/* how it ended, in words: "exited 1", "killed by signal 9 (SIGKILL)", "its exec
 * failed: ENOENT, No such file or directory", "ENOENT (...)" for a spawn that
 * failed; "" when the record does not say */
void ct_proc_outcome(const struct ct_event *ev, char *buf, size_t n);

/* Write d's arguments as one JSON object value ({"path": "...", ...}).
 * Raw memory (parameter blocks, payloads) is written as a hex string only
 * when ct_desc_json_raw is set (show --raw); otherwise as KEY_bytes: length. */
void ct_desc_args_json(struct ct_json *j, const struct ct_desc *d);
extern bool ct_desc_json_raw;
/* the same with raw memory chosen by the caller (the Chrome export never has it) */
void ct_desc_args_json_ex(struct ct_json *j, const struct ct_desc *d, bool raw);
/* the same object written at o, the end of j's compact output (direct
 * writes, json.h); returns the new end */
char *ct_desc_args_at(struct ct_json *j, char *o, const struct ct_desc *d, bool raw);
/* the same way, at o: ,"result":N|null,"result_name":..,"errno":N,"errno_name":..
 * (show --json's events and the Chrome export's args both carry them) */
char *ct_desc_result_at(struct ct_json *j, char *o, const struct ct_desc *d);

/* "io", "loader", "driver", "runtime", "nvml", "shim"; "unknown" otherwise */
const char *ct_family_name(int fam);
/* CT_INJ_* -> "error", "retval", "status", "value", "version", "delay"; "none"/"action#N" */
const char *ct_inject_action_name(uint32_t a, char *buf, size_t len);

#endif
