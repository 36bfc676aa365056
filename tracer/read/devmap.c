/* The NVIDIA device map (devmap.h): majors from /proc/devices, fds from opens. */
#include "devmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
/* one short string per major of every trace: the cheaper snprintf (fmt.c) */
#define snprintf ct_snprintf

static unsigned kind_for_major_name(const char *name)
{
	if (!strcmp(name, "nvidia") || !strcmp(name, "nvidiactl") || !strcmp(name, "nvidia-frontend"))
		return CT_NODE_CTL; /* 195: split by minor below */
	if (!strcmp(name, "nvidia-uvm"))
		return CT_NODE_UVM;
	if (!strcmp(name, "nvidia-caps"))
		return CT_NODE_CAPS;
	if (!strcmp(name, "nvidia-nvswitch") || !strcmp(name, "nvidia-nvlink"))
		return CT_NODE_NVSWITCH;
	if (!strcmp(name, "nvidia-caps-imex-channels"))
		return CT_NODE_IMEX;
	if (!strcmp(name, "nvidia-modeset"))
		return CT_NODE_MODESET;
	if (!strncmp(name, "nvidia", 6))
		return CT_NODE_OTHER;
	return CT_NODE_NONE;
}

void ct_nv_devmap_add_major(struct ct_nv_devmap *m, uint32_t major, const char *name)
{
	unsigned kind = kind_for_major_name(name);

	if (kind == CT_NODE_NONE)
		return;
	for (unsigned i = 0; i < m->nmajors; i++)
		if (m->majors[i].major == major && m->majors[i].kind == kind)
			return;
	if (m->nmajors >= CT_NV_DEVMAP_MAJORS)
		return;
	m->majors[m->nmajors].major = major;
	m->majors[m->nmajors].kind = (uint16_t)kind;
	snprintf(m->majors[m->nmajors].name, sizeof m->majors[0].name, "%s", name);
	m->nmajors++;
}

/* one /proc/devices line: "238 nvidia-uvm" (leading blanks allowed) */
static void devmap_line(struct ct_nv_devmap *m, const unsigned char *s, uint16_t len)
{
	char line[64], *p, *end;
	unsigned long maj;

	ct_copy_printable(line, sizeof line, s, len);
	p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	maj = strtoul(p, &end, 10);
	if (end == p || maj > 0xffffffffUL)
		return;
	while (*end == ' ' || *end == '\t')
		end++;
	p = end;
	while (*end && *end != ' ' && *end != '\t' && *end != '\n')
		end++;
	*end = '\0';
	if (*p)
		ct_nv_devmap_add_major(m, (uint32_t)maj, p);
}

void ct_nv_devmap_init(struct ct_nv_devmap *m, const struct ct_trace *t)
{
	memset(m, 0, sizeof *m);
	for (unsigned i = 0; i < CT_NV_DEVMAP_FDS; i++)
		m->fds[i].fd = -1;
	/* 195 is fixed (tracer/decode/ABI.md §8); the context adds the dynamic ones */
	ct_nv_devmap_add_major(m, 195, "nvidia");
	if (!t)
		return;
	for (unsigned i = 0;; i++) {
		uint16_t len = 0;
		const unsigned char *s = ct_trace_ctx(t, CT_CTX_DEVICES, i, &len);
		if (!s)
			break;
		/* one line per field, but accept a multi-line field too */
		for (uint16_t a = 0, b = 0; b <= len; b++) {
			if (b == len || s[b] == '\n') {
				if (b > a)
					devmap_line(m, s + a, (uint16_t)(b - a));
				a = (uint16_t)(b + 1);
			}
		}
	}
}

int ct_nv_classify_rdev(const struct ct_nv_devmap *m, uint64_t rdev, uint32_t *node)
{
	uint32_t major = (uint32_t)(rdev >> 32), minor = (uint32_t)rdev;
	unsigned kind = CT_NODE_NONE;

	if (major == 195) {
		kind = CT_NODE_CTL;
	} else if (m) {
		for (unsigned i = 0; i < m->nmajors; i++)
			if (m->majors[i].major == major) {
				kind = m->majors[i].kind;
				break;
			}
	}
	switch (kind) {
	case CT_NODE_CTL: /* the nvidia major: minor 255 ctl, 254 modeset, 0..247 GPUs (ABI.md §8) */
		if (minor == 255)
			kind = CT_NODE_CTL;
		else if (minor == 254)
			kind = CT_NODE_MODESET;
		else if (minor <= 247)
			kind = CT_NODE_GPU;
		else
			kind = CT_NODE_OTHER;
		break;
	case CT_NODE_UVM:
		kind = minor == 0 ? CT_NODE_UVM : minor == 1 ? CT_NODE_UVM_TOOLS : CT_NODE_OTHER;
		break;
	default:
		break;
	}
	if (node)
		*node = kind == CT_NODE_NONE ? 0 : ((uint32_t)kind << 16) | (minor & 0xffffu);
	return (int)kind;
}

/* slot gets fd (-1: freed), keeping nfar */
static void devmap_set(struct ct_nv_devmap *m, int slot, int32_t fd)
{
	int32_t old = m->fds[slot].fd;

	if (old >= 0 && ct_nv_devmap_home(old) != slot)
		m->nfar--;
	if (fd >= 0 && ct_nv_devmap_home(fd) != slot)
		m->nfar++;
	m->fds[slot].fd = fd;
}

static bool is_open_call(unsigned call)
{
	return call >= CT_CALL_open && call <= CT_CALL___openat64_2;
}

void ct_nv_devmap_track(struct ct_nv_devmap *m, const struct ct_event *ev)
{
	int32_t fd;
	int slot;

	if (!m || !ev)
		return;
	if (ev->call == CT_CALL_close && ev->has_enter && ct_rec_i32(&ev->enter, CT_FLD_FD, &fd)) {
		if ((slot = ct_nv_devmap_slot(m, fd)) >= 0)
			devmap_set(m, slot, -1);
		return;
	}
	if (!is_open_call(ev->call) || !ev->has_exit || ev->ret < 0 || ev->ret > INT32_MAX)
		return;
	fd = (int32_t)ev->ret;
	slot = ct_nv_devmap_slot(m, fd);
	uint64_t rdev;
	if (!ct_rec_u64(&ev->exit, CT_FLD_RDEV, &rdev)) {
		/* not a character device (or no fstat): whatever the fd was, it is not now */
		if (slot >= 0)
			devmap_set(m, slot, -1);
		return;
	}
	if (slot < 0 && m->fds[ct_nv_devmap_home(fd)].fd < 0)
		slot = ct_nv_devmap_home(fd);
	if (slot < 0)
		slot = ct_nv_devmap_slot(m, -1);
	if (slot < 0)
		slot = ct_nv_devmap_home(fd); /* full: evict someone */
	devmap_set(m, slot, fd);
	m->fds[slot].rdev = rdev;
	ct_nv_classify_rdev(m, rdev, &m->fds[slot].node);
	m->fds[slot].path[0] = '\0';
	if (ev->has_enter)
		ct_rec_str(&ev->enter, CT_FLD_PATH, m->fds[slot].path, sizeof m->fds[slot].path);
}

