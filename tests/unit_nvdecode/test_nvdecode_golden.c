/*
 * ct_nv_decode over the REAL traces from the H200 (driver 580.159.04,
 * tests/fixtures/h200-580, see its README): every NVIDIA ioctl must decode
 * to a name, and the recorded failures must decode to what was injected.
 *
 * The fixtures are gzip'd; each is unpacked into memory with `gzip -dc`.
 * NVDECODE_DUMP=1 prints every decoded ioctl (a small exploration tool);
 * the census test prints a table of distinct escapes/classes/controls/UVM
 * commands and how many decode by name (CENSUS.md), NVDECODE_CENSUS=1 each
 * distinct value with its name as well.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvdecode.h"
#include "xlat.h"

#ifndef FIXTURE_DIR
#error FIXTURE_DIR must name tests/fixtures/h200-580
#endif

#define V580 CT_DRV(580, 159, 4)

/* every committed trace (34): keep in step with tests/unit_nvdecode/CENSUS.md */
static const char *const all_fixtures[] = {
	"probe", "probectx", "rtshared", "rtstatic", "torch", "nvml", "c1",
	"i01", "i02", "i03", "i04", "i05", "i06", "i07", "i08", "i11", "i12", "i13", "i14", "i15",
	"i16", "i19", "t1", "t2", "t3", "t4", "busy-ctx", "hang-torch", "hang-uvm",
	"torchrun4/vm-1997-1796241100211987747", "torchrun4/vm-2022-1796241103186909727",
	"torchrun4/vm-2023-1796241103187430873", "torchrun4/vm-2024-1796241103187845376",
	"torchrun4/vm-2025-1796241103188329503",
};
#define NFIX (sizeof all_fixtures / sizeof all_fixtures[0])

/* ---- loading ------------------------------------------------------------------------- */

static struct ct_trace *load(const char *name)
{
	char cmd[1024], err[256];
	size_t cap = 17u << 20, len = 0, n;
	unsigned char *buf = malloc(cap);
	struct ct_trace *t = NULL;
	FILE *p;

	ck_assert_ptr_nonnull(buf);
	snprintf(cmd, sizeof cmd, "gzip -dc '%s/%s.cutrace.gz'", FIXTURE_DIR, name);
	p = popen(cmd, "r");
	ck_assert_msg(p, "popen %s", cmd);
	while ((n = fread(buf + len, 1, cap - len, p)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
	}
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_msg(ct_trace_open_mem(buf, len, &t, err, sizeof err) == 0, "%s: %s", name, err);
	free(buf);
	return t;
}

/* one decoded ioctl handed to a visitor, with the trace around it */
struct scan {
	const char *fixture;
	struct ct_trace *t;
	uint32_t drv;
	struct ct_nv_devmap map;
	struct ct_nv_ioctl d;
	char libcuda[256];           /* REALPATH of the last libcuda dlopen */
	unsigned nv_ioctls;
	void (*visit)(struct scan *s, const struct ct_event *ev, void *user);
	void *user;
};

static int on_event(const struct ct_event *ev, void *user)
{
	struct scan *s = user;

	ct_nv_devmap_track(&s->map, ev);
	if ((ev->call == CT_CALL_dlopen || ev->call == CT_CALL_dlmopen) && ev->has_exit) {
		uint32_t kind = 0;
		if (ct_rec_u32(&ev->exit, CT_FLD_LIBKIND, &kind) && kind == CT_LIB_CUDA)
			ct_rec_str(&ev->exit, CT_FLD_REALPATH, s->libcuda, sizeof s->libcuda);
	}
	if (ev->call != CT_CALL_ioctl)
		return 0;
	ck_assert_int_eq(ct_nv_decode(ev, s->drv, &s->map, &s->d), 0);
	s->nv_ioctls++;
	if (getenv("NVDECODE_DUMP"))
		printf("%-9s #%-5llu %-10s %s%s%s\n", s->fixture, (unsigned long long)ev->index,
		       s->d.node_name, s->d.summary, s->d.warning[0] ? "  !! " : "", s->d.warning);
	if (s->visit)
		s->visit(s, ev, s->user);
	return 0;
}

static void scan(const char *fixture, void (*visit)(struct scan *, const struct ct_event *, void *),
		 void *user)
{
	static struct scan s;

	memset(&s, 0, sizeof s);
	s.fixture = fixture;
	s.t = load(fixture);
	s.drv = ct_trace_driver_version(s.t);
	ck_assert_uint_eq(s.drv, V580); /* from /proc/driver/nvidia/version */
	ct_nv_devmap_init(&s.map, s.t);
	s.visit = visit;
	s.user = user;
	ck_assert_int_eq(ct_trace_events(s.t, on_event, &s), 0);
	ct_trace_close(s.t);
}

/* ---- census: distinct values and whether they have names ----------------------------- */

#define SET_CAP 1024
struct set {
	unsigned n;
	uint64_t v[SET_CAP];
	unsigned char named[SET_CAP]; /* 1 by name, 2 structural */
	char name[SET_CAP][80];       /* how the decoder showed it */
};

static void set_add(struct set *s, uint64_t v, unsigned char named, const char *name)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->v[i] == v)
			return;
	ck_assert_uint_lt(s->n, SET_CAP);
	s->v[s->n] = v;
	snprintf(s->name[s->n], sizeof s->name[0], "%s", name);
	s->named[s->n++] = named;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* NVDECODE_CENSUS=1: every distinct value with its decoded name, sorted */
