/*
 * ct_nv_decode on synthetic events built like shim/capture.c records them.
 * Each test names the section of tracer/decode/ABI.md (§N) or the
 * decoder pitfall (§11.n) it checks.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "nvdecode.h"
#include "synth_ev.h"
#include "xlat.h"

#define V530 CT_DRV(530, 30, 2)
#define V550 CT_DRV(550, 163, 1)
#define V580 CT_DRV(580, 159, 4)
#define V595 CT_DRV(595, 45, 4)

static struct sev S;
static struct ct_nv_ioctl D;

static const struct ct_nv_ioctl *dec(uint32_t drv)
{
	ck_assert_int_eq(ct_nv_decode(sev_done(&S), drv, NULL, &D), 0);
	return &D;
}

#define HAS(hay, needle) ck_assert_msg(strstr((hay), (needle)), "'%s' lacks '%s'", (hay), (needle))

/* ---- ABI.md §4 CHECK_VERSION_STR -------------------------------------------------- */

static void version_block(unsigned char *b, uint32_t cmd, uint32_t reply, const char *v)
{
	memset(b, 0, 72);
	put32(b, 0, cmd);
	put32(b, 4, reply);
	memcpy(b + 8, v, strlen(v));
}

START_TEST(version_str_mismatch)
{
	unsigned char b[72];

	sev_ioctl(&S, 5, NODE_CTL, 0xC04846D2u, 72);
	version_block(b, 0, 0, "580.159.04");
	sev_efield(&S, CT_FLD_BLOCK, b, 72);
	/* the kernel sets reply, writes its own version over the client's and
	 * returns -EINVAL, but still copies the block back (ABI.md §4, §11.5) */
	sev_exit(&S, -1, EINVAL);
	version_block(b, 0, 1, "575.51.02");
	sev_xfield(&S, CT_FLD_BLOCK, b, 72);
	const struct ct_nv_ioctl *d = dec(V580);

	ck_assert_int_eq(d->family, CT_NV_FAM_FRONTEND);
	ck_assert_str_eq(d->name, "NV_ESC_CHECK_VERSION_STR");
	ck_assert_str_eq(d->short_name, "CHECK_VERSION_STR");
	ck_assert_int_eq(d->handshake.source, CT_NV_HS_CHECK_VERSION_STR);
	ck_assert_int_eq(d->handshake.result, CT_NV_HS_MISMATCH);
	ck_assert_str_eq(d->handshake.client, "580.159.04");
	ck_assert_str_eq(d->handshake.kernel, "575.51.02");
	ck_assert_uint_eq(d->handshake.kernel_drv, CT_DRV(575, 51, 2));
	ck_assert(!d->ok);
	ck_assert(!d->has_status);
	ck_assert_str_eq(d->summary, "CHECK_VERSION_STR client 580.159.04 kernel 575.51.02: MISMATCH");
	ck_assert_str_eq(d->warning, "");
}
END_TEST

START_TEST(version_str_match_query_unprocessed)
{
	unsigned char b[72];

	/* strict and equal: ok, block unchanged but for reply */
	sev_ioctl(&S, 5, NODE_CTL, 0xC04846D2u, 72);
	version_block(b, 0, 0, "580.159.04");
	sev_efield(&S, CT_FLD_BLOCK, b, 72);
	sev_exit(&S, 0, 0);
	version_block(b, 0, 1, "580.159.04");
	sev_xfield(&S, CT_FLD_BLOCK, b, 72);
	dec(V580);
	ck_assert_int_eq(D.handshake.result, CT_NV_HS_MATCH);
	ck_assert(D.ok);
	ck_assert_str_eq(D.summary, "CHECK_VERSION_STR client 580.159.04 kernel 580.159.04: match");

	/* '2' = QUERY from 530.30.02: the kernel just tells its version */
	sev_ioctl(&S, 5, NODE_CTL, 0xC04846D2u, 72);
	version_block(b, '2', 0, "");
	sev_efield(&S, CT_FLD_BLOCK, b, 72);
	sev_exit(&S, 0, 0);
	version_block(b, '2', 1, "580.159.04");
	sev_xfield(&S, CT_FLD_BLOCK, b, 72);
	dec(V580);
	ck_assert_int_eq(D.handshake.result, CT_NV_HS_REPORTED);
	ck_assert_str_eq(D.handshake.kernel, "580.159.04");
	HAS(D.summary, "CHECK_VERSION_STR query kernel 580.159.04");

	/* on /dev/nvidia0 the kernel rejects it before setting reply (ABI.md §4) */
	sev_ioctl(&S, 6, NODE_GPU(0), 0xC04846D2u, 72);
	version_block(b, 0, 0, "580.159.04");
	sev_efield(&S, CT_FLD_BLOCK, b, 72);
	sev_exit(&S, -1, EINVAL);
	sev_xfield(&S, CT_FLD_BLOCK, b, 72);
	dec(V580);
	ck_assert_int_eq(D.handshake.result, CT_NV_HS_UNKNOWN);
	HAS(D.warning, "reply 0");
	HAS(D.warning, "wrong node: CHECK_VERSION_STR must go to /dev/nvidiactl, sent to nvidia0");
	HAS(D.summary, "-> -1 EINVAL");
}
END_TEST

/* ---- RM statuses (ABI.md §1 "transport result vs RM status", §11.1) ----------------- */

static void nvos64(unsigned char *b, uint32_t root, uint32_t parent, uint32_t obj, uint32_t cls,
		   uint32_t status)
{
	memset(b, 0, 48);
	put32(b, 0, root);
	put32(b, 4, parent);
	put32(b, 8, obj);
	put32(b, 12, cls);
	put64(b, 16, 0x7ffd00002000ull);
	put32(b, 32, 16);
	put32(b, 40, status);
}

START_TEST(rm_alloc_status_and_root_client)
{
	unsigned char b[48];

	sev_ioctl(&S, 5, NODE_CTL, 0xC030462Bu, 48);
	nvos64(b, 0xc1d0001a, 0x5c000002, 0x5c000010, 0xA06C, 0);
	sev_efield(&S, CT_FLD_BLOCK, b, 48);
	sev_exit(&S, 0, 0);
	nvos64(b, 0xc1d0001a, 0x5c000002, 0x5c000010, 0xA06C, 0x22);
	sev_xfield(&S, CT_FLD_BLOCK, b, 48);
	dec(V580);
	ck_assert_int_eq(D.family, CT_NV_FAM_RM);
	ck_assert(D.has_status);
	ck_assert_uint_eq(D.status, 0x22);
	ck_assert_int_eq(D.status_off, 40);
	ck_assert_str_eq(D.status_name, "NV_ERR_INVALID_CLASS");
	ck_assert(!D.ok);
	ck_assert(D.u.alloc.nvos64);
	ck_assert_str_eq(D.summary, "RM_ALLOC KEPLER_CHANNEL_GROUP_A -> NV_ERR_INVALID_CLASS");

	/* class 0 in, 0x41 out, RM-chosen handle (ABI.md §11.15, §4) */
	sev_ioctl(&S, 5, NODE_CTL, 0xC030462Bu, 48);
	nvos64(b, 0, 0, 0, 0, 0);
	sev_efield(&S, CT_FLD_BLOCK, b, 48);
	sev_exit(&S, 0, 0);
	nvos64(b, 0, 0, 0xc1d00019, 0x41, 0);
	sev_xfield(&S, CT_FLD_BLOCK, b, 48);
	dec(V580);
	ck_assert(D.ok);
	ck_assert_uint_eq(D.u.alloc.hClass_in, 0);
	ck_assert_uint_eq(D.u.alloc.hClass_out, 0x41);
	ck_assert_uint_eq(D.u.alloc.hObject_in, 0);
	ck_assert_uint_eq(D.u.alloc.hObject_out, 0xc1d00019);
	ck_assert_str_eq(D.u.alloc.class_name, "NV01_ROOT_CLIENT");
	ck_assert_str_eq(D.summary, "RM_ALLOC NV01_ROOT_CLIENT -> hClient 0xc1d00019");
	ck_assert_uint_eq(D.unknown, 0);
}
END_TEST

