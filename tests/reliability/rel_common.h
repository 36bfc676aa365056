/*
 * Shared by the reliability test programs and their checker (rel_check.c).
 *
 * Marked ioctls: every call the programs make on a (fake) NVIDIA node uses
 * request REL_REQ(nr), an 'F' escape number the fake kernel does not know
 * (it answers -1/EINVAL without touching the block, like the real driver
 * for an unknown escape), with a 32-byte block that names the call: marker,
 * thread index, per-thread sequence number.  The shim records the block, so
 * a checker can say exactly which calls made it into the trace.
 */
#ifndef REL_COMMON_H
#define REL_COMMON_H

#include <stdint.h>

#define REL_MAGIC        0x52454c42u   /* "BLER" in memory: the block marker */
#define REL_NR           0x70u         /* unknown escape: EINVAL */
#define REL_NR_HANG      0x71u         /* FAKENV_HANG_CMD target */
#define REL_NR_SIGNAL    0x72u         /* calls made from signal handlers */
#define REL_BLK_SIZE     32u
/* _IOWR('F', nr, 32): the encoding of tracer/decode/ABI.md §1 */
#define REL_REQ(nr)      ((3ul << 30) | ((unsigned long)REL_BLK_SIZE << 16) | (0x46ul << 8) | (unsigned long)(nr))
#define REL_MAX_THREADS  64
#define REL_INIT_THREAD  255u          /* calls of the init phase (main thread) */

struct rel_blk {
	uint32_t magic;
	uint32_t thread;
	uint64_t seq;
	uint64_t pad[2];
};
_Static_assert(sizeof(struct rel_blk) == REL_BLK_SIZE, "block size");

/* the shared "what had completed" page of rel_busy */
#define REL_DONE_MAGIC 0x444f4e45u
struct rel_done {
	uint32_t magic;
	uint32_t threads;
	uint64_t iters;
	uint64_t init;
	uint64_t crash_at;            /* loop index where thread 0 ends the process */
	uint64_t init_done;           /* init calls completed */
	uint32_t hanging;             /* thread 0 is inside the held ioctl */
	uint32_t finished;            /* all threads joined, fd closed */
	uint64_t done[REL_MAX_THREADS]; /* calls completed per thread (seq + 1 of the last) */
};

#endif
