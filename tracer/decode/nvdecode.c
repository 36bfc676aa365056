/*
 * NVIDIA ioctl decoder (see nvdecode.h).  Facts: ABI.md (in this folder),
 * cited by section; "§11.n" is the decoder-pitfall checklist item the code
 * follows.  All reads of recorded bytes are bounds-checked: a block may be
 * shorter than its size says (CT_RF_UNREADABLE, caps in shim/capture.c).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "nvdecode.h"
#include "tracer.h"
#include "xlat.h"
#include "fmt.h"
/* the hot paths format many short strings: the cheaper snprintf (fmt.c) */
#define snprintf ct_snprintf
#define vsnprintf ct_vsnprintf

/* escape numbers the decoder treats specially (ABI.md §2a, §2b) */
enum {
	NR_RM_ALLOC_MEMORY = 0x27, NR_RM_FREE = 0x29, NR_RM_CONTROL = 0x2A, NR_RM_ALLOC = 0x2B,
	NR_RM_MAP_MEMORY = 0x4E, NR_RM_UNMAP_MEMORY = 0x4F, NR_RM_UPDATE_MAPPING = 0x5E,
	NR_CARD_INFO = 200, NR_REGISTER_FD = 201, NR_ALLOC_OS_EVENT = 206, NR_FREE_OS_EVENT = 207,
	NR_STATUS_CODE = 209, NR_CHECK_VERSION_STR = 210, NR_XFER = 211, NR_ATTACH_GPUS = 212,
	NR_SYS_PARAMS = 214, NR_NUMA_INFO = 215, NR_WAIT_OPEN = 218,
};
/* UVM commands with decoded arguments (ABI.md §6) */
enum {
	UVM_CREATE_RANGE_GROUP = 23, UVM_REGISTER_GPU_VASPACE = 25, UVM_UNREGISTER_GPU_VASPACE = 26,
	UVM_REGISTER_CHANNEL = 27, UVM_MAP_EXTERNAL_ALLOCATION = 33, UVM_REGISTER_GPU = 37,
	UVM_UNREGISTER_GPU = 38, UVM_PAGEABLE_MEM_ACCESS = 39, UVM_VALIDATE_VA_RANGE = 72,
	UVM_CREATE_EXTERNAL_RANGE = 73, UVM_MM_INITIALIZE = 75,
	UVM_INITIALIZE = 0x30000001, UVM_DEINITIALIZE = 0x30000002,
};
#define CMD_GET_BUILD_VERSION    0x101u
#define CMD_GET_BUILD_VERSION_V2 0x13Eu
#define CMD_GPU_GET_ATTACHED_IDS 0x201u
#define CMD_GPU_GET_INIT_STATUS  0x203u
#define CMD_GPU_GET_PROBED_IDS   0x214u
#define CMD_GPU_ATTACH_IDS       0x215u
#define CMD_GPU_GET_VIRT_MODE    0x00800289u /* NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE */
#define CMD_GPU_COMPUTE_RULES    0x20800131u /* NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES */
#define CMD_GPU_GET_GID_INFO     0x2080014Au /* NV2080_CTRL_CMD_GPU_GET_GID_INFO */
#define CMD_GPU_UUID_FROM_ID     0x00000275u /* NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID */
#define CARD_ENTRY 72u
#define GPU_INVALID_ID 0xFFFFFFFFu /* NV0000_CTRL_GPU_INVALID_ID (ABI.md §7) */

/* [since, until) holds drv; drv 0 (unknown) takes only open-ended rows */
static bool drv_in(uint32_t since, uint32_t until, uint32_t drv)
{
	if (!drv)
		return until == 0;
	return drv >= since && (until == 0 || drv < until);
}

/* "580.65.06" */
static void ver_str(uint32_t drv, char *buf, unsigned len)
{
	snprintf(buf, len, "%u.%u.%02u", drv / 1000000u, drv / 1000u % 1000u, drv % 1000u);
}

/* "driver 580.65.06", or what drv 0 means */
static void drv_str(uint32_t drv, char *buf, unsigned len)
{
	/* asked for per ioctl with the same driver: format it once */
	static uint32_t last = UINT32_MAX;
	static char text[40];
	char v[24];

	if (drv != last) {
		if (!drv) {
			snprintf(text, sizeof text, "the newest driver");
		} else {
			ver_str(drv, v, sizeof v);
			snprintf(text, sizeof text, "driver %s", v);
		}
		last = drv;
	}
	ct_str_copy(buf, len, text);
}

/* ---- bounded views of recorded bytes -------------------------------------------- */

struct bv {
	const unsigned char *p;
	uint32_t len;
};

/* a parameter block: its first bytes (BLOCK) and maybe its last (BLOCK_TAIL) */
struct blk {
	bool have;
	struct bv head;
	struct bv tail;
	uint32_t tail_off;
};

static bool blk_bytes(const struct blk *b, uint32_t off, void *dst, uint32_t n)
{
	if (!b->have || off + n < off)
		return false;
	if (off + n <= b->head.len) {
		memcpy(dst, b->head.p + off, n);
		return true;
	}
	if (b->tail.len && off >= b->tail_off && off + n <= b->tail_off + b->tail.len) {
		memcpy(dst, b->tail.p + (off - b->tail_off), n);
		return true;
	}
	return false;
}

static bool blk_u32(const struct blk *b, uint32_t off, uint32_t *v)
{
	return blk_bytes(b, off, v, 4);
}

static bool blk_i32(const struct blk *b, uint32_t off, int32_t *v)
{
	return blk_bytes(b, off, v, 4);
}

static bool blk_u64(const struct blk *b, uint32_t off, uint64_t *v)
{
	return blk_bytes(b, off, v, 8);
}

static uint32_t blk_u32_or(const struct blk *b, uint32_t off, uint32_t dflt)
{
	uint32_t v;
	return blk_u32(b, off, &v) ? v : dflt;
}

static uint64_t blk_u64_or(const struct blk *b, uint32_t off, uint64_t dflt)
{
	uint64_t v;
	return blk_u64(b, off, &v) ? v : dflt;
}

static void blk_from_record(struct blk *b, const struct ct_recv *r)
{
	struct ct_fieldv f;

	memset(b, 0, sizeof *b);
	if (ct_rec_field(r, CT_FLD_BLOCK, &f)) {
		b->have = true;
		b->head.p = f.data;
		b->head.len = f.len;
	}
	/* u32 offset, then the block's last bytes */
	if (ct_rec_field(r, CT_FLD_BLOCK_TAIL, &f) && f.len >= 4) {
		memcpy(&b->tail_off, f.data, 4);
		b->have = true;
		b->tail.p = f.data + 4;
		b->tail.len = f.len - 4u;
	}
}

static void blk_from_bv(struct blk *b, const struct ct_fieldv *f)
{
	memset(b, 0, sizeof *b);
	if (!f)
		return;
	b->have = true;
	b->head.p = f->data;
	b->head.len = f->len;
}

/* Copy a NUL-padded string from recorded bytes, printable ASCII only. */

static void blk_str(const struct blk *b, uint32_t off, uint32_t n, char *dst, unsigned dlen)
{
	dst[0] = '\0';
	if (!b->have || off >= b->head.len)
		return;
	if (n > b->head.len - off)
		n = b->head.len - off;
	ct_copy_printable(dst, dlen, b->head.p + off, n);
}

/* ---- text helpers ------------------------------------------------------------------ */

#define CT_NVD_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define SUM(o, ...)         ct_appendf((o)->summary, sizeof(o)->summary, __VA_ARGS__)

/* an RM client handle: the kernel numbers clients across the machine, so
 * under --no-time (ct_stable) it is "<client>" (one per call of a format) */
static const char *client_str(uint32_t h)
{
	static char buf[16];

	if (ct_stable())
		return "<client>";
	snprintf(buf, sizeof buf, "0x%x", (unsigned)h);
	return buf;
}

/* SUM(o, "%s%s", a, b) without the format; b may be NULL */
static void sum_str(struct ct_nv_ioctl *o, const char *a, const char *b)
{
	struct ct_sb sb;

	ct_sb_append_to(&sb, o->summary, sizeof o->summary);
	ct_sb_str(&sb, a);
	if (b)
		ct_sb_str(&sb, b);
}

/* one more warning, after "; " when there are others, built in *b; false:
 * no room left (nothing is added) */
static bool warn_begin(struct ct_nv_ioctl *o, struct ct_sb *b)
{
	size_t used = strnlen(o->warning, sizeof o->warning);

	if (used + 3 >= sizeof o->warning)
		return false;
	if (used) {
		memcpy(o->warning + used, "; ", 3);
		used += 2;
	}
	ct_sb_init(b, o->warning + used, sizeof o->warning - used);
	return true;
}

static void warnf(struct ct_nv_ioctl *o, const char *fmt, ...) CT_NVD_PRINTF(2, 3);
static void warnf(struct ct_nv_ioctl *o, const char *fmt, ...)
{
	struct ct_sb b;
	va_list ap;

	if (!warn_begin(o, &b))
		return;
	va_start(ap, fmt);
	vsnprintf(b.p, (size_t)(b.last - b.p) + 1, fmt, ap);
	va_end(ap);
}

static const char *errno_str(int e, char *buf, unsigned len)
{
	const char *n = ct_errno_name(e);
	if (n)
		return n;
	snprintf(buf, len, "errno %d", e);
	return buf;
}

/* status text: the version's name, or the number */
static const char *status_str(uint32_t st, uint32_t drv, char *buf, unsigned len)
{
	const char *n = ct_nv_status_name(st, drv);
	if (n)
		return n;
	snprintf(buf, len, "NV_STATUS 0x%x", (unsigned)st);
	return buf;
}

/* prefix, then v as printf's %02x */
static void sb_hex02(struct ct_sb *b, const char *prefix, unsigned v)
{
	ct_sb_str(b, prefix);
	if (v < 16)
		ct_sb_mem(b, "0", 1);
	ct_sb_hex(b, v);
}

/* "_IOC(RW,'F',0xd9,2608)": how strace prints a request it cannot name */
static void ioc_struct(uint64_t req, char *buf, unsigned len)
{
	static const char *const dirs[4] = { "NONE", "W", "R", "RW" };
	unsigned type = (unsigned)(req >> 8) & 0xffu;
	struct ct_sb b;

	/* "_IOC(%s,%s,0x%02x,%u)", the type as '%c' or 0x%02x */
	ct_sb_init(&b, buf, len);
	ct_sb_str(&b, "_IOC(");
	ct_sb_str(&b, dirs[(req >> 30) & 3u]);
	if (isprint((int)type) && type != '\'' && type != '\\') {
		char t[5] = { ',', '\'', (char)type, '\'', ',' };
		ct_sb_mem(&b, t, 5);
	} else {
		sb_hex02(&b, ",0x", type);
		ct_sb_mem(&b, ",", 1);
	}
	sb_hex02(&b, "0x", (unsigned)(req & 0xffu));
	ct_sb_mem(&b, ",", 1);
	ct_sb_u64(&b, (unsigned)((req >> 16) & 0x3fffu));
	ct_sb_mem(&b, ")", 1);
}

const char *ct_nv_node_name(uint32_t node, char *buf, unsigned len)
{
	unsigned minor = node & 0xffffu;
	const char *fixed = NULL, *stem = NULL;
	struct ct_sb b;

	/* asked for on every ioctl: no format string */
	switch (node >> 16) {
	case CT_NODE_CTL:       fixed = "nvidiactl"; break;
	case CT_NODE_GPU:       stem = "nvidia"; break;
	case CT_NODE_UVM:       fixed = "nvidia-uvm"; break;
	case CT_NODE_UVM_TOOLS: fixed = "nvidia-uvm-tools"; break;
	case CT_NODE_MODESET:   fixed = "nvidia-modeset"; break;
	case CT_NODE_CAPS:      stem = "nvidia-caps/nvidia-cap"; break;
	case CT_NODE_NVSWITCH:  stem = "nvidia-nvswitch"; break;
	case CT_NODE_IMEX:      stem = "nvidia-caps-imex-channels/channel"; break;
	case CT_NODE_OTHER:     fixed = "nvidia (other node)"; break;
	case CT_NODE_DXG: fixed = "dxg"; break;
	default:                fixed = "not an NVIDIA node"; break;
	}
	if (!len)
		return buf;
	ct_sb_init(&b, buf, len);
	ct_sb_str(&b, fixed ? fixed : stem);
	if (!fixed)
		ct_sb_u64(&b, minor);
	return buf;
}