static void nvos54(unsigned char *b, uint32_t client, uint32_t obj, uint32_t cmd, uint32_t psize,
		   uint32_t status)
{
	memset(b, 0, 32);
	put32(b, 0, client);
	put32(b, 4, obj);
	put32(b, 8, cmd);
	put64(b, 16, 0x7ffd00003000ull);
	put32(b, 24, psize);
	put32(b, 28, status);
}

START_TEST(rm_control_and_free_status)
{
	unsigned char b[32], pay[132];

	sev_ioctl(&S, 5, NODE_CTL, 0xC020462Au, 32);
	nvos54(b, 0xc1d0001a, 0xc1d0001a, 0x215, 132, 0);
	sev_efield(&S, CT_FLD_BLOCK, b, 32);
	sev_exit(&S, 0, 0);
	nvos54(b, 0xc1d0001a, 0xc1d0001a, 0x215, 132, 0x1b);
	sev_xfield(&S, CT_FLD_BLOCK, b, 32);
	memset(pay, 0xff, sizeof pay);
	put32(pay, 0, 0x600);
	put32(pay, 128, 0x600); /* failedId */
	sev_x32(&S, CT_FLD_PAYLOAD_SIZE, 132);
	sev_xfield(&S, CT_FLD_PAYLOAD, pay, 132);
	dec(V580);
	ck_assert_str_eq(D.name, "NV_ESC_RM_CONTROL");
	ck_assert_uint_eq(D.u.control.cmd, 0x215);
	ck_assert_str_eq(D.u.control.cmd_name, "NV0000_CTRL_CMD_GPU_ATTACH_IDS");
	ck_assert(D.u.control.cmd_named);
	ck_assert_uint_eq(D.u.control.hClient, 0xc1d0001a);
	ck_assert_int_eq(D.status_off, 28);
	ck_assert(!D.ok);
	ck_assert_str_eq(D.summary,
			 "RM_CONTROL NV0000_CTRL_CMD_GPU_ATTACH_IDS -> NV_ERR_INSUFFICIENT_PERMISSIONS, failedId 0x600");

	/* RM_FREE: NVOS00 status @12 */
	unsigned char f[16] = { 0 };
	sev_ioctl(&S, 5, NODE_CTL, 0xC0104629u, 16);
	put32(f, 0, 0xc1d0001a);
	put32(f, 4, 0xc1d0001a);
	put32(f, 8, 0x5c000002);
	sev_efield(&S, CT_FLD_BLOCK, f, 16);
	sev_exit(&S, 0, 0);
	put32(f, 12, 0x33);
	sev_xfield(&S, CT_FLD_BLOCK, f, 16);
	dec(V580);
	ck_assert_str_eq(D.summary, "RM_FREE 0x5c000002 -> NV_ERR_INVALID_OBJECT_HANDLE");
	ck_assert_uint_eq(D.u.free.hObjectOld, 0x5c000002);
	ck_assert(!D.ok);
}
END_TEST

/* ABI.md §7: the virtualization mode (a vGPU guest, catalog G6) and the compute-mode rules */
static void answer_event(uint32_t cmd, const unsigned char *pay, uint16_t psize, uint32_t status)
{
	unsigned char b[32];

	sev_ioctl(&S, 5, NODE_CTL, 0xC020462Au, 32);
	nvos54(b, 0xc1d0001a, 0xcaf00002, cmd, psize, 0);
	sev_efield(&S, CT_FLD_BLOCK, b, 32);
	sev_exit(&S, 0, 0);
	nvos54(b, 0xc1d0001a, 0xcaf00002, cmd, psize, status);
	sev_xfield(&S, CT_FLD_BLOCK, b, 32);
	sev_x32(&S, CT_FLD_PAYLOAD_SIZE, psize);
	sev_xfield(&S, CT_FLD_PAYLOAD, pay, psize);
	dec(V580);
}

START_TEST(virt_mode_and_compute_rules)
{
	unsigned char pay[8] = { 0 };

	put32(pay, 0, 2);
	pay[4] = 1; /* isGridBuild */
	answer_event(0x00800289, pay, 8, 0);
	ck_assert(D.u.control.has_answer);
	ck_assert_uint_eq(D.u.control.answer, 2);
	ck_assert_str_eq(
		D.summary,
		"RM_CONTROL NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE -> mode VGX (vGPU guest), GRID build");
	/* the 4-byte layout (virtualizationMode alone): no isGridBuild */
	put32(pay, 0, 1);
	answer_event(0x00800289, pay, 4, 0);
	ck_assert_str_eq(D.summary,
			 "RM_CONTROL NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE -> mode NMOS (passthrough)");
	put32(pay, 0, 9);
	answer_event(0x00800289, pay, 8, 0);
	ck_assert_str_eq(D.summary,
			 "RM_CONTROL NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE -> mode ? (9), GRID build");
	/* a failed control wrote no answer */
	put32(pay, 0, 2);
	answer_event(0x00800289, pay, 8, 0x1f);
	ck_assert(!D.u.control.has_answer);
	put32(pay, 0, 3);
	answer_event(0x20800131, pay, 4, 0);
	ck_assert(D.u.control.has_answer);
	ck_assert_uint_eq(D.u.control.answer, 3);
	ck_assert_str_eq(D.summary, "RM_CONTROL NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES -> compute mode "
				    "EXCLUSIVE_COMPUTE_PROCESS (Exclusive Process)");
	/* a short payload: nothing read */
	answer_event(0x20800131, pay, 2, 0);
	ck_assert_msg(!D.u.control.has_answer, "%s", D.summary);
	ck_assert_str_eq(ct_nv_compute_rules_name(0), "NONE (Default)");
	ck_assert_ptr_null(ct_nv_compute_rules_name(4));
}
END_TEST

/* ---- ABI.md §6 UVM rmStatus, incl. the tail of a big block --------------------------- */

