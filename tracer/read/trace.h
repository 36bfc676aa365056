/*
 * Reading cutrace files (format: shim/include/cutrace/format.h).
 *
 * A trace is validated field by field when opened (magic, byte order,
 * header size, version, layout) with one distinct error message per problem.
 * Records are then streamed in sequence order: the init area, then the ring
 * from its oldest surviving slot.  Enter and exit records are paired into
 * events with a bounded window, so memory does not grow with the file.
 */
#ifndef CT_TRACE_H
#define CT_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cutrace/format.h"

struct ct_trace;

/* One field of a record, pointing into the trace's memory. */
struct ct_fieldv {
	uint16_t tag;
	uint16_t len;
	const unsigned char *data;
};

/* A record as read from the file (pointers valid during the callback). */
struct ct_recv {
	const struct cutrace_record *hdr;   /* copy-safe: aligned in memory */
	const struct cutrace_exit *exit;    /* CT_REC_EXIT only, else NULL */
	const unsigned char *fields;        /* first TLV field */
	uint32_t fields_len;
};

/* One call: an enter record and, unless it never returned, its exit. */
struct ct_event {
	uint64_t seq;            /* enter seq (exit seq for an orphan exit) */
	uint16_t call;           /* CT_CALL_* */
	uint16_t type;           /* CT_REC_ENTER (a call) or CT_REC_NOTE */
	uint32_t tid;
	uint64_t t_ns;           /* monotonic time of the enter record */
	uint64_t dur_ns;         /* exit - enter, 0 without exit */
	bool has_enter;          /* false: the enter record was lost (ring) */
	bool has_exit;           /* false: entered, no exit record */
	bool exit_unknown;       /* no exit record, but one may have been written and
				    lost: the ring overwrote the part of the file
				    after the enter, or the exit came beyond the
				    pairing window.  Without it: never returned */
	int64_t ret;
	int32_t err;
	uint32_t flags;          /* CT_RF_* of enter | exit */
	struct ct_recv enter;    /* valid when has_enter */
	struct ct_recv exit;     /* valid when has_exit */
	uint64_t index;          /* 0-based position in the event stream */
};

/* Counters gathered while streaming. */
struct ct_trace_stats {
	uint64_t records;        /* committed records read */
	uint64_t torn;           /* head tag BUSY: a record torn by a crash */
	uint64_t overwritten;    /* head survived but continuation slots were reused */
	uint64_t bad;            /* records failing validation (size, fields) */
	uint64_t events;         /* events delivered */
	uint64_t unfinished;     /* events delivered without exit (exit_unknown or not) */
	uint64_t exit_unknown;   /* of those, whose exit may have been lost */
	uint64_t orphan_exits;   /* exits whose enter was lost */
	uint64_t dropped;        /* records the ring overwrote (format.h, "Counting");
				    known once ct_trace_events has run */
	uint64_t ring_records;   /* of the records read, those outside the init area */
};

/*
 * Open a trace file.  On failure returns -1 and writes one clear sentence into
 * err (e.g. "not a cutrace file (bad magic)", "truncated: header says 16777216
 * bytes, file has 4096").
 */
int ct_trace_open(const char *path, struct ct_trace **out, char *err, size_t errlen);
/*
 * The same for a reader that only walks the events once (a job's thousands of
 * traces): a file whose written part (header page, context, the tags and
 * slots below header.head) is at most CT_TRACE_USED_MAX bytes is read with
 * pread into one buffer the reader keeps and reuses, not mapped: no mapping
 * to set up and tear down per file.  What lies past header.head reads as
 * zeros (ct_trace_written, which checks the bytes, wants ct_trace_open).
 * Anything else, or while that buffer is in use, is opened as ct_trace_open.
 */
#define CT_TRACE_USED_MAX (4u << 20)
int ct_trace_open_used(const char *path, struct ct_trace **out, char *err, size_t errlen);
/* The same over a memory buffer (copied; used by the fuzzer and tests). */
int ct_trace_open_mem(const void *buf, size_t len, struct ct_trace **out, char *err, size_t errlen);
void ct_trace_close(struct ct_trace *t);

const char *ct_trace_path(const struct ct_trace *t);
/*
 * Damage the reader found, in one sentence into buf (NULL: none): a short
 * file (what is present, how many records are missing), a file that shrank
 * while it was read (read as zeros from there on), a malformed context
 * area.  ct_trace_degraded: that, or the shim's own CT_HF_DEGRADED.
 */
const char *ct_trace_damage(const struct ct_trace *t, char *buf, size_t len);
bool ct_trace_degraded(const struct ct_trace *t);
/* a short file whose missing part held records (some, or an unknown number):
 * what was read cannot show that nothing failed */
bool ct_trace_incomplete(const struct ct_trace *t);
/* The bytes of t as written (decompressed), without the tail of the file
 * nothing was ever written to (zeros): *len of them, valid until closed.
 * The full size is ct_trace_header(t)->file_size. */
const unsigned char *ct_trace_written(const struct ct_trace *t, size_t *len);
/* A private copy of the header, taken at open time. */
const struct cutrace_header *ct_trace_header(const struct ct_trace *t);

/*
 * Context fields (CT_CTX_*).  Returns the idx-th field with this tag (0-based)
 * or NULL; *len gets its length.  ct_trace_ctx_str copies a string field into
 * buf (NUL-terminated, truncated) and returns buf, or NULL when absent.
 */
