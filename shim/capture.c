/*
 * What an NVIDIA ioctl record holds, and reading program memory safely.
 *
 * The driver reports most failures inside the parameter block
 * (tracer/decode/ABI.md §1: ioctl() == 0 with status != 0 is the normal
 * failure), so the record keeps the block before and after the call, the
 * RM_CONTROL/RM_ALLOC parameters behind its pointer, and the version strings that
 * NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION returns behind user pointers.
 * Decoding is the tracer's job; the shim only copies bytes, bounded per kind:
 *
 *   frontend/RM block   size from _IOC_SIZE(request); first 1024 bytes, plus
 *                       the last 64 when it is bigger (UVM keeps rmStatus at
 *                       the end of its large blocks)
 *   nvidia-uvm          plain command numbers: size from the generated per-
 *                       version table (never from _IOC_SIZE: ABI.md §6, §11.2)
 *   CARD_INFO           after the call only (the kernel zeroes it first), up
 *                       to 4096 bytes = 56 entries
 *   RM_CONTROL payload  after the call, up to 2048 bytes of paramsSize
 *   RM_ALLOC params     after the call, up to 256 bytes
 *   XFER inner block    before and after, up to 1024 bytes; an RM_CONTROL or
 *                       RM_ALLOC inside gets its params (and the
 *                       GET_BUILD_VERSION strings) like a direct call: the
 *                       exit record then holds two PAYLOAD_SIZE + PAYLOAD
 *                       pairs, the inner block's first, the params' second
 *
 * Program pointers are never trusted: ct_safe_copy reads through
 * process_vm_readv the first time it meets a page and remembers the pages it
 * could read, so the common case (libcuda's blocks live on its stack and in a
 * few heap pages) is a plain memcpy.
 */
#include "shim.h"
#include "clock.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cutrace_gen/shim_tables.h"

#define CAP_BLOCK    1024u
#define CAP_TAIL     64u
#define CAP_CARDINFO 4096u
#define CAP_CONTROL  2048u
#define CAP_ALLOC    256u
#define CAP_XFER     1024u
#define CAP_STRING   256u

/* frontend / RM escape numbers (ABI.md §2a, §2b) */
#define NR_CARD_INFO   200
#define NR_XFER        211
#define NR_RM_CONTROL  0x2a
#define NR_RM_ALLOC    0x2b
/* RM control with string pointers in its payload (ABI.md §4) */
#define CMD_GET_BUILD_VERSION 0x101u

/* ---- safe reads of program memory ------------------------------------------- */
#define PAGE_SHIFT_ 12
#define PC_SLOTS 256
static inline unsigned pc_slot(uintptr_t pg)
{
	return (unsigned)((pg ^ (pg >> 8) ^ (pg >> 16)) & (PC_SLOTS - 1));
}

/* a page known readable: page number + 1, and the ct_mem_epoch it was
 * learned in (hooks_mem.c: munmap & co. start a new epoch) */
static uintptr_t page_ok[PC_SLOTS];
static uint32_t page_ep[PC_SLOTS];

static inline bool page_known(uintptr_t pg, uint32_t ep)
{
	unsigned i = pc_slot(pg);

	return __atomic_load_n(&page_ok[i], __ATOMIC_RELAXED) == pg + 1 &&
	       __atomic_load_n(&page_ep[i], __ATOMIC_RELAXED) == ep;
}


ssize_t ct_safe_copy(void *dst, const void *src, size_t n)
{
	uintptr_t a = (uintptr_t)src, first, last, pg;
	struct iovec l, r;
	ssize_t got;
	uint32_t ep;

	if (n == 0)
		return 0;
	if (!src || a + n < a)
		return -1;
	first = a >> PAGE_SHIFT_;
	last = (a + n - 1) >> PAGE_SHIFT_;
	ep = __atomic_load_n(&ct_mem_epoch, __ATOMIC_SEQ_CST);
	if (last - first < 4) {
		for (pg = first; pg <= last; pg++)
			if (!page_known(pg, ep))
				break;
		if (pg > last) {
			memcpy(dst, src, n);
			return (ssize_t)n;
		}
	}
	/* the kernel checks the mapping for us: EFAULT instead of SIGSEGV */
	l.iov_base = dst;
	l.iov_len = n;
	r.iov_base = (void *)src;
	r.iov_len = n;
	got = syscall(SYS_process_vm_readv, getpid(), &l, 1UL, &r, 1UL, 0UL);
	if (got <= 0)
		return -1;
	/* remembered for the epoch read before the kernel's check: if munmap
	 * & co. ran since, the entry is already out of date */
	for (pg = first; pg <= ((a + (size_t)got - 1) >> PAGE_SHIFT_); pg++) {
		unsigned i = pc_slot(pg);
		__atomic_store_n(&page_ep[i], ep, __ATOMIC_RELAXED);
		__atomic_store_n(&page_ok[i], pg + 1, __ATOMIC_RELAXED);
	}
	return got;
}