/* ---- enum names ------------------------------------------------------------------ */

const char *ct_nv_family_name(enum ct_nv_family f)
{
	switch (f) {
	case CT_NV_FAM_FRONTEND: return "frontend";
	case CT_NV_FAM_RM:       return "rm";
	case CT_NV_FAM_UVM:      return "uvm";
	case CT_NV_FAM_OTHER:    return "other";
	default:                 return "not-nvidia";
	}
}

const char *ct_nv_hs_result_name(enum ct_nv_hs_result r)
{
	switch (r) {
	case CT_NV_HS_MATCH:    return "match";
	case CT_NV_HS_MISMATCH: return "MISMATCH";
	case CT_NV_HS_REPORTED: return "reported";
	default:                return "unknown";
	}
}

const char *ct_nv_hs_source_name(enum ct_nv_hs_source s)
{
	switch (s) {
	case CT_NV_HS_CHECK_VERSION_STR: return "NV_ESC_CHECK_VERSION_STR";
	case CT_NV_HS_BUILD_VERSION:     return "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION";
	case CT_NV_HS_BUILD_VERSION_V2:  return "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2";
	default:                         return "none";
	}
}

/* NV_IOCTL_NUMA_STATUS_* (ABI.md §2a NUMA_INFO) */
const char *ct_nv_numa_state_name(int32_t state)
{
	static const char *const names[] = { "DISABLED", "OFFLINE", "ONLINE_IN_PROGRESS", "ONLINE",
					     "ONLINE_FAILED", "OFFLINE_IN_PROGRESS", "OFFLINE_FAILED" };
	if (state < 0 || state >= (int32_t)(sizeof names / sizeof names[0]))
		return NULL;
	return names[state];
}

/* ---- decoding context ------------------------------------------------------------- */

struct dctx {
	const struct ct_event *ev;
	uint32_t drv;
	struct ct_nv_ioctl *o;
	struct blk before, after;    /* the (inner, for XFER) parameter block */
	bool have_payload;           /* RM_CONTROL/RM_ALLOC params after the call */
	struct bv payload;
	uint32_t payload_size;       /* PAYLOAD_SIZE: the caller's paramsSize */
	char out[160];               /* what a successful call returned, for the summary */
};

static void set_status(struct dctx *c, const struct blk *b, int32_t off)
{
	struct ct_nv_ioctl *o = c->o;
	uint32_t st;

	if (off < 0 || !blk_u32(b, (uint32_t)off, &st))
		return;
	o->has_status = true;
	o->status_kind = CT_NV_ST_NV_STATUS;
	o->status = st;
	o->status_off = off;
	o->status_name = ct_nv_status_name(st, c->drv);
	o->is_warning = ct_nv_status_is_warning(st);
}

/* the name without "NV_ESC_", for summaries */
static void set_short(struct ct_nv_ioctl *o)
{
	ct_str_copy(o->short_name, sizeof o->short_name,
		    strncmp(o->name, "NV_ESC_", 7) ? o->name : o->name + 7);
}

/*
 * The input field at off cannot be read: the block was not recorded (the
 * program's pointer was bad: -EFAULT, CT_RF_UNREADABLE) or is too short to
 * hold it.  Decoding zeroes instead would name a command or class the
 * caller never sent ("cat RESERVED(0x00) idx 0x00", NV01_ROOT_CLIENT).
 * Returns the text to show instead, NULL when the field is there.
 */
static const char *missing_input(const struct dctx *c, const struct blk *in, uint32_t off)
{
	uint32_t v;

	if (blk_u32(in, off, &v))
		return NULL;
	return c->o->size < off + 4 ? "(block too short)" : "(parameter block unreadable)";
}

static void name_class(uint32_t cls, char *buf, unsigned len, bool *named)
{
	const char *n = ct_rm_class_name(cls);
	*named = n != NULL;
	if (n)
		ct_str_copy(buf, len, n);
	else
		snprintf(buf, len, "class 0x%04x", (unsigned)cls);
}

/* ---- frontend escapes ---------------------------------------------------------------- */

static void dec_card_info(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	uint32_t n, avail;

	o->args = CT_NV_A_CARD_INFO;
	o->card_slots = n = o->size / CARD_ENTRY;
	SUM(o, "CARD_INFO");
	if (!c->ev->has_exit || c->ev->ret < 0)
		return;
	/* the kernel zeroes every entry and marks the filled ones valid (ABI.md §2a) */
	avail = c->after.have ? c->after.head.len / CARD_ENTRY : 0;
	if (avail < n) {
		/* the shim keeps 4096 bytes = 56 entries */
		warnf(o, "only %u of %u CARD_INFO entries recorded", avail, n);
		n = avail;
	}
	for (uint32_t i = 0; i < n && o->ncards < CT_NV_MAX_CARDS; i++) {
		const unsigned char *e = c->after.head.p + i * CARD_ENTRY;
		struct ct_nv_card *k = &o->cards[o->ncards];
		if (!e[0])
			continue;
		memset(k, 0, sizeof *k);
		memcpy(&k->domain, e + 4, 4);
		k->bus = e[8];
		k->slot = e[9];
		k->function = e[10];
		memcpy(&k->vendor, e + 12, 2);
		memcpy(&k->device, e + 14, 2);
		memcpy(&k->gpu_id, e + 16, 4);
		memcpy(&k->interrupt_line, e + 20, 2);
		memcpy(&k->reg_address, e + 24, 8);
		memcpy(&k->reg_size, e + 32, 8);
		memcpy(&k->fb_address, e + 40, 8);
		memcpy(&k->fb_size, e + 48, 8);
		memcpy(&k->minor, e + 56, 4);
		ct_copy_printable(k->dev_name, sizeof k->dev_name, e + 60, 10);
		o->ncards++;
	}
	SUM(o, " %u GPU%s", o->ncards, o->ncards == 1 ? "" : "s");
	for (unsigned i = 0; i < o->ncards && i < 4; i++) {
		const struct ct_nv_card *k = &o->cards[i];
		SUM(o, "%s %04x:%02x:%02x.%x %04x:%04x minor %u", i ? "," : ":", (unsigned)k->domain,
		    k->bus, k->slot, k->function, k->vendor, k->device, (unsigned)k->minor);
	}
	if (o->ncards > 4)
		SUM(o, ", ...");
}

static const char *version_cmd_name(uint32_t cmd, uint32_t drv)
{
	if (cmd == '1')
		return "relaxed";
	if (cmd == '2') /* meant OVERRIDE before 530.30.02 (ABI.md §4, §10) */
		return (drv && drv < CT_DRV(530, 30, 2)) ? "override" : "query";
	return "strict"; /* 0 and anything else: exact comparison */
}

static void dec_check_version(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	struct ct_nv_handshake *h = &o->handshake;
	char after_str[65] = "";
	bool query;

	o->args = CT_NV_A_VERSION_STR;
	h->source = CT_NV_HS_CHECK_VERSION_STR;
	h->cmd = blk_u32_or(&c->before, 0, 0);
	blk_str(&c->before, 8, 64, h->client, sizeof h->client);
	h->client_drv = ct_drv_version_parse(h->client);
	query = h->cmd == '2' && !(c->drv && c->drv < CT_DRV(530, 30, 2));
	SUM(o, "CHECK_VERSION_STR");
	if (strcmp(version_cmd_name(h->cmd, c->drv), "strict"))
		SUM(o, " %s", version_cmd_name(h->cmd, c->drv));
	if (!c->ev->has_exit) {
		SUM(o, " client %s", h->client[0] ? h->client : "\"\"");
		return;
	}
	h->reply = blk_u32_or(&c->after, 4, 0);
	blk_str(&c->after, 8, 64, after_str, sizeof after_str);
	if (h->reply != 1) {
		/* the kernel sets reply = 1 first for every size-valid request (ABI.md §4) */
		warnf(o, "reply %u: the kernel did not process the version check", (unsigned)h->reply);
		h->result = CT_NV_HS_UNKNOWN;
	} else if (c->ev->ret < 0 && c->ev->err == EINVAL && strcmp(after_str, h->client)) {
		/* a mismatch: the kernel wrote its own version over the client's (ABI.md §4, §11.5) */
		snprintf(h->kernel, sizeof h->kernel, "%s", after_str);
		h->result = CT_NV_HS_MISMATCH;
	} else if (c->ev->ret >= 0) {
		if (query || h->cmd != '1')
			snprintf(h->kernel, sizeof h->kernel, "%s", after_str);
		h->result = query ? CT_NV_HS_REPORTED : CT_NV_HS_MATCH;
	} else {
		h->result = CT_NV_HS_UNKNOWN;
	}
	h->kernel_drv = ct_drv_version_parse(h->kernel);
	if (!query || h->client[0])
		SUM(o, " client %s", h->client[0] ? h->client : "\"\"");
	if (h->kernel[0])
		SUM(o, " kernel %s", h->kernel);
	if (h->result == CT_NV_HS_MISMATCH || h->result == CT_NV_HS_MATCH)
		SUM(o, ": %s", ct_nv_hs_result_name(h->result));
}

static void dec_numa(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	int32_t v;

	o->args = CT_NV_A_NUMA_INFO;
	SUM(o, "NUMA_INFO");
	if (!c->ev->has_exit || c->ev->ret < 0)
		return;
	/* status @4 is an NV_IOCTL_NUMA_STATUS_* state, not an NV_STATUS (ABI.md §11.12) */
	o->u.numa.nid = blk_i32(&c->after, 0, &v) ? v : -1;
	if (blk_i32(&c->after, 4, &v)) {
		o->u.numa.state = v;
		o->u.numa.state_name = ct_nv_numa_state_name(v);
	} else {
		o->u.numa.state = -1;
	}
	o->u.numa.memblock_size = blk_u64_or(&c->after, 8, 0);
	o->u.numa.numa_mem_addr = blk_u64_or(&c->after, 16, 0);
	o->u.numa.numa_mem_size = blk_u64_or(&c->after, 24, 0);
	o->u.numa.offline_count = blk_u32_or(&c->after, 40 + 64 * 8, 0);
	if (o->u.numa.state_name)
		snprintf(c->out, sizeof c->out, "nid %d state %s", o->u.numa.nid, o->u.numa.state_name);
	else
		snprintf(c->out, sizeof c->out, "nid %d state %d", o->u.numa.nid, o->u.numa.state);
}

