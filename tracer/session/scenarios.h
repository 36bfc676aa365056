/* Named failure scenarios (scenarios.c). */
#ifndef CT_SCENARIOS_H
#define CT_SCENARIOS_H

struct ct_scenario {
	const char *name;
	const char *what;      /* one line */
	const char *ref;       /* failure catalog section (SCENARIOS.md) / compatibility-matrix row */
	const char *rules;     /* CUTRACE_INJECT rules, NULL none */
	const char *env;       /* NAME=VALUE, or "@stub" (a toolkit-stub libcuda first), NULL none */
	const char *measured;  /* what the real stack returned (H200, driver 580) */
};

extern const struct ct_scenario ct_scenarios[];
const struct ct_scenario *ct_scenario_find(const char *name);

#endif
