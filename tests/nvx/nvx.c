/*
 * nvx: raw NVIDIA ioctls for the decoder's end-to-end tests
 * (tests/integration/it_decode.py).  Run under the rig (libfakenv.so, the
 * fake kernel) and the shim; `cutrace show --json` then has to name what
 * these calls asked and what the fake kernel answered.
 *
 * usage: nvx STEP...   (steps run in order; each prints one line)
 *   ctl            open /dev/nvidiactl (every RM step needs it first)
 *   client         RM_ALLOC NV01_ROOT_CLIENT (NVOS64): the hClient later steps use
 *   free_bad       RM_FREE of handle 0xbad under the client (status from the
 *                  fake kernel: FAKENV_RM_FREE_STATUS=0xbad=...)
 *   xfer_bv        NV_ESC_IOCTL_XFER_CMD wrapping RM_CONTROL GET_BUILD_VERSION
 *   xfer_alloc     NV_ESC_IOCTL_XFER_CMD wrapping RM_ALLOC NV01_DEVICE_0 (deviceId 1)
 *   xfer_efault    NV_ESC_IOCTL_XFER_CMD whose inner pointer is bad (-EFAULT)
 *   ctl_efault     RM_CONTROL whose block pointer is bad (-EFAULT)
 *   short          RM_CONTROL with a 24-byte block (the kernel wants 32)
 *   oversized      RM_FREE with a 24-byte block (the kernel wants 16)
 *   gpu            open /dev/nvidia0
 *   wrong_node     RM_CONTROL GET_FABRIC_STATUS sent to /dev/nvidia0
 *   fabric         RM_CONTROL GET_FABRIC_STATUS on /dev/nvidiactl
 *   version=V      NV_ESC_CHECK_VERSION_STR (strict) with client version V
 *   attach=N       NV_ESC_ATTACH_GPUS_TO_FD with the ids of GPUs 0..N-1
 *   uvm=PATH       open PATH, then UVM_INITIALIZE and UVM_PAGEABLE_MEM_ACCESS
 *
 * Numbers and layouts: tests/rig/rig_abi.h (from tracer/decode/ABI.md).
 * Exit status 0 unless an open fails; ioctl results are printed, not judged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rig_abi.h"

/* a page that is never mapped on Linux: the kernel (and the fake) answer EFAULT */
#define BAD_PTR ((void *)(uintptr_t)0x10)

static int ctl = -1, gpu = -1;
static uint32_t client;

static void report(const char *what, int rc, const unsigned char *blk, int status_off)
{
	int e = errno;

	printf("%s rc=%d", what, rc);
	if (rc < 0)
		printf(" errno=%d", e);
	else if (blk && status_off >= 0)
		printf(" status=0x%x", rig_get32(blk, (unsigned)status_off));
	printf("\n");
	fflush(stdout);
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	errno = 0;
	return ioctl(fd, req, arg);
}

/* NVOS54 (RM_CONTROL): hClient @0, hObject @4, cmd @8, params @16, size @24, status @28 */
static void nvos54(unsigned char b[32], uint32_t cmd, void *params, uint32_t size)
{
	memset(b, 0, 32);
	rig_put32(b, 0, client);
	rig_put32(b, 4, client);
	rig_put32(b, 8, cmd);
	rig_put64(b, 16, (uint64_t)(uintptr_t)params);
	rig_put32(b, 24, size);
}

static void xfer_hdr(unsigned char x[16], uint32_t nr, uint32_t size, const void *inner)
{
	memset(x, 0, 16);
	rig_put32(x, 0, nr);
	rig_put32(x, 4, size);
	rig_put64(x, 8, (uint64_t)(uintptr_t)inner);
}

static int open_node(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	printf("open %s fd=%d\n", path, fd);
	fflush(stdout);
	if (fd < 0) {
		perror(path);
		exit(2);
	}
	return fd;
}

static void step_client(void)
{
	unsigned char b[RIG_NVOS64_SIZE] = { 0 };
	int rc;

	rig_put32(b, 12, NV01_ROOT_CLIENT);
	rc = xioctl(ctl, RIG_IOWR(NV_ESC_RM_ALLOC, RIG_NVOS64_SIZE), b);
	client = rig_get32(b, 8);
	report("client", rc, b, 40);
}

static void step_free_bad(void)
{
	unsigned char b[RIG_NVOS00_SIZE] = { 0 };

	rig_put32(b, 0, client);
	rig_put32(b, 4, client);
	rig_put32(b, 8, 0xbad);
	report("free_bad", xioctl(ctl, RIG_IOWR(NV_ESC_RM_FREE, RIG_NVOS00_SIZE), b), b, 12);
}

static void step_xfer_bv(void)
{
	static char drv[128], ver[128], title[128];
	unsigned char inner[32], bv[RIG_BUILD_VERSION_SIZE] = { 0 }, x[16];
	int rc;

	rig_put32(bv, 0, sizeof drv);
	rig_put64(bv, 8, (uint64_t)(uintptr_t)drv);
	rig_put64(bv, 16, (uint64_t)(uintptr_t)ver);
	rig_put64(bv, 24, (uint64_t)(uintptr_t)title);
	nvos54(inner, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION, bv, sizeof bv);
	xfer_hdr(x, NV_ESC_RM_CONTROL, sizeof inner, inner);
	rc = xioctl(ctl, RIG_IOWR(NV_ESC_IOCTL_XFER_CMD, 16), x);
	report("xfer_bv", rc, inner, 28);
	printf("xfer_bv driver=%s\n", drv);
}

