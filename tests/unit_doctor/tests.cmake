# cutrace doctor: ELF inspection, the machine checks on fake trees, the
# compatibility table, and the command end to end on this machine.
set(CT_DOCTOR_DIR ${CMAKE_CURRENT_LIST_DIR})

# Stand-in driver libraries (inspected, never loaded): over the 2 MiB stub
# threshold, with the driver version string in .rodata.
add_library(ct_doctor_fake_cuda SHARED ${CT_DOCTOR_DIR}/fake_driver.c)
set_target_properties(ct_doctor_fake_cuda PROPERTIES OUTPUT_NAME ctdoctor_fake_cuda NO_SONAME ON
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/unit_doctor)
target_link_options(ct_doctor_fake_cuda PRIVATE -Wl,-soname,libcuda.so.1)
add_library(ct_doctor_fake_nvml SHARED ${CT_DOCTOR_DIR}/fake_driver.c)
set_target_properties(ct_doctor_fake_nvml PROPERTIES OUTPUT_NAME ctdoctor_fake_nvml NO_SONAME ON
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/unit_doctor)
target_compile_definitions(ct_doctor_fake_nvml PRIVATE CT_FAKE_NVML)
target_link_options(ct_doctor_fake_nvml PRIVATE -Wl,-soname,libnvidia-ml.so.1)

# a library preloaded between programs and the driver (catalog G5), and a plain one
add_library(ct_doctor_fake_interposer SHARED ${CT_DOCTOR_DIR}/fake_interposer.c)
set_target_properties(ct_doctor_fake_interposer PROPERTIES OUTPUT_NAME ctdoctor_fake_interposer
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/unit_doctor)
add_library(ct_doctor_fake_plain SHARED ${CT_DOCTOR_DIR}/fake_interposer.c)
set_target_properties(ct_doctor_fake_plain PROPERTIES OUTPUT_NAME ctdoctor_fake_plain
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/unit_doctor)
target_compile_definitions(ct_doctor_fake_plain PRIVATE CT_PLAIN)

set(_ct_doctor_defs
  CT_STUB_CUDA="${CUTRACE_CUDA_LIB_DIR}/stubs/libcuda.so"
  CT_CUDART="${CUTRACE_CUDA_LIB_DIR}/libcudart.so.13"
  CT_FAKE_CUDA="$<TARGET_FILE:ct_doctor_fake_cuda>"
  CT_FAKE_NVML="$<TARGET_FILE:ct_doctor_fake_nvml>"
  CT_FAKE_INTERPOSER="$<TARGET_FILE:ct_doctor_fake_interposer>"
  CT_FAKE_PLAIN="$<TARGET_FILE:ct_doctor_fake_plain>")

add_executable(test_doctor ${CT_DOCTOR_DIR}/test_doctor.c)
target_link_libraries(test_doctor PRIVATE cutrace_core PkgConfig::CHECK)
target_include_directories(test_doctor PRIVATE ${CT_DOCTOR_DIR})
target_compile_definitions(test_doctor PRIVATE ${_ct_doctor_defs})
add_dependencies(test_doctor ct_doctor_fake_cuda ct_doctor_fake_nvml)
add_test(NAME unit_doctor COMMAND test_doctor)

# the hardware checks: PCI devices, module file, Secure Boot, firmware, kernel log
add_executable(test_doctor_hw ${CT_DOCTOR_DIR}/test_doctor_hw.c)
target_link_libraries(test_doctor_hw PRIVATE cutrace_core PkgConfig::CHECK)
target_include_directories(test_doctor_hw PRIVATE ${CT_DOCTOR_DIR})
add_test(NAME unit_doctor_hw COMMAND test_doctor_hw)

# needs mknod (CAP_MKNOD): exits 77 without it
add_executable(test_doctor_dev ${CT_DOCTOR_DIR}/test_doctor_dev.c)
target_link_libraries(test_doctor_dev PRIVATE cutrace_core PkgConfig::CHECK)
target_include_directories(test_doctor_dev PRIVATE ${CT_DOCTOR_DIR})
add_test(NAME unit_doctor_devices COMMAND test_doctor_dev)
set_tests_properties(unit_doctor_devices PROPERTIES SKIP_RETURN_CODE 77)

add_test(NAME doctor_e2e COMMAND sh ${CT_DOCTOR_DIR}/doctor_e2e.sh $<TARGET_FILE:cutrace>)

# what the container runtime put here (machine_rt.c): CDI specs, drop-ins, musl
add_executable(test_doctor_rt ${CT_DOCTOR_DIR}/test_doctor_rt.c)
target_link_libraries(test_doctor_rt PRIVATE cutrace_core PkgConfig::CHECK)
target_include_directories(test_doctor_rt PRIVATE ${CT_DOCTOR_DIR})
target_compile_definitions(test_doctor_rt PRIVATE ${_ct_doctor_defs})
add_dependencies(test_doctor_rt ct_doctor_fake_cuda ct_doctor_fake_interposer ct_doctor_fake_plain)
add_test(NAME unit_doctor_runtime COMMAND test_doctor_rt)

# doctor --check's line and status, doctor --format=prometheus (health.c)
add_executable(test_health ${CT_DOCTOR_DIR}/test_health.c)
target_link_libraries(test_health PRIVATE cutrace_core PkgConfig::CHECK)
add_test(NAME unit_doctor_health COMMAND test_health)
