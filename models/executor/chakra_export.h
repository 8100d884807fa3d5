#pragma once
// Exporting a generated training job (TrainingGraph) as one Chakra trace per GPU, the reverse
// of running a trace (models/executor/chakra_executor.h).

#include <vector>

#include "models/executor/training_executor.h"
#include "models/workload/chakra_trace.h"

namespace traincast::models {

/// The generated training job of `job` (built unfolded: job.replicas == dp) as one Chakra trace
/// per GPU of the cluster (`num_gpus` of them; every GPU must belong to a worker). Compute ops
/// become COMP nodes with their exact duration, collectives COMM_COLL nodes on process groups
/// named after the GPU group ("tp.3", "dp.0", ...; defined in each file's process_group:init
/// node), pipeline sends COMM_SEND/COMM_RECV pairs, the step's global sync a BARRIER without
/// size. Dependencies, and stream order (the previous op of the same stream), are data_deps. Running the result with
/// simulate_chakra reproduces the job's op timing (test: tests/models/chakra_executor_test.cc). Throws
/// std::invalid_argument for a folded job.
std::vector<ChakraRankTrace> export_training_chakra(const TrainingGraph& job, int num_gpus);

}  // namespace traincast::models
