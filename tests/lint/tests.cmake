# Static analysis of shim/, common/ and tracer/: cppcheck and clang-tidy, with
# the configuration in the repository (.clang-tidy at the top, and
# tests/lint/cppcheck-suppressions.txt), and the format of changed lines
# (.clang-format, format.sh).  Each skips (77) when its tool is missing.
# CUTRACE_LINT_FULL=1 in the environment runs clang-tidy's analyzer on every
# file (slow); see RELIABILITY.md.
include(${CUTRACE_TEST_DIR}/../common/xlat/xlat.cmake)
if(CUTRACE_ASAN_SUBBUILD)
  return()
endif()
add_test(NAME lint_cppcheck COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cppcheck.sh ${CMAKE_SOURCE_DIR} ${CUTRACE_GEN_DIR})
add_test(NAME lint_clang_tidy COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/clang-tidy.sh ${CMAKE_SOURCE_DIR} ${CUTRACE_GEN_DIR})
set_tests_properties(lint_cppcheck lint_clang_tidy PROPERTIES LABELS lint SKIP_RETURN_CODE 77 TIMEOUT 1800)
# the lines of C the last commit (and the work tree) changed, against .clang-format
add_test(NAME lint_format COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/format.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(lint_format PROPERTIES LABELS lint SKIP_RETURN_CODE 77 TIMEOUT 120)