/* the pages this thread last found in page_ok: [lo, hi), in epoch ep (one
 * thread-local block: one address computation for the three) */
static CT_TLS struct {
	uintptr_t lo, hi;
	uint32_t ep;
} known;

/* true when [src, src+n) (n > 0) lies in at most two pages known to be
 * readable in this epoch */
static inline bool pages_known(const void *src, size_t n)
{
	uintptr_t a = (uintptr_t)src, first, last;
	uint32_t ep = __atomic_load_n(&ct_mem_epoch, __ATOMIC_SEQ_CST);

	if (likely(a - known.lo < known.hi - known.lo && n <= known.hi - a && ep == known.ep))
		return true;
	first = a >> PAGE_SHIFT_;
	last = (a + n - 1) >> PAGE_SHIFT_;
	if (last - first > 1 || a + n < a || !src)
		return false;
	if (page_known(first, ep) && page_known(last, ep)) {
		known.lo = first << PAGE_SHIFT_;
		known.hi = (last + 1) << PAGE_SHIFT_;
		known.ep = ep;
		return true;
	}
	return false;
}

static void copy_field_slow(struct ct_w *w, uint16_t tag, const void *src, uint32_t len,
			    uint32_t prefix_len, const void *prefix);

/* The common case inline: a field without prefix over memory already known
 * readable is a header store, a memcpy and the padding. */
static inline void copy_field(struct ct_w *w, uint16_t tag, const void *src, uint32_t len,
			      uint32_t prefix_len, const void *prefix)
{
	uint32_t room = CT_FIELD_PAD(len);

	if (likely(prefix_len == 0 && len > 0 && len <= 0xffff && w->p &&
		   (size_t)(w->end - w->p) >= sizeof(struct cutrace_field) + room &&
		   pages_known(src, len))) {
		struct cutrace_field f = { tag, (uint16_t)len };
		unsigned char *d = w->p + sizeof f;
		__builtin_memcpy(w->p, &f, sizeof f);
		memcpy(d, src, len);
		for (uint32_t i = len; i < room; i++)
			d[i] = 0;
		w->p = d + room;
		return;
	}
	copy_field_slow(w, tag, src, len, prefix_len, prefix);
}

/*
 * Copy program memory into a field reserved for len bytes.  A short copy
 * shrinks the field and turns the rest of its room into a filler field, so
 * the record stays well formed; nothing readable sets CT_RF_UNREADABLE.
 */
static __attribute__((noinline)) void copy_field_slow(struct ct_w *w, uint16_t tag, const void *src,
						     uint32_t len, uint32_t prefix_len, const void *prefix)
{
	unsigned char *d = ct_w_field_space(w, tag, prefix_len + len);
	ssize_t got;
	uint32_t have, room, used;

	if (!d)
		return;
	if (prefix_len)
		memcpy(d, prefix, prefix_len);
	got = ct_safe_copy(d + prefix_len, src, len);
	if (got == (ssize_t)len)
		return;
	have = prefix_len + (got > 0 ? (uint32_t)got : 0);
	if (got < 0)
		ct_w_flags(w, CT_RF_UNREADABLE);
	room = CT_FIELD_PAD(prefix_len + len);
	used = CT_FIELD_PAD(have);
	struct cutrace_field f = { tag, (uint16_t)have };
	memcpy(d - sizeof f, &f, sizeof f);
	memset(d + have, 0, used - have);
	if (room - used >= sizeof f) {
		struct cutrace_field pad = { CT_FLD_FILLER, (uint16_t)(room - used - sizeof f) };
		memcpy(d + used, &pad, sizeof pad);
	}
}