static void dec_frontend_args(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	const struct blk *in = &c->before, *out = c->ev->has_exit ? &c->after : &c->before;
	char eb[24];

	switch (o->nr) {
	case NR_CARD_INFO:
		dec_card_info(c);
		return;
	case NR_CHECK_VERSION_STR:
		dec_check_version(c);
		return;
	case NR_NUMA_INFO:
		dec_numa(c);
		return;
	case NR_SYS_PARAMS:
		o->args = CT_NV_A_SYS_PARAMS;
		o->u.sys_params.memblock_size = blk_u64_or(in, 0, 0);
		SUM(o, "SYS_PARAMS memblock_size 0x%" PRIx64, o->u.sys_params.memblock_size);
		return;
	case NR_REGISTER_FD:
		o->args = CT_NV_A_REGISTER_FD;
		o->u.register_fd.ctl_fd = (int32_t)blk_u32_or(in, 0, (uint32_t)-1);
		SUM(o, "REGISTER_FD ctl_fd %d", o->u.register_fd.ctl_fd);
		return;
	case NR_ATTACH_GPUS:
		o->args = CT_NV_A_ATTACH_GPUS;
		SUM(o, "ATTACH_GPUS_TO_FD");
		for (uint32_t off = 0; off + 4 <= o->size; off += 4) {
			uint32_t id;
			if (!blk_u32(in, off, &id))
				break;
			if (o->u.attach.n < 16)
				o->u.attach.ids[o->u.attach.n] = id;
			if (o->u.attach.n < 8)
				SUM(o, "%s0x%x", o->u.attach.n ? "," : " ids ", (unsigned)id);
			o->u.attach.n++;
		}
		if (o->u.attach.n > 8)
			SUM(o, ",...");
		return;
	case NR_ALLOC_OS_EVENT:
	case NR_FREE_OS_EVENT:
		o->args = CT_NV_A_OS_EVENT;
		o->u.os_event.hClient = blk_u32_or(in, 0, 0);
		o->u.os_event.hDevice = blk_u32_or(in, 4, 0);
		o->u.os_event.fd = blk_u32_or(in, 8, 0);
		SUM(o, "%s hClient %s hDevice 0x%x fd %d", o->short_name, client_str(o->u.os_event.hClient),
		    (unsigned)o->u.os_event.hDevice, (int)o->u.os_event.fd);
		return;
	case NR_STATUS_CODE:
		o->args = CT_NV_A_STATUS_CODE;
		o->u.status_code.domain = blk_u32_or(in, 0, 0);
		blk_bytes(in, 4, &o->u.status_code.bus, 1);
		blk_bytes(in, 5, &o->u.status_code.slot, 1);
		SUM(o, "STATUS_CODE %04x:%02x:%02x", (unsigned)o->u.status_code.domain, o->u.status_code.bus,
		    o->u.status_code.slot);
		return;
	case NR_WAIT_OPEN: {
		int32_t rc;
		o->args = CT_NV_A_WAIT_OPEN;
		SUM(o, "WAIT_OPEN_COMPLETE");
		if (c->ev->has_exit && blk_i32(out, 0, &rc)) {
			/* rc: 0 or the negative errno of the deferred open (ABI.md §8, §11.14) */
			o->u.wait_open.rc = rc;
			if (rc)
				snprintf(c->out, sizeof c->out, "open failed: rc %d (%s)", (int)rc,
					 errno_str(rc < 0 ? -rc : rc, eb, sizeof eb));
			else
				snprintf(c->out, sizeof c->out, "open complete");
		}
		return;
	}
	default:
		sum_str(o, o->short_name, NULL);
		return;
	}
}

/* ---- RM escapes ------------------------------------------------------------------ */

static void ctrl_ids(const struct bv *p, uint32_t off, uint32_t max, char *buf, unsigned len)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < max && off + 4 * (i + 1) <= p->len; i++) {
		uint32_t id;
		memcpy(&id, p->p + off + 4 * i, 4);
		if (id == GPU_INVALID_ID || id == 0)
			continue;
		if (n < 6)
			ct_appendf(buf, len, "%s0x%x", n ? "," : "", (unsigned)id);
		n++;
	}
	if (n > 6)
		ct_appendf(buf, len, ",...");
	if (!n)
		ct_appendf(buf, len, "none");
}

static void build_version(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	struct ct_nv_handshake *h = &o->handshake;
	struct ct_fieldv f;
	uint32_t pos = 0;

	h->source = CT_NV_HS_BUILD_VERSION;
	if (!c->ev->has_exit)
		return;
	/* payload (40 bytes, ABI.md §4): changelists @32/@36; strings behind pointers
	 * arrive as STRING fields (index 0 driverVersion, 1 version, 2 title) */
	if (c->have_payload && c->payload.len >= 40) {
		memcpy(&h->changelist, c->payload.p + 32, 4);
		memcpy(&h->official_changelist, c->payload.p + 36, 4);
	}
	while (ct_rec_next_field(&c->ev->exit, &pos, &f)) {
		char *dst;
		unsigned cap;
		if (f.tag != CT_FLD_STRING || f.len < 1)
			continue;
		switch (f.data[0]) {
		case 0: dst = h->kernel; cap = sizeof h->kernel; break;
		case 1: dst = h->version; cap = sizeof h->version; break;
		case 2: dst = h->title; cap = sizeof h->title; break;
		default: continue;
		}
		ct_copy_printable(dst, cap, f.data + 1, f.len - 1u);
	}
	h->kernel_drv = ct_drv_version_parse(h->kernel);
	if (h->kernel[0] && (!o->has_status || o->status == 0) && c->ev->ret >= 0)
		h->result = CT_NV_HS_REPORTED;
	if (h->kernel[0])
		snprintf(c->out, sizeof c->out, "driver %.100s", h->kernel);
}

/* _V2 (0x13E): strings inline, 256 bytes each; 560.28.03 inserted
 * driverBranch (ABI.md §4, §10) */
static void build_version_v2(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	struct ct_nv_handshake *h = &o->handshake;
	uint32_t ps = o->u.control.params_size, want;
	bool branch;
	struct blk p;

	h->source = CT_NV_HS_BUILD_VERSION_V2;
	want = (c->drv && c->drv < CT_DRV(560, 28, 3)) ? 776 : 1032;
	if (ps == 1032)
		branch = true;
	else if (ps == 776)
		branch = false;
	else {
		warnf(o, "GET_BUILD_VERSION_V2 paramsSize %u: neither the 776-byte (before 560) nor the "
		      "1032-byte layout", (unsigned)ps);
		return;
	}
	if (ps != want && c->drv) {
		char ds[40];
		drv_str(c->drv, ds, sizeof ds);
		warnf(o, "GET_BUILD_VERSION_V2 with the %u-byte layout; %s expects %u", (unsigned)ps, ds,
		      (unsigned)want);
	}
	if (!c->ev->has_exit || !c->have_payload)
		return;
	memset(&p, 0, sizeof p);
	p.have = true;
	p.head = c->payload;
	blk_str(&p, 0, 256, h->kernel, sizeof h->kernel);
	blk_str(&p, 256, 256, h->version, sizeof h->version);
	if (branch)
		blk_str(&p, 512, 256, h->branch, sizeof h->branch);
	blk_str(&p, branch ? 768 : 512, 256, h->title, sizeof h->title);
	h->changelist = blk_u32_or(&p, branch ? 1024 : 768, 0);
	h->official_changelist = blk_u32_or(&p, branch ? 1028 : 772, 0);
	h->kernel_drv = ct_drv_version_parse(h->kernel);
	if (h->kernel[0] && (!o->has_status || o->status == 0) && c->ev->ret >= 0)
		h->result = CT_NV_HS_REPORTED;
	if (h->kernel[0])
		snprintf(c->out, sizeof c->out, "driver %.100s", h->kernel);
}

/*
 * paramsSize of controls whose layout changed between driver versions: a
 * client library built for another driver sends the other size, and RM
 * rejects it (NV_ERR_INVALID_ARGUMENT / _INVALID_PARAM_STRUCT, ABI.md §7).
 * From ABI.md §7 (control payloads) and §10; rows
 * marked approx start at the branch of the first tag known to have the size.
 */
static const struct ctrl_size {
	uint32_t cmd, size, since, until;
} ctrl_sizes[] = {
	/* GET_PROBED_IDS gained gpuFlags[32] in 580.65.06 */
	{ 0x00000214, 256, 0, CT_DRV(580, 65, 6) },
	{ 0x00000214, 384, CT_DRV(580, 65, 6), 0 },
	/* GET_CLASSLIST_V2: 644 (535), 700 (550, approx), 404 (555.42.02), 804 (580.65.06) */
	{ 0x00800292, 644, 0, CT_DRV(550, 0, 0) },
	{ 0x00800292, 700, CT_DRV(550, 0, 0), CT_DRV(555, 42, 2) },
	{ 0x00800292, 404, CT_DRV(555, 42, 2), CT_DRV(580, 65, 6) },
	{ 0x00800292, 804, CT_DRV(580, 65, 6), 0 },
	/* GPU_GET_INFO_V2: 64/65/66/70 entries: 516 (535), 524 (550, approx), 532 (575.51.02), 564 (580.65.06) */
	{ 0x20800102, 516, 0, CT_DRV(550, 0, 0) },
	{ 0x20800102, 524, CT_DRV(550, 0, 0), CT_DRV(575, 51, 2) },
	{ 0x20800102, 532, CT_DRV(575, 51, 2), CT_DRV(580, 65, 6) },
	{ 0x20800102, 564, CT_DRV(580, 65, 6), 0 },
	/* GPU_GET_NAME_STRING: 132 up to 590, 68 from 595.44.02 */
	{ 0x20800110, 132, 0, CT_DRV(595, 44, 2) },
	{ 0x20800110, 68, CT_DRV(595, 44, 2), 0 },
	/* fixed */
	{ 0x00000101, 40, 0, 0 },
};

static void check_control_size(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	const struct ctrl_size *here = NULL, *other = NULL;
	uint32_t cmd = o->u.control.cmd, ps = o->u.control.params_size;
	char ds[40], vs[40];

	for (unsigned i = 0; i < sizeof ctrl_sizes / sizeof ctrl_sizes[0]; i++) {
		const struct ctrl_size *r = &ctrl_sizes[i];
		if (r->cmd != cmd)
			continue;
		if (drv_in(r->since, r->until, c->drv))
			here = r;
		if (r->size == ps)
			other = r;
	}
	if (!here || here->size == ps)
		return;
	drv_str(c->drv, ds, sizeof ds);
	if (other && other->until) {
		ver_str(other->until, vs, sizeof vs);
		warnf(o, "%s paramsSize %u is the layout of drivers before %s; %s expects %u "
		      "(a client library built for another driver version)", o->u.control.cmd_name,
		      (unsigned)ps, vs, ds, (unsigned)here->size);
	} else if (other) {
		drv_str(other->since, vs, sizeof vs);
		warnf(o, "%s paramsSize %u is the layout of %s and later; %s expects %u "
		      "(a client library built for another driver version)", o->u.control.cmd_name,
		      (unsigned)ps, vs, ds, (unsigned)here->size);
	} else {
		warnf(o, "%s paramsSize %u; %s expects %u", o->u.control.cmd_name, (unsigned)ps, ds,
		      (unsigned)here->size);
	}
}

/* NV0080_CTRL_GPU_VIRTUALIZATION_MODE_* (ctrl0080gpu.h, ABI.md §7) */
const char *ct_nv_virt_mode_name(uint32_t mode)
{
	static const char *const n[] = { "NONE (bare metal)", "NMOS (passthrough)", "VGX (vGPU guest)",
					 "HOST (vGPU host)", "HOST_VSGA (vSGA host)" };
	return mode < sizeof n / sizeof n[0] ? n[mode] : NULL;
}

/* NV2080_CTRL_GPU_COMPUTE_MODE_RULES_* (ctrl2080gpu.h, ABI.md §7), with nvidia-smi's words */
const char *ct_nv_compute_rules_name(uint32_t rules)
{
	static const char *const n[] = { "NONE (Default)", "EXCLUSIVE_COMPUTE (Exclusive Thread)",
					 "COMPUTE_PROHIBITED (Prohibited)",
					 "EXCLUSIVE_COMPUTE_PROCESS (Exclusive Process)" };
	return rules < sizeof n / sizeof n[0] ? n[rules] : NULL;
}

/* a GPU UUID answered in either format (ctrl2080gpu.h NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT,
 * ctrl0000gpu.h: 0 ASCII "GPU-...", 2 binary, 16 bytes): len bytes of the answer at off */
static void gid_answer(struct dctx *c, uint32_t flags, size_t off, uint32_t len)
{
	const struct bv *p = &c->payload;
	char *u = c->o->u.control.uuid;
	const size_t usz = sizeof c->o->u.control.uuid;

	if ((flags & 3u) == 2u) {
		const uint8_t *b = p->p + off;
		if (len != 16 || p->len < off + 16)
			return;
		snprintf(u, usz, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
			 b[13], b[14], b[15]);
	} else if ((flags & 3u) == 0u) {
		size_t n = 0;
		if (p->len <= off)
			return;
		while (n < p->len - off && n < usz - 1 && n < len && p->p[off + n] >= 0x21 &&
		       p->p[off + n] < 0x7f)
			n++;
		if (n < 8 || strncmp((const char *)p->p + off, "GPU-", 4))
			return;
		memcpy(u, p->p + off, n);
		u[n] = 0;
	} else {
		return;
	}
	ct_appendf(c->out, sizeof c->out, "%s%s", c->out[0] ? " " : "", u);
}