START_TEST(uvm_status_head_and_tail)
{
	unsigned char b[40] = { 0 };

	/* ABI.md §11.2: plain number 37, never _IOC-decoded */
	sev_ioctl(&S, 9, NODE_UVM, 37, 40);
	memset(b, 0xab, 16);
	put32(b, 24, 8);           /* rmCtrlFd */
	put32(b, 28, 0xc1d0001a);  /* hClient */
	sev_efield(&S, CT_FLD_BLOCK, b, 40);
	sev_exit(&S, 0, 0);
	put32(b, 36, 0x1a);
	sev_xfield(&S, CT_FLD_BLOCK, b, 40);
	dec(V580);
	ck_assert_int_eq(D.family, CT_NV_FAM_UVM);
	ck_assert_str_eq(D.name, "UVM_REGISTER_GPU");
	ck_assert_uint_eq(D.status, 0x1a);
	ck_assert_int_eq(D.status_off, 36);
	ck_assert_str_eq(D.summary, "UVM_REGISTER_GPU -> NV_ERR_INSUFFICIENT_RESOURCES");
	ck_assert(D.u.uvm.has_uuid);
	ck_assert_int_eq(D.u.uvm.rm_ctrl_fd, 8);
	ck_assert(!D.ok);

	/* MAP_EXTERNAL_ALLOCATION: 9264 bytes, rmStatus @9260 lives in BLOCK_TAIL */
	static unsigned char big[9264];
	memset(big, 0, sizeof big);
	put64(big, 0, 0x7f0000000000ull);
	put64(big, 8, 0x200000);
	put32(big, 9248, 8);
	put32(big, 9252, 0xc1d0001a);
	put32(big, 9256, 0x5c000040);
	sev_ioctl(&S, 9, NODE_UVM, 33, 9264);
	sev_efield(&S, CT_FLD_BLOCK, big, 1024);
	sev_tail(&S, 0, 9200, big + 9200, 64);
	sev_exit(&S, 0, 0);
	put32(big, 9260, 0x1e);
	sev_xfield(&S, CT_FLD_BLOCK, big, 1024);
	sev_tail(&S, 1, 9200, big + 9200, 64);
	dec(V580);
	ck_assert_str_eq(D.name, "UVM_MAP_EXTERNAL_ALLOCATION");
	ck_assert(D.has_status);
	ck_assert_int_eq(D.status_off, 9260);
	ck_assert_str_eq(D.status_name, "NV_ERR_INVALID_ADDRESS");
	ck_assert_uint_eq(D.u.uvm.hObject, 0x5c000040);
	ck_assert_int_eq(D.u.uvm.rm_ctrl_fd, 8);
	ck_assert_uint_eq(D.expected_size, 9264);
	ck_assert_str_eq(D.warning, "");
	HAS(D.summary, "-> NV_ERR_INVALID_ADDRESS");
	/* on 535 the same command is 1200 bytes (status @1196): the recorded
	 * size disagrees with that version's layout */
	dec(CT_DRV(535, 288, 1));
	HAS(D.warning, "expects 1200");
	ck_assert(!D.has_status); /* @1196 was not recorded (neither head nor tail) */
}
END_TEST

START_TEST(uvm_warning_is_not_failure)
{
	unsigned char b[8] = { 0 };

	/* ABI.md §6, §11.11: MM_INITIALIZE may return NV_WARN_NOTHING_TO_DO */
	sev_ioctl(&S, 10, NODE_UVM, 75, 8);
	put32(b, 0, 9);
	sev_efield(&S, CT_FLD_BLOCK, b, 8);
	sev_exit(&S, 0, 0);
	put32(b, 4, 0x10006);
	sev_xfield(&S, CT_FLD_BLOCK, b, 8);
	dec(V580);
	ck_assert_str_eq(D.name, "UVM_MM_INITIALIZE");
	ck_assert(D.has_status);
	ck_assert(D.is_warning);
	ck_assert(D.ok);
	ck_assert_str_eq(D.status_name, "NV_WARN_NOTHING_TO_DO");
	ck_assert_int_eq(D.u.uvm.uvm_fd, 9);
	ck_assert_str_eq(D.summary, "UVM_MM_INITIALIZE uvmFd 9 -> NV_WARN_NOTHING_TO_DO (warning)");
}
END_TEST

/* ---- ABI.md §2a NUMA_INFO: a NUMA state, not an NV_STATUS (§11.12) --------------------- */

START_TEST(numa_state)
{
	static unsigned char b[560];

	memset(b, 0, sizeof b);
	sev_ioctl(&S, 6, NODE_GPU(0), 0xC23046D7u, 560);
	sev_efield(&S, CT_FLD_BLOCK, b, 560);
	sev_exit(&S, 0, 0);
	put32(b, 0, (uint32_t)-1);
	put32(b, 4, 4); /* ONLINE_FAILED: would be NV_ERR_CALLBACK_NOT_SCHEDULED as an NV_STATUS */
	sev_xfield(&S, CT_FLD_BLOCK, b, 560);
	dec(V580);
	ck_assert_str_eq(D.name, "NV_ESC_NUMA_INFO");
	ck_assert(!D.has_status);
	ck_assert_int_eq(D.args, CT_NV_A_NUMA_INFO);
	ck_assert_int_eq(D.u.numa.state, 4);
	ck_assert_str_eq(D.u.numa.state_name, "ONLINE_FAILED");
	ck_assert(D.ok);
	ck_assert_str_eq(D.summary, "NUMA_INFO -> nid -1 state ONLINE_FAILED");
	ck_assert_str_eq(D.warning, "");
	ck_assert_str_eq(ct_nv_numa_state_name(0), "DISABLED");
	ck_assert_ptr_null(ct_nv_numa_state_name(7));
}
END_TEST

/* ---- ABI.md §1 size validation: short and oversized blocks ----------------------------- */

START_TEST(short_and_oversized_blocks)
{
	unsigned char b[32] = { 0 };

	/* RM_CONTROL with a 24-byte NVOS54: rejected before RM, status not written */
	sev_ioctl(&S, 5, NODE_CTL, 0xC018462Au, 24);
	put32(b, 8, 0x101);
	sev_efield(&S, CT_FLD_BLOCK, b, 24);
	sev_exit(&S, -1, EINVAL);
	sev_xfield(&S, CT_FLD_BLOCK, b, 24);
	dec(V580);
	ck_assert_str_eq(D.name, "NV_ESC_RM_CONTROL");
	HAS(D.warning, "short or oversized parameter block: 24 bytes, driver 580.159.04 expects 32");
	ck_assert(!D.has_status);
	ck_assert_uint_eq(D.expected_size, 32);
	HAS(D.summary, "-> -1 EINVAL");

	/* SYS_PARAMS with 16 bytes */
	sev_ioctl(&S, 5, NODE_CTL, 0xC01046D6u, 16);
	sev_efield(&S, CT_FLD_BLOCK, b, 16);
	sev_exit(&S, -1, EINVAL);
	dec(V580);
	HAS(D.warning, "16 bytes, driver 580.159.04 expects 8");

	/* a 40-byte NVOS64 is the 525-535 layout: on 580 only 32 or 48 are valid */
	sev_ioctl(&S, 5, NODE_CTL, 0xC028462Bu, 40);
	sev_efield(&S, CT_FLD_BLOCK, b, 32);
	sev_exit(&S, -1, EINVAL);
	dec(V580);
	HAS(D.warning, "40 bytes, driver 580.159.04 expects 32 (NVOS21) or 48 (NVOS64)");
	/* ... while on 530 it is the normal NVOS64 form (status @36) */
	dec(V530);
	ck_assert_str_eq(D.warning, "");

	/* CARD_INFO must be a non-zero multiple of 72 */
	sev_ioctl(&S, 5, NODE_CTL, 0xC04646C8u, 70);
	sev_exit(&S, -1, EINVAL);
	dec(V580);
	HAS(D.warning, "not a non-zero multiple of 72");

	/* WAIT_OPEN_COMPLETE does not exist before 550.40.07 */
	sev_ioctl(&S, 6, NODE_GPU(0), 0xC00846DAu, 8);
	sev_exit(&S, -1, EINVAL);
	dec(CT_DRV(535, 288, 1));
	HAS(D.warning, "does not exist in driver 535.288.01");
}
END_TEST

/* ---- ABI.md §1 XFER ----------------------------------------------------------------- */

/* the enter record of NV_ESC_IOCTL_XFER_CMD on nvidiactl wrapping escape 0x2A
 * (RM_CONTROL) of inner_size bytes at inner_ptr, as the shim records it: the
 * 16-byte block as BLOCK and as XFER; x receives that block */
