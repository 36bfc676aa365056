/*
 * Diagnosis: from one process's events to a verdict a person can act on.
 *
 * The verdict names the failing layer (a fixed vocabulary), the root step
 * (the earliest low-level failure that explains the final error, not the
 * last failing call), one sentence with the values, and the fix.  It is
 * computed in one streaming pass with bounded state: ct_diag_event() is fed
 * every event in order by whoever iterates the trace (show, run, probe).
 *
 * facts.c collects the facts, rules.c turns them into the verdict (ordered
 * rules, tables of codes and fixes), verdict.c prints one, job.c groups
 * many, context.c prints the timeline around a root step; compat.c is the
 * driver/runtime version contract.
 */
#ifndef CT_DIAG_H
#define CT_DIAG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "compat.h"
#include "describe.h"
#include "nvdecode.h"
#include "trace.h"

struct ct_json;

enum ct_layer {
	CT_LAYER_NONE = 0,       /* healthy */
	CT_LAYER_LOADER,         /* libcuda/libcudart/NVML not found, stub, wrong class, wrong library */
	CT_LAYER_DEVICE_NODE,    /* an open of /dev/nvidia* failed */
	CT_LAYER_KERNEL_HANDSHAKE, /* user-space and kernel driver versions disagree */
	CT_LAYER_RESOURCE_MANAGER, /* an RM/frontend ioctl failed or carried a failing status */
	CT_LAYER_UVM,            /* an nvidia-uvm ioctl failed */
	CT_LAYER_DRIVER_API,     /* a driver call failed with no lower cause */
	CT_LAYER_RUNTIME,        /* cudart failed although the driver is fine */
};
/* "none", "loader", "device-node", "kernel-handshake", "resource-manager", "uvm",
 * "driver-api", "runtime" */
const char *ct_layer_name(enum ct_layer l);

/* how a process ended, as far as anybody saw it: the shim's exit handler
 * (the trace header), or `cutrace run`, which waited for its child and
 * may have killed the program's tree at its --timeout */
enum ct_end_kind {
	CT_END_UNKNOWN = 0, /* no exit seen: killed, crashed, or still running */
	CT_END_EXITED,      /* ran its exit handlers (status not recorded) */
	CT_END_EXIT,        /* exited with status code */
	CT_END_SIGNAL,      /* killed by signal code */
	CT_END_TIMEOUT,     /* killed by cutrace at its --timeout (limit) */
	CT_END_RUNNING,     /* still running when cutrace looked */
};
struct ct_proc_end {
	enum ct_end_kind kind;
	int code;            /* EXIT: the status; SIGNAL: the signal number */
	uint64_t at_mono_ns; /* when it was seen to end (CLOCK_MONOTONIC), 0 unknown */
	char limit[32];      /* TIMEOUT: the limit, "60 s" */
};
/* "exit 0", "killed by SIGKILL", "timed out by cutrace after 60 s", ... */
const char *ct_end_text(const struct ct_proc_end *e, char *buf, size_t len);
/* "SIGKILL" ("signal 77" for one without a name) */
const char *ct_signal_name(int sig, char *buf, size_t len);

/* a reference to one event, copied out of the trace */
struct ct_diag_step {
	bool set;
	uint64_t seq;
	uint64_t t_ns;           /* relative to the process's first event */
	uint64_t end_ns;         /* when it returned (same base), UINT64_MAX never */
	uint32_t tid;
	bool injected; /* a rule marked this call */
	bool delayed;  /* ... and the rule only held it (delay=) */
	char call[32];
	char text[360];          /* "open64(\"/dev/nvidia-uvm\") = -1 EPERM" */
};