static void dec_control_payload(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	const struct bv *p = &c->payload;
	uint32_t v;

	check_control_size(c);
	switch (o->u.control.cmd) {
	case CMD_GET_BUILD_VERSION:
		build_version(c);
		return;
	case CMD_GET_BUILD_VERSION_V2:
		build_version_v2(c);
		return;
	default:
		break;
	}
	if (!c->ev->has_exit || !c->have_payload)
		return;
	/* after a failure the outputs were not written: only failure details */
	if (o->has_status && o->status && !o->is_warning && o->u.control.cmd != CMD_GPU_ATTACH_IDS &&
	    o->u.control.cmd != CMD_GPU_GET_INIT_STATUS)
		return;
	switch (o->u.control.cmd) {
	case CMD_GPU_GET_ATTACHED_IDS: /* gpuIds[32] (ABI.md §7) */
		ct_appendf(c->out, sizeof c->out, "ids ");
		ctrl_ids(p, 0, 32, c->out, sizeof c->out);
		break;
	case CMD_GPU_GET_PROBED_IDS: /* gpuIds[32] @0, excludedGpuIds[32] @128 */
		ct_appendf(c->out, sizeof c->out, "probed ");
		ctrl_ids(p, 0, 32, c->out, sizeof c->out);
		if (p->len >= 256) {
			char ex[64] = "";
			ctrl_ids(p, 128, 32, ex, sizeof ex);
			if (strcmp(ex, "none"))
				ct_appendf(c->out, sizeof c->out, " excluded %s", ex);
		}
		break;
	case CMD_GPU_ATTACH_IDS: /* failedId @128 names the GPU that failed */
		if (o->has_status && o->status && p->len >= 132) {
			memcpy(&v, p->p + 128, 4);
			if (v != GPU_INVALID_ID)
				snprintf(c->out, sizeof c->out, "failedId 0x%x", (unsigned)v);
		}
		break;
	case CMD_GPU_GET_VIRT_MODE:   /* virtualizationMode @0; isGridBuild @4 (NvBool, 570+) */
	case CMD_GPU_COMPUTE_RULES: { /* rules @0 */
		bool virt = o->u.control.cmd == CMD_GPU_GET_VIRT_MODE;
		const char *n;
		if (p->len < 4 || o->u.control.params_size < 4)
			break;
		memcpy(&v, p->p, 4);
		o->u.control.has_answer = true;
		o->u.control.answer = v;
		n = virt ? ct_nv_virt_mode_name(v) : ct_nv_compute_rules_name(v);
		snprintf(c->out, sizeof c->out, "%s %s", virt ? "mode" : "compute mode", n ? n : "?");
		if (!n)
			ct_appendf(c->out, sizeof c->out, " (%u)", (unsigned)v);
		if (virt && p->len >= 8 && o->u.control.params_size >= 8 && p->p[4])
			ct_appendf(c->out, sizeof c->out, ", GRID build");
		break;
	}
	case CMD_GPU_GET_GID_INFO: /* index @0, flags @4, length @8, data[256] @12 (ABI.md §7) */
		if (p->len >= 12 && o->u.control.params_size >= 12) {
			uint32_t fl, ln;
			memcpy(&fl, p->p + 4, 4);
			memcpy(&ln, p->p + 8, 4);
			gid_answer(c, fl, 12, ln);
		}
		break;
	case CMD_GPU_UUID_FROM_ID: /* gpuId @0, flags @4, gpuUuid[256] @8, uuidStrLen @264 */
		if (p->len >= 8 && o->u.control.params_size >= 8) {
			uint32_t id, fl, ln = 256;
			memcpy(&id, p->p, 4);
			memcpy(&fl, p->p + 4, 4);
			if (p->len >= 268)
				memcpy(&ln, p->p + 264, 4);
			snprintf(c->out, sizeof c->out, "gpu 0x%x", (unsigned)id);
			if (!ln || (fl & 3u) == 2u)
				ln = (fl & 3u) == 2u ? 16 : 256;
			gid_answer(c, fl, 8, ln);
		}
		break;
	case CMD_GPU_GET_INIT_STATUS: /* gpuId @0, that GPU's init status @4 */
		if (p->len >= 8) {
			uint32_t id, st;
			char sb[32];
			memcpy(&id, p->p, 4);
			memcpy(&st, p->p + 4, 4);
			snprintf(c->out, sizeof c->out, "gpu 0x%x init %s", (unsigned)id,
				 status_str(st, c->drv, sb, sizeof sb));
		}
		break;
	default:
		break;
	}
}

static void dec_rm_control(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	const struct blk *in = &c->before;
	const char *n;

	o->args = CT_NV_A_RM_CONTROL;
	if (!in->have && c->after.have) /* the copy-back carries the same inputs */
		in = &c->after;
	o->u.control.hClient = blk_u32_or(in, 0, 0);
	o->u.control.hObject = blk_u32_or(in, 4, 0);
	o->u.control.cmd = blk_u32_or(in, 8, 0);
	o->u.control.flags = blk_u32_or(in, 12, 0);
	o->u.control.params = blk_u64_or(in, 16, 0);
	o->u.control.params_size = blk_u32_or(in, 24, 0);
	if ((n = missing_input(c, in, 8))) {
		o->u.control.cmd_unreadable = true;
		ct_str_copy(o->u.control.cmd_name, sizeof o->u.control.cmd_name, n);
		sum_str(o, "RM_CONTROL ", n);
		return;
	}
	/* ABI.md §11.8: unnamed controls are described by class/category/index */
	n = ct_rm_control_name(o->u.control.cmd);
	o->u.control.cmd_named = n != NULL;
	if (n) {
		/* what ct_rm_control_describe writes for a named control */
		ct_str_copy(o->u.control.cmd_name, sizeof o->u.control.cmd_name, n);
	} else {
		uint32_t cls = o->u.control.cmd >> 16, catb = (o->u.control.cmd >> 8) & 0xffu;
		ct_rm_control_describe(o->u.control.cmd, o->u.control.cmd_name, sizeof o->u.control.cmd_name);
		/* legacy GSS (bit 15) and NV2081 BINAPI controls have no public name (ABI.md §7) */
		o->u.control.cmd_structural = (catb & 0x80u) || cls == 0x2081u;
		if (!o->u.control.cmd_structural)
			o->unknown |= CT_NV_UNK_CONTROL;
	}
	sum_str(o, "RM_CONTROL ", o->u.control.cmd_name);
	dec_control_payload(c);
}

static bool event_class(uint32_t cls)
{
	/* NV01_EVENT, _KERNEL_CALLBACK, _OS_EVENT, _KERNEL_CALLBACK_EX: any node (ABI.md §2b) */
	return cls == 0x05 || cls == 0x78 || cls == 0x79 || cls == 0x7E;
}

static void dec_rm_alloc(struct dctx *c, const struct ct_nv_escape *e)
{
	struct ct_nv_ioctl *o = c->o;
	const struct blk *in = &c->before, *out = &c->after;
	const char *missing;
	uint32_t cls;

	o->args = CT_NV_A_RM_ALLOC;
	o->u.alloc.nvos64 = e && e->size != 32;
	o->u.alloc.hRoot = blk_u32_or(in, 0, 0);
	o->u.alloc.hParent = blk_u32_or(in, 4, 0);
	o->u.alloc.hObject_in = blk_u32_or(in, 8, 0);
	o->u.alloc.hClass_in = blk_u32_or(in, 12, 0);
	o->u.alloc.pAllocParms = blk_u64_or(in, 16, 0);
	if (o->u.alloc.nvos64) {
		o->u.alloc.pRightsRequested = blk_u64_or(in, 24, 0);
		/* 535+: paramsSize @32, flags @36; 525-530: flags @32 (ABI.md §3, §10) */
		if (e && e->status_off == 40) {
			o->u.alloc.params_size = blk_u32_or(in, 32, 0);
			o->u.alloc.flags = blk_u32_or(in, 36, 0);
		} else if (e && e->status_off == 36) {
			o->u.alloc.flags = blk_u32_or(in, 32, 0);
		}
	} else if (e && e->status_off == 28) {
		o->u.alloc.params_size = blk_u32_or(in, 24, 0); /* NVOS21 535+ */
	}
	if (c->ev->has_exit && c->ev->ret >= 0) {
		o->u.alloc.hObject_out = blk_u32_or(out, 8, 0);
		o->u.alloc.hClass_out = blk_u32_or(out, 12, o->u.alloc.hClass_in);
	} else if (c->ev->has_exit) {
		o->u.alloc.hClass_out = blk_u32_or(out, 12, o->u.alloc.hClass_in);
	} else {
		o->u.alloc.hClass_out = o->u.alloc.hClass_in;
	}
	if ((missing = missing_input(c, in, 12))) {
		o->u.alloc.class_unreadable = true;
		ct_str_copy(o->u.alloc.class_name, sizeof o->u.alloc.class_name, missing);
		sum_str(o, "RM_ALLOC ", missing);
		return;
	}
	/* ABI.md §11.15: the kernel turns 0x0/0x1 into 0x41 before RM sees it; name the
	 * class RM allocated */
	cls = o->u.alloc.hClass_in;
	if (cls == 0x0 || cls == 0x1)
		cls = 0x41;
	name_class(cls, o->u.alloc.class_name, sizeof o->u.alloc.class_name, &o->u.alloc.class_named);
	if (!o->u.alloc.class_named)
		o->unknown |= CT_NV_UNK_CLASS;
	sum_str(o, "RM_ALLOC ", o->u.alloc.class_name);
	/* the instance a device / subdevice object stands for: its parameters'
	 * first word (NV0080_ALLOC_PARAMETERS.deviceId, NV2080_ALLOC_PARAMETERS
	 * .subDeviceId, ABI.md §7); recorded after the call, direct or via XFER */
	if ((cls == 0x80 || cls == 0x2080) && c->have_payload && c->payload.len >= 4) {
		o->u.alloc.has_instance = true;
		memcpy(&o->u.alloc.instance, c->payload.p, 4);
	}
	if (c->ev->has_exit && c->ev->ret >= 0) {
		if (cls == 0x41)
			snprintf(c->out, sizeof c->out, "hClient %s", client_str(o->u.alloc.hObject_out));
		else
			snprintf(c->out, sizeof c->out, "hObject 0x%x", (unsigned)o->u.alloc.hObject_out);
		if (o->u.alloc.has_instance)
			ct_appendf(c->out, sizeof c->out, " %s %u", cls == 0x80 ? "deviceId" : "subDeviceId",
				   (unsigned)o->u.alloc.instance);
	}
}

