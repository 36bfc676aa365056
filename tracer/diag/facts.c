/*
 * Diagnosis of one process (see diag.h).
 *
 * One pass collects bounded facts: the libraries loaded or not, the first
 * failed open of an NVIDIA node, the version handshake, the first failing
 * RM and UVM ioctl, what CARD_INFO listed, the driver, runtime and NVML
 * results, calls that never returned.  The verdict then picks the final
 * error (what the program saw) and, among the low-level failures recorded
 * before it, the earliest one as the root cause.  The mapping from low-level
 * faults to the codes users see is the one measured on the real 580 driver
 * (shared/real-driver-580.md, tests/fixtures/h200-580/README.md); the field
 * cases and fixes are those of shared/failure-catalog.md.
 */
#include "diag.h"

/* every text here goes into a fixed buffer and is cut, on purpose, at its end */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tracer.h"
#include "version.h"
#include "xlat.h"
#include "inject_rules.h"
#include "fmt.h"
/* the hot paths format many short strings: the cheaper snprintf (fmt.c) */
#define snprintf ct_snprintf
#define vsnprintf ct_vsnprintf

/* ---- facts ------------------------------------------------------------------------ */
struct fact {
	struct ct_diag_step s;
	int code;                /* errno, status, return code */
	unsigned node_kind;
	char what[200];          /* short description for the summary */
	char path[128];
};

struct ct_diag {
	struct ct_trace *t;
	uint32_t drv;
	uint64_t t0;
	bool have_t0;
	struct ct_nv_ioctl nv;   /* scratch: an ioctl describe did not decode */

	/* loader */
	bool cuda_loaded;
	char cuda_path[256];
	uint64_t cuda_size;
	char cuda_ver[32];
	bool cuda_stub, cuda_compat;
	struct fact cuda_load;       /* the successful load */
	struct fact cuda_load_fail;  /* the first failed load */
	char cuda_dlerror[300];
	bool cudart_loaded;
	char cudart_path[256];
	int cudart_ver;
	bool nvml_loaded;
	struct fact nvml_load_fail;  /* the first failed load of NVML */
	char nvml_dlerror[300];
	bool deepbind;
	char deepbind_lib[128];

	/* kernel boundary */
	struct fact open_fail;       /* first failed open of a driver node (not caps) */
	struct fact caps_fail;       /* first failed open of an nvidia-caps node */
	bool hs_seen;
	char hs_kernel[64];
	struct fact hs_event;        /* the first answered handshake */
	struct fact hs_mismatch;
	struct fact rm_fail;
	struct fact uvm_fail;
	int cards;                   /* GPUs CARD_INFO listed, -1 never answered */
	struct fact card_empty;

	/* driver API */
	bool cuinit_seen;
	struct fact cuinit;          /* the first cuInit */
	char cvd[160];
	bool cvd_set;
	int drv_version;
	struct fact drvver;          /* the cuDriverGetVersion that reported it */
	bool devcount_seen;
	int dev_count;
	struct fact devcount_fail;
	struct fact devget_fail;
	struct fact ctx_fail;
	int gpa_max_ver;

	/* runtime, NVML */
	int rt_version, rt_drv_version;
	struct fact rt_fail;
	struct fact nvml_fail;

	/* calls that never returned */
	struct fact unfinished;      /* first driver/runtime/NVML call without exit */
	int unfinished_fam;
	struct fact unfinished_io;   /* last NVIDIA open/ioctl without exit */
	struct fact unfinished_ld;   /* last dlopen/dlmopen/dlsym/dlvsym without exit */
	struct fact first_injected;
	uint64_t last_t;
	uint64_t events;
};

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

struct ct_diag *ct_diag_new(void)
{
	return calloc(1, sizeof(struct ct_diag));
}

void ct_diag_free(struct ct_diag *d)
{
	free(d);
}

void ct_diag_begin(struct ct_diag *d, struct ct_trace *t)
{
	memset(d, 0, sizeof *d);
	d->t = t;
	d->drv = ct_trace_driver_version(t);
	d->cards = -1;
	d->dev_count = -1;
}

/* ---- helpers ---------------------------------------------------------------------- */
/* append to a fixed buffer (defined with the verdict texts) */
static void add(char *buf, size_t len, const char *fmt, ...) CT_PRINTF(3, 4);

static void step_from(struct ct_diag *d, struct ct_diag_step *s, const struct ct_event *ev,
		      const struct ct_desc *desc, const char *override)
{
	s->set = true;
	s->seq = ev->seq;
	s->t_ns = ev->t_ns >= d->t0 ? ev->t_ns - d->t0 : 0;
	s->end_ns = ev->has_exit ? s->t_ns + ev->dur_ns : UINT64_MAX;
	s->tid = ev->tid;
	s->injected = desc->injected;
	snprintf(s->call, sizeof s->call, "%s", desc->call);
	if (override)
		snprintf(s->text, sizeof s->text, "%s", override);
	else if (desc->returned)
		snprintf(s->text, sizeof s->text, "%s(%s) = %s", desc->call, desc->text_args, desc->result);
	else
		snprintf(s->text, sizeof s->text, "%s(%s) never returned", desc->call, desc->text_args);
}

static void set_fact(struct ct_diag *d, struct fact *f, const struct ct_event *ev,
		     const struct ct_desc *desc, int code, const char *what, const char *override)
{
	if (f->s.set)
		return;
	step_from(d, &f->s, ev, desc, override);
	f->code = code;
	if (what)
		snprintf(f->what, sizeof f->what, "%s", what);
}

static bool str_has(const char *s, const char *needle)
{
	return s && strstr(s, needle);
}

