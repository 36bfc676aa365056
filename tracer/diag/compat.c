/*
 * Driver/runtime compatibility rules.  The three models are those of the
 * CUDA Compatibility guide (docs.nvidia.com/deploy/cuda-compatibility):
 * backward compatibility (a driver runs every older runtime), minor version
 * compatibility (CUDA 11+: a runtime runs on an older driver of the same
 * major), and forward compatibility (the cuda-compat package: a newer
 * user-mode libcuda on an older kernel module, datacenter GPUs only).
 */
#include "compat.h"
#include "cutrace_gen/codes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char ct_compat_table_source[] =
	"NVIDIA CUDA Toolkit Release Notes, Table 3 \"CUDA Toolkit and Corresponding Driver Versions\" "
	"(Linux x86_64, GA rows), docs.nvidia.com/cuda/cuda-toolkit-release-notes";

/*
 * Minimum Linux x86_64 driver of each CUDA Toolkit GA release, from the
 * table named above (Update releases do not change the CUDA minor).  A
 * driver supports the newest CUDA whose minimum it meets.  This is a lower
 * bound: a driver branch released between toolkits (e.g. 565, which reports
 * 12.7) may report more through cuDriverGetVersion, which is authoritative.
 * Newest first.
 */
static const struct {
	int maj, min, pat;
	int cuda;
} driver_table[] = {
	{ 595, 45, 4, 13020 },  /* CUDA 13.2 GA */
	{ 590, 44, 1, 13010 },  /* 13.1 GA */
	{ 580, 65, 6, 13000 },  /* 13.0 GA */
	{ 575, 51, 3, 12090 },  /* 12.9 GA */
	{ 570, 26, 0, 12080 },  /* 12.8 GA */
	{ 560, 28, 3, 12060 },  /* 12.6 GA */
	{ 555, 42, 2, 12050 },  /* 12.5 GA */
	{ 550, 54, 14, 12040 }, /* 12.4 GA */
	{ 545, 23, 6, 12030 },  /* 12.3 GA */
	{ 535, 54, 3, 12020 },  /* 12.2 GA */
	{ 530, 30, 2, 12010 },  /* 12.1 GA */
	{ 525, 60, 13, 12000 }, /* 12.0 GA */
	{ 520, 61, 5, 11080 },  /* 11.8 GA */
	{ 515, 43, 4, 11070 },  /* 11.7 GA */
	{ 510, 39, 1, 11060 },  /* 11.6 GA */
	{ 495, 29, 5, 11050 },  /* 11.5 GA */
	{ 470, 42, 1, 11040 },  /* 11.4.0 GA */
	{ 465, 19, 1, 11030 },  /* 11.3.0 GA */
	{ 460, 27, 3, 11020 },  /* 11.2.0 GA */
	{ 455, 23, 0, 11010 },  /* 11.1 GA */
	{ 450, 36, 6, 11000 },  /* 11.0.1 RC */
	{ 440, 33, 0, 10020 },  /* 10.2.89 */
	{ 418, 39, 0, 10010 },  /* 10.1.105 */
	{ 410, 48, 0, 10000 },  /* 10.0.130 */
	{ 396, 26, 0, 9020 },   /* 9.2.88 */
	{ 390, 46, 0, 9010 },   /* 9.1.85 */
	{ 384, 81, 0, 9000 },   /* 9.0.76 */
	{ 367, 48, 0, 8000 },   /* 8.0.44 */
	{ 352, 31, 0, 7050 },   /* 7.5.16 */
	{ 346, 46, 0, 7000 },   /* 7.0.28 */
};

/* "580.159.04": the first token of digits and dots with at least one dot */
static int parse_triplet(const char *s, int v[3])
{
	const char *p = s;

	while (*p) {
		char *end;
		int n = 0;

		if (!(*p >= '0' && *p <= '9')) {
			p++;
			continue;
		}
		v[0] = v[1] = v[2] = 0;
		v[n++] = (int)strtol(p, &end, 10);
		while (n < 3 && end[0] == '.' && end[1] >= '0' && end[1] <= '9')
			v[n++] = (int)strtol(end + 1, &end, 10);
		if (n >= 2)
			return 0;
		p = end;
	}
	return -1;
}

