/*
 * Events -> display strings and key/value arguments (describe.h).
 *
 * What each call records is the shim's contract (shim/hooks_*.c, capture.c);
 * this file only turns those fields into words.  ok per family:
 *   io       ret >= 0 (ioctl: also no failing NV status, see describe_ioctl.c)
 *   loader   dlopen/dlmopen/dlsym/dlvsym: ret != 0 (a handle / pointer);
 *            dlclose: ret == 0
 *   driver, runtime, nvml   ret == 0 (cuGetProcAddress: ret == 0 even when
 *            the symbol status says "not found"; that is shown, not failed)
 *   shim     notes are always ok
 * A call without exit record (never returned) is not ok.
 */
#include "describe.h"
#include "json.h"
#include "nvdecode.h"
#include "tracer.h"
#include "xlat.h"

#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include "fmt.h"
/* the hot paths format many short strings: the cheaper snprintf (fmt.c) */
#define snprintf ct_snprintf
#define vsnprintf ct_vsnprintf

/* ---- small string builders --------------------------------------------------- */

/* s's n bytes as they are at o while none needs quoting: whole words, the
 * last one overlapping (n >= 8) or padded (n < 8); the bytes copied, n or
 * 0 (o needs room for n + 8) */
static inline size_t copy_plain_short(char *o, const unsigned char *s, size_t n)
{
	uint64_t w, w2;

	if (n < 8) {
		w = ct_short_word(s, n);
		if (ct_marks8(w))
			return 0;
		memcpy(o, &w, 8);
		return n;
	}
	memcpy(&w, s, 8);
	memcpy(&w2, s + n - 8, 8);
	if (ct_marks8(w) | ct_marks8(w2))
		return 0;
	memcpy(o, &w, 8);
	memcpy(o + n - 8, &w2, 8);
	return n;
}

/* data as a C-style quoted string: "abc\n\x01"; cut inside the quotes when
 * the buffer is short (nothing at all without room for both quotes) */
static void sb_quoted(struct ct_sb *b, const unsigned char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char *o = b->p;
	size_t i = 0;

	if (b->last - o < 2)
		return;
	*o++ = '"';
	/* a short string with room for all of it (and a word more): copied
	 * whole when nothing in it needs quoting */
	if (len < 16 && b->last - o > (ptrdiff_t)len + 5 + 8 && (i = copy_plain_short(o, s, len)) != 0)
		o += len;
	for (; i < len && b->last - o > 5; i++) {
#ifdef __SSE2__
		/* runs of plain bytes 16 at a time, while even the whole
		 * vector leaves the room the byte loop asks for */
		while (i + 16 <= len && b->last - o > 5 + 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
			unsigned m = ct_marks16(v);
			unsigned k = m ? (unsigned)__builtin_ctz(m) : 16;
			_mm_storeu_si128((__m128i *)(void *)o, v);
			o += k;
			i += k;
			if (m)
				break;
		}
		if (i == len || b->last - o <= 5)
			break;
#endif
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = (char)c;
		} else if (c == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else if (c < 0x20 || c >= 0x7f) {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		} else {
			*o++ = (char)c;
		}
	}
	*o++ = '"';
	*o = 0;
	b->p = o;
}

static void append_quoted(char *buf, size_t size, const unsigned char *s, size_t len)
{
	struct ct_sb b;

	ct_sb_append_to(&b, buf, size);
	sb_quoted(&b, s, len);
}

static const char *keep(struct ct_desc *d, const void *s, size_t len)
{
	char *p;

	if (d->arena_used + len + 1 > sizeof d->arena) {
		len = sizeof d->arena - d->arena_used;
		if (len == 0)
			return "";
		len--;
	}
	p = d->arena + d->arena_used;
	memcpy(p, s, len);
	p[len] = 0;
	d->arena_used += len + 1;
	return p;
}

static const char *keep_str(struct ct_desc *d, const char *s)
{
	return keep(d, s, strlen(s));
}

