/*
 * Driver versions ("580.159.04", "390.157"): the one parser of them, for
 * every place that reads one (the trace's /proc/driver/nvidia/version, the
 * handshake strings of an ioctl, a library's file name, doctor's /proc and
 * /sys files).  Every function here reads digits through the same reader.
 */
#ifndef CT_VERSION_H
#define CT_VERSION_H

#include <stddef.h>
#include <stdint.h>

/* driver version code: major*1000000 + minor*1000 + patch (580.159.04 -> 580159004) */
#define CT_DRV(maj, min, pat) ((uint32_t)(maj) * 1000000u + (uint32_t)(min) * 1000u + (uint32_t)(pat))

/* the first token of s shaped like a driver version (MAJOR.MINOR[.PATCH],
 * not inside a longer number; "x86_64" has no dot) -> code, 0 on failure */
uint32_t ct_drv_version_parse(const char *s);

/* "580.159.04" at s: up to n dot-separated decimal parts into v[] (the rest
 * zeroed, each at most UINT32_MAX); returns how many were read (0: s does
 * not start with a digit) */
int ct_version_parts(const char *s, unsigned *v, int n);

/* compare dotted numbers: 580.95.05 < 580.159.04; <0, 0, >0 */
int ct_version_cmp(const char *a, const char *b);

/*
 * The version token of /proc/driver/nvidia/version's NVRM line, or of
 * /sys/module/nvidia/version: the first blank-separated token N.N[.N] after
 * the module's title (the title differs between the open and the
 * proprietary module, see tracer/decode/ABI.md §8);
 * never a version past the NVRM line (the GCC line has one too).  flavor
 * (may be NULL): "open", "proprietary" or "unknown".  0, or -1 with ver "".
 */
int ct_parse_nvrm_version(const char *text, char *ver, size_t len, const char **flavor);

/* the version in a library's file name: "libcuda.so.580.159.04" ->
 * "580.159.04", "libcudart.so.13.0.96" -> "13.0.96"; 0, or -1 when there is
 * none ("libcuda.so") */
int ct_version_from_name(const char *path, char *buf, size_t len);

#endif
