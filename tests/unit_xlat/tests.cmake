# Name tables (tracer/decode/xlat.c + generated data) against tracer/decode/ABI.md, the
# CUDA headers and libc; and the shim's generated header on its own.
if(NOT CUTRACE_GEN_DIR)
  set(CUTRACE_GEN_DIR ${CMAKE_BINARY_DIR}/gen)
endif()

add_executable(test_xlat ${CMAKE_CURRENT_LIST_DIR}/test_xlat.c)
target_link_libraries(test_xlat PRIVATE cutrace_core PkgConfig::CHECK)
add_test(NAME unit_xlat COMMAND test_xlat)

# shim_tables.h with nothing but <stdint.h>: run (sortedness, exit status
# names the table) ...
add_executable(test_xlat_shim_tables ${CMAKE_CURRENT_LIST_DIR}/shim_tables_standalone.c)
target_include_directories(test_xlat_shim_tables PRIVATE ${CUTRACE_GEN_DIR})
target_compile_options(test_xlat_shim_tables PRIVATE -Werror)
if(TARGET cutrace_xlat_gen)
  add_dependencies(test_xlat_shim_tables cutrace_xlat_gen)
endif()
add_test(NAME unit_xlat_shim_tables_sorted COMMAND test_xlat_shim_tables)

# ... and compile it freestanding, without the libc headers on the path, so
# any dependency beyond the compiler's own <stdint.h> fails.
if(CMAKE_C_COMPILER_ID MATCHES "Clang")
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-resource-dir
    OUTPUT_VARIABLE _ct_cc_inc OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(_ct_cc_inc ${_ct_cc_inc}/include)
else()
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=include
    OUTPUT_VARIABLE _ct_cc_inc OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
if(EXISTS ${_ct_cc_inc}/stdint.h)
  add_test(NAME unit_xlat_shim_tables_freestanding
    COMMAND ${CMAKE_C_COMPILER} -std=c11 -ffreestanding -nostdinc -isystem ${_ct_cc_inc}
      -Wall -Wextra -Werror -fsyntax-only -I${CUTRACE_GEN_DIR}
      ${CMAKE_CURRENT_LIST_DIR}/shim_tables_standalone.c)
else()
  message(STATUS "unit_xlat: no compiler stdint.h in '${_ct_cc_inc}', freestanding check skipped")
endif()
