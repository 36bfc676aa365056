/*
 * Fault injection inside the traced process (rules from CUTRACE_INJECT).
 * The rule grammar lives in inject_rules.c, shared with the CLI.
 */
#include "shim.h"

#include <errno.h>
#include <time.h>

int ct_inj_active;

void ct_inject_init(void)
{
}

void ct_inject_after_fork(void)
{
}

void ct_sleep_ns(uint64_t ns) CT_HIDDEN;
void ct_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	int saved = errno;

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	errno = saved;
}

int ct_inject_open(unsigned call, const char *path, int flags, int *err, uint32_t *rule) CT_HIDDEN;
int ct_inject_open(unsigned call, const char *path, int flags, int *err, uint32_t *rule)
{
	(void)call; (void)path; (void)flags; (void)err; (void)rule;
	return 0;
}

int ct_inject_ioctl_before(uint32_t node, unsigned long req, void *arg, int *err, uint64_t *delay_ns,
			   uint32_t *rule) CT_HIDDEN;
int ct_inject_ioctl_before(uint32_t node, unsigned long req, void *arg, int *err, uint64_t *delay_ns,
			   uint32_t *rule)
{
	(void)node; (void)req; (void)arg; (void)err; (void)delay_ns; (void)rule;
	return 0;
}

int ct_inject_ioctl_after(uint32_t node, unsigned long req, void *arg, int *ret, int *err,
			  uint32_t *rule, uint32_t *action) CT_HIDDEN;
int ct_inject_ioctl_after(uint32_t node, unsigned long req, void *arg, int *ret, int *err,
			  uint32_t *rule, uint32_t *action)
{
	(void)node; (void)req; (void)arg; (void)ret; (void)err; (void)rule; (void)action;
	return 0;
}

int ct_inject_dlopen(const char *file, char *msg, size_t msglen, uint32_t *rule) CT_HIDDEN;
int ct_inject_dlopen(const char *file, char *msg, size_t msglen, uint32_t *rule)
{
	(void)file; (void)msg; (void)msglen; (void)rule;
	return 0;
}

int ct_inject_call(unsigned call, const char *sym, int64_t *retval, uint64_t *delay_ns,
		   uint32_t *rule) CT_HIDDEN;
int ct_inject_call(unsigned call, const char *sym, int64_t *retval, uint64_t *delay_ns,
		   uint32_t *rule)
{
	(void)call; (void)sym; (void)retval; (void)delay_ns; (void)rule;
	return 0;
}

int ct_inject_value(unsigned call, int64_t *value, uint32_t *rule) CT_HIDDEN;
int ct_inject_value(unsigned call, int64_t *value, uint32_t *rule)
{
	(void)call; (void)value; (void)rule;
	return 0;
}
