# The rooms and their doors (tracer/CMakeLists.txt, HACKING.md).
#
#   rooms_include_paths  the shim's include path holds only shim/, the
#                        format header (shim/include) and the common room
#                        (common/ and its generated tables); no room of the
#                        tracer has any of shim/ but the format header
#   rooms_backward_call  a call from the read room into diag, a room above
#                        it, must not link: builds the door check of such a
#                        room (canary.c) and expects the undefined reference
if(CUTRACE_ASAN_SUBBUILD)
  return()
endif()
set(_rooms_list ${CMAKE_BINARY_DIR}/rooms/include_paths.txt)
set(_rooms_content "shim=$<JOIN:$<TARGET_PROPERTY:cutrace_shim,INCLUDE_DIRECTORIES>,;>\n")
foreach(r common base read decode diag out doctor session cmd)
  string(APPEND _rooms_content "tracer:${r}=$<JOIN:$<TARGET_PROPERTY:ct_${r},INCLUDE_DIRECTORIES>,;>;$<JOIN:$<TARGET_PROPERTY:ct_${r},INTERFACE_INCLUDE_DIRECTORIES>,;>\n")
endforeach()
file(GENERATE OUTPUT ${_rooms_list} CONTENT "${_rooms_content}")
add_test(NAME rooms_include_paths
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/include_paths.sh ${_rooms_list} ${PROJECT_SOURCE_DIR} ${CUTRACE_GEN_DIR})
set_tests_properties(rooms_include_paths PROPERTIES LABELS "unit;rooms")

# the canary: a "read room" library with one backward call, linked as the
# read room's door check is (every object, then only the rooms below read)
add_library(ct_canary_read STATIC EXCLUDE_FROM_ALL ${CMAKE_CURRENT_LIST_DIR}/canary.c)
target_link_libraries(ct_canary_read PUBLIC ct_base)
cutrace_doors(ct_canary_read_doors ct_canary_read)
set_target_properties(ct_canary_read_doors PROPERTIES EXCLUDE_FROM_ALL TRUE)
add_test(NAME rooms_backward_call
  COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target ct_canary_read_doors)
set_tests_properties(rooms_backward_call PROPERTIES LABELS "unit;rooms" TIMEOUT 120
  PASS_REGULAR_EXPRESSION "undefined reference to `ct_verdict_line'")