const unsigned char *ct_trace_ctx(const struct ct_trace *t, uint16_t tag, unsigned idx, uint16_t *len);
const char *ct_trace_ctx_str(const struct ct_trace *t, uint16_t tag, unsigned idx, char *buf, size_t buflen);
/* The idx-th field whose key this cutrace does not know (a file of a newer
 * minor version: kept, not damage), with its key in *tag; NULL past the last. */
const unsigned char *ct_trace_ctx_unknown(const struct ct_trace *t, unsigned idx, uint16_t *tag,
					  uint16_t *len);
/* The context area is damaged (ct_trace_damage says where): the look-ups
 * above see only the fields before the damage, so a field they do not find
 * may have been there.  Nothing may be concluded from a field's absence. */
bool ct_trace_ctx_damaged(const struct ct_trace *t);
/* value of an allowlisted environment variable recorded at start, or NULL */
const char *ct_trace_env(const struct ct_trace *t, const char *name, char *buf, size_t buflen);

/* Driver version from the recorded /proc/driver/nvidia/version (or
 * /sys/module/nvidia/version): major*1000000 + minor*1000 + patch, 0 if unknown. */
uint32_t ct_trace_driver_version(const struct ct_trace *t);
/* the version token itself ("580.159.04", "390.157"), or NULL if unknown */
const char *ct_trace_driver_version_str(const struct ct_trace *t);

/*
 * Stream every event in enter order.  The callback returns 0 to continue,
 * non-zero to stop (that value is returned).  Raw records are delivered to
 * rec_cb first when it is non-NULL (in file order).
 */
typedef int (*ct_event_cb)(const struct ct_event *ev, void *user);
int ct_trace_events(struct ct_trace *t, ct_event_cb cb, void *user);
const struct ct_trace_stats *ct_trace_stats(const struct ct_trace *t);

/*
 * The NVIDIA device map (nvdecode.h) as of the event being delivered: built
 * from the trace's context (the /proc/devices lines) when ct_trace_events
 * starts, then fed every open and close before its callback, so a callback
 * can classify an ioctl's fd by the device number it was opened on.  NULL
 * before the first ct_trace_events (or when out of memory); after a pass it
 * holds the state at the end of the trace.
 */
struct ct_nv_devmap;
const struct ct_nv_devmap *ct_trace_devmap(const struct ct_trace *t);

/* Field access within one record: first field with tag, or NULL. */
const struct ct_fieldv *ct_rec_field(const struct ct_recv *r, uint16_t tag, struct ct_fieldv *out);
/* Iterate: *pos starts at 0; returns 1 and fills out while fields remain. */
int ct_rec_next_field(const struct ct_recv *r, uint32_t *pos, struct ct_fieldv *out);
/* every field of r in order, as ct_rec_next_field walks them, from the
 * index the look-ups above keep (valid until the next look-up in another
 * record): the count, or UINT_MAX when there are too many to keep (walk
 * them with ct_rec_next_field) */
unsigned ct_rec_fields(const struct ct_recv *r, const struct ct_fieldv **all);
/* Typed helpers: return true when the field exists with the right size. */
bool ct_rec_u32(const struct ct_recv *r, uint16_t tag, uint32_t *v);
bool ct_rec_i32(const struct ct_recv *r, uint16_t tag, int32_t *v);
bool ct_rec_u64(const struct ct_recv *r, uint16_t tag, uint64_t *v);
bool ct_rec_i64(const struct ct_recv *r, uint16_t tag, int64_t *v);
/* string field copied into buf (NUL-terminated, truncated); NULL if absent */
const char *ct_rec_str(const struct ct_recv *r, uint16_t tag, char *buf, size_t buflen);

/* Look a field up in the exit record first, then in the enter record. */
const struct ct_fieldv *ct_ev_field(const struct ct_event *ev, uint16_t tag, struct ct_fieldv *out);

/* name of a call id ("ioctl", "cuInit"; "call#N" for unknown ids, in buf) */
const char *ct_call_name(unsigned call);
int ct_call_family(unsigned call);

/* Expand a FILE|DIR argument into trace file paths (sorted). Returns count,
 * or -1 with err filled.  *paths is malloc'ed; free with ct_free_paths. */
int ct_list_traces(const char *arg, char ***paths, char *err, size_t errlen);
/* the same; with `recursive`, a DIR's subdirectories too (symbolic links to
 * directories not followed, 16 levels at most) */
int ct_list_traces_ex(const char *arg, bool recursive, char ***paths, char *err, size_t errlen);
void ct_free_paths(char **paths, int n);
/* --no-time: paths[0..n) reordered, directory by directory (in name
 * order), by the time their processes started instead of by name (which
 * holds the pid and the time); perm[i] (when not NULL) is the old index of
 * the new paths[i], pids[i] (when not NULL) its process's pid (0 when the
 * file cannot be read; such a file sorts first in its directory) */
void ct_list_order_by_start(char **paths, int n, int *perm, uint32_t *pids);
/* a trace file's name: *.cutrace, *.cutrace.gz or *.cutrace.zst */
bool ct_trace_name(const char *name);
/* the member of a bundle (cutrace pack) that gives the full sizes of the
 * traces stored without their unwritten tails: "SIZE NAME" lines */
#define CT_PACK_MANIFEST "cutrace-pack.txt"

#endif
