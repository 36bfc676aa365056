/*
 * The check context of doctor (machine_int.h): the names of severities and
 * sections, and the helpers every check uses (files under the root, the
 * environment, adding findings).  The checks are machine.c and
 * machine_libs.c; this file calls neither.
 */
#define _GNU_SOURCE
#include "machine_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- names ------------------------------------------------------------ */

const char *ct_severity_name(enum ct_severity s)
{
	static const char *const n[] = { "ok", "info", "warn", "problem" };
	return (unsigned)s < 4 ? n[s] : "?";
}

const char *ct_section_title(enum ct_section s)
{
	static const char *const n[] = {
		"Device nodes", "Kernel module", "Libraries", "Container", "Environment",
		"Driver/runtime contract",
	};
	return (unsigned)s < CT_SEC_COUNT ? n[s] : "?";
}

const char *ct_section_key(enum ct_section s)
{
	static const char *const n[] = {
		"device_nodes", "kernel_module", "libraries", "container", "environment", "contract",
	};
	return (unsigned)s < CT_SEC_COUNT ? n[s] : "?";
}

/* ---- helpers ---------------------------------------------------------- */

void ct_m_copy(char *dst, size_t len, const char *src)
{
	size_t n;

	if (!len)
		return;
	n = src ? strnlen(src, len - 1) : 0;
	memcpy(dst, src ? src : "", n);
	dst[n] = 0;
}

char *ct_m_chomp(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = 0;
	return s;
}

const char *ct_m_env(const struct ct_mctx *c, const char *name)
{
	size_t n = strlen(name);

	for (char *const *e = c->env; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

void ct_m_path(const struct ct_mctx *c, char *buf, size_t len, const char *logical)
{
	snprintf(buf, len, "%s%s", c->root, logical);
}

ssize_t ct_m_read(const struct ct_mctx *c, const char *logical, char *buf, size_t len)
{
	char p[PATH_MAX];
	ssize_t n = 0, total = 0;
	int fd, e;

	ct_m_path(c, p, sizeof p, logical);
	buf[0] = 0;
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)total + 1 < len && (n = read(fd, buf + total, len - 1 - (size_t)total)) > 0)
		total += n;
	e = errno;
	close(fd);
	buf[total] = 0;
	if (n < 0 && total == 0) {
		errno = e;
		return -1;
	}
	return total;
}

bool ct_m_exists(const struct ct_mctx *c, const char *logical)
{
	char p[PATH_MAX];
	struct stat st;

	ct_m_path(c, p, sizeof p, logical);
	return stat(p, &st) == 0;
}

struct ct_finding *ct_m_add(struct ct_mctx *c, enum ct_section s, enum ct_severity sev,
			    enum ct_layer l, const char *fmt, ...)
{
	static struct ct_finding scratch;
	struct ct_machine_report *r = c->r;
	struct ct_finding *f = r->n_findings < CT_MAX_FINDINGS ? &r->findings[r->n_findings++] : &scratch;
	va_list ap;

	memset(f, 0, sizeof *f);
	f->section = s;
	f->sev = sev;
	f->layer = l;
	va_start(ap, fmt);
	vsnprintf(f->summary, sizeof f->summary, fmt, ap);
	va_end(ap);
	if (f != &scratch) {
		if (sev == CT_SEV_PROBLEM)
			r->n_problems++;
		else if (sev == CT_SEV_WARN)
			r->n_warnings++;
	}
	return f;
}

void ct_m_fix(struct ct_finding *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->fix, sizeof f->fix, fmt, ap);
	va_end(ap);
}