static void dec_rm_args(struct dctx *c, const struct ct_nv_escape *e)
{
	struct ct_nv_ioctl *o = c->o;
	const struct blk *in = &c->before, *out = &c->after;
	const char *missing;
	bool named;

	switch (o->nr) {
	case NR_RM_CONTROL:
		dec_rm_control(c);
		return;
	case NR_RM_ALLOC:
		dec_rm_alloc(c, e);
		return;
	case NR_RM_FREE:
		o->args = CT_NV_A_RM_FREE;
		o->u.free.hRoot = blk_u32_or(in, 0, 0);
		o->u.free.hParent = blk_u32_or(in, 4, 0);
		o->u.free.hObjectOld = blk_u32_or(in, 8, 0);
		if ((missing = missing_input(c, in, 8)))
			sum_str(o, "RM_FREE ", missing);
		else if (o->u.free.hObjectOld == o->u.free.hRoot) /* freeing the client itself */
			SUM(o, "RM_FREE client %s", client_str(o->u.free.hRoot));
		else
			SUM(o, "RM_FREE 0x%x", (unsigned)o->u.free.hObjectOld);
		return;
	case NR_RM_ALLOC_MEMORY: /* NVOS02 + fd @48 (ABI.md §3) */
		o->args = CT_NV_A_RM_ALLOC_MEMORY;
		o->u.alloc_memory.hRoot = blk_u32_or(in, 0, 0);
		o->u.alloc_memory.hParent = blk_u32_or(in, 4, 0);
		o->u.alloc_memory.hObject_in = blk_u32_or(in, 8, 0);
		o->u.alloc_memory.hClass = blk_u32_or(in, 12, 0);
		o->u.alloc_memory.flags = blk_u32_or(in, 16, 0);
		o->u.alloc_memory.pMemory = blk_u64_or(in, 24, 0);
		o->u.alloc_memory.limit = blk_u64_or(in, 32, 0);
		o->u.alloc_memory.fd = (int32_t)blk_u32_or(in, 48, (uint32_t)-1);
		if ((missing = missing_input(c, in, 12))) {
			o->u.alloc_memory.class_unreadable = true;
			ct_str_copy(o->u.alloc_memory.class_name, sizeof o->u.alloc_memory.class_name, missing);
			sum_str(o, "RM_ALLOC_MEMORY ", missing);
			return;
		}
		name_class(o->u.alloc_memory.hClass, o->u.alloc_memory.class_name,
			   sizeof o->u.alloc_memory.class_name, &named);
		o->u.alloc_memory.class_named = named;
		if (!named)
			o->unknown |= CT_NV_UNK_CLASS;
		SUM(o, "RM_ALLOC_MEMORY %s fd %d", o->u.alloc_memory.class_name, (int)o->u.alloc_memory.fd);
		if (c->ev->has_exit && c->ev->ret >= 0) {
			o->u.alloc_memory.hObject_out = blk_u32_or(out, 8, 0);
			o->u.alloc_memory.pMemory = blk_u64_or(out, 24, o->u.alloc_memory.pMemory);
			snprintf(c->out, sizeof c->out, "hMemory 0x%x", (unsigned)o->u.alloc_memory.hObject_out);
		}
		return;
	case NR_RM_MAP_MEMORY: /* NVOS33 + fd @48 (ABI.md §3) */
		o->args = CT_NV_A_RM_MAP_MEMORY;
		o->u.map_memory.hClient = blk_u32_or(in, 0, 0);
		o->u.map_memory.hDevice = blk_u32_or(in, 4, 0);
		o->u.map_memory.hMemory = blk_u32_or(in, 8, 0);
		o->u.map_memory.offset = blk_u64_or(in, 16, 0);
		o->u.map_memory.length = blk_u64_or(in, 24, 0);
		o->u.map_memory.flags = blk_u32_or(in, 44, 0);
		o->u.map_memory.fd = (int32_t)blk_u32_or(in, 48, (uint32_t)-1);
		SUM(o, "RM_MAP_MEMORY hMemory 0x%x length 0x%" PRIx64 " fd %d", (unsigned)o->u.map_memory.hMemory,
		    o->u.map_memory.length, (int)o->u.map_memory.fd);
		if (c->ev->has_exit && c->ev->ret >= 0) {
			o->u.map_memory.pLinearAddress = blk_u64_or(out, 32, 0);
			snprintf(c->out, sizeof c->out, ct_stable() ? "<addr>" : "0x%" PRIx64,
				 o->u.map_memory.pLinearAddress);
		}
		return;
	case NR_RM_UNMAP_MEMORY: /* NVOS34: hClient, hDevice, hMemory, pLinearAddress @16, flags @28 */
		o->args = CT_NV_A_RM_UNMAP_MEMORY;
		o->u.unmap_memory.hClient = blk_u32_or(in, 0, 0);
		o->u.unmap_memory.hDevice = blk_u32_or(in, 4, 0);
		o->u.unmap_memory.hMemory = blk_u32_or(in, 8, 0);
		o->u.unmap_memory.pLinearAddress = blk_u64_or(in, 16, 0);
		o->u.unmap_memory.flags = blk_u32_or(in, 28, 0);
		SUM(o, "RM_UNMAP_MEMORY hMemory 0x%x", (unsigned)o->u.unmap_memory.hMemory);
		return;
	case NR_RM_UPDATE_MAPPING: /* NVOS56: ..., pOldCpuAddress @16, pNewCpuAddress @24 */
		o->args = CT_NV_A_RM_UPDATE_MAPPING;
		o->u.update_mapping.hClient = blk_u32_or(in, 0, 0);
		o->u.update_mapping.hDevice = blk_u32_or(in, 4, 0);
		o->u.update_mapping.hMemory = blk_u32_or(in, 8, 0);
		o->u.update_mapping.pOldCpuAddress = blk_u64_or(in, 16, 0);
		o->u.update_mapping.pNewCpuAddress = blk_u64_or(in, 24, 0);
		SUM(o, "RM_UPDATE_DEVICE_MAPPING_INFO hMemory 0x%x", (unsigned)o->u.update_mapping.hMemory);
		return;
	default:
		sum_str(o, o->short_name, NULL);
		return;
	}
}

/* ---- frontend / RM common path ------------------------------------------------------ */

static const char *node_rule_text(enum ct_nv_node_rule r)
{
	return r == CT_NODE_RULE_CTL ? "/dev/nvidiactl" : "a /dev/nvidiaN node";
}

/* ABI.md §9 of the checklist: the kernel accepts each escape on one kind of node only */
static void check_node(struct dctx *c, const struct ct_nv_escape *e)
{
	struct ct_nv_ioctl *o = c->o;
	unsigned kind = o->node_kind;
	enum ct_nv_node_rule rule = e->node;

	struct ct_sb b;

	if (kind != CT_NODE_CTL && kind != CT_NODE_GPU) {
		warnf(o, "%s sent to %s, which is not an NVIDIA control or GPU node", o->short_name,
		      o->node_name);
		return;
	}
	if (o->nr == NR_RM_ALLOC && event_class(blk_u32_or(&c->before, 12, 0)))
		rule = CT_NODE_RULE_ANY;
	if (((rule == CT_NODE_RULE_CTL && kind != CT_NODE_CTL) ||
	     (rule == CT_NODE_RULE_GPU && kind != CT_NODE_GPU)) && warn_begin(o, &b)) {
		/* "wrong node: %s must go to %s, sent to %s (the kernel answers -EINVAL)" */
		ct_sb_str(&b, "wrong node: ");
		ct_sb_str(&b, o->short_name);
		ct_sb_str(&b, " must go to ");
		ct_sb_str(&b, node_rule_text(rule));
		ct_sb_str(&b, ", sent to ");
		ct_sb_str(&b, o->node_name);
		ct_sb_str(&b, " (the kernel answers -EINVAL)");
	}
}

static bool esc_size_ok(const struct ct_nv_escape *e, uint32_t size)
{
	if (e->flags & CT_ESC_F_ARRAY)
		return size > 0 && e->elem_size && size % e->elem_size == 0;
	return e->size == 0 || e->size == size;
}

/*
 * Block size against the layout of this driver version (ABI.md §1 "size
 * validation", ABI.md §10).  Returns true when the status field can be trusted: the
 * kernel rejects a wrong-sized block before RM writes anything.
 */
static bool check_size(struct dctx *c, const struct ct_nv_escape *e)
{
	struct ct_nv_ioctl *o = c->o;
	const struct ct_nv_escape *here;
	char ds[40];
	bool in = drv_in(e->since, e->until, c->drv);

	drv_str(c->drv, ds, sizeof ds);
	if (e->flags & CT_ESC_F_UNHANDLED) {
		warnf(o, "%s is defined but the kernel never handles it (-EINVAL)", o->short_name);
		return false;
	}
	if (c->drv && !in) {
		here = ct_nv_escape(o->nr, 0, c->drv);
		if (!here || !drv_in(here->since, here->until, c->drv)) {
			warnf(o, "%s does not exist in %s", o->short_name, ds);
			return false;
		}
		o->expected_size = here->size;
		if (o->nr == NR_RM_ALLOC)
			warnf(o, "short or oversized parameter block: %u bytes, %s expects 32 (NVOS21) or "
			      "%u (NVOS64)", (unsigned)o->size, ds, c->drv < CT_DRV(535, 43, 2) ? 40u : 48u);
		else
			warnf(o, "short or oversized parameter block: %u bytes, %s expects %u",
			      (unsigned)o->size, ds, (unsigned)here->size);
		return false;
	}
	o->expected_size = (e->flags & CT_ESC_F_ARRAY) ? 0 : e->size;
	if (!esc_size_ok(e, o->size)) {
		if (e->flags & CT_ESC_F_ARRAY)
			warnf(o, "short or oversized parameter block: %u bytes is not a non-zero multiple "
			      "of %u", (unsigned)o->size, (unsigned)e->elem_size);
		else
			warnf(o, "short or oversized parameter block: %u bytes, %s expects %u",
			      (unsigned)o->size, ds, (unsigned)e->size);
		return false;
	}
	return true;
}

static void dec_escape(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	const struct ct_nv_escape *e = ct_nv_escape(o->nr, o->size, c->drv);
	bool size_ok = false;

	o->family = o->nr >= 200 ? CT_NV_FAM_FRONTEND : CT_NV_FAM_RM;
	if (!e) {
		ioc_struct(o->via_xfer ? ((uint64_t)o->dir << 30 | (uint64_t)o->size << 16 |
					  (uint64_t)o->ioc_type << 8 | o->nr) : o->request,
			   o->name, sizeof o->name);
		set_short(o);
		o->unknown |= CT_NV_UNK_ESCAPE;
		sum_str(o, o->name, NULL);
		return;
	}
	ct_str_copy(o->name, sizeof o->name, e->name);
	set_short(o);
	o->named = true;
	o->params_type = e->params;
	size_ok = check_size(c, e);
	check_node(c, e);
	/* a failed ioctl (-EINVAL wrong node/size, -EFAULT, an injected errno)
	 * never reached RM: the status field is the caller's input (ABI.md §11.9) */
	if (size_ok && e->status_off >= 0 && c->ev->has_exit && c->ev->ret >= 0) {
		/* NUMA_INFO's field is a NUMA state (dec_numa), never an NV_STATUS */
		if (!(e->flags & CT_ESC_F_NUMA_STATUS))
			set_status(c, &c->after, e->status_off);
	}
	if (o->family == CT_NV_FAM_FRONTEND)
		dec_frontend_args(c);
	else
		dec_rm_args(c, e);
}

/* XFER (ABI.md §1): the 16-byte header names an inner escape, decoded like a direct call */
static bool unwrap_xfer(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	const struct ct_event *ev = c->ev;
	struct ct_fieldv f, pin, pout;

	if (!ct_rec_field(&ev->enter, CT_FLD_XFER, &f) || f.len < 16)
		return false;
	memcpy(&o->xfer_cmd, f.data, 4);
	memcpy(&o->xfer_size, f.data + 4, 4);
	memcpy(&o->xfer_ptr, f.data + 8, 8);
	if (o->ioc_size != 16)
		warnf(o, "XFER outer block is %u bytes, the kernel requires 16", (unsigned)o->ioc_size);
	o->via_xfer = true;
	o->nr = o->xfer_cmd & 0xffu;
	o->size = o->xfer_size;
	o->ioc_size = o->xfer_size;
	blk_from_bv(&c->before, ct_rec_field(&ev->enter, CT_FLD_PAYLOAD, &pin));
	memset(&c->after, 0, sizeof c->after);
	c->have_payload = false;
	c->payload_size = 0;
	if (ev->has_exit) {
		/* the inner block after the call is the first PAYLOAD; an inner
		 * RM_CONTROL / RM_ALLOC has its params in a second PAYLOAD_SIZE +
		 * PAYLOAD pair (shim/capture.c; traces of older shims lack it) */
		unsigned npay = 0, nsize = 0;
		uint32_t pos = 0;
		while (ct_rec_next_field(&ev->exit, &pos, &pout)) {
			if (pout.tag == CT_FLD_PAYLOAD && npay++ == 0) {
				blk_from_bv(&c->after, &pout);
			} else if (pout.tag == CT_FLD_PAYLOAD && npay == 2) {
				c->have_payload = true;
				c->payload.p = pout.data;
				c->payload.len = pout.len;
			} else if (pout.tag == CT_FLD_PAYLOAD_SIZE && nsize++ == 1 && pout.len >= 4) {
				memcpy(&c->payload_size, pout.data, 4);
			}
		}
	}
	if (o->xfer_size > 16384) /* NV_ABSOLUTE_MAX_IOCTL_SIZE */
		warnf(o, "XFER inner size %u is over 16384: the kernel answers -EINVAL",
		      (unsigned)o->xfer_size);
	return true;
}