int ct_driver_cuda_version(const char *driver_version)
{
	int v[3];

	if (!driver_version || parse_triplet(driver_version, v))
		return 0;
	for (size_t i = 0; i < sizeof driver_table / sizeof driver_table[0]; i++) {
		const int t[3] = { driver_table[i].maj, driver_table[i].min, driver_table[i].pat };
		int cmp = v[0] != t[0] ? v[0] - t[0] : v[1] != t[1] ? v[1] - t[1] : v[2] - t[2];
		if (cmp >= 0)
			return driver_table[i].cuda;
	}
	return 0;
}

int ct_cuda_version_parse(const char *s)
{
	char *end;
	long maj, min = 0;

	if (!s || !(*s >= '0' && *s <= '9'))
		return 0;
	maj = strtol(s, &end, 10);
	if (maj >= 1000 && *end == 0)   /* already encoded: 12040 */
		return maj <= 99990 ? (int)maj : 0;
	if (*end == '.')
		min = strtol(end + 1, &end, 10);
	if (maj <= 0 || maj > 99 || min < 0 || min > 99)
		return 0;
	return (int)(maj * 1000 + min * 10);
}

const char *ct_cuda_version_str(int v, char *buf, size_t len)
{
	if (v <= 0)
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
	return buf;
}

static void set(struct ct_compat *o, enum ct_compat_class c, bool ok, int err,
		const char *rule, const char *fix)
{
	static const char *const names[] = {
		[CT_COMPAT_UNKNOWN] = "unknown", [CT_COMPAT_NATIVE] = "native",
		[CT_COMPAT_BACKWARD] = "backward", [CT_COMPAT_MINOR] = "minor",
		[CT_COMPAT_FORWARD] = "forward", [CT_COMPAT_MISMATCH] = "mismatch",
	};
	o->cls = c;
	o->name = names[c];
	o->ok = ok;
	o->expect_error = err;
	o->rule = rule;
	o->fix = fix;
}

enum ct_compat_class ct_compat_classify(int drv, int rt, bool compat, struct ct_compat *o)
{
	char a[16], b[16];
	int dmaj = drv / 1000, rmaj = rt / 1000;

	memset(o, 0, sizeof *o);
	snprintf(o->detail, sizeof o->detail, "driver CUDA %s (%d) %s runtime CUDA %s (%d)%s",
		 ct_cuda_version_str(drv, a, sizeof a), drv,
		 drv == rt ? "=" : drv > rt ? ">" : "<", ct_cuda_version_str(rt, b, sizeof b), rt,
		 compat ? ", cuda-compat libcuda loaded" : "");
	if (drv <= 0 || rt <= 0) {
		set(o, CT_COMPAT_UNKNOWN, true, 0,
		    "Without both versions the contract cannot be checked.", NULL);
		return o->cls;
	}
	if (drv / 10 == rt / 10) {
		set(o, CT_COMPAT_NATIVE, true, 0,
		    "The driver supports exactly the runtime's CUDA version.", NULL);
	} else if (drv > rt) {
		set(o, CT_COMPAT_BACKWARD, true, 0,
		    "A driver runs every runtime older than the CUDA version it supports "
		    "(backward compatibility).", NULL);
	} else if (compat) {
		set(o, CT_COMPAT_FORWARD, true, 0,
		    "A newer runtime runs on an older kernel driver through the cuda-compat "
		    "user-mode libcuda (forward compatibility), on datacenter GPUs only: "
		    "others fail with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804).",
		    "if cuInit returns 804, remove the compat directory from the library path "
		    "or upgrade the host driver");
	} else if (dmaj == rmaj && dmaj >= 11) {
		set(o, CT_COMPAT_MINOR, true, 0,
		    "Since CUDA 11 a runtime runs on an older driver of the same major version "
		    "(minor version compatibility); PTX needing the newer driver's JIT fails with "
		    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222).",
		    NULL);
	} else {
		set(o, CT_COMPAT_MISMATCH, false, CT_cudaErrorInsufficientDriver,
		    "A runtime newer than the driver's CUDA version, across a major version "
		    "(or before CUDA 11), needs a newer driver or cuda-compat: otherwise "
		    "cudaErrorInsufficientDriver (35).",
		    "upgrade the driver to one supporting the runtime's CUDA version, use a "
		    "build for the driver's CUDA major, or (datacenter GPUs) install the "
		    "cuda-compat package for the runtime's version");
	}
	if (compat && o->cls != CT_COMPAT_FORWARD && o->cls != CT_COMPAT_UNKNOWN)
		o->fix = "the cuda-compat libcuda is not needed here; on non-datacenter GPUs it "
			 "makes cuInit fail with 804: take the compat directory off the library path";
	return o->cls;
}