/* ---- what to capture for one request ------------------------------------------ */
enum { SP_NONE, SP_CARD_INFO, SP_RM_CONTROL, SP_RM_ALLOC, SP_XFER };

struct plan {
	uint32_t size;        /* parameter block size, 0 unknown */
	uint32_t head_before; /* bytes of the block copied before the call */
	uint32_t head_after;
	uint32_t tail_len;    /* bytes at the end of a big block */
	int special;
};

static uint32_t uvm_size(uint32_t nr)
{
	uint32_t size = 0, lo = 0, hi = CT_GEN_UVM_SIZES_N;
	bool found = false;

	/* rows are sorted by nr, then by the first driver version they apply
	 * to: find the first row of nr, then take the last that applies */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ct_gen_uvm_sizes[mid].nr < nr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (unsigned i = lo; i < CT_GEN_UVM_SIZES_N && ct_gen_uvm_sizes[i].nr == nr; i++) {
		const struct ct_gen_uvm_size *s = &ct_gen_uvm_sizes[i];
		if (!found || !ct_drv_code || s->min_drv <= ct_drv_code) {
			size = s->size;
			found = true;
		}
	}
	return size;
}

static void make_plan(uint32_t node, unsigned long req, struct plan *p)
{
	unsigned kind = node >> 16;

	memset(p, 0, sizeof *p);
	if (kind == CT_NODE_UVM || kind == CT_NODE_UVM_TOOLS) {
		p->size = uvm_size((uint32_t)req);
	} else {
		unsigned nr = (unsigned)(req & 0xff);
		p->size = (uint32_t)((req >> 16) & 0x3fff);
		if (nr == NR_CARD_INFO)
			p->special = SP_CARD_INFO;
		else if (nr == NR_RM_CONTROL && p->size >= 32)
			p->special = SP_RM_CONTROL;
		else if (nr == NR_RM_ALLOC && p->size >= 32)
			p->special = SP_RM_ALLOC;
		else if (nr == NR_XFER && p->size == 16)
			p->special = SP_XFER;
	}
	if (p->special == SP_CARD_INFO) {
		p->head_after = p->size < CAP_CARDINFO ? p->size : CAP_CARDINFO;
		return;
	}
	p->head_before = p->head_after = p->size < CAP_BLOCK ? p->size : CAP_BLOCK;
	if (p->size > CAP_BLOCK)
		p->tail_len = CAP_TAIL;
}

static uint32_t block_fields_size(const struct plan *p, uint32_t head)
{
	return (head ? ct_fsz(head) : 0) + (p->tail_len ? ct_fsz(4 + p->tail_len) : 0);
}

static void put_block(struct ct_w *w, const struct plan *p, const unsigned char *arg, uint32_t head)
{
	if (head)
		copy_field(w, CT_FLD_BLOCK, arg, head, 0, NULL);
	if (p->tail_len) {
		uint32_t off = p->size - p->tail_len;
		copy_field(w, CT_FLD_BLOCK_TAIL, arg + off, p->tail_len, 4, &off);
	}
}

static uint64_t rd64(const unsigned char *b) { uint64_t v; memcpy(&v, b, 8); return v; }
static uint32_t rd32(const unsigned char *b) { uint32_t v; memcpy(&v, b, 4); return v; }

uint32_t ct_revalidate_fd(int fd) CT_HIDDEN;
int ct_inject_ioctl_before(uint32_t node, unsigned long req, void *arg, int *err, uint32_t *after,
			   uint32_t *rule, uint64_t *delay_ns) CT_HIDDEN;
void ct_sleep_ns(uint64_t ns) CT_HIDDEN;
int ct_inject_ioctl_after(uint32_t node, unsigned long req, void *arg, uint32_t after, int *ret,
			  int *err, uint32_t *rule, uint32_t *action) CT_HIDDEN;

/* ---- the fast path ------------------------------------------------------------ */

static inline unsigned char *put_hdr(unsigned char *q, uint16_t tag, uint16_t len)
{
	struct cutrace_field f = { tag, len };

	__builtin_memcpy(q, &f, sizeof f);
	return q + sizeof f;
}

