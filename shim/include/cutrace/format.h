/*
 * cutrace trace file format, version 1.4.
 *
 * This header is the only definition of the on-disk layout.  libcutrace.so
 * writes it, the cutrace CLI reads it; nothing else crosses between them.
 * Every type is fixed-width, there are no pointers, and the offsets are
 * pinned by the static asserts at the bottom; the unit_reader tests
 * (tests/unit_reader/test_reader.c) write files through ring.c and read them
 * back, and the real traces in tests/fixtures/h200-580 must keep reading.
 *
 * File layout (all offsets from the start of the file, all sizes in bytes):
 *
 *   [0, 4096)              struct cutrace_header (512 bytes, rest zero)
 *   [ctx_off, +ctx_cap)    process context: a list of TLV fields (CT_CTX_*)
 *   [tags_off, +8*nslots)  one uint64 tag per slot (see "Slots and tags")
 *   [slots_off, +64*nslots) the slots holding the records
 *
 * Slots and tags.  Records are written into 64-byte slots; a record takes
 * n = ceil(size / 64) physically consecutive slots.  Writers reserve slots by
 * one atomic fetch-add on header.head, which counts slots for the life of the
 * process: the monotonic slot index s is also the record's sequence number.
 * Slot s lives at physical slot
 *     p(s) = s                                   for s < init_slots
 *     p(s) = init_slots + (s - init_slots) % ring_slots   otherwise.
 * The first init_slots slots (the "init area") are never overwritten, so the
 * initialization of the process survives any amount of later traffic; the
 * ring keeps the most recent records.  A record never straddles the end of
 * the init area or the end of the ring: a writer whose reservation would do
 * so marks the reserved slots CT_TAG_PAD and reserves again.
 *
 * The tag of physical slot p is (s << 8) | kind, where s is the monotonic
 * index of the head slot of the record that owns p, and kind is CT_TAG_*.
 * Writing a record:  every continuation slot gets (s<<8)|CONT, the head slot
 * gets (s<<8)|BUSY, the payload is copied, and the head tag is stored with
 * release ordering as (s<<8)|HEAD: that store is the commit.  A reader keeps
 * a record when its head tag says HEAD, the record header's seq equals s and
 * every continuation slot still carries (s<<8)|CONT.  A head tag left at BUSY
 * is a record torn by a crash; continuation slots owned by a newer s mean the
 * record was overwritten by the ring.  The commit only happens while the
 * head tag is still the writer's own: a writer stalled for a lap of the ring
 * (descheduled inside a hook, a signal handler) must not destroy the newer
 * record that now owns the slot; it counts its own record in header.dropped
 * instead.
 *
 * Runs (since 1.1).  A writer that records a lot (a busy thread) reserves a
 * run of consecutive slots with one fetch-add and carves its records out of
 * it, so that busy threads do not contend on header.head or share tag and
 * slot cache lines.  Every record still has seq = the monotonic index of its
 * head slot, but records of different threads are then in seq order only
 * within a run: readers order events by time.  Slots a run leaves unused keep
 * older tags, which readers skip as stale.  A pair of records (the enter and
 * the exit of one call) may be reserved together: the second is tagged PAD
 * until it is committed, so an exit the process never wrote is invisible.
 *
 * Counting (since 1.1).  Each writer adds one to its own counter (one of
 * header.counters_n, each on its own cache line in the header page) for every
 * record it commits outside the init area (libcutrace.so gives counters 1 ..
 * counters_n - 1 to its first writers, one each; counter 0 is shared by the
 * rest).  A reader that has walked the ring
 * knows how many of those it found; the rest were overwritten:
 *     dropped = header.dropped + sum(counters) - ring records read
 *               - ring records found partly overwritten
 * (1.0 files counted overwritten heads in header.dropped directly.)
 *
 * Records.  struct cutrace_record, then for CT_REC_EXIT a struct
 * cutrace_exit, then TLV fields (struct cutrace_field + len bytes, padded to
 * 4 bytes).  A call is recorded twice: a CT_REC_ENTER record when it starts and
 * a CT_REC_EXIT record (carrying the enter record's seq) when it returns, so
 * a call that hangs or crashes the process is an enter without an exit.
 * Readers ignore fields and record types they do not know; new ones may be
 * added in minor versions, existing numbers never change meaning.
 *
 * Byte order and word size are the writer's; header.endian lets a reader
 * detect a foreign-endian file (cutrace reads only its own byte order and says
 * so clearly otherwise).
 */
