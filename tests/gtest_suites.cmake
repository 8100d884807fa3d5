# One CTest test per GoogleTest suite (the asan preset's registration, TRAINCAST_TEST_PER_SUITE):
# run after a test binary is built (`cmake -P`, a POST_BUILD step of traincast_add_test_dir), it lists
# the binary's cases (--gtest_list_tests) and writes CTEST_FILE with
# - one test per suite, named `<suite>.*`, running `--gtest_filter=<suite>.*:-<its asan_long cases>`;
# - one test per case of tests/test_costs.cmake (the asan_long list), named as gtest_discover_tests
#   names it (`<suite>.<case>`), so test_costs.cmake gives it its COST and label as in release.
# So every case runs exactly once, and `-L`/`-LE` select the same cases as per-case registration.
# Each test gets TEST_PROPERTIES (LABELS, ENVIRONMENT) and WORKING_DIRECTORY; a suite test gets
# COST = its number of cases (CTest starts the largest first where it has no timing record of its
# own). A suite test fails when any of its cases fails; GoogleTest's output names it
# (`[  FAILED  ] Suite.Case`), which CTest prints (outputOnFailure); a crash or sanitizer report
# stops the suite's process, after `[ RUN      ] Suite.Case` names the case, and the suite's later
# cases do not run in that pass. Why: per-case registration costs a process per case; under ASan +
# UBSan a bare start and exit (no case run) takes 0.08-0.24 CPU s, LeakSanitizer's exit scan
# 0.02-0.04 s of it, and the CI stage's 1,091 cases took 467 CPU s as 1,092 processes, 205 CPU s as
# 193 (2026-12-07, docs/layout.md).
# Inputs (-D): TEST_EXECUTABLE, CTEST_FILE, TEST_WORKING_DIR, TEST_PROPERTIES, COSTS_FILE,
# DISCOVERY_TIMEOUT (s).
cmake_minimum_required(VERSION 3.25)

execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                WORKING_DIRECTORY "${TEST_WORKING_DIR}" TIMEOUT ${DISCOVERY_TIMEOUT}
                OUTPUT_VARIABLE output RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${result}):\n${output}")
endif()

# The asan_long names: test_costs.cmake defines TRAINCAST_ASAN_LONG_TESTS ("name seconds" entries)
# and, with TRAINCAST_ASAN_LONG_LIST_ONLY, sets no test property.
set(TRAINCAST_ASAN_LONG_LIST_ONLY ON)
include("${COSTS_FILE}")
set(long_names "")
foreach(entry IN LISTS TRAINCAST_ASAN_LONG_TESTS)
  string(REGEX REPLACE " [0-9]+$" "" name "${entry}")
  list(APPEND long_names "${name}")
endforeach()

# Quotes one argument for the generated file (bracket argument).
function(quoted out value)
  set(${out} "[==[${value}]==]" PARENT_SCOPE)
endfunction()

set(common "")
foreach(p IN LISTS TEST_PROPERTIES)
  quoted(q "${p}")
  string(APPEND common " ${q}")
endforeach()
quoted(exe "${TEST_EXECUTABLE}")
quoted(wd "${TEST_WORKING_DIR}")
set(script "")
set(suite "")
# Appends the finished suite's test (unless every case of it is asan_long).
macro(flush_suite)
  if(NOT suite STREQUAL "" AND suite_cases GREATER 0)
    set(filter "${suite}.*")
    if(suite_long)
      list(JOIN suite_long ":" negative)
      string(APPEND filter ":-${negative}")
    endif()
    quoted(name "${suite}.*")
    quoted(arg "--gtest_filter=${filter}")
    string(APPEND script "add_test(${name} ${exe} ${arg})\n"
           "set_tests_properties(${name} PROPERTIES WORKING_DIRECTORY ${wd} COST ${suite_cases}${common})\n")
  endif()
endmacro()

string(REPLACE ";" "\\;" output "${output}")
string(REPLACE "\n" ";" lines "${output}")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #][^ ]*)\\.( *#.*)?$")  # a suite: `Suite.` or `Prefix/Suite/0.  # TypeParam = T`
    flush_suite()
    set(suite "${CMAKE_MATCH_1}")
    set(suite_cases 0)
    set(suite_long "")
    # gtest_discover_tests's names (GoogleTestAddTests.cmake): a typed suite's index becomes its type.
    set(pretty_suite "${suite}")
    set(type_suffix "")
    if(line MATCHES "#")
      string(REGEX REPLACE "/.*" "" pretty_suite "${line}")
      string(REGEX REPLACE ".*/[0-9]+[ .#]+TypeParam = (.*)" "<\\1>" type_suffix "${line}")
    endif()
  elseif(line MATCHES "^  " AND NOT suite STREQUAL "")
    string(STRIP "${line}" listed)
    string(REGEX REPLACE " +#.*" "" test "${listed}")
    # A value-parameterised case's index becomes its value; a named one keeps the listed comment.
    set(pretty_test "${listed}")
    if(listed MATCHES "#")
      string(REGEX REPLACE "/[0-9]+[ #]+GetParam\\(\\) = " "/" pretty_test "${listed}")
    endif()
    set(pretty "${pretty_suite}.${pretty_test}${type_suffix}")
    if(pretty IN_LIST long_names)
      list(APPEND suite_long "${suite}.${test}")
      quoted(name "${pretty}")
      quoted(arg "--gtest_filter=${suite}.${test}")
      string(APPEND script "add_test(${name} ${exe} ${arg})\n"
             "set_tests_properties(${name} PROPERTIES WORKING_DIRECTORY ${wd}${common})\n")
    else()
      math(EXPR suite_cases "${suite_cases} + 1")
    endif()
  endif()
endforeach()
flush_suite()
file(WRITE "${CTEST_FILE}" "${script}")