static inline unsigned char *put_u32(unsigned char *q, uint16_t tag, uint32_t v)
{
	q = put_hdr(q, tag, 4);
	__builtin_memcpy(q, &v, 4);
	return q + 4;
}

static inline unsigned char *put_u64(unsigned char *q, uint16_t tag, uint64_t v)
{
	q = put_hdr(q, tag, 8);
	__builtin_memcpy(q, &v, 8);
	return q + 8;
}

/* the header and the zero padding of a field of len (1..0xffff) bytes;
 * returns where its bytes go (put_data) */
static inline unsigned char *put_room(unsigned char *q, uint16_t tag, uint32_t len)
{
	uint32_t zero = 0;

	q = put_hdr(q, tag, (uint16_t)len);
	if (CT_FIELD_PAD(len) != len)
		__builtin_memcpy(q + CT_FIELD_PAD(len) - 4, &zero, 4);
	return q;
}

/* len bytes of memory known readable into the room of a field */
static inline void put_data(unsigned char *q, const void *src, uint32_t len)
{
	/* hide the bound on len: gcc would open-code a slow byte loop for it
	 * instead of calling libc's vector memcpy */
	__asm__("" : "+r"(len));
	memcpy(q, src, len);
}

/* len (1..0xffff) bytes of memory known readable */
static inline unsigned char *put_bytes(unsigned char *q, uint16_t tag, const void *src, uint32_t len)
{
	q = put_room(q, tag, len);
	put_data(q, src, len);
	return q + CT_FIELD_PAD(len);
}

/* the type and call fields of a record header (adjacent uint16_t) as one
 * store: gcc would otherwise load the merged constant from memory first */
static inline void put_type_call(struct cutrace_record *rec, uint16_t type, uint16_t call)
{
	union {
		uint16_t f[2];
		uint32_t w;
	} tc = { { type, call } };

	__builtin_memcpy(&rec->type, &tc.w, 4);
}

/*
 * Ask for the n (at most 16 count) slots from p on, soon to be written.  A
 * busy writer fills its run front to back, and the lines of a record it has
 * not touched for a lap of the ring come from L3 or memory: a recorded ioctl
 * with a 256-byte block writes 11 of them, and the hardware prefetchers do
 * not follow a stream of stores across pages.  Fetching the lines of the pair
 * four pairs ahead took 15-20 % off a recorded ioctl on the development VM
 * (bench/RESULTS.md).  Prefetches never fault: past the end of the mapping
 * they do nothing.
 */
static inline __attribute__((always_inline)) void prefetch_ahead(const unsigned char *p, uint64_t n)
{
#define PF_(i) __builtin_prefetch(p + (i) * CUTRACE_SLOT_SIZE, 1, 3)
	switch (n) {
	default: PF_(15); /* fall through */
	case 15: PF_(14); /* fall through */
	case 14: PF_(13); /* fall through */
	case 13: PF_(12); /* fall through */
	case 12: PF_(11); /* fall through */
	case 11: PF_(10); /* fall through */
	case 10: PF_(9); /* fall through */
	case 9: PF_(8); /* fall through */
	case 8: PF_(7); /* fall through */
	case 7: PF_(6); /* fall through */
	case 6: PF_(5); /* fall through */
	case 5: PF_(4); /* fall through */
	case 4: PF_(3); /* fall through */
	case 3: PF_(2); /* fall through */
	case 2: PF_(1); /* fall through */
	case 1: PF_(0); /* fall through */
	case 0: break;
	}
#undef PF_
}

/* bytes of an ioctl enter record around its block: the header, FD, NODE,
 * REQUEST, ARGP, BLOCK_SIZE and the BLOCK field's header; of an exit: the
 * header, struct cutrace_exit and the BLOCK field's header */
#define ENTER_FIXED ((uint32_t)sizeof(struct cutrace_record) + ct_fsz(4) * 3 + ct_fsz(8) * 2 + \
		     (uint32_t)sizeof(struct cutrace_field))
#define EXIT_FIXED  ((uint32_t)(sizeof(struct cutrace_record) + sizeof(struct cutrace_exit) + \
			     sizeof(struct cutrace_field)))