#ifndef CUTRACE_FORMAT_H
#define CUTRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define CUTRACE_MAGIC           "CUTRACE"   /* 8 bytes with the NUL */
#define CUTRACE_VERSION_MAJOR   1
#define CUTRACE_VERSION_MINOR   6
#define CUTRACE_ENDIAN_PROBE    0x01020304u
#define CUTRACE_HEADER_AREA     4096u       /* header page; ctx starts here */
#define CUTRACE_COUNTERS_OFF    1024u       /* commit counters in the header page */
#define CUTRACE_COUNTERS_N      48u
#define CUTRACE_COUNTER_STRIDE  64u
#define CUTRACE_SLOT_SIZE       64u
#define CUTRACE_MAX_RECORD      (64u * 1024u) /* no record is larger */

/* header.flags (set atomically by the writer) */
#define CT_HF_DEGRADED      0x0001u /* an internal failure: some events missing */
#define CT_HF_EXITED        0x0002u /* process ran its exit handlers */
#define CT_HF_INJECT        0x0004u /* fault-injection rules were active */
#define CT_HF_INJECT_BAD    0x0008u /* CUTRACE_INJECT was malformed: ignored */
#define CT_HF_FORKED        0x0010u /* this process is a fork child */
#define CT_HF_EXIT_STATUS   0x0020u /* since 1.2: exit_status and exit_ns are valid */

/* tag kinds (low 8 bits of a slot tag) */
#define CT_TAG_EMPTY 0u
#define CT_TAG_BUSY  1u
#define CT_TAG_HEAD  2u
#define CT_TAG_CONT  3u
#define CT_TAG_PAD   4u
#define CT_TAG_KIND(t) ((unsigned)((t) & 0xffu))
#define CT_TAG_SEQ(t)  ((uint64_t)(t) >> 8)
#define CT_TAG_MAKE(s, k) (((uint64_t)(s) << 8) | (uint64_t)(k))

struct cutrace_header {
	char     magic[8];          /* CUTRACE_MAGIC */
	uint32_t endian;            /* CUTRACE_ENDIAN_PROBE, writer's order */
	uint16_t version_major;
	uint16_t version_minor;
	uint32_t header_size;       /* sizeof(struct cutrace_header) */
	uint32_t slot_size;         /* CUTRACE_SLOT_SIZE */
	uint8_t  word_size;         /* sizeof(void *) of the writer */
	uint8_t  reserved0[3];
	uint32_t flags;             /* CT_HF_*, updated atomically */
	uint64_t file_size;
	uint64_t ctx_off;
	uint64_t ctx_cap;           /* bytes reserved for the context */
	uint64_t ctx_len;           /* bytes of context written */
	uint64_t tags_off;
	uint64_t slots_off;
	uint64_t init_slots;        /* slots in the never-overwritten init area */
	uint64_t ring_slots;        /* slots in the ring */
	uint64_t head;              /* atomic: next monotonic slot index */
	uint64_t dropped;           /* atomic: records overwritten by the ring (1.0); since
				       1.1 only those whose writer found them lapped */
	uint64_t lost;              /* atomic: records never written (too big) */
	uint32_t pid;
	uint32_t ppid;
	uint32_t uid, gid, euid, egid;
	uint64_t start_realtime_ns; /* when the shim started in this process */
	uint64_t start_mono_ns;     /* same instant, CLOCK_MONOTONIC */
	uint64_t create_realtime_ns;/* when this file was created */
	uint64_t create_mono_ns;
	uint64_t feature_mask;      /* reserved for optional features, 0 now */
	uint32_t writer_version;    /* cutrace version of the shim, major*10000+minor*100+patch */
	uint32_t reserved1;
	/* since 1.1: commit counters (see "Counting"); 0 in 1.0 files */
	uint64_t counters_off;      /* offset of counter 0, inside the header page */
	uint32_t counters_n;        /* number of counters */
	uint32_t counter_stride;    /* bytes from one counter to the next */
	/* since 1.2: how the process ended, when exit() ran its handlers
	 * (CT_HF_EXIT_STATUS); a kill, a crash or _exit() leave them 0 */
	uint32_t exit_status; /* the status exit() was given (or main returned) */
	uint32_t reserved2;
	uint64_t exit_ns; /* when, on the records' clock (cutrace_record.t_ns) */
	uint64_t reserved[36];
};

