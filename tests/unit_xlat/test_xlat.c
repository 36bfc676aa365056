/*
 * Name tables against tracer/decode/ABI.md (section in
 * each test's comment), the real CUDA 13.0 headers and this platform's libc.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "xlat.h"
#include "cutrace_gen/codes.h"
#include "cutrace_gen/shim_tables.h"

#define V580 CT_DRV(580, 159, 4)
#define V595 CT_DRV(595, 45, 4)

/* ---- ABI.md §2a frontend escapes ------------------------------------------- */

struct esc_expect {
	const char *name;
	unsigned nr;
	uint32_t size;      /* size to look up with */
	uint32_t want_size; /* ->size (0 for arrays) */
	uint32_t elem;
	int32_t status;
	enum ct_nv_node_rule node;
};

static void check_escapes(const struct esc_expect *x, unsigned n, uint32_t drv)
{
	for (unsigned i = 0; i < n; i++) {
		const struct ct_nv_escape *e = ct_nv_escape(x[i].nr, x[i].size, drv);
		ck_assert_msg(e, "nr %u", x[i].nr);
		ck_assert_str_eq(e->name, x[i].name);
		ck_assert_uint_eq(e->nr, x[i].nr);
		ck_assert_uint_eq(e->size, x[i].want_size);
		ck_assert_uint_eq(e->elem_size, x[i].elem);
		ck_assert_int_eq(e->status_off, x[i].status);
		ck_assert_int_eq(e->node, x[i].node);
	}
}

START_TEST(frontend_escapes_2a)
{
	static const struct esc_expect x[] = {
		{ "NV_ESC_CARD_INFO", 200, 2304, 0, 72, -1, CT_NODE_RULE_CTL },
		{ "NV_ESC_REGISTER_FD", 201, 4, 4, 0, -1, CT_NODE_RULE_ANY },
		{ "NV_ESC_ALLOC_OS_EVENT", 206, 16, 16, 0, 12, CT_NODE_RULE_ANY },
		{ "NV_ESC_FREE_OS_EVENT", 207, 16, 16, 0, 12, CT_NODE_RULE_ANY },
		{ "NV_ESC_STATUS_CODE", 209, 12, 12, 0, 8, CT_NODE_RULE_CTL },
		{ "NV_ESC_CHECK_VERSION_STR", 210, 72, 72, 0, -1, CT_NODE_RULE_CTL },
		{ "NV_ESC_IOCTL_XFER_CMD", 211, 16, 16, 0, -1, CT_NODE_RULE_ANY },
		{ "NV_ESC_ATTACH_GPUS_TO_FD", 212, 12, 0, 4, -1, CT_NODE_RULE_CTL },
		{ "NV_ESC_QUERY_DEVICE_INTR", 213, 8, 8, 0, 4, CT_NODE_RULE_GPU },
		{ "NV_ESC_SYS_PARAMS", 214, 8, 8, 0, -1, CT_NODE_RULE_CTL },
		{ "NV_ESC_NUMA_INFO", 215, 560, 560, 0, 4, CT_NODE_RULE_GPU },
		{ "NV_ESC_SET_NUMA_STATUS", 216, 4, 4, 0, -1, CT_NODE_RULE_GPU },
		{ "NV_ESC_EXPORT_TO_DMABUF_FD", 217, 2608, 2608, 0, 2600, CT_NODE_RULE_GPU },
		{ "NV_ESC_WAIT_OPEN_COMPLETE", 218, 8, 8, 0, 4, CT_NODE_RULE_ANY },
	};
	check_escapes(x, sizeof x / sizeof x[0], V595);
	check_escapes(x, sizeof x / sizeof x[0], 0);

	/* the full request word works too: only nr & 0xFF matters (ABI.md §1) */
	ck_assert_str_eq(ct_nv_escape(0xC90046C8u, 2304, V580)->name, "NV_ESC_CARD_INFO");
	/* NUMA_INFO's status is a NUMA state, not an NV_STATUS (ABI.md §2a, §11.12) */
	ck_assert(ct_nv_escape(215, 560, V580)->flags & CT_ESC_F_NUMA_STATUS);
	ck_assert(!(ct_nv_escape(206, 16, V580)->flags & CT_ESC_F_NUMA_STATUS));
	ck_assert(ct_nv_escape(200, 2304, V580)->flags & CT_ESC_F_ARRAY);
	ck_assert(ct_nv_escape(211, 16, V580)->flags & CT_ESC_F_XFER);
	ck_assert_str_eq(ct_nv_escape(215, 0, 0)->params, "nv_ioctl_numa_info_t");
	/* EXPORT_TO_DMABUF_FD: 2600/@2592 before 570.86.15 */
	ck_assert_int_eq(ct_nv_escape(217, 0, CT_DRV(570, 86, 15))->status_off, 2600);
	ck_assert_int_eq(ct_nv_escape(217, 0, CT_DRV(550, 163, 1))->status_off, 2592);
	ck_assert_uint_eq(ct_nv_escape(217, 0, CT_DRV(550, 163, 1))->size, 2600);
	ck_assert_uint_eq(ct_nv_escape(217, 2600, 0)->size, 2600); /* by size */
	/* WAIT_OPEN_COMPLETE exists from 550.40.07 */
	ck_assert_uint_eq(ct_nv_escape(218, 8, 0)->since, CT_DRV(550, 40, 7));
	/* unknown numbers */
	ck_assert_ptr_null(ct_nv_escape(202, 0, 0));
	ck_assert_ptr_null(ct_nv_escape(0x26, 0, 0));
	ck_assert_ptr_null(ct_nv_escape(219, 0, 0));
}
END_TEST

/* ---- ABI.md §2b RM escapes ------------------------------------------------- */

