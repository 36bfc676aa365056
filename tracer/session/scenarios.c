/*
 * Named failure scenarios: recipes of injection rules (and, where the field
 * failure is an environment, the environment) that make the real CUDA stack
 * fail the way users see it in the field.  Each one is checked on the real
 * driver (H200, 580.159.04): `measured` says what the real stack returned;
 * SCENARIOS.md has what torch prints for each.
 *
 * References: the failure catalog section (B.x, at the end of SCENARIOS.md)
 * and the row of the CUDA compatibility matrix (tracer/diag/compat.c).
 */
#include "tracer.h"
#include "run.h"
#include "scenarios.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the table keeps its hand layout (one row per scenario, the columns aligned by hand) */
/* clang-format off */
const struct ct_scenario ct_scenarios[] = {
	{ "no-driver-library", "libcuda.so.1 is not found (container started without GPU access)", "B.2b",
	  "dlopen:lib=libcuda.so*:error=ENOENT", NULL,
	  "probe: dlopen fails; cudart 35 (cudaErrorInsufficientDriver); torch 'Found no NVIDIA driver on your system'" },
	{ "wrong-elf-class", "a 32-bit libcuda is first on the search path", "B.15",
	  "dlopen:lib=libcuda.so*:error=ELFCLASS32", NULL,
	  "cudart 35; dlerror 'wrong ELF class: ELFCLASS32'; torch 'Found no NVIDIA driver on your system'" },
	{ "stub-library", "the CUDA toolkit's stub libcuda is found before the driver's", "B.3",
	  NULL, "@stub",
	  "cuInit 34 (CUDA_ERROR_STUB_LIBRARY), cudart 34; torch 'Error 34: CUDA driver is a stub library'" },
	{ "insufficient-driver", "the driver is older than the runtime (driver CUDA 12.4, runtime 13.0)", "B.2a, matrix 'standard mismatch'",
	  "cuDriverGetVersion:value=12040", NULL,
	  "cudart 35; torch 'The NVIDIA driver on your system is too old (found version 12040)'" },
	{ "ctl-missing", "/dev/nvidiactl does not exist in the container", "B.4",
	  "open:path=/dev/nvidiactl:error=ENOENT", NULL, "cuInit 100, cudart 100; torch 'No CUDA GPUs are available'" },
	{ "ctl-denied", "the device cgroup denies /dev/nvidiactl (systemd daemon-reload)", "B.11a",
	  "open:path=/dev/nvidiactl:error=EPERM", NULL, "cuInit 100, cudart 100, NVML 999; torch 'No CUDA GPUs are available'" },
	{ "gpu-denied", "the device cgroup denies /dev/nvidia0", "B.11",
	  "open:path=/dev/nvidia[0-9]*:error=EPERM", NULL, "cuInit 100, cudart 100; torch 'No CUDA GPUs are available'" },
	{ "gpu-init-failed", "the GPU fails to initialize in the kernel (RmInitAdapter, open gives EIO)", "B.14",
	  "open:path=/dev/nvidia[0-9]*:error=EIO", NULL, "cuInit 100, cudart 100; torch 'No CUDA GPUs are available'" },
	{ "uvm-missing", "nvidia_uvm is not loaded: /dev/nvidia-uvm does not exist", "B.6, B.12",
	  "open:path=/dev/nvidia-uvm:error=ENOENT", NULL,
	  "cuInit 999, cudart 999; torch 'CUDA unknown error ... CUDA_VISIBLE_DEVICES'" },
	{ "uvm-denied", "the device cgroup denies /dev/nvidia-uvm", "B.11, B.6",
	  "open:path=/dev/nvidia-uvm:error=EPERM", NULL,
	  "cuInit 999, cudart 999; torch 'CUDA unknown error ... CUDA_VISIBLE_DEVICES'" },
	{ "mig-caps-denied", "the MIG capability nodes are not passed to the container", "B.13",
	  "open:path=/dev/nvidia-caps/*:error=EPERM", NULL, "no effect without MIG (H200 here: cuInit 0, cudart 0, torch ok); MIG queries fail on MIG GPUs" },
	{ "uvm-init-failed", "nvidia-uvm refuses UVM_INITIALIZE (e.g. after suspend/resume)", "B.6",
	  "ioctl:nr=UVM_INITIALIZE:error=EPERM", NULL, "cuInit 999, cudart 999; torch 'CUDA unknown error ... CUDA_VISIBLE_DEVICES'" },
	{ "uvm-register-gpu-failed", "nvidia-uvm cannot register the GPU (HMM on open kernel modules)", "B.7",
	  "ioctl:nr=UVM_REGISTER_GPU:status=NV_ERR_INSUFFICIENT_RESOURCES", NULL,
	  "cuInit 3, cudart 3; torch 'CUDA driver initialization failed'" },
	{ "version-skew", "user-space driver and kernel module versions differ (upgrade without reboot)", "B.1",
	  "ioctl:version=590.48.01", NULL,
	  "cuInit 803, cudart 803, torch 'Error 803: system has unsupported display driver / cuda driver "
	  "combination' (measured on the H200: a kernel reporting 590.48.01 to libcuda 580.159.04); NVML 18 "
	  "(measured with 575.51.02: any other string is rejected).  An older branch (575.51.02) is no 803: cuInit 101" },
	{ "nvml-mismatch", "NVML reports 'Driver/library version mismatch'", "B.1",
	  "ioctl:nr=NV_ESC_CHECK_VERSION_STR:version=575.51.02", NULL, "nvmlInit_v2 18; CUDA unaffected (torch 2.11 calls nvmlInit after its context is up, gets 18 and carries on)" },
	{ "compat-mismatch", "a cuda-compat libcuda that does not match the kernel module", "B.16, matrix 'forward compat'",
	  "cuInit:retval=CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", NULL,
	  "cuInit 803, cudart 803; torch 'Error 803: system has unsupported display driver / cuda driver combination' (the real compat 580.95.05 on a 580.159.04 module gives the same)" },
	{ "compat-unsupported", "forward compatibility attempted on a GPU without support (GeForce)", "B.9",
	  "cuInit:retval=CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", NULL, "cuInit 804, cudart 804; torch 'Error 804: forward compatibility was attempted on non supported HW'" },
	{ "system-not-ready", "NVSwitch fabric not configured (fabric manager not running)", "B.8",
	  "cuInit:retval=CUDA_ERROR_SYSTEM_NOT_READY", NULL, "cuInit 802, cudart 802; torch 'Error 802: system not yet initialized'; the driver-level form (GET_GPU_FABRIC_PROBE_INFO answering NV_ERR_FABRIC_MANAGER_NOT_PRESENT) gives 802 too" },
	{ "no-visible-device", "CUDA_VISIBLE_DEVICES hides every GPU", "B.4",
	  NULL, "CUDA_VISIBLE_DEVICES=", "cuInit 100, cudart 100; torch 'No CUDA GPUs are available'" },
	{ "cvd-wrong-uuid", "CUDA_VISIBLE_DEVICES names a GPU UUID this machine does not have (a job script from another node)", "G7",
	  NULL, "CUDA_VISIBLE_DEVICES=GPU-00000000-0000-0000-0000-000000000000",
	  "measured on the device machine (H100, 580.159.04) on 2026-12-05: cuInit 100; torch 'No CUDA GPUs are available'" },
	{ "invalid-ordinal", "the program asks for a device that is not visible", "B.5",
	  "cuDeviceGet:retval=CUDA_ERROR_INVALID_DEVICE", NULL, "cudart 3 (cudaErrorInitializationError); torch 'CUDA driver initialization failed'" },
	{ "devices-unavailable", "the GPU is in EXCLUSIVE_PROCESS mode and busy", "B.10",
	  "cuDevicePrimaryCtxRetain:retval=CUDA_ERROR_DEVICE_UNAVAILABLE;cuCtxCreate:retval=CUDA_ERROR_DEVICE_UNAVAILABLE",
	  NULL, "context creation 46; cudaSetDevice 46; torch 'CUDA-capable device(s) is/are busy or unavailable'" },
	{ "rm-permission", "the resource manager refuses the build-version query (NV_ERR_INSUFFICIENT_PERMISSIONS)", "B.11c, B.13",
	  "ioctl:cmd=0x101:status=NV_ERR_INSUFFICIENT_PERMISSIONS", NULL, "cuInit 100, cudart 100; torch 'No CUDA GPUs are available'" },
	{ "card-info-failed", "the kernel driver cannot list the GPUs (CARD_INFO fails)", "B.14",
	  "ioctl:nr=NV_ESC_CARD_INFO:error=EIO", NULL, "cuInit 100, cudart 100; torch 'No CUDA GPUs are available'" },
	{ "hang-in-cuinit", "cuInit hangs inside the driver (UVM_REGISTER_GPU never answers)", "B.6 (resume), B.8",
	  "ioctl:nr=UVM_REGISTER_GPU:delay=1h", NULL, "cuInit does not return (torch: cudaGetDeviceCount); kill the program to see the verdict" },
	/* issue 19, group 2: the GPU in the kernel (failure catalog Part C, G10, G8) */
	{ "gpu-lost", "a GPU fell off the bus: its node answers ENODEV (NV_ERR_GPU_IS_LOST)", "G10, B.14",
	  "open:path=/dev/nvidia[0-9]*:error=ENODEV", NULL,
	  "measured on the device machine (H100, 580.159.04) on 2026-12-05: probe cuInit 101 (CUDA_ERROR_INVALID_DEVICE, the rig's "
	  "libcuda gives 100); torch 'Error 101: invalid device ordinal'; nv.c answers -ENODEV for a lost GPU "
	  "(tracer/decode/ABI.md §8)" },
	{ "cc-not-ready",
	  "confidential computing: the GPU's ready state is not set, channel allocation gets NV_ERR_NOT_READY",
	  "G8",
	  "ioctl:class=0xc46f:status=NV_ERR_NOT_READY;ioctl:class=0xc56f:status=NV_ERR_NOT_READY;"
	  "ioctl:class=0xc86f:status=NV_ERR_NOT_READY;ioctl:class=0xc96f:status=NV_ERR_NOT_READY;"
	  "ioctl:class=0xca6f:status=NV_ERR_NOT_READY",
	  NULL,
	  "measured on the device machine (H100, 580.159.04) on 2026-12-05: cuInit 0, cuDevicePrimaryCtxRetain 600 (CUDA_ERROR_NOT_READY: "
	  "channels are allocated at context creation); torch 'CUDA-capable device(s) is/are busy or unavailable'" },
	/* issue 19: the failure catalog's Part C (G1 container runtime, G5 sandboxes) */
	{ "caps-no-compute", "the container runtime was told NVIDIA_DRIVER_CAPABILITIES without 'compute': NVML but no libcuda", "G1",
	  "dlopen:lib=libcuda.so*:error=ENOENT", "NVIDIA_DRIVER_CAPABILITIES=utility",
	  "measured on the device machine (H100, 580.159.04) on 2026-12-05: probe dlopen fails; torch 'Found no NVIDIA driver on your system'" },
	{ "uvm-not-in-container", "the container has no /dev/nvidia-uvm while the host's nvidia_uvm is loaded (CDI spec generated before it)", "G1, B.12",
	  "open:path=/dev/nvidia-uvm:error=ENOENT", "NVIDIA_VISIBLE_DEVICES=all",
	  "measured on the device machine (H100, 580.159.04) on 2026-12-05: cuInit 999; torch 'CUDA unknown error ... CUDA_VISIBLE_DEVICES'" },
	{ "sandbox-rejected", "a sandbox's ioctl filter rejects an RM control (GPU_ATTACH_IDS) with EINVAL (gVisor nvproxy)", "G5",
	  "ioctl:cmd=0x215:error=EINVAL", NULL, "measured on the device machine (H100, 580.159.04) on 2026-12-05: the probe is unaffected (libcuda 580 "
	  "sends no GPU_ATTACH_IDS at cuInit; the rig's libcuda gives 100, as google/gvisor#9846 reports); under torch "
	  "NVML sends it and nvmlInit gets 9, CUDA works" },
	/* issue 19 group 4: an unlicensed vGPU (catalog G6) */
	{ "vgpu-unlicensed", "a vGPU guest without a license: context creation gives 46 while the compute mode is Default", "G6, B.10",
	  "ioctl:cmd=0x800289:value=2;cuDevicePrimaryCtxRetain:retval=CUDA_ERROR_DEVICE_UNAVAILABLE;"
	  "cuCtxCreate:retval=CUDA_ERROR_DEVICE_UNAVAILABLE",
	  NULL,
	  "RM's GET_VIRTUALIZATION_MODE answer becomes 2 (VGX, a vGPU guest) and context creation 46, what "
	  "unlicensed vGPUs give (Azure/AKS#4870, DDMAL/Rodan#1332); measured on the device machine (H100, 580.159.04) on 2026-12-05: the real libcuda, told VGX on a "
	  "passed-through GPU, allocates KEPLER_DEVICE_VGPU (0xa080), RM answers NV_ERR_NOT_SUPPORTED (not a virtual GPU) and cuInit is 100 (torch 'No "
	  "CUDA GPUs are available'): the 46 is not reached there" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};
/* clang-format on */

const struct ct_scenario *ct_scenario_find(const char *name)
{
	for (const struct ct_scenario *s = ct_scenarios; s->name; s++)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

/* the toolkit's stub libcuda, for stub-library */
static int find_stub(char *out, size_t len)
{
	const char *roots[] = { getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda", NULL };
	const char *subs[] = { "lib64/stubs/libcuda.so", "targets/x86_64-linux/lib/stubs/libcuda.so",
			       "targets/sbsa-linux/lib/stubs/libcuda.so", "lib/stubs/libcuda.so", NULL };

	for (int i = 0; i < 3; i++) {
		if (!roots[i] || !*roots[i])
			continue;
		for (int k = 0; subs[k]; k++) {
			snprintf(out, len, "%s/%s", roots[i], subs[k]);
			if (access(out, R_OK) == 0)
				return 0;
		}
	}
	return -1;
}

int ct_scenario_rules(const char *name, struct ct_run_opts *o)
{
	const struct ct_scenario *s = ct_scenario_find(name);
	static char stubdir[PATH_MAX], stubenv[PATH_MAX + 32], scenenv[96];

	if (!s) {
		ct_err("unknown scenario '%s' (see 'cutrace scenarios')", name);
		return -1;
	}
	if (o->nenv + 2 > (int)(sizeof o->env / sizeof o->env[0])) {
		ct_err("too many environment changes with scenario '%s'", name);
		return -1;
	}
	/* the name goes into the trace (the shim keeps CUTRACE_* variables in
	 * the trace's context): a failure made by a scenario that changes the
	 * environment instead of injecting is still known as made */
	snprintf(scenenv, sizeof scenenv, "CUTRACE_SCENARIO=%s", s->name);
	o->env[o->nenv++] = scenenv;
	if (s->rules) {
		size_t used = strlen(o->inject), n = strlen(s->rules);
		if (used + n + 2 >= 4096) {
			ct_err("too many rules with scenario '%s'", name);
			return -1;
		}
		if (used)
			o->inject[used++] = ';';
		memcpy(o->inject + used, s->rules, n + 1);
	}
	if (s->env && !strcmp(s->env, "@stub")) {
		char stub[PATH_MAX], link[PATH_MAX + 32];
		if (find_stub(stub, sizeof stub) < 0) {
			ct_err("scenario stub-library needs the CUDA toolkit's stubs/libcuda.so (set CUDA_HOME)");
			return -1;
		}
		/* a directory holding libcuda.so.1 -> the stub, first on the search
		 * path: what a stubs directory on LD_LIBRARY_PATH does (B.3) */
		snprintf(stubdir, sizeof stubdir, "%s/.stub-libcuda", o->dir);
		if (mkdir(stubdir, 0700) < 0 && errno != EEXIST) {
			ct_err("cannot create %s: %s", stubdir, strerror(errno));
			return -1;
		}
		snprintf(link, sizeof link, "%s/libcuda.so.1", stubdir);
		unlink(link);
		if (symlink(stub, link) < 0) {
			ct_err("cannot create %s: %s", link, strerror(errno));
			return -1;
		}
		snprintf(stubenv, sizeof stubenv, "LD_LIBRARY_PATH+=%s", stubdir);
		o->env[o->nenv++] = stubenv;
	} else if (s->env) {
		o->env[o->nenv++] = s->env;
	}
	return 0;
}