static void dec_nv(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	const struct ct_uvm_cmd *u;

	o->nr = (uint32_t)(o->request & 0xffu);
	o->dir = (unsigned)(o->request >> 30) & 3u;
	o->ioc_type = (uint8_t)(o->request >> 8);
	o->ioc_size = (uint32_t)(o->request >> 16) & 0x3fffu;
	/* the kernel sizes the copy from _IOC_SIZE (ABI.md §1); BLOCK_SIZE is the same */
	if (!o->size)
		o->size = o->ioc_size;
	if (o->nr == NR_XFER)
		unwrap_xfer(c);
	/* ABI.md §11.3: never require type 'F' or a direction; but a plain UVM number
	 * on this node is a UVM request sent to the wrong device */
	if (o->ioc_type != 'F' && !(o->request >> 32) && (u = ct_uvm_cmd((uint32_t)o->request, c->drv)))
		warnf(o, "request 0x%" PRIx64 " is the UVM command %s: sent to %s instead of /dev/nvidia-uvm",
		      o->request, u->name, o->node_name);
	dec_escape(c);
	if (o->via_xfer)
		SUM(o, " via XFER");
}

/* ---- UVM ------------------------------------------------------------------------- */

static void uvm_uuid(struct dctx *c, const struct blk *b)
{
	struct ct_nv_ioctl *o = c->o;
	o->u.uvm.has_uuid = blk_bytes(b, 0, o->u.uvm.uuid, 16);
}

static void dec_uvm_args(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	const struct blk *in = &c->before, *out = c->ev->has_exit ? &c->after : &c->before;
	int32_t v;

	o->args = CT_NV_A_UVM;
	o->u.uvm.numa_node = -1;
	switch (o->nr) {
	case UVM_INITIALIZE:
		o->u.uvm.flags = blk_u64_or(in, 0, 0);
		SUM(o, " flags 0x%" PRIx64, o->u.uvm.flags);
		break;
	case UVM_MM_INITIALIZE:
		o->u.uvm.uvm_fd = blk_i32(in, 0, &v) ? v : -1;
		SUM(o, " uvmFd %d", (int)o->u.uvm.uvm_fd);
		break;
	case UVM_PAGEABLE_MEM_ACCESS:
		if (c->ev->has_exit && c->ev->ret >= 0) {
			uint8_t b = 0;
			blk_bytes(out, 0, &b, 1);
			o->u.uvm.pageable = b != 0;
			snprintf(c->out, sizeof c->out, "pageableMemAccess %u", b);
		}
		break;
	case UVM_CREATE_RANGE_GROUP:
		if (c->ev->has_exit && c->ev->ret >= 0) {
			o->u.uvm.range_group_id = blk_u64_or(out, 0, 0);
			snprintf(c->out, sizeof c->out, "rangeGroupId 0x%" PRIx64, o->u.uvm.range_group_id);
		}
		break;
	case UVM_REGISTER_GPU: /* uuid, numaEnabled @16, numaNodeId @20, rmCtrlFd @24, hClient @28 */
		uvm_uuid(c, in);
		o->u.uvm.has_ctrl_fd = blk_i32(in, 24, &o->u.uvm.rm_ctrl_fd);
		o->u.uvm.has_handles = blk_u32(in, 28, &o->u.uvm.hClient);
		o->u.uvm.hObject = blk_u32_or(in, 32, 0); /* hSmcPartRef */
		if (c->ev->has_exit && c->ev->ret >= 0) {
			uint8_t b = 0;
			blk_bytes(out, 16, &b, 1);
			o->u.uvm.numa_enabled = b != 0;
			if (b && blk_i32(out, 20, &v))
				o->u.uvm.numa_node = v;
		}
		break;
	case UVM_UNREGISTER_GPU:
		uvm_uuid(c, in);
		break;
	case UVM_REGISTER_GPU_VASPACE: /* uuid, rmCtrlFd @16, hClient @20, hVaSpace @24 */
	case UVM_REGISTER_CHANNEL:     /* ... hChannel @24, base @32, length @40 */
		uvm_uuid(c, in);
		o->u.uvm.has_ctrl_fd = blk_i32(in, 16, &o->u.uvm.rm_ctrl_fd);
		o->u.uvm.has_handles = blk_u32(in, 20, &o->u.uvm.hClient);
		o->u.uvm.hObject = blk_u32_or(in, 24, 0);
		if (o->nr == UVM_REGISTER_CHANNEL) {
			o->u.uvm.has_range = blk_u64(in, 32, &o->u.uvm.base);
			o->u.uvm.length = blk_u64_or(in, 40, 0);
		}
		break;
	case UVM_UNREGISTER_GPU_VASPACE:
		uvm_uuid(c, in);
		break;
	case UVM_VALIDATE_VA_RANGE:
	case UVM_CREATE_EXTERNAL_RANGE:
		o->u.uvm.has_range = blk_u64(in, 0, &o->u.uvm.base);
		o->u.uvm.length = blk_u64_or(in, 8, 0);
		if (ct_stable()) /* an address of the process (--no-time) */
			SUM(o, " <addr>+0x%" PRIx64, o->u.uvm.length);
		else
			SUM(o, " 0x%" PRIx64 "+0x%" PRIx64, o->u.uvm.base, o->u.uvm.length);
		break;
	case UVM_MAP_EXTERNAL_ALLOCATION:
		o->u.uvm.has_range = blk_u64(in, 0, &o->u.uvm.base);
		o->u.uvm.length = blk_u64_or(in, 8, 0);
		/* rmCtrlFd/hClient/hMemory sit just before rmStatus at the end of the
		 * block (9248/9252/9256 of 9264; 1184/1188/1192 of 1200): in the tail */
		if (o->size >= 16) {
			uint32_t end = o->size - 16;
			o->u.uvm.has_ctrl_fd = blk_i32(in, end, &o->u.uvm.rm_ctrl_fd);
			o->u.uvm.has_handles = blk_u32(in, end + 4, &o->u.uvm.hClient);
			o->u.uvm.hObject = blk_u32_or(in, end + 8, 0);
		}
		if (ct_stable()) /* an address of the process (--no-time) */
			SUM(o, " <addr>+0x%" PRIx64, o->u.uvm.length);
		else
			SUM(o, " 0x%" PRIx64 "+0x%" PRIx64, o->u.uvm.base, o->u.uvm.length);
		break;
	default:
		break;
	}
}

static void dec_uvm(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	const struct ct_uvm_cmd *u = NULL;
	char ds[40];

	o->family = CT_NV_FAM_UVM;
	drv_str(c->drv, ds, sizeof ds);
	/* ABI.md §11.2: plain numbers, not _IOC words: the size comes from the table */
	if (!(o->request >> 32))
		u = ct_uvm_cmd((uint32_t)o->request, c->drv);
	o->nr = (uint32_t)o->request;
	if (!u) {
		char ioc[40];
		snprintf(o->name, sizeof o->name, "UVM cmd 0x%" PRIx64, o->request);
		set_short(o);
		o->unknown |= CT_NV_UNK_UVM;
		sum_str(o, o->name, NULL);
		if (((o->request >> 8) & 0xffu) == 'F' && (o->request >> 30) && !(o->request >> 32)) {
			const struct ct_nv_escape *e = ct_nv_escape((unsigned)o->request & 0xffu, 0, c->drv);
			ioc_struct(o->request, ioc, sizeof ioc);
			struct ct_sb b;
			if (warn_begin(o, &b)) {
				ct_sb_str(&b, ioc);
				if (e) {
					ct_sb_str(&b, " = ");
					ct_sb_str(&b, e->name);
				}
				ct_sb_str(&b, " is an NVIDIA frontend request: sent to ");
				ct_sb_str(&b, o->node_name);
				ct_sb_str(&b, " instead of /dev/nvidiactl or /dev/nvidiaN");
			}
		}
		return;
	}
	ct_str_copy(o->name, sizeof o->name, u->name);
	set_short(o);
	o->named = true;
	sum_str(o, o->name, NULL);
	if (u->flags & CT_UVM_F_ABSENT) {
		warnf(o, "%s is not defined in %s", u->name, ds);
	} else {
		if (u->flags & CT_UVM_F_NOT_ROUTED)
			warnf(o, "%s is not routed on Linux: the kernel answers -ENOSYS", u->name);
		else if ((u->flags & CT_UVM_F_TOOLS) && o->node_kind != CT_NODE_UVM_TOOLS)
			warnf(o, "%s is routed on /dev/nvidia-uvm-tools, sent to %s", u->name, o->node_name);
		else if (!(u->flags & CT_UVM_F_TOOLS) && o->node_kind == CT_NODE_UVM_TOOLS)
			warnf(o, "%s is routed on /dev/nvidia-uvm, sent to %s", u->name, o->node_name);
		o->expected_size = u->size;
		/* a shim that did not know the node was nvidia-uvm (a renamed
		 * node: the device map says so) sized the block by _IOC_SIZE: its
		 * size says nothing about the caller's block */
		bool sized_as_uvm = (o->shim_node >> 16) == CT_NODE_UVM ||
				    (o->shim_node >> 16) == CT_NODE_UVM_TOOLS;
		if (o->size && u->size && o->size != u->size && sized_as_uvm)
			warnf(o, "short or oversized parameter block: recorded %u bytes, %s expects %u",
			      (unsigned)o->size, ds, (unsigned)u->size);
	}
	dec_uvm_args(c);
	/* rmStatus, from the head or the tail of the block (ABI.md §6, §11.1) */
	if (c->ev->has_exit && c->ev->ret >= 0 && u->status_off >= 0 && !(u->flags & CT_UVM_F_ABSENT))
		set_status(c, &c->after, u->status_off);
}

/* ---- other NVIDIA nodes ------------------------------------------------------------ */

/*
 * WSL2's /dev/dxg (dxgkrnl): _IOWR(0x47, nr, struct d3dkmt_*), names from
 * include/uapi/misc/d3dkmthk.h of microsoft/WSL2-Linux-Kernel
 * (linux-msft-wsl-6.6.y).  A failure is the ioctl's -1 and errno.
 */
static const char *dxg_ioctl_name(uint32_t nr)
{
	static const struct {
		uint8_t nr;
		const char *name;
	} t[] = {
		{ 0x01, "LX_DXOPENADAPTERFROMLUID" },
		{ 0x02, "LX_DXCREATEDEVICE" },
		{ 0x04, "LX_DXCREATECONTEXTVIRTUAL" },
		{ 0x05, "LX_DXDESTROYCONTEXT" },
		{ 0x06, "LX_DXCREATEALLOCATION" },
		{ 0x07, "LX_DXCREATEPAGINGQUEUE" },
		{ 0x09, "LX_DXQUERYADAPTERINFO" },
		{ 0x0a, "LX_DXQUERYVIDEOMEMORYINFO" },
		{ 0x0d, "LX_DXESCAPE" },
		{ 0x0e, "LX_DXGETDEVICESTATE" },
		{ 0x0f, "LX_DXSUBMITCOMMAND" },
		{ 0x10, "LX_DXCREATESYNCHRONIZATIONOBJECT" },
		{ 0x11, "LX_DXSIGNALSYNCHRONIZATIONOBJECT" },
		{ 0x12, "LX_DXWAITFORSYNCHRONIZATIONOBJECT" },
		{ 0x13, "LX_DXDESTROYALLOCATION2" },
		{ 0x14, "LX_DXENUMADAPTERS2" },
		{ 0x15, "LX_DXCLOSEADAPTER" },
		{ 0x16, "LX_DXCHANGEVIDEOMEMORYRESERVATION" },
		{ 0x18, "LX_DXCREATEHWQUEUE" },
		{ 0x19, "LX_DXDESTROYDEVICE" },
		{ 0x1b, "LX_DXDESTROYHWQUEUE" },
		{ 0x1c, "LX_DXDESTROYPAGINGQUEUE" },
		{ 0x1d, "LX_DXDESTROYSYNCHRONIZATIONOBJECT" },
		{ 0x1f, "LX_DXFLUSHHEAPTRANSITIONS" },
		{ 0x25, "LX_DXLOCK2" },
		{ 0x2a, "LX_DXQUERYALLOCATIONRESIDENCY" },
		{ 0x2e, "LX_DXSETALLOCATIONPRIORITY" },
		{ 0x31, "LX_DXSIGNALSYNCHRONIZATIONOBJECTFROMCPU" },
		{ 0x32, "LX_DXSIGNALSYNCHRONIZATIONOBJECTFROMGPU" },
		{ 0x33, "LX_DXSIGNALSYNCHRONIZATIONOBJECTFROMGPU2" },
		{ 0x34, "LX_DXSUBMITCOMMANDTOHWQUEUE" },
		{ 0x35, "LX_DXSUBMITSIGNALSYNCOBJECTSTOHWQUEUE" },
		{ 0x36, "LX_DXSUBMITWAITFORSYNCOBJECTSTOHWQUEUE" },
		{ 0x37, "LX_DXUNLOCK2" },
		{ 0x38, "LX_DXUPDATEALLOCPROPERTY" },
		{ 0x3a, "LX_DXWAITFORSYNCHRONIZATIONOBJECTFROMCPU" },
		{ 0x3b, "LX_DXWAITFORSYNCHRONIZATIONOBJECTFROMGPU" },
		{ 0x3c, "LX_DXGETALLOCATIONPRIORITY" },
		{ 0x3e, "LX_DXENUMADAPTERS3" },
		{ 0x3f, "LX_DXSHAREOBJECTS" },
		{ 0x40, "LX_DXOPENSYNCOBJECTFROMNTHANDLE2" },
		{ 0x41, "LX_DXQUERYRESOURCEINFOFROMNTHANDLE" },
		{ 0x42, "LX_DXOPENRESOURCEFROMNTHANDLE" },
		{ 0x44, "LX_DXSHAREOBJECTWITHHOST" },
	};

	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (t[i].nr == nr)
			return t[i].name;
	return NULL;
}

