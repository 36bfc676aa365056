# NVIDIA ioctl decoder (tracer/decode/nvdecode.c): synthetic events built like the
# shim records them, and golden tests over the real H200 traces
# (tests/fixtures/h200-580, unpacked in memory with gzip at test time).
add_executable(test_nvdecode ${CMAKE_CURRENT_LIST_DIR}/test_nvdecode.c)
target_include_directories(test_nvdecode PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(test_nvdecode PRIVATE cutrace_core PkgConfig::CHECK)
add_test(NAME unit_nvdecode COMMAND test_nvdecode)

find_program(CUTRACE_GZIP gzip)
if(CUTRACE_GZIP)
  add_executable(test_nvdecode_golden ${CMAKE_CURRENT_LIST_DIR}/test_nvdecode_golden.c)
  target_compile_definitions(test_nvdecode_golden PRIVATE
    FIXTURE_DIR="${CUTRACE_TEST_DIR}/fixtures/h200-580")
  target_link_libraries(test_nvdecode_golden PRIVATE cutrace_core PkgConfig::CHECK)
  add_test(NAME unit_nvdecode_golden COMMAND test_nvdecode_golden)
  set_tests_properties(unit_nvdecode_golden PROPERTIES TIMEOUT 300)
else()
  message(STATUS "unit_nvdecode: gzip not found, golden tests over the H200 fixtures skipped")
endif()
