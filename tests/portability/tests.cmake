# Portability: the shim loads in every userland from glibc 2.17 up.
add_test(NAME portability_glibc_floor
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/glibc_floor.sh $<TARGET_FILE:cutrace_shim> 2.17)
set_tests_properties(portability_glibc_floor PROPERTIES LABELS portability SKIP_RETURN_CODE 77)
