# tracer/base/ranges.c: numbers as ranges, host names as a hostlist.
add_executable(test_ranges ${CMAKE_CURRENT_LIST_DIR}/test_ranges.c)
target_link_libraries(test_ranges PRIVATE cutrace_core PkgConfig::CHECK)
add_test(NAME unit_ranges COMMAND test_ranges)
