/*
 * The NVIDIA device map of a trace: which NVIDIA node each fd is, as of the
 * event being read.  The reader builds it from the trace's context and feeds
 * it every open and close while it streams (trace.h, ct_trace_devmap); the
 * decoder (decode/nvdecode.c) classifies an ioctl's fd with it.
 */
#ifndef CT_DEVMAP_H
#define CT_DEVMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "trace.h"

#define CT_NV_DEVMAP_MAJORS 16
#define CT_NV_DEVMAP_FDS    256

/*
 * Built from the trace context (the NVIDIA lines of /proc/devices: the
 * nvidia-uvm, nvidia-caps... majors are dynamic, tracer/decode/ABI.md §8) and fed the
 * open/close events, so an fd is classified by the major:minor of the node
 * it was opened on: a renamed or bind-mounted node is still recognised.
 */
struct ct_nv_devmap {
	unsigned nmajors;
	struct {
		uint32_t major;
		uint16_t kind;         /* CT_NODE_* the major stands for */
		char name[30];         /* "nvidia-uvm" */
	} majors[CT_NV_DEVMAP_MAJORS];
	struct {
		int32_t fd;            /* -1: free */
		uint32_t node;         /* classified from rdev: CT_NODE_* << 16 | minor */
		uint64_t rdev;         /* major << 32 | minor, as in CT_FLD_RDEV */
		char path[64];         /* path given to open (truncated) */
	} fds[CT_NV_DEVMAP_FDS];
	unsigned nfar;             /* live fds[] entries outside their home slot
				      (fd % CT_NV_DEVMAP_FDS): 0 lets a look-up
				      that misses there stop at once */
};

/* Read the majors from t's context (t may be NULL: only 195 is known). */
void ct_nv_devmap_init(struct ct_nv_devmap *m, const struct ct_trace *t);
/* Add one /proc/devices entry by hand ("238", "nvidia-uvm"): tests, live checks. */
void ct_nv_devmap_add_major(struct ct_nv_devmap *m, uint32_t major, const char *name);
/* Feed every event in order: successful opens bind fd -> rdev, closes unbind. */
void ct_nv_devmap_track(struct ct_nv_devmap *m, const struct ct_event *ev);
/*
 * Classify a device number (major << 32 | minor).  Returns the CT_NODE_* kind
 * (CT_NODE_NONE when it is not an NVIDIA node) and sets *node to kind << 16 |
 * minor when node is non-NULL.  m may be NULL (then only major 195 is known).
 */
int ct_nv_classify_rdev(const struct ct_nv_devmap *m, uint64_t rdev, uint32_t *node);

/* an fd lives in slot fd % CT_NV_DEVMAP_FDS when that is free (fds are
 * small numbers: almost always), else anywhere: look there first */
static inline int ct_nv_devmap_home(int32_t fd)
{
	return (int)((uint32_t)fd % CT_NV_DEVMAP_FDS);
}

/* the slot of fd in m->fds (fd -1: a free slot), or -1 */
static inline int ct_nv_devmap_slot(const struct ct_nv_devmap *m, int32_t fd)
{
	if (fd >= 0 && m->fds[ct_nv_devmap_home(fd)].fd == fd)
		return ct_nv_devmap_home(fd);
	/* most ioctls of a trace are on fds it never saw opened */
	if (fd >= 0 && !m->nfar)
		return -1;
	for (int i = 0; i < CT_NV_DEVMAP_FDS; i++)
		if (m->fds[i].fd == fd)
			return i;
	return -1;
}

#endif
