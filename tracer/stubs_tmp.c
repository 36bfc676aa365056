/* TEMPORARY: weak placeholders so the CLI links while commands are being
 * written; each real command file defines the strong symbol.  Removed before
 * release. */
#include "tracer.h"

#define CT_WEAK_CMD(n) \
	__attribute__((weak)) int n(int argc, char **argv) \
	{ (void)argc; ct_err("'%s' is not built yet", argv[0]); return CT_EXIT_USAGE; }
CT_WEAK_CMD(cmd_run)
CT_WEAK_CMD(cmd_show)
CT_WEAK_CMD(cmd_probe)
CT_WEAK_CMD(cmd_doctor)
CT_WEAK_CMD(cmd_scenarios)
CT_WEAK_CMD(cmd_replay)

#include "run.h"
__attribute__((weak)) int ct_run_report(const struct ct_run_opts *o, FILE *out)
{ (void)o; (void)out; return 0; }
__attribute__((weak)) int ct_scenario_rules(const char *name, struct ct_run_opts *o)
{ (void)o; ct_err("unknown scenario '%s'", name); return -1; }
