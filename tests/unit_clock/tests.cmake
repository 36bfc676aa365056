# shim/clock.c: record timestamps read through the TSC stay CLOCK_MONOTONIC
# nanoseconds (within microseconds, never backwards in a thread).
add_executable(test_clock ${CMAKE_CURRENT_LIST_DIR}/test_clock.c ${PROJECT_SOURCE_DIR}/shim/clock.c)
target_include_directories(test_clock PRIVATE ${PROJECT_SOURCE_DIR}/shim ${PROJECT_SOURCE_DIR}/shim/include ${PROJECT_SOURCE_DIR}/common)
target_compile_definitions(test_clock PRIVATE _GNU_SOURCE)
target_compile_options(test_clock PRIVATE -O2)
target_link_libraries(test_clock PRIVATE PkgConfig::CHECK pthread)
add_test(NAME unit_clock COMMAND test_clock)