static const char *basename_of(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

static int int_field(const struct ct_event *ev, uint16_t tag, int64_t *v)
{
	struct ct_fieldv f;

	if (!ct_ev_field(ev, tag, &f))
		return 0;
	if (f.len == 8) {
		memcpy(v, f.data, 8);
		return 1;
	}
	if (f.len == 4) {
		int32_t x;
		memcpy(&x, f.data, 4);
		*v = x;
		return 1;
	}
	return 0;
}

static const char *str_field(const struct ct_event *ev, uint16_t tag, char *buf, size_t len)
{
	const char *s = NULL;

	if (ev->has_exit)
		s = ct_rec_str(&ev->exit, tag, buf, len);
	if (!s && ev->has_enter)
		s = ct_rec_str(&ev->enter, tag, buf, len);
	return s;
}

/* ---- per event ---------------------------------------------------------------------- */
/* a dlopen or dlsym without exit: the loader (or a library constructor it
 * ran) hung, or the process died inside it; the last one is the innermost */
static void unfinished_loader(struct ct_diag *d, const struct ct_event *ev, const struct ct_desc *desc,
			      const char *name)
{
	d->unfinished_ld.s.set = false;
	set_fact(d, &d->unfinished_ld, ev, desc, 0, NULL, NULL);
	snprintf(d->unfinished_ld.path, sizeof d->unfinished_ld.path, "%s", name ? name : desc->target);
	d->unfinished_ld.node_kind = ev->call;
}

static void on_dlopen(struct ct_diag *d, const struct ct_event *ev, const struct ct_desc *desc)
{
	char name[512], real[512];
	int64_t kind = CT_LIB_OTHER, flags = 0, size = 0;
	const char *lib = str_field(ev, CT_FLD_LIBNAME, name, sizeof name);
	const char *rp = str_field(ev, CT_FLD_REALPATH, real, sizeof real);

	if (!int_field(ev, CT_FLD_LIBKIND, &kind))
		kind = CT_LIB_OTHER;
	int_field(ev, CT_FLD_DLFLAGS, &flags);
	if ((flags & 0x8) /* RTLD_DEEPBIND */ && !d->deepbind) {
		d->deepbind = true;
		snprintf(d->deepbind_lib, sizeof d->deepbind_lib, "%s", lib ? lib : "?");
	}
	if (!ev->has_exit) {
		if (!ev->exit_unknown)
			unfinished_loader(d, ev, desc, lib);
		return;
	}
	if (kind == CT_LIB_CUDA) {
		if (ev->ret) {
			if (!d->cuda_loaded && rp) {
				d->cuda_loaded = true;
				snprintf(d->cuda_path, sizeof d->cuda_path, "%s", rp);
				if (int_field(ev, CT_FLD_FILESIZE, &size))
					d->cuda_size = (uint64_t)size;
				/* a driver version has dots (580.159.04); "1" of .so.1 is the soname */
				if (ct_version_from_name(rp, d->cuda_ver, sizeof d->cuda_ver) < 0 ||
				    !strchr(d->cuda_ver, '.'))
					d->cuda_ver[0] = 0;
				/* the toolkit stub is installed in .../stubs/ (failure-catalog
				 * B.3); a stub found under another name is caught by its 34 */
				d->cuda_stub = str_has(rp, "/stubs/");
				d->cuda_compat = str_has(rp, "/compat/");
				/* the step text names the file the loader picked */
				char text[360];
				snprintf(text, sizeof text, "%s(\"%s\") = %s", desc->call, lib ? lib : "?", rp);
				set_fact(d, &d->cuda_load, ev, desc, 0, rp, text);
			}
		} else if (!d->cuda_load_fail.s.set) {
			char err[300];
			set_fact(d, &d->cuda_load_fail, ev, desc, 0, lib ? lib : "libcuda", NULL);
			if (str_field(ev, CT_FLD_DLERROR, err, sizeof err))
				snprintf(d->cuda_dlerror, sizeof d->cuda_dlerror, "%s", err);
		}
	} else if (kind == CT_LIB_CUDART && ev->ret && rp && !d->cudart_loaded) {
		char v[32];
		d->cudart_loaded = true;
		snprintf(d->cudart_path, sizeof d->cudart_path, "%s", rp);
		if (ct_version_from_name(rp, v, sizeof v) == 0)
			d->cudart_ver = ct_cuda_version_parse(v);
	} else if (kind == CT_LIB_NVML) {
		if (ev->ret) {
			d->nvml_loaded = true;
		} else if (!d->nvml_load_fail.s.set) {
			char err[300];
			set_fact(d, &d->nvml_load_fail, ev, desc, 0, lib ? lib : "libnvidia-ml.so.1", NULL);
			if (str_field(ev, CT_FLD_DLERROR, err, sizeof err))
				snprintf(d->nvml_dlerror, sizeof d->nvml_dlerror, "%s", err);
		}
	}
}

static void on_open(struct ct_diag *d, const struct ct_event *ev, const struct ct_desc *desc)
{
	int64_t node = 0;
	char path[256];

	int_field(ev, CT_FLD_NODE, &node);
	if (!ev->has_exit) {
		if (ev->exit_unknown)
			return; /* its exit was lost, not proof of a hang */
		if (!d->unfinished_io.s.set || ev->seq > d->unfinished_io.s.seq) {
			d->unfinished_io.s.set = false;
			set_fact(d, &d->unfinished_io, ev, desc, 0, NULL, NULL);
			d->unfinished_io.node_kind = (unsigned)(node >> 16);
		}
		return;
	}
	if (ev->ret >= 0 || !node)
		return;
	struct fact *f = ((node >> 16) == CT_NODE_CAPS) ? &d->caps_fail : &d->open_fail;
	if (f->s.set)
		return;
	set_fact(d, f, ev, desc, ev->err, NULL, NULL);
	f->node_kind = (unsigned)(node >> 16);
	snprintf(f->path, sizeof f->path, "%s", str_field(ev, CT_FLD_PATH, path, sizeof path) ? path : "?");
}

/* what names an ioctl for grouping the same failure across processes: the
 * escape and its RM command or class (no handles, fds or addresses) */
static void nv_key(const struct ct_nv_ioctl *nv, char *buf, size_t len)
{
	snprintf(buf, len, "%s", nv->name);
	if (nv->args == CT_NV_A_RM_CONTROL)
		add(buf, len, " %s/0x%x", nv->u.control.cmd_name, nv->u.control.cmd);
	else if (nv->args == CT_NV_A_RM_ALLOC)
		add(buf, len, " class 0x%x", nv->u.alloc.hClass_in);
	if (nv->returned)
		add(buf, len, " err %d status 0x%x", nv->err, nv->has_status ? nv->status : 0);
}

/* the step's text for an ioctl, made in text[] the first time it is asked
 * for: most ioctls set no fact, and need none */
static const char *ioctl_text(const struct ct_nv_ioctl *nv, char *text, size_t len)
{
	if (text[0])
		return text;
	if (nv->returned || !nv->named)
		snprintf(text, len, "ioctl(%s, %s)%s", nv->node_name, nv->summary,
			 nv->returned ? "" : " never returned");
	else /* the summary would only add "-> (no return)" */
		snprintf(text, len, "ioctl(%s, %s) never returned", nv->node_name, nv->name);
	return text;
}

static void on_ioctl(struct ct_diag *d, const struct ct_event *ev, const struct ct_desc *desc)
{
	const struct ct_nv_ioctl *nv = desc->nv;
	char text[360];

	text[0] = 0;
	/* describe decoded it already, with the device map the reader keeps
	 * for the trace (ct_trace_devmap); a description without it decodes here */
	if (!nv) {
		if (ct_nv_decode(ev, d->drv, ct_trace_devmap(d->t), &d->nv) < 0)
			return;
		nv = &d->nv;
	}
	if (nv->family == CT_NV_FAM_NOT_NVIDIA)
		return;
	if (!nv->returned) {
		if (ev->exit_unknown)
			return;
		d->unfinished_io.s.set = false;
		set_fact(d, &d->unfinished_io, ev, desc, 0, nv->summary, ioctl_text(nv, text, sizeof text));
		d->unfinished_io.node_kind = nv->node_kind;
		nv_key(nv, d->unfinished_io.path, sizeof d->unfinished_io.path);
		return;
	}
	/* the version handshake */
	if (nv->handshake.source != CT_NV_HS_NONE && nv->handshake.result != CT_NV_HS_UNKNOWN) {
		/* a copy: the comparison below fills in the client's side */
		static struct ct_nv_handshake hs;
		struct ct_nv_handshake *h = &hs;
		hs = nv->handshake;
		d->hs_seen = true;
		set_fact(d, &d->hs_event, ev, desc, 0, h->kernel, ioctl_text(nv, text, sizeof text));
		if (h->kernel[0])
			snprintf(d->hs_kernel, sizeof d->hs_kernel, "%s", h->kernel);
		if (h->result == CT_NV_HS_REPORTED && d->cuda_ver[0] &&
		    (h->source == CT_NV_HS_BUILD_VERSION || h->source == CT_NV_HS_BUILD_VERSION_V2))
			ct_nv_handshake_compare(h, d->cuda_ver);
		bool mismatch = h->result == CT_NV_HS_MISMATCH;
		/* a cuda-compat libcuda newer than the kernel module is the point of
		 * forward compatibility, not a mismatch; an older one is (803) */
		if (mismatch && d->cuda_compat && h->source != CT_NV_HS_CHECK_VERSION_STR &&
		    h->kernel[0] && d->cuda_ver[0] && ct_version_cmp(d->cuda_ver, h->kernel) > 0)
			mismatch = false;
		if (mismatch && !d->hs_mismatch.s.set) {
			char what[200];
			snprintf(what, sizeof what, "%s|%s|%s", h->client[0] ? h->client : "?", h->kernel,
				 h->source == CT_NV_HS_CHECK_VERSION_STR ? "CHECK_VERSION_STR" : "GET_BUILD_VERSION");
			set_fact(d, &d->hs_mismatch, ev, desc, 0, what, ioctl_text(nv, text, sizeof text));
			snprintf(d->hs_mismatch.path, sizeof d->hs_mismatch.path, "%s", what);
			if (nv->injected)
				d->hs_mismatch.s.injected = true;
		}
	}
	if (nv->args == CT_NV_A_CARD_INFO && nv->ok) {
		if (d->cards < 0 || (int)nv->ncards > d->cards)
			d->cards = (int)nv->ncards;
		if (nv->ncards == 0 && !d->card_empty.s.set) {
			set_fact(d, &d->card_empty, ev, desc, 0, "CARD_INFO", ioctl_text(nv, text, sizeof text));
			nv_key(nv, d->card_empty.path, sizeof d->card_empty.path);
		}
	}
	if (nv->ok || nv->is_warning)
		return;
	struct fact *f = nv->family == CT_NV_FAM_UVM ? &d->uvm_fail : &d->rm_fail;
	if (f->s.set)
		return;
	set_fact(d, f, ev, desc, nv->has_status && nv->ret >= 0 ? (int)nv->status : nv->err,
		 nv->summary, ioctl_text(nv, text, sizeof text));
	f->node_kind = nv->node_kind;
	nv_key(nv, f->path, sizeof f->path);
	if (nv->injected)
		f->s.injected = true;
}

static bool is_ctx_call(unsigned c)
{
	return c == CT_CALL_cuDevicePrimaryCtxRetain || c == CT_CALL_cuCtxCreate ||
	       c == CT_CALL_cuCtxCreate_v2 || c == CT_CALL_cuCtxCreate_v3 || c == CT_CALL_cuCtxCreate_v4;
}

/*
 * A call without an exit is not always a hang: in a trace whose ring
 * wrapped, the exit may have been overwritten (the enter surviving in the
 * init area), and the reader gives up waiting for an exit after its pairing
 * window (the exit then arrives as an orphan).  Later events of the same
 * thread prove that the call returned: an orphan exit that names it, or any
 * later call that cannot have been made from inside it.  Driver and NVML
 * calls run inside runtime calls, NVIDIA opens and ioctls inside all three;
 * nothing runs inside an open or an ioctl.
 */
static int nest_level(int fam)
{
	return fam == CT_FAM_RUNTIME ? 3 : fam == CT_FAM_DRIVER || fam == CT_FAM_NVML ? 2 : 1;
}

static void check_returned(struct ct_diag *d, const struct ct_event *ev)
{
	uint64_t enter_seq = ev->has_exit && ev->exit.exit ? ev->exit.exit->enter_seq : UINT64_MAX;
	int fam = ct_call_family(ev->call), lvl;

	if (ev->type == CT_REC_NOTE)
		return;
	lvl = ev->call == CT_CALL_ioctl || (ev->call >= CT_CALL_open && ev->call <= CT_CALL___openat64_2) ? 1
	      : fam == CT_FAM_DRIVER || fam == CT_FAM_RUNTIME || fam == CT_FAM_NVML ? nest_level(fam) : 0;
	if (d->unfinished.s.set && ev->tid == d->unfinished.s.tid &&
	    ((!ev->has_enter && enter_seq == d->unfinished.s.seq) ||
	     (ev->has_enter && ev->seq != d->unfinished.s.seq && lvl >= nest_level(d->unfinished_fam))))
		d->unfinished.s.set = false;
	if (d->unfinished_io.s.set && ev->tid == d->unfinished_io.s.tid &&
	    ((!ev->has_enter && enter_seq == d->unfinished_io.s.seq) ||
	     (ev->has_enter && ev->seq != d->unfinished_io.s.seq && lvl >= 1)))
		d->unfinished_io.s.set = false;
	/* nothing hooked runs inside dlsym; a dlopen runs library constructors,
	 * which may call anything: only its own exit proves that it returned */
	if (d->unfinished_ld.s.set && ev->tid == d->unfinished_ld.s.tid &&
	    ((!ev->has_enter && enter_seq == d->unfinished_ld.s.seq) ||
	     (ev->has_enter && ev->seq != d->unfinished_ld.s.seq &&
	      (d->unfinished_ld.node_kind == CT_CALL_dlsym || d->unfinished_ld.node_kind == CT_CALL_dlvsym))))
		d->unfinished_ld.s.set = false;
}

void ct_diag_event(struct ct_diag *d, const struct ct_event *ev, const struct ct_desc *desc)
{
	unsigned c = ev->call;
	int64_t v;

	if (!d->have_t0) {
		d->t0 = ev->t_ns;
		d->have_t0 = true;
	}
	d->events++;
	d->last_t = ev->t_ns + ev->dur_ns;
	if (desc->injected && !d->first_injected.s.set)
		set_fact(d, &d->first_injected, ev, desc, 0, NULL, NULL);
	if (d->unfinished.s.set || d->unfinished_io.s.set || d->unfinished_ld.s.set)
		check_returned(d, ev);
	if (!ev->has_enter && ev->type != CT_REC_NOTE)
		return; /* an exit whose enter the ring dropped: too little to reason on */

	if (c == CT_CALL_dlopen || c == CT_CALL_dlmopen) {
		on_dlopen(d, ev, desc);
		return;
	}
	if (c == CT_CALL_dlsym || c == CT_CALL_dlvsym) {
		if (!ev->has_exit && !ev->exit_unknown)
			unfinished_loader(d, ev, desc, desc->target[0] ? desc->target : NULL);
		return;
	}
	if (c >= CT_CALL_open && c <= CT_CALL___openat64_2) {
		on_open(d, ev, desc);
		return;
	}
	if (c == CT_CALL_ioctl) {
		on_ioctl(d, ev, desc);
		return;
	}
	int fam = ct_call_family(c);
	if (fam != CT_FAM_DRIVER && fam != CT_FAM_RUNTIME && fam != CT_FAM_NVML)
		return;
	if (!ev->has_exit) {
		if (ev->exit_unknown)
			return;
		if (!d->unfinished.s.set)
			d->unfinished_fam = fam;
		set_fact(d, &d->unfinished, ev, desc, 0, NULL, NULL);
		return;
	}
	int ret = (int)ev->ret;
	switch (c) {
	case CT_CALL_cuInit: {
		char env[200];
		if (!d->cuinit_seen) {
			d->cuinit_seen = true;
			set_fact(d, &d->cuinit, ev, desc, ret, NULL, NULL);
			if (str_field(ev, CT_FLD_ENV, env, sizeof env) && !strncmp(env, "CUDA_VISIBLE_DEVICES=", 21)) {
				d->cvd_set = true;
				snprintf(d->cvd, sizeof d->cvd, "%s", env + 21);
			}
		}
		return;
	}
	case CT_CALL_cuDriverGetVersion:
		if (ret == 0 && int_field(ev, CT_FLD_OUT, &v)) {
			d->drv_version = (int)v;
			/* the last answer counts: cudart asks after cuInit */
			d->drvver.s.set = false;
			set_fact(d, &d->drvver, ev, desc, (int)v, NULL, NULL);
		}
		return;
	case CT_CALL_cuDeviceGetCount:
		if (ret == 0 && int_field(ev, CT_FLD_OUT, &v)) {
			d->devcount_seen = true;
			d->dev_count = (int)v;
		} else if (ret) {
			set_fact(d, &d->devcount_fail, ev, desc, ret, NULL, NULL);
		}
		return;
	case CT_CALL_cuDeviceGet:
		if (ret)
			set_fact(d, &d->devget_fail, ev, desc, ret, NULL, NULL);
		if (ret && int_field(ev, CT_FLD_ARG, &v))
			d->devget_fail.node_kind = (unsigned)v; /* the ordinal asked for */
		return;
	case CT_CALL_cuGetProcAddress:
	case CT_CALL_cuGetProcAddress_v2:
		if (int_field(ev, CT_FLD_CUDAVER, &v) && v > d->gpa_max_ver && v < 100000)
			d->gpa_max_ver = (int)v;
		return;
	case CT_CALL_cudaRuntimeGetVersion:
		if (ret == 0 && int_field(ev, CT_FLD_OUT, &v))
			d->rt_version = (int)v;
		return;
	case CT_CALL_cudaDriverGetVersion:
		if (ret == 0 && int_field(ev, CT_FLD_OUT, &v))
			d->rt_drv_version = (int)v;
		return;
	default:
		break;
	}
	if (is_ctx_call(c) && ret) {
		set_fact(d, &d->ctx_fail, ev, desc, ret, NULL, NULL);
		return;
	}
	if (fam == CT_FAM_RUNTIME && ret) {
		set_fact(d, &d->rt_fail, ev, desc, ret, NULL, NULL);
		return;
	}
	if (fam == CT_FAM_NVML && ret && (c == CT_CALL_nvmlInit || c == CT_CALL_nvmlInit_v2 ||
					  c == CT_CALL_nvmlInitWithFlags))
		set_fact(d, &d->nvml_fail, ev, desc, ret, NULL, NULL);
}

/* ---- the verdict --------------------------------------------------------------------- */
static const char *node_label(unsigned kind)
{
	switch (kind) {
	case CT_NODE_CTL: return "the control node";
	case CT_NODE_GPU: return "the GPU node";
	case CT_NODE_UVM: return "the unified-memory node";
	case CT_NODE_UVM_TOOLS: return "the UVM tools node";
	case CT_NODE_CAPS: return "a capability node (MIG/fabric)";
	default: return "an NVIDIA node";
	}
}

static void add(char *buf, size_t len, const char *fmt, ...) CT_PRINTF(3, 4);
static void add(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

static const char *code_name(const struct ct_diag_step *s, int code, char *buf, size_t len)
{
	const char *n = NULL;
	int fam = 0;

	for (unsigned c = 1; c < CT_CALL__MAX; c++)
		if (!strcmp(ct_call_name(c), s->call)) {
			fam = ct_call_family(c);
			break;
		}
	if (fam == CT_FAM_DRIVER)
		n = ct_cu_result_name(code);
	else if (fam == CT_FAM_RUNTIME)
		n = ct_cudart_error_name(code);
	else if (fam == CT_FAM_NVML)
		n = ct_nvml_return_name(code);
	snprintf(buf, len, "%s", n ? n : "");
	return buf;
}

static void device_node_text(const struct fact *f, struct ct_verdict *v)
{
	const char *en = ct_errno_name(f->code);
	const char *what = node_label(f->node_kind);

	snprintf(v->summary, sizeof v->summary, "open(%s) failed with %s: %s ", f->path, en ? en : "?", what);
	switch (f->code) {
	case 2: /* ENOENT */
		add(v->summary, sizeof v->summary, "does not exist");
		if (f->node_kind == CT_NODE_UVM || f->node_kind == CT_NODE_UVM_TOOLS)
			snprintf(v->fix, sizeof v->fix,
				 "load nvidia_uvm and create its nodes (sudo nvidia-modprobe -u -c 0, or modprobe nvidia_uvm); "
				 "in a container pass /dev/nvidia-uvm and /dev/nvidia-uvm-tools (--device, CDI or --gpus)");
		else if (f->node_kind == CT_NODE_CAPS)
			snprintf(v->fix, sizeof v->fix,
				 "pass the /dev/nvidia-caps nodes to the container (MIG needs them), or use a toolkit version that creates them");
		else
			snprintf(v->fix, sizeof v->fix,
				 "check that the NVIDIA kernel module is loaded (lsmod | grep nvidia) and its nodes exist; "
				 "in a container run with GPU access (--gpus all, CDI, or --device for every /dev/nvidia* node)");
		break;
	case 1: /* EPERM */
		add(v->summary, sizeof v->summary, "is denied by the device cgroup (operation not permitted)");
		snprintf(v->fix, sizeof v->fix,
			 "the container's device cgroup does not allow this node (a systemd daemon-reload can drop "
			 "'c 195:* rw', NVIDIA/nvidia-container-toolkit#48): recreate the container, pass the node with "
			 "--device or CDI, or run 'nvidia-ctk system create-dev-char-symlinks --create-all' on the host");
		break;
	case 13: /* EACCES */
		add(v->summary, sizeof v->summary, "is not accessible (permission denied)");
		snprintf(v->fix, sizeof v->fix,
			 "give the user read/write access to the node (ls -l /dev/nvidia*: usually mode 0666 or the "
			 "video group) or allow it in SELinux (container_use_devices)");
		break;
	case 5: /* EIO */
		add(v->summary, sizeof v->summary, "exists but the GPU failed to initialize in the kernel");
		snprintf(v->fix, sizeof v->fix,
			 "look for 'RmInitAdapter failed' / 'rm_init_adapter failed' in dmesg; reset or power-cycle "
			 "the GPU and check that the GSP firmware matches the driver version");
		break;
	default:
		add(v->summary, sizeof v->summary, "could not be opened");
		snprintf(v->fix, sizeof v->fix, "check the node (ls -l %s) and the kernel log (dmesg)", f->path);
	}
	if (f->node_kind == CT_NODE_CAPS && (f->code == 1 || f->code == 13))
		snprintf(v->fix, sizeof v->fix,
			 "MIG needs the capability nodes /dev/nvidia-caps/* in the container and its device cgroup "
			 "(toolkit 1.18+ regressed this for non-privileged MIG, NVIDIA/nvidia-container-toolkit#1740): "
			 "pass them (--device, CDI), and check their modes against "
			 "/proc/driver/nvidia/capabilities/*/access");
}

static void handshake_text(struct ct_diag *d, const struct fact *f, struct ct_verdict *v)
{
	char client[64] = "", kernel[64] = "", src[32] = "";
	const char *p = f->what, *bar = strchr(p, '|');

	if (bar) {
		snprintf(client, sizeof client, "%.*s", (int)(bar - p), p);
		p = bar + 1;
		bar = strchr(p, '|');
		if (bar) {
			snprintf(kernel, sizeof kernel, "%.*s", (int)(bar - p), p);
			snprintf(src, sizeof src, "%s", bar + 1);
		}
	}
	if (!strcmp(src, "CHECK_VERSION_STR")) {
		snprintf(v->summary, sizeof v->summary,
			 "the user-space driver (version %s) and the kernel module (version %s) disagree: "
			 "NV_ESC_CHECK_VERSION_STR was rejected (NVML says 'Driver/library version mismatch')",
			 client, kernel);
	} else {
		snprintf(v->summary, sizeof v->summary,
			 "%s %s is version %s but the kernel module is %s (GET_BUILD_VERSION)",
			 d->cuda_compat ? "the cuda-compat libcuda" : "libcuda", d->cuda_path[0] ? d->cuda_path : "",
			 client[0] && strcmp(client, "?") ? client : d->cuda_ver, kernel);
	}
	if (d->cuda_compat)
		snprintf(v->fix, sizeof v->fix,
			 "a cuda-compat libcuda must be newer than the kernel driver: remove %.*s from LD_LIBRARY_PATH "
			 "(the host driver already supports this CUDA) or install a matching cuda-compat package",
			 (int)(strrchr(d->cuda_path, '/') ? strrchr(d->cuda_path, '/') - d->cuda_path : 0), d->cuda_path);
	else
		snprintf(v->fix, sizeof v->fix,
			 "user-space driver libraries and the loaded kernel module must be the same version: reboot "
			 "(or reload the nvidia modules) after a driver upgrade, or remove a stale libcuda/libnvidia-ml "
			 "from LD_LIBRARY_PATH");
}

static void rm_text(const struct fact *f, struct ct_verdict *v, bool uvm)
{
	snprintf(v->summary, sizeof v->summary, "%s %s", uvm ? "the unified-memory driver failed:" :
		 "the kernel driver's resource manager failed:", f->what);
	const char *w = f->what;
	if (uvm && str_has(w, "UVM_INITIALIZE"))
		snprintf(v->fix, sizeof v->fix,
			 "nvidia-uvm refused to initialize: reload it (rmmod nvidia_uvm && modprobe nvidia_uvm), "
			 "e.g. after suspend/resume, and check dmesg");
	else if (uvm && str_has(w, "UVM_REGISTER_GPU"))
		snprintf(v->fix, sizeof v->fix,
			 "nvidia-uvm could not register the GPU: with the open kernel modules and HMM (EL9+, Blackwell) "
			 "set 'options nvidia_uvm uvm_disable_hmm=1' and reboot; also check dmesg and free host memory");
	else if (uvm)
		snprintf(v->fix, sizeof v->fix, "check dmesg for nvidia-uvm messages; reloading nvidia_uvm often helps");
	else if (str_has(w, "INSUFFICIENT_PERMISSIONS"))
		snprintf(v->fix, sizeof v->fix,
			 "the driver refused for lack of privilege: check the nvidia-caps nodes and MIG permissions "
			 "(/proc/driver/nvidia/capabilities) and that the container got them");
	else if (str_has(w, "IN_USE"))
		snprintf(v->fix, sizeof v->fix,
			 "the GPU is held by another process or in EXCLUSIVE_PROCESS compute mode (nvidia-smi -q | grep "
			 "'Compute Mode'): free it, or 'nvidia-smi -c DEFAULT'");
	else if (str_has(w, "FABRIC") || str_has(w, "NVLINK"))
		snprintf(v->fix, sizeof v->fix,
			 "the NVLink fabric is not ready: install and start nvidia-fabricmanager matching the driver version");
	else if (str_has(w, "GPU_IS_LOST") || str_has(w, "RESET_REQUIRED"))
		snprintf(v->fix, sizeof v->fix, "the GPU fell off the bus or needs a reset: check dmesg (Xid), reset the GPU");
	else if (str_has(w, "CARD_INFO"))
		snprintf(v->fix, sizeof v->fix,
			 "the kernel driver could not list the GPUs: check dmesg and 'nvidia-smi -L'");
	else
		snprintf(v->fix, sizeof v->fix, "check the kernel log (dmesg, 'NVRM:' lines) for the driver's reason");
}

static void contract(struct ct_diag *d, struct ct_verdict *v)
{
	char kv[32] = "", buf[32], buf2[32];
	uint32_t k = d->drv;
	int drv_cuda;

	/* print as the module does (580.159.04): minor is not zero padded */
	if (k)
		snprintf(kv, sizeof kv, "%u.%u.%02u", k / 1000000, k / 1000 % 1000, k % 1000);
	snprintf(v->contract.kernel_version, sizeof v->contract.kernel_version, "%s", d->hs_kernel[0] ? d->hs_kernel : kv);
	snprintf(v->contract.libcuda_version, sizeof v->contract.libcuda_version, "%s", d->cuda_ver);
	snprintf(v->contract.libcuda_path, sizeof v->contract.libcuda_path, "%s", d->cuda_path);
	v->contract.libcuda_kind = !d->cuda_loaded ? (d->cuda_load_fail.s.set ? "not loaded" : "unknown")
				 : d->cuda_stub ? "stub" : d->cuda_compat ? "compat" : "host";
	v->contract.runtime_version = d->rt_version;
	v->contract.runtime_from = d->rt_version ? "cudaRuntimeGetVersion" : NULL;
	if (!v->contract.runtime_version && d->cudart_ver) {
		v->contract.runtime_version = d->cudart_ver;
		v->contract.runtime_from = "libcudart file name";
	}
	if (!v->contract.runtime_version && d->gpa_max_ver >= 10000) {
		v->contract.runtime_version = d->gpa_max_ver;
		v->contract.runtime_from = "cuGetProcAddress cudaVersion";
	}
	v->contract.driver_version = d->drv_version ? d->drv_version : d->rt_drv_version;
	drv_cuda = v->contract.driver_version;
	if (!drv_cuda && v->contract.kernel_version[0])
		drv_cuda = ct_driver_cuda_version(v->contract.kernel_version);
	ct_compat_classify(drv_cuda, v->contract.runtime_version, d->cuda_compat, &v->contract.compat);
	if (v->contract.compat.cls == CT_COMPAT_UNKNOWN)
		snprintf(v->contract.rule_text, sizeof v->contract.rule_text,
			 "not classified: %s", !v->contract.runtime_version ? "no runtime version recorded"
					       : "no driver version recorded");
	else
		snprintf(v->contract.rule_text, sizeof v->contract.rule_text, "%s: %s (driver CUDA %s, runtime CUDA %s%s%s)",
			 v->contract.compat.name, v->contract.compat.rule,
			 ct_cuda_version_str(drv_cuda, buf, sizeof buf),
			 ct_cuda_version_str(v->contract.runtime_version, buf2, sizeof buf2),
			 v->contract.runtime_from ? ", from " : "", v->contract.runtime_from ? v->contract.runtime_from : "");
}

static const struct fact *earliest(const struct fact *const *c, int n)
{
	const struct fact *best = NULL;

	for (int i = 0; i < n; i++)
		if (c[i] && c[i]->s.set && (!best || c[i]->s.seq < best->s.seq))
			best = c[i];
	return best;
}

static int rank_of(struct ct_trace *t)
{
	static const char *const vars[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					    "LOCAL_RANK", NULL };
	char buf[64];

	for (int i = 0; vars[i]; i++)
		if (ct_trace_env(t, vars[i], buf, sizeof buf) && buf[0]) {
			char *end;
			long r = strtol(buf, &end, 10);
			if (!*end && r >= 0)
				return (int)r;
		}
	return -1;
}

/* "ioctl(nvidia-uvm, UVM_REGISTER_GPU) never returned" -> "ioctl(nvidia-uvm, UVM_REGISTER_GPU)" */
static const char *call_text(const struct ct_diag_step *s, char *buf, size_t len)
{
	static const char tail[] = " never returned";
	size_t n = strlen(s->text), t = sizeof tail - 1;

	if (n > t && !strcmp(s->text + n - t, tail))
		n -= t;
	snprintf(buf, len, "%.*s", (int)n, s->text);
	return buf;
}

/*
 * A delay= rule that may have held this call: the shim marks the enter
 * record of a delayed call (then step->injected is set); traces written
 * before it did only name the rules in force.  A rule counts when it covers
 * the held call, or (with a delay of a second or more) an open/ioctl under a
 * driver or runtime call that was held with nothing recorded inside it.
 */
static bool delay_rule_for(struct ct_diag *d, const struct ct_diag_step *s, char *rule, size_t len)
{
	char spec[1024], err[160];
	struct ct_rule *r;
	int n, call = 0, fam;
	bool hit = false;

	if (!ct_trace_ctx_str(d->t, CT_CTX_INJECT, 0, spec, sizeof spec))
		return false;
	for (unsigned c = 1; c < CT_CALL__MAX; c++)
		if (!strcmp(ct_call_name(c), s->call))
			call = (int)c;
	/* rules cover calls by a 64-bit mask */
	if (!call || call >= 64 || !(r = calloc(CT_RULES_MAX, sizeof *r)))
		return false;
	fam = ct_call_family((unsigned)call);
	n = ct_rules_parse(spec, r, CT_RULES_MAX, err, sizeof err);
	for (int i = 0; i < n && !hit; i++) {
		if (!r[i].delay_ns)
			continue;
		/* under a driver call, only a delay long enough to look like a hang */
		if ((r[i].calls & (1ull << call)) ||
		    ((fam == CT_FAM_DRIVER || fam == CT_FAM_RUNTIME || fam == CT_FAM_NVML) &&
		     r[i].delay_ns >= 1000000000ull &&
		     (r[i].calls & ((1ull << CT_CALL_ioctl) | (1ull << CT_CALL_open) | (1ull << CT_CALL_openat))))) {
			hit = true;
			/* the rule's text: the i-th ';'-separated part */
			const char *p = spec;
			for (int k = 0; k < i && p; k++)
				if ((p = strchr(p, ';')))
					p++;
			while (p && *p == ' ')
				p++;
			snprintf(rule, len, "%.*s", p ? (int)strcspn(p, ";") : 0, p ? p : "");
		}
	}
	free(r);
	return hit;
}

static void hang_verdict(struct ct_diag *d, struct ct_verdict *v, const struct cutrace_header *h)
{
	const struct fact *io = d->unfinished_io.s.set ? &d->unfinished_io : NULL;
	const struct fact *drv = d->unfinished.s.set ? &d->unfinished : NULL;
	const struct fact *ld = d->unfinished_ld.s.set ? &d->unfinished_ld : NULL;
	const struct fact *all[] = { drv, ld, io };
	const struct fact *inner, *outer;
	char in_text[360], out_text[360], rule[200] = "";
	bool exited = h->flags & CT_HF_EXITED;

	/* the innermost held call is where it stopped: an open or ioctl (nothing
	 * runs inside one), else the later of a driver and a loader call; the
	 * outermost held call of that thread is the one the program made */
	if (io)
		inner = io;
	else if (drv && ld)
		inner = ld->s.seq > drv->s.seq ? ld : drv;
	else
		inner = drv ? drv : ld;
	outer = inner;
	for (int i = 0; i < 3; i++)
		if (all[i] && all[i]->s.tid == inner->s.tid && all[i]->s.seq < outer->s.seq)
			outer = all[i];
	v->ok = false;
	v->hung = true;
	v->step = inner->s;
	v->final = outer->s;
	if (inner == io)
		v->layer = inner->node_kind == CT_NODE_UVM || inner->node_kind == CT_NODE_UVM_TOOLS ? CT_LAYER_UVM
			 : strcmp(inner->s.call, "ioctl") ? CT_LAYER_DEVICE_NODE : CT_LAYER_RESOURCE_MANAGER;
	else if (inner == ld)
		v->layer = CT_LAYER_LOADER;
	else
		v->layer = CT_LAYER_DRIVER_API;
	v->injected = v->step.injected;
	if (!v->injected && delay_rule_for(d, &v->step, rule, sizeof rule))
		v->injected = true;

	call_text(&outer->s, out_text, sizeof out_text);
	call_text(&inner->s, in_text, sizeof in_text);
	snprintf(v->summary, sizeof v->summary, "%s entered at +%.3f ms and never returned", out_text,
		 (double)outer->s.t_ns / 1e6);
	if (inner != outer)
		add(v->summary, sizeof v->summary, ": it was inside %s (entered at +%.3f ms), which did not return "
		    "either", in_text, (double)inner->s.t_ns / 1e6);
	if (v->step.injected)
		add(v->summary, sizeof v->summary, "; an injected delay held it");
	else if (rule[0])
		add(v->summary, sizeof v->summary, "; the injection rule '%s' was in force and may have held it", rule);
	add(v->summary, sizeof v->summary, "; the process %s",
	    exited ? "exited with the call still open" : "was killed or crashed (or was still running) while in it");

	if (v->injected)
		snprintf(v->fix, sizeof v->fix, "this hang was produced by a cutrace delay= rule: run without it to see "
			 "the real behaviour");
	else if (inner == ld)
		snprintf(v->fix, sizeof v->fix,
			 "the dynamic loader or a constructor of the library being loaded hung or crashed: find which "
			 "with LD_DEBUG=files or gdb (a lock held across fork(), a constructor that waits on a thread, "
			 "a crash in the library's initializer)");
	else
		snprintf(v->fix, sizeof v->fix,
			 "a hang inside the driver: look at dmesg (Xid, NVRM), check the GPU with nvidia-smi, and for "
			 "NVSwitch systems the fabric manager; a crash: run with core dumps enabled");
}

/*
 * What makes two processes' failures the same, for the job summary: the
 * layer, the kind of root step and what it was about (node and errno, the
 * ioctl and its status, the library), the final code, hung or not, injected
 * or not.  Never times, pids, fds or handles: a job-wide hang is one group.
 */
static void group_key(struct ct_diag *d, struct ct_verdict *v)
{
	const struct fact *facts[] = { &d->open_fail, &d->caps_fail, &d->uvm_fail, &d->rm_fail, &d->hs_mismatch,
				       &d->card_empty, &d->unfinished_io, &d->unfinished_ld, &d->cuda_load_fail,
				       &d->nvml_load_fail };
	const char *detail = "";
	int code = 0;

	if (v->ok) {
		snprintf(v->group_key, sizeof v->group_key, "ok");
		return;
	}
	for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
		if (v->step.set && facts[i]->s.set && facts[i]->s.seq == v->step.seq) {
			detail = facts[i] == &d->cuda_load_fail || facts[i] == &d->nvml_load_fail ? facts[i]->what
												   : facts[i]->path;
			code = facts[i]->code;
			break;
		}
	snprintf(v->group_key, sizeof v->group_key, "%s|%s|%s|%d|%s|%d|%c%c", ct_layer_name(v->layer),
		 v->step.set ? v->step.call : "", detail, code, v->final.set ? v->final.call : "", v->final_code,
		 v->hung ? 'H' : '-', v->injected ? 'I' : '-');
}

void ct_diag_end(struct ct_diag *d, const struct ct_trace_stats *st, struct ct_verdict *v)
{
	const struct cutrace_header *h = ct_trace_header(d->t);
	const struct fact *final = NULL, *root = NULL;
	char name[64];

	(void)st;
	memset(v, 0, sizeof *v);
	v->pid = h->pid;
	v->rank = rank_of(d->t);
	ct_trace_ctx_str(d->t, CT_CTX_HOST, 0, v->host, sizeof v->host);
	if (ct_trace_ctx_str(d->t, CT_CTX_EXE, 0, v->exe, sizeof v->exe))
		memmove(v->exe, basename_of(v->exe), strlen(basename_of(v->exe)) + 1);
	contract(d, v);

	/* what the program saw: the runtime's answer when there is one, else the driver's */
	if (d->rt_fail.s.set)
		final = &d->rt_fail;
	else if (d->cuinit.s.set && d->cuinit.code)
		final = &d->cuinit;
	else if (d->ctx_fail.s.set)
		final = &d->ctx_fail;
	else if (d->devget_fail.s.set)
		final = &d->devget_fail;
	else if (d->devcount_fail.s.set)
		final = &d->devcount_fail;
	else if (d->nvml_fail.s.set)
		final = &d->nvml_fail;
	else if (d->cuda_load_fail.s.set && !d->cuda_loaded && !d->cuinit_seen)
		final = &d->cuda_load_fail;
	/* NVML that could not be loaded is the failure when nothing else is:
	 * a process that initialized CUDA only probed for it (a note below) */
	else if (d->nvml_load_fail.s.set && !d->nvml_loaded && !d->cuinit_seen)
		final = &d->nvml_load_fail;

	if (final) {
		v->final = final->s;
		v->final_code = final->code;
		if (final != &d->cuda_load_fail && final != &d->nvml_load_fail)
			snprintf(v->final_name, sizeof v->final_name, "%s", code_name(&final->s, final->code, name, sizeof name));
	}

	/* a call that never returned, with nothing failing before it: a hang or a crash in it */
	if (!final && (d->unfinished.s.set || d->unfinished_io.s.set || d->unfinished_ld.s.set)) {
		hang_verdict(d, v, h);
		goto done;
	}
	if (!final) {
		v->ok = true;
		v->layer = CT_LAYER_NONE;
		if (d->cuinit_seen)
			snprintf(v->summary, sizeof v->summary, "CUDA initialized: cuInit succeeded%s%s",
				 d->devcount_seen ? ", devices: " : "", "");
		else if (d->cuda_loaded)
			snprintf(v->summary, sizeof v->summary, "libcuda loaded (%s); no failing CUDA call", d->cuda_path);
		else
			snprintf(v->summary, sizeof v->summary, "no failing CUDA call recorded");
		if (d->devcount_seen)
			add(v->summary, sizeof v->summary, "%d", d->dev_count);
		goto done;
	}

	v->ok = false;
	/* 1. the loader */
	if (final == &d->nvml_load_fail) {
		root = final;
		v->layer = CT_LAYER_LOADER;
		v->step = root->s;
		snprintf(v->summary, sizeof v->summary, "the NVML library %s could not be loaded: %s%s", root->what,
			 d->nvml_dlerror[0] ? d->nvml_dlerror : "(no loader message)",
			 v->contract.kernel_version[0] ? "" :
			 "; no NVIDIA kernel module is loaded either (no /proc/driver/nvidia/version)");
		if (str_has(d->nvml_dlerror, "wrong ELF class"))
			snprintf(v->fix, sizeof v->fix, "put the 64-bit NVIDIA driver library directory first "
				 "(LD_LIBRARY_PATH, ldconfig) and remove the 32-bit one from the path");
		else
			snprintf(v->fix, sizeof v->fix,
				 "libnvidia-ml.so.1 comes with the NVIDIA driver: install the driver's user-space "
				 "libraries, or in a container enable the driver's 'utility' capability "
				 "(NVIDIA_DRIVER_CAPABILITIES=compute,utility; --gpus all with the NVIDIA runtime, or CDI) "
				 "so that it is mounted; else add its directory to the loader path");
		goto done;
	}
	if (!d->cuda_loaded && d->cuda_load_fail.s.set) {
		root = &d->cuda_load_fail;
		v->layer = CT_LAYER_LOADER;
		v->step = root->s;
		if (str_has(d->cuda_dlerror, "wrong ELF class")) {
			snprintf(v->summary, sizeof v->summary, "%s could not be loaded: %s (a 32-bit driver library is "
				 "first on the search path)", root->what, d->cuda_dlerror);
			snprintf(v->fix, sizeof v->fix, "put the 64-bit driver library directory first (LD_LIBRARY_PATH, "
				 "ldconfig) and remove the 32-bit one from the path");
		} else {
			snprintf(v->summary, sizeof v->summary, "the CUDA driver library %s could not be loaded: %s%s",
				 root->what, d->cuda_dlerror[0] ? d->cuda_dlerror : "(no loader message)",
				 v->contract.kernel_version[0] ? "" :
				 "; no NVIDIA kernel module is loaded either (no /proc/driver/nvidia/version)");
			snprintf(v->fix, sizeof v->fix,
				 "run where the NVIDIA driver is installed: in a container start it with GPU access "
				 "(--gpus all / CDI / the NVIDIA runtime) so libcuda.so.1 is mounted, or add its directory "
				 "to the loader path (ldconfig, LD_LIBRARY_PATH)");
			if (v->final_code == 35 && final == &d->rt_fail)
				snprintf(v->hint, sizeof v->hint,
					 "cudart reports this as 35 'CUDA driver version is insufficient', but no driver "
					 "library was found at all: it is missing, not too old");
		}
		goto done;
	}
	if (d->cuda_stub || (final == &d->cuinit && final->code == 34)) {
		v->layer = CT_LAYER_LOADER;
		v->step = d->cuda_load.s.set ? d->cuda_load.s : final->s;
		snprintf(v->summary, sizeof v->summary,
			 "the CUDA toolkit's stub libcuda was loaded instead of the driver's (%s)",
			 d->cuda_path[0] ? d->cuda_path : "libcuda");
		snprintf(v->fix, sizeof v->fix,
			 "remove the toolkit's stubs directory (.../lib64/stubs, .../targets/*/lib/stubs) from "
			 "LD_LIBRARY_PATH; it is only for linking");
		goto done;
	}
	if (d->cuda_compat && final->code == 804) {
		v->layer = CT_LAYER_LOADER;
		v->step = d->cuda_load.s;
		snprintf(v->summary, sizeof v->summary,
			 "a cuda-compat forward-compatibility libcuda (%s) was loaded on a GPU that does not support "
			 "forward compatibility (%s = 804)", d->cuda_path, final->s.call);
		snprintf(v->fix, sizeof v->fix,
			 "forward compatibility is for data-center GPUs only: remove the compat directory from "
			 "LD_LIBRARY_PATH and use the host driver (upgrade it if the runtime needs a newer one)");
		goto done;
	}

	/* 2. the earliest low-level failure before the final error */
	{
		const struct fact *cand[] = { &d->hs_mismatch, &d->open_fail, &d->uvm_fail, &d->rm_fail,
					      &d->card_empty };
		root = earliest(cand, (int)(sizeof cand / sizeof cand[0]));
		/* a failure after the final call returned cannot explain it (the
		 * ioctls of cuInit come after cuInit's enter record, inside it) */
		if (root && root->s.t_ns > final->s.end_ns)
			root = NULL;
		if (!root && d->caps_fail.s.set)
			root = &d->caps_fail;
	}
	if (root) {
		v->step = root->s;
		if (root == &d->hs_mismatch) {
			v->layer = CT_LAYER_KERNEL_HANDSHAKE;
			handshake_text(d, root, v);
		} else if (root == &d->open_fail || root == &d->caps_fail) {
			v->layer = CT_LAYER_DEVICE_NODE;
			device_node_text(root, v);
		} else if (root == &d->uvm_fail) {
			v->layer = CT_LAYER_UVM;
			rm_text(root, v, true);
		} else if (root == &d->card_empty) {
			v->layer = CT_LAYER_RESOURCE_MANAGER;
			snprintf(v->summary, sizeof v->summary,
				 "the kernel driver lists no GPU (NV_ESC_CARD_INFO returned no valid entry)");
			snprintf(v->fix, sizeof v->fix,
				 "no GPU is bound to the nvidia driver here: check 'nvidia-smi -L', NVIDIA_VISIBLE_DEVICES "
				 "of the container, and whether the GPU was excluded (NVreg_ExcludedGpus) or lost (dmesg)");
		} else {
			v->layer = CT_LAYER_RESOURCE_MANAGER;
			rm_text(root, v, false);
		}
		goto done;
	}

	/* 3. no lower cause: the driver API or the runtime.  When cudart failed
	 * because a driver call under it did, the driver call is the step. */
	if (final == &d->rt_fail) {
		const struct fact *lower = d->cuinit.s.set && d->cuinit.code ? &d->cuinit
					 : d->ctx_fail.s.set ? &d->ctx_fail
					 : d->devget_fail.s.set ? &d->devget_fail : NULL;
		if (lower && lower->s.t_ns <= final->s.end_ns)
			final = lower;
	}
	v->step = final->s;
	/* cuInit has no ordinal to be invalid: libcuda 580 answers a kernel
	 * module of an older branch with 101 (measured, i07 of the H200
	 * fixtures).  With libcuda's version unknown (not in its file name), the
	 * handshake's answer is the evidence */
	if (final->code == 101 && !strcmp(final->s.call, "cuInit") && d->hs_event.s.set &&
	    d->hs_event.s.t_ns <= final->s.end_ns && d->hs_kernel[0] &&
	    (!d->cuda_ver[0] || ct_version_cmp(d->cuda_ver, d->hs_kernel) != 0)) {
		v->layer = CT_LAYER_KERNEL_HANDSHAKE;
		v->step = d->hs_event.s;
		snprintf(v->summary, sizeof v->summary,
			 "cuInit = 101 (invalid device, from a call that takes no device) right after the kernel module "
			 "reported version %s in the version handshake: libcuda %s%s%s is of another branch (libcuda 580 "
			 "answers an older kernel branch with 101)", d->hs_kernel, d->cuda_path[0] ? d->cuda_path : "",
			 d->cuda_ver[0] ? " is version " : " (version not in its file name)", d->cuda_ver);
		snprintf(v->fix, sizeof v->fix,
			 "user-space driver libraries and the loaded kernel module must be the same version: reboot "
			 "(or reload the nvidia modules) after a driver upgrade, or remove a stale libcuda from "
			 "LD_LIBRARY_PATH");
		goto done;
	}
	if (final->code == 803) {
		v->layer = CT_LAYER_KERNEL_HANDSHAKE;
		/* the handshake is where libcuda learnt the kernel's version */
		if (d->hs_event.s.set && d->hs_event.s.t_ns <= final->s.end_ns)
			v->step = d->hs_event.s;
		snprintf(v->summary, sizeof v->summary,
			 "%s = 803: the user-mode driver %s%s does not match the kernel module %s",
			 final->s.call, d->cuda_path[0] ? d->cuda_path : "libcuda", d->cuda_compat ? " (cuda-compat)" : "",
			 v->contract.kernel_version[0] ? v->contract.kernel_version : "(version not recorded)");
		snprintf(v->fix, sizeof v->fix, "use the libcuda of the installed driver version (or reboot after an upgrade)");
		goto done;
	}
	if (final == &d->rt_fail && (final->code == 35 || v->contract.compat.cls == CT_COMPAT_MISMATCH)) {
		v->layer = CT_LAYER_RUNTIME;
		/* the root is the driver's answer the runtime compared with */
		if (d->drvver.s.set && d->drvver.s.t_ns <= final->s.end_ns)
			v->step = d->drvver.s;
		snprintf(v->summary, sizeof v->summary,
			 "the CUDA runtime (CUDA %d.%d) needs a newer driver than this one (cuDriverGetVersion = %d): %s = %d",
			 v->contract.runtime_version / 1000, v->contract.runtime_version % 1000 / 10,
			 v->contract.driver_version, final->s.call, final->code);
		snprintf(v->fix, sizeof v->fix, "%s",
			 v->contract.compat.fix ? v->contract.compat.fix
						: "upgrade the NVIDIA driver, or use a build of the program for an older CUDA");
		goto done;
	}
	v->layer = CT_LAYER_DRIVER_API;
	switch (final->code) {
	case 100:
		if (d->cvd_set && d->cards > 0) {
			snprintf(v->summary, sizeof v->summary,
				 "CUDA_VISIBLE_DEVICES='%s' hides all %d GPU(s) the driver sees: %s = 100 (no device)",
				 d->cvd, d->cards, final->s.call);
			snprintf(v->fix, sizeof v->fix, "set CUDA_VISIBLE_DEVICES to existing GPU indices or UUIDs "
				 "(nvidia-smi -L), or unset it");
		} else {
			snprintf(v->summary, sizeof v->summary, "%s = 100: no CUDA device is visible%s%s", final->s.call,
				 d->cvd_set ? "; CUDA_VISIBLE_DEVICES=" : "", d->cvd_set ? d->cvd : "");
			snprintf(v->fix, sizeof v->fix, "check NVIDIA_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES and that the "
				 "container got a GPU");
		}
		break;
	case 101:
		snprintf(v->summary, sizeof v->summary, "%s asked for a device that does not exist (invalid device "
			 "ordinal)%s", final->s.call, d->devcount_seen ? "; devices visible: " : "");
		if (d->devcount_seen)
			add(v->summary, sizeof v->summary, "%d", d->dev_count);
		if (d->cvd_set)
			add(v->summary, sizeof v->summary, " (CUDA_VISIBLE_DEVICES=%s renumbers them from 0)", d->cvd);
		snprintf(v->fix, sizeof v->fix, "use an ordinal below the visible device count; CUDA_VISIBLE_DEVICES "
			 "renumbers the devices it keeps from 0");
		break;
	case 802:
		snprintf(v->summary, sizeof v->summary, "%s = 802: the system is not ready (on NVSwitch systems the "
			 "fabric manager has not configured the fabric)", final->s.call);
		snprintf(v->fix, sizeof v->fix, "install nvidia-fabricmanager of exactly the driver's version and "
			 "'systemctl enable --now nvidia-fabricmanager'; reset the GPUs if it was restarted");
		break;
	case 804:
		snprintf(v->summary, sizeof v->summary, "%s = 804: forward compatibility was attempted on a GPU that "
			 "does not support it", final->s.call);
		snprintf(v->fix, sizeof v->fix, "remove the cuda-compat directory from LD_LIBRARY_PATH on this GPU");
		break;
	case 46:
		snprintf(v->summary, sizeof v->summary, "%s = 46: all CUDA devices are busy or unavailable",
			 final->s.call);
		snprintf(v->fix, sizeof v->fix, "the GPU is in EXCLUSIVE_PROCESS/PROHIBITED compute mode or held by "
			 "another process: nvidia-smi -q | grep 'Compute Mode'; 'nvidia-smi -c DEFAULT' or free it");
		break;
	case 3:
		snprintf(v->summary, sizeof v->summary, "%s = 3 (initialization error) with no failing driver step "
			 "recorded", final->s.call);
		snprintf(v->fix, sizeof v->fix, "a CUDA context inherited across fork() cannot be used: use the "
			 "'spawn' start method; with open kernel modules try 'options nvidia_uvm uvm_disable_hmm=1'");
		break;
	default:
		snprintf(v->summary, sizeof v->summary, "%s failed with %d%s%s and no lower-level failure was recorded",
			 final->s.call, final->code, v->final_name[0] ? " " : "", v->final_name);
		snprintf(v->fix, sizeof v->fix, "run 'cutrace doctor' to check the machine");
	}

done:
	v->injected = v->injected || v->step.injected || (root && root->s.injected) ||
		      (v->final.set && v->final.injected && !root);
	/* a named scenario may work by changing the environment (the stub
	 * library, no visible device), not by a rule: its failure is still
	 * one cutrace made */
	if (ct_trace_env(d->t, "CUTRACE_SCENARIO", v->scenario, sizeof v->scenario) && v->scenario[0] && !v->ok)
		v->injected = true;
	/* an injected value upstream (a count, a version) explains a later
	 * failure that is itself real: still an injected failure */
	if (!v->ok && !v->injected && d->first_injected.s.set && v->final.set &&
	    d->first_injected.s.t_ns <= v->final.end_ns) {
		v->injected = true;
		snprintf(v->notes, sizeof v->notes, "an injected fault came first: %s", d->first_injected.s.text);
	}
	if (!v->ok && v->final.set && v->final_code == 999 && v->layer != CT_LAYER_DRIVER_API)
		snprintf(v->hint, sizeof v->hint,
			 "PyTorch reports this as 'CUDA unknown error - this may be due to an incorrectly set up "
			 "environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start': that "
			 "hint is misleading here, the cause is the %s step above", ct_layer_name(v->layer));
	/* NVML probed for and missing, while something else decided the verdict */
	if (d->nvml_load_fail.s.set && !d->nvml_loaded && (!v->final.set || v->final.seq != d->nvml_load_fail.s.seq))
		add(v->notes, sizeof v->notes, "%s%s could not be loaded (%s)%s", v->notes[0] ? "; " : "",
		    d->nvml_load_fail.what, d->nvml_dlerror[0] ? d->nvml_dlerror : "no loader message",
		    v->ok ? ": CUDA does not need NVML and initialized, but nvidia-smi and NVML-based tools "
			    "(pynvml, GPU monitors) will fail here" : "");
	/* NVML failed in a process whose CUDA initialization worked (torch asks
	 * NVML after creating its context, and carries on): still the failure,
	 * but say what does and does not work */
	if (final == &d->nvml_fail && d->cuinit.s.set && !d->cuinit.code)
		add(v->notes, sizeof v->notes, "%sCUDA itself initialized (cuInit = 0) and the program can use the "
		    "GPU; NVML fails, and with it nvidia-smi, pynvml and GPU monitors", v->notes[0] ? "; " : "");
	if (d->deepbind)
		add(v->notes, sizeof v->notes, "%s%s was loaded with RTLD_DEEPBIND: calls inside it may bypass "
		    "the shim", v->notes[0] ? "; " : "", d->deepbind_lib);
	group_key(d, v);
}

/* ---- output ----------------------------------------------------------------------------- */
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
	ct_json_kuint(j, "t_ns", s->t_ns);
	ct_json_kuint(j, "tid", s->tid);
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

void ct_verdict_line(FILE *f, const struct ct_verdict *v)
{
	fprintf(f, "pid %u", v->pid);
	if (v->exe[0])
		fprintf(f, " (%s)", v->exe);
	if (v->rank >= 0)
		fprintf(f, " rank %d", v->rank);
	if (v->host[0])
		fprintf(f, " on %s", v->host);
	if (v->ok)
		fprintf(f, ": %sOK%s %s", ct_c(f, CT_C_GREEN), ct_c(f, CT_C_RESET), v->summary);
	else
		fprintf(f, ": %sFAILED%s [%s]%s %s", ct_c(f, CT_C_RED), ct_c(f, CT_C_RESET), ct_layer_name(v->layer),
			v->injected ? " (injected)" : "", v->summary);
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
		}
		fprintf(f, "  why      %s\n", v->summary);
		if (v->step.set)
			fprintf(f, "  step     +%.3f ms  %s\n", (double)v->step.t_ns / 1e6, v->step.text);
		if (v->final.set && v->final.seq != v->step.seq)
			fprintf(f, "  then     +%.3f ms  %s\n", (double)v->final.t_ns / 1e6, v->final.text);
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

/* ---- whole files ------------------------------------------------------------------------ */
struct diag_run {
	struct ct_diag *d;
	struct ct_desc desc;
};

static int diag_cb(const struct ct_event *ev, void *user)
{
	struct diag_run *r = user;

	ct_describe_ex(r->d->t, ev, &r->desc, 0);
	ct_diag_event(r->d, ev, &r->desc);
	return 0;
}

int ct_diagnose_file(const char *path, struct ct_verdict *v, char *err, size_t errlen)
{
	struct ct_trace *t;
	struct diag_run *r;

	if (ct_trace_open(path, &t, err, errlen) < 0)
		return -1;
	r = calloc(1, sizeof *r);
	if (!r || !(r->d = ct_diag_new())) {
		free(r);
		ct_trace_close(t);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ct_diag_begin(r->d, t);
	ct_trace_events(t, diag_cb, r);
	ct_diag_end(r->d, ct_trace_stats(t), v);
	ct_diag_free(r->d);
	free(r);
	ct_trace_close(t);
	return 0;
}

/* ---- the timeline around the root step --------------------------------------------------- */
#define CTX_LINES 64
struct ctx_run {
	const struct ct_trace *t;
	struct ct_desc desc;
	uint64_t t0;
	bool have_t0;
	uint64_t target;
	unsigned n, after_left;
	bool found;
	char ring[CTX_LINES][400];
	unsigned head, count;
	FILE *f;
};

static void fmt_line(struct ctx_run *r, const struct ct_event *ev, char *out, size_t len)
{
	const struct ct_desc *d = &r->desc;
	double ms = ((double)ev->t_ns - (double)r->t0) / 1e6;
	const char *mark = !d->returned ? "  NEVER RETURNED" : !d->ok ? "  FAILED" : "";

	/* the ioctl as describe decoded it (with the trace's device map) */
	const struct ct_nv_ioctl *nv = d->is_ioctl ? d->nv : NULL;

	if (nv && nv->family != CT_NV_FAM_NOT_NVIDIA)
		snprintf(out, len, "%+11.3f ms  ioctl(%d (%s), %s)%s%s%s", ms, nv->fd, nv->node_name,
			 nv->summary, nv->ok || nv->is_warning ? (d->returned ? "" : mark) : "  FAILED",
			 d->injected ? "  [injected]" : "", "");
	else
		snprintf(out, len, "%+11.3f ms  %s(%s) = %s%s%s%s%s", ms, d->call, d->text_args, d->result,
			 d->detail[0] ? "  " : "", d->detail, mark, d->injected && !d->has_inject ? "  [injected]" : "");
}

static int ctx_cb(const struct ct_event *ev, void *user)
{
	struct ctx_run *r = user;

	if (!r->have_t0) {
		r->t0 = ev->t_ns;
		r->have_t0 = true;
	}
	if (r->found && !r->after_left)
		return 1;
	ct_describe_ex(r->t, ev, &r->desc, 0);
	if (!r->found) {
		fmt_line(r, ev, r->ring[r->head], sizeof r->ring[0]);
		r->head = (r->head + 1) % CTX_LINES;
		if (r->count < CTX_LINES)
			r->count++;
		if (ev->seq == r->target) {
			unsigned k = r->count < r->n + 1 ? r->count : r->n + 1;
			for (unsigned i = 0; i < k; i++) {
				unsigned idx = (r->head + CTX_LINES - k + i) % CTX_LINES;
				fprintf(r->f, "  %s %s\n", i + 1 == k ? ">>" : "  ", r->ring[idx]);
			}
			r->found = true;
			r->after_left = r->n;
		}
		return 0;
	}
	char line[400];
	fmt_line(r, ev, line, sizeof line);
	fprintf(r->f, "     %s\n", line);
	r->after_left--;
	return 0;
}

int ct_print_step_context(FILE *f, const char *path, const struct ct_verdict *v, unsigned n)
{
	struct ct_trace *t;
	struct ctx_run *r;
	char err[256];

	if (!v->step.set)
		return 0;
	if (ct_trace_open(path, &t, err, sizeof err) < 0)
		return -1;
	r = calloc(1, sizeof *r);
	if (!r) {
		ct_trace_close(t);
		return -1;
	}
	r->t = t;
	r->target = v->step.seq;
	r->n = n < CTX_LINES - 1 ? n : CTX_LINES - 1;
	r->f = f;
	ct_trace_events(t, ctx_cb, r);
	free(r);
	ct_trace_close(t);
	return 0;
}

/* ---- many processes ------------------------------------------------------------------------ */
static bool same_group(const struct ct_verdict *a, const struct ct_verdict *b)
{
	return a->ok == b->ok && !strcmp(a->group_key, b->group_key);
}

/* the members of the group of v[first], each "host H rank R pid P", ordered
 * by host (hosts in order of appearance), ", " between them; marks them done */
#define SUMMARY_MEMBERS_MAX 64
static void print_members(FILE *f, const struct ct_verdict *v, int n, char *done, int first)
{
	int shown = 0, left = 0;

	for (int i = first; i < n; i++) {
		if (done[i] || !same_group(&v[first], &v[i]))
			continue;
		/* every not yet listed member on v[i]'s host */
		for (int k = i; k < n; k++) {
			if (done[k] || !same_group(&v[first], &v[k]) || strcmp(v[k].host, v[i].host))
				continue;
			done[k] = 1;
			if (shown >= SUMMARY_MEMBERS_MAX) {
				left++;
				continue;
			}
			fputs(shown ? ", " : " ", f);
			if (v[k].host[0])
				fprintf(f, "host %s ", v[k].host);
			if (v[k].rank >= 0)
				fprintf(f, "rank %d ", v[k].rank);
			fprintf(f, "pid %u", v[k].pid);
			shown++;
		}
	}
	if (left)
		fprintf(f, ", and %d more", left);
	fputc('\n', f);
}

void ct_summary_text(FILE *f, const struct ct_verdict *v, int n, int unreadable)
{
	int ok = 0, failed = 0;
	char *done = calloc((size_t)n + 1, 1);

	for (int i = 0; i < n; i++)
		v[i].ok ? ok++ : failed++;
	fprintf(f, "%s%d process%s traced: %d healthy, %d failed%s", ct_c(f, CT_C_BOLD), n, n == 1 ? "" : "es", ok,
		failed, ct_c(f, CT_C_RESET));
	if (unreadable)
		fprintf(f, ", %d unreadable trace file%s", unreadable, unreadable == 1 ? "" : "s");
	fputc('\n', f);
	for (int i = 0; done && i < n; i++) {
		int members = 0;
		if (done[i] || v[i].ok)
			continue;
		for (int k = i; k < n; k++)
			if (!done[k] && same_group(&v[i], &v[k]))
				members++;
		fprintf(f, "  %sFAILED%s [%s]%s %s\n", ct_c(f, CT_C_RED), ct_c(f, CT_C_RESET), ct_layer_name(v[i].layer),
			v[i].injected ? " (injected)" : "", v[i].summary);
		fprintf(f, "    %d process%s:", members, members == 1 ? "" : "es");
		print_members(f, v, n, done, i);
	}
	free(done);
}

void ct_summary_json(struct ct_json *j, const struct ct_verdict *v, int n, int unreadable)
{
	int ok = 0;
	char *done = calloc((size_t)n + 1, 1);

	for (int i = 0; i < n; i++)
		ok += v[i].ok;
	ct_json_obj_begin(j);
	ct_json_kint(j, "processes", n);
	ct_json_kint(j, "healthy", ok);
	ct_json_kint(j, "failed", n - ok);
	ct_json_kint(j, "unreadable", unreadable);
	ct_json_key(j, "groups");
	ct_json_arr_begin(j);
	for (int i = 0; done && i < n; i++) {
		if (done[i] || v[i].ok)
			continue;
		int members = 0;
		for (int k = i; k < n; k++)
			if (!done[k] && same_group(&v[i], &v[k]))
				members++;
		ct_json_obj_begin(j);
		ct_json_kstr(j, "layer", ct_layer_name(v[i].layer));
		ct_json_kstr(j, "summary", v[i].summary);
		ct_json_kstr(j, "step_call", v[i].step.set ? v[i].step.call : NULL);
		ct_json_key(j, "final_code");
		if (v[i].final.set)
			ct_json_int(j, v[i].final_code);
		else
			ct_json_null(j);
		ct_json_kbool(j, "injected", v[i].injected);
		ct_json_kbool(j, "hung", v[i].hung);
		ct_json_kint(j, "count", members);
		ct_json_key(j, "members");
		ct_json_arr_begin(j);
		for (int k = i; k < n; k++) {
			if (done[k] || !same_group(&v[i], &v[k]))
				continue;
			done[k] = 1;
			ct_json_obj_begin(j);
			ct_json_kuint(j, "pid", v[k].pid);
			ct_json_kstr(j, "host", v[k].host);
			ct_json_key(j, "rank");
			if (v[k].rank >= 0)
				ct_json_int(j, v[k].rank);
			else
				ct_json_null(j);
			ct_json_obj_end(j);
		}
		ct_json_arr_end(j);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	ct_json_obj_end(j);
	free(done);
}
