/* Running programs under the shim: shared by run, probe, doctor and replay. */
#ifndef CT_RUN_H
#define CT_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "opts.h"

struct ct_run_opts {
	const char *dir_arg;    /* -o as given */
	const char *dir;        /* the trace directory in use (absolute) */
	bool dir_created;       /* ct_run_setup made it (it did not exist) */
	const char *lib_arg;
	const char *shim;       /* absolute path of libcutrace.so */
	char *inject;           /* ';'-joined rules (owned by the parser) */
	const char *scenario;
	const char *size;
	/* extra environment for the program: "NAME=VALUE" (set) or
	 * "NAME+=VALUE" (prepend to a ':' list) */
	const char *env[8];
	int nenv;
	bool quiet;
	bool mute_child;        /* the program's stdout/stderr go to /dev/null */
	bool no_context;        /* the report leaves out the timeline (probe showed it whole) */
	bool json;
	bool print_only;
	bool no_time;   /* --no-time: stable output (tracer.h ct_stable) */
	bool keep_pids; /* --pids: with --no-time, the real pids */
	/* --timeout: SIGKILL the program and every process of its tree after
	 * this long (0: no limit) */
	uint64_t timeout_ns;
	const char *timeout_arg;
};

/* The options run, probe and replay share: each command lists the rows it
 * takes in its own table (tracer/cmd/cmd_*.c) with these keys ('o' -o,
 * --output DIR; 'q' -q, --quiet), and hands their values to ct_run_opt. */
enum {
	CT_RUN_O_INJECT = CT_OPT_FIRST_LONG + 0x40, /* --inject RULE (repeatable) */
	CT_RUN_O_SCENARIO,                          /* --scenario NAME */
	CT_RUN_O_SIZE,                              /* --size SIZE (CT_ARG_SIZE) */
	CT_RUN_O_TIMEOUT,                           /* --timeout DURATION (CT_ARG_DURATION) */
	CT_RUN_O_LIB,                               /* --lib PATH */
	CT_RUN_O_NO_TIME,                           /* --no-time */
	CT_RUN_O_PIDS,                              /* --pids */
	CT_RUN_O_HELP_INJECT,                       /* --help-inject: the command prints the grammar */
};
/* the rows that read alike in every command's table */
#define CT_RUN_ROW_LIB                                                                                       \
	{                                                                                                    \
		"lib", CT_RUN_O_LIB, CT_ARG_STRING, "PATH",                                                  \
			"libcutrace.so to preload (default: found next to cutrace)"                          \
	}
#define CT_RUN_ROW_PIDS                                                                                      \
	{                                                                                                    \
		"pids", CT_RUN_O_PIDS, CT_ARG_NONE, NULL, "with --no-time: the real pids"                    \
	}
/* probe and replay: run's own row says less */
#define CT_RUN_ROW_HELP_INJECT_AS_RUN                                                                        \
	{                                                                                                    \
		"help-inject", CT_RUN_O_HELP_INJECT, CT_ARG_NONE, NULL,                                      \
			"print the fault injection rule grammar (as 'cutrace run --help-inject')"            \
	}
/* empty options (o->inject: an empty rule list owned here) */
void ct_run_opts_init(struct ct_run_opts *o);
/* one of the shared options into o: 1 taken, 0 not one of them, -1 a bad
 * value (said in one line, as ct_opts_error) */
int ct_run_opt(const struct ct_cmd_spec *c, struct ct_run_opts *o, int key, const struct ct_optval *v);
/* resolve scenario, validate rules, find the shim, prepare the directory */
int ct_run_setup(struct ct_run_opts *o);
/* fork/exec argv under the shim; *status = the program's exit status (128+N;
 * 137 when o->timeout_ns ran out and the program's tree was killed) */
int ct_spawn_traced(const struct ct_run_opts *o, char **argv, int *status);
/* what the last ct_spawn_traced saw of its child's end */
struct ct_spawn_result {
	int pid;     /* the direct child */
	bool waited; /* wait_status is valid */
	int wait_status;
	bool timed_out;       /* the --timeout ran out: the tree was killed */
	uint64_t end_mono_ns; /* when it ended or was killed (CLOCK_MONOTONIC) */
	char limit[32];       /* the --timeout, "60 s" */
	const int *killed;    /* the other processes killed at the timeout */
	int nkilled;
};
const struct ct_spawn_result *ct_spawn_last(void);
struct ct_proc_end;
/* how process pid (of the run into dir) ended, as far as the last spawn
 * knows: last_image is false for a trace of pid that a later exec of the
 * same pid replaced; exited: the trace says it ran its exit handlers */