static void set_print(const char *what, const struct set *s)
{
	static uint64_t order[SET_CAP];

	for (unsigned i = 0; i < s->n; i++)
		order[i] = s->v[i] << 16 | i;
	qsort(order, s->n, sizeof order[0], cmp_u64);
	printf("  %s:\n", what);
	for (unsigned k = 0; k < s->n; k++) {
		unsigned i = (unsigned)(order[k] & 0xffff);
		printf("    0x%08llx %-10s %s\n", (unsigned long long)s->v[i],
		       s->named[i] == 1 ? "named" : s->named[i] == 2 ? "structural" : "UNKNOWN", s->name[i]);
	}
}

static bool set_has(const struct set *s, uint64_t v)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->v[i] == v)
			return true;
	return false;
}

static unsigned set_count(const struct set *s, unsigned char named)
{
	unsigned c = 0;
	for (unsigned i = 0; i < s->n; i++)
		c += s->named[i] == named;
	return c;
}

struct census {
	struct set esc, cls, ctrl, uvm;
	unsigned ioctls, unknown, unnamed_name, not_nvidia, frontend, rm;
	char first_unknown[512];
};

static void census_visit(struct scan *s, const struct ct_event *ev, void *user)
{
	struct census *c = user;
	const struct ct_nv_ioctl *d = &s->d;
	(void)ev;

	c->ioctls++;
	if (d->family == CT_NV_FAM_NOT_NVIDIA)
		c->not_nvidia++;
	if (d->unknown || !d->named) {
		if (!c->first_unknown[0])
			snprintf(c->first_unknown, sizeof c->first_unknown, "%s #%llu: %s (unknown 0x%x)",
				 s->fixture, (unsigned long long)ev->index, d->summary, d->unknown);
		c->unknown += d->unknown != 0;
		c->unnamed_name += !d->named;
	}
	if (d->family == CT_NV_FAM_UVM) {
		set_add(&c->uvm, d->nr, d->named, d->name);
		return;
	}
	if (!set_has(&c->esc, d->nr)) {
		if (d->family == CT_NV_FAM_FRONTEND)
			c->frontend++;
		else if (d->family == CT_NV_FAM_RM)
			c->rm++;
	}
	set_add(&c->esc, d->nr, d->named, d->name);
	if (d->args == CT_NV_A_RM_ALLOC)
		set_add(&c->cls, d->u.alloc.hClass_in, d->u.alloc.class_named, d->u.alloc.class_name);
	if (d->args == CT_NV_A_RM_ALLOC_MEMORY)
		set_add(&c->cls, d->u.alloc_memory.hClass, d->u.alloc_memory.class_named,
			d->u.alloc_memory.class_name);
	if (d->args == CT_NV_A_RM_CONTROL)
		set_add(&c->ctrl, d->u.control.cmd,
			d->u.control.cmd_named ? 1 : d->u.control.cmd_structural ? 2 : 0,
			d->u.control.cmd_name);
}