/* record types */
#define CT_REC_ENTER 1u  /* a call started */
#define CT_REC_EXIT  2u  /* a call returned; struct cutrace_exit follows */
#define CT_REC_NOTE  3u  /* an instant event (warning, injected rule, ...) */

/* record flags */
#define CT_RF_INJECTED   0x0001u /* the result was produced by an injection rule */
#define CT_RF_TRUNCATED  0x0002u /* some field was cut to its cap */
#define CT_RF_NESTED     0x0004u /* recorded inside another hooked call */
#define CT_RF_UNREADABLE 0x0008u /* a user pointer could not be read */

struct cutrace_record {
	uint64_t seq;       /* monotonic slot index of the head slot */
	uint64_t t_ns;      /* CLOCK_MONOTONIC ns (the shim may read it through the TSC: shim/clock.h) */
	uint32_t size;      /* bytes, this header and everything after it */
	uint16_t type;      /* CT_REC_* */
	uint16_t call;      /* CT_CALL_* */
	uint32_t tid;
	uint32_t flags;     /* CT_RF_* */
};

struct cutrace_exit {
	uint64_t enter_seq; /* seq of the matching CT_REC_ENTER */
	int64_t  ret;       /* the return value as the caller saw it */
	int32_t  err;       /* errno after the call (0 when the call succeeded) */
	uint32_t reserved;
};

struct cutrace_field {
	uint16_t tag;       /* CT_FLD_* or CT_CTX_* */
	uint16_t len;       /* bytes of data that follow (not counting padding) */
};
#define CT_FIELD_PAD(len) (((len) + 3u) & ~3u)

/*
 * Record fields.  "str" is a byte string without NUL; "u32"/"i32"/"u64" are
 * in the writer's byte order; "bytes" is raw memory copied from the program.
 */
