# Rig self-tests: every program against the doubles WITHOUT the shim, each
# fault produced by a fake-kernel knob.  The expected codes are the measured
# real-driver results (tracer/decode/ABI.md Appendix C); where a code comes from the real
# libcudart the test says so.

# cutrace_rig_test(NAME [STATUS n] [QUIET] [EXPECT line...] [ABSENT line...]
#                  [ENV VAR=VALUE...] COMMAND cmd args...)
function(cutrace_rig_test name)
  cmake_parse_arguments(T "QUIET" "STATUS" "EXPECT;ABSENT;ENV;COMMAND" ${ARGN})
  set(args)
  if(NOT "${T_STATUS}" STREQUAL "")
    list(APPEND args -x ${T_STATUS})
  endif()
  if(T_QUIET)
    list(APPEND args -s)
  endif()
  foreach(l IN LISTS T_EXPECT)
    list(APPEND args -e "${l}")
  endforeach()
  foreach(l IN LISTS T_ABSENT)
    list(APPEND args -n "${l}")
  endforeach()
  add_test(NAME rig.${name} COMMAND bash ${CUTRACE_RIG_EXPECT} ${args} ${T_ENV} -- ${T_COMMAND})
  set_tests_properties(rig.${name} PROPERTIES TIMEOUT 60 LABELS rig)
endfunction()

set(_env ${CUTRACE_RIG_ENV})
set(_fakenv "LD_PRELOAD=${CUTRACE_FAKENV_LIB}")
set(_probe $<TARGET_FILE:cutrace-probe>)

# ---- the fake kernel itself -------------------------------------------------
cutrace_rig_test(fakenv.basic STATUS 0 QUIET ENV ${_fakenv}
  COMMAND $<TARGET_FILE:cutrace_fakenv_selftest> basic)
cutrace_rig_test(fakenv.knobs STATUS 0 ENV ${_fakenv} FAKENV_GPUS=2
  FAKENV_ESC_ERRNO=0xd6=EPERM:1 FAKENV_RM_CONTROL_STATUS=0x215=0x1b FAKENV_UVM_STATUS=37=0x1a
  FAKENV_DENY=/dev/nvidia-uvm-tools=EACCES "FAKENV_MISSING=/dev/nvidia-caps/*"
  FAKENV_GPU_OPEN_ERRNO=EIO FAKENV_RM_ALLOC_STATUS=0xa06c=0x17 FAKENV_UVM_ERRNO=39=EIO
  COMMAND $<TARGET_FILE:cutrace_fakenv_selftest> knobs)
cutrace_rig_test(fakenv.hang STATUS 0 ENV ${_fakenv} FAKENV_HANG_CMD=0xd6 FAKENV_HANG_SEC=1
  COMMAND $<TARGET_FILE:cutrace_fakenv_selftest> hang)

# ---- (b) the bare probe: dlopen + dlsym ---------------------------------------
cutrace_rig_test(probe.healthy STATUS 0 QUIET ENV ${_env} COMMAND ${_probe}
  EXPECT "libcuda: ${CUTRACE_FAKECUDA_DIR}/libcuda.so.1" "cuInit(0) = 0 (CUDA_SUCCESS)"
         "cuDriverGetVersion() = 0 (CUDA_SUCCESS), version 13000"
         "cuDeviceGetCount() = 0 (CUDA_SUCCESS), count 1" "device 0: NVIDIA H200")
cutrace_rig_test(probe.ctx_nvml STATUS 0 QUIET ENV ${_env} COMMAND ${_probe} --ctx --nvml
  EXPECT "cuDevicePrimaryCtxRetain(device 0) = 0 (CUDA_SUCCESS)" "nvmlInit_v2() = 0 (Success)"
         "nvmlShutdown() = 0")
cutrace_rig_test(probe.two_gpus STATUS 0 ENV ${_env} FAKENV_GPUS=2 COMMAND ${_probe} -n 2
  EXPECT "cuDeviceGetCount() = 0 (CUDA_SUCCESS), count 2" "device 1: NVIDIA H200")
cutrace_rig_test(probe.uvm_missing STATUS 1 ENV ${_env} FAKENV_MISSING=/dev/nvidia-uvm
  COMMAND ${_probe} --nvml
  EXPECT "cuInit(0) = 999 (CUDA_ERROR_UNKNOWN)" "nvmlInit_v2() = 0 (Success)")