/*
 * The common case: no injection rule, a plain block (or an RM_CONTROL block,
 * whose payload pointer and paramsSize are read before the call: the driver
 * does not change them) of at most CAP_BLOCK bytes in pages already known
 * readable, the trace active.  Both records are reserved at once
 * (ring.h, ct_ring_pair_fast) and written with plain stores: their
 * sizes are exact, so no bounds checks.  The exit record is written before
 * the call too, all but its time, the result and the block after the call
 * (readers take it for padding until its commit), so that little has to be
 * kept across the call.  They hold exactly what the general path below writes.
 * Inlined twice: ctl is a constant in each copy.
 */
static inline __attribute__((always_inline)) int ioctl_fast(int fd, uint32_t node, unsigned long req,
							    void *arg, uint32_t size, bool ctl)
{
	const unsigned char *blk = arg, *pay = NULL;
	struct ct_ring *r = &ct_ring_main;
	uint32_t ps = 0, pay_len = 0, room = CT_FIELD_PAD(size), se, sx, tid;
	uint64_t n1, n2, s, p, *t, *ctr, t_enter, lim;
	unsigned char *qe, *qx, *qp = NULL;
	int ret, err;

	if (ctl) {
		pay = (const unsigned char *)(uintptr_t)rd64(blk + 16);
		ps = rd32(blk + 24);
		pay_len = pay ? (ps < CAP_CONTROL ? ps : CAP_CONTROL) : 0;
	}
	/* first, while little else is live across the call */
	t_enter = ct_clock_ns();
	se = ENTER_FIXED + room;
	sx = EXIT_FIXED + room + (pay ? ct_fsz(4) + ct_fsz(pay_len) : 0);
	n1 = (se + CUTRACE_SLOT_SIZE - 1) / CUTRACE_SLOT_SIZE;
	n2 = (sx + CUTRACE_SLOT_SIZE - 1) / CUTRACE_SLOT_SIZE;
	if (unlikely(ct_ring_pair_fast(r, &ct_tls_run, n1, n2, &s, &p, &t) < 0)) {
		ct_mark_degraded(ct_why_lost); /* counted as lost */
		return ct_real_ioctl(fd, req, arg);
	}
	ctr = ct_tls_run.ctr;

	struct cutrace_record *e = ct_ring_rec(r, p);
	struct cutrace_record *x = (struct cutrace_record *)(void *)((unsigned char *)e + n1 * CUTRACE_SLOT_SIZE);
	struct cutrace_exit *xe = (struct cutrace_exit *)(void *)(x + 1);
	tid = (uint32_t)(likely(ct_tls_tid) ? ct_tls_tid : ct_tid());
	e->seq = s;
	e->t_ns = t_enter;
	e->size = se;
	put_type_call(e, CT_REC_ENTER, CT_CALL_ioctl);
	e->tid = tid;
	e->flags = 0;
	qe = put_u32((unsigned char *)(e + 1), CT_FLD_FD, (uint32_t)fd);
	qe = put_u32(qe, CT_FLD_NODE, node);
	qe = put_u64(qe, CT_FLD_REQUEST, (uint64_t)req);
	qe = put_u64(qe, CT_FLD_ARGP, (uint64_t)(uintptr_t)arg);
	qe = put_u32(qe, CT_FLD_BLOCK_SIZE, size);
	qe = put_room(qe, CT_FLD_BLOCK, size);
	x->seq = s + n1;
	x->size = sx;
	put_type_call(x, CT_REC_EXIT, CT_CALL_ioctl);
	x->tid = tid;
	x->flags = 0;
	xe->enter_seq = s;
	xe->err = 0; /* the errno of a failed call is stored after it */
	xe->reserved = 0;
	qx = put_room((unsigned char *)(xe + 1), CT_FLD_BLOCK, size);
	if (pay)
		qp = put_u32(qx + room, CT_FLD_PAYLOAD_SIZE, ps);
	put_data(qe, blk, size);
	lim = ct_ring_lap_limit(r, s);
	ct_ring_commit_lim(r, t, s, lim, CT_TAG_BUSY, ctr);
	prefetch_ahead((const unsigned char *)e + 4 * (n1 + n2) * CUTRACE_SLOT_SIZE, n1 + n2);
	/* from here on the exit record: its head tag and slot */
	t += n1;
	s += n1;
	if (lim != UINT64_MAX)
		lim += n1;

	ret = ct_real_ioctl(fd, req, arg);
	/* nothing below changes errno (the program's own on success), but
	 * the careful copy of the payload, which puts it back */
	if (unlikely(ct_ring_lapped(r, lim))) {
		/* the call outlasted a lap of the ring (other threads recorded
		 * a whole ring meanwhile): the exit's slots are a newer
		 * record's now.  Counted as the commit would (ring.h). */
		__atomic_fetch_add(&r->hdr->dropped, 1, __ATOMIC_RELAXED);
		return ret;
	}
	xe->ret = ret;
	if (unlikely(ret < 0))
		xe->err = errno;
	x->t_ns = ct_clock_ns();
	put_data(qx, blk, size);
	if (pay) {
		if (pay_len && pages_known(pay, pay_len)) {
			put_bytes(qp, CT_FLD_PAYLOAD, pay, pay_len);
		} else {
			/* the careful copy shrinks the field (and flags the record)
			 * when the memory cannot be read */
			struct ct_w w = { .s = { .rec = x }, .p = qp, .end = (unsigned char *)x + sx };
			err = errno;
			copy_field_slow(&w, CT_FLD_PAYLOAD, pay, pay_len, 0, NULL);
			errno = err;
		}
	}
	ct_ring_commit_lim(r, t, s, lim, CT_TAG_PAD, ctr);
	return ret;
}

