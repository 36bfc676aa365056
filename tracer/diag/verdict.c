/*
 * A verdict on the page: its layer's name, one line, the text block, JSON
 * (diag.h).  The layers are the vocabulary doctor's findings use too.
 */
#include "diag.h"

#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "json.h"
#include "tracer.h"

/* the layer vocabulary, shared with doctor's findings (doctor/machine.h) */
const char *ct_layer_name(enum ct_layer l)
{
	static const char *const n[] = {
		[CT_LAYER_NONE] = "none", [CT_LAYER_LOADER] = "loader",
		[CT_LAYER_DEVICE_NODE] = "device-node", [CT_LAYER_KERNEL_HANDSHAKE] = "kernel-handshake",
		[CT_LAYER_RESOURCE_MANAGER] = "resource-manager", [CT_LAYER_UVM] = "uvm",
		[CT_LAYER_DRIVER_API] = "driver-api", [CT_LAYER_RUNTIME] = "runtime",
	};
	return (unsigned)l < sizeof n / sizeof n[0] && n[l] ? n[l] : "none";
}

const char *ct_signal_name(int sig, char *buf, size_t len)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{ SIGHUP, "SIGHUP" },   { SIGINT, "SIGINT" },   { SIGQUIT, "SIGQUIT" },
		{ SIGILL, "SIGILL" },   { SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
		{ SIGBUS, "SIGBUS" },   { SIGFPE, "SIGFPE" },   { SIGKILL, "SIGKILL" },
		{ SIGUSR1, "SIGUSR1" }, { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
		{ SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" },
		{ SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" }, { SIGSYS, "SIGSYS" },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].sig == sig) {
			snprintf(buf, len, "%s", names[i].name);
			return buf;
		}
	snprintf(buf, len, "signal %d", sig);
	return buf;
}

const char *ct_end_text(const struct ct_proc_end *e, char *buf, size_t len)
{
	char sig[24];

	switch (e->kind) {
	case CT_END_EXITED: snprintf(buf, len, "exited"); break;
	case CT_END_EXIT: snprintf(buf, len, "exit %d", e->code); break;
	case CT_END_SIGNAL:
		snprintf(buf, len, "killed by %s", ct_signal_name(e->code, sig, sizeof sig));
		break;
	case CT_END_TIMEOUT: snprintf(buf, len, "killed by cutrace's --timeout %s", e->limit); break;
	case CT_END_RUNNING: snprintf(buf, len, "still running"); break;
	default: snprintf(buf, len, "no exit seen"); break;
	}
	return buf;
}

static const char *end_kind_name(enum ct_end_kind k)
{
	static const char *const n[] = {
		[CT_END_UNKNOWN] = "unknown", [CT_END_EXITED] = "exited",   [CT_END_EXIT] = "exit",
		[CT_END_SIGNAL] = "signal",   [CT_END_TIMEOUT] = "timeout", [CT_END_RUNNING] = "running"
	};
	return (unsigned)k < sizeof n / sizeof n[0] && n[k] ? n[k] : "unknown";
}

static void step_json(struct ct_json *j, const char *key, const struct ct_diag_step *s)
{
	ct_json_key(j, key);
	if (!s->set) {
		ct_json_null(j);
		return;
	}
	ct_json_obj_begin(j);
	ct_json_kuint(j, "seq", s->seq);
	ct_json_kstr(j, "call", s->call);
	ct_json_kstr(j, "text", s->text);
	if (!ct_stable())
		ct_json_kuint(j, "t_ns", s->t_ns);
	ct_json_kuint(j, "tid", ct_stable_id(s->tid));
	ct_json_kbool(j, "injected", s->injected);
	ct_json_obj_end(j);
}

void ct_verdict_json(struct ct_json *j, const struct ct_verdict *v)
{
	ct_json_obj_begin(j);
	ct_json_kbool(j, "ok", v->ok);
	ct_json_kstr(j, "layer", ct_layer_name(v->layer));
	step_json(j, "step", &v->step);
	ct_json_kstr(j, "summary", v->summary);
	ct_json_kstr(j, "fix", v->fix[0] ? v->fix : NULL);
	ct_json_kstr(j, "hint", v->hint[0] ? v->hint : NULL);
	ct_json_kstr(j, "notes", v->notes[0] ? v->notes : NULL);
	ct_json_kbool(j, "injected", v->injected);
	ct_json_kstr(j, "scenario", v->scenario[0] ? v->scenario : NULL);
	ct_json_kbool(j, "hung", v->hung);
	ct_json_key(j, "end");
	ct_json_obj_begin(j);
	{
		char sig[24];
		ct_json_kstr(j, "kind", end_kind_name(v->end.kind));
		ct_json_key(j, "exit_status");
		if (v->end.kind == CT_END_EXIT)
			ct_json_int(j, v->end.code);
		else
			ct_json_null(j);
		ct_json_kstr(j, "signal",
			     v->end.kind == CT_END_SIGNAL    ? ct_signal_name(v->end.code, sig, sizeof sig)
			     : v->end.kind == CT_END_TIMEOUT ? "SIGKILL"
							     : NULL);
		ct_json_kstr(j, "timeout", v->end.kind == CT_END_TIMEOUT ? v->end.limit : NULL);
		if (!ct_stable()) {
			ct_json_key(j, "t_ns");
			if (v->end_rel_ns != UINT64_MAX)
				ct_json_uint(j, v->end_rel_ns);
			else
				ct_json_null(j);
		}
	}
	ct_json_obj_end(j);
	ct_json_key(j, "slow_call");
	if (v->slow_call[0]) {
		ct_json_obj_begin(j);
		ct_json_kstr(j, "call", v->slow_call);
		if (!ct_stable())
			ct_json_kuint(j, "dur_ns", v->slow_ns);
		ct_json_obj_end(j);
	} else {
		ct_json_null(j);
	}
	ct_json_key(j, "final");
	if (v->final.set) {
		ct_json_obj_begin(j);
		ct_json_kstr(j, "call", v->final.call);
		ct_json_kint(j, "code", v->final_code);
		ct_json_kstr(j, "name", v->final_name[0] ? v->final_name : NULL);
		ct_json_kuint(j, "seq", v->final.seq);
		ct_json_obj_end(j);
	} else {
		ct_json_null(j);
	}
	ct_json_key(j, "contract");
	ct_json_obj_begin(j);
	ct_json_kint(j, "runtime_version", v->contract.runtime_version);
	ct_json_kstr(j, "runtime_version_from", v->contract.runtime_from);
	ct_json_kint(j, "driver_version", v->contract.driver_version);
	ct_json_kstr(j, "kernel_module_version", v->contract.kernel_version[0] ? v->contract.kernel_version : NULL);
	ct_json_kstr(j, "libcuda", v->contract.libcuda_path[0] ? v->contract.libcuda_path : NULL);
	ct_json_kstr(j, "libcuda_version", v->contract.libcuda_version[0] ? v->contract.libcuda_version : NULL);
	ct_json_kstr(j, "libcuda_kind", v->contract.libcuda_kind);
	ct_json_kstr(j, "class", v->contract.compat.name);
	ct_json_kstr(j, "rule", v->contract.rule_text);
	ct_json_obj_end(j);
	ct_json_obj_end(j);
}

/* "  step     +2.154 ms  TEXT" (without the time under --no-time) */
static void step_line(FILE *f, const char *what, uint64_t t_ns, const char *text)
{
	if (ct_stable())
		fprintf(f, "  %-8s %s\n", what, text);
	else
		fprintf(f, "  %-8s +%.3f ms  %s\n", what, (double)t_ns / 1e6, text);
}

void ct_verdict_line(FILE *f, const struct ct_verdict *v)
{
	char id[16];

	fprintf(f, "pid %s", ct_stable_idstr(v->pid, id, sizeof id));
	if (v->exe[0])
		fprintf(f, " (%s)", v->exe);
	if (v->rank >= 0)
		fprintf(f, " rank %d", v->rank);
	if (v->host[0])
		fprintf(f, " on %s", v->host);
	if (v->ok && (v->end.kind == CT_END_SIGNAL || v->end.kind == CT_END_TIMEOUT)) {
		/* initialization worked, the process did not end well */
		char end[96];
		fprintf(f, ": %sOK%s, then %s", ct_c(f, CT_C_GREEN), ct_c(f, CT_C_RESET),
			ct_end_text(&v->end, end, sizeof end));
		if (v->end_rel_ns != UINT64_MAX && !ct_stable())
			fprintf(f, " at +%.3f ms", (double)v->end_rel_ns / 1e6);
		fprintf(f, ": %s", v->summary);
		return;
	}
	if (v->ok)
		fprintf(f, ": %sOK%s %s", ct_c(f, CT_C_GREEN), ct_c(f, CT_C_RESET), v->summary);
	else
		fprintf(f, ": %sFAILED%s [%s]%s %s", ct_c(f, CT_C_RED), ct_c(f, CT_C_RESET), ct_layer_name(v->layer),
			v->injected ? " (injected)" : "", v->summary);
	/* how it ended, where that is known and the summary did not say it */
	if (!v->hung && (v->end.kind == CT_END_EXIT || v->end.kind == CT_END_SIGNAL ||
			 v->end.kind == CT_END_TIMEOUT || v->end.kind == CT_END_RUNNING)) {
		char end[96];
		fprintf(f, " (%s)", ct_end_text(&v->end, end, sizeof end));
	}
}

/* the block under a verdict line that already said the summary: step, then,
 * fix, notes, contract */
void ct_verdict_details(FILE *f, const struct ct_verdict *v)
{
	if (!v->ok) {
		if (v->step.set)
			step_line(f, "step", v->step.t_ns, v->step.text);
		if (v->final.set && v->final.seq != v->step.seq)
			step_line(f, "then", v->final.t_ns, v->final.text);
		if (v->fix[0])
			fprintf(f, "  fix      %s\n", v->fix);
		if (v->hint[0])
			fprintf(f, "  note     %s\n", v->hint);
	}
	if (v->notes[0])
		fprintf(f, "  note     %s\n", v->notes);
	if (v->contract.compat.cls != CT_COMPAT_UNKNOWN || v->contract.libcuda_path[0])
		fprintf(f, "  contract %s; libcuda %s (%s)%s%s\n", v->contract.rule_text,
			v->contract.libcuda_path[0] ? v->contract.libcuda_path : "-",
			v->contract.libcuda_kind, v->contract.kernel_version[0] ? ", kernel module " : "",
			v->contract.kernel_version);
}

void ct_verdict_text(FILE *f, const struct ct_verdict *v)
{
	fprintf(f, "  verdict  ");
	if (v->ok) {
		fprintf(f, "%sOK%s  %s\n", ct_c(f, CT_C_GREEN), ct_c(f, CT_C_RESET), v->summary);
	} else {
		fprintf(f, "%sFAILED%s  layer %s%s%s\n", ct_c(f, CT_C_RED), ct_c(f, CT_C_RESET), ct_c(f, CT_C_BOLD),
			ct_layer_name(v->layer), ct_c(f, CT_C_RESET));
		if (v->injected) {
			if (v->scenario[0])
				fprintf(f, "           %sthe failure was injected by cutrace (scenario %s)%s\n",
					ct_c(f, CT_C_YELLOW), v->scenario, ct_c(f, CT_C_RESET));
			else
				fprintf(f, "           %sthe failure was injected by cutrace%s\n", ct_c(f, CT_C_YELLOW),
					ct_c(f, CT_C_RESET));
		} else if (v->scenario[0]) {
			fprintf(f,
				"           %sa real failure: no rule of scenario %s fired on it or before it%s\n",
				ct_c(f, CT_C_YELLOW), v->scenario, ct_c(f, CT_C_RESET));
		}
		fprintf(f, "  why      %s\n", v->summary);
		if (v->step.set)
			step_line(f, "step", v->step.t_ns, v->step.text);
		if (v->final.set && v->final.seq != v->step.seq)
			step_line(f, "then", v->final.t_ns, v->final.text);
		if (v->fix[0])
			fprintf(f, "  fix      %s\n", v->fix);
		if (v->hint[0])
			fprintf(f, "  note     %s\n", v->hint);
	}
	if (v->notes[0])
		fprintf(f, "  note     %s\n", v->notes);
	if (v->contract.compat.cls != CT_COMPAT_UNKNOWN || v->contract.libcuda_path[0])
		fprintf(f, "  contract %s; libcuda %s (%s)%s%s\n", v->contract.rule_text,
			v->contract.libcuda_path[0] ? v->contract.libcuda_path : "-", v->contract.libcuda_kind,
			v->contract.kernel_version[0] ? ", kernel module " : "", v->contract.kernel_version);
}
