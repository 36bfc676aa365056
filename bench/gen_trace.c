/*
 * bench_gen_trace: write a synthetic but realistic cutrace file, fast, for
 * the reader benchmark.  Records go through common/ring.c exactly as the shim
 * writes them (reserve, fill, commit), so the reader sees the real slot and
 * tag protocol.
 *
 *   bench_gen_trace [-e EVENTS] [-s SIZE] [-p PID] [-S SEED] OUT
 *
 * EVENTS calls (an enter and an exit record each; default 1000000).  The
 * mix and the record sizes follow a real trace of torch.cuda.init() on the
 * H200 machine (tests/fixtures/h200-580/torch: 43% ioctl, 37%
 * cuGetProcAddress_v2, 6% dlsym, 4% open64, 3% close, 2% dlopen; mostly
 * 2-slot records, a few RM_CONTROL payloads of up to 2 KiB).  Parameter
 * blocks carry real RM control commands and classes with their sizes, so the
 * reader's decoder does the work it does on a real trace.  Without -s the
 * file is just large enough that nothing wraps; with -s SIZE (bytes, k/M/G
 * suffix, e.g. the shim's default 16M) the file has that size and the ring
 * wraps when the events do not fit, as in a real long-running process.  The
 * file is extended with ftruncate: unwritten parts stay holes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cutrace/format.h"
#include "ring.h"

#define CTX_CAP (28u << 10) /* as the shim (trace.c CT_CTX_CAP) */

/* ---- a deterministic PRNG: the sizing pass and the writing pass agree ---- */
static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}

/* ---- record building ------------------------------------------------------ */
struct rec {
	unsigned char buf[CUTRACE_MAX_RECORD];
	unsigned char *p;
};

static void f_bytes(struct rec *r, uint16_t tag, const void *d, uint32_t len)
{
	r->p = ct_put_field(r->p, tag, d, (uint16_t)len);
}

static void f_u32(struct rec *r, uint16_t tag, uint32_t v) { f_bytes(r, tag, &v, 4); }
static void f_u64(struct rec *r, uint16_t tag, uint64_t v) { f_bytes(r, tag, &v, 8); }
static void f_str(struct rec *r, uint16_t tag, const char *s) { f_bytes(r, tag, s, (uint32_t)strlen(s)); }

static void f_pattern(struct rec *r, uint16_t tag, uint32_t len)
{
	static unsigned char pat[4096];

	if (!pat[1])
		for (unsigned i = 0; i < sizeof pat; i++)
			pat[i] = (unsigned char)(i * 7 + 3);
	f_bytes(r, tag, pat, len);
}

struct writer {
	struct ct_ring ring;
	int dry;             /* sizing pass: count slots only */
	uint64_t slots;      /* slots used (dry pass) */
	uint64_t t_ns;
	uint32_t pid;
};

/* start a record: header (and exit part) are filled in emit() */
static void rec_begin(struct rec *r, unsigned type)
{
	r->p = r->buf + sizeof(struct cutrace_record) +
	       (type == CT_REC_EXIT ? sizeof(struct cutrace_exit) : 0);
}

static uint64_t emit(struct writer *w, struct rec *r, unsigned type, unsigned call, uint32_t tid,
		     uint64_t enter_seq, int64_t ret, int err)
{
	uint32_t size = (uint32_t)(r->p - r->buf);
	struct ct_slot s;
	struct cutrace_record *h;

	if (w->dry) {
		w->slots += (size + CUTRACE_SLOT_SIZE - 1) / CUTRACE_SLOT_SIZE;
		return 0;
	}
	if (ct_ring_reserve(&w->ring, size, &s) < 0)
		return 0;
	h = s.rec;
	/* seq and size are set by the reserve; copy the rest after them */
	memcpy((unsigned char *)h + sizeof *h, r->buf + sizeof *h, size - sizeof *h);
	h->t_ns = w->t_ns;
	h->type = (uint16_t)type;
	h->call = (uint16_t)call;
	h->tid = tid;
	h->flags = 0;
	if (type == CT_REC_EXIT) {
		struct cutrace_exit x = { enter_seq, ret, err, 0 };
		memcpy(h + 1, &x, sizeof x);
	}
	ct_ring_commit(&w->ring, &s);
	return s.seq;
}

/* ---- the calls ------------------------------------------------------------- */
static const char *const syms[] = {
	"cuInit", "cuDriverGetVersion", "cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetName",
	"cuDeviceGetUuid_v2", "cuDeviceTotalMem_v2", "cuDeviceGetAttribute", "cuCtxCreate_v4",
	"cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2", "cuModuleLoadData", "cuLaunchKernel",
	"cuStreamCreate", "cuEventRecord", "cuGetErrorString", "cuDevicePrimaryCtxRetain",
};
#define NSYMS (sizeof syms / sizeof syms[0])