START_TEST(rm_escapes_2b)
{
	static const struct esc_expect x[] = {
		{ "NV_ESC_RM_ALLOC_MEMORY", 0x27, 56, 56, 0, 40, CT_NODE_RULE_GPU },
		{ "NV_ESC_RM_ALLOC_OBJECT", 0x28, 20, 20, 0, 16, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_FREE", 0x29, 16, 16, 0, 12, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_CONTROL", 0x2A, 32, 32, 0, 28, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_ALLOC", 0x2B, 32, 32, 0, 28, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_ALLOC", 0x2B, 48, 48, 0, 40, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_DUP_OBJECT", 0x34, 28, 28, 0, 24, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_SHARE", 0x35, 24, 24, 0, 20, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_I2C_ACCESS", 0x39, 32, 32, 0, 24, CT_NODE_RULE_GPU },
		{ "NV_ESC_RM_IDLE_CHANNELS", 0x41, 56, 56, 0, 48, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_VID_HEAP_CONTROL", 0x4A, 184, 184, 0, 20, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_ACCESS_REGISTRY", 0x4D, 72, 72, 0, 64, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_MAP_MEMORY", 0x4E, 56, 56, 0, 40, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_UNMAP_MEMORY", 0x4F, 32, 32, 0, 24, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_GET_EVENT_DATA", 0x52, 16, 16, 0, 12, CT_NODE_RULE_ANY },
		{ "NV_ESC_RM_ALLOC_CONTEXT_DMA2", 0x54, 56, 56, 0, 48, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_MAP_MEMORY_DMA", 0x57, 64, 64, 0, 56, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_UNMAP_MEMORY_DMA", 0x58, 48, 48, 0, 40, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_BIND_CONTEXT_DMA", 0x59, 16, 16, 0, 12, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO", 0x5E, 40, 40, 0, 32, CT_NODE_RULE_CTL },
		{ "NV_ESC_RM_LOCKLESS_DIAGNOSTIC", 0x5F, 15412, 15412, 0, 4, CT_NODE_RULE_CTL },
	};
	check_escapes(x, sizeof x / sizeof x[0], V595);
	check_escapes(x, sizeof x / sizeof x[0], 0);

	/* defined but never handled; CONFIG_* gone in 595.44.02 */
	static const struct { unsigned nr; const char *name; } unh[] = {
		{ 0x32, "NV_ESC_RM_CONFIG_GET" }, { 0x33, "NV_ESC_RM_CONFIG_SET" },
		{ 0x37, "NV_ESC_RM_CONFIG_GET_EX" }, { 0x38, "NV_ESC_RM_CONFIG_SET_EX" },
		{ 0x56, "NV_ESC_RM_ADD_VBLANK_CALLBACK" }, { 0x5C, "NV_ESC_RM_EXPORT_OBJECT_TO_FD" },
		{ 0x5D, "NV_ESC_RM_IMPORT_OBJECT_FROM_FD" },
	};
	for (unsigned i = 0; i < sizeof unh / sizeof unh[0]; i++) {
		const struct ct_nv_escape *e = ct_nv_escape(unh[i].nr, 0, V580);
		ck_assert_str_eq(e->name, unh[i].name);
		ck_assert(e->flags & CT_ESC_F_UNHANDLED);
		ck_assert_int_eq(e->status_off, -1);
	}
	ck_assert_uint_eq(ct_nv_escape(0x32, 0, 0)->until, CT_DRV(595, 44, 2));
}
END_TEST

/* ABI.md §3 / §10: NVOS21 vs NVOS64 per version, chosen by version not size */
START_TEST(rm_alloc_per_version)
{
	const struct ct_nv_escape *e;

	e = ct_nv_escape(0x2B, 48, V580);
	ck_assert_str_eq(e->params, "NVOS64_PARAMETERS");
	ck_assert_int_eq(e->status_off, 40);
	e = ct_nv_escape(0x2B, 32, V580);
	ck_assert_str_eq(e->params, "NVOS21_PARAMETERS");
	ck_assert_int_eq(e->status_off, 28);
	ck_assert_int_eq(ct_nv_escape(0x2B, 32, CT_DRV(535, 43, 2))->status_off, 28);
	ck_assert_int_eq(ct_nv_escape(0x2B, 32, CT_DRV(535, 288, 1))->status_off, 28);
	/* same size 32, older layout: status @24 */
	ck_assert_int_eq(ct_nv_escape(0x2B, 32, CT_DRV(530, 30, 2))->status_off, 24);
	ck_assert_int_eq(ct_nv_escape(0x2B, 32, CT_DRV(515, 105, 1))->status_off, 24);
	/* NVOS64: 40 bytes before 535 (status @36 in 525-530, @32 in 515) */
	e = ct_nv_escape(0x2B, 40, CT_DRV(530, 30, 2));
	ck_assert_str_eq(e->params, "NVOS64_PARAMETERS");
	ck_assert_int_eq(e->status_off, 36);
	ck_assert_int_eq(ct_nv_escape(0x2B, 40, CT_DRV(525, 147, 5))->status_off, 36);
	ck_assert_int_eq(ct_nv_escape(0x2B, 40, CT_DRV(515, 105, 1))->status_off, 32);
	/* a size that only an older layout has still decodes */
	ck_assert_int_eq(ct_nv_escape(0x2B, 40, 0)->status_off, 36);
	ck_assert_int_eq(ct_nv_escape(0x2B, 40, V580)->status_off, 36);
	/* MAP_MEMORY_DMA 64 (580+) / 56; UNMAP_MEMORY_DMA 48 (550+) / 40 */
	ck_assert_int_eq(ct_nv_escape(0x57, 0, CT_DRV(580, 65, 6))->status_off, 56);
	ck_assert_uint_eq(ct_nv_escape(0x57, 0, CT_DRV(570, 211, 1))->size, 56);
	ck_assert_int_eq(ct_nv_escape(0x57, 0, CT_DRV(570, 211, 1))->status_off, 48);
	ck_assert_uint_eq(ct_nv_escape(0x58, 0, CT_DRV(550, 40, 7))->size, 48);
	ck_assert_uint_eq(ct_nv_escape(0x58, 0, CT_DRV(535, 288, 1))->size, 40);
	ck_assert_int_eq(ct_nv_escape(0x58, 0, CT_DRV(535, 288, 1))->status_off, 32);
	/* 0x5F: NVLOG_CTRL in 525.125.06+ and 535.x, LOCKLESS_DIAGNOSTIC from 545.23.06 */
	ck_assert_str_eq(ct_nv_escape(0x5F, 0, CT_DRV(535, 288, 1))->name, "NV_ESC_RM_NVLOG_CTRL");
	ck_assert_str_eq(ct_nv_escape(0x5F, 0, CT_DRV(525, 147, 5))->name, "NV_ESC_RM_NVLOG_CTRL");
	ck_assert_str_eq(ct_nv_escape(0x5F, 0, CT_DRV(545, 23, 6))->name, "NV_ESC_RM_LOCKLESS_DIAGNOSTIC");
	ck_assert_str_eq(ct_nv_escape(0x5F, 0, V580)->name, "NV_ESC_RM_LOCKLESS_DIAGNOSTIC");
	ck_assert_str_eq(ct_nv_escape(0x5F, 0, 0)->name, "NV_ESC_RM_LOCKLESS_DIAGNOSTIC");
}
END_TEST

/* ---- ABI.md §5 NV_STATUS --------------------------------------------------- */

START_TEST(nv_status_5)
{
	static const struct { uint32_t v; const char *name; } x[] = {
		{ 0x0, "NV_OK" }, { 0xFFFF, "NV_ERR_GENERIC" }, { 0x1, "NV_ERR_BROKEN_FB" },
		{ 0x3, "NV_ERR_BUSY_RETRY" }, { 0xF, "NV_ERR_GPU_IS_LOST" },
		{ 0x12, "NV_ERR_GPU_UUID_NOT_FOUND" }, { 0x16, "NV_ERR_ILLEGAL_ACTION" },
		{ 0x17, "NV_ERR_IN_USE" }, { 0x1B, "NV_ERR_INSUFFICIENT_PERMISSIONS" },
		{ 0x1F, "NV_ERR_INVALID_ARGUMENT" }, { 0x22, "NV_ERR_INVALID_CLASS" },
		{ 0x23, "NV_ERR_INVALID_CLIENT" }, { 0x33, "NV_ERR_INVALID_OBJECT_HANDLE" },
		{ 0x3A, "NV_ERR_INVALID_PARAM_STRUCT" }, { 0x40, "NV_ERR_INVALID_STATE" },
		{ 0x51, "NV_ERR_NO_MEMORY" }, { 0x56, "NV_ERR_NOT_SUPPORTED" },
		{ 0x57, "NV_ERR_OBJECT_NOT_FOUND" }, { 0x62, "NV_ERR_RESET_REQUIRED" },
		{ 0x65, "NV_ERR_TIMEOUT" }, { 0x6A, "NV_ERR_LIB_RM_VERSION_MISMATCH" },
		{ 0x79, "NV_ERR_RISCV_ERROR" }, { 0x7A, "NV_ERR_FABRIC_MANAGER_NOT_PRESENT" },
		{ 0x8A, "NV_ERR_MC_FLA_OFFSET_TABLE_FULL" },
		{ 0x10001, "NV_WARN_HOT_SWITCH" }, { 0x10006, "NV_WARN_NOTHING_TO_DO" },
		{ 0x10009, "NV_WARN_THRESHOLD_CROSSED" },
	};
	for (unsigned i = 0; i < sizeof x / sizeof x[0]; i++) {
		uint32_t back = 0xdead;
		ck_assert_str_eq(ct_nv_status_name(x[i].v, 0), x[i].name);
		ck_assert_str_eq(ct_nv_status_name(x[i].v, V580), x[i].name);
		ck_assert_int_eq(ct_nv_status_from_name(x[i].name, 0, &back), 0);
		ck_assert_uint_eq(back, x[i].v);
	}
	ck_assert_ptr_null(ct_nv_status_name(0x8D, 0));
	ck_assert_ptr_null(ct_nv_status_name(0x1000A, 0));
	ck_assert_int_eq(ct_nv_status_from_name("NV_ERR_NO_SUCH_THING", 0, NULL), -1);

	/* warnings: >= 0x10001 */
	ck_assert(!ct_nv_status_is_warning(0));
	ck_assert(!ct_nv_status_is_warning(0xFFFF));
	ck_assert(!ct_nv_status_is_warning(0x10000));
	ck_assert(ct_nv_status_is_warning(0x10001));
	ck_assert(ct_nv_status_is_warning(0x10006));

	/* 151 names in 595.45.04 (ABI.md §5): the newest row of every value */
	unsigned newest = 0;
	for (uint32_t v = 0; v <= 0x10010; v++)
		if (ct_nv_status_name(v, V595))
			newest++;
	ck_assert_uint_eq(newest, 151);
}
END_TEST

START_TEST(nv_status_versions)
{
	uint32_t v;

	/* 0x8B: DMA_XFER_FAILED in 580/590, OPERATION_ABORTED in 595+ (0x8C = DMA_XFER_FAILED) */
	ck_assert_str_eq(ct_nv_status_name(0x8B, V580), "NV_ERR_DMA_XFER_FAILED");
	ck_assert_str_eq(ct_nv_status_name(0x8B, CT_DRV(590, 48, 1)), "NV_ERR_DMA_XFER_FAILED");
	ck_assert_str_eq(ct_nv_status_name(0x8B, CT_DRV(595, 44, 2)), "NV_ERR_OPERATION_ABORTED");
	ck_assert_str_eq(ct_nv_status_name(0x8B, V595), "NV_ERR_OPERATION_ABORTED");
	ck_assert_str_eq(ct_nv_status_name(0x8B, 0), "NV_ERR_OPERATION_ABORTED");
	ck_assert_str_eq(ct_nv_status_name(0x8C, V595), "NV_ERR_DMA_XFER_FAILED");
	ck_assert_str_eq(ct_nv_status_name(0x8C, 0), "NV_ERR_DMA_XFER_FAILED");
	/* 0x81/0x82: NVSWITCH_ before 570.86.15 */
	ck_assert_str_eq(ct_nv_status_name(0x81, CT_DRV(550, 163, 1)), "NV_ERR_NVSWITCH_FABRIC_NOT_READY");
	ck_assert_str_eq(ct_nv_status_name(0x82, CT_DRV(570, 86, 14)), "NV_ERR_NVSWITCH_FABRIC_FAILURE");
	ck_assert_str_eq(ct_nv_status_name(0x81, CT_DRV(570, 86, 15)), "NV_ERR_NVLINK_FABRIC_NOT_READY");
	ck_assert_str_eq(ct_nv_status_name(0x82, V580), "NV_ERR_NVLINK_FABRIC_FAILURE");
	ck_assert_str_eq(ct_nv_status_name(0x81, 0), "NV_ERR_NVLINK_FABRIC_NOT_READY");

	/* name -> value follows the version too */
	ck_assert_int_eq(ct_nv_status_from_name("NV_ERR_DMA_XFER_FAILED", V580, &v), 0);
	ck_assert_uint_eq(v, 0x8B);
	ck_assert_int_eq(ct_nv_status_from_name("NV_ERR_DMA_XFER_FAILED", 0, &v), 0);
	ck_assert_uint_eq(v, 0x8C);
	ck_assert_int_eq(ct_nv_status_from_name("NV_ERR_OPERATION_ABORTED", V595, &v), 0);
	ck_assert_uint_eq(v, 0x8B);
	ck_assert_int_eq(ct_nv_status_from_name("NV_ERR_NVSWITCH_FABRIC_NOT_READY", 0, &v), 0);
	ck_assert_uint_eq(v, 0x81);
}
END_TEST

/* ---- ABI.md §7 classes and controls ---------------------------------------- */

START_TEST(rm_classes_7)
{
	static const struct { uint32_t v; const char *name; } x[] = {
		{ 0x0, "NV01_ROOT" }, { 0x1, "NV01_ROOT_NON_PRIV" }, { 0x41, "NV01_ROOT_CLIENT" },
		{ 0x5, "NV01_EVENT" }, { 0x79, "NV01_EVENT_OS_EVENT" }, { 0x80, "NV01_DEVICE_0" },
		{ 0x2080, "NV20_SUBDEVICE_0" }, { 0x2081, "NV2081_BINAPI" },
		{ 0xCB33, "NV_CONFIDENTIAL_COMPUTE" }, { 0xDE, "RM_USER_SHARED_DATA" },
		{ 0xC661, "HOPPER_USERMODE_A" }, { 0x90E6, "GF100_SUBDEVICE_MASTER" },
		{ 0x90F1, "FERMI_VASPACE_A" }, { 0x50A0, "NV50_MEMORY_VIRTUAL" },
		{ 0x503C, "NV50_THIRD_PARTY_P2P" }, { 0x71, "NV01_MEMORY_SYSTEM_OS_DESCRIPTOR" },
		{ 0xA06C, "KEPLER_CHANNEL_GROUP_A" }, { 0xC86F, "HOPPER_CHANNEL_GPFIFO_A" },
		{ 0xCBC0, "HOPPER_COMPUTE_A" }, { 0xC8B5, "HOPPER_DMA_COPY_A" },
		{ 0x83DE, "GT200_DEBUGGER" }, { 0x900E, "MPS_COMPUTE" },
	};
	for (unsigned i = 0; i < sizeof x / sizeof x[0]; i++)
		ck_assert_str_eq(ct_rm_class_name(x[i].v), x[i].name);
	ck_assert_ptr_null(ct_rm_class_name(0x1234));
}
END_TEST

START_TEST(rm_controls_7)
{
	static const struct { uint32_t v; const char *name; } x[] = {
		{ 0x101, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION" },
		{ 0x13E, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2" },
		{ 0x1F0, "NV0000_CTRL_CMD_SYSTEM_GET_FEATURES" },
		{ 0x201, "NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS" },
		{ 0x203, "NV0000_CTRL_CMD_GPU_GET_INIT_STATUS" },
		{ 0x214, "NV0000_CTRL_CMD_GPU_GET_PROBED_IDS" },
		{ 0x215, "NV0000_CTRL_CMD_GPU_ATTACH_IDS" },
		{ 0x288, "NV0000_CTRL_CMD_GPU_GET_ACTIVE_DEVICE_IDS" },
		{ 0xD04, "NV0000_CTRL_CMD_CLIENT_SET_INHERITED_SHARE_POLICY" },
		{ 0x3D06, "NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_FROM_FD" },
		{ 0x800292, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2" },
		{ 0x801402, "NV0080_CTRL_CMD_HOST_GET_CAPS_V2" },
		{ 0x20800102, "NV2080_CTRL_CMD_GPU_GET_INFO_V2" },
		{ 0x20800110, "NV2080_CTRL_CMD_GPU_GET_NAME_STRING" },
		{ 0x2080014A, "NV2080_CTRL_CMD_GPU_GET_GID_INFO" },
		{ 0x20802210, "NV2080_CTRL_CMD_RC_SOFT_DISABLE_WATCHDOG" },
		{ 0x20803002, "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS" },
		{ 0xCB330101, "NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES" },
		{ 0x503C0102, "NV503C_CTRL_CMD_REGISTER_VA_SPACE" },
		{ 0x90E60102, "NV90E6_CTRL_CMD_MASTER_GET_VIRTUAL_FUNCTION_ERROR_CONT_INTR_MASK" },
	};
	char buf[96];

	for (unsigned i = 0; i < sizeof x / sizeof x[0]; i++) {
		ck_assert_str_eq(ct_rm_control_name(x[i].v), x[i].name);
		ck_assert_str_eq(ct_rm_control_describe(x[i].v, buf, sizeof buf), x[i].name);
	}
	/* legacy GSS and BINAPI controls have no public name (ABI.md §7) */
	ck_assert_ptr_null(ct_rm_control_name(0x20808159));
	ck_assert_ptr_null(ct_rm_control_name(0x20808162));
	ck_assert_ptr_null(ct_rm_control_name(0x20810108));
	ck_assert_str_eq(ct_rm_control_describe(0x20808159, buf, sizeof buf),
			 "NV2080 legacy-GSS cat 0x81 idx 0x59");
	ck_assert_str_eq(ct_rm_control_describe(0x20808162, buf, sizeof buf),
			 "NV2080 legacy-GSS cat 0x81 idx 0x62");
	ck_assert_str_eq(ct_rm_control_describe(0x2080C101, buf, sizeof buf),
			 "NV2080 legacy-GSS-priv cat 0xC1 idx 0x01");
	ck_assert_str_eq(ct_rm_control_describe(0x20810108, buf, sizeof buf), "NV2081_BINAPI 0x0108");
	/* unnamed control of a known category / unknown class */
	ck_assert_str_eq(ct_rm_control_describe(0x20800199, buf, sizeof buf),
			 "NV2080 cat GPU(0x01) idx 0x99");
	ck_assert_str_eq(ct_rm_control_describe(0x00000999, buf, sizeof buf),
			 "NV0000 cat PROC(0x09) idx 0x99");
	ck_assert_str_eq(ct_rm_control_describe(0xC36F0177, buf, sizeof buf),
			 "NVC36F cat 0x01 idx 0x77");
	/* named since the 580 fixtures (rm_ctrl.in, from gVisor ctrl.go) */
	ck_assert_str_eq(ct_rm_control_describe(0xC36F0108, buf, sizeof buf),
			 "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN");
	/* truncation is safe */
	ck_assert_str_eq(ct_rm_control_describe(0x20810108, buf, 6), "NV208");
}
END_TEST

/* ---- ABI.md §6 UVM --------------------------------------------------------- */

START_TEST(uvm_init_commands_6)
{
	static const struct { uint32_t nr; const char *name; uint32_t size; int32_t st; } x[] = {
		{ 0x30000001, "UVM_INITIALIZE", 16, 8 },
		{ 75, "UVM_MM_INITIALIZE", 8, 4 },
		{ 39, "UVM_PAGEABLE_MEM_ACCESS", 8, 4 },
		{ 70, "UVM_PAGEABLE_MEM_ACCESS_ON_GPU", 24, 20 },
		{ 37, "UVM_REGISTER_GPU", 40, 36 },
		{ 38, "UVM_UNREGISTER_GPU", 20, 16 },
		{ 23, "UVM_CREATE_RANGE_GROUP", 16, 8 },
		{ 25, "UVM_REGISTER_GPU_VASPACE", 32, 28 },
		{ 27, "UVM_REGISTER_CHANNEL", 56, 48 },
		{ 72, "UVM_VALIDATE_VA_RANGE", 24, 16 },
		{ 73, "UVM_CREATE_EXTERNAL_RANGE", 24, 16 },
		{ 33, "UVM_MAP_EXTERNAL_ALLOCATION", 9264, 9260 },
		{ 68, "UVM_ALLOC_SEMAPHORE_POOL", 9248, 9240 },
		{ 65, "UVM_MAP_DYNAMIC_PARALLELISM_REGION", 40, 32 },
		{ 2047, "UVM_IS_8_SUPPORTED", 8, 4 },
	};
	const uint32_t vers[] = { 0, V580, V595 };

	for (unsigned v = 0; v < 3; v++)
		for (unsigned i = 0; i < sizeof x / sizeof x[0]; i++) {
			const struct ct_uvm_cmd *c = ct_uvm_cmd(x[i].nr, vers[v]);
			ck_assert_msg(c, "uvm %u", x[i].nr);
			ck_assert_str_eq(c->name, x[i].name);
			ck_assert_uint_eq(c->size, x[i].size);
			ck_assert_int_eq(c->status_off, x[i].st);
			ck_assert(!(c->flags & CT_UVM_F_ABSENT));
		}
	const struct ct_uvm_cmd *d = ct_uvm_cmd(0x30000002, 0);
	ck_assert_str_eq(d->name, "UVM_DEINITIALIZE");
	ck_assert_uint_eq(d->size, 0);
	ck_assert_int_eq(d->status_off, -1);
	ck_assert(d->flags & CT_UVM_F_NO_PARAMS);
	ck_assert_ptr_null(ct_uvm_cmd(8, 0));
	ck_assert_ptr_null(ct_uvm_cmd(0x30000003, 0));
	ck_assert(ct_uvm_cmd(1, 0)->flags & CT_UVM_F_NOT_ROUTED);
	ck_assert(ct_uvm_cmd(57, 0)->flags & CT_UVM_F_TOOLS);
}
END_TEST

START_TEST(uvm_versions_6)
{
	const struct ct_uvm_cmd *c;

	/* UVM_FREE 24 in 580, 16 in 595 (changed 590.44.01) */
	ck_assert_uint_eq(ct_uvm_cmd(34, V580)->size, 24);
	ck_assert_int_eq(ct_uvm_cmd(34, V580)->status_off, 16);
	ck_assert_uint_eq(ct_uvm_cmd(34, V595)->size, 16);
	ck_assert_int_eq(ct_uvm_cmd(34, V595)->status_off, 8);
	ck_assert_uint_eq(ct_uvm_cmd(34, CT_DRV(590, 44, 1))->size, 16);
	ck_assert_uint_eq(ct_uvm_cmd(34, 0)->size, 16);
	/* MAP_EXTERNAL_ALLOCATION 1200 in 535, 9264 in 580 */
	ck_assert_uint_eq(ct_uvm_cmd(33, CT_DRV(535, 288, 1))->size, 1200);
	ck_assert_int_eq(ct_uvm_cmd(33, CT_DRV(535, 288, 1))->status_off, 1196);
	ck_assert_uint_eq(ct_uvm_cmd(33, V580)->size, 9264);
	ck_assert_uint_eq(ct_uvm_cmd(33, CT_DRV(550, 54, 14))->size, 9264);
	ck_assert_uint_eq(ct_uvm_cmd(68, CT_DRV(535, 288, 1))->size, 1184);
	/* UNREGISTER_CHANNEL 28 -> 12 */
	ck_assert_uint_eq(ct_uvm_cmd(28, CT_DRV(570, 211, 1))->size, 28);
	ck_assert_uint_eq(ct_uvm_cmd(28, V595)->size, 12);
	/* SET_PREFERRED_LOCATION rmStatus 32 (535) -> 36 */
	ck_assert_int_eq(ct_uvm_cmd(42, CT_DRV(535, 288, 1))->status_off, 32);
	ck_assert_int_eq(ct_uvm_cmd(42, V580)->status_off, 36);
	/* TOOLS_INIT_EVENT_TRACKER 64 only in the 550 branch */
	ck_assert_uint_eq(ct_uvm_cmd(56, CT_DRV(550, 163, 1))->size, 64);
	ck_assert_uint_eq(ct_uvm_cmd(56, CT_DRV(535, 288, 1))->size, 56);
	ck_assert_uint_eq(ct_uvm_cmd(56, V580)->size, 56);
	ck_assert_uint_eq(ct_uvm_cmd(64, CT_DRV(550, 163, 1))->size, 24);
	/* removed commands: known name, absent row */
	c = ct_uvm_cmd(9, V595);
	ck_assert_str_eq(c->name, "UVM_RUN_TEST");
	ck_assert(c->flags & CT_UVM_F_ABSENT);
	ck_assert_uint_eq(c->size, 0);
	ck_assert_uint_eq(ct_uvm_cmd(9, V580)->size, 44);
	ck_assert(!(ct_uvm_cmd(54, V580)->flags & CT_UVM_F_ABSENT));
	ck_assert(ct_uvm_cmd(54, V595)->flags & CT_UVM_F_ABSENT);
	ck_assert(ct_uvm_cmd(36, V580)->flags & CT_UVM_F_ABSENT);
	ck_assert_uint_eq(ct_uvm_cmd(36, CT_DRV(570, 211, 1))->size, 64);
	/* added commands: absent before */
	ck_assert(ct_uvm_cmd(80, CT_DRV(570, 211, 1))->flags & CT_UVM_F_ABSENT);
	ck_assert_uint_eq(ct_uvm_cmd(80, V580)->size, 32);
	ck_assert(ct_uvm_cmd(76, CT_DRV(550, 163, 1))->flags & CT_UVM_F_ABSENT);
	ck_assert_uint_eq(ct_uvm_cmd(76, CT_DRV(570, 211, 1))->size, 56);
	/* ADD_SESSION 24/20 -> 8/4 */
	ck_assert_int_eq(ct_uvm_cmd(10, V580)->status_off, 20);
	ck_assert_int_eq(ct_uvm_cmd(10, V595)->status_off, 4);
}
END_TEST

/* ---- CUDA headers (ABI.md §9) and NVML ------------------------------------- */

START_TEST(cuda_results_9)
{
	static const struct { int v; const char *name; } x[] = {
		{ 0, "CUDA_SUCCESS" }, { 1, "CUDA_ERROR_INVALID_VALUE" },
		{ 3, "CUDA_ERROR_NOT_INITIALIZED" }, { 34, "CUDA_ERROR_STUB_LIBRARY" },
		{ 36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER" }, { 100, "CUDA_ERROR_NO_DEVICE" },
		{ 101, "CUDA_ERROR_INVALID_DEVICE" }, { 209, "CUDA_ERROR_NO_BINARY_FOR_GPU" },
		{ 802, "CUDA_ERROR_SYSTEM_NOT_READY" }, { 803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH" },
		{ 804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE" }, { 999, "CUDA_ERROR_UNKNOWN" },
	};
	int v;

	for (unsigned i = 0; i < sizeof x / sizeof x[0]; i++) {
		ck_assert_str_eq(ct_cu_result_name(x[i].v), x[i].name);
		ck_assert_int_eq(ct_cu_result_from_name(x[i].name, &v), 0);
		ck_assert_int_eq(v, x[i].v);
	}
	/* 35 is not a CUresult (ABI.md §9, §11.16) */
	ck_assert_ptr_null(ct_cu_result_name(35));
	ck_assert_ptr_null(ct_cu_result_name(-1));
	ck_assert_ptr_null(ct_cu_result_name(1000));
	ck_assert_int_eq(ct_cu_result_from_name("CUDA_ERROR_NOPE", &v), -1);
	ck_assert_int_eq(ct_cu_result_from_name("100", &v), -1);
	ck_assert_int_eq(CT_GEN_CU_RESULTS_N, 101); /* ABI.md §9: 101 enumerators */

	ck_assert_str_eq(ct_cudart_error_name(0), "cudaSuccess");
	ck_assert_str_eq(ct_cudart_error_name(35), "cudaErrorInsufficientDriver");
	ck_assert_str_eq(ct_cudart_error_name(100), "cudaErrorNoDevice");
	ck_assert_int_eq(ct_cudart_error_from_name("cudaErrorInsufficientDriver", &v), 0);
	ck_assert_int_eq(v, 35);
	ck_assert_int_eq(ct_cudart_error_from_name("CUDA_ERROR_NO_DEVICE", &v), -1);
}
END_TEST

START_TEST(nvml_returns)
{
	int v;

	ck_assert_str_eq(ct_nvml_return_name(0), "NVML_SUCCESS");
	ck_assert_str_eq(ct_nvml_return_name(9), "NVML_ERROR_DRIVER_NOT_LOADED");
	ck_assert_str_eq(ct_nvml_return_name(18), "NVML_ERROR_LIB_RM_VERSION_MISMATCH");
	ck_assert_str_eq(ct_nvml_return_name(999), "NVML_ERROR_UNKNOWN");
	ck_assert_ptr_null(ct_nvml_return_name(31));
	ck_assert_int_eq(ct_nvml_return_from_name("NVML_ERROR_LIB_RM_VERSION_MISMATCH", &v), 0);
	ck_assert_int_eq(v, 18);
}
END_TEST

START_TEST(errno_names)
{
	ck_assert_str_eq(ct_errno_name(EPERM), "EPERM");
	ck_assert_str_eq(ct_errno_name(ENOENT), "ENOENT");
	ck_assert_str_eq(ct_errno_name(EINVAL), "EINVAL");
	ck_assert_str_eq(ct_errno_name(EIO), "EIO");
	ck_assert_str_eq(ct_errno_name(ENOSYS), "ENOSYS");
	ck_assert_str_eq(ct_errno_name(EAGAIN), "EAGAIN");     /* not EWOULDBLOCK */
	ck_assert_str_eq(ct_errno_name(EOPNOTSUPP), "EOPNOTSUPP");
	ck_assert_ptr_null(ct_errno_name(0));
	ck_assert_ptr_null(ct_errno_name(-1));
	ck_assert_ptr_null(ct_errno_name(4000));
	ck_assert_int_eq(ct_errno_from_name("EPERM"), EPERM);
	ck_assert_int_eq(ct_errno_from_name("EACCES"), EACCES);
	ck_assert_int_eq(ct_errno_from_name("EWOULDBLOCK"), EAGAIN);
	ck_assert_int_eq(ct_errno_from_name("ENOTSUP"), EOPNOTSUPP);
	ck_assert_int_eq(ct_errno_from_name("EBOGUS"), -1);
	ck_assert_int_eq(ct_errno_from_name("eperm"), -1);
	ck_assert_int_eq(ct_errno_from_name(NULL), -1);
	/* Linux errnos 1..133 all have a name, except the numbers that only
	 * aliases used to have (41 EWOULDBLOCK, 58 EDEADLOCK) */
	for (int e = 1; e < 134; e++)
		if (e != 41 && e != 58)
			ck_assert_msg(ct_errno_name(e), "errno %d", e);
}
END_TEST

/* ---- flags ----------------------------------------------------------------- */

START_TEST(open_flags)
{
	char buf[128];

	ck_assert_str_eq(ct_open_flags_str(O_RDONLY, buf, sizeof buf), "O_RDONLY");
	ck_assert_str_eq(ct_open_flags_str(O_RDWR | O_CLOEXEC, buf, sizeof buf), "O_RDWR|O_CLOEXEC");
	ck_assert_str_eq(ct_open_flags_str(O_WRONLY | O_CREAT | O_TRUNC, buf, sizeof buf),
			 "O_WRONLY|O_CREAT|O_TRUNC");
	ck_assert_str_eq(ct_open_flags_str(O_RDWR | O_NONBLOCK | O_CLOEXEC, buf, sizeof buf),
			 "O_RDWR|O_NONBLOCK|O_CLOEXEC");
	ck_assert_str_eq(ct_open_flags_str(O_RDONLY | O_SYNC, buf, sizeof buf), "O_RDONLY|O_SYNC");
	ck_assert_str_eq(ct_open_flags_str(O_RDONLY | O_DSYNC, buf, sizeof buf), "O_RDONLY|O_DSYNC");
	ck_assert_str_eq(ct_open_flags_str(O_RDWR | O_TMPFILE, buf, sizeof buf), "O_RDWR|O_TMPFILE");
	ck_assert_str_eq(ct_open_flags_str(O_RDONLY | O_DIRECTORY, buf, sizeof buf),
			 "O_RDONLY|O_DIRECTORY");
	/* leftover bits in hex: 0x8000 is the kernel's O_LARGEFILE (0 in x86_64 glibc) */
	ck_assert_str_eq(ct_open_flags_str(O_RDWR | O_CLOEXEC | 0x8000, buf, sizeof buf),
			 "O_RDWR|O_CLOEXEC|0x8000");
	ck_assert_str_eq(ct_open_flags_str(3, buf, sizeof buf), "0x3");
	ck_assert_str_eq(ct_open_flags_str(0x80000000u, buf, sizeof buf), "O_RDONLY|0x80000000");
	/* truncation keeps a terminated prefix */
	ck_assert_str_eq(ct_open_flags_str(O_RDWR | O_CLOEXEC, buf, 8), "O_RDWR|");
}
END_TEST

START_TEST(dlopen_flags)
{
	char buf[128];

	ck_assert_str_eq(ct_dlopen_flags_str(RTLD_NOW, buf, sizeof buf), "RTLD_NOW");
	ck_assert_str_eq(ct_dlopen_flags_str(RTLD_LAZY | RTLD_GLOBAL, buf, sizeof buf),
			 "RTLD_LAZY|RTLD_GLOBAL");
	ck_assert_str_eq(ct_dlopen_flags_str(RTLD_NOW | RTLD_LOCAL, buf, sizeof buf), "RTLD_NOW");
	ck_assert_str_eq(ct_dlopen_flags_str(RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE | RTLD_DEEPBIND,
					     buf, sizeof buf),
			 "RTLD_NOW|RTLD_NOLOAD|RTLD_DEEPBIND|RTLD_NODELETE");
	ck_assert_str_eq(ct_dlopen_flags_str(0, buf, sizeof buf), "0");
	ck_assert_str_eq(ct_dlopen_flags_str(RTLD_LAZY | 0x40000, buf, sizeof buf), "RTLD_LAZY|0x40000");
}
END_TEST

/* ---- ioctl names, versions ------------------------------------------------- */

START_TEST(ioctl_names)
{
	static const struct { const char *name; int ns; uint32_t nr; } x[] = {
		{ "NV_ESC_RM_ALLOC", CT_IOCTL_NS_NV, 0x2B }, { "NV_ESC_RM_CONTROL", CT_IOCTL_NS_NV, 0x2A },
		{ "NV_ESC_CARD_INFO", CT_IOCTL_NS_NV, 200 }, { "NV_ESC_SYS_PARAMS", CT_IOCTL_NS_NV, 214 },
		{ "NV_ESC_CHECK_VERSION_STR", CT_IOCTL_NS_NV, 210 },
		{ "NV_ESC_WAIT_OPEN_COMPLETE", CT_IOCTL_NS_NV, 218 },
		{ "NV_ESC_RM_NVLOG_CTRL", CT_IOCTL_NS_NV, 0x5F },
		{ "NV_ESC_RM_LOCKLESS_DIAGNOSTIC", CT_IOCTL_NS_NV, 0x5F },
		{ "UVM_REGISTER_GPU", CT_IOCTL_NS_UVM, 37 }, { "UVM_INITIALIZE", CT_IOCTL_NS_UVM, 0x30000001 },
		{ "UVM_DEINITIALIZE", CT_IOCTL_NS_UVM, 0x30000002 },
		{ "UVM_MM_INITIALIZE", CT_IOCTL_NS_UVM, 75 }, { "UVM_RUN_TEST", CT_IOCTL_NS_UVM, 9 },
	};
	int ns;
	uint32_t nr;

	for (unsigned i = 0; i < sizeof x / sizeof x[0]; i++) {
		ck_assert_msg(ct_ioctl_from_name(x[i].name, &ns, &nr) == 0, "%s", x[i].name);
		ck_assert_int_eq(ns, x[i].ns);
		ck_assert_uint_eq(nr, x[i].nr);
	}
	ck_assert_int_eq(ct_ioctl_from_name("NV_ESC_NOPE", &ns, &nr), -1);
	ck_assert_int_eq(ct_ioctl_from_name("nv_esc_rm_alloc", &ns, &nr), -1);
	ck_assert_int_eq(ct_ioctl_from_name("", &ns, &nr), -1);
	ck_assert_int_eq(ct_ioctl_from_name(NULL, &ns, &nr), -1);
	/* every escape and UVM name resolves back to a row with that name */
	for (unsigned i = 0; i < CT_GEN_IOCTL_NAMES_N; i++) {
		const struct ct_gen_ioctl_name *e = &ct_gen_ioctl_names[i];
		ck_assert_int_eq(ct_ioctl_from_name(e->name, &ns, &nr), 0);
		if (ns == CT_IOCTL_NS_UVM) {
			ck_assert_str_eq(ct_uvm_cmd(nr, 0)->name, e->name);
		} else {
			bool found = false;
			for (uint32_t v = 0; v < 2 && !found; v++) {
				const struct ct_nv_escape *x2 = ct_nv_escape(nr, 0, v ? CT_DRV(535, 288, 1) : 0);
				found = x2 && !strcmp(x2->name, e->name);
			}
			ck_assert_msg(found, "%s", e->name);
		}
	}
}
END_TEST

START_TEST(version_parse)
{
	ck_assert_uint_eq(ct_drv_version_parse("580.159.04"), 580159004u);
	ck_assert_uint_eq(ct_drv_version_parse("580.159.04\n"), 580159004u);
	ck_assert_uint_eq(ct_drv_version_parse("595.45.04"), CT_DRV(595, 45, 4));
	ck_assert_uint_eq(ct_drv_version_parse("550.54"), CT_DRV(550, 54, 0));
	/* ABI.md §8: the observed /proc/driver/nvidia/version */
	ck_assert_uint_eq(ct_drv_version_parse(
		"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \n"
		"GCC version:  gcc version 15.3.0 (GCC) \n"), 580159004u);
	ck_assert_uint_eq(ct_drv_version_parse(
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.288.01  Tue Jan  7 2026"),
		CT_DRV(535, 288, 1));
	ck_assert_uint_eq(ct_drv_version_parse("driver 580.65.06-1ubuntu"), CT_DRV(580, 65, 6));
	ck_assert_uint_eq(ct_drv_version_parse("x86_64 only"), 0);
	ck_assert_uint_eq(ct_drv_version_parse(""), 0);
	ck_assert_uint_eq(ct_drv_version_parse(NULL), 0);
	ck_assert_uint_eq(ct_drv_version_parse("580."), 0);
	ck_assert_uint_eq(ct_drv_version_parse("1.2345 then 580.1.2"), CT_DRV(580, 1, 2));
	ck_assert_uint_eq(ct_drv_version_parse("580.159."), CT_DRV(580, 159, 0));
	ck_assert_uint_eq(ct_drv_version_parse("99999.1"), 0);
}
END_TEST

/* cutrace_gen/codes.h: the constants the diagnosis tests codes with are the
 * headers' values, and their names are the names the tables print */
START_TEST(named_codes)
{
	static const struct { int value; const char *name; } cu[] = {
		{ CT_CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED" },
		{ CT_CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY" },
		{ CT_CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE" },
		{ CT_CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE" },
		{ CT_CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE" },
		{ CT_CUDA_ERROR_SYSTEM_NOT_READY, "CUDA_ERROR_SYSTEM_NOT_READY" },
		{ CT_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH" },
		{ CT_CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE" },
		{ CT_CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN" },
	};
	int v;

	for (size_t i = 0; i < sizeof cu / sizeof cu[0]; i++) {
		ck_assert_str_eq(ct_cu_result_name(cu[i].value), cu[i].name);
		ck_assert_int_eq(ct_cu_result_from_name(cu[i].name, &v), 0);
		ck_assert_int_eq(v, cu[i].value);
	}
	/* the values cuda.h gives them (CUDA 13.0; none has ever changed) */
	ck_assert_int_eq(CT_CUDA_ERROR_NO_DEVICE, 100);
	ck_assert_int_eq(CT_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803);
	ck_assert_str_eq(ct_cudart_error_name(CT_cudaErrorInsufficientDriver), "cudaErrorInsufficientDriver");
	ck_assert_int_eq(CT_cudaErrorInsufficientDriver, 35);
	ck_assert_str_eq(ct_nvml_return_name(CT_NVML_ERROR_LIB_RM_VERSION_MISMATCH), "NVML_ERROR_LIB_RM_VERSION_MISMATCH");
}
END_TEST

/* the other shapes of base/version.c, read with the same digit reader */
START_TEST(version_shapes)
{
	unsigned v[3];
	char buf[32];

	ck_assert_int_eq(ct_version_parts("580.159.04", v, 3), 3);
	ck_assert_uint_eq(v[0], 580);
	ck_assert_uint_eq(v[1], 159);
	ck_assert_uint_eq(v[2], 4);
	ck_assert_int_eq(ct_version_parts("13.0", v, 3), 2);
	ck_assert_uint_eq(v[2], 0);
	ck_assert_int_eq(ct_version_parts("12.4.x", v, 3), 2);
	ck_assert_int_eq(ct_version_parts("99999999999.1", v, 2), 2);
	ck_assert_uint_eq(v[0], 4294967295u);
	ck_assert_int_eq(ct_version_parts("v12", v, 3), 0);
	ck_assert_int_eq(ct_version_parts(NULL, v, 3), 0);

	ck_assert_int_lt(ct_version_cmp("580.95.05", "580.159.04"), 0);
	ck_assert_int_gt(ct_version_cmp("590.48.01", "580.159.04"), 0);
	ck_assert_int_eq(ct_version_cmp("580.159.04", "580.159.04"), 0);
	ck_assert_int_lt(ct_version_cmp("580.159", "580.159.04"), 0);
	ck_assert_int_gt(ct_version_cmp("580.159.04", "580.159"), 0);

	ck_assert_int_eq(ct_version_from_name("/usr/lib/libcuda.so.575.51.02", buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "575.51.02");
	ck_assert_int_eq(ct_version_from_name("libx.so.1.", buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "1");
	ck_assert_int_eq(ct_version_from_name("libx.so.1", buf, 1), -1);

	/* the module title, then its version; never the GCC line's */
	ck_assert_int_eq(ct_parse_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
					       "580.159.04  Release Build\nGCC version:  gcc version 15.3.0 (GCC)\n",
					       buf, sizeof buf, NULL), 0);
	ck_assert_str_eq(buf, "580.159.04");
	ck_assert_int_eq(ct_parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  1.2.3.4\n"
					       "GCC version:  gcc version 15.3.0 (GCC)\n", buf, sizeof buf, NULL), -1);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(ct_parse_nvrm_version("580.159.04\n", buf, sizeof buf, NULL), 0);
	ck_assert_str_eq(buf, "580.159.04");
	ck_assert_int_eq(ct_parse_nvrm_version("580.159.04\n", buf, 5, NULL), -1);
}
END_TEST

/* ---- shim_tables.h --------------------------------------------------------- */

#define ASSERT_SORTED_BY_NAME(arr, n) \
	for (unsigned i = 1; i < (n); i++) \
		ck_assert_msg(strcmp(arr[i - 1].name, arr[i].name) < 0, #arr " %u: %s >= %s", i, \
			      arr[i - 1].name, arr[i].name)

START_TEST(shim_tables_sorted)
{
	ASSERT_SORTED_BY_NAME(ct_gen_ioctl_names, CT_GEN_IOCTL_NAMES_N);
	ASSERT_SORTED_BY_NAME(ct_gen_errnos, CT_GEN_ERRNOS_N);
	ASSERT_SORTED_BY_NAME(ct_gen_cu_results, CT_GEN_CU_RESULTS_N);
	ASSERT_SORTED_BY_NAME(ct_gen_cudart_errors, CT_GEN_CUDART_ERRORS_N);
	ASSERT_SORTED_BY_NAME(ct_gen_nvml_returns, CT_GEN_NVML_RETURNS_N);
	ASSERT_SORTED_BY_NAME(ct_gen_nv_status, CT_GEN_NV_STATUS_N);
	for (unsigned i = 1; i < CT_GEN_UVM_SIZES_N; i++) {
		const struct ct_gen_uvm_size *a = &ct_gen_uvm_sizes[i - 1], *b = &ct_gen_uvm_sizes[i];
		ck_assert(a->nr < b->nr || (a->nr == b->nr && a->min_drv < b->min_drv));
		if (a->nr != b->nr)
			ck_assert_uint_eq(b->min_drv, 0);
	}
	ck_assert_uint_eq(ct_gen_uvm_sizes[0].min_drv, 0);
	for (unsigned i = 1; i < CT_GEN_ESC_STATUS_N; i++) {
		const struct ct_gen_esc_status *a = &ct_gen_esc_status[i - 1], *b = &ct_gen_esc_status[i];
		ck_assert(a->nr < b->nr || (a->nr == b->nr && (a->size < b->size ||
			  (a->size == b->size && a->min_drv < b->min_drv))));
	}
}
END_TEST

/* The shim's data agrees with the tracer's lookups. */
START_TEST(shim_tables_agree)
{
	for (unsigned i = 0; i < CT_GEN_UVM_SIZES_N; i++) {
		const struct ct_gen_uvm_size *s = &ct_gen_uvm_sizes[i];
		const struct ct_uvm_cmd *c = ct_uvm_cmd(s->nr, s->min_drv ? s->min_drv : 1);
		ck_assert_uint_eq(c->size, s->size);
		ck_assert_int_eq(c->status_off, s->status_off);
	}
	for (unsigned i = 0; i < CT_GEN_ESC_STATUS_N; i++) {
		const struct ct_gen_esc_status *s = &ct_gen_esc_status[i];
		const struct ct_nv_escape *e = ct_nv_escape(s->nr, s->size, s->min_drv ? s->min_drv : 1);
		ck_assert_uint_eq(e->size, s->size);
		ck_assert_int_eq(e->status_off, s->status_off);
		ck_assert(!(e->flags & CT_ESC_F_NUMA_STATUS));
		ck_assert_uint_ne(s->nr, 215); /* NUMA_INFO: a NUMA state, never injected as NV_STATUS */
	}
	/* spot checks (ABI.md §2b, §3): RM_ALLOC NVOS64 @40, NVOS21 @24 then @28 from 535.43.02 */
	unsigned hits = 0;
	for (unsigned i = 0; i < CT_GEN_ESC_STATUS_N; i++) {
		const struct ct_gen_esc_status *s = &ct_gen_esc_status[i];
		if (s->nr == 0x2B && s->size == 48 && s->status_off == 40)
			hits++;
		if (s->nr == 0x2B && s->size == 32 && s->min_drv == 0 && s->status_off == 24)
			hits++;
		if (s->nr == 0x2B && s->size == 32 && s->min_drv == CT_DRV(535, 43, 2) && s->status_off == 28)
			hits++;
		if (s->nr == 0x2A && s->size == 32 && s->status_off == 28)
			hits++;
	}
	ck_assert_uint_eq(hits, 4);
	for (unsigned i = 0; i < CT_GEN_CU_RESULTS_N; i++)
		ck_assert_str_eq(ct_cu_result_name(ct_gen_cu_results[i].value), ct_gen_cu_results[i].name);
	for (unsigned i = 0; i < CT_GEN_NVML_RETURNS_N; i++)
		ck_assert_str_eq(ct_nvml_return_name(ct_gen_nvml_returns[i].value), ct_gen_nvml_returns[i].name);
	for (unsigned i = 0; i < CT_GEN_ERRNOS_N; i++)
		ck_assert_int_eq(ct_errno_from_name(ct_gen_errnos[i].name), ct_gen_errnos[i].value);
	/* NV_STATUS by name: newest values, old-only names as extra rows */
	int v = -1;
	for (unsigned i = 0; i < CT_GEN_NV_STATUS_N; i++) {
		uint32_t u;
		ck_assert_int_eq(ct_nv_status_from_name(ct_gen_nv_status[i].name, 0, &u), 0);
		ck_assert_uint_eq(u, (uint32_t)ct_gen_nv_status[i].value);
		if (!strcmp(ct_gen_nv_status[i].name, "NV_ERR_DMA_XFER_FAILED"))
			v = ct_gen_nv_status[i].value;
	}
	ck_assert_int_eq(v, 0x8C);
	ck_assert_uint_eq(CT_GEN_NV_STATUS_N, 151 + 2); /* + the two NVSWITCH_ names */
}
END_TEST

static Suite *xlat_suite(void)
{
	Suite *s = suite_create("xlat");
	TCase *tc = tcase_create("tables");

	tcase_add_test(tc, frontend_escapes_2a);
	tcase_add_test(tc, rm_escapes_2b);
	tcase_add_test(tc, rm_alloc_per_version);
	tcase_add_test(tc, nv_status_5);
	tcase_add_test(tc, nv_status_versions);
	tcase_add_test(tc, rm_classes_7);
	tcase_add_test(tc, rm_controls_7);
	tcase_add_test(tc, uvm_init_commands_6);
	tcase_add_test(tc, uvm_versions_6);
	tcase_add_test(tc, cuda_results_9);
	tcase_add_test(tc, nvml_returns);
	tcase_add_test(tc, errno_names);
	tcase_add_test(tc, open_flags);
	tcase_add_test(tc, dlopen_flags);
	tcase_add_test(tc, ioctl_names);
	tcase_add_test(tc, version_parse);
	tcase_add_test(tc, version_shapes);
	tcase_add_test(tc, named_codes);
	tcase_add_test(tc, shim_tables_sorted);
	tcase_add_test(tc, shim_tables_agree);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(xlat_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
