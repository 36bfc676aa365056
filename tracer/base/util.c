#include "tracer.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "cutrace: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void ct_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void ct_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void ct_die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	exit(code);
}

static bool stable_on, stable_ids;
static uint32_t *stable_seen; /* the ids in the order they got their ordinals */
static size_t stable_n, stable_cap;

void ct_stable_set(bool on, bool keep_pids)
{
	stable_on = on;
	stable_ids = on && !keep_pids;
	free(stable_seen);
	stable_seen = NULL;
	stable_n = stable_cap = 0;
}

bool ct_stable(void)
{
	return stable_on;
}
bool ct_stable_ids(void)
{
	return stable_ids;
}

uint32_t ct_stable_id(uint32_t id)
{
	static size_t last;

	if (!stable_ids || !id)
		return id;
	/* a job has at most a few thousand processes and threads: a list is
	 * enough, with the last one found first (runs of one thread) */
	if (last < stable_n && stable_seen[last] == id)
		return (uint32_t)last + 1;
	for (size_t i = 0; i < stable_n; i++)
		if (stable_seen[i] == id)
			return (uint32_t)(last = i) + 1;
	if (stable_n == stable_cap) {
		size_t ncap = stable_cap ? stable_cap * 2 : 64;
		uint32_t *n = realloc(stable_seen, ncap * sizeof *n);
		if (!n)
			return 0; /* out of memory: the same 0 for all, still no real pid */
		stable_seen = n;
		stable_cap = ncap;
	}
	last = stable_n;
	stable_seen[stable_n++] = id;
	return (uint32_t)stable_n;
}

const char *ct_stable_idstr(uint32_t id, char *buf, size_t len)
{
	snprintf(buf, len, "%s%u", stable_ids ? "#" : "", ct_stable_id(id));
	return buf;
}

const char *ct_stable_path(const char *path, uint32_t pid, char *buf, size_t len)
{
	const char *base = strrchr(path, '/'), *p, *hit = NULL, *e;
	char needle[16], id[16], tmp[4096];

	if (!stable_on)
		return path;
	base = base ? base + 1 : path;
	snprintf(needle, sizeof needle, "-%u-", pid);
	for (p = base; (p = strstr(p, needle)); p++)
		hit = p;
	if (!hit)
		return ct_stable_rundir(path, buf, len);
	e = hit + strlen(needle);
	if (*e < '0' || *e > '9')
		return ct_stable_rundir(path, buf, len);
	while (*e >= '0' && *e <= '9')
		e++;
	snprintf(tmp, sizeof tmp, "%.*s-%s-<time>%s", (int)(hit - path), path,
		 ct_stable_idstr(pid, id, sizeof id), e);
	if (ct_stable_rundir(tmp, buf, len) == tmp)
		snprintf(buf, len, "%s", tmp);
	return buf;
}

/* n digits at s (n 0: one or more); the end of them, or NULL */
static const char *digits(const char *s, int n)
{
	const char *b = s;

	while (*s >= '0' && *s <= '9' && (!n || s - b < n))
		s++;
	return s == b || (n && s - b != n) ? NULL : s;
}

/* the end of a run directory's name cutrace made (run.c ct_default_run_dir:
 * run-YYYYMMDD-HHMMSS-PID, -N when taken) at s, or NULL */
static const char *rundir_end(const char *s)
{
	const char *e;

	if (strncmp(s, "run-", 4) || !(e = digits(s + 4, 8)) || *e != '-' || !(e = digits(e + 1, 6)) ||
	    *e != '-' || !(e = digits(e + 1, 0)))
		return NULL;
	if (*e == '-' && digits(e + 1, 0))
		e = digits(e + 1, 0);
	return *e == '\0' || *e == '/' || *e == ':' ? e : NULL;
}

const char *ct_stable_rundir(const char *s, char *buf, size_t len)
{
	size_t o = 0;
	bool any = false;

	if (!stable_on || !len)
		return s;
	for (const char *p = s; *p;) {
		const char *e = (p == s || p[-1] == '/') ? rundir_end(p) : NULL;
		const char *put = e ? "run-<time>" : p;
		size_t n = e ? 10 : 1;
		if (o + n >= len)
			return s; /* does not fit: as it is */
		memcpy(buf + o, put, n);
		o += n;
		p = e ? e : p + 1;
		any = any || e;
	}
	buf[o] = '\0';
	return any ? buf : s;
}

static enum ct_color_mode color_mode = CT_COLOR_AUTO;

void ct_color_set_mode(enum ct_color_mode m) { color_mode = m; }

bool ct_color_on(FILE *f)
{
	/* asked for every piece of a line: remember the answer per stream */
	static FILE *last;
	static int last_mode = -1;
	static bool last_on;
	const char *nc, *term;

	if (color_mode == CT_COLOR_NEVER)
		return false;
	if (color_mode == CT_COLOR_ALWAYS)
		return true;
	if (f == last && last_mode == (int)color_mode)
		return last_on;
	/* auto: a terminal, not NO_COLOR (no-color.org), not TERM=dumb */
	nc = getenv("NO_COLOR");
	term = getenv("TERM");
	last = f;
	last_mode = (int)color_mode;
	last_on = !(nc && *nc) && !(term && !strcmp(term, "dumb")) && isatty(fileno(f));
	return last_on;
}

const char *ct_c(FILE *f, enum ct_color c)
{
	static const char *const seq[] = {
		[CT_C_RESET] = "\033[0m", [CT_C_BOLD] = "\033[1m",
		[CT_C_RED] = "\033[31m", [CT_C_GREEN] = "\033[32m",
		[CT_C_YELLOW] = "\033[33m", [CT_C_DIM] = "\033[2m",
		[CT_C_CYAN] = "\033[36m",
	};
	return ct_color_on(f) ? seq[c] : "";
}

int ct_self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0 || (size_t)n >= len - 1)
		return -1;
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}