cutrace_rig_test(probe.ctl_eperm STATUS 1 ENV ${_env} FAKENV_DENY=/dev/nvidiactl=EPERM
  COMMAND ${_probe} --nvml
  EXPECT "cuInit(0) = 100 (CUDA_ERROR_NO_DEVICE)" "nvmlInit_v2() = 999 (Unknown Error)")
cutrace_rig_test(probe.ctl_eacces STATUS 1 ENV ${_env} FAKENV_DENY=/dev/nvidiactl=EACCES
  COMMAND ${_probe} --nvml
  EXPECT "cuInit(0) = 100 (CUDA_ERROR_NO_DEVICE)" "nvmlInit_v2() = 999 (Unknown Error)")
cutrace_rig_test(probe.ctl_enoent STATUS 1 ENV ${_env} FAKENV_MISSING=/dev/nvidiactl
  COMMAND ${_probe} --nvml
  EXPECT "cuInit(0) = 100 (CUDA_ERROR_NO_DEVICE)" "nvmlInit_v2() = 17 (Operating System Error)")
# a kernel module of a newer branch than libcuda (580.159.04): 803, as the
# real libcuda answers it on the H200 (tests/fixtures/h200-580/README.md)
cutrace_rig_test(probe.kernel_mismatch STATUS 1 ENV ${_env} FAKENV_KERNEL_VERSION=590.48.01
  COMMAND ${_probe} --nvml
  EXPECT "cuInit(0) = 803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)"
         "nvmlInit_v2() = 18 (Driver/library version mismatch)")
# an older branch: the real libcuda answers 101 (fixture i07)
cutrace_rig_test(probe.kernel_older_branch STATUS 1 ENV ${_env} FAKENV_KERNEL_VERSION=575.51.02
  COMMAND ${_probe} --nvml
  EXPECT "cuInit(0) = 101 (CUDA_ERROR_INVALID_DEVICE)"
         "nvmlInit_v2() = 18 (Driver/library version mismatch)")
# the same branch, an older minor or a newer patch: accepted (measured)
cutrace_rig_test(probe.kernel_same_branch STATUS 0 ENV ${_env} FAKENV_KERNEL_VERSION=580.95.05
  COMMAND ${_probe} EXPECT "cuInit(0) = 0 (CUDA_SUCCESS)")
# Only libcuda is stale: CUDA fails while NVML is fine (failure catalog B.1, SCENARIOS.md).
cutrace_rig_test(probe.libcuda_stale STATUS 1 ENV ${_env} FAKECUDA_VERSION=580.65.06
  COMMAND ${_probe} --nvml
  EXPECT "cuInit(0) = 803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)" "nvmlInit_v2() = 0 (Success)")
cutrace_rig_test(probe.cvd_empty STATUS 1 ENV ${_env} CUDA_VISIBLE_DEVICES= COMMAND ${_probe}
  EXPECT "cuInit(0) = 100 (CUDA_ERROR_NO_DEVICE)")
cutrace_rig_test(probe.cvd_absent STATUS 1 ENV ${_env} CUDA_VISIBLE_DEVICES=7 COMMAND ${_probe}
  EXPECT "cuInit(0) = 100 (CUDA_ERROR_NO_DEVICE)")
cutrace_rig_test(probe.cvd_uuid STATUS 0 ENV ${_env} CUDA_VISIBLE_DEVICES=GPU-5a1ec0de COMMAND ${_probe}
  EXPECT "cuDeviceGetCount() = 0 (CUDA_SUCCESS), count 1")
cutrace_rig_test(probe.cvd_full_uuid STATUS 0 ENV ${_env} FAKENV_GPUS=2
  CUDA_VISIBLE_DEVICES=GPU-5a1ec0de-0fa7-4e11-9c2d-63705841b201 COMMAND ${_probe}
  EXPECT "cuDeviceGetCount() = 0 (CUDA_SUCCESS), count 1")
cutrace_rig_test(probe.cvd_ambiguous_uuid STATUS 1 ENV ${_env} FAKENV_GPUS=2
  CUDA_VISIBLE_DEVICES=GPU-5a1ec0de COMMAND ${_probe} EXPECT "cuInit(0) = 100 (CUDA_ERROR_NO_DEVICE)")
