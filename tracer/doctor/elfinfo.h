/*
 * What a driver or runtime library file is, read with libelf without
 * loading it: ELF class and machine, SONAME, the CUDA entry points it
 * defines, a version, and whether it is the toolkit stub, a cuda-compat
 * copy or a host-injected driver library.  Used by `cutrace doctor` and by
 * the diagnosis of traces (the resolved path of libcuda.so.1).
 */
#ifndef CT_ELFINFO_H
#define CT_ELFINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_ELF_PATH_MAX 512

/* classification flags (ct_elfinfo.flags) */
#define CT_ELF_STUB          0x01u /* toolkit link stub: cuInit returns 34 */
#define CT_ELF_COMPAT        0x02u /* cuda-compat forward-compatibility copy */
#define CT_ELF_HOST          0x04u /* in a directory the host/container toolkit injects */
#define CT_ELF_WRONG_CLASS   0x08u /* not the ELF class of this process */
#define CT_ELF_WRONG_MACHINE 0x10u /* not the machine of this process */

/* what a library defines that sits on the CUDA start-up path (ct_elfinfo.hooks):
 * a preloaded object that defines one of these intercepts it (catalog G5) */
#define CT_ELF_DEF_CUINIT 0x01u /* cuInit */
#define CT_ELF_DEF_GPA    0x02u /* cuGetProcAddress, cuGetProcAddress_v2 */
#define CT_ELF_DEF_DLSYM  0x04u /* dlsym, dlvsym */
#define CT_ELF_DEF_DLOPEN 0x08u /* dlopen, dlmopen */
#define CT_ELF_DEF_IOCTL  0x10u /* ioctl */
#define CT_ELF_DEF_OPEN   0x20u /* open, open64, openat, openat64 */
#define CT_ELF_DEF_NVML   0x40u /* nvmlInit_v2, nvmlInit */

struct ct_elfinfo {
	char path[CT_ELF_PATH_MAX];      /* as given */
	char realpath[CT_ELF_PATH_MAX];  /* symlinks resolved ("" if that failed) */
	bool ok;                         /* false: error[] says why */
	char error[160];

	uint64_t size;                   /* bytes, of the file the path resolves to */
	int elf_class;                   /* 32 or 64 */
	int machine;                     /* e_machine (EM_X86_64 ...) */
	const char *machine_name;        /* "x86_64", "aarch64", "i386", ... */
	int type;                        /* e_type (ET_DYN ...) */
	const char *type_name;           /* "shared object", "executable", ... */
	bool little_endian;

	char soname[128];                /* DT_SONAME, "" when none */
	char runpath[256];               /* DT_RUNPATH, else DT_RPATH, "" when none */
	int n_needed;                    /* DT_NEEDED entries */
	int n_defined;                   /* defined dynamic symbols */
	uint64_t max_func_size;          /* largest defined FUNC in .dynsym (stubs: ~11 bytes) */
	bool has_cuInit;
	bool has_cuGetProcAddress_v2;
	bool has_cuDriverGetVersion;
	bool has_nvmlInit_v2;
	bool has_cudaRuntimeGetVersion;
	unsigned hooks; /* CT_ELF_DEF_*: calls on the CUDA path it defines */

	/* "580.159.04" for libcuda.so.580.159.04, "13.0.96" for
	 * libcudart.so.13.0.96, "13" for libcudart.so.13; "" unknown */
	char version[32];
	const char *version_from;        /* "file name", "rodata", NULL */

	unsigned flags;                  /* CT_ELF_* */
	char why_stub[96];               /* which rule made it a stub */
};

/* Inspect path (following symlinks).  Returns 0 when it is a readable ELF
 * file (out->ok), -1 otherwise with out->error set ("not an ELF file",
 * "cannot open: EACCES", ...).  Never loads or runs the library. */
int ct_elf_inspect(const char *path, struct ct_elfinfo *out);

/* (Re)compute out->flags from the file facts and a logical path: the path
 * the library has on the machine being checked (doctor's tests inspect a
 * tree under a temporary root and pass the path without that root). */
void ct_elf_classify(struct ct_elfinfo *e, const char *logical_path);

/* "x86_64" etc. for an e_machine value; "unknown" when not in the table */
const char *ct_elf_machine_name(int machine);
/* ELF class and machine of this process (what ld.so accepts) */
int ct_elf_host_class(void);
int ct_elf_host_machine(void);

/* "cuInit, dlsym, ioctl" for CT_ELF_DEF_* bits, into buf */
const char *ct_elf_hooks_str(unsigned hooks, char *buf, size_t len);

/* "stub", "compat", "host", "32-bit"... joined with ',' into buf */
const char *ct_elf_flags_str(unsigned flags, char *buf, size_t len);

#endif
