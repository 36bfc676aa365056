/*
 * Diagnosis of one process, part 1: the facts (see diag.h).
 *
 * One pass collects bounded facts: the libraries loaded or not, the first
 * failed open of an NVIDIA node, the version handshake, the first failing
 * RM and UVM ioctl, what CARD_INFO listed, the driver, runtime and NVML
 * results, calls that never returned.  rules.c then turns them into the
 * verdict.
 */
#include "diag_int.h"

/* every text here goes into a fixed buffer and is cut, on purpose, at its end */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cutrace_gen/codes.h"
#include "version.h"
/* the hot paths format many short strings: the cheaper snprintf (fmt.c) */
#define snprintf ct_snprintf
#define vsnprintf ct_vsnprintf

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
	memset(d, 0, offsetof(struct ct_diag, nv));
	d->t = t;
	d->ldcache_so1 = d->ldcache_so = -1;
	{
		char rel[128];
		/* WSL2 kernels: "5.15.167.4-microsoft-standard-WSL2" */
		d->wsl = ct_trace_ctx_str(t, CT_CTX_KERNEL, 0, rel, sizeof rel) &&
			 (strstr(rel, "microsoft") || strstr(rel, "Microsoft") || strstr(rel, "WSL"));
	}
	d->drv = ct_trace_driver_version(t);
	d->cards = -1;
	d->dev_count = -1;
	d->virt_mode = d->compute_rules = -1;
}

/* ---- helpers ---------------------------------------------------------------------- */
static void step_from(struct ct_diag *d, struct ct_diag_step *s, const struct ct_event *ev,
		      const struct ct_desc *desc, const char *override)
{
	s->set = true;
	s->seq = ev->seq;
	s->t_ns = ev->t_ns >= d->t0 ? ev->t_ns - d->t0 : 0;
	s->end_ns = ev->has_exit ? s->t_ns + ev->dur_ns : UINT64_MAX;
	s->tid = ev->tid;
	s->injected = desc->injected;
	s->delayed = desc->injected && desc->has_inject && desc->inject_action == CT_INJ_DELAY;
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

/* the driver version in a driver library's file name (libcuda.so.580.159.04);
 * "" when there is none: a driver version has dots, the "1" of .so.1 is the soname */
static void driver_version_of(const char *path, char *out, size_t n)
{
	if (ct_version_from_name(path, out, n) < 0 || !strchr(out, '.'))
		out[0] = 0;
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
				snprintf(d->cuda_req, sizeof d->cuda_req, "%s", lib ? lib : "");
				if (int_field(ev, CT_FLD_FILESIZE, &size))
					d->cuda_size = (uint64_t)size;
				driver_version_of(rp, d->cuda_ver, sizeof d->cuda_ver);
				/* the toolkit stub is installed in .../stubs/ (failure catalog
				 * B.3, SCENARIOS.md); a stub found under another name is caught by its 34 */
				d->cuda_stub = ct_diag_has(rp, "/stubs/");
				d->cuda_compat = ct_diag_has(rp, "/compat/");
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
	} else if (kind == CT_LIB_DXCORE) {
		if (ev->ret) {
			d->dxcore_loaded = true;
		} else if (!d->dxcore_fail.s.set) {
			char err[300];
			set_fact(d, &d->dxcore_fail, ev, desc, 0, lib ? lib : "libdxcore.so", NULL);
			if (str_field(ev, CT_FLD_DLERROR, err, sizeof err))
				snprintf(d->dxcore_dlerror, sizeof d->dxcore_dlerror, "%s", err);
		}
	} else if (kind == CT_LIB_NVML) {
		if (ev->ret) {
			if (!d->nvml_loaded && rp) {
				snprintf(d->nvml_path, sizeof d->nvml_path, "%s", rp);
				snprintf(d->nvml_req, sizeof d->nvml_req, "%s", lib ? lib : "");
				driver_version_of(rp, d->nvml_ver, sizeof d->nvml_ver);
			}
			d->nvml_loaded = true;
		} else if (!d->nvml_load_fail.s.set) {
			char err[300];
			set_fact(d, &d->nvml_load_fail, ev, desc, 0, lib ? lib : "libnvidia-ml.so.1", NULL);
			if (str_field(ev, CT_FLD_DLERROR, err, sizeof err))
				snprintf(d->nvml_dlerror, sizeof d->nvml_dlerror, "%s", err);
		}
	}
}