START_TEST(census_all_named)
{
	static struct census c;
	static const struct { const char *what; const struct set *s; } rows[] = {
		{ "escapes", &c.esc }, { "RM classes", &c.cls }, { "RM controls", &c.ctrl },
		{ "UVM commands", &c.uvm },
	};

	memset(&c, 0, sizeof c);
	for (unsigned i = 0; i < NFIX; i++)
		scan(all_fixtures[i], census_visit, &c);
	printf("nvdecode census over %u fixtures, %u NVIDIA ioctls (driver 580.159.04):\n",
	       (unsigned)NFIX, c.ioctls);
	printf("  %-14s %8s %9s %11s %8s\n", "kind", "distinct", "by name", "structural", "unknown");
	for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++)
		printf("  %-14s %8u %9u %11u %8u\n", rows[i].what, rows[i].s->n, set_count(rows[i].s, 1),
		       set_count(rows[i].s, 2), set_count(rows[i].s, 0));
	printf("  escapes: %u frontend, %u RM\n", c.frontend, c.rm);
	if (getenv("NVDECODE_CENSUS"))
		for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++)
			set_print(rows[i].what, rows[i].s);
	for (unsigned i = 0; i < c.ctrl.n; i++)
		if (c.ctrl.named[i] == 2) {
			char b[96];
			printf("  structural control 0x%08llx = %s\n", (unsigned long long)c.ctrl.v[i],
			       ct_rm_control_describe((uint32_t)c.ctrl.v[i], b, sizeof b));
		}
	fflush(stdout);
	ck_assert_msg(c.unknown == 0 && c.unnamed_name == 0, "first: %s", c.first_unknown);
	ck_assert_uint_eq(c.not_nvidia, 0);
	for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++)
		ck_assert_uint_eq(set_count(rows[i].s, 0), 0);
	/* the census of CENSUS.md over the 34 committed traces: a change here
	 * means a fixture or a table changed, and the document with it */
	ck_assert_uint_eq(NFIX, 34);
	ck_assert_uint_eq(c.ioctls, 5385);
	ck_assert_uint_eq(c.esc.n, 15);
	ck_assert_uint_eq(c.frontend, 8);
	ck_assert_uint_eq(c.rm, 7);
	ck_assert_uint_eq(c.cls.n, 23);
	ck_assert_uint_eq(c.ctrl.n, 72);
	ck_assert_uint_eq(set_count(&c.ctrl, 1), 68);
	ck_assert_uint_eq(c.uvm.n, 15);
	/* BINAPI and legacy-GSS controls have no public name: described, not named */
	ck_assert_uint_eq(set_count(&c.ctrl, 2), 4);
	static const uint32_t structural[] = { 0x20808159, 0x20808162, 0x20809038, 0x20810108 };
	for (unsigned i = 0; i < 4; i++)
		ck_assert_msg(set_has(&c.ctrl, structural[i]), "control 0x%08x", (unsigned)structural[i]);
}
END_TEST

/* ---- healthy traces ------------------------------------------------------------------- */

struct health {
	unsigned ioctls, warnings, handshakes, cards, failures;
	char first_warning[640], first_failure[400];
	struct ct_nv_handshake hs;
	struct ct_nv_ioctl card;
};

static void health_visit(struct scan *s, const struct ct_event *ev, void *user)
{
	struct health *h = user;
	const struct ct_nv_ioctl *d = &s->d;
	(void)ev;

	h->ioctls++;
	if (d->warning[0] && !h->warnings++)
		snprintf(h->first_warning, sizeof h->first_warning, "%.300s: %.300s", d->summary, d->warning);
	if (!d->ok && !h->failures++)
		snprintf(h->first_failure, sizeof h->first_failure, "%s", d->summary);
	if (d->handshake.source == CT_NV_HS_BUILD_VERSION && !h->handshakes++)
		h->hs = d->handshake;
	if (d->args == CT_NV_A_CARD_INFO && !h->cards++)
		h->card = *d;
}