static void xfer_enter(unsigned char x[16], uint32_t inner_size, uint64_t inner_ptr)
{
	sev_ioctl(&S, 5, NODE_CTL, 0xC01046D3u, 16);
	put32(x, 0, 0x2A);
	put32(x, 4, inner_size);
	put64(x, 8, inner_ptr);
	sev_efield(&S, CT_FLD_BLOCK, x, 16);
	sev_efield(&S, CT_FLD_XFER, x, 16);
}

START_TEST(xfer_wrapped_control)
{
	unsigned char x[16], inner[32];

	xfer_enter(x, 32, 0x7ffd00004000ull);
	nvos54(inner, 0xc1d0001a, 0x5c000003, 0x20800102, 564, 0);
	sev_efield(&S, CT_FLD_PAYLOAD, inner, 32);
	sev_exit(&S, 0, 0);
	sev_xfield(&S, CT_FLD_BLOCK, x, 16);
	nvos54(inner, 0xc1d0001a, 0x5c000003, 0x20800102, 564, 0x56);
	sev_x32(&S, CT_FLD_PAYLOAD_SIZE, 32);
	sev_xfield(&S, CT_FLD_PAYLOAD, inner, 32);
	dec(V580);
	ck_assert(D.via_xfer);
	ck_assert_uint_eq(D.xfer_cmd, 0x2A);
	ck_assert_uint_eq(D.nr, 0x2A);
	ck_assert_str_eq(D.name, "NV_ESC_RM_CONTROL");
	ck_assert_uint_eq(D.u.control.cmd, 0x20800102);
	ck_assert_uint_eq(D.status, 0x56);
	ck_assert_str_eq(D.summary, "RM_CONTROL NV2080_CTRL_CMD_GPU_GET_INFO_V2 via XFER -> NV_ERR_NOT_SUPPORTED");
	ck_assert_str_eq(D.warning, "");
}
END_TEST

/* XFER-wrapped GET_BUILD_VERSION: the shim records the inner block, then its
 * params as a second PAYLOAD_SIZE + PAYLOAD pair, then the strings */
START_TEST(xfer_wrapped_build_version)
{
	unsigned char x[16], inner[32], pay[40] = { 0 }, s[1 + 32];

	xfer_enter(x, 32, 0x7ffd00004000ull);
	nvos54(inner, 0xc1d00019, 0xc1d00019, 0x101, 40, 0);
	sev_efield(&S, CT_FLD_PAYLOAD, inner, 32);
	sev_exit(&S, 0, 0);
	sev_xfield(&S, CT_FLD_BLOCK, x, 16);
	sev_x32(&S, CT_FLD_PAYLOAD_SIZE, 32);
	sev_xfield(&S, CT_FLD_PAYLOAD, inner, 32);
	put32(pay, 0, 32);
	put32(pay, 32, 36500000u);
	sev_x32(&S, CT_FLD_PAYLOAD_SIZE, 40);
	sev_xfield(&S, CT_FLD_PAYLOAD, pay, 40);
	memset(s, 0, sizeof s);
	memcpy(s + 1, "575.51.02", 9);
	sev_xfield(&S, CT_FLD_STRING, s, sizeof s);
	dec(V580);
	ck_assert(D.via_xfer);
	ck_assert_uint_eq(D.u.control.cmd, 0x101);
	ck_assert_int_eq(D.handshake.source, CT_NV_HS_BUILD_VERSION);
	ck_assert_int_eq(D.handshake.result, CT_NV_HS_REPORTED);
	ck_assert_str_eq(D.handshake.kernel, "575.51.02");
	ck_assert_uint_eq(D.handshake.changelist, 36500000u);
	ck_assert_str_eq(D.summary,
			 "RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION via XFER -> driver 575.51.02");

	/* a trace of an older shim (no second pair): no strings, no payload */
	sev_ioctl(&S, 5, NODE_CTL, 0xC01046D3u, 16);
	sev_efield(&S, CT_FLD_BLOCK, x, 16);
	sev_efield(&S, CT_FLD_XFER, x, 16);
	sev_efield(&S, CT_FLD_PAYLOAD, inner, 32);
	sev_exit(&S, 0, 0);
	sev_xfield(&S, CT_FLD_BLOCK, x, 16);
	sev_x32(&S, CT_FLD_PAYLOAD_SIZE, 32);
	sev_xfield(&S, CT_FLD_PAYLOAD, inner, 32);
	dec(V580);
	ck_assert_str_eq(D.handshake.kernel, "");
	ck_assert_int_eq(D.handshake.result, CT_NV_HS_UNKNOWN);
	ck_assert_str_eq(D.summary, "RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION via XFER");
}
END_TEST

/* the program's pointer was bad: the shim recorded empty blocks and
 * CT_RF_UNREADABLE; zeroes must not be named as command 0 or class 0 */
START_TEST(unreadable_blocks)
{
	static const struct {
		uint64_t req;
		uint32_t size;
		const char *summary;
	} rows[] = {
		{ 0xC020462Au, 32, "RM_CONTROL (parameter block unreadable) -> -1 EFAULT" },
		{ 0xC030462Bu, 48, "RM_ALLOC (parameter block unreadable) -> -1 EFAULT" },
		{ 0xC0104629u, 16, "RM_FREE (parameter block unreadable) -> -1 EFAULT" },
		{ 0xC0384627u, 56, "RM_ALLOC_MEMORY (parameter block unreadable) -> -1 EFAULT" },
	};

	for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		sev_ioctl(&S, 5, rows[i].req == 0xC0384627u ? NODE_GPU(0) : NODE_CTL, rows[i].req, rows[i].size);
		sev_efield(&S, CT_FLD_BLOCK, "", 0);
		S.eh.flags |= CT_RF_UNREADABLE;
		sev_exit(&S, -1, EFAULT);
		sev_xfield(&S, CT_FLD_BLOCK, "", 0);
		S.xh.flags |= CT_RF_UNREADABLE;
		dec(V580);
		ck_assert_str_eq(D.summary, rows[i].summary);
		ck_assert(D.unreadable);
		ck_assert_uint_eq(D.unknown, 0);
		ck_assert_msg(!strstr(D.summary, "RESERVED") && !strstr(D.summary, "ROOT"), "%s", D.summary);
		HAS(D.warning, "unreadable");
	}
	/* the control: no command in its arguments either */
	sev_ioctl(&S, 5, NODE_CTL, 0xC020462Au, 32);
	sev_efield(&S, CT_FLD_BLOCK, "", 0);
	sev_exit(&S, -1, EFAULT);
	dec(V580);
	ck_assert(D.u.control.cmd_unreadable);
	ck_assert(!D.u.control.cmd_named);
	ck_assert_str_eq(D.u.control.cmd_name, "(parameter block unreadable)");

	/* XFER whose inner pointer was bad: the inner control is unreadable too */
	{
		unsigned char x[16];
		xfer_enter(x, 32, 0x10);
		sev_efield(&S, CT_FLD_PAYLOAD, "", 0);
		sev_exit(&S, -1, EFAULT);
		sev_xfield(&S, CT_FLD_BLOCK, x, 16);
		sev_x32(&S, CT_FLD_PAYLOAD_SIZE, 32);
		sev_xfield(&S, CT_FLD_PAYLOAD, "", 0);
		dec(V580);
		ck_assert(D.u.control.cmd_unreadable);
		ck_assert_str_eq(D.summary, "RM_CONTROL (parameter block unreadable) via XFER -> -1 EFAULT");
	}
	/* a block too short to hold the command is said so, not called unreadable */
	{
		unsigned char b[8] = { 0 };
		sev_ioctl(&S, 5, NODE_CTL, 0xC008462Au, 8);
		sev_efield(&S, CT_FLD_BLOCK, b, 8);
		sev_exit(&S, -1, EINVAL);
		sev_xfield(&S, CT_FLD_BLOCK, b, 8);
		dec(V580);
		ck_assert_str_eq(D.u.control.cmd_name, "(block too short)");
		HAS(D.warning, "short or oversized parameter block: 8 bytes");
	}
}
END_TEST

