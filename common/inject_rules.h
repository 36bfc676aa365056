/*
 * Fault-injection rules: the grammar, shared by the shim (which reads
 * CUTRACE_INJECT) and the CLI (which checks --inject before the program
 * starts), so both accept and reject exactly the same text.
 *
 *   RULES := RULE (';' RULE)*
 *   RULE  := CALL (':' KEY '=' VALUE)*
 *
 * No allocation: rules parse into a caller-provided fixed array.
 */
#ifndef CT_INJECT_RULES_H
#define CT_INJECT_RULES_H

#include <stddef.h>
#include <stdint.h>

#define CT_RULES_MAX 16
#define CT_RULE_GLOB 160
#define CT_RULE_SYM 96
#define CT_RULE_VER 64

/* match keys present in a rule */
#define CT_RK_LIB   0x0001u
#define CT_RK_PATH  0x0002u
#define CT_RK_DEV   0x0004u
#define CT_RK_NR    0x0008u
#define CT_RK_SYM   0x0010u
#define CT_RK_RANK  0x0020u
#define CT_RK_CMD   0x0040u
#define CT_RK_CLASS 0x0080u

/* dev= kinds beyond the CT_NODE_* values: any /dev/nvidiaN */
#define CT_RULE_DEV_ANY_MINOR (-1)

struct ct_rule {
	uint64_t calls;          /* bit (1 << CT_CALL_x) for every call id it covers */
	char call_name[32];      /* as written */
	uint32_t keys;           /* CT_RK_* */
	char glob[CT_RULE_GLOB]; /* lib= or path= */
	int dev_kind;            /* CT_NODE_* */
	int dev_minor;           /* CT_RULE_DEV_ANY_MINOR or the minor */
	int nr_ns;               /* 0 any, 1 NVIDIA frontend/RM escape (_IOC_NR), 2 UVM command */
	uint32_t nr;
	uint32_t cmd;            /* RM_CONTROL command (cmd=) */
	uint32_t cls;            /* RM_ALLOC class (class=) */
	char sym[CT_RULE_SYM];
	int rank;
	int action;              /* CT_INJ_* (the main action; CT_INJ_DELAY when only delay=) */
	int64_t value;           /* errno, return code, NV_STATUS or reported value */
	int elfclass;            /* dlopen error=ELFCLASS32/64: loader's wrong-class message */
	char version[CT_RULE_VER];
	uint64_t delay_ns;
	uint64_t when_lo, when_hi; /* 1-based, inclusive; hi = UINT64_MAX for N+ */
	uint64_t seen;           /* matching calls so far (atomic in the shim) */
};

/*
 * Parse a ';'-separated list (blank rules between ';' are skipped, but a
 * list with no rule at all is an error).  Returns the number of rules (>= 1),
 * or -1 with a one-sentence reason in err naming the bad part.
 */
int ct_rules_parse(const char *spec, struct ct_rule *rules, int max, char *err, size_t errlen);

/* The grammar, for error messages and --help. */
extern const char ct_rules_grammar[];

/* glob match with * ? and [...]; a pattern without '/' matches the basename */
int ct_glob_match(const char *pattern, const char *text);

/* name tables (generated) used by the parser, exposed for the CLI */
int ct_rule_errno(const char *s, int64_t *out);
/* a DURATION of delay=: ct_parse_duration (parse.h) */

#endif
