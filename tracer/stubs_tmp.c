/* TEMPORARY: weak placeholders so the CLI links while commands are being
 * written; each real command file defines the strong symbol.  Removed before
 * release. */
#include "tracer.h"

#define CT_WEAK_CMD(n) \
	__attribute__((weak)) int n(int argc, char **argv) \
	{ (void)argc; ct_err("'%s' is not built yet", argv[0]); return CT_EXIT_USAGE; }
CT_WEAK_CMD(cmd_show)
CT_WEAK_CMD(cmd_doctor)


