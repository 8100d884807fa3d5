# traincast-bench as a user runs it, on any machine (CI has no GPU): --help, bad options (exit 2),
# an existing --out without --force (exit 2), and no visible GPU (CUDA_VISIBLE_DEVICES="" hides
# every GPU, so this also holds where one exists): a clear message, exit 1, no file, no crash.
# Each start costs about 2 s (loading cuBLASLt and NCCL), so the option errors themselves are
# tested in bench_options_test.cc and only one of them here.
# Usage: cmake -DBENCH=<traincast-bench> -DWORK=<scratch dir> -P bench_cli_test.cmake

function(run_bench expected_rc expected_stream expected_regex)
  execute_process(COMMAND ${BENCH} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 60)
  if(NOT rc STREQUAL "${expected_rc}")
    message(FATAL_ERROR "traincast-bench ${ARGN}: exit ${rc}, expected ${expected_rc}\nstdout: ${out}\nstderr: ${err}")
  endif()
  if(expected_stream STREQUAL "stdout")
    set(text "${out}")
  else()
    set(text "${err}")
  endif()
  if(NOT text MATCHES "${expected_regex}")
    message(FATAL_ERROR "traincast-bench ${ARGN}: ${expected_stream} does not match '${expected_regex}'\nstdout: ${out}\nstderr: ${err}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

run_bench(0 stdout "Usage: traincast-bench .*--budget-s S.*nccl .*burn " --help)
run_bench(2 stderr "^traincast-bench: --budget-s: expected a number of seconds > 0, got \"soon\"\n$" --budget-s soon)

file(WRITE ${WORK}/existing.textproto "keep me\n")
run_bench(2 stderr "--out: .*existing.textproto exists \\(use --force to overwrite it\\)"
          --out ${WORK}/existing.textproto)
file(READ ${WORK}/existing.textproto kept)
if(NOT kept STREQUAL "keep me\n")
  message(FATAL_ERROR "an existing --out file was modified")
endif()
run_bench(2 stderr "--out: cannot create a file beside ${WORK}/no/such/dir/m.textproto"
          --out ${WORK}/no/such/dir/m.textproto)

set(ENV{CUDA_VISIBLE_DEVICES} "")
run_bench(1 stderr "^traincast-bench: no usable NVIDIA GPU: cudaGetDeviceCount (failed with cuda[A-Za-z]+ \\(|found 0 devices).*needs the NVIDIA driver"
          --budget-s 5 --out ${WORK}/none.textproto)
if(EXISTS ${WORK}/none.textproto)
  message(FATAL_ERROR "a measurement file was written without a GPU")
endif()
file(GLOB leftovers ${WORK}/*.tmp.*)
if(leftovers)
  message(FATAL_ERROR "temporary files left behind: ${leftovers}")
endif()
