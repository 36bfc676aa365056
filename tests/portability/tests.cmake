# Portability: the shim loads in every userland from glibc 2.17 up, and so
# does the probe that travels with it inside the one-file cutrace.
add_test(NAME portability_glibc_floor
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/glibc_floor.sh $<TARGET_FILE:cutrace_shim> 2.17)
set_tests_properties(portability_glibc_floor PROPERTIES LABELS portability SKIP_RETURN_CODE 77)
if(CUTRACE_PROBE_FLOOR)
  add_test(NAME portability_glibc_floor_probe
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/glibc_floor.sh $<TARGET_FILE:cutrace-probe> ${CUTRACE_PROBE_FLOOR})
  set_tests_properties(portability_glibc_floor_probe PROPERTIES LABELS portability SKIP_RETURN_CODE 77)
endif()
