# layout.link_refuses_upward_call: configures tests/layout/scratch_link (two modules, the lower one
# calling the upper) and builds it; the configure must succeed and the build must fail at the link
# of the lower module with an undefined reference to the upper module's function.
#   cmake -DSOURCE=<repo> -DWORK=<scratch build dir> -P upward_call_link_test.cmake
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/tests/layout/scratch_link -B ${WORK}
                        -DTRAINCAST_SOURCE_DIR=${SOURCE}
                RESULT_VARIABLE configure_rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT configure_rc EQUAL 0)
  message(FATAL_ERROR "scratch project did not configure (${configure_rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK} --target scratch_lower
                RESULT_VARIABLE build_rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(build_rc EQUAL 0)
  message(FATAL_ERROR "an upward call linked: -Wl,--no-undefined did not refuse lower -> upper_function")
endif()
if(NOT "${out}${err}" MATCHES "undefined reference to .upper_function")
  message(FATAL_ERROR "the build failed, but not at the upward call:\n${out}\n${err}")
endif()
message(STATUS "refused as expected: lower/ calls upper_function of upper/, undefined at link time")