static void healthy(const char *fx, bool expect_handshake)
{
	static struct health h;

	memset(&h, 0, sizeof h);
	scan(fx, health_visit, &h);
	ck_assert_uint_gt(h.ioctls, 50);
	ck_assert_msg(h.warnings == 0, "%s: %u warnings, first %s", fx, h.warnings, h.first_warning);
	ck_assert_msg(h.failures == 0, "%s: %u failures, first %s", fx, h.failures, h.first_failure);
	ck_assert_uint_ge(h.cards, 1);
	ck_assert_uint_eq(h.card.ncards, 1);
	ck_assert_uint_eq(h.card.card_slots, 32);
	ck_assert_uint_eq(h.card.cards[0].vendor, 0x10de);
	ck_assert_uint_eq(h.card.cards[0].device, 0x2335);
	ck_assert_uint_eq(h.card.cards[0].minor, 0);
	ck_assert_str_eq(h.card.summary, "CARD_INFO 1 GPU: 0000:00:06.0 10de:2335 minor 0");
	if (expect_handshake) {
		/* libcuda's handshake: GET_BUILD_VERSION reports the kernel module's
		 * version = the one in /proc/driver/nvidia/version */
		ck_assert_uint_ge(h.handshakes, 1);
		ck_assert_int_eq(h.hs.result, CT_NV_HS_REPORTED);
		ck_assert_str_eq(h.hs.kernel, "580.159.04");
		ck_assert_uint_eq(h.hs.kernel_drv, V580);
	}
}

START_TEST(healthy_probe) { healthy("probe", true); }
END_TEST
START_TEST(healthy_probectx) { healthy("probectx", true); }
END_TEST
START_TEST(healthy_rtshared) { healthy("rtshared", true); }
END_TEST
START_TEST(healthy_rtstatic) { healthy("rtstatic", true); }
END_TEST
START_TEST(healthy_torch) { healthy("torch", true); }
END_TEST

/* ---- the recorded failures ------------------------------------------------------------- */

struct find {
	bool (*match)(const struct ct_nv_ioctl *d);
	unsigned hits;
	struct ct_nv_ioctl first;
	struct ct_nv_handshake hs;   /* the first GET_BUILD_VERSION / CHECK_VERSION_STR */
	unsigned handshakes;
	char libcuda[256];
};

static void find_visit(struct scan *s, const struct ct_event *ev, void *user)
{
	struct find *f = user;
	(void)ev;

	if (s->d.handshake.source != CT_NV_HS_NONE && !f->handshakes++)
		f->hs = s->d.handshake;
	if (f->match && f->match(&s->d) && !f->hits++)
		f->first = s->d;
	snprintf(f->libcuda, sizeof f->libcuda, "%s", s->libcuda);
}

static struct find *find(const char *fx, bool (*match)(const struct ct_nv_ioctl *))
{
	static struct find f;

	memset(&f, 0, sizeof f);
	f.match = match;
	scan(fx, find_visit, &f);
	return &f;
}

static bool is_register_gpu(const struct ct_nv_ioctl *d)
{
	return d->family == CT_NV_FAM_UVM && !strcmp(d->name, "UVM_REGISTER_GPU");
}

START_TEST(i06_register_gpu_status)
{
	struct find *f = find("i06", is_register_gpu);

	ck_assert_uint_eq(f->hits, 1);
	ck_assert(f->first.has_status);
	ck_assert_uint_eq(f->first.status, 0x1a);
	ck_assert_int_eq(f->first.status_off, 36);
	ck_assert_str_eq(f->first.status_name, "NV_ERR_INSUFFICIENT_RESOURCES");
	ck_assert(f->first.injected);
	ck_assert(!f->first.ok);
	ck_assert_str_eq(f->first.summary, "UVM_REGISTER_GPU -> NV_ERR_INSUFFICIENT_RESOURCES [injected]");
}
END_TEST

START_TEST(i05_register_gpu_errno)
{
	struct find *f = find("i05", is_register_gpu);

	ck_assert_uint_eq(f->hits, 1);
	ck_assert_int_eq(f->first.ret, -1);
	ck_assert_int_eq(f->first.err, EIO);
	ck_assert(!f->first.ok);
	ck_assert_str_eq(f->first.summary, "UVM_REGISTER_GPU -> -1 EIO [injected]");
}
END_TEST

/* the H200 machine is a VM with the GPU passed through: RM says NMOS, compute mode Default
 * (catalog G6 tells a vGPU guest, VGX, from these) */
static bool is_virt_mode(const struct ct_nv_ioctl *d)
{
	return d->args == CT_NV_A_RM_CONTROL && d->u.control.cmd == 0x00800289;
}

static bool is_compute_rules(const struct ct_nv_ioctl *d)
{
	return d->args == CT_NV_A_RM_CONTROL && d->u.control.cmd == 0x20800131;
}