/* the base name of the line [p, p+n) */
static const char *line_base(const char *p, size_t n, size_t *bn)
{
	size_t i = n;
	while (i && p[i - 1] != '/')
		i--;
	*bn = n - i;
	return p + i;
}

/* the process snapshot (shim/snapshot.c): libcuda as mapped and where it
 * came from, known interposers, what ld.so.cache says for libcuda */
static void on_note(struct ct_diag *d, const struct ct_event *ev, const struct ct_desc *desc)
{
	char buf[3200];
	const char *v;

	if (d->snap.s.set || !str_field(ev, CT_FLD_MAPLIBS, buf, sizeof buf))
		return;
	set_fact(d, &d->snap, ev, desc, 0, "process snapshot", NULL);
	for (const char *p = buf; *p;) {
		size_t n = strcspn(p, "\n"), bn, pn = n;
		bool del = n > 10 && !memcmp(p + n - 10, " (deleted)", 10);
		const char *b;

		if (del)
			pn -= 10;
		b = line_base(p, pn, &bn);
		if (bn >= 10 && !memcmp(b, "libcuda.so", 10) && !d->cuda_mapped[0]) {
			snprintf(d->cuda_mapped, sizeof d->cuda_mapped, "%.*s", (int)pn, p);
			d->cuda_deleted = del;
		} else if (!d->interposer[0] && ((bn >= 7 && !memcmp(b, "libvgpu", 7)) ||
						 (bn >= 15 && !memcmp(b, "libcuda-control", 15)))) {
			snprintf(d->interposer, sizeof d->interposer, "%.*s", (int)bn, b);
			snprintf(d->interposer_path, sizeof d->interposer_path, "%.*s", (int)pn, p);
		}
		p += n;
		p += *p == '\n';
	}
	if ((v = str_field(ev, CT_FLD_MOUNT, buf, sizeof buf)) != NULL) {
		snprintf(d->cuda_mount, sizeof d->cuda_mount, "%s", v);
		d->mount_deleted = strstr(v, "//deleted") != NULL;
	}
	if ((v = str_field(ev, CT_FLD_LDCACHE, buf, sizeof buf)) != NULL && strcmp(v, "-")) {
		for (const char *p = v; *p;) {
			size_t n = strcspn(p, "\n");
			const char *eq = memchr(p, '=', n);
			if (eq) {
				bool so1 = (size_t)(eq - p) == 12 && !memcmp(p, "libcuda.so.1", 12);
				bool so = (size_t)(eq - p) == 10 && !memcmp(p, "libcuda.so", 10);
				int have = eq + 1 < p + n;
				if (so1) {
					d->ldcache_so1 = have;
					snprintf(d->ldcache_so1_path, sizeof d->ldcache_so1_path, "%.*s",
						 (int)(p + n - eq - 1), eq + 1);
				} else if (so) {
					d->ldcache_so = have;
				}
			}
			p += n;
			p += *p == '\n';
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
	if (node && ev->ret >= 0)
		d->nv_open_ok = true;
	if ((node >> 16) == CT_NODE_DXG)
		d->wsl = true;
	if (ev->ret >= 0 || !node)
		return;
	/* the capability and IMEX channel nodes are needed only for MIG and
	 * fabric memory: their own fact, the root of a failure only when nothing
	 * else explains it */
	struct fact *f = ((node >> 16) == CT_NODE_CAPS || (node >> 16) == CT_NODE_IMEX) ? &d->caps_fail
											: &d->open_fail;
	if (f->s.set)
		return;
	set_fact(d, f, ev, desc, ev->err, NULL, NULL);
	f->node_kind = (unsigned)(node >> 16);
	snprintf(f->path, sizeof f->path, "%s", str_field(ev, CT_FLD_PATH, path, sizeof path) ? path : "?");
}

/* the file-system calls the driver made on NVIDIA paths (format 1.5): the
 * first node it made itself (mknod), and whether nvidia-modprobe was there */
static void on_fs(struct ct_diag *d, const struct ct_event *ev)
{
	char path[256];
	int64_t rdev = 0;
	unsigned c = ev->call;

	if (!ev->has_exit || !str_field(ev, CT_FLD_PATH, path, sizeof path))
		return;
	if (ct_proc_call(c)) {
		d->helper_runs++;
		if (!ct_proc_ok(ev)) {
			d->helper_failed++;
			ct_proc_outcome(ev, d->helper_how, sizeof d->helper_how);
		}
		snprintf(d->helper_path, sizeof d->helper_path, "%s", path);
		return;
	}
	if ((c == CT_CALL_mknod || c == CT_CALL_mknodat || c == CT_CALL___xmknod) && !d->fs_mknod_seen &&
	    !strncmp(path, "/dev/nvidia", 11)) {
		d->fs_mknod_seen = true;
		d->fs_mknod_err = ev->ret < 0 ? ev->err : 0;
		snprintf(d->fs_mknod_path, sizeof d->fs_mknod_path, "%s", path);
		if (ev->has_enter && ct_rec_i64(&ev->enter, CT_FLD_RDEV, &rdev))
			d->fs_mknod_rdev = (uint64_t)rdev;
	}
	if ((c == CT_CALL_stat || c == CT_CALL_stat64 || c == CT_CALL___xstat || c == CT_CALL___xstat64) &&
	    d->fs_modprobe <= 0 && strstr(path, "bin/nvidia-modprobe")) {
		d->fs_modprobe = ev->ret == 0 ? 1 : -1;
		snprintf(d->fs_modprobe_path, sizeof d->fs_modprobe_path, "%s", path);
	}
}

/* what names an ioctl for grouping the same failure across processes: the
 * escape and its RM command or class (no handles, fds or addresses) */
/* a GPU UUID RM answered, kept once (case-insensitive, as CUDA compares them) */
static void add_gpu_uuid(struct ct_diag *d, const char *uuid)
{
	const int max = (int)(sizeof d->gpu_uuid / sizeof d->gpu_uuid[0]);

	for (int i = 0; i < d->n_gpu_uuid; i++)
		if (!strcasecmp(d->gpu_uuid[i], uuid))
			return;
	if (d->n_gpu_uuid < max)
		snprintf(d->gpu_uuid[d->n_gpu_uuid++], sizeof d->gpu_uuid[0], "%s", uuid);
}

static void nv_key(const struct ct_nv_ioctl *nv, char *buf, size_t len)
{
	snprintf(buf, len, "%s", nv->name);
	if (nv->args == CT_NV_A_RM_CONTROL)
		ct_appendf(buf, len, " %s/0x%x", nv->u.control.cmd_name, nv->u.control.cmd);
	else if (nv->args == CT_NV_A_RM_ALLOC)
		ct_appendf(buf, len, " class 0x%x", nv->u.alloc.hClass_in);
	if (nv->returned)
		ct_appendf(buf, len, " err %d status 0x%x", nv->err, nv->has_status ? nv->status : 0);
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
	d->nv_ioctl_seen = true;
	if (!nv->returned) {
		if (ev->exit_unknown)
			return;
		d->unfinished_io.s.set = false;
		set_fact(d, &d->unfinished_io, ev, desc, 0, nv->summary, ioctl_text(nv, text, sizeof text));
		d->unfinished_io.node_kind = nv->node_kind;
		nv_key(nv, d->unfinished_io.path, sizeof d->unfinished_io.path);
		return;
	}
	d->nv_ioctls++;
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
	if (nv->args == CT_NV_A_RM_CONTROL && nv->ok && nv->u.control.has_answer) {
		if (nv->u.control.cmd == CT_NV_CMD_GPU_GET_VIRT_MODE) {
			d->virt_mode = (int)nv->u.control.answer;
			d->virt.s.set = false;
			set_fact(d, &d->virt, ev, desc, d->virt_mode, nv->summary,
				 ioctl_text(nv, text, sizeof text));
			if (nv->injected)
				d->virt.s.injected = true;
		} else if (nv->u.control.cmd == CT_NV_CMD_GPU_COMPUTE_RULES) {
			d->compute_rules = (int)nv->u.control.answer;
		}
	}
	if (nv->args == CT_NV_A_RM_CONTROL && nv->ok && nv->u.control.uuid[0])
		add_gpu_uuid(d, nv->u.control.uuid);
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
	struct fact *f = nv->node_kind == CT_NODE_DXG  ? &d->dxg_fail
			 : nv->family == CT_NV_FAM_UVM ? &d->uvm_fail
						       : &d->rm_fail;
	if (f->s.set)
		return;
	set_fact(d, f, ev, desc, nv->has_status && nv->ret >= 0 ? (int)nv->status : nv->err,
		 nv->summary, ioctl_text(nv, text, sizeof text));
	f->node_kind = nv->node_kind;
	/* -1 EINVAL from an RM escape, the block never answered (G5) */
	if (f == &d->rm_fail && nv->ret < 0 && nv->err == EINVAL && nv->family == CT_NV_FAM_RM)
		d->rm_fail_nostatus = true;
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
	if (desc->injected) {
		int64_t node = 0;
		set_fact(d, &d->first_injected, ev, desc, 0, NULL, NULL);
		if (desc->has_inject && desc->inject_action == CT_INJ_DELAY)
			d->delay_marks = true;
		/* a delay changes no result; a failed capability-node open is
		 * tolerated by libcuda without MIG: neither explains a later failure
		 * unless it is the root step itself (rules.c, notes) */
		else if (!(int_field(ev, CT_FLD_NODE, &node) && (node >> 16) == CT_NODE_CAPS))
			set_fact(d, &d->first_cause, ev, desc, 0, NULL, NULL);
	}
	if (d->unfinished.s.set || d->unfinished_io.s.set || d->unfinished_ld.s.set)
		check_returned(d, ev);
	if (!ev->has_enter && ev->type != CT_REC_NOTE)
		return; /* an exit whose enter the ring dropped: too little to reason on */
	if (ev->has_exit && ev->dur_ns > d->slow_ns) {
		int f = ct_call_family(c);
		if (f == CT_FAM_DRIVER || f == CT_FAM_RUNTIME || f == CT_FAM_NVML || c == CT_CALL_dlopen ||
		    c == CT_CALL_dlmopen) {
			d->slow_ns = ev->dur_ns;
			d->slow.s.set = false;
			set_fact(d, &d->slow, ev, desc, 0, NULL, NULL);
		}
	}

	if (ev->type == CT_REC_NOTE) {
		on_note(d, ev, desc);
		return;
	}
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
	if (fam == CT_FAM_FS) {
		on_fs(d, ev);
		return;
	}
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
		/* an entry point this libcuda does not have; libcuda answers a v1
		 * look-up with its own _v2 (the shim sees both): count each kind */
		if (ret == CT_CUDA_ERROR_NOT_FOUND) {
			d->gpa_notfound[c == CT_CALL_cuGetProcAddress]++;
			set_fact(d, &d->gpa_notfound_first, ev, desc, ret, NULL, NULL);
		}
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

/* ---- whole files ------------------------------------------------------------------------ */
/* (here, next to ct_diag_new and ct_diag_begin: the compiler then knows the
 * accumulator calloc gave is clear, and does not clear its 17 KiB again) */
struct diag_run {
	struct ct_trace *t;
	struct ct_diag *d;
	struct ct_desc desc;
};

static int diag_cb(const struct ct_event *ev, void *user)
{
	struct diag_run *r = user;

	ct_describe_ex(r->t, ev, &r->desc, 0);
	ct_diag_event(r->d, ev, &r->desc);
	return 0;
}

void ct_diag_set_end(struct ct_diag *d, const struct ct_proc_end *e)
{
	if (e)
		d->end_hint = *e;
	else
		memset(&d->end_hint, 0, sizeof d->end_hint);
}

int ct_diagnose_file(const char *path, struct ct_verdict *v, char *err, size_t errlen)
{
	return ct_diagnose_file_end(path, NULL, v, err, errlen);
}

int ct_diagnose_file_end(const char *path, const struct ct_proc_end *end, struct ct_verdict *v, char *err,
			 size_t errlen)
{
	struct ct_trace *t;
	struct diag_run *r;

	/* one pass over the events: the written part is enough */
	if (ct_trace_open_used(path, &t, err, errlen) < 0)
		return -1;
	r = calloc(1, sizeof *r);
	if (!r || !(r->d = ct_diag_new())) {
		free(r);
		ct_trace_close(t);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->t = t;
	ct_diag_begin(r->d, t);
	ct_diag_set_end(r->d, end);
	ct_trace_events(t, diag_cb, r);
	ct_diag_end(r->d, ct_trace_stats(t), v);
	ct_diag_free(r->d);
	free(r);
	ct_trace_close(t);
	return 0;
}
