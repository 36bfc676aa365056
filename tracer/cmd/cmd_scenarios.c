/* cutrace scenarios [-v]: the named failure scenarios of session/scenarios.c. */
#include "cmd.h"
#include "opts.h"
#include "scenarios.h"

#include <stdio.h>
#include <string.h>

/* the options: --help and the parser are both made from this table */
static const struct ct_opt scenarios_opts[] = {
	{ "verbose", 'v', CT_ARG_NONE, NULL, "add the rules and what the real driver returned" },
	CT_OPT_ROW_COLOR, /* accepted as by every command (this one prints no colour) */
	CT_OPT_ROW_HELP,
	{ 0 },
};

static const struct ct_cmd_spec scenarios_spec = {
	.cmd = "scenarios",
	.opts = scenarios_opts,
	.usage = "usage: cutrace scenarios [-v]\n\n"
		 "Lists the failure scenarios of 'cutrace run --scenario NAME -- CMD', one line each.\n",
};

int cmd_scenarios(int argc, char **argv)
{
	bool verbose = false;
	struct ct_optval v;
	int k, next = 1;

	ct_opts_begin(&scenarios_spec);
	while ((k = ct_opts_next(&scenarios_spec, argc, argv, &next, &v)) != -1) {
		switch (k) {
		case -2: return CT_EXIT_USAGE;
		case CT_OPT_HELP: ct_opts_help(&scenarios_spec, stdout); return CT_EXIT_OK;
		case 'v': verbose = true; break;
		}
	}
	if (next < argc)
		return ct_opts_error(&scenarios_spec, "unexpected argument '%s'", argv[next]);
	for (const struct ct_scenario *s = ct_scenarios; s->name; s++) {
		printf("%-24s %s (%s)\n", s->name, s->what, s->ref);
		if (verbose) {
			if (s->rules)
				printf("%-24s   rules: %s\n", "", s->rules);
			if (s->env)
				printf("%-24s   env:   %s\n", "", !strcmp(s->env, "@stub")
				       ? "LD_LIBRARY_PATH+=<dir with libcuda.so.1 -> toolkit stub>" : s->env);
			printf("%-24s   real driver: %s\n", "", s->measured);
		}
	}
	return CT_EXIT_OK;
}
