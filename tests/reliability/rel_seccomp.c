/*
 * rel_seccomp MODE PROGRAM [ARGS...]: run PROGRAM under a seccomp filter
 * that makes one kind of system call fail with EPERM, as container runtimes
 * and sandboxes do.  The filter is installed with prctl(PR_SET_SECCOMP) and
 * a classic BPF program (no libseccomp), after PR_SET_NO_NEW_PRIVS, and
 * survives execve.
 *   vmread      process_vm_readv (the shim reads ioctl blocks with it)
 *   fallocate   fallocate (the shim preallocates its trace file)
 *   excl-open   openat with O_EXCL (the shim creates its trace file so)
 *   mmap-shared mmap with MAP_SHARED (the shim maps its trace file so)
 *   gettid      gettid (the shim reads its thread id once per thread)
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define REL_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define REL_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#define LD_NR   BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define DENY    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define ALLOW   BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int main(int argc, char **argv)
{
#ifndef REL_AUDIT_ARCH
	(void)argc;
	(void)argv;
	fprintf(stderr, "rel_seccomp: architecture not supported\n");
	return 77;
#else
	struct sock_filter f[16];
	unsigned n = 0;
	/* [n] arch check: another ABI's numbers would mean other calls */
	struct sock_filter head[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, REL_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		LD_NR,
	};

	if (argc < 3) {
		fprintf(stderr, "usage: rel_seccomp MODE PROGRAM [ARGS...]\n");
		return 2;
	}
	memcpy(f, head, sizeof head);
	n = sizeof head / sizeof head[0];
	const char *m = argv[1];
	if (!strcmp(m, "vmread") || !strcmp(m, "fallocate") || !strcmp(m, "gettid")) {
		long nr = !strcmp(m, "vmread") ? SYS_process_vm_readv : !strcmp(m, "fallocate") ? SYS_fallocate : SYS_gettid;
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1);
		f[n++] = (struct sock_filter)DENY;
		f[n++] = (struct sock_filter)ALLOW;
	} else if (!strcmp(m, "excl-open") || !strcmp(m, "mmap-shared")) {
		bool excl = !strcmp(m, "excl-open");
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      excl ? (unsigned)SYS_openat : (unsigned)SYS_mmap, 0, 3);
		f[n++] = (struct sock_filter)LD_ARG(excl ? 2 : 3); /* low 32 bits of flags */
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
						      excl ? (unsigned)O_EXCL : (unsigned)MAP_SHARED, 0, 1);
		f[n++] = (struct sock_filter)DENY;
		f[n++] = (struct sock_filter)ALLOW;
	} else {
		fprintf(stderr, "rel_seccomp: unknown mode %s\n", m);
		return 2;
	}
	struct sock_fprog prog = { (unsigned short)n, f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
		fprintf(stderr, "rel_seccomp: cannot install the filter: %s\n", strerror(errno));
		return 77;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "rel_seccomp: %s: %s\n", argv[2], strerror(errno));
	return 127;
#endif
}
