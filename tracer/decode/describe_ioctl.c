/*
 * The ioctl part of describe.h, from the NVIDIA decoder (nvdecode.h): the
 * request in the driver's names, the node, the status the driver wrote back
 * into the parameter block, and a one-line summary for the timeline.  Values
 * the tables do not name stay structural (_IOC(RW,'F',0xd9,2608), "UVM cmd
 * 0x1234"); nothing is dropped.
 */
#include "describe.h"
#include "nvdecode.h"
#include "xlat.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "fmt.h"
/* the hot paths format many short strings: the cheaper snprintf (fmt.c) */
#define snprintf ct_snprintf
#define vsnprintf ct_vsnprintf

/* display strings are cut at their buffer on purpose */
#pragma GCC diagnostic ignored "-Wformat-truncation"

const char *ct_node_name(uint32_t node, char *buf, size_t len)
{
	unsigned kind = node >> 16;

	if (kind == CT_NODE_NONE)
		snprintf(buf, len, "fd");
	else if (kind >= CT_NODE__COUNT)
		snprintf(buf, len, "node#%u", kind);
	else
		ct_nv_node_name(node, buf, (unsigned)len);
	return buf;
}

/* the decoded form is large; the CLI describes one event at a time */
static struct ct_nv_ioctl nv;
static bool nv_valid;

const struct ct_nv_ioctl *ct_describe_last_nv(void)
{
	return nv_valid ? &nv : NULL;
}

void ct_describe_ioctl(const struct ct_trace *t, const struct ct_event *ev, struct ct_ioctl_desc *out)
{
	uint32_t drv = t ? ct_trace_driver_version(t) : 0;
	const char *sum, *cmd = NULL;
	struct ct_sb b;

	memset(out, 0, offsetof(struct ct_ioctl_desc, detail));
	out->detail[0] = 0;
	out->fd = -1;
	memcpy(out->node, "fd", 3);
	memcpy(out->name, "ioctl", 6);
	nv_valid = false;
	/* the device map of the trace being streamed: an fd opened on a renamed
	 * or bind-mounted node is classified by its device number (reader.c) */
	if (ev->call != CT_CALL_ioctl || ct_nv_decode(ev, drv, t ? ct_trace_devmap(t) : NULL, &nv) < 0)
		return;
	nv_valid = true;
	out->fd = nv.fd;
	out->node_word = nv.node;
	out->request = nv.request;
	ct_sb_init(&b, out->node, sizeof out->node);
	ct_sb_str(&b, nv.family == CT_NV_FAM_NOT_NVIDIA ? "fd" : nv.node_name);
	if (nv.args == CT_NV_A_RM_CONTROL)
		cmd = nv.u.control.cmd_name;
	else if (nv.args == CT_NV_A_RM_ALLOC)
		cmd = nv.u.alloc.class_name;
	else if (nv.args == CT_NV_A_RM_ALLOC_MEMORY)
		cmd = nv.u.alloc_memory.class_name;
	ct_sb_init(&b, out->name, sizeof out->name);
	ct_sb_str(&b, nv.name);
	if (cmd && *cmd) {
		ct_sb_mem(&b, " ", 1);
		ct_sb_str(&b, cmd);
	}
	out->named = nv.named && !nv.unknown;
	out->has_status = nv.has_status && nv.status_kind == CT_NV_ST_NV_STATUS;
	out->status = nv.status;
	out->status_name = nv.status_name;
	out->is_warning = nv.is_warning;
	out->has_ok = nv.returned;
	out->ok = nv.ok;
	/* the summary repeats the name; keep what it adds ("-> NV_ERR_...") */
	sum = nv.summary;
	if (nv.short_name[0] && !strncmp(sum, nv.short_name, strlen(nv.short_name))) {
		sum += strlen(nv.short_name);
		if (cmd && *cmd && !strncmp(sum + (*sum == ' '), cmd, strlen(cmd)))
			sum += (*sum == ' ') + strlen(cmd);
		while (*sum == ' ')
			sum++;
	}
	ct_sb_init(&b, out->detail, sizeof out->detail);
	ct_sb_str(&b, sum);
	if (nv.warning[0]) {
		ct_sb_str(&b, "  warning: ");
		ct_sb_str(&b, nv.warning);
	}
	/* the timeline marks injections itself, with the rule */
	char *inj = strstr(out->detail, " [injected]");
	if (inj)
		memmove(inj, inj + 11, strlen(inj + 11) + 1);
}