static void step_xfer_alloc(void)
{
	unsigned char inner[RIG_NVOS64_SIZE] = { 0 }, dev[56] = { 0 }, x[16];

	rig_put32(inner, 0, client);
	rig_put32(inner, 4, client);
	rig_put32(inner, 12, NV01_DEVICE_0);
	rig_put64(inner, 16, (uint64_t)(uintptr_t)dev);
	rig_put32(inner, 32, sizeof dev);           /* paramsSize (535+ NVOS64) */
	rig_put32(dev, 0, 1);                       /* deviceId: GPU 1 (FAKENV_GPUS=2) */
	xfer_hdr(x, NV_ESC_RM_ALLOC, sizeof inner, inner);
	report("xfer_alloc", xioctl(ctl, RIG_IOWR(NV_ESC_IOCTL_XFER_CMD, 16), x), inner, 40);
}

static void step_xfer_efault(void)
{
	unsigned char x[16];

	xfer_hdr(x, NV_ESC_RM_CONTROL, 32, BAD_PTR);
	report("xfer_efault", xioctl(ctl, RIG_IOWR(NV_ESC_IOCTL_XFER_CMD, 16), x), NULL, -1);
}

static void step_ctl_efault(void)
{
	report("ctl_efault", xioctl(ctl, RIG_IOWR(NV_ESC_RM_CONTROL, RIG_NVOS54_SIZE), BAD_PTR), NULL, -1);
}

static void step_short(void)
{
	unsigned char b[32];
	uint32_t fabric = 0;

	nvos54(b, NV0000_CTRL_CMD_SYSTEM_GET_FABRIC_STATUS, &fabric, sizeof fabric);
	report("short", xioctl(ctl, RIG_IOWR(NV_ESC_RM_CONTROL, 24), b), NULL, -1);
}

static void step_oversized(void)
{
	unsigned char b[24] = { 0 };

	rig_put32(b, 0, client);
	rig_put32(b, 4, client);
	rig_put32(b, 8, 0xbad);
	report("oversized", xioctl(ctl, RIG_IOWR(NV_ESC_RM_FREE, sizeof b), b), NULL, -1);
}

static void step_fabric(int fd, const char *what)
{
	unsigned char b[32];
	uint32_t fabric = 0;

	nvos54(b, NV0000_CTRL_CMD_SYSTEM_GET_FABRIC_STATUS, &fabric, sizeof fabric);
	report(what, xioctl(fd, RIG_IOWR(NV_ESC_RM_CONTROL, RIG_NVOS54_SIZE), b), b, 28);
}

static void step_version(const char *v)
{
	unsigned char b[RIG_VERSION_STR_SIZE] = { 0 };
	int rc;

	rig_put32(b, 0, RIG_VERSION_CMD_STRICT);
	snprintf((char *)b + RIG_VERSION_STRING_OFF, RIG_VERSION_STRING_LEN, "%s", v);
	rc = xioctl(ctl, RIG_IOWR(NV_ESC_CHECK_VERSION_STR, RIG_VERSION_STR_SIZE), b);
	report("version", rc, NULL, -1);
	printf("version kernel=%s\n", (char *)b + RIG_VERSION_STRING_OFF);
}

static void step_attach(unsigned n)
{
	uint32_t ids[RIG_MAX_GPUS];

	if (n == 0 || n > RIG_MAX_GPUS)
		n = 1;
	for (unsigned i = 0; i < n; i++)
		ids[i] = rig_gpu_id(i);
	report("attach", xioctl(ctl, RIG_IOWR(NV_ESC_ATTACH_GPUS_TO_FD, 4 * n), ids), NULL, -1);
}

static void step_uvm(const char *path)
{
	unsigned char init[RIG_UVM_INIT_SIZE] = { 0 }, pageable[RIG_UVM_PAGEABLE_SIZE] = { 0 };
	int fd = open_node(path);

	report("uvm_initialize", xioctl(fd, UVM_INITIALIZE, init), init, 8);
	report("uvm_pageable", xioctl(fd, UVM_PAGEABLE_MEM_ACCESS, pageable), pageable, 4);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: nvx STEP...  (see nvx.c)\n");
		return 64;
	}
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!strcmp(s, "ctl"))
			ctl = open_node("/dev/nvidiactl");
		else if (!strcmp(s, "gpu"))
			gpu = open_node("/dev/nvidia0");
		else if (!strcmp(s, "client"))
			step_client();
		else if (!strcmp(s, "free_bad"))
			step_free_bad();
		else if (!strcmp(s, "xfer_bv"))
			step_xfer_bv();
		else if (!strcmp(s, "xfer_alloc"))
			step_xfer_alloc();
		else if (!strcmp(s, "xfer_efault"))
			step_xfer_efault();
		else if (!strcmp(s, "ctl_efault"))
			step_ctl_efault();
		else if (!strcmp(s, "short"))
			step_short();
		else if (!strcmp(s, "oversized"))
			step_oversized();
		else if (!strcmp(s, "wrong_node"))
			step_fabric(gpu, "wrong_node");
		else if (!strcmp(s, "fabric"))
			step_fabric(ctl, "fabric");
		else if (!strncmp(s, "version=", 8))
			step_version(s + 8);
		else if (!strncmp(s, "attach=", 7))
			step_attach((unsigned)strtoul(s + 7, NULL, 10));
		else if (!strncmp(s, "uvm=", 4))
			step_uvm(s + 4);
		else {
			fprintf(stderr, "nvx: unknown step '%s'\n", s);
			return 64;
		}
	}
	if (gpu >= 0)
		close(gpu);
	if (ctl >= 0)
		close(ctl);
	return 0;
}
