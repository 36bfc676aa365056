/*
 * cutrace show, text format: a header block per process, then one
 * strace-like line per event, then a one-line summary (see cmd_show.c's help
 * for the line layout and the marks).
 */
#include "show.h"
#include "tracer.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fmt.h"
/* the hot paths format many short strings: the cheaper snprintf (fmt.c) */
#define snprintf ct_snprintf
#define vsnprintf ct_vsnprintf

struct text_state {
	uint64_t failed;
	uint64_t never;
	bool first_process;
};

static struct text_state *st_of(struct ct_show_ctx *c)
{
	return c->priv;
}

/* print bytes with control characters escaped (file contents are untrusted) */
static void put_clean(FILE *f, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	/* runs of printable bytes in one write: this is the timeline's hot path */
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = s[i];
		if (ch == '\t' || (ch >= 0x20 && ch < 0x7f))
			continue;
		fwrite_unlocked(s + run, 1, i - run, f);
		run = i + 1;
		putc_unlocked('\\', f);
		putc_unlocked('x', f);
		putc_unlocked(hex[ch >> 4], f);
		putc_unlocked(hex[ch & 15], f);
	}
	fwrite_unlocked(s + run, 1, n - run, f);
}

/* "+12.345 ms" right-aligned in 11 columns + " ms", without float formatting */
static void put_offset(FILE *f, int64_t ns)
{
	char b[32];
	int i = (int)sizeof b;
	uint64_t us = (uint64_t)(ns < 0 ? -ns : ns) / 1000;
	unsigned frac = (unsigned)(us % 1000);
	uint64_t ms = us / 1000;

	b[--i] = (char)('0' + frac % 10);
	b[--i] = (char)('0' + frac / 10 % 10);
	b[--i] = (char)('0' + frac / 100);
	b[--i] = '.';
	do {
		b[--i] = (char)('0' + ms % 10);
		ms /= 10;
	} while (ms);
	b[--i] = ns < 0 ? '-' : '+';
	while ((int)sizeof b - i < 11)
		b[--i] = ' ';
	fwrite_unlocked(b + i, 1, sizeof b - (size_t)i, f);
	fwrite_unlocked(" ms", 1, 3, f);
}

static void put_cstr(FILE *f, const char *s)
{
	put_clean(f, (const unsigned char *)s, strlen(s));
}

/* an argument for a shell-looking command line: quoted when it needs it */
static void put_arg(FILE *f, const unsigned char *s, size_t n)
{
	bool plain = n > 0;

	for (size_t i = 0; i < n && plain; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr("-_./=:,+@%", s[i])))
			plain = false;
	if (plain) {
		put_clean(f, s, n);
		return;
	}
	fputc('\'', f);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\'')
			fputs("'\\''", f);
		else
			put_clean(f, s + i, 1);
	}
	fputc('\'', f);
}

static void put_cmdline(FILE *f, struct ct_trace *t)
{
	uint16_t len;
	const unsigned char *p = ct_trace_ctx(t, CT_CTX_CMDLINE, 0, &len);
	uint32_t full = 0;
	const unsigned char *fl;
	uint16_t fll;
	size_t i = 0;

	if (!p) {
		fputs("(not recorded)", f);
		return;
	}
	while (i < len) {
		size_t j = i;
		while (j < len && p[j])
			j++;
		if (i)
			fputc(' ', f);
		put_arg(f, p + i, j - i);
		i = j + 1;
	}
	fl = ct_trace_ctx(t, CT_CTX_CMDLINE_LEN, 0, &fll);
	if (fl && fll == 4)
		memcpy(&full, fl, 4);
	if (full > len)
		fprintf(f, " ... (truncated: %u of %u bytes)", (unsigned)len, full);
}

static void put_time(FILE *f, uint64_t real_ns)
{
	time_t s = (time_t)(real_ns / 1000000000u);
	struct tm tm;
	char buf[64], tz[8];

	if (!real_ns || !localtime_r(&s, &tm)) {
		fputs("unknown", f);
		return;
	}
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(tz, sizeof tz, "%z", &tm);
	fprintf(f, "%s.%03u%s", buf, (unsigned)(real_ns / 1000000u % 1000u), tz);
}

/* the first line of the NVRM version text, trimmed */
static void put_nv_line(FILE *f, const char *text)
{
	const char *e = strchr(text, '\n');
	size_t n = e ? (size_t)(e - text) : strlen(text);

	while (n && (text[n - 1] == ' ' || text[n - 1] == '\r'))
		n--;
	put_clean(f, (const unsigned char *)text, n);
}

static int text_begin(struct ct_show_ctx *c)
{
	struct text_state *s = calloc(1, sizeof *s);

	if (!s)
		return -1;
	s->first_process = true;
	c->priv = s;
	return 0;
}

static int text_end(struct ct_show_ctx *c)
{
	free(c->priv);
	c->priv = NULL;
	return 0;
}

