# common/parse.c: the size and duration parsers the shim (CUTRACE_SIZE,
# delay=) and the CLI (--size, --timeout) share.
add_executable(test_parse ${CMAKE_CURRENT_LIST_DIR}/test_parse.c)
target_link_libraries(test_parse PRIVATE ct_common PkgConfig::CHECK)
add_test(NAME unit_common_parse COMMAND test_parse)
set_tests_properties(unit_common_parse PROPERTIES LABELS unit TIMEOUT 60)