/* ---- ABI.md §2 node rules (§11.9) --------------------------------------------------- */

START_TEST(wrong_nodes)
{
	unsigned char b[56] = { 0 };

	/* RM_ALLOC_MEMORY must go to /dev/nvidiaN */
	sev_ioctl(&S, 5, NODE_CTL, 0xC0384627u, 56);
	put32(b, 12, 0x71);
	put32(b, 48, (uint32_t)-1);
	sev_efield(&S, CT_FLD_BLOCK, b, 56);
	sev_exit(&S, -1, EINVAL);
	sev_xfield(&S, CT_FLD_BLOCK, b, 56);
	dec(V580);
	HAS(D.warning, "wrong node: RM_ALLOC_MEMORY must go to a /dev/nvidiaN node, sent to nvidiactl");
	HAS(D.summary, "RM_ALLOC_MEMORY NV01_MEMORY_SYSTEM_OS_DESCRIPTOR fd -1");

	/* a ctl-only escape on /dev/nvidia0 */
	sev_ioctl(&S, 6, NODE_GPU(0), 0xC00846D6u, 8);
	sev_efield(&S, CT_FLD_BLOCK, b, 8);
	sev_exit(&S, -1, EINVAL);
	dec(V580);
	HAS(D.warning, "SYS_PARAMS must go to /dev/nvidiactl, sent to nvidia0");

	/* RM_CONTROL on /dev/nvidia0: rejected before RM, the status field is
	 * whatever the caller left there (ABI.md §11.9) */
	unsigned char ctl[32];
	nvos54(ctl, 1, 1, 0x101, 40, 0x1f);
	sev_ioctl(&S, 6, NODE_GPU(0), 0xC020462Au, 32);
	sev_efield(&S, CT_FLD_BLOCK, ctl, 32);
	sev_exit(&S, -1, EINVAL);
	sev_xfield(&S, CT_FLD_BLOCK, ctl, 32);
	dec(V580);
	ck_assert(!D.has_status);
	HAS(D.warning, "RM_CONTROL must go to /dev/nvidiactl, sent to nvidia0");
	ck_assert_str_eq(D.summary, "RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION -> -1 EINVAL");

	/* event classes may be allocated on any node (ABI.md §2b) */
	unsigned char a[48];
	nvos64(a, 0xc1d0001a, 0x5c000003, 0x5c000020, 0x79, 0);
	sev_ioctl(&S, 6, NODE_GPU(0), 0xC030462Bu, 48);
	sev_efield(&S, CT_FLD_BLOCK, a, 48);
	sev_exit(&S, 0, 0);
	sev_xfield(&S, CT_FLD_BLOCK, a, 48);
	dec(V580);
	ck_assert_str_eq(D.warning, "");
	ck_assert_str_eq(D.summary, "RM_ALLOC NV01_EVENT_OS_EVENT -> hObject 0x5c000020");

	/* a UVM number on nvidiactl */
	sev_ioctl(&S, 5, NODE_CTL, 0x30000001u, 12288);
	sev_exit(&S, -1, EINVAL);
	dec(V580);
	HAS(D.warning, "is the UVM command UVM_INITIALIZE: sent to nvidiactl instead of /dev/nvidia-uvm");
	ck_assert(D.unknown & CT_NV_UNK_ESCAPE);
	ck_assert_str_eq(D.name, "_IOC(NONE,0x00,0x01,12288)");

	/* an NVIDIA frontend request on nvidia-uvm */
	sev_ioctl(&S, 9, NODE_UVM, 0xC020462Au, 0);
	sev_exit(&S, -1, ENOSYS);
	dec(V580);
	ck_assert_int_eq(D.family, CT_NV_FAM_UVM);
	ck_assert_str_eq(D.name, "UVM cmd 0xc020462a");
	HAS(D.warning, "_IOC(RW,'F',0x2a,32) = NV_ESC_RM_CONTROL is an NVIDIA frontend request: sent to nvidia-uvm");

	/* a tools command on the main UVM node */
	sev_ioctl(&S, 9, NODE_UVM, 56, 56);
	sev_exit(&S, 0, 0);
	dec(V580);
	HAS(D.warning, "UVM_TOOLS_INIT_EVENT_TRACKER is routed on /dev/nvidia-uvm-tools, sent to nvidia-uvm");

	/* an escape on a capability node (NVML after a failed handshake, fixture i16) */
	sev_ioctl(&S, 9, NODE_CAPS(1), 0xC030462Bu, 48);
	sev_efield(&S, CT_FLD_BLOCK, a, 48);
	sev_exit(&S, -1, ENOTTY);
	dec(V580);
	ck_assert_int_eq(D.family, CT_NV_FAM_OTHER);
	ck_assert_str_eq(D.name, "NV_ESC_RM_ALLOC");
	HAS(D.warning, "sent to nvidia-caps/nvidia-cap1");
	ck_assert_str_eq(D.summary, "RM_ALLOC NV01_EVENT_OS_EVENT -> -1 ENOTTY");
}
END_TEST

/* ---- ABI.md §3, §10: NVOS21 status offset by driver version (§11.4) ------------------- */

START_TEST(nvos21_status_by_version)
{
	unsigned char b[32] = { 0 };

	sev_ioctl(&S, 5, NODE_CTL, 0xC020462Bu, 32);
	put32(b, 12, 0x80);
	sev_efield(&S, CT_FLD_BLOCK, b, 32);
	sev_exit(&S, 0, 0);
	put32(b, 24, 0x1f); /* status before 535.43.02 */
	put32(b, 28, 0x22); /* status from 535.43.02 (paramsSize took @24) */
	sev_xfield(&S, CT_FLD_BLOCK, b, 32);
	dec(V530);
	ck_assert(!D.u.alloc.nvos64);
	ck_assert_int_eq(D.status_off, 24);
	ck_assert_str_eq(D.status_name, "NV_ERR_INVALID_ARGUMENT");
	dec(V580);
	ck_assert_int_eq(D.status_off, 28);
	ck_assert_str_eq(D.status_name, "NV_ERR_INVALID_CLASS");
	dec(0); /* unknown: newest layout */
	ck_assert_int_eq(D.status_off, 28);
	HAS(D.summary, "RM_ALLOC NV01_DEVICE_0 -> NV_ERR_INVALID_CLASS");
}
END_TEST

/* ---- ABI.md §5, §11.10: 0x8B by version ------------------------------------------------- */

