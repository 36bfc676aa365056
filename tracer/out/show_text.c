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
	/* a run of look-ups (dlsym, cuGetProcAddress) that succeeded: the first
	 * is shown, the rest folded into one "x N more" line (--expand: all) */
	bool run;
	unsigned run_call, run_depth;
	uint32_t run_tid;
	uint64_t fold_n, fold_t, fold_failed;
	char fold_names[160];
	char saved[512]; /* the first folded line, shown as it is when alone */
	size_t saved_n;
};

static struct text_state *st_of(struct ct_show_ctx *c)
{
	return c->priv;
}

/*
 * One timeline line is built in a buffer and written with one fwrite: the
 * pieces (a dozen per line) through stdio one by one cost more than
 * describing the event.  A line longer than the buffer is written in parts.
 */
struct line {
	FILE *f;
	size_t n;
	char b[4096];
};

static void ln_flush(struct line *l)
{
	if (l->n)
		fwrite_unlocked(l->b, 1, l->n, l->f);
	l->n = 0;
}

static void ln_raw(struct line *l, const char *s, size_t n)
{
	while (n) {
		size_t k = sizeof l->b - l->n;
		if (!k) {
			ln_flush(l);
			k = sizeof l->b;
		}
		if (k > n)
			k = n;
		memcpy(l->b + l->n, s, k);
		l->n += k;
		s += k;
		n -= k;
	}
}

static void ln_str(struct line *l, const char *s)
{
	ln_raw(l, s, strlen(s));
}

/* true when one of the 8 bytes of w is below 0x20 or 0x7f and above: the
 * word needs a byte-by-byte look (tabs are fine there) */
static inline bool word_suspect(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;

	/* a byte < 0x20; a byte >= 0x7f (0x7f + 1 carries into bit 7, or bit 7 set) */
	return (((w - ones * 0x20) & ~w) | (w + ones * 0x01) | w) & highs;
}

/* bytes with control characters escaped as \xNN (file contents are untrusted) */
static void ln_clean(struct line *l, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, run = 0;

	while (i < n) {
		uint64_t w;
		if (i + 8 <= n) {
			memcpy(&w, s + i, 8);
			if (!word_suspect(w)) {
				i += 8;
				continue;
			}
		}
		unsigned char ch = s[i];
		if (ch == '\t' || (ch >= 0x20 && ch < 0x7f)) {
			i++;
			continue;
		}
		char esc[4] = { '\\', 'x', hex[ch >> 4], hex[ch & 15] };
		ln_raw(l, (const char *)s + run, i - run);
		ln_raw(l, esc, 4);
		run = ++i;
	}
	ln_raw(l, (const char *)s + run, n - run);
}

static void ln_cstr(struct line *l, const char *s)
{
	ln_clean(l, (const unsigned char *)s, strlen(s));
}

