# The engines clusters already run (issue 20): a real Prometheus scraping
# node-exporter's textfile collector.  Label `cluster`; skipped (77) with
# one line when the Debian packages are not installed (scripts/setup.sh).
include(${CUTRACE_TEST_DIR}/rig/tests.cmake)
find_program(CUTRACE_PY3 python3 REQUIRED)
add_test(NAME cluster_prometheus COMMAND ${CUTRACE_PY3} ${CMAKE_CURRENT_LIST_DIR}/prom_real.py
  $<TARGET_FILE:cutrace> $<TARGET_FILE:ct_mksynth> ${CUTRACE_FAKENV_LIB} ${CUTRACE_FAKECUDA_DIR})
set_tests_properties(cluster_prometheus PROPERTIES LABELS cluster SKIP_RETURN_CODE 77 TIMEOUT 240)

# srun --cutrace against a real single-node Slurm (slurm_real.sh): skipped
# (77) with one line without the packages, root, or the SPANK plugin.
if(TARGET spank_cutrace)
  set(_spank $<TARGET_FILE:spank_cutrace>)
else()
  set(_spank ${CMAKE_BINARY_DIR}/lib/spank_cutrace.so-not-built)
endif()
add_test(NAME cluster_slurm COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/slurm_real.sh $<TARGET_FILE:cutrace>
  $<TARGET_FILE:cutrace_shim> ${_spank} $<TARGET_FILE:cutrace-probe> ${CUTRACE_FAKENV_LIB} ${CUTRACE_FAKECUDA_DIR})
set_tests_properties(cluster_slurm PROPERTIES LABELS cluster SKIP_RETURN_CODE 77 TIMEOUT 240 RUN_SERIAL ON)