START_TEST(busy_ctx_virt_mode_and_compute_mode)
{
	struct find *f = find("busy-ctx", is_virt_mode);

	ck_assert_uint_eq(f->hits, 1);
	ck_assert(f->first.u.control.has_answer);
	ck_assert_uint_eq(f->first.u.control.answer, 1);
	ck_assert_str_eq(f->first.summary,
			 "RM_CONTROL NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE -> mode NMOS (passthrough)");
	f = find("busy-ctx", is_compute_rules);
	ck_assert_uint_eq(f->hits, 1);
	ck_assert_uint_eq(f->first.u.control.answer, 0);
	ck_assert_str_eq(
		f->first.summary,
		"RM_CONTROL NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES -> compute mode NONE (Default)");
}
END_TEST

/* the H200's UUID, as libcuda 580 asks it at cuInit (GPU_GET_GID_INFO, binary) and again
 * at the first context: what CUDA_VISIBLE_DEVICES's GPU- entries are matched against (G7) */
static bool is_gid_info(const struct ct_nv_ioctl *d)
{
	return d->args == CT_NV_A_RM_CONTROL && d->u.control.cmd == 0x2080014a;
}

START_TEST(probe_gid_info_uuid)
{
	struct find *f = find("probe", is_gid_info);

	ck_assert_uint_eq(f->hits, 2);
	ck_assert_str_eq(f->first.u.control.uuid, "GPU-fa9d8c7b-ca18-6c74-18ec-e711754b7fbc");
	ck_assert_str_eq(
		f->first.summary,
		"RM_CONTROL NV2080_CTRL_CMD_GPU_GET_GID_INFO -> GPU-fa9d8c7b-ca18-6c74-18ec-e711754b7fbc");
}
END_TEST

static bool is_build_version(const struct ct_nv_ioctl *d)
{
	return d->args == CT_NV_A_RM_CONTROL && d->u.control.cmd == 0x101;
}

START_TEST(i08_build_version_status)
{
	struct find *f = find("i08", is_build_version);

	ck_assert_uint_ge(f->hits, 1);
	ck_assert_uint_eq(f->first.status, 0x1b);
	ck_assert_str_eq(f->first.status_name, "NV_ERR_INSUFFICIENT_PERMISSIONS");
	ck_assert(f->first.injected);
	ck_assert(!f->first.ok);
	ck_assert_int_eq(f->first.handshake.result, CT_NV_HS_UNKNOWN);
	ck_assert_str_eq(f->first.summary,
			 "RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION -> NV_ERR_INSUFFICIENT_PERMISSIONS [injected]");
}
END_TEST

START_TEST(i07_injected_kernel_version)
{
	struct find *f = find("i07", is_build_version);

	/* version=575.51.02 replaced the driverVersion string libcuda read */
	ck_assert_uint_ge(f->hits, 1);
	ck_assert_str_eq(f->hs.kernel, "575.51.02");
	ck_assert(f->first.injected);
	ck_assert_int_eq(ct_nv_handshake_compare(&f->hs, "580.159.04"), CT_NV_HS_MISMATCH);
}
END_TEST

static bool is_probed_ids(const struct ct_nv_ioctl *d)
{
	return d->args == CT_NV_A_RM_CONTROL && d->u.control.cmd == 0x214;
}

START_TEST(i07_old_layout_after_fake_version)
{
	struct find *f = find("i07", is_probed_ids);

	/* believing the module is 575, libcuda uses the pre-580.65.06 layout */
	ck_assert_uint_ge(f->hits, 1);
	ck_assert_uint_eq(f->first.u.control.params_size, 256);
	ck_assert_str_eq(f->first.status_name, "NV_ERR_INVALID_ARGUMENT");
	ck_assert_msg(strstr(f->first.warning, "paramsSize 256 is the layout of drivers before 580.65.06"),
		      "%s", f->first.warning);
}
END_TEST

static bool is_version_str(const struct ct_nv_ioctl *d)
{
	return d->args == CT_NV_A_VERSION_STR;
}

