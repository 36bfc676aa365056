# Integration tests: real programs under libcutrace.so on the GPU-less rig,
# checked through `cutrace show --json` (tests/integration/itest.py).  One
# ctest per test function; the list comes from `itest.py --list`.
include(${CUTRACE_TEST_DIR}/rig/tests.cmake)

add_executable(cutrace_when_threads ${CMAKE_CURRENT_LIST_DIR}/when_threads.c)
set_target_properties(cutrace_when_threads PROPERTIES OUTPUT_NAME when_threads
  RUNTIME_OUTPUT_DIRECTORY ${CUTRACE_PROG_DIR})
target_link_libraries(cutrace_when_threads PRIVATE dl pthread)

find_program(CUTRACE_PY3 python3 REQUIRED)
# the test list comes from itest.py and its it_*.py modules: re-list when they change
file(GLOB _it_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/itest.py ${CMAKE_CURRENT_LIST_DIR}/it_*.py)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_it_sources})
execute_process(COMMAND ${CUTRACE_PY3} ${CMAKE_CURRENT_LIST_DIR}/itest.py --list
  OUTPUT_VARIABLE _it_list OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _it_rc)
if(NOT _it_rc EQUAL 0)
  message(FATAL_ERROR "tests/integration/itest.py --list failed")
endif()
string(REPLACE "\n" ";" _it_list "${_it_list}")

set(_it_env
  "CUTRACE=$<TARGET_FILE:cutrace>"
  "CUTRACE_SHIM=$<TARGET_FILE:cutrace_shim>"
  "FAKENV=${CUTRACE_FAKENV_LIB}"
  "FAKECUDA_DIR=${CUTRACE_FAKECUDA_DIR}"
  "STUBCUDA_DIR=${CUTRACE_STUBCUDA_DIR}"
  "PROG_DIR=${CUTRACE_PROG_DIR}"
  "PROBE=$<TARGET_FILE:cutrace-probe>"
  "PYTHON3=${CUTRACE_PY3}"
  "CTYPES_PROBE=${CUTRACE_CTYPES_PROBE}"
  "WHEN_THREADS=$<TARGET_FILE:cutrace_when_threads>"
  "MKSYNTH=$<TARGET_FILE:ct_mksynth>"
  "CUDA_HOME_FOR_TESTS=${CUTRACE_CUDA_INCLUDE_DIR}/..")
foreach(t ${_it_list})
  add_test(NAME integration_${t} COMMAND ${CUTRACE_PY3} ${CMAKE_CURRENT_LIST_DIR}/itest.py ${t})
  set_tests_properties(integration_${t} PROPERTIES ENVIRONMENT "${_it_env}" LABELS integration TIMEOUT 120)
endforeach()