static void put_flags(FILE *f, const struct cutrace_header *h)
{
	bool any = false;

#define FLAG(cond, col, text) do { if (cond) { \
		fprintf(f, "%s%s%s%s", any ? "; " : "", ct_c(f, col), text, ct_c(f, CT_C_RESET)); \
		any = true; } } while (0)
	FLAG(h->flags & CT_HF_DEGRADED, CT_C_YELLOW, "DEGRADED (the shim had an internal failure: some events are missing)");
	FLAG(h->flags & CT_HF_EXITED, CT_C_RESET, "exited");
	FLAG(!(h->flags & CT_HF_EXITED), CT_C_YELLOW, "no exit seen (killed, crashed, or still running)");
	FLAG(h->flags & CT_HF_FORKED, CT_C_RESET, "fork child");
	FLAG(h->flags & CT_HF_INJECT, CT_C_YELLOW, "fault injection active");
	FLAG(h->flags & CT_HF_INJECT_BAD, CT_C_YELLOW, "CUTRACE_INJECT malformed (ignored)");
#undef FLAG
	if (h->lost)
		fprintf(f, "; %" PRIu64 " records lost (too big)", h->lost);
}

static int text_process_begin(struct ct_show_ctx *c, struct ct_trace *t)
{
	const struct cutrace_header *h = ct_trace_header(t);
	struct text_state *s = st_of(c);
	FILE *f = c->out;
	char buf[2048], buf2[256];
	const char *ver;

	s->failed = s->never = 0;
	if (!s->first_process)
		fputc('\n', f);
	s->first_process = false;

	fprintf(f, "%sprocess %u%s (ppid %u)  ", ct_c(f, CT_C_BOLD), h->pid, ct_c(f, CT_C_RESET), h->ppid);
	if (ct_trace_ctx_str(t, CT_CTX_EXE, 0, buf, sizeof buf))
		put_cstr(f, buf);
	else
		fputs("(exe not recorded)", f);
	fputc('\n', f);
	fprintf(f, "  file     ");
	put_cstr(f, ct_trace_path(t));
	fprintf(f, "\n  command  ");
	put_cmdline(f, t);
	fprintf(f, "\n  host     ");
	put_cstr(f, ct_trace_ctx_str(t, CT_CTX_HOST, 0, buf, sizeof buf) ? buf : "?");
	fprintf(f, ", kernel ");
	put_cstr(f, ct_trace_ctx_str(t, CT_CTX_KERNEL, 0, buf, sizeof buf) ? buf : "?");
	if (ct_trace_ctx_str(t, CT_CTX_MACHINE, 0, buf, sizeof buf)) {
		fputc(' ', f);
		put_cstr(f, buf);
	}
	fprintf(f, "\n  driver   ");
	ver = ct_trace_driver_version_str(t);
	if (ct_trace_ctx_str(t, CT_CTX_NV_VERSION, 0, buf, sizeof buf)) {
		fprintf(f, "%s  (", ver ? ver : "version not understood");
		put_nv_line(f, buf);
		fputc(')', f);
	} else if (ct_trace_ctx_str(t, CT_CTX_NV_MODVERSION, 0, buf2, sizeof buf2)) {
		fprintf(f, "%s  (/sys/module/nvidia/version)", ver ? ver : "version not understood");
	} else {
		fprintf(f, "%snot loaded%s (no /proc/driver/nvidia/version)", ct_c(f, CT_C_YELLOW),
			ct_c(f, CT_C_RESET));
	}
	fprintf(f, "\n  started  ");
	put_time(f, h->start_realtime_ns);
	fprintf(f, "  uid %u gid %u", h->uid, h->gid);
	if (h->euid != h->uid || h->egid != h->gid)
		fprintf(f, " (euid %u egid %u)", h->euid, h->egid);
	fputc('\n', f);
	for (unsigned i = 0; ct_trace_ctx_str(t, CT_CTX_ENV, i, buf, sizeof buf); i++) {
		size_t n = strlen(buf);
		fprintf(f, "  %s", i ? "         " : "env      ");
		/* some values are kilobytes (NVIDIA_REQUIRE_CUDA): JSON has them whole */
		put_clean(f, (const unsigned char *)buf, n > 160 ? 160 : n);
		if (n > 160)
			fprintf(f, "... (%zu bytes)", n);
		fputc('\n', f);
	}
	if (ct_trace_ctx_str(t, CT_CTX_INJECT, 0, buf, sizeof buf)) {
		fprintf(f, "  inject   ");
		put_cstr(f, buf);
		fputc('\n', f);
	}
	fprintf(f, "  trace    ");
	put_flags(f, h);
	fputc('\n', f);
	for (unsigned i = 0; ct_trace_ctx_str(t, CT_CTX_NOTE, i, buf, sizeof buf); i++) {
		fprintf(f, "  note     ");
		put_cstr(f, buf);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

/* "<840 ns>", "<1.2 us>", "<12.345 ms>", "<1.500 s>" (rounded like %.1f/%.3f) */
static void put_dur(FILE *f, uint64_t ns)
{
	char b[40];
	uint64_t whole, frac;
	int n;

	if (ns < 1000) {
		n = snprintf(b, sizeof b, "<%" PRIu64 " ns>", ns);
	} else if (ns < 1000000) {
		uint64_t t = (ns + 50) / 100; /* tenths of us */
		whole = t / 10, frac = t % 10;
		n = snprintf(b, sizeof b, "<%" PRIu64 ".%" PRIu64 " us>", whole, frac);
	} else {
		bool sec = ns >= 1000000000;
		uint64_t unit = sec ? 1000000000 : 1000000, t = (ns + unit / 2000) / (unit / 1000);
		whole = t / 1000, frac = t % 1000;
		n = snprintf(b, sizeof b, "<%" PRIu64 ".%03" PRIu64 " %s>", whole, frac, sec ? "s" : "ms");
	}
	if (n > 0)
		fwrite_unlocked(b, 1, (size_t)n, f);
}

static int text_event(struct ct_show_ctx *c, const struct ct_show_event *e)
{
	const struct ct_event *ev = e->ev;
	const struct ct_desc *d = e->d;
	struct text_state *s = st_of(c);
	FILE *f = c->out;
	uint32_t pid = ct_trace_header(c->trace)->pid;

	if (!c->no_time) {
		fputs(ct_c(f, CT_C_DIM), f);
		put_offset(f, (int64_t)(ev->t_ns - c->t0_ns));
		fputs(ct_c(f, CT_C_RESET), f);
		fputs("  ", f);
	}
	if (ev->tid != pid)
		fprintf(f, "[%u] ", ev->tid);
	for (unsigned i = 0; i < e->depth; i++)
		fputs("  ", f);
	if (d->is_note) {
		fprintf(f, "%s** note: ", ct_c(f, CT_C_CYAN));
		put_cstr(f, d->target);
		fputs(ct_c(f, CT_C_RESET), f);
		if (d->detail[0]) {
			fputs("  ", f);
			put_cstr(f, d->detail);
		}
		fputc('\n', f);
		return ferror(f) ? -1 : 0;
	}
	fputs(ct_c(f, CT_C_BOLD), f);
	fputs(d->call, f);
	fputs(ct_c(f, CT_C_RESET), f);
	putc_unlocked('(', f);
	put_cstr(f, d->text_args);
	fwrite_unlocked(") = ", 1, 4, f);
	put_cstr(f, d->result);
	if (d->detail[0]) {
		fputs("  ", f);
		put_cstr(f, d->detail);
	}
	if (d->returned && !c->no_time) {
		fputs("  ", f);
		put_dur(f, ev->dur_ns);
	}
	if (!d->returned && ev->exit_unknown) {
		fprintf(f, "  %s(exit record lost: the ring wrapped, or it came too late to pair)%s", ct_c(f, CT_C_DIM),
			ct_c(f, CT_C_RESET));
	} else if (!d->returned) {
		s->never++;
		fprintf(f, "  %s%sNEVER RETURNED%s", ct_c(f, CT_C_BOLD), ct_c(f, CT_C_RED), ct_c(f, CT_C_RESET));
	} else if (!d->ok) {
		s->failed++;
		fprintf(f, "  %s%sFAILED%s", ct_c(f, CT_C_BOLD), ct_c(f, CT_C_RED), ct_c(f, CT_C_RESET));
	}
	if (d->injected && !d->has_inject)
		fprintf(f, "  %s[injected]%s", ct_c(f, CT_C_YELLOW), ct_c(f, CT_C_RESET));
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

static int text_process_end(struct ct_show_ctx *c, struct ct_trace *t, const struct ct_trace_stats *st)
{
	struct text_state *s = st_of(c);
	FILE *f = c->out;

	(void)t;
	fprintf(f, "  -- %" PRIu64 " events (%" PRIu64 " records): %" PRIu64 " failed, %" PRIu64
		" never returned", st->events, st->records, s->failed, s->never);
	if (st->torn || st->overwritten || st->bad || st->orphan_exits)
		fprintf(f, "; %" PRIu64 " torn, %" PRIu64 " overwritten, %" PRIu64 " malformed, %" PRIu64
			" exits without enter", st->torn, st->overwritten, st->bad, st->orphan_exits);
	if (st->dropped)
		fprintf(f, "; %" PRIu64 " older records overwritten by the ring", st->dropped);
	fputc('\n', f);
	if (c->verdict)
		ct_verdict_text(f, c->verdict);
	return ferror(f) ? -1 : 0;
}

const struct ct_show_ops ct_show_text_ops = {
	.name = "text",
	.begin = text_begin,
	.process_begin = text_process_begin,
	.event = text_event,
	.process_end = text_process_end,
	.end = text_end,
};
