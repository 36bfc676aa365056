/* Internal to doctor: the check context and its helpers (mctx.c), used by the
 * checks (machine.c, machine_libs.c); the library checks are called by machine.c. */
#ifndef CT_MACHINE_INT_H
#define CT_MACHINE_INT_H

#include "machine.h"
#include "tracer.h"

struct ct_mctx {
	struct ct_machine_report *r;
	const struct ct_machine_opts *o;
	const char *root;          /* "" for the real machine */
	char *const *env;
};

/* getenv over the context's environment */
const char *ct_m_env(const struct ct_mctx *c, const char *name);
/* root + logical path */
void ct_m_path(const struct ct_mctx *c, char *buf, size_t len, const char *logical);
/* read a small file under root into buf (NUL-terminated); bytes or -1 (errno) */
ssize_t ct_m_read(const struct ct_mctx *c, const char *logical, char *buf, size_t len);
bool ct_m_exists(const struct ct_mctx *c, const char *logical);

/* add a finding; never NULL (a scratch entry once the table is full) */
struct ct_finding *ct_m_add(struct ct_mctx *c, enum ct_section s, enum ct_severity sev,
			    enum ct_layer l, const char *fmt, ...) CT_PRINTF(5, 6);
void ct_m_fix(struct ct_finding *f, const char *fmt, ...) CT_PRINTF(2, 3);

/* the library checks (machine_libs.c) */
void ct_m_check_libs(struct ct_mctx *c);
void ct_m_check_contract(struct ct_mctx *c);
/* what the container runtime put here: CDI specs, ld.so.conf.d drop-ins, musl,
 * the uvm node (machine_rt.c) */
void ct_m_check_runtime(struct ct_mctx *c);
/* other libraries in the CUDA call path: LD_PRELOAD, /etc/ld.so.preload, this
 * process's mapped objects (machine_preload.c) */
void ct_m_check_preload(struct ct_mctx *c);
/* the hardware checks (machine_hw.c): PCI devices, module file, Secure Boot, firmware, kernel log */
void ct_m_check_hw(struct ct_mctx *c);

/* copy with truncation, always terminated */
void ct_m_copy(char *dst, size_t len, const char *src);
/* strip trailing whitespace/newlines in place */
char *ct_m_chomp(char *s);

#endif
