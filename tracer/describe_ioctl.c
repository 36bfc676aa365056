/*
 * The ioctl part of describe.h: request name, node, and the driver status
 * read from the parameter block after the call.
 *
 * This is the first, structural version; the NVIDIA decoder (nvdecode.h)
 * is meant to replace the inside of ct_describe_ioctl().  It already uses
 * the name tables for what they give directly (escape / UVM command name
 * and the offset of its status), and otherwise shows the request word the
 * way the kernel splits it: _IOC(dir,type,nr,size) for the frontend and RM
 * escapes, "UVM cmd 0x..." for nvidia-uvm's plain numbers (fact sheet §1,
 * §6: a UVM request is not _IOC-encoded, never take a size from it).
 */
#include "describe.h"
#include "xlat.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define NR_XFER       211  /* NV_ESC_IOCTL_XFER_CMD, fact sheet §1 */
#define NR_RM_CONTROL 0x2a /* NVOS54: cmd @8 (fact sheet §3) */
#define NR_RM_ALLOC   0x2b /* NVOS21/NVOS64: hClass @12 */

const char *ct_node_name(uint32_t node, char *buf, size_t len)
{
	unsigned minor = node & 0xffffu;

	switch (node >> 16) {
	case CT_NODE_CTL: snprintf(buf, len, "nvidiactl"); break;
	case CT_NODE_GPU: snprintf(buf, len, "nvidia%u", minor); break;
	case CT_NODE_UVM: snprintf(buf, len, "nvidia-uvm"); break;
	case CT_NODE_UVM_TOOLS: snprintf(buf, len, "nvidia-uvm-tools"); break;
	case CT_NODE_MODESET: snprintf(buf, len, "nvidia-modeset"); break;
	case CT_NODE_CAPS: snprintf(buf, len, "nvidia-cap%u", minor); break;
	case CT_NODE_NVSWITCH: snprintf(buf, len, "nvidia-nvswitch%u", minor); break;
	case CT_NODE_IMEX: snprintf(buf, len, "imex-channel%u", minor); break;
	case CT_NODE_OTHER: snprintf(buf, len, "nvidia-other"); break;
	case CT_NODE_NONE: snprintf(buf, len, "fd"); break;
	default: snprintf(buf, len, "node#%u", node >> 16); break;
	}
	return buf;
}

static const char *dir_name(unsigned dir)
{
	static const char *const n[] = { "NONE", "W", "R", "RW" };
	return n[dir & 3];
}

/*
 * A u32 at offset off of the block after the call: from the head copy
 * (BLOCK) or, for big blocks, from the tail copy (BLOCK_TAIL: u32 offset of
 * the tail, then its bytes).
 */
static bool block_u32(const struct ct_recv *r, uint16_t head_tag, uint32_t off, uint32_t *v)
{
	struct ct_fieldv f;
	uint32_t toff;

	if (ct_rec_field(r, head_tag, &f) && (uint64_t)off + 4 <= f.len) {
		memcpy(v, f.data + off, 4);
		return true;
	}
	if (head_tag == CT_FLD_BLOCK && ct_rec_field(r, CT_FLD_BLOCK_TAIL, &f) && f.len >= 4) {
		memcpy(&toff, f.data, 4);
		if (off >= toff && (uint64_t)(off - toff) + 4 <= (uint64_t)f.len - 4) {
			memcpy(v, f.data + 4 + (off - toff), 4);
			return true;
		}
	}
	return false;
}

static void read_status(const struct ct_event *ev, uint16_t tag, int32_t off, uint32_t drv,
			struct ct_ioctl_desc *out)
{
	if (off < 0 || !ev->has_exit || ev->ret < 0)
		return;
	if (!block_u32(&ev->exit, tag, (uint32_t)off, &out->status))
		return;
	out->has_status = true;
	out->status_name = ct_nv_status_name(out->status, drv);
	out->is_warning = ct_nv_status_is_warning(out->status);
}

