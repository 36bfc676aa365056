# Name tables: common/xlat/*.in (+ cuda.h, driver_types.h, <errno.h>) -> C
# under ${CUTRACE_GEN_DIR}, generated at build time by common/xlat/gen_xlat.py.
#
# Sets:
#   CUTRACE_GEN_DIR       include directory of the generated headers
#                         (cutrace_gen/xlat_data.h, cutrace_gen/shim_tables.h,
#                         cutrace_gen/codes.h)
#   CUTRACE_XLAT_SOURCES  generated .c files (compiled into the decode room)
#   CUTRACE_XLAT_DEPENDS  custom target that produces all of them
#
# Safe to include from several directories (e.g. the top level, so that
# shim/ sees the variables, and tracer/): the rule is defined once, and each
# other including directory marks the outputs GENERATED so its targets may use
# them.  Included from a subdirectory, it also exports the variables to the
# parent scope (tests/ is a sibling of tracer/).
set(CUTRACE_GEN_DIR ${CMAKE_BINARY_DIR}/gen)
set(CUTRACE_XLAT_SOURCES ${CUTRACE_GEN_DIR}/xlat_tables.c)
set(CUTRACE_XLAT_DEPENDS cutrace_xlat_gen)
set(_ct_xlat_outputs ${CUTRACE_XLAT_SOURCES}
  ${CUTRACE_GEN_DIR}/cutrace_gen/xlat_data.h
  ${CUTRACE_GEN_DIR}/cutrace_gen/shim_tables.h
  ${CUTRACE_GEN_DIR}/cutrace_gen/codes.h)

get_property(_ct_xlat_defined GLOBAL PROPERTY CUTRACE_XLAT_DEFINED)
if(NOT _ct_xlat_defined)
  set_property(GLOBAL PROPERTY CUTRACE_XLAT_DEFINED TRUE)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  file(MAKE_DIRECTORY ${CUTRACE_GEN_DIR}/cutrace_gen)
  file(GLOB _ct_xlat_in CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.in)
  get_filename_component(_ct_xlat_gen ${CMAKE_CURRENT_LIST_DIR}/gen_xlat.py ABSOLUTE)
  add_custom_command(OUTPUT ${_ct_xlat_outputs}
    COMMAND ${Python3_EXECUTABLE} ${_ct_xlat_gen}
      --in-dir ${CMAKE_CURRENT_LIST_DIR}
      --out-dir ${CUTRACE_GEN_DIR}
      --cuda-include ${CUTRACE_CUDA_INCLUDE_DIR}
      --cc ${CMAKE_C_COMPILER}
    DEPENDS ${_ct_xlat_in} ${_ct_xlat_gen}
      ${CUTRACE_CUDA_INCLUDE_DIR}/cuda.h ${CUTRACE_CUDA_INCLUDE_DIR}/driver_types.h
    COMMENT "Generating cutrace name tables (common/xlat/*.in, cuda.h, errno.h)"
    VERBATIM)
  add_custom_target(cutrace_xlat_gen DEPENDS ${_ct_xlat_outputs})
else()
  set_source_files_properties(${_ct_xlat_outputs} PROPERTIES GENERATED TRUE)
endif()

if(NOT CMAKE_CURRENT_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR)
  set(CUTRACE_GEN_DIR ${CUTRACE_GEN_DIR} PARENT_SCOPE)
  set(CUTRACE_XLAT_SOURCES ${CUTRACE_XLAT_SOURCES} PARENT_SCOPE)
  set(CUTRACE_XLAT_DEPENDS ${CUTRACE_XLAT_DEPENDS} PARENT_SCOPE)
endif()
