# GPU-less test rig: the test doubles of the NVIDIA stack, the programs that
# reach the driver by every path, and their self-tests (no shim involved).
#
#   libfakenv.so        fake kernel module, preloaded (after the shim)
#   libcuda.so.1        fake user-mode driver     } in CUTRACE_FAKECUDA_DIR
#   libnvidia-ml.so.1   fake NVML                 }
#
# Exported for other tests/*/tests.cmake (all include()d into one scope):
#   CUTRACE_FAKENV_LIB     path of libfakenv.so
#   CUTRACE_FAKECUDA_DIR   directory holding the fake libcuda.so.1 (+ libcuda.so)
#   CUTRACE_FAKENVML_DIR   directory holding the fake libnvidia-ml.so.1 (same)
#   CUTRACE_STUBCUDA_DIR   directory whose libcuda.so.1 is the toolkit stub
#   CUTRACE_PROG_DIR       directory of the test programs
#   CUTRACE_RIG_EXPECT     tests/rig/expect.sh (output/exit-status checker)
#   CUTRACE_RIG_ENV        "LD_LIBRARY_PATH=<fakecuda>;LD_PRELOAD=<fakenv>"
#   CUTRACE_HAVE_CUDART / CUTRACE_HAVE_CUDART_STATIC / CUTRACE_PYTHON3
#   targets: cutrace_fakenv cutrace_fakecuda cutrace_fakenvml cutrace_fakenv_selftest
#            cutrace_probe_linked cutrace_rt_shared cutrace_rt_static
#            cutrace_snip cutrace_prog_ctor cutrace_fork_probe   (and cutrace-probe)
# A fragment that sorts before "rig" should start with
#   include(${CUTRACE_TEST_DIR}/rig/tests.cmake)
# which is a no-op when the rig is already set up.
include_guard(GLOBAL)

set(_rig_src ${CMAKE_CURRENT_LIST_DIR})
set(CUTRACE_RIG_DIR ${CUTRACE_TEST_BIN}/rig)
set(CUTRACE_FAKECUDA_DIR ${CUTRACE_RIG_DIR}/fakecuda)
set(CUTRACE_FAKENVML_DIR ${CUTRACE_FAKECUDA_DIR})
set(CUTRACE_FAKENV_LIB ${CUTRACE_RIG_DIR}/libfakenv.so)
set(CUTRACE_STUBCUDA_DIR ${CUTRACE_RIG_DIR}/stubcuda)
set(CUTRACE_RIG_EXPECT ${_rig_src}/expect.sh)
set(CUTRACE_RIG_ENV "LD_LIBRARY_PATH=${CUTRACE_FAKECUDA_DIR}" "LD_PRELOAD=${CUTRACE_FAKENV_LIB}")

# The doubles are never built with sanitizers: they are loaded into
# uninstrumented programs, and libfakenv is an LD_PRELOAD library.
add_library(cutrace_fakenv SHARED ${_rig_src}/fakenv.c)
set_target_properties(cutrace_fakenv PROPERTIES OUTPUT_NAME fakenv
  LIBRARY_OUTPUT_DIRECTORY ${CUTRACE_RIG_DIR} C_VISIBILITY_PRESET hidden)
target_link_libraries(cutrace_fakenv PRIVATE dl pthread)

# SOVERSION alone gives libcuda.so.1 (SONAME libcuda.so.1) plus the
# libcuda.so namelink, like a driver install.
add_library(cutrace_fakecuda SHARED ${_rig_src}/fakecuda.c)
set_target_properties(cutrace_fakecuda PROPERTIES OUTPUT_NAME cuda SOVERSION 1
  LIBRARY_OUTPUT_DIRECTORY ${CUTRACE_FAKECUDA_DIR} C_VISIBILITY_PRESET hidden)
target_link_libraries(cutrace_fakecuda PRIVATE pthread)

add_library(cutrace_fakenvml SHARED ${_rig_src}/fakenvml.c)
set_target_properties(cutrace_fakenvml PROPERTIES OUTPUT_NAME nvidia-ml SOVERSION 1
  LIBRARY_OUTPUT_DIRECTORY ${CUTRACE_FAKENVML_DIR} C_VISIBILITY_PRESET hidden)
target_link_libraries(cutrace_fakenvml PRIVATE pthread)

# a GPU-sharing interposer's stand-in (HAMi-core's libvgpu.so; catalog G5)
add_library(cutrace_fakevgpu SHARED ${_rig_src}/fakevgpu.c)
set_target_properties(cutrace_fakevgpu PROPERTIES OUTPUT_NAME vgpu
  LIBRARY_OUTPUT_DIRECTORY ${CUTRACE_RIG_DIR}/interposer C_VISIBILITY_PRESET hidden)
target_link_libraries(cutrace_fakevgpu PRIVATE dl)

# WSL2's side (catalog G3): uname, /dev/dxg and its ioctls
add_library(cutrace_fakewsl SHARED ${_rig_src}/fakewsl.c)
set_target_properties(cutrace_fakewsl PROPERTIES OUTPUT_NAME fakewsl
  LIBRARY_OUTPUT_DIRECTORY ${CUTRACE_RIG_DIR} C_VISIBILITY_PRESET hidden)
target_link_libraries(cutrace_fakewsl PRIVATE dl)

add_executable(cutrace_fakenv_selftest ${_rig_src}/fakenv_selftest.c)
set_target_properties(cutrace_fakenv_selftest PROPERTIES OUTPUT_NAME fakenv_selftest
  RUNTIME_OUTPUT_DIRECTORY ${CUTRACE_RIG_DIR})
target_link_libraries(cutrace_fakenv_selftest PRIVATE pthread)

# The toolkit's stub libcuda under the name programs load (failure catalog B.3, SCENARIOS.md).
file(MAKE_DIRECTORY ${CUTRACE_STUBCUDA_DIR})
if(EXISTS ${CUTRACE_CUDA_LIB_DIR}/stubs/libcuda.so)
  file(CREATE_LINK ${CUTRACE_CUDA_LIB_DIR}/stubs/libcuda.so ${CUTRACE_STUBCUDA_DIR}/libcuda.so.1 SYMBOLIC)
  set(CUTRACE_HAVE_STUBCUDA ON)
else()
  set(CUTRACE_HAVE_STUBCUDA OFF)
endif()

include(${CUTRACE_TEST_DIR}/programs/programs.cmake)
include(${_rig_src}/selftests.cmake)
