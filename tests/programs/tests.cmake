# The test programs are built by tests/rig/tests.cmake (through
# programs.cmake), which must come first; this fragment sorts before it, so it
# just makes sure the rig is set up.  The include is guarded.
include(${CUTRACE_TEST_DIR}/rig/tests.cmake)