cutrace_rig_test(probe.cvd_list STATUS 0 ENV ${_env} FAKENV_GPUS=2 CUDA_VISIBLE_DEVICES=1,5,0
  COMMAND ${_probe} EXPECT "cuDeviceGetCount() = 0 (CUDA_SUCCESS), count 1")
cutrace_rig_test(probe.gpu_eperm STATUS 1 ENV ${_env} FAKENV_GPU_OPEN_ERRNO=EPERM COMMAND ${_probe}
  EXPECT "cuInit(0) = 100 (CUDA_ERROR_NO_DEVICE)")
cutrace_rig_test(probe.sys_params_eperm STATUS 0 ENV ${_env} FAKENV_ESC_ERRNO=0xd6=EPERM
  COMMAND ${_probe} EXPECT "cuInit(0) = 0 (CUDA_SUCCESS)")
cutrace_rig_test(probe.card_info_eio STATUS 1 ENV ${_env} FAKENV_ESC_ERRNO=0xc8=EIO
  COMMAND ${_probe} --nvml
  EXPECT "cuInit(0) = 100 (CUDA_ERROR_NO_DEVICE)" "nvmlInit_v2() = 17 (Operating System Error)")
cutrace_rig_test(probe.first_alloc_einval STATUS 0 ENV ${_env} FAKENV_ESC_ERRNO=0x2b=EINVAL:1
  COMMAND ${_probe} EXPECT "cuInit(0) = 0 (CUDA_SUCCESS)")
cutrace_rig_test(probe.uvm_init_eperm STATUS 1 ENV ${_env} FAKENV_UVM_ERRNO=0x30000001=EPERM
  COMMAND ${_probe} EXPECT "cuInit(0) = 999 (CUDA_ERROR_UNKNOWN)")
cutrace_rig_test(probe.uvm_register_gpu_eio STATUS 1 ENV ${_env} FAKENV_UVM_ERRNO=37=EIO
  COMMAND ${_probe} EXPECT "cuInit(0) = 3 (CUDA_ERROR_NOT_INITIALIZED)")
cutrace_rig_test(probe.no_valid_card STATUS 1 ENV ${_env} FAKENV_GPUS=0 COMMAND ${_probe} --nvml
  EXPECT "cuInit(0) = 100 (CUDA_ERROR_NO_DEVICE)" "nvmlInit_v2() = 0 (Success)")
cutrace_rig_test(probe.build_version_denied STATUS 1 ENV ${_env} FAKENV_RM_CONTROL_STATUS=0x101=0x1b
  COMMAND ${_probe} EXPECT "cuInit(0) = 100 (CUDA_ERROR_NO_DEVICE)")
cutrace_rig_test(probe.build_version_busy STATUS 0 ENV ${_env} FAKENV_RM_CONTROL_STATUS=0x101=0x3
  COMMAND ${_probe} EXPECT "cuInit(0) = 0 (CUDA_SUCCESS)")
cutrace_rig_test(probe.fabric_not_ready STATUS 1 ENV ${_env} FAKENV_FABRIC=not-ready COMMAND ${_probe}
  EXPECT "cuInit(0) = 802 (CUDA_ERROR_SYSTEM_NOT_READY)")
cutrace_rig_test(probe.exclusive_process STATUS 0 ENV ${_env} FAKENV_RM_ALLOC_STATUS=0xa06c=0x17
  COMMAND ${_probe} --ctx
  EXPECT "cuInit(0) = 0 (CUDA_SUCCESS)"
         "cuDevicePrimaryCtxRetain(device 0) = 46 (CUDA_ERROR_DEVICE_UNAVAILABLE)")
cutrace_rig_test(probe.compat STATUS 1 ENV ${_env} FAKECUDA_COMPAT=1 COMMAND ${_probe}
  EXPECT "cuInit(0) = 804 (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)")
cutrace_rig_test(probe.no_libcuda STATUS 3 ENV ${_fakenv} COMMAND ${_probe}
  ABSENT "cuInit(0) = 0 (CUDA_SUCCESS)")