static void dec_other(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	bool nvidia = o->node_kind != CT_NODE_NONE;

	o->family = nvidia ? CT_NV_FAM_OTHER : CT_NV_FAM_NOT_NVIDIA;
	o->nr = (uint32_t)(o->request & 0xffu);
	o->dir = (unsigned)(o->request >> 30) & 3u;
	o->ioc_type = (uint8_t)(o->request >> 8);
	o->ioc_size = (uint32_t)(o->request >> 16) & 0x3fffu;
	if (!o->size)
		o->size = o->ioc_size;
	/* an 'F' escape on a caps/modeset/... node: name it, and say where it went */
	if (nvidia && o->ioc_type == 'F') {
		const struct ct_nv_escape *e = ct_nv_escape(o->nr, o->size, c->drv);
		if (e) {
			ct_str_copy(o->name, sizeof o->name, e->name);
			set_short(o);
			o->named = true;
			o->params_type = e->params;
			struct ct_sb b;
			if (warn_begin(o, &b)) {
				ct_sb_str(&b, o->short_name);
				ct_sb_str(&b, " sent to ");
				ct_sb_str(&b, o->node_name);
				ct_sb_str(&b, ", which does not take NVIDIA escapes");
			}
			/* the arguments still say what the caller meant; no status:
			 * no RM ever saw the block */
			if (o->nr >= 200)
				dec_frontend_args(c);
			else
				dec_rm_args(c, e);
			return;
		}
	}
	if (o->node_kind == CT_NODE_DXG && o->ioc_type == 0x47 && dxg_ioctl_name(o->nr)) {
		ct_str_copy(o->name, sizeof o->name, dxg_ioctl_name(o->nr));
		set_short(o);
		o->named = true;
		sum_str(o, o->name, NULL);
		return;
	}
	ioc_struct(o->request, o->name, sizeof o->name);
	set_short(o);
	if (nvidia && o->ioc_type == 'F')
		o->unknown |= CT_NV_UNK_ESCAPE;
	sum_str(o, o->name, NULL);
}

/* ---- outcome and summary ---------------------------------------------------------- */

static void finish(struct dctx *c)
{
	struct ct_nv_ioctl *o = c->o;
	char eb[24], sb[40];
	bool failed_status = o->has_status && o->status != 0 && !o->is_warning;

	o->ok = o->returned && o->ret >= 0 && !failed_status;
	if (o->args == CT_NV_A_WAIT_OPEN && o->u.wait_open.rc != 0)
		o->ok = false;
	if (!o->returned) {
		SUM(o, " -> (no return)");
	} else if (o->ret < 0) {
		/* a version MISMATCH is reported as -EINVAL: the summary says it already */
		if (o->args != CT_NV_A_VERSION_STR || o->handshake.result != CT_NV_HS_MISMATCH)
			SUM(o, " -> -1 %s", errno_str(o->err, eb, sizeof eb));
	} else if (failed_status || o->is_warning) {
		SUM(o, " -> %s%s", status_str(o->status, c->drv, sb, sizeof sb),
		    o->is_warning ? " (warning)" : "");
		/* after a failure only a control's failure detail (failedId...)
		 * means something; outputs like new handles were never written */
		if (c->out[0] && (o->is_warning || o->args == CT_NV_A_RM_CONTROL ||
				  o->args == CT_NV_A_WAIT_OPEN))
			SUM(o, ", %s", c->out);
	} else if (o->args == CT_NV_A_WAIT_OPEN && o->u.wait_open.rc != 0) {
		SUM(o, " -> %s", c->out);
		if (o->has_status)
			SUM(o, ", adapterStatus %s", status_str(o->status, c->drv, sb, sizeof sb));
	} else if (c->out[0]) {
		SUM(o, " -> %s", c->out);
	}
	if (o->injected)
		SUM(o, " [injected]");
}

static void node_setup(struct dctx *c, const struct ct_nv_devmap *devs)
{
	struct ct_nv_ioctl *o = c->o;
	uint32_t node = 0;
	int slot;

	ct_rec_u32(&c->ev->enter, CT_FLD_NODE, &node);
	o->shim_node = node;
	/* an fd opened on an NVIDIA device number is that device, whatever its
	 * path said (renamed or bind-mounted nodes, ABI.md §8, §11.13) */
	if (devs && o->fd >= 0 && (slot = ct_nv_devmap_slot(devs, o->fd)) >= 0 && devs->fds[slot].node) {
		uint32_t rnode = devs->fds[slot].node;
		if (node && (rnode >> 16) != (node >> 16)) {
			char a[48];
			struct ct_sb b;
			if (warn_begin(o, &b)) {
				/* "fd %d was opened as %s but its device %u:%u is %s" */
				ct_sb_str(&b, "fd ");
				ct_sb_i64(&b, o->fd);
				ct_sb_str(&b, " was opened as ");
				ct_sb_str(&b, devs->fds[slot].path[0] ? devs->fds[slot].path :
					      ct_nv_node_name(node, a, sizeof a));
				ct_sb_str(&b, " but its device ");
				ct_sb_u64(&b, (uint32_t)(devs->fds[slot].rdev >> 32));
				ct_sb_str(&b, ":");
				ct_sb_u64(&b, (uint32_t)devs->fds[slot].rdev);
				ct_sb_str(&b, " is ");
				ct_sb_str(&b, ct_nv_node_name(rnode, a, sizeof a));
			}
		}
		o->node_from_rdev = rnode != node;
		node = rnode;
	}
	o->node = node;
	o->node_kind = node >> 16;
	o->node_minor = node & 0xffffu;
	ct_nv_node_name(node, o->node_name, sizeof o->node_name);
}

/* the text buffers lie in runs that the clear below leaves out: member n
 * of struct s comes right after m (nothing but n's alignment between) */
#define NV_END(s, m) (offsetof(struct s, m) + sizeof ((struct s *)0)->m)
#define NV_ALIGN(s, n) __alignof__(((struct s *)0)->n)
#define NV_AFTER(s, m, n) \
	((NV_END(s, m) + NV_ALIGN(s, n) - 1) / NV_ALIGN(s, n) * NV_ALIGN(s, n) == offsetof(struct s, n))
_Static_assert(NV_AFTER(ct_nv_ioctl, name, short_name) && NV_AFTER(ct_nv_ioctl, short_name, named) &&
	       NV_AFTER(ct_nv_ioctl, warning, summary) && NV_AFTER(ct_nv_ioctl, summary, args) &&
	       NV_AFTER(ct_nv_handshake, client, kernel) && NV_AFTER(ct_nv_handshake, kernel, version) &&
	       NV_AFTER(ct_nv_handshake, version, branch) && NV_AFTER(ct_nv_handshake, branch, title) &&
	       NV_AFTER(ct_nv_handshake, title, changelist), "ct_nv_ioctl: text runs");
#undef NV_AFTER
#undef NV_ALIGN
#undef NV_END

/*
 * Clear *o as a memset would for every reader: the numbers zero, each
 * string empty by its first byte (every writer ends what it writes with a
 * NUL).  This runs for every ioctl, and the text buffers and the
 * handshake's strings are 2 KB; the card entries are read only below
 * ncards, each cleared when it is filled.
 */
static void nv_clear(struct ct_nv_ioctl *o)
{
	struct ct_nv_handshake *h = &o->handshake;

	memset(o, 0, offsetof(struct ct_nv_ioctl, name));
	o->name[0] = o->short_name[0] = '\0';
	memset(&o->named, 0, offsetof(struct ct_nv_ioctl, warning) - offsetof(struct ct_nv_ioctl, named));
	o->warning[0] = o->summary[0] = '\0';
	memset(&o->args, 0, offsetof(struct ct_nv_ioctl, cards) - offsetof(struct ct_nv_ioctl, args));
	memset(h, 0, offsetof(struct ct_nv_handshake, client));
	h->client[0] = h->kernel[0] = h->version[0] = h->branch[0] = h->title[0] = '\0';
	memset(&h->changelist, 0, sizeof *h - offsetof(struct ct_nv_handshake, changelist));
}

int ct_nv_decode(const struct ct_event *ev, uint32_t drv, const struct ct_nv_devmap *devs,
		 struct ct_nv_ioctl *out)
{
	struct dctx c;
	struct ct_fieldv f;
	int32_t fd = -1;

	if (!out)
		return -1;
	nv_clear(out);
	out->fd = -1;
	out->status_off = -1;
	if (!ev || ev->call != CT_CALL_ioctl) {
		snprintf(out->summary, sizeof out->summary, "not an ioctl");
		return -1;
	}
	out->returned = ev->has_exit;
	out->ret = ev->ret;
	out->err = ev->ret < 0 ? ev->err : 0;
	out->injected = (ev->flags & CT_RF_INJECTED) != 0;
	out->unreadable = (ev->flags & CT_RF_UNREADABLE) != 0;
	if (ev->has_exit && ct_rec_field(&ev->exit, CT_FLD_INJECT, &f) && f.len >= 8) {
		memcpy(&out->inject_rule, f.data, 4);
		memcpy(&out->inject_action, f.data + 4, 4);
		out->injected = true;
	}
	if (!ev->has_enter) {
		snprintf(out->name, sizeof out->name, "ioctl");
		snprintf(out->summary, sizeof out->summary, "ioctl (enter record lost) -> %" PRId64, ev->ret);
		return -1;
	}

	/* (out is a string: its first byte clears it) */
	memset(&c, 0, offsetof(struct dctx, out));
	c.out[0] = 0;
	c.ev = ev;
	c.drv = drv;
	c.o = out;
	ct_rec_i32(&ev->enter, CT_FLD_FD, &fd);
	out->fd = fd;
	ct_rec_u64(&ev->enter, CT_FLD_REQUEST, &out->request);
	ct_rec_u64(&ev->enter, CT_FLD_ARGP, &out->argp);
	ct_rec_u32(&ev->enter, CT_FLD_BLOCK_SIZE, &out->size);
	node_setup(&c, devs);
	blk_from_record(&c.before, &ev->enter);
	if (ev->has_exit) {
		blk_from_record(&c.after, &ev->exit);
		if (ct_rec_field(&ev->exit, CT_FLD_PAYLOAD, &f)) {
			c.have_payload = true;
			c.payload.p = f.data;
			c.payload.len = f.len;
		}
		ct_rec_u32(&ev->exit, CT_FLD_PAYLOAD_SIZE, &c.payload_size);
	}
	if (out->unreadable)
		warnf(out, "part of the parameter memory was unreadable");

