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

# --- the Debian 11 root (glibc 2.31) and the battery run in it ---------------
# Built once per build tree by the fixture (debootstrap, about 2 minutes and
# 250 MB); tests that need it skip with the reason when it cannot be built.
#   set_tests_properties(T PROPERTIES FIXTURES_REQUIRED oldroot SKIP_RETURN_CODE 77
#                        ENVIRONMENT CUTRACE_OLDROOT_DIR=${CUTRACE_OLDROOT_DIR})
# and `. tests/portability/oldroot_lib.sh; oldroot_require`.
include(${CUTRACE_TEST_DIR}/rig/tests.cmake)
set(CUTRACE_OLDROOT_DIR ${CUTRACE_TEST_BIN}/oldroot CACHE INTERNAL "")
add_test(NAME portability_oldroot COMMAND ${CMAKE_CURRENT_LIST_DIR}/oldroot.sh ${CUTRACE_OLDROOT_DIR})
set_tests_properties(portability_oldroot PROPERTIES FIXTURES_SETUP oldroot
  LABELS "portability;oldroot" TIMEOUT 1200)

# The rig's fake kernel and libcuda, built to load on glibc 2.17+ like the
# shim (the rig's own copies bind dlsym/pthread_once to GLIBC_2.34).
set(_floor_dir ${CUTRACE_TEST_BIN}/portability/floor)
add_library(ct_floor_fakenv SHARED ${CUTRACE_TEST_DIR}/rig/fakenv.c)
add_library(ct_floor_fakecuda SHARED ${CUTRACE_TEST_DIR}/rig/fakecuda.c)
set_target_properties(ct_floor_fakenv PROPERTIES OUTPUT_NAME fakenv)
set_target_properties(ct_floor_fakecuda PROPERTIES OUTPUT_NAME cuda SOVERSION 1)
foreach(t ct_floor_fakenv ct_floor_fakecuda)
  set_target_properties(${t} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${_floor_dir} C_VISIBILITY_PRESET hidden)
  target_include_directories(${t} PRIVATE ${CUTRACE_TEST_DIR}/rig)
  target_compile_options(${t} PRIVATE -include ${CMAKE_SOURCE_DIR}/tracer/probe/floor.h)
  target_link_libraries(${t} PRIVATE
    -Wl,--push-state,--no-as-needed -l:libdl.so.2 -l:libpthread.so.0 -Wl,--pop-state)
endforeach()

add_test(NAME portability_oldroot_battery
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/battery.sh $<TARGET_FILE:cutrace> $<TARGET_FILE:cutrace_shim>
          $<TARGET_FILE:ct_floor_fakenv> ${_floor_dir})
set_tests_properties(portability_oldroot_battery PROPERTIES FIXTURES_REQUIRED oldroot
  LABELS "portability;oldroot" SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT CUTRACE_OLDROOT_DIR=${CUTRACE_OLDROOT_DIR})

# another dl* interposer (HAMi-core style) before and after the shim, in the
# root (issue 15); tests/programs/interposer.c loads on glibc 2.17+ as built
add_test(NAME portability_oldroot_interposer
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/interposer.sh $<TARGET_FILE:cutrace_shim>
          $<TARGET_FILE:cutrace_interposer> $<TARGET_FILE:ct_floor_fakenv> ${_floor_dir})
set_tests_properties(portability_oldroot_interposer PROPERTIES FIXTURES_REQUIRED oldroot
  LABELS "portability;oldroot" SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT CUTRACE_OLDROOT_DIR=${CUTRACE_OLDROOT_DIR})

# --- the one-file cutrace (tracer/CMakeLists.txt: build/onefile/cutrace) ------
if(CUTRACE_HAVE_ONEFILE)
  add_test(NAME portability_onefile
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/onefile.sh $<TARGET_FILE:cutrace_onefile>
            $<TARGET_FILE:cutrace_shim> ${CUTRACE_FAKENV_LIB} ${CUTRACE_FAKECUDA_DIR})
  add_test(NAME portability_onefile_oldroot
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/onefile_oldroot.sh $<TARGET_FILE:cutrace_onefile>
            $<TARGET_FILE:cutrace> $<TARGET_FILE:ct_floor_fakenv> ${_floor_dir})
else()
  foreach(t portability_onefile portability_onefile_oldroot)
    add_test(NAME ${t} COMMAND sh -c "echo \"SKIP: no one-file build: $1\"; exit 77" sh "${CUTRACE_ONEFILE_WHY}")
  endforeach()
endif()
set_tests_properties(portability_onefile PROPERTIES LABELS portability SKIP_RETURN_CODE 77)
set_tests_properties(portability_onefile_oldroot PROPERTIES FIXTURES_REQUIRED oldroot
  LABELS "portability;oldroot" SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT CUTRACE_OLDROOT_DIR=${CUTRACE_OLDROOT_DIR})

# --- configuring on a machine without Check ------------------------------------
add_test(NAME portability_no_check
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/no_check.sh ${CMAKE_SOURCE_DIR} ${CUTRACE_CUDA_INCLUDE_DIR})
set_tests_properties(portability_no_check PROPERTIES LABELS "portability;build"
  SKIP_RETURN_CODE 77 TIMEOUT 900)

# NVIDIA's real libcuda (535, the real_nvidia fixture) in the Debian 11 root
include(${CUTRACE_TEST_DIR}/real/tests.cmake)
add_test(NAME portability_oldroot_real
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/oldroot_real.sh $<TARGET_FILE:cutrace> $<TARGET_FILE:cutrace_shim>)
set_tests_properties(portability_oldroot_real PROPERTIES FIXTURES_REQUIRED "oldroot;real_nvidia" RESOURCE_LOCK dev_nvidia_nodes
  LABELS "portability;oldroot;real" SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "CUTRACE_OLDROOT_DIR=${CUTRACE_OLDROOT_DIR};CUTRACE_REAL_DIR=${CUTRACE_REAL_DIR}")