void ct_spawn_end_of(const char *dir, uint32_t pid, bool last_image, bool exited, struct ct_proc_end *e);
/* ct_spawn_end_of for every trace of a run, in the order of paths */
void ct_run_proc_ends(const char *dir, char **paths, int n, struct ct_proc_end *ends);
/* "60 s", "700 ms" */
const char *ct_format_duration(uint64_t ns, char *buf, size_t len);
/* why the shim would record nothing in the program (CUTRACE_DISABLE
 * inherited), "" when tracing is on */
const char *ct_tracing_off_reason(void);
/* after the run: the trace directory ct_run_setup made, removed when it
 * holds no trace; true when removed */
bool ct_run_dir_remove_empty(const struct ct_run_opts *o);
/* the trace directory as the output names it: o->dir, but under --no-time
 * a directory cutrace named (run-DATE-TIME-PID) as BASE/run-<time> */
const char *ct_run_dir_shown(const struct ct_run_opts *o, char *buf, size_t len);
int ct_find_shim(char *out, size_t len);
int ct_prepare_dir(const char *dir, char *why, size_t whylen);
int ct_default_run_dir(char *out, size_t len);

/* after a run: one-line verdict per traced process (+ timeline of failures);
 * returns the number of failed processes */
int ct_run_report(const struct ct_run_opts *o, FILE *out);

/* --scenario NAME: append the scenario's rules to o->inject; -1 unknown */
int ct_scenario_rules(const char *name, struct ct_run_opts *o);

#include "diag.h"

/* The bare probe run quietly for `doctor --check` and `--format=prometheus`:
 * its verdict and what it measured. */
struct ct_probe_result {
	int status;          /* 0 CUDA initialized, 1 it failed, -1 could not run or no trace */
	char why[256];       /* status -1: why */
	struct ct_verdict v; /* status 0/1 */
	bool have_init;      /* cuInit returned: init_ns is its duration */
	uint64_t init_ns;
	int init_code;  /* what cuInit returned */
	int devices;    /* cuDeviceGetCount, -1 unknown */
	char dir[4096]; /* the trace directory */
	char dir_shown[4096]; /* as said: under --no-time .../run-<time> */
};
/* Run the probe under the shim (timeout_ns: its tree is killed after that
 * long, a hang becomes a verdict; 0 no limit).  Fills *pr; returns status. */
int ct_probe_quiet(struct ct_probe_result *pr, uint64_t timeout_ns);
/* remove the probe's trace directory (a healthy check leaves nothing) */
void ct_probe_discard(const struct ct_probe_result *pr);

struct ct_verdict;
/* Rules (and environment, and the scenario when the recording named one)
 * that recreate v's root failure, recorded in the trace at path.  Returns
 * 0, or -1 with why when it cannot be recreated from user space. */
int ct_replay_rules(const char *path, const struct ct_verdict *v, char *rules, size_t len,
		    char *env, size_t envlen, const char **scenario, char *why, size_t whylen);

/* the bare driver probe (cutrace-probe) next to this executable, or in
 * ../libexec/cutrace: 0 with its path in probe, -1; 0 with probe "" when
 * this is the one-file cutrace, which carries its own (ct_probe_path) */
int ct_find_probe(char *probe, size_t len);
/* after ct_run_setup: the carried probe written out for a run in dir when
 * probe is "" (else nothing to do); 0, or -1 said on stderr */
int ct_probe_path(char *probe, size_t len, const char *dir);

/* how long probe and doctor give the probe by default */
#define CT_PROBE_TIMEOUT    "60s"
#define CT_PROBE_TIMEOUT_NS 60000000000ull

struct ct_json;
/* The probe step of doctor: run the probe under the shim and report its
 * verdict.  Exactly one of j and text is non-NULL: with j, write ONE JSON
 * value (the caller wrote the key "probe"); with text, print a short
 * section.  Returns CT_EXIT_OK (probe healthy), CT_EXIT_PROBLEM (the probe
 * shows a failure, or did not finish within timeout_ns: 0 no limit), or -1
 * (skipped / not available). */
int ct_doctor_run_probe(struct ct_json *j, FILE *text, uint64_t timeout_ns, const char *timeout_arg);

#endif
