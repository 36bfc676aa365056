# tracer/base/fmt.c: ct_snprintf must print exactly what snprintf prints.
add_executable(test_fmt ${CMAKE_CURRENT_LIST_DIR}/test_fmt.c)
target_link_libraries(test_fmt PRIVATE cutrace_core PkgConfig::CHECK)
add_test(NAME unit_fmt COMMAND test_fmt)