	switch (out->node_kind) {
	case CT_NODE_CTL:
	case CT_NODE_GPU:
		dec_nv(&c);
		break;
	case CT_NODE_UVM:
	case CT_NODE_UVM_TOOLS:
		dec_uvm(&c);
		break;
	default:
		dec_other(&c);
		break;
	}
	finish(&c);
	return 0;
}

enum ct_nv_hs_result ct_nv_handshake_compare(struct ct_nv_handshake *h, const char *client)
{
	if (!h || !client)
		return h ? h->result : CT_NV_HS_UNKNOWN;
	snprintf(h->client, sizeof h->client, "%s", client);
	h->client_drv = ct_drv_version_parse(client);
	if (h->result != CT_NV_HS_REPORTED && h->result != CT_NV_HS_MATCH &&
	    h->result != CT_NV_HS_MISMATCH)
		return h->result;
	if (!h->kernel[0] || !client[0])
		return h->result;
	/* compare the versions, not the text around them.  libcuda's own
	 * check (GET_BUILD_VERSION) is not equality: libcuda 580.159.04 on the
	 * H200 accepted a module reporting 580.95.05 or 580.159.05 and refused
	 * 580.173.02 and 590.48.01 (803) and 575.51.02 (101)
	 * (tests/fixtures/h200-580/README.md): its own branch with the same or
	 * an older minor passes, whatever the patch level */
	if (h->client_drv && h->kernel_drv && h->source != CT_NV_HS_CHECK_VERSION_STR)
		h->result = h->kernel_drv / 1000000 == h->client_drv / 1000000 &&
				    h->kernel_drv / 1000 % 1000 <= h->client_drv / 1000 % 1000
			    ? CT_NV_HS_MATCH
			    : CT_NV_HS_MISMATCH;
	else if (h->client_drv && h->kernel_drv)
		h->result = h->client_drv == h->kernel_drv ? CT_NV_HS_MATCH : CT_NV_HS_MISMATCH;
	else
		h->result = strcmp(h->kernel, client) ? CT_NV_HS_MISMATCH : CT_NV_HS_MATCH;
	return h->result;
}

/* ---- JSON ------------------------------------------------------------------------- */

static void json_hex(struct ct_json *j, const char *k, uint64_t v)
{
	char b[24];
	snprintf(b, sizeof b, "0x%" PRIx64, v);
	ct_json_kstr(j, k, b);
}

static void json_uuid(struct ct_json *j, const uint8_t *u)
{
	char b[48];
	snprintf(b, sizeof b, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
	ct_json_kstr(j, "gpu_uuid", b);
}

static void json_handshake(struct ct_json *j, const struct ct_nv_handshake *h)
{
	ct_json_key(j, "handshake");
	ct_json_obj_begin(j);
	ct_json_kstr(j, "source", ct_nv_hs_source_name(h->source));
	ct_json_kstr(j, "result", ct_nv_hs_result_name(h->result));
	if (h->source == CT_NV_HS_CHECK_VERSION_STR) {
		ct_json_kuint(j, "cmd", h->cmd);
		ct_json_kuint(j, "reply", h->reply);
	}
	ct_json_kstr(j, "client", h->client);
	ct_json_kstr(j, "kernel", h->kernel);
	if (h->version[0])
		ct_json_kstr(j, "version", h->version);
	if (h->branch[0])
		ct_json_kstr(j, "branch", h->branch);
	if (h->title[0])
		ct_json_kstr(j, "title", h->title);
	if (h->changelist)
		ct_json_kuint(j, "changelist", h->changelist);
	ct_json_obj_end(j);
}

static void json_args(struct ct_json *j, const struct ct_nv_ioctl *d)
{
	char b[32];

	switch (d->args) {
	case CT_NV_A_SYS_PARAMS:
		json_hex(j, "memblock_size", d->u.sys_params.memblock_size);
		break;
	case CT_NV_A_REGISTER_FD:
		ct_json_kint(j, "ctl_fd", d->u.register_fd.ctl_fd);
		break;
	case CT_NV_A_ATTACH_GPUS:
		ct_json_key(j, "gpu_ids");
		ct_json_arr_begin(j);
		for (unsigned i = 0; i < d->u.attach.n && i < 16; i++)
			ct_json_uint(j, d->u.attach.ids[i]);
		ct_json_arr_end(j);
		break;
	case CT_NV_A_OS_EVENT:
		json_hex(j, "hClient", d->u.os_event.hClient);
		json_hex(j, "hDevice", d->u.os_event.hDevice);
		ct_json_kint(j, "event_fd", (int32_t)d->u.os_event.fd);
		break;
	case CT_NV_A_WAIT_OPEN:
		ct_json_kint(j, "rc", d->u.wait_open.rc);
		break;
	case CT_NV_A_NUMA_INFO:
		ct_json_kint(j, "nid", d->u.numa.nid);
		ct_json_kint(j, "numa_state", d->u.numa.state);
		ct_json_kstr(j, "numa_state_name", d->u.numa.state_name);
		break;
	case CT_NV_A_RM_CONTROL:
		if (d->u.control.cmd_unreadable) {
			ct_json_kbool(j, "cmd_unreadable", true);
			ct_json_kstr(j, "cmd_name", d->u.control.cmd_name);
			break;
		}
		json_hex(j, "hClient", d->u.control.hClient);
		json_hex(j, "hObject", d->u.control.hObject);
		json_hex(j, "cmd", d->u.control.cmd);
		ct_json_kstr(j, "cmd_name", d->u.control.cmd_name);
		ct_json_kbool(j, "cmd_named", d->u.control.cmd_named);
		ct_json_kuint(j, "params_size", d->u.control.params_size);
		if (d->u.control.uuid[0])
			ct_json_kstr(j, "gpu_uuid", d->u.control.uuid);
		break;
	case CT_NV_A_RM_ALLOC:
		if (d->u.alloc.class_unreadable) {
			ct_json_kbool(j, "class_unreadable", true);
			ct_json_kstr(j, "class_name", d->u.alloc.class_name);
			break;
		}
		json_hex(j, "hRoot", d->u.alloc.hRoot);
		json_hex(j, "hParent", d->u.alloc.hParent);
		json_hex(j, "hObjectNew_in", d->u.alloc.hObject_in);
		json_hex(j, "hObjectNew_out", d->u.alloc.hObject_out);
		json_hex(j, "hClass", d->u.alloc.hClass_in);
		json_hex(j, "hClass_out", d->u.alloc.hClass_out);
		ct_json_kstr(j, "class_name", d->u.alloc.class_name);
		ct_json_kstr(j, "form", d->u.alloc.nvos64 ? "NVOS64" : "NVOS21");
		ct_json_kuint(j, "params_size", d->u.alloc.params_size);
		if (d->u.alloc.has_instance)
			ct_json_kuint(j, d->u.alloc.hClass_in == 0x80 ? "deviceId" : "subDeviceId",
				      d->u.alloc.instance);
		break;
	case CT_NV_A_RM_FREE:
		json_hex(j, "hRoot", d->u.free.hRoot);
		json_hex(j, "hParent", d->u.free.hParent);
		json_hex(j, "hObjectOld", d->u.free.hObjectOld);
		break;
	case CT_NV_A_RM_ALLOC_MEMORY:
		json_hex(j, "hRoot", d->u.alloc_memory.hRoot);
		json_hex(j, "hParent", d->u.alloc_memory.hParent);
		json_hex(j, "hObjectNew_out", d->u.alloc_memory.hObject_out);
		json_hex(j, "hClass", d->u.alloc_memory.hClass);
		ct_json_kstr(j, "class_name", d->u.alloc_memory.class_name);
		json_hex(j, "limit", d->u.alloc_memory.limit);
		ct_json_kint(j, "mmap_fd", d->u.alloc_memory.fd);
		break;
	case CT_NV_A_RM_MAP_MEMORY:
		json_hex(j, "hClient", d->u.map_memory.hClient);
		json_hex(j, "hDevice", d->u.map_memory.hDevice);
		json_hex(j, "hMemory", d->u.map_memory.hMemory);
		json_hex(j, "offset", d->u.map_memory.offset);
		json_hex(j, "length", d->u.map_memory.length);
		json_hex(j, "pLinearAddress", d->u.map_memory.pLinearAddress);
		ct_json_kint(j, "mmap_fd", d->u.map_memory.fd);
		break;
	case CT_NV_A_RM_UNMAP_MEMORY:
		json_hex(j, "hMemory", d->u.unmap_memory.hMemory);
		break;
	case CT_NV_A_RM_UPDATE_MAPPING:
		json_hex(j, "hMemory", d->u.update_mapping.hMemory);
		break;
	case CT_NV_A_UVM:
		if (d->u.uvm.has_uuid)
			json_uuid(j, d->u.uvm.uuid);
		if (d->u.uvm.has_ctrl_fd)
			ct_json_kint(j, "rmCtrlFd", d->u.uvm.rm_ctrl_fd);
		if (d->u.uvm.has_handles) {
			json_hex(j, "hClient", d->u.uvm.hClient);
			json_hex(j, "hObject", d->u.uvm.hObject);
		}
		if (d->u.uvm.has_range) {
			json_hex(j, "base", d->u.uvm.base);
			json_hex(j, "length", d->u.uvm.length);
		}
		if (d->nr == UVM_INITIALIZE)
			json_hex(j, "flags", d->u.uvm.flags);
		if (d->nr == UVM_MM_INITIALIZE)
			ct_json_kint(j, "uvmFd", d->u.uvm.uvm_fd);
		break;
	case CT_NV_A_CARD_INFO:
		ct_json_kuint(j, "card_slots", d->card_slots);
		ct_json_key(j, "cards");
		ct_json_arr_begin(j);
		for (unsigned i = 0; i < d->ncards; i++) {
			const struct ct_nv_card *k = &d->cards[i];
			ct_json_obj_begin(j);
			snprintf(b, sizeof b, "%04x:%02x:%02x.%x", (unsigned)k->domain, k->bus, k->slot,
				 k->function);
			ct_json_kstr(j, "pci", b);
			snprintf(b, sizeof b, "%04x:%04x", k->vendor, k->device);
			ct_json_kstr(j, "id", b);
			json_hex(j, "gpu_id", k->gpu_id);
			ct_json_kuint(j, "minor", k->minor);
			ct_json_obj_end(j);
		}
		ct_json_arr_end(j);
		break;
	default:
		break;
	}
}

void ct_nv_json(struct ct_json *j, const struct ct_nv_ioctl *d)
{
	ct_json_obj_begin(j);
	ct_json_kstr(j, "family", ct_nv_family_name(d->family));
	ct_json_kstr(j, "node", d->node_name);
	ct_json_kstr(j, "name", d->name);
	ct_json_kbool(j, "named", d->named);
	json_hex(j, "request", d->request);
	ct_json_kuint(j, "nr", d->nr);
	ct_json_kuint(j, "size", d->size);
	if (d->expected_size)
		ct_json_kuint(j, "expected_size", d->expected_size);
	if (d->via_xfer)
		ct_json_kbool(j, "via_xfer", true);
	ct_json_kbool(j, "returned", d->returned);
	ct_json_kint(j, "ret", d->ret);
	if (d->ret < 0)
		ct_json_kstr(j, "errno", ct_errno_name(d->err));
	if (d->has_status) {
		json_hex(j, "status", d->status);
		ct_json_kstr(j, "status_name", d->status_name);
		ct_json_kbool(j, "is_warning", d->is_warning);
	}
	ct_json_kbool(j, "ok", d->ok);
	if (d->injected)
		ct_json_kbool(j, "injected", true);
	json_args(j, d);
	if (d->handshake.source != CT_NV_HS_NONE)
		json_handshake(j, &d->handshake);
	if (d->warning[0])
		ct_json_kstr(j, "warning", d->warning);
	ct_json_kstr(j, "summary", d->summary);
	ct_json_obj_end(j);
}
