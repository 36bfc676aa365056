/*
 * The cargo of the one-file cutrace: this tree's libcutrace.so and
 * cutrace-probe (debug info stripped), included byte for byte with .incbin
 * between the symbols tracer/embed.c looks for.  CMake passes the two paths
 * (CT_BLOB_SHIM_FILE, CT_BLOB_PROBE_FILE) and rebuilds this object when
 * either file changes.
 */
#define CT_BLOB(sym, file)                                          \
	__asm__("\t.section .rodata.ct_blob,\"a\",@progbits\n"      \
		"\t.balign 64\n"                                     \
		"\t.globl " #sym "\n"                                \
		"\t.hidden " #sym "\n"                               \
		#sym ":\n"                                           \
		"\t.incbin \"" file "\"\n"                           \
		"\t.globl " #sym "_end\n"                            \
		"\t.hidden " #sym "_end\n"                           \
		#sym "_end:\n"                                       \
		"\t.previous\n")

/* without the paths (a linter's view of this file) nothing is carried, and
 * the one-file tests fail: the cutrace they run finds no shim and no probe */
#if defined(CT_BLOB_SHIM_FILE) && defined(CT_BLOB_PROBE_FILE)
CT_BLOB(ct_blob_shim, CT_BLOB_SHIM_FILE);
CT_BLOB(ct_blob_probe, CT_BLOB_PROBE_FILE);
#endif
