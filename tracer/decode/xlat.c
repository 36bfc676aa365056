/*
 * Name tables: lookups over the data that common/xlat/gen_xlat.py generates from
 * common/xlat/<family>.in and the CUDA/libc headers (see xlat.h).  The value-sorted
 * tables live in xlat_tables.c (generated); the name-sorted ones are shared
 * with the shim through cutrace_gen/shim_tables.h.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xlat.h"
#include "fmt.h"
#include "cutrace_gen/xlat_data.h"
#include "cutrace_gen/shim_tables.h"

/* ---- generic searches ------------------------------------------------------ */

static const char *xv_name(const struct ct_gen_xv *t, unsigned n, uint32_t v)
{
	unsigned lo = 0, hi = n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (t[mid].value == v)
			return t[mid].name;
		if (t[mid].value < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int code_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct ct_gen_code *)elem)->name);
}

static int code_from_name(const struct ct_gen_code *t, unsigned n, const char *name, int *out)
{
	const struct ct_gen_code *c;

	if (!name)
		return -1;
	c = bsearch(name, t, n, sizeof *t, code_cmp);
	if (!c)
		return -1;
	if (out)
		*out = c->value;
	return 0;
}

/* Does version range [since, until) hold driver version drv?  drv 0 means
 * "unknown: newest", which only open-ended rows hold. */
static bool in_range(uint32_t since, uint32_t until, uint32_t drv)
{
	if (!drv)
		return until == 0;
	return drv >= since && (until == 0 || drv < until);
}

/* ---- errno, CUDA, NVML ----------------------------------------------------- */

const char *ct_errno_name(int e)
{
	if (e < 0)
		return NULL;
	return xv_name(ct_gen_errno_by_value, ct_gen_errno_by_value_n, (uint32_t)e);
}

static int errno_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct ct_gen_errno *)elem)->name);
}

int ct_errno_from_name(const char *name)
{
	const struct ct_gen_errno *e;

	if (!name)
		return -1;
	e = bsearch(name, ct_gen_errnos, CT_GEN_ERRNOS_N, sizeof ct_gen_errnos[0], errno_cmp);
	return e ? e->value : -1;
}

const char *ct_cu_result_name(int r)
{
	if (r < 0)
		return NULL;
	return xv_name(ct_gen_cu_result_by_value, ct_gen_cu_result_by_value_n, (uint32_t)r);
}

int ct_cu_result_from_name(const char *name, int *out)
{
	return code_from_name(ct_gen_cu_results, CT_GEN_CU_RESULTS_N, name, out);
}

const char *ct_cudart_error_name(int r)
{
	if (r < 0)
		return NULL;
	return xv_name(ct_gen_cudart_by_value, ct_gen_cudart_by_value_n, (uint32_t)r);
}

int ct_cudart_error_from_name(const char *name, int *out)
{
	return code_from_name(ct_gen_cudart_errors, CT_GEN_CUDART_ERRORS_N, name, out);
}

const char *ct_nvml_return_name(int r)
{
	if (r < 0)
		return NULL;
	return xv_name(ct_gen_nvml_by_value, ct_gen_nvml_by_value_n, (uint32_t)r);
}

int ct_nvml_return_from_name(const char *name, int *out)
{
	return code_from_name(ct_gen_nvml_returns, CT_GEN_NVML_RETURNS_N, name, out);
}

/* ---- NV_STATUS ------------------------------------------------------------- */

/* Rows are sorted by value, then since.  A value's rows for other versions
 * are a fallback: a status a driver cannot produce is still best shown by the
 * newest name it has. */
const char *ct_nv_status_name(uint32_t status, uint32_t drv)
{
	const char *any = NULL;

	for (unsigned i = 0; i < ct_gen_nv_status_rows_n; i++) {
		const struct ct_gen_nvst *r = &ct_gen_nv_status_rows[i];
		if (r->value != status)
			continue;
		if (in_range(r->since, r->until, drv))
			return r->name;
		if (!any || r->until == 0)
			any = r->name;
	}
	return any;
}

bool ct_nv_status_is_warning(uint32_t status)
{
	return status >= 0x10001u;
}

