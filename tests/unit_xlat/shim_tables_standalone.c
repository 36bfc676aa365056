/*
 * shim_tables.h must stand alone: only <stdint.h>, no libc functions, and
 * every array sorted so the shim can bsearch it.  tests.cmake compiles this
 * file freestanding (-nostdinc, -Werror) and also runs it: the exit status
 * names the first unsorted table (0 = all sorted).
 */
#include "cutrace_gen/shim_tables.h"
#include <stdint.h>

static int name_cmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

#define SORTED(arr, n) sorted_names(&arr[0].name, sizeof arr[0], n)

static int sorted_names(const char *const *first, unsigned long stride, unsigned n)
{
	const char *prev = 0;

	for (unsigned i = 0; i < n; i++) {
		const char *cur = *(const char *const *)((const char *)first + i * stride);
		if (prev && name_cmp(prev, cur) >= 0)
			return 0;
		prev = cur;
	}
	return n > 0;
}

static int uvm_sorted(void)
{
	for (unsigned i = 1; i < CT_GEN_UVM_SIZES_N; i++) {
		const struct ct_gen_uvm_size *a = &ct_gen_uvm_sizes[i - 1], *b = &ct_gen_uvm_sizes[i];
		if (!(a->nr < b->nr || (a->nr == b->nr && a->min_drv < b->min_drv)))
			return 0;
	}
	return ct_gen_uvm_sizes[0].min_drv == 0;
}

static int esc_sorted(void)
{
	for (unsigned i = 1; i < CT_GEN_ESC_STATUS_N; i++) {
		const struct ct_gen_esc_status *a = &ct_gen_esc_status[i - 1], *b = &ct_gen_esc_status[i];
		if (!(a->nr < b->nr || (a->nr == b->nr && (a->size < b->size ||
		      (a->size == b->size && a->min_drv < b->min_drv)))))
			return 0;
	}
	return 1;
}

int main(void)
{
	if (!uvm_sorted())
		return 1;
	if (!SORTED(ct_gen_ioctl_names, CT_GEN_IOCTL_NAMES_N))
		return 2;
	if (!SORTED(ct_gen_errnos, CT_GEN_ERRNOS_N))
		return 3;
	if (!SORTED(ct_gen_cu_results, CT_GEN_CU_RESULTS_N))
		return 4;
	if (!SORTED(ct_gen_cudart_errors, CT_GEN_CUDART_ERRORS_N))
		return 5;
	if (!SORTED(ct_gen_nvml_returns, CT_GEN_NVML_RETURNS_N))
		return 6;
	if (!SORTED(ct_gen_nv_status, CT_GEN_NV_STATUS_N))
		return 7;
	if (!esc_sorted())
		return 8;
	return 0;
}