enum {
	CT_FLD_FILLER = 0,   /* padding: readers skip it */
	CT_FLD_PATH = 1,     /* str: path given to open */
	CT_FLD_DIRFD,        /* i32: openat dirfd */
	CT_FLD_OFLAGS,       /* u32: open flags */
	CT_FLD_MODE,         /* u32: open mode (only with O_CREAT/O_TMPFILE) */
	CT_FLD_FD,           /* i32: fd argument (ioctl, close) */
	CT_FLD_NODE,         /* u32: CT_NODE_* << 16 | minor, the shim's view of the fd */
	CT_FLD_RDEV,         /* u64: st_rdev of the opened node: major << 32 | minor */
	CT_FLD_REQUEST,      /* u64: ioctl request word */
	CT_FLD_ARGP,         /* u64: ioctl argument pointer */
	CT_FLD_BLOCK_SIZE,   /* u32: full size of the parameter block */
	CT_FLD_BLOCK,        /* bytes: the block from offset 0 (enter: before, exit: after) */
	CT_FLD_BLOCK_TAIL,   /* u32 offset, then bytes: the block's last bytes */
	CT_FLD_PAYLOAD_SIZE, /* u32: size of the data behind the block's pointer */
	CT_FLD_PAYLOAD,      /* bytes: RM_CONTROL/RM_ALLOC params behind the pointer */
	CT_FLD_STRING,       /* u8 index, then str: strings behind user pointers */
	CT_FLD_XFER,         /* u32 inner nr, u32 inner size, u64 inner ptr.  The exit
			      * record of an XFER-wrapped call carries two PAYLOAD_SIZE +
			      * PAYLOAD pairs: the inner block, then (RM_CONTROL / RM_ALLOC)
			      * the params behind the inner block's pointer */
	CT_FLD_LIBNAME,      /* str: dlopen file argument */
	CT_FLD_DLFLAGS,      /* i32: dlopen flags */
	CT_FLD_LMID,         /* i64: dlmopen namespace */
	CT_FLD_HANDLE,       /* u64: a dlopen handle */
	CT_FLD_REALPATH,     /* str: resolved path of the loaded object */
	CT_FLD_DLERROR,      /* str: dlerror() text after a failure */
	CT_FLD_SYMBOL,       /* str: symbol name */
	CT_FLD_SYMVER,       /* str: dlvsym version */
	CT_FLD_CUDAVER,      /* i32: cuGetProcAddress cudaVersion */
	CT_FLD_GPAFLAGS,     /* u64: cuGetProcAddress flags */
	CT_FLD_SYMSTATUS,    /* i32: CUdriverProcAddressQueryResult */
	CT_FLD_PFN,          /* u64: function pointer returned */
	CT_FLD_WRAPPED,      /* u32: 1 when the shim returned its own wrapper */
	CT_FLD_ARG,          /* i64: a plain integer argument (flags, ordinal, ...) */
	CT_FLD_OUT,          /* i64: an integer the call wrote back (version, count, ...) */
	CT_FLD_INJECT,       /* u32 rule index, u32 CT_INJ_* action */
	CT_FLD_TEXT,         /* str: free text of a note */
	CT_FLD_LIBKIND,      /* u32: CT_LIB_* of a loaded library */
	CT_FLD_ARG2,         /* i64: second plain argument */
	CT_FLD_OUTPTR,       /* u64: a pointer the call wrote back (context, ...) */
	CT_FLD_ENV,          /* str: NAME=VALUE of a variable at the time of the call */
	CT_FLD_FILESIZE,     /* u64: size of the loaded library file */
	CT_FLD_SEARCHED,     /* str: path the shim resolved for the caller's search path */
	CT_FLD_ERRTEXT,      /* str: why a user pointer could not be read, etc. */
	/* since 1.3: the process snapshot, a note written once before the first
	 * cuInit or nvmlInit (or at the first failed dlopen of libcuda).
	 * CT_FLD_MAPLIBS, str: '\n'-separated paths of the driver libraries and
	 * the preloaded or interposing objects mapped (/proc/self/maps, with
	 * " (deleted)" as the kernel writes it).  CT_FLD_MOUNT, str: the mount
	 * holding the mapped libcuda (/proc/self/mountinfo), "<mount point>
	 * <root> <fstype> <source>".  CT_FLD_LDCACHE, str: '\n'-separated
	 * "name=path" (path "" when absent) for libcuda.so.1 and libcuda.so in
	 * /etc/ld.so.cache, or "-" when the cache is unreadable. */
	CT_FLD_MAPLIBS,
	CT_FLD_MOUNT,
	CT_FLD_LDCACHE,
	/* since 1.5: CT_FLD_TARGET, str: the target of a symlink (CT_FAM_FS) */
	CT_FLD_TARGET,
	CT_FLD__COUNT
};

/*
 * Process context fields (in the ctx area): TLV fields from ctx_off, ctx_len
 * bytes of them, each padded to 4 bytes.  What a reader may expect of each
 * key, and treats as damage otherwise (the trace is then degraded, the
 * fields from the damaged one on are not used, and nothing is concluded from
 * a field's absence): a length within the context and within the most the
 * shim writes for the key (host/kernel/machine 65, devices 128, module
 * version and loader 256, note and ld.so.conf.d line 512, nvidia version and
 * ld.so.preload 1024, inject rules 2048, exe and cwd 4096, command line and
 * environment 4608, the command line's length exactly 4); text the kernel
 * or driver wrote (host, kernel, machine, the NVIDIA version lines, devices)
 * is UTF-8 without control characters but tab and newline; paths, variables,
 * rules and notes hold any bytes but NUL (not always UTF-8: readers escape
 * them); key 0 and keys past this version's last are damage, except in a
 * file of a newer minor version, where they are kept and shown as unknown.
 */
