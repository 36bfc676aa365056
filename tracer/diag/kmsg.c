/*
 * The kernel log's NVIDIA lines (see kmsg.h).  /dev/kmsg hands out one record
 * per read(), "PRI,SEQ,TS,FLAGS;TEXT\n" followed by continuation lines that
 * start with a blank; a regular file (tests) is read in blocks and split into
 * lines the same way, and plain dmesg lines ("[  1.5] NVRM: ...") are taken
 * as they are.
 */
#define _GNU_SOURCE
#include "kmsg.h"
#include "tracer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* RmInitAdapter's stage codes: enum rm_init_status of
 * NVIDIA/open-gpu-kernel-modules src/nvidia/arch/nvalloc/unix/src/osinit.c,
 * tag 595.45.04 (tracer/decode/ABI.md Appendix B).  An older stored copy of
 * the file (tag not known) had FIRMWARE_VALIDATION_FAILED at 0x62 and
 * FIRMWARE_INIT_FAILED at 0x63, and UNIVERSAL_VALIDATION at 0x26: the raw
 * triple is always printed with the name. */
static const struct {
	unsigned code;
	const char *name, *text;
} stages[] = {
	{ 0x10, "REG_SETUP_FAILED", "the driver's registry could not be set up" },
	{ 0x11, "SYS_ENVIRONMENT_FAILED", "the system environment check failed" },
	{ 0x20, "GPU_GPUMGR_ALLOC_GPU_FAILED", "no GPU instance could be allocated" },
	{ 0x21, "GPU_GPUMGR_CREATE_DEV_FAILED", "the GPU device could not be created" },
	{ 0x22, "GPU_GPUMGR_ATTACH_GPU_FAILED",
	  "the driver could not attach the GPU (a GPU this module flavour or branch does not support, or "
	  "Resizable BAR off: the line before it in the log says which)" },
	{ 0x23, "GPU_PRE_INIT_FAILED", "the GPU's pre-initialization failed" },
	{ 0x24, "GPU_STATE_INIT_FAILED", "the GPU's state initialization failed" },
	{ 0x25, "GPU_LOAD_FAILED", "the GPU's state load failed" },
	{ 0x26, "GPU_DMA_CONFIGURATION_FAILED", "the GPU could not be configured for DMA" },
	{ 0x27, "GPU_GPUMGR_EXPANDED_VISIBILITY_FAILED", "the GPU manager's expanded visibility failed" },
	{ 0x30, "VBIOS_FAILED", "the VBIOS could not be read" },
	{ 0x31, "VBIOS_POST_FAILED", "the VBIOS POST failed" },
	{ 0x32, "VBIOS_X86EMU_FAILED", "the VBIOS x86 emulation failed" },
	{ 0x40, "SCALABILITY_FAILED", "scalability (SLI) setup failed" },
	{ 0x41, "WATCHDOG_FAILED", "the watchdog could not be set up" },
	{ 0x42, "FIFO_GET_UD_BAR1_MAP_INFO_FAILED", "the BAR1 mapping information failed" },
	{ 0x43, "GPUDB_REGISTER_FAILED", "the GPU database registration failed" },
	{ 0x44, "ALLOC_RMAPI_FAILED", "the RM API objects could not be allocated" },
	{ 0x45, "GPUINFO_WITH_RMAPI_FAILED", "the GPU information query through the RM API failed" },
	{ 0x60, "FIRMWARE_POLICY_FAILED", "the GSP firmware was required but could not be used" },
	{ 0x61, "FIRMWARE_FETCH_FAILED",
	  "the GSP firmware file could not be loaded (no /lib/firmware/nvidia/<version>/gsp_*.bin)" },
	{ 0x62, "FIRMWARE_INIT_FAILED", "the GSP firmware did not start (GSP RM failed to boot)" },
};

const char *ct_rminit_stage_name(unsigned stage)
{
	for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
		if (stages[i].code == stage)
			return stages[i].name;
	return NULL;
}

const char *ct_rminit_stage_text(unsigned stage)
{
	for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
		if (stages[i].code == stage)
			return stages[i].text;
	return NULL;
}

/* the needles of each kind, in the message text (NVRM's wording of
 * nv.c / osinit.c / nv-pci.c; the catalog, Part C G2 and G10, for the
 * field lines) */