int ct_nv_status_from_name(const char *name, uint32_t drv, uint32_t *out)
{
	const struct ct_gen_nvst *any = NULL;

	if (!name)
		return -1;
	for (unsigned i = 0; i < ct_gen_nv_status_rows_n; i++) {
		const struct ct_gen_nvst *r = &ct_gen_nv_status_rows[i];
		if (strcmp(r->name, name))
			continue;
		if (in_range(r->since, r->until, drv)) {
			any = r;
			break;
		}
		if (!any || r->until == 0)
			any = r;
	}
	if (!any)
		return -1;
	if (out)
		*out = any->value;
	return 0;
}

/* ---- frontend / RM escapes ------------------------------------------------- */

static bool esc_size_matches(const struct ct_nv_escape *e, uint32_t size)
{
	if (e->flags & CT_ESC_F_ARRAY)
		return size > 0 && e->elem_size && size % e->elem_size == 0;
	return e->size == size;
}

const struct ct_nv_escape *ct_nv_escape(unsigned nr, uint32_t size, uint32_t drv)
{
	const struct ct_nv_escape *ver = NULL, *sized = NULL, *newest = NULL;

	nr &= 0xFFu;
	for (unsigned i = 0; i < ct_gen_nv_escapes_n; i++) {
		const struct ct_nv_escape *e = &ct_gen_nv_escapes[i];
		bool here;

		if (e->nr != nr)
			continue;
		here = in_range(e->since, e->until, drv);
		if (here && (size == 0 || esc_size_matches(e, size)))
			return e;
		/* rows are in since order: the last match is the newest one */
		if (size && esc_size_matches(e, size))
			sized = e;
		if (here && !ver)
			ver = e;
		newest = e;
	}
	if (sized)
		return sized;
	return ver ? ver : newest;
}

/* ---- PCI device ids ---------------------------------------------------------- */

const char *ct_pci_nvidia_chip(uint32_t device, const char **product)
{
	unsigned lo = 0, hi = ct_gen_pci_nvidia_n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (ct_gen_pci_nvidia[mid].id == device) {
			if (product)
				*product = ct_gen_pci_nvidia[mid].product;
			return ct_gen_pci_nvidia[mid].chip;
		}
		if (ct_gen_pci_nvidia[mid].id < device)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (product)
		*product = NULL;
	return NULL;
}

const char *ct_nvidia_arch(const char *chip)
{
	static const char *const arch[][2] = {
		{ "GM", "Maxwell" }, { "GP", "Pascal" }, { "GV", "Volta" },  { "TU", "Turing" },
		{ "GA", "Ampere" },  { "AD", "Ada" },    { "GH", "Hopper" }, { "GB", "Blackwell" },
	};

	for (size_t i = 0; chip && i < sizeof arch / sizeof arch[0]; i++)
		if (!strncmp(chip, arch[i][0], 2) && chip[2] >= '0' && chip[2] <= '9')
			return arch[i][1];
	return NULL;
}

/* ---- RM classes and controls ----------------------------------------------- */

const char *ct_rm_class_name(uint32_t cls)
{
	return xv_name(ct_gen_rm_class_by_value, ct_gen_rm_class_by_value_n, cls);
}

const char *ct_rm_control_name(uint32_t cmd)
{
	return xv_name(ct_gen_rm_ctrl_by_value, ct_gen_rm_ctrl_by_value_n, cmd);
}

static const char *ctrl_cat_name(uint32_t cls, uint32_t cat)
{
	for (unsigned i = 0; i < ct_gen_rm_ctrl_cats_n; i++)
		if (ct_gen_rm_ctrl_cats[i].cls == cls && ct_gen_rm_ctrl_cats[i].cat == cat)
			return ct_gen_rm_ctrl_cats[i].name;
	return NULL;
}

/* Control number layout (ABI.md §7): class in 31:16, bit 15 legacy
 * GSS (0xC000 privileged), category 13:8, index 7:0. */
const char *ct_rm_control_describe(uint32_t cmd, char *buf, unsigned len)
{
	uint32_t cls = cmd >> 16, catbyte = (cmd >> 8) & 0xFFu, idx = cmd & 0xFFu;
	const char *name = ct_rm_control_name(cmd), *cat;

	if (!buf || !len)
		return buf;
	if (name)
		ct_str_copy(buf, len, name);
	else if (cls == 0x2081u)
		ct_snprintf(buf, len, "NV2081_BINAPI 0x%04X", (unsigned)(cmd & 0xFFFFu));
	else if (catbyte & 0x80u)
		ct_snprintf(buf, len, "NV%04X legacy-GSS%s cat 0x%02X idx 0x%02X", (unsigned)cls,
			 (catbyte & 0x40u) ? "-priv" : "", (unsigned)catbyte, (unsigned)idx);
	else if ((cat = ctrl_cat_name(cls, catbyte & 0x3Fu)))
		ct_snprintf(buf, len, "NV%04X cat %s(0x%02X) idx 0x%02X", (unsigned)cls, cat,
			 (unsigned)catbyte, (unsigned)idx);
	else
		ct_snprintf(buf, len, "NV%04X cat 0x%02X idx 0x%02X", (unsigned)cls,
			 (unsigned)catbyte, (unsigned)idx);
	return buf;
}