START_TEST(status_0x8b_by_version)
{
	unsigned char b[32];

	sev_ioctl(&S, 5, NODE_CTL, 0xC020462Au, 32);
	nvos54(b, 1, 2, 0x20800102, 564, 0);
	sev_efield(&S, CT_FLD_BLOCK, b, 32);
	sev_exit(&S, 0, 0);
	nvos54(b, 1, 2, 0x20800102, 564, 0x8B);
	sev_xfield(&S, CT_FLD_BLOCK, b, 32);
	dec(V580);
	ck_assert_str_eq(D.status_name, "NV_ERR_DMA_XFER_FAILED");
	HAS(D.summary, "-> NV_ERR_DMA_XFER_FAILED");
	dec(V595);
	ck_assert_str_eq(D.status_name, "NV_ERR_OPERATION_ABORTED");
	dec(0);
	ck_assert_str_eq(D.status_name, "NV_ERR_OPERATION_ABORTED");
	/* 0x81 was NVSWITCH_FABRIC_NOT_READY before 570 */
	nvos54(b, 1, 2, 0x20800102, 564, 0x81);
	S.xlen = 0;
	sev_xfield(&S, CT_FLD_BLOCK, b, 32);
	dec(V550);
	ck_assert_str_eq(D.status_name, "NV_ERR_NVSWITCH_FABRIC_NOT_READY");
	dec(V580);
	ck_assert_str_eq(D.status_name, "NV_ERR_NVLINK_FABRIC_NOT_READY");
}
END_TEST

/* ---- ABI.md §7, §10: control payload sizes that changed by version ----------------------- */

START_TEST(control_params_size_by_version)
{
	unsigned char b[32];

	/* libcuda built for 575 asks GET_PROBED_IDS with 256 bytes (fixture i07) */
	sev_ioctl(&S, 5, NODE_CTL, 0xC020462Au, 32);
	nvos54(b, 1, 1, 0x214, 256, 0);
	sev_efield(&S, CT_FLD_BLOCK, b, 32);
	sev_exit(&S, 0, 0);
	nvos54(b, 1, 1, 0x214, 256, 0x1f);
	sev_xfield(&S, CT_FLD_BLOCK, b, 32);
	dec(V580);
	HAS(D.warning, "NV0000_CTRL_CMD_GPU_GET_PROBED_IDS paramsSize 256 is the layout of drivers "
		       "before 580.65.06; driver 580.159.04 expects 384");
	ck_assert_str_eq(D.summary, "RM_CONTROL NV0000_CTRL_CMD_GPU_GET_PROBED_IDS -> NV_ERR_INVALID_ARGUMENT");
	dec(CT_DRV(570, 211, 1));
	ck_assert_str_eq(D.warning, "");
	/* the other way round: a 580 library on a 570 module */
	sev_ioctl(&S, 5, NODE_CTL, 0xC020462Au, 32);
	nvos54(b, 1, 1, 0x214, 384, 0);
	sev_efield(&S, CT_FLD_BLOCK, b, 32);
	dec(CT_DRV(570, 211, 1));
	HAS(D.warning, "paramsSize 384 is the layout of driver 580.65.06 and later; driver 570.211.01 expects 256");
	/* GPU_GET_INFO_V2: 564 on 580, 532 on 575 */
	nvos54(b, 1, 1, 0x20800102, 532, 0);
	sev_ioctl(&S, 5, NODE_CTL, 0xC020462Au, 32);
	sev_efield(&S, CT_FLD_BLOCK, b, 32);
	dec(CT_DRV(575, 51, 2));
	ck_assert_str_eq(D.warning, "");
	dec(V580);
	HAS(D.warning, "expects 564");
}
END_TEST

/* ---- unknown values stay visible, structurally ---------------------------------------- */

START_TEST(unknown_values_structural)
{
	unsigned char b[48] = { 0 };

	sev_ioctl(&S, 5, NODE_CTL, 0xC01046DBu, 16);
	sev_efield(&S, CT_FLD_BLOCK, b, 16);
	sev_exit(&S, -1, EINVAL);
	dec(V580);
	ck_assert_str_eq(D.name, "_IOC(RW,'F',0xdb,16)");
	ck_assert(!D.named);
	ck_assert_uint_eq(D.unknown, CT_NV_UNK_ESCAPE);
	ck_assert_int_eq(D.family, CT_NV_FAM_FRONTEND);
	ck_assert_str_eq(D.summary, "_IOC(RW,'F',0xdb,16) -> -1 EINVAL");

	sev_ioctl(&S, 9, NODE_UVM, 0x1234, 0);
	sev_exit(&S, -1, ENOSYS);
	dec(V580);
	ck_assert_str_eq(D.name, "UVM cmd 0x1234");
	ck_assert_uint_eq(D.unknown, CT_NV_UNK_UVM);
	ck_assert_str_eq(D.summary, "UVM cmd 0x1234 -> -1 ENOSYS");

	nvos64(b, 1, 2, 3, 0x1234, 0);
	sev_ioctl(&S, 5, NODE_CTL, 0xC030462Bu, 48);
	sev_efield(&S, CT_FLD_BLOCK, b, 48);
	sev_exit(&S, 0, 0);
	sev_xfield(&S, CT_FLD_BLOCK, b, 48);
	dec(V580);
	ck_assert_str_eq(D.u.alloc.class_name, "class 0x1234");
	ck_assert_uint_eq(D.unknown, CT_NV_UNK_CLASS);

	unsigned char c[32];
	nvos54(c, 1, 2, 0x20801299, 8, 0);
	sev_ioctl(&S, 5, NODE_CTL, 0xC020462Au, 32);
	sev_efield(&S, CT_FLD_BLOCK, c, 32);
	sev_exit(&S, 0, 0);
	sev_xfield(&S, CT_FLD_BLOCK, c, 32);
	dec(V580);
	ck_assert_str_eq(D.u.control.cmd_name, "NV2080 cat GR(0x12) idx 0x99");
	ck_assert_uint_eq(D.unknown, CT_NV_UNK_CONTROL);
	/* legacy GSS and BINAPI controls have no public name: structural is their name */
	nvos54(c, 1, 2, 0x20808159, 332, 0);
	sev_ioctl(&S, 5, NODE_CTL, 0xC020462Au, 32);
	sev_efield(&S, CT_FLD_BLOCK, c, 32);
	sev_exit(&S, 0, 0);
	dec(V580);
	ck_assert(D.u.control.cmd_structural);
	ck_assert_uint_eq(D.unknown, 0);
	HAS(D.u.control.cmd_name, "legacy-GSS");
}
END_TEST

/* ---- CARD_INFO (ABI.md §3) -------------------------------------------------------------- */

START_TEST(card_info_entries)
{
	static unsigned char b[2304];

	memset(b, 0, sizeof b);
	for (int i = 0; i < 2; i++) {
		unsigned char *e = b + 72 * (i * 3); /* entries 0 and 3 valid */
		e[0] = 1;
		e[9] = (unsigned char)(6 + i);
		put32(e, 12, 0x2335u << 16 | 0x10de);
		put32(e, 16, 0x600u + (unsigned)i * 0x100u);
		put32(e, 56, (uint32_t)i * 2);
		memcpy(e + 60, "nvidia", 6);
	}
	sev_ioctl(&S, 5, NODE_CTL, 0xC90046C8u, 2304);
	sev_exit(&S, 0, 0);
	sev_xfield(&S, CT_FLD_BLOCK, b, 2304);
	dec(V580);
	ck_assert_uint_eq(D.card_slots, 32);
	ck_assert_uint_eq(D.ncards, 2);
	ck_assert_uint_eq(D.cards[1].minor, 2);
	ck_assert_uint_eq(D.cards[1].gpu_id, 0x700);
	ck_assert_uint_eq(D.cards[0].vendor, 0x10de);
	ck_assert_uint_eq(D.cards[0].device, 0x2335);
	ck_assert_str_eq(D.cards[0].dev_name, "nvidia");
	ck_assert_str_eq(D.summary,
			 "CARD_INFO 2 GPUs: 0000:00:06.0 10de:2335 minor 0, 0000:00:07.0 10de:2335 minor 2");
}
END_TEST