static const char *keepf(struct ct_desc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *keepf(struct ct_desc *d, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	return keep(d, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* ---- arguments ------------------------------------------------------------------- */

/* inlined into the arg_* helpers below, so that the length of a literal
 * key is known at compile time */
static inline __attribute__((always_inline)) struct ct_desc_arg *
arg_new(struct ct_desc *d, const char *key, enum ct_arg_kind kind)
{
	size_t kn = __builtin_strlen(key);
	uint64_t kbit = 1ull << (kn < 63 ? kn : 63);
	struct ct_desc_arg *a;

	/* a key can repeat only one of the same length: most keys are the
	 * first of theirs, and are not compared at all */
	if (d->arg_klens & kbit) {
		for (unsigned i = 0; i < d->nargs; i++) {
			a = &d->args[i];
			/* keys are mostly the same literals: the pointer, then the text */
			if (a->klen == kn && (a->key == key || !memcmp(a->key, key, kn)))
				return NULL; /* first one wins: JSON keys stay unique */
		}
	}
	if (d->nargs >= CT_DESC_MAX_ARGS)
		return NULL;
	d->arg_klens |= kbit;
	a = &d->args[d->nargs++];
	/* (only the value of its kind is set: readers go by kind) */
	a->key = key;
	a->klen = kn;
	a->kind = kind;
	return a;
}

static inline __attribute__((always_inline)) void arg_str(struct ct_desc *d, const char *key, const char *s)
{
	struct ct_desc_arg *a = arg_new(d, key, CT_ARG_STR);
	if (a)
		a->s = s;
}

static inline __attribute__((always_inline)) void arg_int(struct ct_desc *d, const char *key, int64_t v)
{
	struct ct_desc_arg *a = arg_new(d, key, CT_ARG_INT);
	if (a)
		a->i = v;
}

static inline __attribute__((always_inline)) void arg_uint(struct ct_desc *d, const char *key, uint64_t v)
{
	struct ct_desc_arg *a = arg_new(d, key, CT_ARG_UINT);
	if (a)
		a->u = v;
}

static inline __attribute__((always_inline)) void arg_hex(struct ct_desc *d, const char *key, uint64_t v)
{
	struct ct_desc_arg *a = arg_new(d, key, CT_ARG_HEX);
	if (a)
		a->u = v;
}

/* a handle or a pointer: under --no-time (ct_stable) "<addr>" unless NULL,
 * so two runs of one program describe it alike */
#define CT_ADDR_HIDDEN "<addr>"
static void arg_addr(struct ct_desc *d, const char *key, uint64_t v)
{
	if (v && ct_stable())
		arg_str(d, key, CT_ADDR_HIDDEN);
	else
		arg_hex(d, key, v);
}

static void sb_addr(struct ct_sb *b, uint64_t v)
{
	if (v && ct_stable()) {
		ct_sb_str(b, CT_ADDR_HIDDEN);
	} else {
		ct_sb_str(b, "0x");
		ct_sb_hex(b, v);
	}
}

/* the plain arguments that are pointers (arg_key's names) */
static bool arg_is_addr(const char *k)
{
	return !strcmp(k, "ctx") || !strcmp(k, "ptr");
}

static inline __attribute__((always_inline)) void arg_bool(struct ct_desc *d, const char *key, bool v)
{
	struct ct_desc_arg *a = arg_new(d, key, CT_ARG_BOOL);
	if (a)
		a->b = v;
}

static inline __attribute__((always_inline)) void arg_bytes(struct ct_desc *d, const char *key, const unsigned char *p, uint32_t len)
{
	struct ct_desc_arg *a = arg_new(d, key, CT_ARG_BYTES);
	if (a) {
		a->bytes = p;
		a->len = len;
	}
}

static uint32_t f_u32(const struct ct_fieldv *f) { uint32_t v = 0; if (f->len >= 4) memcpy(&v, f->data, 4); return v; }
static uint64_t f_u64(const struct ct_fieldv *f) { uint64_t v = 0; if (f->len >= 8) memcpy(&v, f->data, 8); return v; }

/* what the plain integer arguments mean, per call (hooks_cuda.c rec_enter) */
static const char *arg_key(unsigned call, bool second)
{
	switch (call) {
	case CT_CALL_cuDeviceGet: return second ? "arg2" : "ordinal";
	case CT_CALL_cuDeviceGetName:
	case CT_CALL_cuDevicePrimaryCtxRetain: return second ? "arg2" : "dev";
	case CT_CALL_cuCtxCreate: case CT_CALL_cuCtxCreate_v2:
	case CT_CALL_cuCtxCreate_v3: case CT_CALL_cuCtxCreate_v4: return second ? "dev" : "flags";
	case CT_CALL_cuCtxSetCurrent: return second ? "arg2" : "ctx";
	case CT_CALL_cudaSetDevice: return second ? "arg2" : "device";
	case CT_CALL_cudaMalloc: return second ? "arg2" : "size";
	case CT_CALL_cudaFree: return second ? "arg2" : "ptr";
	case CT_CALL_cuInit: case CT_CALL_nvmlInitWithFlags: return second ? "arg2" : "flags";
	case CT_CALL_access: return second ? "arg2" : "mode";
	case CT_CALL_chown: return second ? "gid" : "uid";
	case CT_CALL_waitpid:
	case CT_CALL_wait4: return second ? "exec_errno" : "pid";
	default: return second ? "arg2" : "arg";
	}
}

static const char *out_key(unsigned call)
{
	switch (call) {
	case CT_CALL_cuDriverGetVersion: case CT_CALL_cudaRuntimeGetVersion:
	case CT_CALL_cudaDriverGetVersion: return "version";
	case CT_CALL_cuDeviceGetCount: case CT_CALL_cudaGetDeviceCount:
	case CT_CALL_nvmlDeviceGetCount_v2: return "count";
	case CT_CALL_cuDeviceGet: case CT_CALL_cudaGetDevice: return "device";
	default: return "out";
	}
}

static const char *outptr_key(unsigned call)
{
	switch (call) {
	case CT_CALL_cuDevicePrimaryCtxRetain: case CT_CALL_cuCtxCreate: case CT_CALL_cuCtxCreate_v2:
	case CT_CALL_cuCtxCreate_v3: case CT_CALL_cuCtxCreate_v4: return "ctx";
	case CT_CALL_cudaMalloc: return "ptr";
	default: return "outptr";
	}
}

static const char *libkind_name(uint32_t k)
{
	static const char *const n[CT_LIB__COUNT] = {
		[CT_LIB_OTHER] = "other",   [CT_LIB_CUDA] = "cuda",     [CT_LIB_CUDART] = "cudart",
		[CT_LIB_NVML] = "nvml",     [CT_LIB_NVIDIA] = "nvidia", [CT_LIB_CUDA_OTHER] = "cuda-other",
		[CT_LIB_DXCORE] = "dxcore",
	};
	return k < CT_LIB__COUNT ? n[k] : "unknown";
}

static const char *symstatus_name(int32_t s)
{
	/* CUdriverProcAddressQueryResult, cuda.h (CUDA 13.0) */
	switch (s) {
	case 0: return "CU_GET_PROC_ADDRESS_SUCCESS";
	case 1: return "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND";
	case 2: return "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT";
	default: return NULL;
	}
}

const char *ct_inject_action_name(uint32_t a, char *buf, size_t len)
{
	static const char *const n[CT_INJ__COUNT] = {
		[CT_INJ_NONE] = "none", [CT_INJ_ERROR] = "error", [CT_INJ_RETVAL] = "retval",
		[CT_INJ_STATUS] = "status", [CT_INJ_VALUE] = "value", [CT_INJ_VERSION] = "version",
		[CT_INJ_DELAY] = "delay",
	};
	if (a < CT_INJ__COUNT)
		return n[a];
	snprintf(buf, len, "action#%u", a);
	return buf;
}

const char *ct_family_name(int fam)
{
	switch (fam) {
	case CT_FAM_IO: return "io";
	case CT_FAM_LOADER: return "loader";
	case CT_FAM_DRIVER: return "driver";
	case CT_FAM_RUNTIME: return "runtime";
	case CT_FAM_NVML: return "nvml";
	case CT_FAM_SHIM: return "shim";
	case CT_FAM_FS: return "fs";
	default: return "unknown";
	}
}

/* One field -> one argument.  exit: the field is from the exit record.
 * (Inlined into record_args' loop: called for every field.) */
static inline __attribute__((always_inline)) void field_arg(struct ct_desc *d, unsigned call, const struct ct_fieldv *f, bool exit)
{
	char buf[256];
	uint32_t u;

	switch (f->tag) {
	case CT_FLD_FILLER:
		return;
	case CT_FLD_PATH: arg_str(d, "path", keep(d, f->data, f->len)); return;
	case CT_FLD_DIRFD: arg_int(d, "dirfd", (int32_t)f_u32(f)); return;
	case CT_FLD_OFLAGS:
		arg_str(d, "flags", keep_str(d, ct_open_flags_str(f_u32(f), buf, sizeof buf)));
		return;
	case CT_FLD_MODE: arg_str(d, "mode", keepf(d, "0%o", f_u32(f))); return;
	case CT_FLD_FD: arg_int(d, "fd", (int32_t)f_u32(f)); return;
	case CT_FLD_NODE:
		arg_str(d, "node", keep_str(d, ct_node_name(f_u32(f), buf, sizeof buf)));
		return;
	case CT_FLD_RDEV:
		arg_str(d, "rdev", keepf(d, "%u:%u", (unsigned)(f_u64(f) >> 32), (unsigned)f_u64(f)));
		return;
	case CT_FLD_REQUEST: arg_hex(d, "request", f_u64(f)); return;
	case CT_FLD_ARGP: arg_addr(d, "argp", f_u64(f)); return;
	case CT_FLD_BLOCK_SIZE: arg_uint(d, "block_size", f_u32(f)); return;
	case CT_FLD_BLOCK: arg_bytes(d, exit ? "block_out" : "block_in", f->data, f->len); return;
	case CT_FLD_BLOCK_TAIL:
		if (f->len >= 4) {
			arg_uint(d, "block_tail_offset", f_u32(f));
			arg_bytes(d, exit ? "block_tail_out" : "block_tail_in", f->data + 4, f->len - 4u);
		}
		return;
	case CT_FLD_PAYLOAD_SIZE: arg_uint(d, "payload_size", f_u32(f)); return;
	case CT_FLD_PAYLOAD: arg_bytes(d, exit ? "payload_out" : "payload_in", f->data, f->len); return;
	case CT_FLD_STRING:
		if (f->len >= 1) {
			static const char *const k[] = { "string0", "string1", "string2", "string3" };
			arg_str(d, f->data[0] < 4 ? k[f->data[0]] : "string", keep(d, f->data + 1, f->len - 1u));
		}
		return;
	case CT_FLD_XFER:
		if (f->len >= 16) {
			uint32_t cmd, size;
			uint64_t ptr;
			memcpy(&cmd, f->data, 4);
			memcpy(&size, f->data + 4, 4);
			memcpy(&ptr, f->data + 8, 8);
			arg_hex(d, "xfer_cmd", cmd);
			arg_uint(d, "xfer_size", size);
			arg_addr(d, "xfer_ptr", ptr);
		}
		return;
	case CT_FLD_LIBNAME: arg_str(d, "file", keep(d, f->data, f->len)); return;
	case CT_FLD_DLFLAGS:
		arg_str(d, "flags", keep_str(d, ct_dlopen_flags_str((int)f_u32(f), buf, sizeof buf)));
		return;
	case CT_FLD_LMID: arg_int(d, "lmid", (int64_t)f_u64(f)); return;
	case CT_FLD_HANDLE: arg_addr(d, "handle", f_u64(f)); return;
	case CT_FLD_REALPATH: arg_str(d, "realpath", keep(d, f->data, f->len)); return;
	case CT_FLD_DLERROR: arg_str(d, "dlerror", keep(d, f->data, f->len)); return;
	case CT_FLD_SYMBOL: arg_str(d, "symbol", keep(d, f->data, f->len)); return;
	case CT_FLD_SYMVER: arg_str(d, "version", keep(d, f->data, f->len)); return;
	case CT_FLD_CUDAVER: arg_int(d, "cuda_version", (int32_t)f_u32(f)); return;
	case CT_FLD_GPAFLAGS: arg_hex(d, "flags", f_u64(f)); return;
	case CT_FLD_SYMSTATUS:
		arg_int(d, "symstatus", (int32_t)f_u32(f));
		arg_str(d, "symstatus_name", symstatus_name((int32_t)f_u32(f)));
		return;
	case CT_FLD_PFN: arg_addr(d, "pfn", f_u64(f)); return;
	case CT_FLD_WRAPPED: arg_bool(d, "wrapped", f_u32(f) != 0); return;
	case CT_FLD_ARG:
		if (exit && ct_proc_call(call)) {
			arg_int(d, call <= CT_CALL_wait4 ? "status" : "pid", (int64_t)f_u64(f));
			return;
		}
		if (ct_stable() && f_u64(f) && arg_is_addr(arg_key(call, false)))
			arg_str(d, arg_key(call, false), CT_ADDR_HIDDEN);
		else
			arg_int(d, arg_key(call, false), (int64_t)f_u64(f));
		return;
	case CT_FLD_ARG2: arg_int(d, arg_key(call, true), (int64_t)f_u64(f)); return;
	case CT_FLD_OUT: arg_int(d, out_key(call), (int64_t)f_u64(f)); return;
	case CT_FLD_OUTPTR: arg_addr(d, outptr_key(call), f_u64(f)); return;
	case CT_FLD_INJECT:
		if (f->len >= 8) {
			memcpy(&u, f->data, 4);
			arg_uint(d, "inject_rule", u);
			memcpy(&u, f->data + 4, 4);
			arg_str(d, "inject_action", keep_str(d, ct_inject_action_name(u, buf, sizeof buf)));
		}
		return;
	case CT_FLD_TEXT:
		arg_str(d,
			call == CT_CALL_cuDeviceGetName                    ? "name"
			: call == CT_CALL_fopen || call == CT_CALL_fopen64 ? "mode"
			: ct_proc_call(call)                               ? "args"
									   : "text",
			keep(d, f->data, f->len));
		return;
	case CT_FLD_LIBKIND: arg_str(d, "libkind", libkind_name(f_u32(f))); return;
	case CT_FLD_ENV: arg_str(d, "env", keep(d, f->data, f->len)); return;
	case CT_FLD_FILESIZE: arg_uint(d, "file_size", f_u64(f)); return;
	case CT_FLD_SEARCHED: arg_str(d, "searched", keep(d, f->data, f->len)); return;
	case CT_FLD_ERRTEXT: arg_str(d, "errtext", keep(d, f->data, f->len)); return;
	case CT_FLD_MAPLIBS: arg_str(d, "mapped", keep(d, f->data, f->len)); return;
	case CT_FLD_MOUNT: arg_str(d, "libcuda_mount", keep(d, f->data, f->len)); return;
	case CT_FLD_LDCACHE: arg_str(d, "ld_so_cache", keep(d, f->data, f->len)); return;
	case CT_FLD_TARGET: arg_str(d, "target", keep(d, f->data, f->len)); return;
	default:
		/* a field from a newer minor version: keep its bytes under its number */
		arg_bytes(d, keepf(d, "field_%u", f->tag), f->data, f->len);
		return;
	}
}

/* one record's fields as arguments: from the reader's index of the record
 * (describing the event looked its fields up already), else walked */
static void record_args(struct ct_desc *d, unsigned call, const struct ct_recv *r, bool exit)
{
	const struct ct_fieldv *all = NULL;
	unsigned n = ct_rec_fields(r, &all);
	struct ct_fieldv f;
	uint32_t pos = 0;

	/* one loop over either (field_arg is inlined once) */
	for (unsigned i = 0; n != UINT_MAX ? i < n : ct_rec_next_field(r, &pos, &f) != 0; i++)
		field_arg(d, call, n != UINT_MAX ? &all[i] : &f, exit);
}

static void collect_args(struct ct_desc *d, const struct ct_event *ev)
{
	if (ev->has_enter)
		record_args(d, ev->call, &ev->enter, false);
	if (ev->has_exit)
		record_args(d, ev->call, &ev->exit, true);
}

/* ---- per family ------------------------------------------------------------------------ */

/* a string field of one record */
static bool rstr(const struct ct_recv *r, uint16_t tag, const unsigned char **p, uint16_t *len)
{
	struct ct_fieldv f;

	if (!ct_rec_field(r, tag, &f))
		return false;
	*p = f.data;
	*len = f.len;
	return true;
}

/* a string field of the exit record, else of the enter record */
static bool ev_str(const struct ct_event *ev, uint16_t tag, const unsigned char **p, uint16_t *len)
{
	struct ct_fieldv f;

	if (!ct_ev_field(ev, tag, &f))
		return false;
	*p = f.data;
	*len = f.len;
	return true;
}

static void set_target(struct ct_desc *d, const unsigned char *p, size_t len)
{
	if (len > sizeof d->target - 1)
		len = sizeof d->target - 1;
	memcpy(d->target, p, len);
	d->target[len] = 0;
}

static void errno_result(struct ct_desc *d)
{
	if (d->ret >= 0) {
		struct ct_sb b;
		ct_sb_init(&b, d->result, sizeof d->result);
		ct_sb_i64(&b, d->ret);
		return;
	}
	d->result_name = d->errno_name;
	if (d->errno_name)
		snprintf(d->result, sizeof d->result, "%" PRId64 " %s (%s)", d->ret, d->errno_name,
			 strerror(d->err));
	else if (d->err)
		snprintf(d->result, sizeof d->result, "%" PRId64 " errno %d", d->ret, d->err);
	else
		snprintf(d->result, sizeof d->result, "%" PRId64, d->ret);
}

static void describe_open(const struct ct_trace *t, const struct ct_event *ev, struct ct_desc *d)
{
	const unsigned char *p;
	uint16_t len;
	uint32_t u;
	uint64_t rdev;
	char buf[256];

	if (ct_rec_u32(&ev->enter, CT_FLD_DIRFD, &u))
		ct_appendf(d->text_args, sizeof d->text_args, (int32_t)u == -100 ? "AT_FDCWD, " : "%d, ",
			   (int32_t)u);
	if (ev_str(ev, CT_FLD_PATH, &p, &len)) {
		set_target(d, p, len);
		append_quoted(d->text_args, sizeof d->text_args, p, len);
	}
	if (ct_rec_u32(&ev->enter, CT_FLD_OFLAGS, &u))
		ct_appendf(d->text_args, sizeof d->text_args, ", %s", ct_open_flags_str(u, buf, sizeof buf));
	if (ct_rec_u32(&ev->enter, CT_FLD_MODE, &u))
		ct_appendf(d->text_args, sizeof d->text_args, ", 0%o", u);
	if (d->has_result)
		errno_result(d);
	if (d->has_result && d->ret >= 0 && ev->has_exit && ct_rec_u64(&ev->exit, CT_FLD_RDEV, &rdev)) {
		uint32_t node = 0, by_rdev;
		ct_rec_u32(&ev->exit, CT_FLD_NODE, &node);
		/* a node the shim could not name (renamed, or a major it did not
		 * know): the trace's /proc/devices lines may */
		if ((!node || node >> 16 == CT_NODE_OTHER) && t &&
		    ct_nv_classify_rdev(ct_trace_devmap(t), rdev, &by_rdev) != CT_NODE_NONE)
			node = by_rdev;
		ct_appendf(d->detail, sizeof d->detail, "(%s %u:%u)",
			   node ? ct_node_name(node, buf, sizeof buf) : "char device", (unsigned)(rdev >> 32),
			   (unsigned)rdev);
	}
}

static void describe_io(const struct ct_trace *t, const struct ct_event *ev, struct ct_desc *d)
{
	char buf[64];
	int32_t fd;
	uint32_t node = 0;

	if (ev->call == CT_CALL_ioctl) {
		struct ct_ioctl_desc *io = &d->ioctl;
		struct ct_sb b;
		d->is_ioctl = true;
		ct_describe_ioctl(t, ev, io);
		d->nv = ct_describe_last_nv();
		/* "fd 5 (nvidiactl) req 0xc020462a" and "5 (nvidiactl), NAME" */
		ct_sb_init(&b, d->target, sizeof d->target);
		ct_sb_str(&b, "fd ");
		ct_sb_i64(&b, io->fd);
		ct_sb_str(&b, " (");
		ct_sb_str(&b, io->node);
		ct_sb_str(&b, ") req 0x");
		ct_sb_hex(&b, io->request);
		ct_sb_init(&b, d->text_args, sizeof d->text_args);
		ct_sb_i64(&b, io->fd);
		ct_sb_str(&b, " (");
		ct_sb_str(&b, io->node);
		ct_sb_str(&b, "), ");
		ct_sb_str(&b, io->name);
		if (d->has_result)
			errno_result(d);
		if (io->detail[0]) {
			ct_sb_init(&b, d->detail, sizeof d->detail);
			ct_sb_str(&b, io->detail);
		}
		if (io->has_status && io->status && !(io->status_name && strstr(d->detail, io->status_name)))
			ct_appendf(d->detail, sizeof d->detail, "%sstatus %s (0x%x)",
				   d->detail[0] ? "  " : "", io->status_name ? io->status_name : "?",
				   io->status);
		return;
	}
	if (ev->call == CT_CALL_close) {
		if (ct_rec_i32(&ev->enter, CT_FLD_FD, &fd)) {
			ct_rec_u32(&ev->enter, CT_FLD_NODE, &node);
			struct ct_sb b;
			ct_node_name(node, buf, sizeof buf);
			ct_sb_init(&b, d->target, sizeof d->target);
			ct_sb_str(&b, "fd ");
			ct_sb_i64(&b, fd);
			ct_sb_str(&b, " (");
			ct_sb_str(&b, buf);
			ct_sb_str(&b, ")");
			ct_sb_init(&b, d->text_args, sizeof d->text_args);
			ct_sb_i64(&b, fd);
			ct_sb_str(&b, " (");
			ct_sb_str(&b, buf);
			ct_sb_str(&b, ")");
		}
		if (d->has_result)
			errno_result(d);
		return;
	}
	describe_open(t, ev, d);
}

/* st_mode or a mknod mode: "S_IFCHR|0666" */
static const char *mode_str(uint32_t m, char *buf, size_t len)
{
	static const struct {
		uint32_t t;
		const char *n;
	} types[] = {
		{ 0020000, "S_IFCHR|" },  { 0040000, "S_IFDIR|" }, { 0060000, "S_IFBLK|" },
		{ 0100000, "S_IFREG|" },  { 0010000, "S_IFIFO|" }, { 0120000, "S_IFLNK|" },
		{ 0140000, "S_IFSOCK|" },
	};
	const char *t = "";

	for (unsigned i = 0; i < sizeof types / sizeof types[0]; i++)
		if ((m & 0170000) == types[i].t)
			t = types[i].n;
	snprintf(buf, len, "%s0%o", t, m & 07777);
	return buf;
}

/* access's mode: "F_OK", "R_OK|W_OK" */
static const char *amode_str(int64_t m, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", m ? "" : "F_OK", (m & 4) ? "R_OK" : "",
		 (m & 2) ? ((m & 4) ? "|W_OK" : "W_OK") : "", (m & 1) ? ((m & 6) ? "|X_OK" : "X_OK") : "");
	return buf;
}

/* a wait status in words: "exited 1", "killed by signal 9 (SIGKILL)" */
static void wait_status_str(int64_t st, char *buf, size_t n)
{
	int s = (int)st;

	if (WIFEXITED(s))
		snprintf(buf, n, "exited %d", WEXITSTATUS(s));
	else if (WIFSIGNALED(s))
		snprintf(buf, n, "killed by signal %d%s", WTERMSIG(s),
			 WTERMSIG(s) == SIGKILL   ? " (SIGKILL)"
			 : WTERMSIG(s) == SIGSEGV ? " (SIGSEGV)"
			 : WTERMSIG(s) == SIGABRT ? " (SIGABRT)"
						  : "");
	else
		snprintf(buf, n, "status 0x%x", (unsigned)s);
}

static const char *errno_name_or(int e)
{
	return ct_errno_name(e) ? ct_errno_name(e) : "?";
}

void ct_proc_outcome(const struct ct_event *ev, char *buf, size_t n)
{
	int64_t eerr = 0, st;

	buf[0] = 0;
	if (!ev->has_exit)
		return;
	if (!(ev->call == CT_CALL_waitpid || ev->call == CT_CALL_wait4)) {
		/* posix_spawn returns the error number */
		if (ev->ret)
			snprintf(buf, n, "%s (%s)", errno_name_or((int)ev->ret), strerror((int)ev->ret));
		return;
	}
	ct_rec_i64(&ev->enter, CT_FLD_ARG2, &eerr);
	if (eerr)
		snprintf(buf, n, "its exec failed: %s, %s", errno_name_or((int)eerr), strerror((int)eerr));
	else if (ev->ret > 0 && ct_rec_i64(&ev->exit, CT_FLD_ARG, &st))
		wait_status_str(st, buf, n);
}

/* format 1.6: a helper the driver ran (shim/hooks_proc.c).
 * 'waitpid(25209: "/usr/bin/nvidia-modprobe -c 0 -u") = 25209  (exited 1)';
 * 'posix_spawn("/usr/bin/nvidia-modprobe", "-u") = 0  (pid 123)' */
static void describe_proc(const struct ct_event *ev, struct ct_desc *d)
{
	const unsigned char *p, *a = NULL;
	uint16_t len, alen = 0;
	int64_t pid;
	char buf[96];
	char *ta = d->text_args;
	size_t tl = sizeof d->text_args;
	bool wait = ev->call == CT_CALL_waitpid || ev->call == CT_CALL_wait4;

	if (!rstr(&ev->enter, CT_FLD_PATH, &p, &len))
		return;
	set_target(d, p, len);
	rstr(&ev->enter, CT_FLD_TEXT, &a, &alen);
	if (wait && ct_rec_i64(&ev->enter, CT_FLD_ARG, &pid)) {
		/* --no-time: a pid differs from run to run */
		if (ct_stable())
			ct_appendf(ta, tl, "<pid>: ");
		else
			ct_appendf(ta, tl, "%" PRId64 ": ", pid);
		ct_appendf(ta, tl, "\"%.*s%s%.*s\"", (int)len, (const char *)p, alen ? " " : "", (int)alen,
			   a ? (const char *)a : "");
	} else {
		append_quoted(ta, tl, p, len);
		if (alen) {
			ct_appendf(ta, tl, ", ");
			append_quoted(ta, tl, a, alen);
		}
	}
	if (!d->has_result)
		return;
	ct_proc_outcome(ev, buf, sizeof buf);
	if (!wait) {
		if (d->ret) {
			d->errno_name = ct_errno_name((int)d->ret);
			d->result_name = d->errno_name;
			snprintf(d->result, sizeof d->result, "%s", buf);
		} else {
			snprintf(d->result, sizeof d->result, "0");
			if (!ct_stable() && ct_rec_i64(&ev->exit, CT_FLD_ARG, &pid))
				snprintf(d->detail, sizeof d->detail, "(pid %" PRId64 ")", pid);
		}
		return;
	}
	errno_result(d);
	if (d->ret > 0 && ct_stable())
		snprintf(d->result, sizeof d->result, "<pid>");
	if (buf[0])
		snprintf(d->detail, sizeof d->detail, "(%s)", buf);
}

/* a helper the driver ran succeeded: it exec'd and exited 0 */
bool ct_proc_ok(const struct ct_event *ev)
{
	int64_t st = 0, eerr = 0;

	if (!ev->has_exit)
		return false;
	if (ev->call == CT_CALL_posix_spawn || ev->call == CT_CALL_posix_spawnp)
		return ev->ret == 0;
	ct_rec_i64(&ev->enter, CT_FLD_ARG2, &eerr);
	ct_rec_i64(&ev->exit, CT_FLD_ARG, &st);
	return ev->ret > 0 && !eerr && WIFEXITED((int)st) && WEXITSTATUS((int)st) == 0;
}

/* the file-system calls on NVIDIA paths (format 1.5, shim/hooks_fs.c):
 * 'mknod("/dev/nvidiactl", S_IFCHR|0666, 195:255)', 'symlink("../nvidiactl",
 * "/dev/char/195:255")'; a stat that succeeded: detail "(S_IFCHR|0666 195:255)" */
static void describe_fs(const struct ct_event *ev, struct ct_desc *d)
{
	const unsigned char *p;
	uint16_t len;
	uint32_t u;
	uint64_t rdev;
	int64_t a;
	char buf[64];
	bool fop = ev->call == CT_CALL_fopen || ev->call == CT_CALL_fopen64;
	char *ta = d->text_args;
	size_t tl = sizeof d->text_args;

	if (ct_rec_u32(&ev->enter, CT_FLD_DIRFD, &u))
		ct_appendf(ta, tl, (int32_t)u == -100 ? "AT_FDCWD, " : "%d, ", (int32_t)u);
	if (rstr(&ev->enter, CT_FLD_TARGET, &p, &len)) {
		append_quoted(ta, tl, p, len);
		ct_appendf(ta, tl, ", ");
	}
	if (rstr(&ev->enter, CT_FLD_PATH, &p, &len)) {
		set_target(d, p, len);
		append_quoted(ta, tl, p, len);
	}
	if (fop && rstr(&ev->enter, CT_FLD_TEXT, &p, &len)) {
		ct_appendf(ta, tl, ", ");
		append_quoted(ta, tl, p, len);
	}
	if (ct_rec_u32(&ev->enter, CT_FLD_MODE, &u))
		ct_appendf(ta, tl, ", %s", mode_str(u, buf, sizeof buf));
	if (ct_rec_u64(&ev->enter, CT_FLD_RDEV, &rdev))
		ct_appendf(ta, tl, ", %u:%u", (unsigned)(rdev >> 32), (unsigned)rdev);
	if (ct_rec_i64(&ev->enter, CT_FLD_ARG, &a))
		ct_appendf(ta, tl, ", %s",
			   ev->call == CT_CALL_access ? amode_str(a, buf, sizeof buf)
						      : (snprintf(buf, sizeof buf, "%" PRId64, a), buf));
	if (ct_rec_i64(&ev->enter, CT_FLD_ARG2, &a))
		ct_appendf(ta, tl, ", %" PRId64, a);
	if (!d->has_result)
		return;
	if (fop) {
		if (d->ret) {
			snprintf(d->result, sizeof d->result, "FILE");
		} else {
			d->ret = -1; /* NULL: a failure, as -1 is for the others */
			d->result_name = d->errno_name;
			snprintf(d->result, sizeof d->result, "NULL %s (%s)",
				 d->errno_name ? d->errno_name : "?", strerror(d->err));
		}
		return;
	}
	errno_result(d);
	if (d->ret == 0 && ev->has_exit && ct_rec_u32(&ev->exit, CT_FLD_MODE, &u)) {
		ct_appendf(d->detail, sizeof d->detail, "(%s", mode_str(u, buf, sizeof buf));
		if (ct_rec_u64(&ev->exit, CT_FLD_RDEV, &rdev))
			ct_appendf(d->detail, sizeof d->detail, " %u:%u", (unsigned)(rdev >> 32),
				   (unsigned)rdev);
		ct_appendf(d->detail, sizeof d->detail, ")");
	}
}

/* RTLD_DEFAULT / RTLD_NEXT are 0 and -1 on glibc */
static void sb_handle(struct ct_sb *b, uint64_t h)
{
	if (h == 0) {
		ct_sb_str(b, "RTLD_DEFAULT");
	} else if (h == UINT64_MAX) {
		ct_sb_str(b, "RTLD_NEXT");
	} else {
		sb_addr(b, h);
	}
}

static void describe_loader(const struct ct_event *ev, struct ct_desc *d)
{
	const unsigned char *p;
	uint16_t len;
	uint32_t u;
	uint64_t h;
	int64_t lmid;
	char buf[256];
	struct ct_sb b;

	ct_sb_init(&b, d->text_args, sizeof d->text_args);
	switch (ev->call) {
	case CT_CALL_dlopen:
	case CT_CALL_dlmopen:
		if (ct_rec_i64(&ev->enter, CT_FLD_LMID, &lmid)) {
			if (lmid == -1) {
				ct_sb_str(&b, "LM_ID_NEWLM, ");
			} else if (lmid == 0) {
				ct_sb_str(&b, "LM_ID_BASE, ");
			} else {
				ct_sb_i64(&b, lmid);
				ct_sb_str(&b, ", ");
			}
		}
		if (rstr(&ev->enter, CT_FLD_LIBNAME, &p, &len)) {
			set_target(d, p, len);
			sb_quoted(&b, p, len);
		} else if (ev->has_enter) {
			snprintf(d->target, sizeof d->target, "(main program)");
			ct_sb_str(&b, "NULL");
		}
		if (ct_rec_u32(&ev->enter, CT_FLD_DLFLAGS, &u)) {
			ct_sb_str(&b, ", ");
			ct_sb_str(&b, ct_dlopen_flags_str((int)u, buf, sizeof buf));
		}
		break;
	case CT_CALL_dlsym:
	case CT_CALL_dlvsym:
		if (ct_rec_u64(&ev->enter, CT_FLD_HANDLE, &h))
			sb_handle(&b, h);
		if (ev_str(ev, CT_FLD_SYMBOL, &p, &len)) {
			set_target(d, p, len);
			ct_sb_str(&b, ", ");
			sb_quoted(&b, p, len);
		}
		if (ev_str(ev, CT_FLD_SYMVER, &p, &len)) {
			ct_sb_str(&b, ", ");
			sb_quoted(&b, p, len);
		}
		break;
	case CT_CALL_dlclose:
		if (ct_rec_u64(&ev->enter, CT_FLD_HANDLE, &h))
			sb_handle(&b, h);
		if (ev_str(ev, CT_FLD_REALPATH, &p, &len)) {
			set_target(d, p, len);
			ct_sb_str(&b, " ");
			sb_quoted(&b, p, len);
		} else if (ev->has_enter) {
			snprintf(d->target, sizeof d->target,
				 ct_stable() && h ? CT_ADDR_HIDDEN : "0x%" PRIx64, h);
		}
		break;
	}
	if (!d->has_result)
		return;
	ct_sb_init(&b, d->result, sizeof d->result);
	if (ev->call == CT_CALL_dlclose) {
		ct_sb_i64(&b, d->ret);
	} else if (d->ret == 0) {
		d->result_name = "NULL";
		ct_sb_str(&b, "NULL");
	} else {
		d->ret_is_addr = true;
		sb_addr(&b, (uint64_t)d->ret);
	}
	ct_sb_init(&b, d->detail, sizeof d->detail);
	if (ev->call != CT_CALL_dlclose && rstr(&ev->exit, CT_FLD_REALPATH, &p, &len) &&
	    (strlen(d->target) != len || memcmp(d->target, p, len))) {
		ct_sb_str(&b, "-> ");
		sb_quoted(&b, p, len);
	}
	if (ev->has_exit && ct_rec_u32(&ev->exit, CT_FLD_WRAPPED, &u) && u) {
		ct_sb_str(&b, d->detail[0] ? " " : "");
		ct_sb_str(&b, "(cutrace wrapper)");
	}
	if (rstr(&ev->exit, CT_FLD_DLERROR, &p, &len)) {
		ct_sb_str(&b, d->detail[0] ? "  " : "");
		ct_sb_str(&b, "dlerror: ");
		sb_quoted(&b, p, len);
	}
}

static void describe_cuda(const struct ct_event *ev, struct ct_desc *d)
{
	const unsigned char *p;
	uint16_t len;
	int64_t v;
	uint64_t u64;
	uint32_t u;
	const char *name = NULL;
	struct ct_sb b;

	ct_sb_init(&b, d->text_args, sizeof d->text_args);
	if (ev->call == CT_CALL_cuGetProcAddress || ev->call == CT_CALL_cuGetProcAddress_v2) {
		if (ev_str(ev, CT_FLD_SYMBOL, &p, &len)) {
			set_target(d, p, len);
			sb_quoted(&b, p, len);
		}
		if (ct_rec_u32(&ev->enter, CT_FLD_CUDAVER, &u)) {
			ct_sb_str(&b, ", ");
			ct_sb_i64(&b, (int32_t)u);
		}
		if (ct_rec_u64(&ev->enter, CT_FLD_GPAFLAGS, &u64)) {
			ct_sb_str(&b, ", 0x");
			ct_sb_hex(&b, u64);
		}
	} else if (ev->has_enter) {
		if (ct_rec_i64(&ev->enter, CT_FLD_ARG, &v)) {
			const char *k = arg_key(ev->call, false);
			bool hex = !strcmp(k, "ctx") || !strcmp(k, "ptr") || !strcmp(k, "flags");
			ct_sb_str(&b, k);
			if (hex && arg_is_addr(k)) {
				ct_sb_str(&b, "=");
				sb_addr(&b, (uint64_t)v);
			} else if (hex) {
				ct_sb_str(&b, "=0x");
				ct_sb_hex(&b, (uint64_t)v);
			} else {
				ct_sb_str(&b, "=");
				ct_sb_i64(&b, v);
			}
		}
		if (ct_rec_i64(&ev->enter, CT_FLD_ARG2, &v)) {
			ct_sb_str(&b, ", ");
			ct_sb_str(&b, arg_key(ev->call, true));
			ct_sb_str(&b, "=");
			ct_sb_i64(&b, v);
		}
	}
	ct_sb_init(&b, d->detail, sizeof d->detail);
	if (rstr(&ev->enter, CT_FLD_ENV, &p, &len)) {
		ct_sb_str(&b, "[");
		/* the environment is cut to leave room for the "] " */
		if (len > b.last - b.p - 1)
			len = (uint16_t)(b.last - b.p - 1);
		ct_sb_mem(&b, (const char *)p, len);
		ct_sb_str(&b, "] ");
	}
	if (!d->has_result)
		return;
	switch (d->fam) {
	case CT_FAM_DRIVER: name = ct_cu_result_name((int)d->ret); break;
	case CT_FAM_RUNTIME: name = ct_cudart_error_name((int)d->ret); break;
	case CT_FAM_NVML: name = ct_nvml_return_name((int)d->ret); break;
	}
	d->result_name = name;
	{
		struct ct_sb r;
		ct_sb_init(&r, d->result, sizeof d->result);
		if (name)
			ct_sb_str(&r, name);
		if (name && d->ret != 0)
			ct_sb_str(&r, " (");
		if (!name || d->ret != 0)
			ct_sb_i64(&r, d->ret);
		if (name && d->ret != 0)
			ct_sb_str(&r, ")");
	}
	if (!ev->has_exit)
		return;
	if (ct_rec_i64(&ev->exit, CT_FLD_OUT, &v)) {
		ct_sb_str(&b, "-> ");
		ct_sb_str(&b, out_key(ev->call));
		ct_sb_str(&b, " ");
		ct_sb_i64(&b, v);
	}
	if (ct_rec_u64(&ev->exit, CT_FLD_OUTPTR, &u64)) {
		ct_sb_str(&b, "-> ");
		ct_sb_str(&b, outptr_key(ev->call));
		ct_sb_str(&b, " ");
		sb_addr(&b, u64);
	}
	if (rstr(&ev->exit, CT_FLD_TEXT, &p, &len)) {
		ct_sb_str(&b, "-> ");
		sb_quoted(&b, p, len);
	}
	if (ct_rec_u64(&ev->exit, CT_FLD_PFN, &u64)) {
		ct_sb_str(&b, "-> pfn ");
		sb_addr(&b, u64);
	}
	if (ct_rec_u32(&ev->exit, CT_FLD_WRAPPED, &u) && u)
		ct_sb_str(&b, " (cutrace wrapper)");
	if (ct_rec_u32(&ev->exit, CT_FLD_SYMSTATUS, &u)) {
		const char *st = symstatus_name((int32_t)u);
		if (st && u) {
			ct_sb_str(&b, " symbol status ");
			ct_sb_str(&b, st);
			ct_sb_str(&b, " (");
			ct_sb_i64(&b, (int32_t)u);
			ct_sb_str(&b, ")");
		} else if (!st) {
			ct_sb_str(&b, " symbol status ");
			ct_sb_i64(&b, (int32_t)u);
		}
	}
}

static void describe_note(const struct ct_event *ev, struct ct_desc *d)
{
	const unsigned char *p;
	uint16_t len;

	d->call = "note";
	d->returned = true;
	d->ok = true;
	if (ev_str(ev, CT_FLD_TEXT, &p, &len)) {
		set_target(d, p, len);
		append_quoted(d->text_args, sizeof d->text_args, p, len);
	}
	/* the process snapshot (since 1.3): what it found, in the detail */
	if (ev_str(ev, CT_FLD_MAPLIBS, &p, &len)) {
		static const uint16_t tags[] = { CT_FLD_MAPLIBS, CT_FLD_MOUNT, CT_FLD_LDCACHE };
		static const char *const what[] = { "mapped: ", "libcuda's mount: ", "ld.so.cache: " };
		for (size_t i = 0; i < 3; i++) {
			char v[512];
			size_t n;
			if (!ev_str(ev, tags[i], &p, &len))
				continue;
			n = len < sizeof v - 1 ? len : sizeof v - 1;
			memcpy(v, p, n);
			v[n] = 0;
			for (char *c = v; *c; c++)
				if (*c == '\n' || (unsigned char)*c < 0x20)
					*c = ',';
			ct_appendf(d->detail, sizeof d->detail, "%s%s%s", d->detail[0] ? "; " : "", what[i],
				   v[0] ? v : "(none)");
		}
	}
}

static void describe_inject(const struct ct_event *ev, struct ct_desc *d)
{
	struct ct_fieldv f;
	char buf[24];

	if (!ct_ev_field(ev, CT_FLD_INJECT, &f) || f.len < 8)
		return;
	d->has_inject = true;
	d->injected = true;
	memcpy(&d->inject_rule, f.data, 4);
	memcpy(&d->inject_action, f.data + 4, 4);
	ct_appendf(d->detail, sizeof d->detail, "%s[injected: rule %u, %s]", d->detail[0] ? "  " : "",
		   d->inject_rule, ct_inject_action_name(d->inject_action, buf, sizeof buf));
}

static bool family_ok(const struct ct_event *ev, const struct ct_desc *d)
{
	switch (d->fam) {
	case CT_FAM_IO:
		if (d->is_ioctl && d->ioctl.has_ok)
			return d->ioctl.ok;
		return d->ret >= 0;
	case CT_FAM_LOADER:
		return ev->call == CT_CALL_dlclose ? d->ret == 0 : d->ret != 0;
	case CT_FAM_DRIVER:
	case CT_FAM_RUNTIME:
	case CT_FAM_NVML:
		return d->ret == 0;
	case CT_FAM_SHIM:
		return true;
	case CT_FAM_FS:
		if (ct_proc_call(ev->call))
			return ct_proc_ok(ev);
		return d->ret >= 0;
	default:
		return d->ret >= 0;
	}
}

void ct_describe(const struct ct_trace *t, const struct ct_event *ev, struct ct_desc *d)
{
	ct_describe_ex(t, ev, d, CT_DESC_ARGS);
}

void ct_describe_ex(const struct ct_trace *t, const struct ct_event *ev, struct ct_desc *d, unsigned what)
{
	/* clear the scalars; the strings only need their first byte, the ioctl
	 * part is cleared by ct_describe_ioctl, args and the arena are counted */
	memset(d, 0, offsetof(struct ct_desc, target));
	d->target[0] = d->text_args[0] = d->detail[0] = 0;
	d->is_ioctl = false;
	d->nv = NULL;
	d->nargs = 0;
	d->arg_klens = 0;
	d->arena_used = 0;
	d->call = ct_call_name(ev->call);
	d->fam = ct_call_family(ev->call);
	d->family = ct_family_name(d->fam);
	d->returned = ev->has_exit;
	d->has_result = ev->has_exit;
	d->ret = ev->ret;
	d->err = ev->has_exit ? ev->err : 0;
	d->errno_name = d->err ? ct_errno_name(d->err) : NULL;
	d->injected = (ev->flags & CT_RF_INJECTED) != 0;
	memcpy(d->result, "?", 2);

	if (ev->type == CT_REC_NOTE) {
		d->is_note = true;
		describe_note(ev, d);
	} else {
		switch (d->fam) {
		case CT_FAM_IO: describe_io(t, ev, d); break;
		case CT_FAM_LOADER: describe_loader(ev, d); break;
		case CT_FAM_DRIVER: case CT_FAM_RUNTIME: case CT_FAM_NVML: describe_cuda(ev, d); break;
		case CT_FAM_FS:
			if (ct_proc_call(ev->call))
				describe_proc(ev, d);
			else
				describe_fs(ev, d);
			break;
		default:
			if (d->has_result)
				snprintf(d->result, sizeof d->result, "%" PRId64, d->ret);
		}
		if (!ev->has_enter && !d->text_args[0])
			snprintf(d->text_args, sizeof d->text_args, "<enter record lost>");
		d->ok = d->returned && family_ok(ev, d);
	}
	describe_inject(ev, d);
	if (what & CT_DESC_ARGS)
		collect_args(d, ev);
}

bool ct_desc_json_raw;

void ct_desc_args_json(struct ct_json *j, const struct ct_desc *d)
{
	ct_desc_args_json_ex(j, d, ct_desc_json_raw);
}

/* the writer's own path, for a pretty document (the direct writes below are compact) */
static void args_json_pretty(struct ct_json *j, const struct ct_desc *d, bool raw)
{
	char key[64];

	/* every key is a literal of this file or "field_N": nothing to escape */
	ct_json_obj_begin(j);
	for (unsigned i = 0; i < d->nargs; i++) {
		const struct ct_desc_arg *a = &d->args[i];
		size_t kn = a->klen;
		if (a->kind == CT_ARG_BYTES && !raw) {
			/* raw memory only with --raw: it is most of the output's size */
			if (kn > sizeof key - 7)
				kn = sizeof key - 7;
			memcpy(key, a->key, kn);
			memcpy(key + kn, "_bytes", 6);
			ct_json_key_plain(j, key, kn + 6);
			ct_json_uint(j, a->len);
			continue;
		}
		ct_json_key_plain(j, a->key, kn);
		switch (a->kind) {
		case CT_ARG_STR: ct_json_str(j, a->s); break;
		case CT_ARG_INT: ct_json_int(j, a->i); break;
		case CT_ARG_UINT: ct_json_uint(j, a->u); break;
		case CT_ARG_HEX: ct_json_hexnum(j, a->u); break;
		case CT_ARG_BOOL: ct_json_bool(j, a->b); break;
		case CT_ARG_BYTES: ct_json_hex(j, a->bytes, a->len); break;
		}
	}
	ct_json_obj_end(j);
}

/* the longest key written: KEY_bytes keeps this much of KEY */
#define ARGS_KEY_MAX 57

char *ct_desc_args_at(struct ct_json *j, char *o, const struct ct_desc *d, bool raw)
{
	o = ct_jw_need(j, o, 1);
	*o++ = '{';
	for (unsigned i = 0; i < d->nargs; i++) {
		const struct ct_desc_arg *a = &d->args[i];
		size_t kn = a->klen;
		/* every key is a literal of this file or "field_N": nothing to
		 * escape.  Room for the key and a number or a "0x..." string. */
		if (kn > ARGS_KEY_MAX)
			kn = ARGS_KEY_MAX;
		o = ct_jw_need(j, o, ARGS_KEY_MAX + 40);
		if (i)
			*o++ = ',';
		*o++ = '"';
		ct_json_copy_short(o, a->key, kn);
		o += kn;
		if (a->kind == CT_ARG_BYTES && !raw) {
			/* raw memory only with --raw: it is most of the output's size */
			o = CT_JW_LIT(o, "_bytes\":");
			o = ct_jw_u64(o, a->len);
			continue;
		}
		/* (a key is cut only for KEY_bytes; longer ones are not made) */
		if (kn != a->klen) {
			o = ct_jw_esc(j, o, a->key + kn, a->klen - kn);
			o = ct_jw_need(j, o, 40);
		}
		*o++ = '"';
		*o++ = ':';
		switch (a->kind) {
		case CT_ARG_STR:
			o = a->s ? ct_jw_str(j, o, a->s, strlen(a->s)) : CT_JW_LIT(o, "null");
			break;
		case CT_ARG_INT: o = ct_jw_i64(o, a->i); break;
		case CT_ARG_UINT: o = ct_jw_u64(o, a->u); break;
		case CT_ARG_HEX: o = ct_jw_hexnum(o, a->u); break;
		case CT_ARG_BOOL: o = ct_jw_bool(o, a->b); break;
		case CT_ARG_BYTES: o = ct_jw_hex(j, o, a->bytes, a->len); break;
		}
	}
	o = ct_jw_need(j, o, 1);
	*o++ = '}';
	return o;
}

void ct_desc_args_json_ex(struct ct_json *j, const struct ct_desc *d, bool raw)
{
	if (j->pretty) {
		args_json_pretty(j, d, raw);
		return;
	}
	ct_json_value_begin(j);
	ct_json_done(j, ct_desc_args_at(j, ct_json_at(j), d, raw));
	/* as ct_json_obj_end: a finished top-level value goes out at once */
	if (j->depth == 0)
		ct_json_flush(j);
}

char *ct_desc_result_at(struct ct_json *j, char *o, const struct ct_desc *d)
{
	o = ct_jw_need(j, o, 64);
	o = CT_JW_LIT(o, ",\"result\":");
	if (d->has_result && d->ret_is_addr && d->ret && ct_stable())
		o = CT_JW_LIT(o, "\"" CT_ADDR_HIDDEN "\""); /* --no-time */
	else
		o = d->has_result ? ct_jw_i64(o, d->ret) : CT_JW_LIT(o, "null");
	o = CT_JW_KPLAIN(j, o, "\"result_name\"", d->result_name);
	o = ct_jw_need(j, o, 64);
	o = CT_JW_LIT(o, ",\"errno\":");
	o = ct_jw_i64(o, d->err);
	return CT_JW_KPLAIN(j, o, "\"errno_name\"", d->errno_name);
}