if(CUTRACE_HAVE_STUBCUDA)
  cutrace_rig_test(probe.stub_libcuda STATUS 1 ENV "LD_LIBRARY_PATH=${CUTRACE_STUBCUDA_DIR}" ${_fakenv}
    COMMAND ${_probe} EXPECT "libcuda: ${CUTRACE_STUBCUDA_DIR}/libcuda.so.1" "cuInit(0) = 34 (?)")
endif()
cutrace_rig_test(probe.usage STATUS 2 COMMAND ${_probe} --bogus)

# ---- (a) linked with -lcuda ---------------------------------------------------
set(_linked $<TARGET_FILE:cutrace_probe_linked>)
cutrace_rig_test(linked.healthy STATUS 0 QUIET ENV ${_fakenv} COMMAND ${_linked} --mem
  EXPECT "cuInit=0" "cuDriverGetVersion=0 version=13000" "cuDeviceGetCount=0 count=1"
         "cuDeviceGet=0 device=0" "cuDeviceGetName=0 name=NVIDIA H200" "cuDevicePrimaryCtxRetain=0"
         "cuCtxSetCurrent=0" "cuMemAlloc=0" "cuMemFree=0" "cuDevicePrimaryCtxRelease=0")
cutrace_rig_test(linked.bad_ordinal STATUS 0 ENV ${_fakenv} COMMAND ${_linked} --dev 5
  EXPECT "cuDeviceGet=101 device=-1")
cutrace_rig_test(linked.cached_failure STATUS 1 ENV ${_fakenv} FAKENV_MISSING=/dev/nvidia-uvm
  COMMAND ${_linked} --twice EXPECT "cuInit=999" "cuDeviceGetCount=3 count=0" ABSENT "cuInit=0")
cutrace_rig_test(linked.no_init STATUS 0 ENV ${_fakenv} COMMAND ${_linked} --no-init
  EXPECT "cuDriverGetVersion=0 version=13000" "cuDeviceGetCount=3 count=0" "cuDeviceGet=3 device=-1")
cutrace_rig_test(linked.driver_version STATUS 0 ENV ${_fakenv} FAKECUDA_DRIVER_VERSION=12040
  COMMAND ${_linked} EXPECT "cuDriverGetVersion=0 version=12040")

# ---- (c)/(d) the real CUDA runtime ---------------------------------------------
# The real libcudart also needs NVIDIA-private driver interfaces
# (cuGetExportTable), including a handshake that authenticates the driver;
# the fake offers none of them, so on a healthy rig cudart stops at
# cudaGetDeviceCount with 500 (the driver's CUDA_ERROR_NOT_FOUND passed on).
# Every failure that happens in cuInit or in the version check still
# reaches the program exactly as cudart reports it.
foreach(kind shared static)
  if(kind STREQUAL "shared" AND NOT CUTRACE_HAVE_CUDART)
    continue()
  endif()
  if(kind STREQUAL "static" AND NOT CUTRACE_HAVE_CUDART_STATIC)
    continue()
  endif()
  set(_rt $<TARGET_FILE:cutrace_rt_${kind}>)
  cutrace_rig_test(rt_${kind}.healthy STATUS 1 QUIET ENV ${_env} COMMAND ${_rt}
    EXPECT "cudaRuntimeGetVersion=0 version=13000" "cudaDriverGetVersion=0 version=13000"
           "cudaGetDeviceCount=500 count=0")
  cutrace_rig_test(rt_${kind}.uvm_missing STATUS 1 ENV ${_env} FAKENV_MISSING=/dev/nvidia-uvm
    COMMAND ${_rt} EXPECT "cudaGetDeviceCount=999 count=0" "cudaSetDevice=999")
  cutrace_rig_test(rt_${kind}.ctl_eperm STATUS 1 ENV ${_env} FAKENV_DENY=/dev/nvidiactl=EPERM
    COMMAND ${_rt} EXPECT "cudaGetDeviceCount=100 count=0")
  cutrace_rig_test(rt_${kind}.kernel_mismatch STATUS 1 ENV ${_env} FAKENV_KERNEL_VERSION=590.48.01
    COMMAND ${_rt} EXPECT "cudaGetDeviceCount=803 count=0")
  cutrace_rig_test(rt_${kind}.cvd_empty STATUS 1 ENV ${_env} CUDA_VISIBLE_DEVICES=
    COMMAND ${_rt} EXPECT "cudaGetDeviceCount=100 count=0")
  cutrace_rig_test(rt_${kind}.uvm_register_gpu_eio STATUS 1 ENV ${_env} FAKENV_UVM_ERRNO=37=EIO
    COMMAND ${_rt} EXPECT "cudaGetDeviceCount=3 count=0")
  cutrace_rig_test(rt_${kind}.fabric_not_ready STATUS 1 ENV ${_env} FAKENV_FABRIC=not-ready
    COMMAND ${_rt} EXPECT "cudaGetDeviceCount=802 count=0")
  # 35 is the real cudart's decision (no minor-version compatibility across majors).
  cutrace_rig_test(rt_${kind}.old_driver STATUS 1 ENV ${_env} FAKECUDA_DRIVER_VERSION=12040
    COMMAND ${_rt} EXPECT "cudaDriverGetVersion=0 version=12040" "cudaGetDeviceCount=35 count=0")
  cutrace_rig_test(rt_${kind}.no_libcuda STATUS 1 ENV ${_fakenv} COMMAND ${_rt}
    EXPECT "cudaDriverGetVersion=0 version=0" "cudaGetDeviceCount=35 count=0")
  if(CUTRACE_HAVE_STUBCUDA)
    cutrace_rig_test(rt_${kind}.stub_libcuda STATUS 1 ENV "LD_LIBRARY_PATH=${CUTRACE_STUBCUDA_DIR}" ${_fakenv}
      COMMAND ${_rt} EXPECT "cudaGetDeviceCount=34 count=0")
  endif()
