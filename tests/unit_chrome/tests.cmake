# cutrace show --format=chrome (tracer/out/show_chrome.c): synthetic traces and
# the real H200 fixtures through the CLI, the output checked by
# check_chrome.py (structure, nesting the viewers accept, marks, names).
add_executable(ct_mkchrome ${CMAKE_CURRENT_LIST_DIR}/mkchrome.c)
target_link_libraries(ct_mkchrome PRIVATE cutrace_test_synth)

find_program(CUTRACE_PYTHON3 python3)
if(CUTRACE_PYTHON3)
  add_test(NAME unit_chrome
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_chrome.sh $<TARGET_FILE:cutrace> $<TARGET_FILE:ct_mkchrome>
      ${CUTRACE_TEST_DIR}/fixtures/h200-580 $<IF:$<BOOL:${CUTRACE_SANITIZE}>,sanitized,plain>)
  # a hang guard, not a measurement (ASan on loaded cores is 10x slower)
  set_tests_properties(unit_chrome PROPERTIES TIMEOUT 600)
else()
  message(STATUS "unit_chrome: python3 not found, the chrome export test is skipped")
endif()
