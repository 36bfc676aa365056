/* Shared declarations of the cutrace CLI. */
#ifndef CT_TRACER_H
#define CT_TRACER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifndef CUTRACE_VERSION
#define CUTRACE_VERSION "0.0.0"
#endif

/* exit codes of every command */
#define CT_EXIT_OK      0   /* healthy / success */
#define CT_EXIT_PROBLEM 1   /* a problem was found (a process failed, doctor found a fault) */
#define CT_EXIT_USAGE   2   /* bad usage, bad input file, internal error */

#define CT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* "cutrace: " + message + newline on stderr */
void ct_err(const char *fmt, ...) CT_PRINTF(1, 2);
void ct_warn(const char *fmt, ...) CT_PRINTF(1, 2);
_Noreturn void ct_die(int code, const char *fmt, ...) CT_PRINTF(2, 3);

/* colour: --color=always, or (auto) f is a terminal, NO_COLOR is unset and
 * TERM is not dumb; never with --color=never (opts.c reads --color) */
enum ct_color_mode { CT_COLOR_AUTO, CT_COLOR_ALWAYS, CT_COLOR_NEVER };
void ct_color_set_mode(enum ct_color_mode m);
bool ct_color_on(FILE *f);
enum ct_color { CT_C_RESET, CT_C_BOLD, CT_C_RED, CT_C_GREEN, CT_C_YELLOW, CT_C_DIM, CT_C_CYAN };
/* the escape sequence for c, or "" when colour is off for f */
const char *ct_c(FILE *f, enum ct_color c);

/*
 * Stable output (--no-time of show, run, probe and replay): what two runs of
 * the same program print alike.  On, the outputs leave out times, durations
 * and the start time, write addresses (handles, pointers) as "<addr>" (NULL
 * stays NULL), and show pids and tids as ordinals #1, #2, ... in the order
 * they are first shown, unless pids are kept (--pids).  util.c.
 */
void ct_stable_set(bool on, bool keep_pids);
bool ct_stable(void);
/* pids and tids are shown as ordinals */
bool ct_stable_ids(void);
/* a pid or tid as shown: the real one, or under ct_stable_ids its ordinal */
uint32_t ct_stable_id(uint32_t id);
/* the same as text: "22309", or "#2" under ct_stable_ids */
const char *ct_stable_idstr(uint32_t id, char *buf, size_t len);

/* a trace file's path as shown: under ct_stable the pid and the start time
 * in a name the shim made (HOST-PID-TIME.cutrace) become "#N" (or the
 * pid with --pids) and "<time>" */
const char *ct_stable_path(const char *path, uint32_t pid, char *buf, size_t len);
/* under ct_stable: every directory name cutrace gives a run
 * (run-YYYYMMDD-HHMMSS-PID, also with -N) in s as "run-<time>" (a path, or a
 * list of paths); returns s when there is none, else buf */
const char *ct_stable_rundir(const char *s, char *buf, size_t len);

/* the directory holding this executable (for finding libcutrace.so) */
int ct_self_dir(char *buf, size_t len);

#endif