/* RM controls and classes libcuda uses at start-up, with their parameter
 * sizes for driver 580 (tracer/decode/ABI.md, control and class tables) */
static const struct ctl {
	uint32_t cmd, size;
} ctls[] = {
	{ 0x20800110, 132 },  { 0x2080014A, 268 }, { 0x20800170, 340 }, { 0x20801201, 32 },
	{ 0x20801227, 48 },   { 0x20801303, 1028 }, { 0x20801801, 16 }, { 0x20801823, 420 },
	{ 0x20800131, 4 },    { 0x208001A3, 56 },  { 0x2080122A, 24 },  { 0x20801701, 16 },
	{ 0x2080012F, 1464 }, { 0x2080121B, 9240 }, { 0x20800119, 4 },  { 0x20800195, 260 },
};
#define NCTLS (sizeof ctls / sizeof ctls[0])

static const struct cls {
	uint32_t cls, size;
} classes[] = {
	{ 0x0080, 56 }, { 0x2080, 4 }, { 0xa06c, 8 }, { 0x0041, 0 }, { 0x0002, 64 }, { 0x003e, 0 },
};
#define NCLASSES (sizeof classes / sizeof classes[0])

static void one_event(struct writer *w, unsigned k)
{
	struct rec r;
	uint32_t tid = w->pid + (rnd() % 8 == 0 ? 1 + rnd() % 3 : 0);
	uint32_t dice = rnd() % 100;
	uint64_t seq, dur = 500 + rnd() % 40000;

	if (dice < 43) { /* an NVIDIA ioctl */
		uint32_t kind = rnd() % 10, bs, pay = 0, nr, blk[12] = { 0 };
		uint64_t argp = 0x7ffd12340000ull + (rnd() % 4096) * 16;
		uint64_t pp = 0x7ffd12350000ull + (rnd() % 4096) * 16;
		blk[0] = 0xc1d00042;                   /* hRoot / hClient */
		blk[1] = 0xcaf00000 + rnd() % 64;      /* hObject(Parent) */
		if (kind < 6) {
			const struct ctl *c = &ctls[rnd() % NCTLS];
			nr = 0x2a; bs = 32; /* RM_CONTROL: NVOS54 */
			blk[2] = c->cmd;
			memcpy(&blk[4], &pp, 8);       /* params @16 */
			blk[6] = c->size;              /* paramsSize @24, status @28 = 0 */
			pay = c->size < 2048 ? c->size : 2048;
		} else if (kind < 8) {
			const struct cls *c = &classes[rnd() % NCLASSES];
			nr = 0x2b; bs = 48; /* RM_ALLOC: NVOS64 (libcuda 580) */
			blk[2] = 0xcaf10000 + rnd() % 4096; /* hObjectNew */
			blk[3] = c->cls;
			memcpy(&blk[4], &pp, 8);       /* pAllocParms @16 */
			blk[8] = c->size;              /* paramsSize @32, status @40 = 0 */
			pay = c->size;
		} else {
			nr = 0x29; bs = 16; /* RM_FREE: NVOS00, status @12 = 0 */
			blk[2] = 0xcaf10000 + rnd() % 4096;
		}
		rec_begin(&r, CT_REC_ENTER);
		f_u32(&r, CT_FLD_FD, 5 + rnd() % 4);
		f_u32(&r, CT_FLD_NODE, (CT_NODE_CTL << 16) | 255);
		f_u64(&r, CT_FLD_REQUEST, _IOC(_IOC_READ | _IOC_WRITE, 'F', nr, bs));
		f_u64(&r, CT_FLD_ARGP, argp);
		f_u32(&r, CT_FLD_BLOCK_SIZE, bs);
		f_bytes(&r, CT_FLD_BLOCK, blk, bs);
		seq = emit(w, &r, CT_REC_ENTER, CT_CALL_ioctl, tid, 0, 0, 0);
		w->t_ns += dur;
		rec_begin(&r, CT_REC_EXIT);
		f_bytes(&r, CT_FLD_BLOCK, blk, bs);
		if (pay) {
			f_u32(&r, CT_FLD_PAYLOAD_SIZE, pay);
			f_pattern(&r, CT_FLD_PAYLOAD, pay);
		}
		emit(w, &r, CT_REC_EXIT, CT_CALL_ioctl, tid, seq, 0, 0);
	} else if (dice < 80) { /* cuGetProcAddress_v2 */
		const char *s = syms[rnd() % NSYMS];
		rec_begin(&r, CT_REC_ENTER);
		f_str(&r, CT_FLD_SYMBOL, s);
		f_u32(&r, CT_FLD_CUDAVER, 13000);
		f_u64(&r, CT_FLD_GPAFLAGS, 0);
		seq = emit(w, &r, CT_REC_ENTER, CT_CALL_cuGetProcAddress_v2, tid, 0, 0, 0);
		w->t_ns += dur / 10;
		rec_begin(&r, CT_REC_EXIT);
		f_u64(&r, CT_FLD_PFN, 0x7f12a0000000ull + rnd() % 0x100000);
		f_u32(&r, CT_FLD_SYMSTATUS, 0);
		emit(w, &r, CT_REC_EXIT, CT_CALL_cuGetProcAddress_v2, tid, seq, 0, 0);
	} else if (dice < 86) { /* dlsym */
		rec_begin(&r, CT_REC_ENTER);
		f_u64(&r, CT_FLD_HANDLE, 0x55aa00001000ull);
		f_str(&r, CT_FLD_SYMBOL, syms[rnd() % NSYMS]);
		seq = emit(w, &r, CT_REC_ENTER, CT_CALL_dlsym, tid, 0, 0, 0);
		w->t_ns += dur / 20;
		rec_begin(&r, CT_REC_EXIT);
		f_u64(&r, CT_FLD_PFN, 0x7f12a0000000ull + rnd() % 0x100000);
		emit(w, &r, CT_REC_EXIT, CT_CALL_dlsym, tid, seq, 0x7f12a0001000ll, 0);
	} else if (dice < 94) { /* open64 of a node, or its close */
		static const char *const nodes[] = { "/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm",
						     "/dev/nvidia-uvm-tools" };
		unsigned n = rnd() % 4;
		if (k % 2) {
			rec_begin(&r, CT_REC_ENTER);
			f_str(&r, CT_FLD_PATH, nodes[n]);
			f_u32(&r, CT_FLD_OFLAGS, O_RDWR | O_CLOEXEC);
			f_u32(&r, CT_FLD_NODE, ((n < 2 ? CT_NODE_CTL : CT_NODE_UVM) << 16) | (n ? 0 : 255));
			seq = emit(w, &r, CT_REC_ENTER, CT_CALL_open64, tid, 0, 0, 0);
			w->t_ns += dur;
			rec_begin(&r, CT_REC_EXIT);
			f_u32(&r, CT_FLD_NODE, ((n < 2 ? CT_NODE_CTL : CT_NODE_UVM) << 16) | (n ? 0 : 255));
			f_u64(&r, CT_FLD_RDEV, ((uint64_t)(n < 2 ? 195 : 238) << 32) | (n ? n - 1 : 255));
			emit(w, &r, CT_REC_EXIT, CT_CALL_open64, tid, seq, 5 + n, 0);
		} else {
			rec_begin(&r, CT_REC_ENTER);
			f_u32(&r, CT_FLD_FD, 5 + n);
			f_u32(&r, CT_FLD_NODE, (CT_NODE_CTL << 16) | 255);
			seq = emit(w, &r, CT_REC_ENTER, CT_CALL_close, tid, 0, 0, 0);
			w->t_ns += dur / 10;
			rec_begin(&r, CT_REC_EXIT);
			emit(w, &r, CT_REC_EXIT, CT_CALL_close, tid, seq, 0, 0);
		}
	} else { /* dlopen of a CUDA library */
		rec_begin(&r, CT_REC_ENTER);
		f_str(&r, CT_FLD_LIBNAME, "libcuda.so.1");
		f_u32(&r, CT_FLD_DLFLAGS, 0x102);
		seq = emit(w, &r, CT_REC_ENTER, CT_CALL_dlopen, tid, 0, 0, 0);
		w->t_ns += dur * 10;
		rec_begin(&r, CT_REC_EXIT);
		f_u64(&r, CT_FLD_HANDLE, 0x55aa00001000ull);
		f_str(&r, CT_FLD_REALPATH, "/usr/local/nvidia/lib64/libcuda.so.580.159.04");
		f_u32(&r, CT_FLD_LIBKIND, CT_LIB_CUDA);
		emit(w, &r, CT_REC_EXIT, CT_CALL_dlopen, tid, seq, 0x55aa00001000ll, 0);
	}
	w->t_ns += 200 + rnd() % 3000;
}

