/*
 * A stand-in for a library preloaded between programs and the CUDA driver
 * (failure catalog G5), inspected by doctor's tests and never loaded: it
 * defines cuInit, dlsym and ioctl as HAMi-core's libvgpu.so defines cuInit
 * and dlsym.  Built with CT_PLAIN it defines nothing on the CUDA path.
 */
#ifdef CT_PLAIN
int ct_plain_lib(void);
int ct_plain_lib(void)
{
	return 0;
}
#else
int cuInit(unsigned flags);
void *dlsym(void *handle, const char *symbol);
int ioctl(int fd, unsigned long request, ...);

int cuInit(unsigned flags)
{
	return flags ? 100 : 999;
}

void *dlsym(void *handle, const char *symbol)
{
	(void)symbol;
	return handle;
}

int ioctl(int fd, unsigned long request, ...)
{
	return fd + (int)request;
}
#endif
