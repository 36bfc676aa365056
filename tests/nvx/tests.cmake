# nvx: raw NVIDIA ioctls (tests/nvx/nvx.c) for the decoder's end-to-end tests
# in tests/integration/it_decode.py, which run it under the shim and the fake
# kernel and read `cutrace show --json`.  Built into CUTRACE_PROG_DIR next to
# the other test programs (the rig defines it: include it first).
include(${CUTRACE_TEST_DIR}/rig/tests.cmake)

add_executable(cutrace_nvx ${CMAKE_CURRENT_LIST_DIR}/nvx.c)
set_target_properties(cutrace_nvx PROPERTIES OUTPUT_NAME nvx
  RUNTIME_OUTPUT_DIRECTORY ${CUTRACE_PROG_DIR})
target_include_directories(cutrace_nvx PRIVATE ${CUTRACE_TEST_DIR}/rig)

# the program alone under the fake kernel (no shim): the fake answers as the
# tests expect, so a decoder test failure is the decoder's
add_test(NAME rig.nvx.selftest COMMAND ${CMAKE_COMMAND} -E env ${CUTRACE_RIG_ENV}
  FAKENV_GPUS=2 FAKENV_RM_FREE_STATUS=0xbad=0x33
  $<TARGET_FILE:cutrace_nvx> ctl client free_bad xfer_bv xfer_alloc xfer_efault ctl_efault
  short oversized gpu wrong_node fabric version=535.183.01 attach=2 uvm=/dev/nvidia-uvm)
set_tests_properties(rig.nvx.selftest PROPERTIES LABELS rig PASS_REGULAR_EXPRESSION
  "free_bad rc=0 status=0x33.*xfer_bv rc=0 status=0x0.*xfer_bv driver=580.159.04.*xfer_alloc rc=0 status=0x0.*xfer_efault rc=-1 errno=14.*ctl_efault rc=-1 errno=14.*short rc=-1 errno=22.*oversized rc=-1 errno=22.*wrong_node rc=-1 errno=22.*fabric rc=0 status=0x0.*version rc=-1 errno=22.*version kernel=580.159.04.*attach rc=0.*uvm_initialize rc=0 status=0x0.*uvm_pageable rc=0 status=0x0")
