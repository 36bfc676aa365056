/*
 * The values both products read from the user: a trace file size
 * (CUTRACE_SIZE in the shim, --size in the CLI) and a duration (delay= of a
 * rule in the shim, --timeout in the CLI).  One parser each, so that what
 * the CLI accepts is what the shim does.  No allocation, no locale, no
 * libc beyond <stdint.h>: the shim calls these from its constructor.
 */
#ifndef CT_PARSE_H
#define CT_PARSE_H

#include <stdint.h>

/* trace file sizes: the shim's default, and the limits it holds a size to */
#define CT_SIZE_DEFAULT (16ull << 20)
#define CT_SIZE_MIN     (256ull << 10)
#define CT_SIZE_MAX     (1ull << 30)

/*
 * SIZE: decimal bytes, optionally followed by K, M or G (any case, powers
 * of 1024) and then "B", "iB" (or "b", "ib"): "4096", "512K", "16M", "4MiB",
 * "1GB".  0 with *bytes, or -1 when s is not a size (or does not fit in 64
 * bits).  The limits are the caller's: ct_size_check.
 */
int ct_parse_size(const char *s, uint64_t *bytes);

/* a size against the limits: 0 within [CT_SIZE_MIN, CT_SIZE_MAX], -1 not a
 * size, -2 below CT_SIZE_MIN, -3 above CT_SIZE_MAX */
int ct_size_check(const char *s, uint64_t *bytes);

/*
 * DURATION: a decimal number with an optional fraction and unit: "30s",
 * "250ms", "1.5s", "100us", "10ns", "2m", "1h"; a bare number is seconds.
 * At most 10^9 whole units and 2^63 ns in all.  0 with *ns, or -1.
 */
int ct_parse_duration(const char *s, uint64_t *ns);

#endif