struct ct_verdict {
	bool ok;
	enum ct_layer layer;
	bool injected;           /* a rule fired on the root step or upstream of it */
	char scenario[48];       /* the `cutrace run --scenario` the process ran under ("" none) */
	bool hung;               /* a call entered and never returned */
	struct ct_proc_end end;  /* how the process ended */
	uint64_t end_rel_ns;     /* end.at_mono_ns from the first event, UINT64_MAX unknown */
	/* the slowest driver, runtime, NVML or loader call that returned, when it
	 * took a second or more ("cuInit(flags=0x0)", its duration) */
	char slow_call[96];
	uint64_t slow_ns;
	struct ct_diag_step step;     /* the root cause */
	struct ct_diag_step final;    /* the error the program saw */
	int final_code;               /* its code (CUresult / cudaError / NVML / errno), 0 none */
	char final_name[64];
	char summary[640];
	char fix[640];
	char hint[320];          /* e.g. why torch's message is misleading ("" none) */
	char notes[480];         /* secondary observations ("" none) */
	/* the compatibility contract */
	struct {
		int runtime_version;       /* 13000, 0 unknown */
		const char *runtime_from;  /* "cudaRuntimeGetVersion", "libcudart file name", "cuGetProcAddress" */
		int driver_version;        /* cuDriverGetVersion, 0 unknown */
		char kernel_version[32];   /* kernel module ("580.159.04"), "" unknown */
		char libcuda_version[32];  /* from the loaded file name, "" unknown */
		char libcuda_path[256];
		const char *libcuda_kind;  /* "host", "compat", "stub", "not loaded", "unknown" */
		struct ct_compat compat;
		char rule_text[320];       /* which rule applied and why */
	} contract;
	/* identity, for summaries of many processes */
	uint32_t pid;
	char host[64];
	char exe[128];
	int rank;                /* RANK/SLURM_PROCID/OMPI_COMM_WORLD_RANK/LOCAL_RANK, -1 none */
	/* what two processes must share to be one group of a job summary: layer,
	 * root step and what it was about, final code, hung, injected (no times,
	 * pids, fds or handles) */
	char group_key[200];
};

struct ct_diag;
/* allocate/free the accumulator (it holds a decoder scratch area) */
struct ct_diag *ct_diag_new(void);
void ct_diag_free(struct ct_diag *d);
void ct_diag_begin(struct ct_diag *d, struct ct_trace *t);
/* every event in stream order; desc is ct_describe()'s result for it */
void ct_diag_event(struct ct_diag *d, const struct ct_event *ev, const struct ct_desc *desc);
void ct_diag_end(struct ct_diag *d, const struct ct_trace_stats *st, struct ct_verdict *v);
/* what the caller knows of how the process ended (before ct_diag_end;
 * cleared by ct_diag_begin); the trace header's own record otherwise */
void ct_diag_set_end(struct ct_diag *d, const struct ct_proc_end *e);

/* open, stream and diagnose one file; -1 with err on a bad file */
int ct_diagnose_file(const char *path, struct ct_verdict *v, char *err, size_t errlen);
/* the same, with what the caller knows of the process's end (NULL: nothing) */
int ct_diagnose_file_end(const char *path, const struct ct_proc_end *end, struct ct_verdict *v, char *err,
			 size_t errlen);

/* output */
void ct_verdict_json(struct ct_json *j, const struct ct_verdict *v);
/* "OK" / "FAILED [layer] summary" one-liner (no newline) */
void ct_verdict_line(FILE *f, const struct ct_verdict *v);
/* the multi-line block: summary, step, fix, hint, contract */
void ct_verdict_text(FILE *f, const struct ct_verdict *v);
/* the same block less its first lines (verdict, why), for under a
 * ct_verdict_line or a job summary's group line that said them */
void ct_verdict_details(FILE *f, const struct ct_verdict *v);
/* would a job summary show a and b in one group (the same line)? */
bool ct_verdict_same_group(const struct ct_verdict *a, const struct ct_verdict *b);
/* the job summary's group lines, each followed by ct_verdict_details of
 * its first member and, when context_paths is not NULL, the timeline
 * around that member's failing step (context_paths[i] is v[i]'s file) */
void ct_summary_text_ex(FILE *f, const struct ct_verdict *v, int n, int unreadable,
			char *const *context_paths, bool details);

/* the timeline around v->step (n events before and after), text lines */
int ct_print_step_context(FILE *f, const char *path, const struct ct_verdict *v, unsigned n);

/* many processes: group verdicts, print the summary table (text) */
struct ct_verdict_group;
void ct_summary_text(FILE *f, const struct ct_verdict *v, int n, int unreadable);
void ct_summary_json(struct ct_json *j, const struct ct_verdict *v, int n, int unreadable);

#endif
