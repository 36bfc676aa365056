/*
 * Device selectors: CUDA_VISIBLE_DEVICES as the driver reads it, and
 * NVIDIA_VISIBLE_DEVICES as the container runtime reads it (failure
 * catalog B.4, B.5, Part C G7).  One parser for doctor and the verdict.
 *
 * CUDA_VISIBLE_DEVICES (CUDA C++ Programming Guide, "CUDA Environment
 * Variables"; PyTorch's model of the driver, torch/cuda/__init__.py
 * _parse_visible_devices and test/test_cuda.py TestVisibleDeviceParses):
 * a comma-separated list of GPU indices, GPU UUIDs ("GPU-" and the full
 * UUID or a prefix long enough to be unique) or MIG UUIDs ("MIG-...");
 * devices are enumerated in the list's order and the list ends at the first
 * entry that is invalid: only the entries before it are visible.  An index
 * is read like strtoul ("1gpu2" is 1, "+3" is 3, "-0" is 0; a negative one
 * ends the list); a word that is no index ends it; a GPU named twice hides
 * every GPU (PyTorch's model, measured on the H200 by scripts/gpu-issue19.sh).
 */
#ifndef CT_SELECTORS_H
#define CT_SELECTORS_H

#include <stdbool.h>

#define CT_SEL_MAX 64

enum ct_sel_stop {
	CT_SEL_END = 0,   /* every entry was valid */
	CT_SEL_EMPTY,     /* the value is empty: no GPU */
	CT_SEL_NOT_INDEX, /* neither an index nor a UUID */
	CT_SEL_NEGATIVE,  /* a negative index */
	CT_SEL_RANGE,     /* an index past the GPUs the driver sees */
	CT_SEL_UUID,      /* a GPU UUID (prefix) that matches no GPU */
	CT_SEL_AMBIGUOUS, /* a UUID prefix that matches several GPUs */
	CT_SEL_MIG,       /* a MIG UUID: cannot be checked here (see mig_known) */
	CT_SEL_DUPLICATE, /* a GPU named twice: every GPU is hidden */
};

struct ct_sel {
	int entries; /* entries in the value */
	int visible; /* devices CUDA will see (-1: unknown, a UUID or MIG entry could not be checked) */
	int order[CT_SEL_MAX]; /* the visible GPUs, as indices of the driver's list */
	enum ct_sel_stop stop; /* why the list ended early */
	int stop_at;           /* the entry it ended at (0-based), -1 none */
	char stop_tok[96];     /* that entry */
};

/*
 * Parse a CUDA_VISIBLE_DEVICES value against the GPUs the driver sees:
 * ngpus (-1: unknown, no range check) and their UUIDs ("GPU-8a1b...", NULL
 * or "" where unknown; nuuids of them).  A UUID entry is checked only
 * when every UUID is known; a MIG entry never (stop CT_SEL_MIG only when
 * no GPU is known to be in MIG mode: mig_known false and ngpus >= 0).
 */
void ct_sel_cuda(const char *value, int ngpus, const char *const *uuids, int nuuids, struct ct_sel *s);

/* why the list ended, in words ("is out of range", "names a GPU twice") */
const char *ct_sel_stop_text(enum ct_sel_stop stop);

/*
 * NVIDIA_VISIBLE_DEVICES (nvidia-container-toolkit): "all", "none" (driver
 * libraries, no GPU), "void" or "" (not a GPU container), or a list of
 * indices / UUIDs.  Returns the number of GPUs it asks for, -1 for all,
 * -2 for none/void/empty.
 */
int ct_sel_nvidia(const char *value);

#endif