/* ---- UVM ------------------------------------------------------------------- */

const struct ct_uvm_cmd *ct_uvm_cmd(uint32_t nr, uint32_t drv)
{
	const struct ct_uvm_cmd *last = NULL;

	/* rows of one nr cover all versions without gaps, in since order */
	for (unsigned i = 0; i < ct_gen_uvm_cmds_n; i++) {
		const struct ct_uvm_cmd *c = &ct_gen_uvm_cmds[i];
		if (c->nr != nr)
			continue;
		if (drv && in_range(c->since, c->until, drv))
			return c;
		last = c;
	}
	return last;
}

/* ---- ioctl names ----------------------------------------------------------- */

static int ioctl_name_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct ct_gen_ioctl_name *)elem)->name);
}

int ct_ioctl_from_name(const char *name, int *ns, uint32_t *nr)
{
	const struct ct_gen_ioctl_name *e;

	if (!name)
		return -1;
	e = bsearch(name, ct_gen_ioctl_names, CT_GEN_IOCTL_NAMES_N, sizeof ct_gen_ioctl_names[0],
		    ioctl_name_cmp);
	if (!e)
		return -1;
	if (ns)
		*ns = e->ns;
	if (nr)
		*nr = e->nr;
	return 0;
}

/* ---- flag words ------------------------------------------------------------ */

struct sbuf { char *p; unsigned len, used; };

static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->used + 1 >= b->len)
		return;
	if (b->used)
		b->p[b->used++] = '|';
	va_start(ap, fmt);
	n = ct_vsnprintf(b->p + b->used, b->len - b->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->used = (b->used + (unsigned)n < b->len) ? b->used + (unsigned)n : b->len - 1;
	b->p[b->used] = '\0';
}

/* a name: no formatting needed */
static void sb_name(struct sbuf *b, const char *name)
{
	size_t n = strlen(name);

	if (b->used + 1 >= b->len)
		return;
	if (b->used)
		b->p[b->used++] = '|';
	if (n > b->len - 1 - b->used)
		n = b->len - 1 - b->used;
	memcpy(b->p + b->used, name, n);
	b->used += (unsigned)n;
	b->p[b->used] = '\0';
}

/* Mode names are values of a field (the OR of all mode values); the other
 * names are bit sets, matched in table order, multi-bit ones listed first.
 * Bits no name covers are printed as one hex number. */
static const char *flags_str(const struct ct_gen_flag *t, unsigned n, uint32_t flags,
			     char *buf, unsigned len)
{
	struct sbuf b = { buf, len, 0 };
	uint32_t mask = 0, rest = flags;

	if (!buf || !len)
		return buf;
	buf[0] = '\0';
	for (unsigned i = 0; i < n; i++)
		if (t[i].mode)
			mask |= t[i].value;
	for (unsigned i = 0; i < n; i++) {
		if (t[i].mode && (flags & mask) == t[i].value && (t[i].value || mask)) {
			sb_name(&b, t[i].name);
			rest &= ~mask;
			break;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		if (t[i].mode || !t[i].value || (rest & t[i].value) != t[i].value)
			continue;
		sb_name(&b, t[i].name);
		rest &= ~t[i].value;
	}
	if (rest || !b.used)
		sb_add(&b, "%#x", (unsigned)rest);
	return buf;
}

const char *ct_open_flags_str(uint32_t flags, char *buf, unsigned len)
{
	return flags_str(ct_gen_open_flags, ct_gen_open_flags_n, flags, buf, len);
}

const char *ct_dlopen_flags_str(int flags, char *buf, unsigned len)
{
	return flags_str(ct_gen_dlopen_flags, ct_gen_dlopen_flags_n, (uint32_t)flags, buf, len);
}