/* bytes straight to f, control characters escaped (the header block) */
static void put_clean(FILE *f, const unsigned char *s, size_t n)
{
	struct line l;

	l.f = f;
	l.n = 0;
	ln_clean(&l, s, n);
	ln_flush(&l);
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
	if (h->flags & CT_HF_EXIT_STATUS) {
		fprintf(f, "%sexit %u", any ? "; " : "", h->exit_status & 0xffu);
		any = true;
	}
	FLAG((h->flags & CT_HF_EXITED) && !(h->flags & CT_HF_EXIT_STATUS), CT_C_RESET, "exited");
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
	char buf[2048], buf2[256], rundir[2048];
	const char *ver;

	s->failed = s->never = 0;
	if (!s->first_process)
		fputc('\n', f);
	s->first_process = false;

	char id[16], pid[16];
	fprintf(f, "%sprocess %s%s (ppid %s)  ", ct_c(f, CT_C_BOLD), ct_stable_idstr(h->pid, pid, sizeof pid),
		ct_c(f, CT_C_RESET), ct_stable_idstr(h->ppid, id, sizeof id));
	if (ct_trace_ctx_str(t, CT_CTX_EXE, 0, buf, sizeof buf))
		put_cstr(f, buf);
	else
		fputs("(exe not recorded)", f);
	fputc('\n', f);
	fprintf(f, "  file     ");
	put_cstr(f, ct_stable_path(ct_trace_path(t), h->pid, buf, sizeof buf));
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
	} else if (ct_trace_ctx_damaged(t)) {
		fprintf(f, "%sunknown%s (the context area is damaged)", ct_c(f, CT_C_YELLOW),
			ct_c(f, CT_C_RESET));
	} else {
		fprintf(f, "%snot loaded%s (no /proc/driver/nvidia/version)", ct_c(f, CT_C_YELLOW),
			ct_c(f, CT_C_RESET));
	}
	fprintf(f, "\n  started  ");
	if (c->no_time)
		fputs("-", f); /* --no-time */
	else
		put_time(f, h->start_realtime_ns);
	fprintf(f, "  uid %u gid %u", h->uid, h->gid);
	if (h->euid != h->uid || h->egid != h->gid)
		fprintf(f, " (euid %u egid %u)", h->euid, h->egid);
	fputc('\n', f);
	for (unsigned i = 0; ct_trace_ctx_str(t, CT_CTX_ENV, i, buf, sizeof buf); i++) {
		/* --no-time: CUTRACE_DIR=.../run-<time> */
		const char *v = ct_stable_rundir(buf, rundir, sizeof rundir);
		size_t n = strlen(v);
		fprintf(f, "  %s", i ? "         " : "env      ");
		/* some values are kilobytes (NVIDIA_REQUIRE_CUDA): JSON has them whole */
		put_clean(f, (const unsigned char *)v, n > 160 ? 160 : n);
		if (n > 160)
			fprintf(f, "... (%zu bytes)", n);
		fputc('\n', f);
	}
	if (ct_trace_ctx_str(t, CT_CTX_INTERP, 0, buf, sizeof buf)) {
		fprintf(f, "  loader   ");
		put_cstr(f, buf);
		fputc('\n', f);
	}
	for (unsigned i = 0; ct_trace_ctx_str(t, CT_CTX_LDCONF, i, buf, sizeof buf); i++) {
		fprintf(f, "  %s", i ? "         " : "ld.conf  ");
		put_cstr(f, buf);
		fputc('\n', f);
	}
	if (ct_trace_ctx_str(t, CT_CTX_PRELOAD_FILE, 0, buf, sizeof buf)) {
		fprintf(f, "  preload  /etc/ld.so.preload: ");
		put_cstr(f, buf);
		fputc('\n', f);
	}
	{
		uint16_t tag, len;
		const unsigned char *p;
		for (unsigned i = 0; (p = ct_trace_ctx_unknown(t, i, &tag, &len)); i++) {
			fprintf(f, "  %s", i ? "         " : "unknown  ");
			fprintf(f, "key %u (format %u.%u, newer than this cutrace): ", tag, h->version_major,
				h->version_minor);
			put_clean(f, p, len > 80 ? 80 : len);
			if (len > 80)
				fprintf(f, "... (%u bytes)", len);
			fputc('\n', f);
		}
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

/* "+12.345 ms" right-aligned in 11 columns + " ms", without float formatting */
static void ln_offset(struct line *l, int64_t ns)
{
	char b[32];
	char *e = b + sizeof b, *p;
	uint64_t us = (uint64_t)(ns < 0 ? -ns : ns) / 1000;
	unsigned frac = (unsigned)(us % 1000);

	*--e = (char)('0' + frac % 10);
	*--e = (char)('0' + frac / 10 % 10);
	*--e = (char)('0' + frac / 100);
	*--e = '.';
	p = ct_udec_rev(e, us / 1000);
	*--p = ns < 0 ? '-' : '+';
	while (b + sizeof b - p < 11)
		*--p = ' ';
	ln_raw(l, p, (size_t)(b + sizeof b - p));
	ln_raw(l, " ms", 3);
}

/* "<840 ns>", "<1.2 us>", "<12.345 ms>", "<1.500 s>" (rounded like %.1f/%.3f) */
static void ln_dur(struct line *l, uint64_t ns)
{
	char b[48];
	char *e = b + sizeof b, *p;

	if (ns < 1000) {
		e -= 4;
		memcpy(e, " ns>", 4);
		p = ct_udec_rev(e, ns);
	} else if (ns < 1000000) {
		uint64_t t = (ns + 50) / 100; /* tenths of us */
		e -= 4;
		memcpy(e, " us>", 4);
		*--e = (char)('0' + t % 10);
		*--e = '.';
		p = ct_udec_rev(e, t / 10);
	} else {
		bool sec = ns >= 1000000000;
		uint64_t unit = sec ? 1000000000 : 1000000, t = (ns + unit / 2000) / (unit / 1000);
		if (sec) {
			e -= 3;
			memcpy(e, " s>", 3);
		} else {
			e -= 4;
			memcpy(e, " ms>", 4);
		}
		*--e = (char)('0' + t % 10);
		*--e = (char)('0' + t / 10 % 10);
		*--e = (char)('0' + t / 100 % 10);
		*--e = '.';
		p = ct_udec_rev(e, t / 1000);
	}
	*--p = '<';
	ln_raw(l, p, (size_t)(b + sizeof b - p));
}

static bool is_lookup(unsigned call)
{
	return call == CT_CALL_dlsym || call == CT_CALL_dlvsym || call == CT_CALL_cuGetProcAddress ||
	       call == CT_CALL_cuGetProcAddress_v2;
}

/* the end of a run of look-ups: the folded ones as one line */
static void fold_flush(struct ct_show_ctx *c, struct text_state *s)
{
	FILE *f = c->out;

	if (s->fold_n == 1) {
		fwrite_unlocked(s->saved, 1, s->saved_n, f);
	} else if (s->fold_n > 1) {
		struct line l = { .f = f, .n = 0 };
		if (!c->no_time) {
			ln_str(&l, ct_c(f, CT_C_DIM));
			ln_offset(&l, (int64_t)(s->fold_t - c->t0_ns));
			ln_str(&l, ct_c(f, CT_C_RESET));
			ln_raw(&l, "  ", 2);
		}
		if (s->run_tid != ct_trace_header(c->trace)->pid) {
			char b[24];
			char id[16];
			int n = snprintf(b, sizeof b, "[%s] ", ct_stable_idstr(s->run_tid, id, sizeof id));
			ln_raw(&l, b, (size_t)n);
		}
		for (unsigned i = 0; i < s->run_depth; i++)
			ln_raw(&l, "  ", 2);
		ln_str(&l, ct_c(f, CT_C_DIM));
		char b[320];
		char nf[48] = "";
		if (s->fold_failed)
			snprintf(nf, sizeof nf, "%" PRIu64 " not found; ", s->fold_failed);
		int n = snprintf(b, sizeof b, "%s x %" PRIu64 " more: %s (%s--expand shows them)\n",
				 ct_call_name(s->run_call), s->fold_n, s->fold_names, nf);
		ln_raw(&l, b, n > 0 && (size_t)n < sizeof b ? (size_t)n : strlen(b));
		ln_str(&l, ct_c(f, CT_C_RESET));
		ln_flush(&l);
	}
	s->fold_n = 0;
	s->fold_failed = 0;
	s->saved_n = 0;
	s->fold_names[0] = 0;
}

static int text_event(struct ct_show_ctx *c, const struct ct_show_event *e)
{
	const struct ct_event *ev = e->ev;
	const struct ct_desc *d = e->d;
	struct text_state *s = st_of(c);
	FILE *f = c->out;
	uint32_t pid = ct_trace_header(c->trace)->pid;
	struct line l;
	/* a look-up that returned, found or not (cudart asks for many symbols a
	 * driver may not have: CUDA_ERROR_NOT_FOUND is part of the routine) */
	bool foldable = !c->expand && !d->is_note && is_lookup(ev->call) && d->returned && !d->injected;
	bool save = false;

	if (foldable && s->run && s->run_call == ev->call && s->run_tid == ev->tid &&
	    s->run_depth == e->depth) {
		/* another look-up of the run: folded */
		if (!s->fold_n++) {
			s->fold_t = ev->t_ns;
			save = true;
		}
		if (!d->ok)
			s->fold_failed++;
		if (strlen(s->fold_names) < 100)
			ct_appendf(s->fold_names, sizeof s->fold_names, "%s%s", s->fold_names[0] ? ", " : "",
				   d->target[0] ? d->target : "?");
		else if (!strstr(s->fold_names, ", ..."))
			ct_appendf(s->fold_names, sizeof s->fold_names, ", ...");
		if (!save)
			return 0;
	} else {
		fold_flush(c, s);
		s->run = foldable;
		s->run_call = ev->call;
		s->run_tid = ev->tid;
		s->run_depth = e->depth;
	}

	l.f = f;
	l.n = 0;
	if (!c->no_time) {
		ln_str(&l, ct_c(f, CT_C_DIM));
		ln_offset(&l, (int64_t)(ev->t_ns - c->t0_ns));
		ln_str(&l, ct_c(f, CT_C_RESET));
		ln_raw(&l, "  ", 2);
	}
	if (ev->tid != pid && ct_stable_ids()) {
		char b[24], id[16];
		int n = snprintf(b, sizeof b, "[%s] ", ct_stable_idstr(ev->tid, id, sizeof id));
		ln_raw(&l, b, (size_t)n);
	} else if (ev->tid != pid) {
		char b[24], *p = ct_udec_rev(b + sizeof b - 2, ev->tid);
		b[sizeof b - 2] = ']';
		b[sizeof b - 1] = ' ';
		*--p = '[';
		ln_raw(&l, p, (size_t)(b + sizeof b - p));
	}
	for (unsigned i = 0; i < e->depth; i++)
		ln_raw(&l, "  ", 2);
	if (d->is_note) {
		ln_str(&l, ct_c(f, CT_C_CYAN));
		ln_str(&l, "** note: ");
		ln_cstr(&l, d->target);
		ln_str(&l, ct_c(f, CT_C_RESET));
		if (d->detail[0]) {
			ln_raw(&l, "  ", 2);
			ln_cstr(&l, d->detail);
		}
		ln_raw(&l, "\n", 1);
		ln_flush(&l);
		return ferror(f) ? -1 : 0;
	}
	ln_str(&l, ct_c(f, CT_C_BOLD));
	ln_str(&l, d->call);
	ln_str(&l, ct_c(f, CT_C_RESET));
	ln_raw(&l, "(", 1);
	ln_cstr(&l, d->text_args);
	ln_raw(&l, ") = ", 4);
	ln_cstr(&l, d->result);
	if (d->detail[0]) {
		ln_raw(&l, "  ", 2);
		ln_cstr(&l, d->detail);
	}
	if (d->returned && !c->no_time) {
		ln_raw(&l, "  ", 2);
		ln_dur(&l, ev->dur_ns);
	}
	if (!d->returned && ev->exit_unknown) {
		ln_raw(&l, "  ", 2);
		ln_str(&l, ct_c(f, CT_C_DIM));
		ln_str(&l, "(exit record lost: the ring wrapped, or it came too late to pair)");
		ln_str(&l, ct_c(f, CT_C_RESET));
	} else if (!d->returned) {
		s->never++;
		ln_raw(&l, "  ", 2);
		ln_str(&l, ct_c(f, CT_C_BOLD));
		ln_str(&l, ct_c(f, CT_C_RED));
		ln_str(&l, "NEVER RETURNED");
		ln_str(&l, ct_c(f, CT_C_RESET));
	} else if (!d->ok) {
		s->failed++;
		ln_raw(&l, "  ", 2);
		ln_str(&l, ct_c(f, CT_C_BOLD));
		ln_str(&l, ct_c(f, CT_C_RED));
		ln_str(&l, "FAILED");
		ln_str(&l, ct_c(f, CT_C_RESET));
	}
	if (d->injected && !d->has_inject) {
		ln_raw(&l, "  ", 2);
		ln_str(&l, ct_c(f, CT_C_YELLOW));
		ln_str(&l, "[injected]");
		ln_str(&l, ct_c(f, CT_C_RESET));
	}
	ln_raw(&l, "\n", 1);
	if (save && l.n <= sizeof s->saved) {
		memcpy(s->saved, l.b, l.n);
		s->saved_n = l.n;
		l.n = 0;
	}
	ln_flush(&l);
	return ferror(f) ? -1 : 0;
}

static int text_process_end(struct ct_show_ctx *c, struct ct_trace *t, const struct ct_trace_stats *st)
{
	struct text_state *s = st_of(c);
	FILE *f = c->out;

	fold_flush(c, s);
	s->run = false;
	fprintf(f, "  -- %" PRIu64 " events (%" PRIu64 " records): %" PRIu64 " failed, %" PRIu64
		" never returned", st->events, st->records, s->failed, s->never);
	if (st->torn || st->overwritten || st->bad || st->orphan_exits)
		fprintf(f, "; %" PRIu64 " torn, %" PRIu64 " overwritten, %" PRIu64 " malformed, %" PRIu64
			" exits without enter", st->torn, st->overwritten, st->bad, st->orphan_exits);
	if (st->dropped)
		fprintf(f, "; %" PRIu64 " older records overwritten by the ring", st->dropped);
	fputc('\n', f);
	char dmg[512];
	if (ct_trace_damage(t, dmg, sizeof dmg))
		fprintf(f, "  ** damaged: %s\n", dmg);
	if (c->verdict && !c->no_verdict)
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