enum {
	CT_CTX_EXE = 1,        /* str: /proc/self/exe */
	CT_CTX_CMDLINE,        /* bytes: /proc/self/cmdline, NUL separated, bounded,
				* secrets redacted (common/redact.h) */
	CT_CTX_HOST,           /* str: uname nodename */
	CT_CTX_KERNEL,         /* str: uname release */
	CT_CTX_NV_VERSION,     /* str: /proc/driver/nvidia/version */
	CT_CTX_NV_MODVERSION,  /* str: /sys/module/nvidia/version */
	CT_CTX_ENV,            /* str: NAME=VALUE of an allowlisted variable */
	CT_CTX_DEVICES,        /* str: the NVIDIA lines of /proc/devices */
	CT_CTX_CWD,            /* str: working directory */
	CT_CTX_MACHINE,        /* str: uname machine */
	CT_CTX_INJECT,         /* str: the CUTRACE_INJECT rules in force */
	CT_CTX_CMDLINE_LEN,    /* u32: full length of the command line */
	CT_CTX_NOTE,           /* str: a note from the shim (why degraded, ...) */
	/* since 1.3: CT_CTX_INTERP, str: the program's ELF interpreter
	 * (PT_INTERP); CT_CTX_LDCONF, str: "<file>=<first directory>" of an
	 * /etc/ld.so.conf.d 00-compat-* or 00-nvcr-* drop-in of the container
	 * toolkit; CT_CTX_PRELOAD_FILE, str: /etc/ld.so.preload (bounded) */
	CT_CTX_INTERP,
	CT_CTX_LDCONF,
	CT_CTX_PRELOAD_FILE,
	CT_CTX__COUNT
};

/* the shim's classification of an fd (CT_FLD_NODE >> 16) */
enum {
	CT_NODE_NONE = 0,
	CT_NODE_CTL,        /* /dev/nvidiactl (195:255) */
	CT_NODE_GPU,        /* /dev/nvidiaN (195:N), minor in the low 16 bits */
	CT_NODE_UVM,        /* /dev/nvidia-uvm */
	CT_NODE_UVM_TOOLS,  /* /dev/nvidia-uvm-tools */
	CT_NODE_MODESET,    /* /dev/nvidia-modeset (195:254) */
	CT_NODE_CAPS,       /* /dev/nvidia-caps/nvidia-capN */
	CT_NODE_NVSWITCH,   /* /dev/nvidia-nvswitchN, /dev/nvidia-nvlink */
	CT_NODE_IMEX,       /* /dev/nvidia-caps-imex-channels/channelN */
	CT_NODE_OTHER,      /* another /dev/nvidia* node */
	CT_NODE_DXG,        /* /dev/dxg, WSL2's GPU paravirtualization (since 1.4) */
	CT_NODE__COUNT
};

/* what kind of library a dlopen loaded (CT_FLD_LIBKIND) */
enum {
	CT_LIB_OTHER = 0,
	CT_LIB_CUDA,        /* libcuda.so* (driver API) */
	CT_LIB_CUDART,      /* libcudart.so* */
	CT_LIB_NVML,        /* libnvidia-ml.so* */
	CT_LIB_NVIDIA,      /* other libnvidia-* driver component */
	CT_LIB_CUDA_OTHER,  /* other CUDA toolkit library (cublas, cudnn, nccl, ...) */
	CT_LIB_DXCORE,      /* libdxcore.so, WSL2's adapter library (since 1.4) */
	CT_LIB__COUNT
};

/* injection actions (CT_FLD_INJECT) */
enum {
	CT_INJ_NONE = 0,
	CT_INJ_ERROR,    /* failed with an errno / loader error, real call skipped */
	CT_INJ_RETVAL,   /* returned a code, real call skipped */
	CT_INJ_STATUS,   /* real call made, then an RM status written into the block */
	CT_INJ_VALUE,    /* real call made, then the reported value replaced */
	CT_INJ_VERSION,  /* real call made, then the kernel version string replaced */
	CT_INJ_DELAY,    /* slept before the real call */
	CT_INJ__COUNT
};

/*
 * Calls.  X(id, name, family): ids are part of the format and never change;
 * new calls are appended.  family groups calls for display and diagnosis.
 */
#define CT_FAM_IO      1
#define CT_FAM_LOADER  2
#define CT_FAM_DRIVER  3
#define CT_FAM_RUNTIME 4
#define CT_FAM_NVML    5
#define CT_FAM_SHIM    6
#define CT_FAM_FS      7 /* since 1.5: what the driver does to NVIDIA paths before it opens a node */

