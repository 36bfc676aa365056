# The installed tree (cmake --install BUILD --prefix PREFIX) and the .deb
# (cd BUILD && cpack), both the same layout:
#   PREFIX/bin/cutrace
#   PREFIX/lib/cutrace/libcutrace.so            (session/run.c: ../lib/cutrace from bin/)
#   PREFIX/libexec/cutrace/cutrace-probe        (session/probe.c: ../libexec/cutrace)
#   PREFIX/share/man/man1/cutrace.1.gz
#   PREFIX/share/doc/cutrace/  README.md JSON.md SCENARIOS.md format.h
# The install rules of the targets are in shim/ and tracer/CMakeLists.txt;
# tests/install checks the tree, the man page and the package.

# the manual page, with this version, compressed as Debian wants it
configure_file(${CMAKE_SOURCE_DIR}/man/cutrace.1 ${CMAKE_BINARY_DIR}/man/cutrace.1 @ONLY)
find_program(CUTRACE_GZIP gzip)
if(CUTRACE_GZIP)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/man/cutrace.1.gz
    COMMAND ${CUTRACE_GZIP} -9nc ${CMAKE_BINARY_DIR}/man/cutrace.1 > ${CMAKE_BINARY_DIR}/man/cutrace.1.gz
    DEPENDS ${CMAKE_BINARY_DIR}/man/cutrace.1)
  add_custom_target(cutrace_man ALL DEPENDS ${CMAKE_BINARY_DIR}/man/cutrace.1.gz)
  install(FILES ${CMAKE_BINARY_DIR}/man/cutrace.1.gz DESTINATION share/man/man1)
else()
  install(FILES ${CMAKE_BINARY_DIR}/man/cutrace.1 DESTINATION share/man/man1)
endif()

install(FILES README.md SCENARIOS.md tracer/JSON.md shim/include/cutrace/format.h
  DESTINATION share/doc/cutrace)

# --- the Debian package: cd build && cpack (build/cutrace_VERSION_ARCH.deb) ---
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cutrace)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "cutrace maintainers <maintainers@users.noreply.a-seed-115f03ca.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "show where and why CUDA initialization fails")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "cutrace runs a program with libcutrace.so preloaded, records the loader, the
 CUDA driver/runtime/NVML entry points and the open/ioctl calls on the NVIDIA
 device nodes into a crash-proof trace file, and names the failing step,
 why, and the fix.  cutrace probe and cutrace doctor check a machine without
 a CUDA program.")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/package)
set(CPACK_STRIP_FILES ON)
find_program(CUTRACE_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(CUTRACE_DPKG_SHLIBDEPS)
  # Depends: from the binaries' NEEDED entries (libc6, libelf1)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libelf1")
endif()
include(CPack)