static int ioctl_general(int fd, uint32_t node, unsigned long req, void *arg);

/* Frontend escape numbers the fast path does not take as plain blocks:
 * RM_CONTROL (its payload too), CARD_INFO, RM_ALLOC, XFER.  One look-up
 * keeps every other request off the comparisons below. */
static const unsigned char nr_special[256] = {
	[NR_RM_CONTROL] = 1, [NR_RM_ALLOC] = 1, [NR_CARD_INFO] = 1, [NR_XFER] = 1,
};

/* An ioctl on a node the shim knows: the fast path when it applies, else
 * the general one (kept out of line so that the fast path stays small). */
int ct_ioctl_slow(int fd, uint32_t node, unsigned long req, void *arg) CT_HIDDEN;
int ct_ioctl_slow(int fd, uint32_t node, unsigned long req, void *arg)
{
	const unsigned char *blk = arg;
	unsigned kind = node >> 16;
	uint32_t size, nr = (uint32_t)(req & 0xff);

	/* ct_fast_ok: the trace is active, no injection rule (shim.h) */
	if (unlikely(!__atomic_load_n(&ct_fast_ok, __ATOMIC_ACQUIRE) || ct_busy))
		goto general;
	if (kind == CT_NODE_UVM || kind == CT_NODE_UVM_TOOLS) {
		size = uvm_size((uint32_t)req);
	} else {
		/* frontend requests all carry type 'F' (else: general path,
		 * which revalidates the fd) */
		if (unlikely(((req >> 8) & 0xff) != 'F')) {
			if (kind != CT_NODE_OTHER && kind != CT_NODE_DXG)
				goto general;
		}
		size = (uint32_t)((req >> 16) & 0x3fff);
		if (unlikely(nr_special[nr])) {
			if (nr == NR_RM_CONTROL && size >= 32) {
				if (size <= CAP_BLOCK && pages_known(blk, size) &&
				    rd32(blk + 8) != CMD_GET_BUILD_VERSION)
					return ioctl_fast(fd, node, req, arg, size, true);
				goto general;
			}
			if (nr == NR_CARD_INFO || (nr == NR_RM_ALLOC && size >= 32) ||
			    (nr == NR_XFER && size == 16))
				goto general;
		}
	}
	if (size && size <= CAP_BLOCK && pages_known(blk, size))
		return ioctl_fast(fd, node, req, arg, size, false);
general:
	return ioctl_general(fd, node, req, arg);
}

/*
 * What an RM_CONTROL or RM_ALLOC block points at, from the first (up to) 48
 * bytes of the block after the call: the params (bounded by paramsSize and a
 * cap) and, for GET_BUILD_VERSION, its three caller-owned string buffers.
 * The same for a direct call and for one inside NV_ESC_IOCTL_XFER_CMD.
 */
struct params {
	const unsigned char *pay;  /* NULL: nothing to record */
	uint32_t ps, pay_len;
	uint32_t str_len[3];
	uint64_t str_ptr[3];
};

