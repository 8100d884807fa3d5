# `mpirun -n 2 traincast sweep` must write the CSV of a single process, byte for byte (issue 6).
# cmake -DTRAINCAST=<binary> -DMPIRUN=<mpirun> -DSWEEP=<sweep file> -DWORK=<scratch dir> -P this
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${TRAINCAST}" sweep "${SWEEP}" --out "${WORK}/single.csv" --jobs 1
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "single-process sweep failed (${rc}): ${err}")
endif()
execute_process(COMMAND "${MPIRUN}" --allow-run-as-root --oversubscribe -n 2
                        "${TRAINCAST}" sweep "${SWEEP}" --out "${WORK}/mpi.csv"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mpirun sweep failed (${rc}): ${out}${err}")
endif()
if(NOT out MATCHES "2 MPI ranks")
  message(FATAL_ERROR "mpirun sweep did not run as one MPI job: ${out}${err}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${WORK}/single.csv" "${WORK}/mpi.csv" RESULT_VARIABLE diff)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "the MPI CSV differs from the single-process CSV (${WORK})")
endif()
message(STATUS "mpirun -n 2: same CSV as one process")