/* frontend / RM escape on nvidiactl / nvidiaN */
static void describe_nv(const struct ct_event *ev, uint32_t drv, struct ct_ioctl_desc *out)
{
	unsigned nr = (unsigned)(out->request & 0xff);
	unsigned type = (unsigned)((out->request >> 8) & 0xff);
	uint32_t size = (uint32_t)((out->request >> 16) & 0x3fff);
	unsigned dir = (unsigned)((out->request >> 30) & 3);
	const struct ct_nv_escape *e = ct_nv_escape(nr, size, drv);
	struct ct_fieldv xf;
	uint32_t v;
	char buf[96];

	if (e && type == 'F') {
		snprintf(out->name, sizeof out->name, "%s", e->name);
		out->named = true;
	} else if (type >= 0x20 && type < 0x7f) {
		snprintf(out->name, sizeof out->name, "_IOC(%s,'%c',0x%02x,%u)", dir_name(dir), type, nr, size);
	} else {
		snprintf(out->name, sizeof out->name, "_IOC(%s,0x%02x,0x%02x,%u)", dir_name(dir), type, nr, size);
	}
	if (type != 'F')
		return;

	/* XFER: the inner escape is what the driver was asked */
	if (nr == NR_XFER && ct_rec_field(&ev->enter, CT_FLD_XFER, &xf) && xf.len >= 16) {
		uint32_t icmd, isize;
		memcpy(&icmd, xf.data, 4);
		memcpy(&isize, xf.data + 4, 4);
		const struct ct_nv_escape *ie = ct_nv_escape(icmd & 0xff, isize, drv);
		if (ie)
			snprintf(buf, sizeof buf, "%s", ie->name);
		else
			snprintf(buf, sizeof buf, "escape 0x%02x", icmd & 0xff);
		snprintf(out->detail, sizeof out->detail, "inner %s size %u", buf, isize);
		if (ie)
			read_status(ev, CT_FLD_PAYLOAD, ie->status_off, drv, out);
		return;
	}
	if (e)
		read_status(ev, CT_FLD_BLOCK, e->status_off, drv, out);
	if (nr == NR_RM_CONTROL && block_u32(&ev->enter, CT_FLD_BLOCK, 8, &v))
		snprintf(out->detail, sizeof out->detail, "cmd %s (0x%x)",
			 ct_rm_control_describe(v, buf, sizeof buf), v);
	else if (nr == NR_RM_ALLOC && block_u32(&ev->enter, CT_FLD_BLOCK, 12, &v)) {
		const char *cn = ct_rm_class_name(v);
		snprintf(out->detail, sizeof out->detail, "class %s (0x%x)", cn ? cn : "?", v);
	}
}

void ct_describe_ioctl(const struct ct_trace *t, const struct ct_event *ev, struct ct_ioctl_desc *out)
{
	uint32_t drv = t ? ct_trace_driver_version(t) : 0;
	unsigned kind;

	memset(out, 0, sizeof *out);
	out->fd = -1;
	snprintf(out->node, sizeof out->node, "fd");
	snprintf(out->name, sizeof out->name, "ioctl");
	if (ev->call != CT_CALL_ioctl || !ev->has_enter)
		return;
	ct_rec_i32(&ev->enter, CT_FLD_FD, &out->fd);
	ct_rec_u32(&ev->enter, CT_FLD_NODE, &out->node_word);
	ct_rec_u64(&ev->enter, CT_FLD_REQUEST, &out->request);
	ct_node_name(out->node_word, out->node, sizeof out->node);
	kind = out->node_word >> 16;

	if (kind == CT_NODE_UVM || kind == CT_NODE_UVM_TOOLS) {
		const struct ct_uvm_cmd *c = ct_uvm_cmd((uint32_t)out->request, drv);
		if (c) {
			snprintf(out->name, sizeof out->name, "%s", c->name);
			out->named = true;
			read_status(ev, CT_FLD_BLOCK, c->status_off, drv, out);
		} else {
			snprintf(out->name, sizeof out->name, "UVM cmd 0x%" PRIx64, out->request);
		}
	} else if (kind == CT_NODE_CTL || kind == CT_NODE_GPU) {
		describe_nv(ev, drv, out);
	} else {
		unsigned type = (unsigned)((out->request >> 8) & 0xff);
		snprintf(out->name, sizeof out->name,
			 type >= 0x20 && type < 0x7f ? "_IOC(%s,'%c',0x%02x,%u)" : "_IOC(%s,0x%02x,0x%02x,%u)",
			 dir_name((unsigned)(out->request >> 30)), type, (unsigned)(out->request & 0xff),
			 (unsigned)((out->request >> 16) & 0x3fff));
	}
	if (out->has_status) {
		out->has_ok = true;
		out->ok = ev->has_exit && ev->ret >= 0 && (out->status == 0 || out->is_warning);
	}
}