static void plan_params(uint32_t nr, const unsigned char *head, uint32_t size, struct params *r)
{
	unsigned char bv[40];

	memset(r, 0, sizeof *r);
	if (nr == NR_RM_CONTROL) {
		r->pay = (const unsigned char *)(uintptr_t)rd64(head + 16);
		r->ps = rd32(head + 24);
		r->pay_len = r->ps < CAP_CONTROL ? r->ps : CAP_CONTROL;
		/* GET_BUILD_VERSION: three string buffers owned by the caller */
		if (rd32(head + 8) == CMD_GET_BUILD_VERSION && r->ps >= 40 && rd32(head + 28) == 0 &&
		    ct_safe_copy(bv, r->pay, 40) == 40) {
			uint32_t each = rd32(bv);
			if (each > CAP_STRING)
				each = CAP_STRING;
			for (int i = 0; i < 3; i++) {
				r->str_ptr[i] = rd64(bv + 8 + 8 * i);
				if (r->str_ptr[i] && each)
					r->str_len[i] = each;
			}
		}
	} else {
		r->pay = (const unsigned char *)(uintptr_t)rd64(head + 16);
		/* paramsSize: NVOS64 @32 (48-byte form), NVOS21 @24 (535+) */
		r->ps = size >= 48 ? rd32(head + 32) : rd32(head + 24);
		r->pay_len = r->ps <= 4096 ? (r->ps < CAP_ALLOC ? r->ps : CAP_ALLOC) : 0;
	}
	if (!r->pay)
		r->pay_len = 0;
}

static uint32_t params_fields_size(const struct params *r)
{
	uint32_t n = 0;

	if (!r->pay)
		return 0;
	n = ct_fsz(4) + ct_fsz(r->pay_len);
	for (int i = 0; i < 3; i++)
		if (r->str_len[i])
			n += ct_fsz(1 + r->str_len[i]);
	return n;
}

static void put_params(struct ct_w *w, const struct params *r)
{
	if (!r->pay)
		return;
	ct_w_u32(w, CT_FLD_PAYLOAD_SIZE, r->ps);
	copy_field(w, CT_FLD_PAYLOAD, r->pay, r->pay_len, 0, NULL);
	for (uint8_t i = 0; i < 3; i++)
		if (r->str_len[i])
			copy_field(w, CT_FLD_STRING, (const void *)(uintptr_t)r->str_ptr[i], r->str_len[i], 1, &i);
}

