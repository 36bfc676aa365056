/*
 * The driver/runtime version contract: can a CUDA runtime of version R run
 * on a driver that supports CUDA version D?  Used statically by doctor
 * (driver version from the libcuda file name, runtime from libcudart) and by
 * the diagnosis of traces (cuDriverGetVersion and cudaRuntimeGetVersion as
 * recorded).
 *
 * CUDA versions are encoded as cuDriverGetVersion does: 1000*major +
 * 10*minor (12.4 -> 12040, 13.0 -> 13000).
 */
#ifndef CT_COMPAT_H
#define CT_COMPAT_H

#include <stdbool.h>
#include <stddef.h>

enum ct_compat_class {
	CT_COMPAT_UNKNOWN,   /* a version is missing */
	CT_COMPAT_NATIVE,    /* driver supports exactly the runtime's CUDA version */
	CT_COMPAT_BACKWARD,  /* driver newer than the runtime: always supported */
	CT_COMPAT_MINOR,     /* driver older, same major >= 11: minor version compatibility */
	CT_COMPAT_FORWARD,   /* driver older across majors, a cuda-compat libcuda is loaded */
	CT_COMPAT_MISMATCH,  /* driver too old: cudaErrorInsufficientDriver (35) */
};

struct ct_compat {
	enum ct_compat_class cls;
	const char *name;    /* "native", "backward", "minor", "forward", "mismatch", "unknown" */
	bool ok;             /* initialization is expected to pass this check */
	int expect_error;    /* runtime error to expect: 35, or 0 */
	const char *rule;    /* the rule applied, one sentence */
	const char *fix;     /* what to do, NULL when nothing is needed */
	char detail[160];    /* "driver CUDA 11.4 (11040) < runtime CUDA 12.4 (12040)" */
};

/*
 * driver_cuda_version: what the system driver supports (the kernel module
 * branch / the host libcuda, or cuDriverGetVersion of a non-compat libcuda).
 * runtime_version: the CUDA version the runtime was built for.
 * compat_lib_loaded: the libcuda in use is a cuda-compat forward
 * compatibility copy; it is assumed new enough for the runtime (compare its
 * own version with a second call, compat_lib_loaded = false).
 * Returns out->cls.
 */
enum ct_compat_class ct_compat_classify(int driver_cuda_version, int runtime_version,
					bool compat_lib_loaded, struct ct_compat *out);

/* Highest CUDA version a driver version supports natively ("580.159.04" ->
 * 13000), from the CUDA Toolkit release notes table; 0 when unknown (not a
 * version, or older than CUDA 7.0's driver). */
int ct_driver_cuda_version(const char *driver_version);

/* the source of that table, for output */
extern const char ct_compat_table_source[];

/* "13.0.96" / "13.0" / "13" / "12040" -> 13000 / 13000 / 13000 / 12040; 0 on error */
int ct_cuda_version_parse(const char *s);
/* 12040 -> "12.4" */
const char *ct_cuda_version_str(int v, char *buf, size_t len);

#endif