static const struct {
	enum ct_kmsg_kind kind;
	const char *needle;
} needles[] = {
	{ CT_KMSG_RMINIT, "RmInitAdapter failed!" },
	{ CT_KMSG_NEEDS_OPEN, "requires use of the NVIDIA open kernel modules" },
	{ CT_KMSG_LEGACY, "Legacy drivers" },
	{ CT_KMSG_LEGACY, "will ignore this GPU" },
	{ CT_KMSG_FIRMWARE, "Cannot initialize GSP firmware RM" },
	{ CT_KMSG_FIRMWARE, "No firmware image found" },
	{ CT_KMSG_FELL_OFF, "fallen off the bus" },
	{ CT_KMSG_API_MISMATCH, "API mismatch" },
	{ CT_KMSG_XID, "NVRM: Xid" },
};

/* the line as shown; under --no-time (ct_stable) without what changes from
 * run to run: a dmesg time stamp ("[  5.1] ") and, unless pids are kept,
 * the pid an Xid line names ("pid=1234" -> "pid=<pid>") */
static void keep(char *dst, const char *text)
{
	size_t o = 0;

	if (!ct_stable()) {
		snprintf(dst, 200, "%s", text);
		return;
	}
	if (text[0] == '[' && strchr(text, ']')) {
		const char *e = strchr(text, ']') + 1;
		if (strspn(text + 1, " 0123456789.") == (size_t)(e - text - 2))
			text = e + strspn(e, " ");
	}
	while (*text && o < 199) {
		if (ct_stable_ids() && !strncmp(text, "pid=", 4) && text[4] >= '0' && text[4] <= '9') {
			o += (size_t)snprintf(dst + o, 200 - o, "pid=<pid>");
			o = o > 199 ? 199 : o;
			for (text += 4; *text >= '0' && *text <= '9'; text++)
				;
			continue;
		}
		dst[o++] = *text++;
	}
	dst[o] = '\0';
}

/* "(0x62:0x40:2168)": stage, NV_STATUS, source line */
static void rminit_triple(struct ct_kmsg *k, const char *p)
{
	unsigned long v[3];
	char *end;

	if (!p)
		return;
	p++;
	for (int i = 0; i < 3; i++) {
		v[i] = strtoul(p, &end, i < 2 ? 16 : 10);
		if (end == p || *end != (i < 2 ? ':' : ')') || v[i] > 0xFFFFFFFFul)
			return;
		p = end + 1;
	}
	k->rminit = true;
	k->stage = (unsigned)v[0];
	k->status = (unsigned)v[1];
	k->src_line = (unsigned)v[2];
}

static void one_line(struct ct_kmsg *k, const char *s)
{
	const char *semi;

	if (*s == ' ' || *s == '\t' || !*s) /* a /dev/kmsg continuation line */
		return;
	k->records++;
	/* "6,1234,5678,-;NVRM: ..." -> the text; a dmesg line keeps its time stamp */
	semi = strchr(s, ';');
	if (semi && s[0] >= '0' && s[0] <= '9' && strchr(s, ',') && strchr(s, ',') < semi)
		s = semi + 1;
	for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++)
		if (strstr(s, needles[i].needle)) {
			keep(k->line[needles[i].kind], s);
			if (needles[i].kind == CT_KMSG_RMINIT) {
				rminit_triple(k, strchr(strstr(s, "RmInitAdapter failed!"), '('));
			}
			return;
		}
	/* a firmware file the kernel could not load, and a module signature refused */
	if (strstr(s, "gsp_") && strstr(s, ".bin") && strstr(s, "failed"))
		keep(k->line[CT_KMSG_FIRMWARE], s);
	else if (strstr(s, "nvidia") &&
		 (strstr(s, "Key was rejected by service") || strstr(s, "module verification failed") ||
		  strstr(s, "Loading of unsigned module is rejected")))
		keep(k->line[CT_KMSG_KEY_REJECTED], s);
}

void ct_kmsg_scan(const char *path, unsigned max_records, struct ct_kmsg *k)
{
	char buf[8192], line[1024];
	size_t ll = 0;
	int fd;

	memset(k, 0, sizeof *k);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		k->err = errno;
		return;
	}
	k->read = true;
	while (k->records < max_records) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EPIPE) /* records overwritten under us: go on */
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n' || ll == sizeof line - 1) {
				line[ll] = 0;
				one_line(k, line);
				ll = 0;
				if (buf[i] != '\n')
					line[ll++] = buf[i];
			} else {
				line[ll++] = buf[i];
			}
		}
	}
	if (ll) {
		line[ll] = 0;
		one_line(k, line);
	}
	close(fd);
}