START_TEST(i16_check_version_mismatch)
{
	struct find *f = find("i16", is_version_str);

	ck_assert_uint_eq(f->hits, 1);
	ck_assert_int_eq(f->first.handshake.result, CT_NV_HS_MISMATCH);
	ck_assert_str_eq(f->first.handshake.client, "580.159.04");
	ck_assert_str_eq(f->first.handshake.kernel, "575.51.02");
	ck_assert_int_eq(f->first.ret, -1);
	ck_assert_int_eq(f->first.err, EINVAL);
	ck_assert(!f->first.ok);
	ck_assert_str_eq(f->first.summary,
			 "CHECK_VERSION_STR client 580.159.04 kernel 575.51.02: MISMATCH [injected]");
}
END_TEST

START_TEST(nvml_check_version_match)
{
	struct find *f = find("nvml", is_version_str);

	ck_assert_uint_ge(f->hits, 1);
	ck_assert_int_eq(f->first.handshake.result, CT_NV_HS_MATCH);
	ck_assert_str_eq(f->first.handshake.client, "580.159.04");
	ck_assert_str_eq(f->first.handshake.kernel, "580.159.04");
	ck_assert(f->first.ok);
}
END_TEST

START_TEST(c1_compat_libcuda_handshake)
{
	struct find *f = find("c1", is_build_version);
	const char *v;

	/* the kernel module tells 580.159.04 to a compat libcuda 580.95.05 */
	ck_assert_uint_ge(f->hits, 1);
	ck_assert_int_eq(f->hs.source, CT_NV_HS_BUILD_VERSION);
	ck_assert_str_eq(f->hs.kernel, "580.159.04");
	ck_assert_int_eq(f->hs.result, CT_NV_HS_REPORTED);
	v = strstr(f->libcuda, "libcuda.so.");
	ck_assert_msg(v, "libcuda path '%s'", f->libcuda);
	v += strlen("libcuda.so.");
	ck_assert_str_eq(v, "580.95.05");
	ck_assert_int_eq(ct_nv_handshake_compare(&f->hs, v), CT_NV_HS_MISMATCH);
	ck_assert_str_eq(f->hs.client, "580.95.05");
}
END_TEST

static bool is_card_info(const struct ct_nv_ioctl *d)
{
	return d->args == CT_NV_A_CARD_INFO;
}

START_TEST(i11_card_info_eio)
{
	struct find *f = find("i11", is_card_info);

	ck_assert_uint_ge(f->hits, 1);
	ck_assert_int_eq(f->first.err, EIO);
	ck_assert_uint_eq(f->first.ncards, 0);
	ck_assert_str_eq(f->first.summary, "CARD_INFO -> -1 EIO [injected]");
}
END_TEST

static bool is_channel_group(const struct ct_nv_ioctl *d)
{
	return d->args == CT_NV_A_RM_ALLOC && d->u.alloc.hClass_in == 0xA06C && d->injected;
}

START_TEST(i12_channel_group_status)
{
	struct find *f = find("i12", is_channel_group);

	ck_assert_uint_ge(f->hits, 1);
	ck_assert_uint_eq(f->first.status, 0x17);
	ck_assert_int_eq(f->first.status_off, 40);
	ck_assert_str_eq(f->first.summary, "RM_ALLOC KEPLER_CHANNEL_GROUP_A -> NV_ERR_IN_USE [injected]");
}
END_TEST

static bool is_uvm_init(const struct ct_nv_ioctl *d)
{
	return d->family == CT_NV_FAM_UVM && d->nr == 0x30000001u;
}

START_TEST(i04_uvm_initialize_eperm)
{
	struct find *f = find("i04", is_uvm_init);

	ck_assert_uint_ge(f->hits, 1);
	ck_assert_str_eq(f->first.summary, "UVM_INITIALIZE flags 0x0 -> -1 EPERM [injected]");
}
END_TEST

/* i16: after the failed handshake NVML sends RM_ALLOC to the capability
 * nodes it opened; named, and flagged as the wrong node */
static bool is_on_caps(const struct ct_nv_ioctl *d)
{
	return d->node_kind == CT_NODE_CAPS;
}

START_TEST(i16_escape_on_caps_node)
{
	struct find *f = find("i16", is_on_caps);

	ck_assert_uint_eq(f->hits, 2);
	ck_assert_int_eq(f->first.family, CT_NV_FAM_OTHER);
	ck_assert_str_eq(f->first.name, "NV_ESC_RM_ALLOC");
	ck_assert_str_eq(f->first.node_name, "nvidia-caps/nvidia-cap1");
	ck_assert(f->first.warning[0]);
	ck_assert_str_eq(f->first.summary, "RM_ALLOC AMPERE_SMC_CONFIG_SESSION -> -1 ENOTTY");
	ck_assert(!f->first.has_status);
}
END_TEST

