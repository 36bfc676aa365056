# The engines clusters already run (issue 20): a real Prometheus scraping
# node-exporter's textfile collector.  Label `cluster`; skipped (77) with
# one line when the Debian packages are not installed (scripts/setup.sh).
include(${CUTRACE_TEST_DIR}/rig/tests.cmake)
find_program(CUTRACE_PY3 python3 REQUIRED)
add_test(NAME cluster_prometheus COMMAND ${CUTRACE_PY3} ${CMAKE_CURRENT_LIST_DIR}/prom_real.py
  $<TARGET_FILE:cutrace> $<TARGET_FILE:ct_mksynth> ${CUTRACE_FAKENV_LIB} ${CUTRACE_FAKECUDA_DIR})
set_tests_properties(cluster_prometheus PROPERTIES LABELS cluster SKIP_RETURN_CODE 77 TIMEOUT 240)
