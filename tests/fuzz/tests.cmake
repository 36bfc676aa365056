# The tracer trusts no input: a fuzzer over the whole read/decode/diagnose
# pipeline (fuzz_trace.c), its regression replay, and hostile files through
# the CLI.  See RELIABILITY.md ("Fuzzing") for the long-run command.
#
#   ct_crop, ct_mkbad       seed-corpus cropper and hostile-file generator
#   fuzz_replay             fuzz_trace.c + replay_main.c, any compiler
#   fuzz_trace              libFuzzer binary: only with clang (-fsanitize=fuzzer),
#                           built here when this tree is configured with clang,
#                           and always in the sanitizer sub-build when clang exists
#
# Tests:
#   unit_fuzz_replay   regressions/ + ct_mkbad files + cropped real traces through
#                      the fuzz target (runs under ASan in the sub-build: ^unit_)
#   fuzz_cli_hostile   each hostile file through `cutrace show` under ulimit -v
#   fuzz_short         20 s of libFuzzer (skips with 77 without a fuzzer binary)
option(CUTRACE_ASAN_SUBBUILD "this tree is the sanitizer sub-build of the asan test" OFF)
include(${CUTRACE_TEST_DIR}/../common/xlat/xlat.cmake)
set(_fz ${CMAKE_CURRENT_LIST_DIR})

add_executable(ct_crop ${_fz}/crop.c)
target_link_libraries(ct_crop PRIVATE cutrace_core)
add_executable(ct_mkbad ${_fz}/mkbad.c)
target_link_libraries(ct_mkbad PRIVATE cutrace_core)
add_executable(fuzz_replay ${_fz}/fuzz_trace.c ${_fz}/replay_main.c)
target_link_libraries(fuzz_replay PRIVATE cutrace_core)

# ---- the libFuzzer binary ---------------------------------------------------
set(CUTRACE_HAVE_LIBFUZZER OFF)
if(CMAKE_C_COMPILER_ID MATCHES "Clang")
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
  check_c_source_compiles("int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return d[0] + (int)n; }"
    CUTRACE_CC_HAS_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  if(CUTRACE_CC_HAS_LIBFUZZER)
    set(CUTRACE_HAVE_LIBFUZZER ON)
  endif()
endif()
if(CUTRACE_HAVE_LIBFUZZER)
  # A copy of the tracer's rooms (cutrace_core: tracer/CMakeLists.txt lists
  # their sources and directories) in one library, with coverage
  # instrumentation and ASan+UBSan, whatever CUTRACE_SANITIZE says (the
  # fuzzer needs both).
  get_property(_fz_src GLOBAL PROPERTY CUTRACE_CORE_SOURCES)
  get_property(_fz_inc GLOBAL PROPERTY CUTRACE_CORE_INCLUDES)
  set(_fz_def CUTRACE_VERSION="${PROJECT_VERSION}")
  set(_fz_san -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_library(cutrace_core_fuzz STATIC ${_fz_src})
  target_include_directories(cutrace_core_fuzz PUBLIC ${_fz_inc})
  target_compile_definitions(cutrace_core_fuzz PUBLIC ${_fz_def})
  target_compile_options(cutrace_core_fuzz PRIVATE -fsanitize=fuzzer-no-link ${_fz_san})
  # (imported targets are per directory: find libelf here too)
  pkg_check_modules(CUTRACE_FZ_LIBELF REQUIRED IMPORTED_TARGET libelf)
  get_property(_fz_libs GLOBAL PROPERTY CUTRACE_CORE_LIBS)
  target_link_libraries(cutrace_core_fuzz PUBLIC PkgConfig::CUTRACE_FZ_LIBELF ${_fz_libs} m)
  add_dependencies(cutrace_core_fuzz ${CUTRACE_XLAT_DEPENDS})
  add_executable(cutrace_fuzz_trace ${_fz}/fuzz_trace.c)
  set_target_properties(cutrace_fuzz_trace PROPERTIES OUTPUT_NAME fuzz_trace)
  target_compile_options(cutrace_fuzz_trace PRIVATE -fsanitize=fuzzer ${_fz_san})
  target_link_options(cutrace_fuzz_trace PRIVATE -fsanitize=fuzzer ${_fz_san})
  target_link_libraries(cutrace_fuzz_trace PRIVATE cutrace_core_fuzz)
endif()

set(CUTRACE_FIXTURE_DIR ${CUTRACE_TEST_DIR}/fixtures/h200-580)
set(CUTRACE_FUZZ_WORK ${CMAKE_BINARY_DIR}/fuzz)

add_test(NAME unit_fuzz_replay
  COMMAND bash ${_fz}/replay.sh $<TARGET_FILE:fuzz_replay> $<TARGET_FILE:ct_mkbad>
    $<TARGET_FILE:ct_crop> ${_fz}/regressions ${CUTRACE_FIXTURE_DIR} ${CUTRACE_FUZZ_WORK})
set_tests_properties(unit_fuzz_replay PROPERTIES TIMEOUT 300 LABELS "unit;fuzz")

if(CUTRACE_ASAN_SUBBUILD)
  return() # the sub-build only replays (above); the CLI and fuzzing run in the main tree
endif()

set(_fz_san_arg plain)
if(CUTRACE_SANITIZE)
  set(_fz_san_arg sanitized)
endif()
add_test(NAME fuzz_cli_hostile
  COMMAND bash ${_fz}/cli_hostile.sh $<TARGET_FILE:cutrace> $<TARGET_FILE:ct_mkbad> ${CUTRACE_FUZZ_WORK}
    ${_fz_san_arg})
set_tests_properties(fuzz_cli_hostile PROPERTIES TIMEOUT 600 LABELS "fuzz;reliability")

# fuzz_short: this tree's fuzzer when it has one, else the sanitizer
# sub-build's (the asan test of tests/reliability/tests.cmake builds it; it
# runs first when both are selected -- DEPENDS, so that a failing unit test
# there does not stop the fuzzing; alone, without the binary, this skips)
set(CUTRACE_FUZZ_SECONDS 20 CACHE STRING "seconds of libFuzzer in the fuzz_short test")
if(CUTRACE_HAVE_LIBFUZZER)
  set(_fz_bin $<TARGET_FILE:cutrace_fuzz_trace>)
else()
  set(_fz_bin ${CMAKE_BINARY_DIR}/asan-build/bin/fuzz_trace)
endif()
add_test(NAME fuzz_short
  COMMAND bash ${_fz}/fuzz.sh ${_fz_bin} $<TARGET_FILE:ct_crop> ${CUTRACE_FIXTURE_DIR}
    ${_fz}/regressions ${CUTRACE_FUZZ_WORK} ${CUTRACE_FUZZ_SECONDS})
set_tests_properties(fuzz_short PROPERTIES TIMEOUT 240 LABELS fuzz SKIP_RETURN_CODE 77)
if(NOT CUTRACE_HAVE_LIBFUZZER)
  set_tests_properties(fuzz_short PROPERTIES DEPENDS asan)
endif()
