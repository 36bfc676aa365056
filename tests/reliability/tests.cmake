# Reliability and security of the shim and the tracer (RELIABILITY.md has the
# table of what each test tries and what held).
#
#   rel_*    the traced program is unharmed / the trace survives / security:
#            programs of this directory and the rig, through the real shim
#   asan     the ASan+UBSan sub-build: configures ${CMAKE_BINARY_DIR}/asan-build
#            with -DCUTRACE_SANITIZE=ON and runs its unit tests (^unit_)
#   valgrind the shim + rig programs under memcheck (the shim is never run
#            under ASan: it is preloaded into uninstrumented programs)
include(${CUTRACE_TEST_DIR}/rig/tests.cmake)
option(CUTRACE_ASAN_SUBBUILD "this tree is the sanitizer sub-build of the asan test" OFF)
option(CUTRACE_ASAN_TEST "add the asan test (a second, sanitized build tree)" ON)
if(CUTRACE_ASAN_SUBBUILD)
  return() # the sub-build runs unit tests only
endif()

# ---- the ASan+UBSan sub-build (label asan) ----------------------------------------
# One test configures ${CMAKE_BINARY_DIR}/asan-build with CUTRACE_SANITIZE=ON,
# builds it and runs its unit tests; it also builds fuzz_short's libFuzzer
# binary (with clang).  Not added in a tree that is itself sanitized.
if(CUTRACE_ASAN_TEST AND NOT CUTRACE_SANITIZE)
  add_test(NAME asan COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/asan.sh ${CMAKE_SOURCE_DIR}
    ${CMAKE_BINARY_DIR}/asan-build ${CMAKE_C_COMPILER})
  set_tests_properties(asan PROPERTIES LABELS asan TIMEOUT 1800)
endif()

set(_rel ${CMAKE_CURRENT_LIST_DIR})
set(CUTRACE_REL_BIN ${CUTRACE_TEST_BIN}/reliability)

function(cutrace_rel_program target)
  add_executable(${target} ${ARGN})
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CUTRACE_REL_BIN})
  target_include_directories(${target} PRIVATE ${_rel})
endfunction()

cutrace_rel_program(rel_busy ${_rel}/rel_busy.c)
target_link_libraries(rel_busy PRIVATE pthread)

foreach(p rel_mt rel_closefds rel_daemon rel_datafd rel_trunc rel_errno rel_dlcycle rel_seccomp rel_sig rel_fork rel_stale)
  cutrace_rel_program(${p} ${_rel}/${p}.c)
  target_link_libraries(${p} PRIVATE dl pthread)
endforeach()

cutrace_rel_program(rel_plant ${_rel}/rel_plant.c)
add_library(rel_fakedev SHARED ${_rel}/rel_fakedev.c)
set_target_properties(rel_fakedev PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CUTRACE_REL_BIN})
target_link_libraries(rel_fakedev PRIVATE dl)
add_library(rel_fakeclock SHARED ${_rel}/rel_fakeclock.c)
set_target_properties(rel_fakeclock PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CUTRACE_REL_BIN})
# linked with the shim: the loader ignores LD_PRELOAD paths in AT_SECURE processes
cutrace_rel_program(rel_secure ${_rel}/rel_secure.c)
target_link_libraries(rel_secure PRIVATE cutrace_shim dl)
set_target_properties(rel_secure PROPERTIES BUILD_RPATH $<TARGET_FILE_DIR:cutrace_shim>)

add_executable(rel_check ${_rel}/rel_check.c)
target_include_directories(rel_check PRIVATE ${_rel})
target_link_libraries(rel_check PRIVATE cutrace_core)

# healthy processes whose traces were cut by the ring or the pairing window
# must not be diagnosed as hung (synthetic traces through the real writer)
add_executable(rel_verdict ${_rel}/rel_verdict.c)
target_link_libraries(rel_verdict PRIVATE cutrace_test_synth cutrace_core)
foreach(c boundary window)
  add_test(NAME rel_verdict_${c} COMMAND sh -c "d=$(mktemp -d) && $<TARGET_FILE:rel_verdict> ${c} \"$d\"; rc=$?; rm -rf \"$d\"; exit $rc")
  set_tests_properties(rel_verdict_${c} PROPERTIES LABELS reliability TIMEOUT 60)
endforeach()

# a writer lapped by the ring (preempted between reserve and commit)
add_executable(rel_ring_lap ${_rel}/rel_ring_lap.c)
target_link_libraries(rel_ring_lap PRIVATE cutrace_core)
add_test(NAME rel_ring_lapped_writer COMMAND rel_ring_lap)
set_tests_properties(rel_ring_lapped_writer PROPERTIES LABELS reliability TIMEOUT 60)

find_program(CUTRACE_PYTHON3 python3)
set(_rel_env
  "SHIM=$<TARGET_FILE:cutrace_shim>"
  "FAKENV=${CUTRACE_FAKENV_LIB}"
  "FAKECUDA_DIR=${CUTRACE_FAKECUDA_DIR}"
  "STUBCUDA_DIR=${CUTRACE_STUBCUDA_DIR}"
  "CUTRACE=$<TARGET_FILE:cutrace>"
  "REL_BIN=${CUTRACE_REL_BIN}"
  "REL_CHECK=$<TARGET_FILE:rel_check>"
  "PROBE=$<TARGET_FILE:cutrace-probe>"
  "PROG_DIR=${CUTRACE_PROG_DIR}"
  "PYTHON3=${CUTRACE_PYTHON3}"
  "CTYPES_PROBE=${CUTRACE_CTYPES_PROBE}"
  "FAKECLOCK=$<TARGET_FILE:rel_fakeclock>"
  "FAKEDEV=$<TARGET_FILE:rel_fakedev>")

# cutrace_rel_test(NAME SCRIPT [ARGS...]): bash SCRIPT with the environment above
function(cutrace_rel_test name script)
  add_test(NAME rel_${name} COMMAND bash ${_rel}/${script} ${ARGN})
  set_tests_properties(rel_${name} PROPERTIES ENVIRONMENT "${_rel_env}" LABELS reliability
    SKIP_RETURN_CODE 77 TIMEOUT 900)
endfunction()

cutrace_rel_test(preserve preserve.sh)
cutrace_rel_test(hostile hostile.sh)
cutrace_rel_test(own_files ownfiles.sh)
cutrace_rel_test(truncate truncate.sh)
cutrace_rel_test(secrets secrets.sh)
cutrace_rel_test(dirs dirs.sh)
# CPython's regression tests with and without the shim (label long: about
# 4 minutes on 2 cores; skipped without libpython3.11-testsuite)
cutrace_rel_test(python_suite pysuite.sh)
set_tests_properties(rel_python_suite PROPERTIES LABELS "reliability;long" TIMEOUT 600)
cutrace_rel_test(security security.sh)
cutrace_rel_test(setuid secure.sh)
cutrace_rel_test(threads threads.sh)
cutrace_rel_test(crash crash.sh 6)
cutrace_rel_test(valgrind valgrind.sh)
set_tests_properties(rel_valgrind PROPERTIES LABELS "reliability;valgrind")
cutrace_rel_test(ring_wrap wrap.sh)
# runtime exports: each of 24 RTLD_LOCAL callers (8 threads) gets its own cudart
cutrace_rel_test(runtime_callers rtcallers.sh)
