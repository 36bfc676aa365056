# Test programs: one per path a program takes to the driver.  Included by
# tests/rig/tests.cmake after the doubles are defined.
set(_prog_src ${CMAKE_CURRENT_LIST_DIR})
set(CUTRACE_PROG_DIR ${CUTRACE_TEST_BIN}/programs)

function(cutrace_test_program target name)
  add_executable(${target} ${ARGN})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${name}
    RUNTIME_OUTPUT_DIRECTORY ${CUTRACE_PROG_DIR})
endfunction()

# (a) linked with -lcuda: DT_NEEDED libcuda.so.1, build RUNPATH to the fake.
cutrace_test_program(cutrace_probe_linked probe_linked ${_prog_src}/probe_linked.c)
target_link_libraries(cutrace_probe_linked PRIVATE cutrace_fakecuda)

# (c)/(d) the real CUDA runtime, shared and static.  It dlopen()s
# libcuda.so.1 itself, so the fake is found through LD_LIBRARY_PATH only.
set(CUTRACE_HAVE_CUDART OFF)
set(CUTRACE_HAVE_CUDART_STATIC OFF)
if(EXISTS ${CUTRACE_CUDA_LIB_DIR}/libcudart.so.13 AND EXISTS ${CUTRACE_CUDA_INCLUDE_DIR}/cuda_runtime_api.h)
  set(CUTRACE_HAVE_CUDART ON)
  cutrace_test_program(cutrace_rt_shared rt_shared ${_prog_src}/rt_probe.c)
  target_include_directories(cutrace_rt_shared PRIVATE ${CUTRACE_CUDA_INCLUDE_DIR})
  target_link_libraries(cutrace_rt_shared PRIVATE ${CUTRACE_CUDA_LIB_DIR}/libcudart.so.13)
  set_target_properties(cutrace_rt_shared PROPERTIES BUILD_RPATH ${CUTRACE_CUDA_LIB_DIR})
else()
  message(STATUS "cutrace: no libcudart.so.13 in ${CUTRACE_CUDA_LIB_DIR}: rt_shared tests skipped")
endif()
if(EXISTS ${CUTRACE_CUDA_LIB_DIR}/libcudart_static.a AND EXISTS ${CUTRACE_CUDA_INCLUDE_DIR}/cuda_runtime_api.h)
  set(CUTRACE_HAVE_CUDART_STATIC ON)
  cutrace_test_program(cutrace_rt_static rt_static ${_prog_src}/rt_probe.c)
  target_include_directories(cutrace_rt_static PRIVATE ${CUTRACE_CUDA_INCLUDE_DIR})
  target_link_libraries(cutrace_rt_static PRIVATE ${CUTRACE_CUDA_LIB_DIR}/libcudart_static.a dl pthread rt)
else()
  message(STATUS "cutrace: no libcudart_static.a in ${CUTRACE_CUDA_LIB_DIR}: rt_static tests skipped")
endif()

# (e) python ctypes.
find_program(CUTRACE_PYTHON3 python3)
set(CUTRACE_CTYPES_PROBE ${_prog_src}/ctypes_probe.py)

# (f) a library constructor that reaches the driver before any other constructor.
add_library(cutrace_snip SHARED ${_prog_src}/snip.c)
set_target_properties(cutrace_snip PROPERTIES OUTPUT_NAME snip
  LIBRARY_OUTPUT_DIRECTORY ${CUTRACE_PROG_DIR})
target_link_libraries(cutrace_snip PRIVATE dl)
cutrace_test_program(cutrace_prog_ctor prog_ctor ${_prog_src}/prog_ctor.c)
target_link_libraries(cutrace_prog_ctor PRIVATE cutrace_snip dl)

# (g) fork and exec.
cutrace_test_program(cutrace_fork_probe fork_probe ${_prog_src}/fork_probe.c)
target_link_libraries(cutrace_fork_probe PRIVATE dl)

# (h) every hooked entry point the path programs above do not reach (the
# eight opens, dlsym'd cuCtxCreate_v2, cuGetProcAddress_v2 with a status
# pointer, dlmopen, dlvsym): tests/integration/it_shim.py.
cutrace_test_program(cutrace_hook_calls hook_calls ${_prog_src}/hook_calls.c)
target_link_libraries(cutrace_hook_calls PRIVATE dl)

# (h2) the file-system calls a driver makes on NVIDIA paths before it opens
# a node, each next to a non-NVIDIA twin: tests/integration/it_shim.py.
cutrace_test_program(cutrace_fs_calls fs_calls ${_prog_src}/fs_calls.c)
target_link_libraries(cutrace_fs_calls PRIVATE dl)
# format 1.6: the driver's helper processes (shim/hooks_proc.c)
cutrace_test_program(cutrace_helper_run helper_run ${_prog_src}/helper_run.c)
target_link_libraries(cutrace_helper_run PRIVATE dl)

# (i) libslowopen.so: an LD_PRELOAD after the shim whose open of one path
# hangs (an open that never returns): tests/integration/it_shim.py.
add_library(cutrace_slowopen SHARED ${_prog_src}/slow_open.c)
set_target_properties(cutrace_slowopen PROPERTIES OUTPUT_NAME slowopen
  LIBRARY_OUTPUT_DIRECTORY ${CUTRACE_PROG_DIR} C_VISIBILITY_PRESET hidden)
target_link_libraries(cutrace_slowopen PRIVATE dl)

# (j) libinterposer.so: another dl* interposer (HAMi-core style) preloaded
# before and after the shim: tests/integration/it_interpose.py.
add_library(cutrace_interposer SHARED ${_prog_src}/interposer.c)
set_target_properties(cutrace_interposer PROPERTIES OUTPUT_NAME interposer
  LIBRARY_OUTPUT_DIRECTORY ${CUTRACE_PROG_DIR} C_VISIBILITY_PRESET hidden)
target_link_libraries(cutrace_interposer PRIVATE -Wl,--push-state,--no-as-needed -l:libdl.so.2 -Wl,--pop-state)
target_compile_options(cutrace_interposer PRIVATE -O2 -foptimize-sibling-calls)

# (k) glibc behaviours seen with and without the shim: it_fidelity.py.
cutrace_test_program(cutrace_fidelity fidelity ${_prog_src}/fidelity.c)
target_link_libraries(cutrace_fidelity PRIVATE dl)

# posix_spawn@GLIBC_2.2.5 (x86-64's compat version) keeps its behaviour: it_fidelity.py.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  cutrace_test_program(cutrace_spawn_old spawn_old ${_prog_src}/spawn_old.c)
endif()

# (l) which file a caller with its own DT_RUNPATH loads: it_fidelity.py.
cutrace_test_program(cutrace_dlwhich dlwhich ${_prog_src}/dlwhich.c)
target_link_libraries(cutrace_dlwhich PRIVATE dl)
target_link_options(cutrace_dlwhich PRIVATE -Wl,--enable-new-dtags)
set_target_properties(cutrace_dlwhich PROPERTIES BUILD_RPATH "\$ORIGIN/rp1;\$ORIGIN/rp2")
