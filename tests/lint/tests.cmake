# Static analysis of shim/ and tracer/: cppcheck and clang-tidy, with the
# configuration in the repository (.clang-tidy at the top, and
# tests/lint/cppcheck-suppressions.txt).  Both skip (77) when the tool is
# missing.  CUTRACE_LINT_FULL=1 in the environment runs clang-tidy's
# analyzer on every file (slow); see RELIABILITY.md.
include(${CUTRACE_TEST_DIR}/../common/xlat/xlat.cmake)
if(CUTRACE_ASAN_SUBBUILD)
  return()
endif()
add_test(NAME lint_cppcheck COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cppcheck.sh ${CMAKE_SOURCE_DIR} ${CUTRACE_GEN_DIR})
add_test(NAME lint_clang_tidy COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/clang-tidy.sh ${CMAKE_SOURCE_DIR} ${CUTRACE_GEN_DIR})
set_tests_properties(lint_cppcheck lint_clang_tidy PROPERTIES LABELS lint SKIP_RETURN_CODE 77 TIMEOUT 600)
