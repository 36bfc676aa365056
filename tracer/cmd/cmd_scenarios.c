/* cutrace scenarios [-v]: the named failure scenarios of session/scenarios.c. */
#include "cmd.h"
#include "scenarios.h"

#include <stdio.h>
#include <string.h>

int cmd_scenarios(int argc, char **argv)
{
	bool verbose = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: cutrace scenarios [-v]\n\nLists the failure scenarios of "
			       "'cutrace run --scenario NAME -- CMD', one line each;\n-v adds the rules and what "
			       "the real driver returned.\n");
			return CT_EXIT_OK;
		}
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			verbose = true;
			continue;
		}
		ct_err("unknown option '%s'", argv[i]);
		return CT_EXIT_USAGE;
	}
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
