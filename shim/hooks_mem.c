/*
 * munmap, mprotect and mremap: the program gives memory back or takes its
 * access away.
 *
 * The shim copies ioctl parameter blocks out of program memory.  It asks
 * the kernel (process_vm_readv) the first time it meets a page and then
 * remembers that the page was readable (capture.c), so the common case is a
 * plain memcpy.  That memory can stop being readable: a page remembered
 * before munmap or mprotect(PROT_NONE) would make the memcpy fault where the
 * real ioctl returns EFAULT.  So every such call starts a new epoch first,
 * and capture.c trusts only what it learned in the current epoch.  The
 * epoch changes before the real call: a copy that starts after the memory is
 * gone has already forgotten it.  (glibc's own internal munmaps, of freed
 * thread stacks for instance, do not come through here; a program that hands
 * the kernel a pointer into a stack that no longer exists has a dangling
 * pointer whatever the shim does.)
 *
 * Cost: one relaxed increment on top of the real call.  Nothing here may
 * depend on the shim being initialised: these are called by ld.so-loaded
 * constructors and by allocators at any time, so an unresolved real function
 * means the raw system call.
 */
#include "shim.h"

#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

uint32_t ct_mem_epoch;

static inline void new_epoch(void)
{
	__atomic_fetch_add(&ct_mem_epoch, 1, __ATOMIC_SEQ_CST);
}

CT_EXPORT int munmap(void *addr, size_t len)
{
	new_epoch();
	if (likely(ct_real.munmap != NULL))
		return ct_real.munmap(addr, len);
	return (int)syscall(SYS_munmap, addr, len);
}

CT_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	new_epoch();
	if (likely(ct_real.mprotect != NULL))
		return ct_real.mprotect(addr, len, prot);
	return (int)syscall(SYS_mprotect, addr, len, prot);
}

/* the fifth argument exists only with MREMAP_FIXED; passing NULL on
 * otherwise is harmless: the kernel and glibc ignore it */
CT_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	new_epoch();
	if (likely(ct_real.mremap != NULL))
		return ct_real.mremap(old, old_len, new_len, flags, new_addr);
	return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}
