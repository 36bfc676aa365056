# NVIDIA's own user-space libraries as test oracles (Debian non-free: libcuda1
# and libnvidia-ml1 of the 535 branch, libcudart11.0 11.8), downloaded once
# into the build tree by tests/real/fetch.sh without touching the system's apt
# sources.  Tests that use them:
#   set_tests_properties(T PROPERTIES FIXTURES_REQUIRED real_nvidia SKIP_RETURN_CODE 77
#                        ENVIRONMENT "CUTRACE_REAL_DIR=${CUTRACE_REAL_DIR}")
# and start with `. tests/real/real.sh; real_require` (shell) or check
# $CUTRACE_REAL_DIR/STATUS themselves: "skip REASON" means exit 77 with REASON.
# A fragment that sorts before "real" includes this file first (a no-op when
# it was included already).
include_guard(GLOBAL)
set(CUTRACE_REAL_DIR ${CUTRACE_TEST_BIN}/real-nvidia CACHE INTERNAL "")
set(CUTRACE_REAL_SH ${CMAKE_CURRENT_LIST_DIR}/real.sh CACHE INTERNAL "")
add_test(NAME real_fetch COMMAND ${CMAKE_CURRENT_LIST_DIR}/fetch.sh ${CUTRACE_REAL_DIR})
set_tests_properties(real_fetch PROPERTIES FIXTURES_SETUP real_nvidia LABELS real TIMEOUT 900)

# verdicts with the real libraries as oracles (tests/real/verdicts.sh): the
# rig's targets by generator expression (tests/rig may be included later)
foreach(c no_module_root no_module_user nvml_alone cudart11_rig cudart11_stub static_cudart skew_ldpath
          skew_abspath)
  add_test(NAME real_verdict_${c}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/verdicts.sh ${c} $<TARGET_FILE:cutrace>
            $<TARGET_FILE:cutrace_fakenv> $<TARGET_FILE_DIR:cutrace_fakecuda>)
  set_tests_properties(real_verdict_${c} PROPERTIES FIXTURES_REQUIRED real_nvidia SKIP_RETURN_CODE 77
    LABELS real TIMEOUT 120 ENVIRONMENT "CUTRACE_REAL_DIR=${CUTRACE_REAL_DIR}"
    # real libcuda as root makes /dev/nvidiactl, which changes what the others see
    RESOURCE_LOCK dev_nvidia_nodes)
endforeach()

# no module, an NVIDIA device on the bus and its helpers (format 1.6): the
# real libcuda runs nvidia-modprobe as an ordinary user, "modprobe nvidia"
# as root; tests/real/fakepci.c puts the device on the bus and the helpers
# at their paths
add_library(cutrace_fakepci SHARED ${CMAKE_CURRENT_LIST_DIR}/fakepci.c)
target_link_libraries(cutrace_fakepci PRIVATE dl)
foreach(c no_module_helper no_module_modprobe)
  add_test(NAME real_verdict_${c}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/verdicts.sh ${c} $<TARGET_FILE:cutrace>
            $<TARGET_FILE:cutrace_fakenv> $<TARGET_FILE_DIR:cutrace_fakecuda>)
  set_tests_properties(real_verdict_${c} PROPERTIES FIXTURES_REQUIRED real_nvidia SKIP_RETURN_CODE 77
    LABELS real TIMEOUT 120 RESOURCE_LOCK dev_nvidia_nodes
    ENVIRONMENT "CUTRACE_REAL_DIR=${CUTRACE_REAL_DIR};FAKEPCI_LIB=$<TARGET_FILE:cutrace_fakepci>")
endforeach()

# two cudarts (13 and 11.8) in RTLD_LOCAL extensions: each caller keeps its own
add_test(NAME real_two_runtimes COMMAND ${CMAKE_CURRENT_LIST_DIR}/two_runtimes.sh $<TARGET_FILE:cutrace>)
set_tests_properties(real_two_runtimes PROPERTIES FIXTURES_REQUIRED real_nvidia SKIP_RETURN_CODE 77
  LABELS real TIMEOUT 120 ENVIRONMENT "CUTRACE_REAL_DIR=${CUTRACE_REAL_DIR}")