/* ---- ABI.md §4 GET_BUILD_VERSION (libcuda's handshake) and _V2 -------------------------- */

static void build_version_event(const char *drvv, uint32_t status)
{
	unsigned char b[32], pay[40] = { 0 }, s[1 + 80];

	sev_ioctl(&S, 5, NODE_CTL, 0xC020462Au, 32);
	nvos54(b, 0xc1d00019, 0xc1d00019, 0x101, 40, 0);
	sev_efield(&S, CT_FLD_BLOCK, b, 32);
	sev_exit(&S, 0, 0);
	nvos54(b, 0xc1d00019, 0xc1d00019, 0x101, 40, status);
	sev_xfield(&S, CT_FLD_BLOCK, b, 32);
	put32(pay, 0, 80);
	put32(pay, 32, 0x0242246f);
	sev_x32(&S, CT_FLD_PAYLOAD_SIZE, 40);
	sev_xfield(&S, CT_FLD_PAYLOAD, pay, 40);
	if (status)
		return; /* the shim reads the strings only after a successful call */
	memset(s, 0, sizeof s);
	memcpy(s + 1, drvv, strlen(drvv));
	sev_xfield(&S, CT_FLD_STRING, s, sizeof s);
	memset(s, 0, sizeof s);
	s[0] = 2;
	memcpy(s + 1, "Private r582_49", 15);
	sev_xfield(&S, CT_FLD_STRING, s, sizeof s);
}

START_TEST(build_version_handshake)
{
	build_version_event("580.159.04", 0);
	dec(V580);
	ck_assert_int_eq(D.handshake.source, CT_NV_HS_BUILD_VERSION);
	ck_assert_int_eq(D.handshake.result, CT_NV_HS_REPORTED);
	ck_assert_str_eq(D.handshake.kernel, "580.159.04");
	ck_assert_str_eq(D.handshake.title, "Private r582_49");
	ck_assert_uint_eq(D.handshake.changelist, 0x0242246f);
	ck_assert_str_eq(D.summary, "RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION -> driver 580.159.04");
	/* the client side: a compat libcuda 580.95.05 on a 580.159.04 module */
	struct ct_nv_handshake h = D.handshake;
	ck_assert_int_eq(ct_nv_handshake_compare(&h, "580.95.05"), CT_NV_HS_MISMATCH);
	ck_assert_uint_eq(h.client_drv, CT_DRV(580, 95, 5));
	h = D.handshake;
	ck_assert_int_eq(ct_nv_handshake_compare(&h, "580.159.04"), CT_NV_HS_MATCH);
	/* libcuda 580.159.04 and the module versions measured on the H200 */
	static const struct { const char *kernel; int want; } seen[] = {
		{ "580.95.05", CT_NV_HS_MATCH },     /* cuInit 0 */
		{ "580.159.05", CT_NV_HS_MATCH },    /* 0 */
		{ "580.159.03", CT_NV_HS_MATCH },    /* (not measured: an older patch) */
		{ "580.173.02", CT_NV_HS_MISMATCH }, /* 803 */
		{ "590.48.01", CT_NV_HS_MISMATCH },  /* 803 */
		{ "575.51.02", CT_NV_HS_MISMATCH },  /* 101 */
	};
	for (unsigned i = 0; i < sizeof seen / sizeof seen[0]; i++) {
		h = D.handshake;
		snprintf(h.kernel, sizeof h.kernel, "%s", seen[i].kernel);
		h.kernel_drv = ct_drv_version_parse(seen[i].kernel);
		ck_assert_msg(ct_nv_handshake_compare(&h, "580.159.04") == (enum ct_nv_hs_result)seen[i].want,
			      "module %s", seen[i].kernel);
	}

	/* a failed query (fixture i08: status 0x1b) has no strings: UNKNOWN */
	build_version_event("", 0x1b);
	dec(V580);
	ck_assert_int_eq(D.handshake.result, CT_NV_HS_UNKNOWN);
	ck_assert_str_eq(D.summary,
			 "RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION -> NV_ERR_INSUFFICIENT_PERMISSIONS");
	struct ct_nv_handshake h2 = D.handshake;
	ck_assert_int_eq(ct_nv_handshake_compare(&h2, "580.95.05"), CT_NV_HS_UNKNOWN);
}
END_TEST

static void v2_event(uint32_t psize)
{
	static unsigned char pay[1032];
	unsigned char b[32];
	bool branch = psize == 1032;

	memset(pay, 0, sizeof pay);
	memcpy(pay, "580.159.04", 10);
	memcpy(pay + 256, "rel/gpu_drv/r580", 16);
	if (branch)
		memcpy(pay + 512, "r580_00", 7);
	memcpy(pay + (branch ? 768 : 512), "Title", 5);
	put32(pay, branch ? 1024 : 768, 1234);
	sev_ioctl(&S, 5, NODE_CTL, 0xC020462Au, 32);
	nvos54(b, 1, 1, 0x13E, psize, 0);
	sev_efield(&S, CT_FLD_BLOCK, b, 32);
	sev_exit(&S, 0, 0);
	sev_xfield(&S, CT_FLD_BLOCK, b, 32);
	sev_x32(&S, CT_FLD_PAYLOAD_SIZE, psize);
	sev_xfield(&S, CT_FLD_PAYLOAD, pay, (uint16_t)psize);
}

START_TEST(build_version_v2_layouts)
{
	v2_event(1032);
	dec(V580);
	ck_assert_int_eq(D.handshake.source, CT_NV_HS_BUILD_VERSION_V2);
	ck_assert_int_eq(D.handshake.result, CT_NV_HS_REPORTED);
	ck_assert_str_eq(D.handshake.kernel, "580.159.04");
	ck_assert_str_eq(D.handshake.version, "rel/gpu_drv/r580");
	ck_assert_str_eq(D.handshake.branch, "r580_00");
	ck_assert_str_eq(D.handshake.title, "Title");
	ck_assert_uint_eq(D.handshake.changelist, 1234);
	ck_assert_str_eq(D.warning, "");

	v2_event(776);
	dec(V550);
	ck_assert_str_eq(D.handshake.branch, "");
	ck_assert_str_eq(D.handshake.title, "Title");
	ck_assert_uint_eq(D.handshake.changelist, 1234);
	ck_assert_str_eq(D.warning, "");
	/* the old layout sent to a 560+ driver */
	dec(V580);
	HAS(D.warning, "776-byte layout; driver 580.159.04 expects 1032");
}
END_TEST

/* ---- ABI.md §2a WAIT_OPEN_COMPLETE, OS events, injection, no return --------------------- */

