# The installed tree, its man page and the Debian package (cmake/install.cmake).
include(${CUTRACE_TEST_DIR}/rig/tests.cmake)
add_test(NAME install_man
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/man.sh ${CMAKE_BINARY_DIR}/man/cutrace.1 $<TARGET_FILE:cutrace>
          ${CMAKE_SOURCE_DIR})
add_test(NAME install_tree
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/tree.sh ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR}
          ${CUTRACE_FAKENV_LIB} ${CUTRACE_FAKECUDA_DIR})
add_test(NAME install_deb
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/deb.sh ${CMAKE_CPACK_COMMAND} ${CMAKE_BINARY_DIR}
          ${CUTRACE_FAKENV_LIB} ${CUTRACE_FAKECUDA_DIR})
set_tests_properties(install_man install_tree install_deb PROPERTIES LABELS install
  SKIP_RETURN_CODE 77 TIMEOUT 600)