/* clang-format off */
#define CUTRACE_CALLS(X) \
	X(1,  open,                      CT_FAM_IO) \
	X(2,  open64,                    CT_FAM_IO) \
	X(3,  openat,                    CT_FAM_IO) \
	X(4,  openat64,                  CT_FAM_IO) \
	X(5,  __open_2,                  CT_FAM_IO) \
	X(6,  __open64_2,                CT_FAM_IO) \
	X(7,  __openat_2,                CT_FAM_IO) \
	X(8,  __openat64_2,              CT_FAM_IO) \
	X(9,  close,                     CT_FAM_IO) \
	X(10, ioctl,                     CT_FAM_IO) \
	X(11, dlopen,                    CT_FAM_LOADER) \
	X(12, dlmopen,                   CT_FAM_LOADER) \
	X(13, dlsym,                     CT_FAM_LOADER) \
	X(14, dlvsym,                    CT_FAM_LOADER) \
	X(15, dlclose,                   CT_FAM_LOADER) \
	X(16, cuInit,                    CT_FAM_DRIVER) \
	X(17, cuDriverGetVersion,        CT_FAM_DRIVER) \
	X(18, cuGetProcAddress,          CT_FAM_DRIVER) \
	X(19, cuGetProcAddress_v2,       CT_FAM_DRIVER) \
	X(20, cuDeviceGetCount,          CT_FAM_DRIVER) \
	X(21, cuDeviceGet,               CT_FAM_DRIVER) \
	X(22, cuDevicePrimaryCtxRetain,  CT_FAM_DRIVER) \
	X(23, cuCtxCreate,               CT_FAM_DRIVER) \
	X(24, cuCtxCreate_v2,            CT_FAM_DRIVER) \
	X(25, cuCtxCreate_v3,            CT_FAM_DRIVER) \
	X(26, cuCtxCreate_v4,            CT_FAM_DRIVER) \
	X(27, nvmlInit,                  CT_FAM_NVML) \
	X(28, nvmlInit_v2,               CT_FAM_NVML) \
	X(29, nvmlInitWithFlags,         CT_FAM_NVML) \
	X(30, cudaGetDeviceCount,        CT_FAM_RUNTIME) \
	X(31, cudaSetDevice,             CT_FAM_RUNTIME) \
	X(32, cudaFree,                  CT_FAM_RUNTIME) \
	X(33, cudaMalloc,                CT_FAM_RUNTIME) \
	X(34, cudaRuntimeGetVersion,     CT_FAM_RUNTIME) \
	X(35, cudaDriverGetVersion,      CT_FAM_RUNTIME) \
	X(36, cutrace_note,              CT_FAM_SHIM) \
	X(37, cuDeviceGetName,           CT_FAM_DRIVER) \
	X(38, cuCtxSetCurrent,           CT_FAM_DRIVER) \
	X(39, nvmlShutdown,              CT_FAM_NVML) \
	X(40, nvmlDeviceGetCount_v2,     CT_FAM_NVML) \
	X(41, cudaGetDevice,             CT_FAM_RUNTIME) \
	X(42, cudaGetLastError,          CT_FAM_RUNTIME) \
	CUTRACE_CALLS_FS(X)

/*
 * Since 1.5: file-system calls on NVIDIA paths only (shim/hooks_fs.c): the
 * /dev/nvidia* nodes and /dev/char/195:N, /proc/driver/nvidia*, /proc/devices,
 * /proc/modules, /sys/module/nvidia*, and [/usr]/bin/nvidia-modprobe.  Enter:
 * CT_FLD_PATH; mknod*: CT_FLD_MODE (with the S_IFCHR bits) and CT_FLD_RDEV;
 * mknodat: CT_FLD_DIRFD; chmod: CT_FLD_MODE; chown: CT_FLD_ARG (uid),
 * CT_FLD_ARG2 (gid); access: CT_FLD_ARG (its mode); symlink: CT_FLD_TARGET
 * (CT_FLD_PATH is the link); fopen: CT_FLD_TEXT (its mode string), and the
 * exit's ret is 1 for a stream, 0 for NULL.  Exit of a stat that succeeded:
 * CT_FLD_MODE (st_mode) and, for a character device, CT_FLD_RDEV.  The same
 * paths given to open are recorded as opens (node 0 outside /dev).
 */
