# layout.link_refuses_upward_call: configures tests/layout/scratch_link (two modules, the lower one
# calling the upper), builds both static libraries, and runs tests/layout/check_links.py on them:
# it must fail, naming lower's use of the upper module's function.
#   cmake -DSOURCE=<repo> -DWORK=<scratch build dir> -DPYTHON=<python3> -P upward_call_link_test.cmake
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/tests/layout/scratch_link -B ${WORK}
                        -DTRAINCAST_SOURCE_DIR=${SOURCE}
                RESULT_VARIABLE configure_rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT configure_rc EQUAL 0)
  message(FATAL_ERROR "scratch project did not configure (${configure_rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK} RESULT_VARIABLE build_rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT build_rc EQUAL 0)
  message(FATAL_ERROR "scratch libraries did not build (${build_rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${PYTHON} ${SOURCE}/tests/layout/check_links.py ${WORK}/module_graph.txt ${WORK}/module_libs.txt
                RESULT_VARIABLE check_rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT check_rc EQUAL 1)
  message(FATAL_ERROR "check_links.py passed an upward call (exit ${check_rc}):\n${out}\n${err}")
endif()
if(NOT "${out}" MATCHES "lower \\([^)]*\\) uses upper_function\\(\\), defined only in upper")
  message(FATAL_ERROR "check_links.py failed, but not at the upward call:\n${out}\n${err}")
endif()
message(STATUS "refused as expected: ${out}")
