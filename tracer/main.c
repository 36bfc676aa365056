/* cutrace: the command-line front end.  One table lists the commands. */
#include "cmd.h"

#include <string.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "probe", cmd_probe, "run the bare dlopen + cuInit probe under the shim; timeline and verdict" },
	{ "run", cmd_run, "run a program under the shim and print a verdict per process" },
	{ "show", cmd_show, "decode trace files or directories: timeline, verdict, JSON, Chrome trace" },
	{ "doctor", cmd_doctor, "check this machine's driver, device nodes and libraries, then probe" },
	{ "scenarios", cmd_scenarios, "list the named failure scenarios for run --scenario" },
	{ "replay", cmd_replay, "recreate the root failure of a recorded trace around a command" },
	{ "pack", cmd_pack, "put a job's traces into one compact tar.gz to send (show reads it)" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: cutrace COMMAND [OPTIONS] [ARGS]\n\n"
		   "cutrace shows where and why CUDA initialization fails.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n  cutrace COMMAND --help   options of one command\n"
		   "  cutrace --version        print the version\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("cutrace %s\n", CUTRACE_VERSION);
		return CT_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	ct_err("unknown command '%s' (try 'cutrace --help')", argv[1]);
	return CT_EXIT_USAGE;
}