#define CUTRACE_CALLS_FS(X) \
	X(43, __xstat,                   CT_FAM_FS) \
	X(44, __xstat64,                 CT_FAM_FS) \
	X(45, stat,                      CT_FAM_FS) \
	X(46, stat64,                    CT_FAM_FS) \
	X(47, access,                    CT_FAM_FS) \
	X(48, __xmknod,                  CT_FAM_FS) \
	X(49, mknod,                     CT_FAM_FS) \
	X(50, mknodat,                   CT_FAM_FS) \
	X(51, chmod,                     CT_FAM_FS) \
	X(52, chown,                     CT_FAM_FS) \
	X(53, unlink,                    CT_FAM_FS) \
	X(54, symlink,                   CT_FAM_FS) \
	X(55, remove,                    CT_FAM_FS) \
	X(56, fopen,                     CT_FAM_FS) \
	X(57, fopen64,                   CT_FAM_FS) \
	CUTRACE_CALLS_PROC(X)

/*
 * Since 1.6: the driver's helper processes (shim/hooks_proc.c): a child that
 * exec'd nvidia-modprobe or modprobe, recorded in the parent when it reaps the
 * child (waitpid, wait4): enter CT_FLD_PATH (what was exec'd), CT_FLD_TEXT
 * (argv[1..], space-separated), CT_FLD_ARG (the child's pid), CT_FLD_ARG2
 * (the errno of a failed exec in the child, 0 when it did not return); exit:
 * the wait call's ret and errno, CT_FLD_ARG the wait status.  posix_spawn*:
 * enter CT_FLD_PATH, CT_FLD_TEXT; exit ret 0 or the error number (also in
 * err), CT_FLD_ARG the child's pid.
 */
#define CUTRACE_CALLS_PROC(X) \
	X(58, waitpid,                   CT_FAM_FS) \
	X(59, wait4,                     CT_FAM_FS) \
	X(60, posix_spawn,               CT_FAM_FS) \
	X(61, posix_spawnp,              CT_FAM_FS)
/* clang-format on */

enum {
#define CT_X_ENUM(id, name, fam) CT_CALL_##name = id,
	CUTRACE_CALLS(CT_X_ENUM)
#undef CT_X_ENUM
	CT_CALL__MAX
};

/* Layout pins: a change here is a format change (bump the major version). */
#ifdef __cplusplus
#define CT_STATIC_ASSERT static_assert
#else
#define CT_STATIC_ASSERT _Static_assert
#endif
CT_STATIC_ASSERT(sizeof(struct cutrace_header) == 512, "header size");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, endian) == 8, "endian");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, version_major) == 12, "version");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, header_size) == 16, "header_size");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, flags) == 28, "flags");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, file_size) == 32, "file_size");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, ctx_off) == 40, "ctx_off");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, tags_off) == 64, "tags_off");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, init_slots) == 80, "init_slots");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, head) == 96, "head");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, dropped) == 104, "dropped");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, lost) == 112, "lost");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, pid) == 120, "pid");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, start_realtime_ns) == 144, "start");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, feature_mask) == 176, "feature_mask");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, writer_version) == 184, "writer_version");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, counters_off) == 192, "counters_off");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, counters_n) == 200, "counters_n");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, exit_status) == 208, "exit_status");
CT_STATIC_ASSERT(offsetof(struct cutrace_header, exit_ns) == 216, "exit_ns");
CT_STATIC_ASSERT(sizeof(struct cutrace_record) == 32, "record header size");
CT_STATIC_ASSERT(offsetof(struct cutrace_record, size) == 16, "record size");
CT_STATIC_ASSERT(offsetof(struct cutrace_record, tid) == 24, "record tid");
CT_STATIC_ASSERT(sizeof(struct cutrace_exit) == 24, "exit size");
CT_STATIC_ASSERT(sizeof(struct cutrace_field) == 4, "field size");
CT_STATIC_ASSERT(CUTRACE_HEADER_AREA >= sizeof(struct cutrace_header), "header area");
CT_STATIC_ASSERT(CUTRACE_COUNTERS_OFF >= sizeof(struct cutrace_header) &&
		 CUTRACE_COUNTERS_OFF + CUTRACE_COUNTERS_N * CUTRACE_COUNTER_STRIDE <= CUTRACE_HEADER_AREA,
		 "counters in the header page");

#endif /* CUTRACE_FORMAT_H */