START_TEST(devmap_from_context)
{
	static struct ct_nv_devmap m;
	struct ct_trace *t = load("probe");

	ct_nv_devmap_init(&m, t);
	/* /proc/devices on the H200: 238 nvidia-uvm, 241 nvidia-caps, ... */
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 238ull << 32, NULL), CT_NODE_UVM);
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 238ull << 32 | 1, NULL), CT_NODE_UVM_TOOLS);
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 241ull << 32 | 1, NULL), CT_NODE_CAPS);
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 239ull << 32, NULL), CT_NODE_NVSWITCH);
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 242ull << 32, NULL), CT_NODE_IMEX);
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 195ull << 32 | 255, NULL), CT_NODE_CTL);
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 1ull << 32 | 3, NULL), CT_NODE_NONE);
	ct_trace_close(t);
}
END_TEST

/* the reader's own device map (what `cutrace show` decodes with): every
 * ioctl's fd was bound by its open, to the node the shim saw */
struct rmap {
	struct ct_trace *t;
	unsigned ioctls, bound, uvm;
};

static int rmap_event(const struct ct_event *ev, void *user)
{
	struct rmap *r = user;
	const struct ct_nv_devmap *m = ct_trace_devmap(r->t);
	uint32_t node = 0;
	int32_t fd = -1;

	ck_assert_ptr_nonnull(m);
	if (ev->call != CT_CALL_ioctl || !ev->has_enter)
		return 0;
	r->ioctls++;
	ck_assert(ct_rec_i32(&ev->enter, CT_FLD_FD, &fd));
	ct_rec_u32(&ev->enter, CT_FLD_NODE, &node);
	for (unsigned i = 0; i < CT_NV_DEVMAP_FDS; i++)
		if (m->fds[i].fd == fd) {
			ck_assert_uint_eq(m->fds[i].node >> 16, node >> 16);
			r->bound++;
			r->uvm += (node >> 16) == CT_NODE_UVM;
			break;
		}
	return 0;
}

START_TEST(reader_devmap_follows_opens)
{
	static struct rmap r;

	memset(&r, 0, sizeof r);
	r.t = load("probe");
	ck_assert_ptr_null(ct_trace_devmap(r.t));
	ck_assert_int_eq(ct_trace_events(r.t, rmap_event, &r), 0);
	ck_assert_uint_gt(r.ioctls, 50);
	ck_assert_uint_eq(r.bound, r.ioctls);
	ck_assert_uint_ge(r.uvm, 5);
	/* a second pass starts from the context again: same result */
	r.ioctls = r.bound = r.uvm = 0;
	ck_assert_int_eq(ct_trace_events(r.t, rmap_event, &r), 0);
	ck_assert_uint_eq(r.bound, r.ioctls);
	ct_trace_close(r.t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nvdecode_golden");
	TCase *t = tcase_create("h200-580");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, census_all_named);
	tcase_add_test(t, healthy_probe);
	tcase_add_test(t, healthy_probectx);
	tcase_add_test(t, healthy_rtshared);
	tcase_add_test(t, healthy_rtstatic);
	tcase_add_test(t, healthy_torch);
	tcase_add_test(t, i06_register_gpu_status);
	tcase_add_test(t, i05_register_gpu_errno);
	tcase_add_test(t, i08_build_version_status);
	tcase_add_test(t, i07_injected_kernel_version);
	tcase_add_test(t, i07_old_layout_after_fake_version);
	tcase_add_test(t, i16_check_version_mismatch);
	tcase_add_test(t, nvml_check_version_match);
	tcase_add_test(t, c1_compat_libcuda_handshake);
	tcase_add_test(t, i11_card_info_eio);
	tcase_add_test(t, i12_channel_group_status);
	tcase_add_test(t, i04_uvm_initialize_eperm);
	tcase_add_test(t, i16_escape_on_caps_node);
	tcase_add_test(t, devmap_from_context);
	tcase_add_test(t, busy_ctx_virt_mode_and_compute_mode);
	tcase_add_test(t, probe_gid_info_uuid);
	tcase_add_test(t, reader_devmap_follows_opens);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