START_TEST(wait_open_and_misc)
{
	unsigned char b[16] = { 0 };

	sev_ioctl(&S, 6, NODE_GPU(0), 0xC00846DAu, 8);
	sev_efield(&S, CT_FLD_BLOCK, b, 8);
	sev_exit(&S, 0, 0);
	put32(b, 0, (uint32_t)-EIO);
	put32(b, 4, 0x65);
	sev_xfield(&S, CT_FLD_BLOCK, b, 8);
	dec(V580);
	ck_assert_int_eq(D.u.wait_open.rc, -EIO);
	ck_assert(D.has_status);
	ck_assert_str_eq(D.status_name, "NV_ERR_TIMEOUT");
	ck_assert(!D.ok);
	HAS(D.summary, "WAIT_OPEN_COMPLETE -> NV_ERR_TIMEOUT, open failed: rc -5 (EIO)");

	/* ALLOC_OS_EVENT: Status @12 */
	memset(b, 0, sizeof b);
	sev_ioctl(&S, 6, NODE_GPU(0), 0xC01046CEu, 16);
	put32(b, 0, 0xc1d0001a);
	put32(b, 4, 0x5c000003);
	put32(b, 8, 14);
	sev_efield(&S, CT_FLD_BLOCK, b, 16);
	sev_exit(&S, 0, 0);
	sev_xfield(&S, CT_FLD_BLOCK, b, 16);
	sev_inject(&S, 2, CT_INJ_STATUS);
	dec(V580);
	ck_assert(D.ok);
	ck_assert(D.injected);
	ck_assert_uint_eq(D.inject_rule, 2);
	ck_assert_str_eq(D.summary, "ALLOC_OS_EVENT hClient 0xc1d0001a hDevice 0x5c000003 fd 14 [injected]");

	/* entered, never returned */
	sev_ioctl(&S, 9, NODE_UVM, 37, 40);
	dec(V580);
	ck_assert(!D.returned);
	ck_assert(!D.ok);
	ck_assert_str_eq(D.summary, "UVM_REGISTER_GPU -> (no return)");

	/* not an ioctl */
	struct ct_event ev = { 0 };
	ev.call = CT_CALL_open;
	ck_assert_int_eq(ct_nv_decode(&ev, V580, NULL, &D), -1);
}
END_TEST

/* ---- ABI.md §8 device map: classify by major:minor (§11.13) ----------------------------- */

static void open_event(struct sev *s, const char *path, int fd, uint64_t rdev)
{
	memset(s, 0, sizeof *s);
	s->eh.type = CT_REC_ENTER;
	s->eh.call = CT_CALL_openat;
	sev_efield(s, CT_FLD_PATH, path, (uint16_t)strlen(path));
	sev_exit(s, fd, 0);
	s->xh.call = CT_CALL_openat;
	sev_x32(s, CT_FLD_NODE, NODE_OTHER);
	if (rdev)
		sev_xfield(s, CT_FLD_RDEV, &rdev, 8);
	sev_done(s);
	s->ev.call = CT_CALL_openat;
}

START_TEST(devmap_rdev)
{
	static struct ct_nv_devmap m;
	static struct sev o;
	uint32_t node;

	ct_nv_devmap_init(&m, NULL);
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 195ull << 32 | 255, &node), CT_NODE_CTL);
	ck_assert_uint_eq(node, NODE_CTL);
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 195ull << 32 | 3, &node), CT_NODE_GPU);
	ck_assert_uint_eq(node, NODE_GPU(3));
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 195ull << 32 | 254, NULL), CT_NODE_MODESET);
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 238ull << 32, NULL), CT_NODE_NONE); /* dynamic: unknown yet */
	ct_nv_devmap_add_major(&m, 238, "nvidia-uvm");
	ct_nv_devmap_add_major(&m, 241, "nvidia-caps");
	ct_nv_devmap_add_major(&m, 8, "sd");
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 238ull << 32, NULL), CT_NODE_UVM);
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 238ull << 32 | 1, NULL), CT_NODE_UVM_TOOLS);
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 241ull << 32 | 2, &node), CT_NODE_CAPS);
	ck_assert_uint_eq(node, NODE_CAPS(2));
	ck_assert_int_eq(ct_nv_classify_rdev(&m, 8ull << 32, NULL), CT_NODE_NONE);
	ck_assert_int_eq(ct_nv_classify_rdev(NULL, 195ull << 32 | 255, NULL), CT_NODE_CTL);

	/* a renamed UVM node: the shim saw "/dev/nvidia-gpu-mem" (OTHER), the
	 * device number says nvidia-uvm, so the request is a UVM command */
	open_event(&o, "/dev/nvidia-gpu-mem", 12, 238ull << 32);
	ct_nv_devmap_track(&m, &o.ev);
	unsigned char b[16] = { 0 };
	sev_ioctl(&S, 12, NODE_OTHER, 0x30000001u, 16);
	sev_efield(&S, CT_FLD_BLOCK, b, 16);
	sev_exit(&S, 0, 0);
	sev_xfield(&S, CT_FLD_BLOCK, b, 16);
	ck_assert_int_eq(ct_nv_decode(sev_done(&S), V580, &m, &D), 0);
	ck_assert_int_eq(D.family, CT_NV_FAM_UVM);
	ck_assert_str_eq(D.name, "UVM_INITIALIZE");
	ck_assert(D.node_from_rdev);
	ck_assert_str_eq(D.node_name, "nvidia-uvm");
	HAS(D.warning, "fd 12 was opened as /dev/nvidia-gpu-mem but its device 238:0 is nvidia-uvm");
	/* without the map: the shim's view */
	ck_assert_int_eq(ct_nv_decode(sev_done(&S), V580, NULL, &D), 0);
	ck_assert_int_eq(D.family, CT_NV_FAM_OTHER);

	/* close forgets the binding */
	memset(&o, 0, sizeof o);
	o.eh.call = CT_CALL_close;
	sev_e32(&o, CT_FLD_FD, 12);
	sev_done(&o);
	o.ev.call = CT_CALL_close;
	ct_nv_devmap_track(&m, &o.ev);
	ck_assert_int_eq(ct_nv_decode(sev_done(&S), V580, &m, &D), 0);
	ck_assert_int_eq(D.family, CT_NV_FAM_OTHER);

	char nb[48];
	ck_assert_str_eq(ct_nv_node_name(NODE_GPU(7), nb, sizeof nb), "nvidia7");
	ck_assert_str_eq(ct_nv_node_name(NODE_TOOLS, nb, sizeof nb), "nvidia-uvm-tools");
}
END_TEST

/* ---- JSON ------------------------------------------------------------------------------ */

START_TEST(json_output)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	struct ct_json j;

	build_version_event("580.159.04", 0);
	dec(V580);
	f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ct_json_init(&j, f, false);
	ct_nv_json(&j, &D);
	ct_json_end(&j);
	fclose(f);
	HAS(buf, "\"family\":\"rm\"");
	HAS(buf, "\"cmd_name\":\"NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION\"");
	HAS(buf, "\"handshake\":{");
	HAS(buf, "\"kernel\":\"580.159.04\"");
	HAS(buf, "\"ok\":true");
	free(buf);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nvdecode");
	TCase *t = tcase_create("synthetic");

	tcase_add_test(t, version_str_mismatch);
	tcase_add_test(t, version_str_match_query_unprocessed);
	tcase_add_test(t, rm_alloc_status_and_root_client);
	tcase_add_test(t, rm_control_and_free_status);
	tcase_add_test(t, virt_mode_and_compute_rules);
	tcase_add_test(t, uvm_status_head_and_tail);
	tcase_add_test(t, uvm_warning_is_not_failure);
	tcase_add_test(t, numa_state);
	tcase_add_test(t, short_and_oversized_blocks);
	tcase_add_test(t, xfer_wrapped_control);
	tcase_add_test(t, xfer_wrapped_build_version);
	tcase_add_test(t, unreadable_blocks);
	tcase_add_test(t, wrong_nodes);
	tcase_add_test(t, nvos21_status_by_version);
	tcase_add_test(t, status_0x8b_by_version);
	tcase_add_test(t, control_params_size_by_version);
	tcase_add_test(t, unknown_values_structural);
	tcase_add_test(t, card_info_entries);
	tcase_add_test(t, build_version_handshake);
	tcase_add_test(t, build_version_v2_layouts);
	tcase_add_test(t, wait_open_and_misc);
	tcase_add_test(t, devmap_rdev);
	tcase_add_test(t, json_output);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