static __attribute__((noinline)) int ioctl_general(int fd, uint32_t node, unsigned long req, void *arg)
{
	unsigned char *blk = arg;
	unsigned char xf[16];
	struct plan p;
	struct ct_w w;
	uint64_t seq = 0, delay_ns = 0;
	uint32_t psz, rule = 0, action = 0, xfer_size = 0, after = 0;
	unsigned kind = node >> 16;
	int ret, err, inj_err = 0, injected = 0;
	bool rec, have_xfer = false;

	ct_ensure_init();
	if (ct_busy || ct_cfg.disabled)
		return ct_real_ioctl(fd, req, arg);
	/* frontend requests all carry type 'F'; anything else means the fd number
	 * now belongs to something else */
	if (kind != CT_NODE_UVM && kind != CT_NODE_UVM_TOOLS && ((req >> 8) & 0xff) != 'F' &&
	    kind != CT_NODE_OTHER && kind != CT_NODE_DXG) {
		node = ct_revalidate_fd(fd);
		if (!node)
			return ct_real_ioctl(fd, req, arg);
	}
	make_plan(node, req, &p);
	if (unlikely(ct_inj_active)) {
		/* error= and delay= act here; status=/version= after the real call */
		int r = ct_inject_ioctl_before(node, req, arg, &inj_err, &after, &rule, &delay_ns);
		if (r == 2)
			injected = 2;
		else if (r == 1)
			injected = 1;
	}

	psz = ct_fsz(4) * 3 + ct_fsz(8) * 2 + block_fields_size(&p, p.head_before);
	if (p.special == SP_XFER && ct_safe_copy(xf, blk, 16) == 16) {
		xfer_size = rd32(xf + 4);
		if (xfer_size > CAP_XFER)
			xfer_size = CAP_XFER;
		have_xfer = true;
		psz += ct_fsz(16) + ct_fsz(xfer_size);
	}
	rec = ct_w_begin(&w, CT_REC_ENTER, CT_CALL_ioctl, psz, injected ? CT_RF_INJECTED : 0);
	if (rec) {
		seq = w.s.seq;
		ct_w_u32(&w, CT_FLD_FD, (uint32_t)fd);
		ct_w_u32(&w, CT_FLD_NODE, node);
		ct_w_u64(&w, CT_FLD_REQUEST, (uint64_t)req);
		ct_w_u64(&w, CT_FLD_ARGP, (uint64_t)(uintptr_t)arg);
		ct_w_u32(&w, CT_FLD_BLOCK_SIZE, p.size);
		put_block(&w, &p, blk, p.head_before);
		if (have_xfer) {
			ct_w_field(&w, CT_FLD_XFER, xf, 16);
			copy_field(&w, CT_FLD_PAYLOAD, (const void *)(uintptr_t)rd64(xf + 8), xfer_size, 0, NULL);
		}
		ct_w_commit(&w);
	}
	/* delay= after the enter is in the file: a held call reads as one */
	if (delay_ns)
		ct_sleep_ns(delay_ns);

	if (injected == 2) {
		ret = -1;
		err = inj_err;
		action = CT_INJ_ERROR;
	} else {
		ret = ct_real_ioctl(fd, req, arg);
		/* on success errno is whatever the program had: keep it */
		err = errno;
		if (injected)
			action = CT_INJ_DELAY;
		if (after && ct_inject_ioctl_after(node, req, arg, after, &ret, &err, &rule, &action))
			injected = 1;
	}
	if (!rec)
		goto out;

	/* the exit record: block after the call, and what its pointers lead to */
	{
		unsigned char head[48];
		bool have_head = p.special != SP_NONE && p.special != SP_CARD_INFO && p.size >= 32 &&
				 ct_safe_copy(head, blk, p.size < 48 ? p.size : 48) > 0;
		struct params rm = { 0 }, inner = { 0 };
		uint32_t pay_len = 0, ps = 0;
		const unsigned char *pay = NULL;

		if (have_head && (p.special == SP_RM_CONTROL || p.special == SP_RM_ALLOC)) {
			plan_params(p.special == SP_RM_CONTROL ? NR_RM_CONTROL : NR_RM_ALLOC, head, p.size, &rm);
		} else if (have_xfer) {
			/* the inner block after the call, then (an RM_CONTROL or
			 * RM_ALLOC inside) what its pointer leads to, as for a direct call */
			uint32_t inr = rd32(xf) & 0xffu, isz = rd32(xf + 4);
			const unsigned char *iblk = (const unsigned char *)(uintptr_t)rd64(xf + 8);
			unsigned char ihead[48];
			pay = iblk;
			ps = isz;
			pay_len = xfer_size;
			if ((inr == NR_RM_CONTROL || inr == NR_RM_ALLOC) && isz >= 32 && isz <= CAP_XFER &&
			    ct_safe_copy(ihead, iblk, isz < 48 ? isz : 48) == (ssize_t)(isz < 48 ? isz : 48))
				plan_params(inr, ihead, isz, &inner);
		}
		if (!pay)
			pay_len = 0;
		psz = block_fields_size(&p, p.head_after) + (pay ? ct_fsz(4) + ct_fsz(pay_len) : 0) +
		      params_fields_size(&rm) + params_fields_size(&inner) + (injected ? ct_fsz(8) : 0);
		if (ct_w_begin(&w, CT_REC_EXIT, CT_CALL_ioctl, psz, injected ? CT_RF_INJECTED : 0)) {
			ct_w_exit(&w, seq, ret, ret < 0 ? err : 0);
			put_block(&w, &p, blk, p.head_after);
			if (pay) {
				ct_w_u32(&w, CT_FLD_PAYLOAD_SIZE, ps);
				copy_field(&w, CT_FLD_PAYLOAD, pay, pay_len, 0, NULL);
			}
			put_params(&w, &rm);
			put_params(&w, &inner);
			if (injected) {
				uint32_t inj[2] = { rule, action };
				ct_w_field(&w, CT_FLD_INJECT, inj, sizeof inj);
			}
			ct_w_commit(&w);
		}
	}
out:
	errno = err;
	return ret;
}