endforeach()

# ---- (e) python ctypes -----------------------------------------------------------
if(CUTRACE_PYTHON3)
  cutrace_rig_test(ctypes.healthy STATUS 0 QUIET ENV ${_env} COMMAND ${CUTRACE_PYTHON3} ${CUTRACE_CTYPES_PROBE}
    EXPECT "cuInit=0" "cuDriverGetVersion=0 version=13000" "cuDeviceGetCount=0 count=1")
  cutrace_rig_test(ctypes.ctl_eperm STATUS 1 ENV ${_env} FAKENV_DENY=/dev/nvidiactl=EPERM
    COMMAND ${CUTRACE_PYTHON3} ${CUTRACE_CTYPES_PROBE} EXPECT "cuInit=100" "cuDeviceGetCount=3 count=0")
  cutrace_rig_test(ctypes.no_libcuda STATUS 3 ENV ${_fakenv} COMMAND ${CUTRACE_PYTHON3} ${CUTRACE_CTYPES_PROBE})
endif()

# ---- (f) constructor order -------------------------------------------------------
cutrace_rig_test(ctor.healthy STATUS 0 QUIET ENV ${_env} COMMAND $<TARGET_FILE:cutrace_prog_ctor>
  EXPECT "snip_open=ok" "snip_SYS_PARAMS=0" "snip_cuInit=0" "main_snip=1" "main_libcuda_loaded=yes"
         "main_cuInit=0" "main_cuDeviceGetCount=0 count=1")
cutrace_rig_test(ctor.uvm_missing STATUS 1 ENV ${_env} FAKENV_MISSING=/dev/nvidia-uvm
  COMMAND $<TARGET_FILE:cutrace_prog_ctor> EXPECT "snip_cuInit=999" "main_cuInit=999")

# ---- (g) fork and exec -------------------------------------------------------------
cutrace_rig_test(fork.exec_probe STATUS 0 QUIET ENV ${_env}
  COMMAND $<TARGET_FILE:cutrace_fork_probe> --exec ${_probe} -n 1
  EXPECT "parent_cuInit=0" "child_open=ok" "child_SYS_PARAMS=0" "cuInit(0) = 0 (CUDA_SUCCESS)"
         "device 0: NVIDIA H200" "parent_child_status=0")
cutrace_rig_test(fork.no_exec STATUS 0 ENV ${_env} COMMAND $<TARGET_FILE:cutrace_fork_probe>
  EXPECT "parent_cuInit=0" "child_open=ok" "child_SYS_PARAMS=0" "parent_child_status=0")