static void run_events(struct writer *w, uint64_t events, uint64_t seed)
{
	rng_state = seed;
	w->t_ns = 1000000000ull;
	for (uint64_t k = 0; k < events; k++)
		one_event(w, (unsigned)k);
}

/* ---- the file ---------------------------------------------------------------- */
static void ctx_put(unsigned char **p, uint16_t tag, const char *s)
{
	*p = ct_put_field(*p, tag, s, (uint16_t)strlen(s));
}

static void fill_header(struct cutrace_header *h, uint32_t pid, unsigned char *map)
{
	unsigned char *c = map + h->ctx_off, *c0 = c;
	static const char cmdline[] = "python3\0-c\0import torch; torch.cuda.init()";

	h->endian = CUTRACE_ENDIAN_PROBE;
	h->version_major = CUTRACE_VERSION_MAJOR;
	h->version_minor = CUTRACE_VERSION_MINOR;
	h->header_size = sizeof *h;
	h->slot_size = CUTRACE_SLOT_SIZE;
	h->word_size = sizeof(void *);
	h->pid = pid;
	h->ppid = 1;
	h->start_realtime_ns = 1796000000000000000ull;
	h->start_mono_ns = 1000000000ull;
	h->create_realtime_ns = h->start_realtime_ns + 1000;
	h->create_mono_ns = h->start_mono_ns + 1000;
	h->writer_version = 100;
	h->flags = CT_HF_EXITED;
	ctx_put(&c, CT_CTX_EXE, "/usr/bin/python3.12");
	c = ct_put_field(c, CT_CTX_CMDLINE, cmdline, sizeof cmdline - 1);
	ctx_put(&c, CT_CTX_HOST, "bench");
	ctx_put(&c, CT_CTX_KERNEL, "6.18.44");
	ctx_put(&c, CT_CTX_MACHINE, "x86_64");
	ctx_put(&c, CT_CTX_CWD, "/work");
	ctx_put(&c, CT_CTX_NV_VERSION, "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
				      "580.159.04  Release Build  (bench@)\n");
	ctx_put(&c, CT_CTX_DEVICES, "195 nvidia");
	ctx_put(&c, CT_CTX_DEVICES, "238 nvidia-uvm");
	ctx_put(&c, CT_CTX_ENV, "CUDA_VISIBLE_DEVICES=0");
	ctx_put(&c, CT_CTX_ENV, "LD_PRELOAD=libcutrace.so");
	h->ctx_len = (uint64_t)(c - c0);
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end || end == s) {
		fprintf(stderr, "bench_gen_trace: bad size '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	uint64_t events = 1000000, size = 0, seed = 1;
	uint32_t pid = 4242;
	struct writer w = { 0 };
	struct cutrace_header lay;
	unsigned char *map;
	const char *out;
	int opt, fd;

	while ((opt = getopt(argc, argv, "e:s:p:S:")) != -1) {
		switch (opt) {
		case 'e': events = strtoull(optarg, NULL, 10); break;
		case 's': size = parse_size(optarg); break;
		case 'p': pid = (uint32_t)atoi(optarg); break;
		case 'S': seed = strtoull(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: bench_gen_trace [-e EVENTS] [-s SIZE] [-p PID] [-S SEED] OUT\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: bench_gen_trace [-e EVENTS] [-s SIZE] [-p PID] [-S SEED] OUT\n");
		return 2;
	}
	out = argv[optind];
	if (!size) {
		/* sizing pass; then room for every slot plus the padding a
		 * reservation at the init/ring boundary may waste */
		uint64_t fixed = CUTRACE_HEADER_AREA + ((CTX_CAP + 4095) & ~4095ull);
		w.dry = 1;
		run_events(&w, events, seed);
		w.dry = 0;
		uint64_t nslots = w.slots + w.slots / 64 + 256;
		size = fixed + 2 * 4096 + nslots * (CUTRACE_SLOT_SIZE + 8) + 4096;
		size = (size + 4095) & ~4095ull;
	}
	memset(&lay, 0, sizeof lay);
	if (ct_ring_layout(&lay, size, CTX_CAP) < 0) {
		fprintf(stderr, "bench_gen_trace: size %llu too small\n", (unsigned long long)size);
		return 2;
	}
	fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		fprintf(stderr, "bench_gen_trace: %s: %s\n", out, strerror(errno));
		return 1;
	}
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "bench_gen_trace: mmap %s: %s\n", out, strerror(errno));
		return 1;
	}
	close(fd);
	memcpy(map, &lay, sizeof lay);
	fill_header((struct cutrace_header *)(void *)map, pid, map);
	ct_ring_attach(&w.ring, map);
	w.pid = pid;
	run_events(&w, events, seed);
	memcpy(map, CUTRACE_MAGIC, 8);
	printf("file=%s events=%llu size=%llu head=%llu dropped=%llu\n", out,
	       (unsigned long long)events, (unsigned long long)size,
	       (unsigned long long)w.ring.hdr->head, (unsigned long long)w.ring.hdr->dropped);
	munmap(map, size);
	return 0;
}
