#pragma once
// The result of one simulation, as plain data. The io layer writes it as text, JSON and trace;
// JSON keys are these field names (see models/io/traincast.proto, message Report).

#include <cstdint>
#include <string>
#include <vector>

namespace traincast::models {

/// Where the iteration's wall time went, seen from the slowest pipeline stage's GPU. Every field
/// is seconds within one iteration; they add up to iteration_time_s.
struct TimeBreakdown {
  double compute_s = 0.0;          ///< GPU busy with compute kernels (incl. recomputation)
  double tp_comm_exposed_s = 0.0;  ///< tensor-parallel collectives not hidden under compute
  double dp_comm_exposed_s = 0.0;  ///< gradient all-reduce/reduce-scatter + param all-gather not hidden
  double pp_comm_exposed_s = 0.0;  ///< pipeline send/recv the GPU waited on
  double pipeline_bubble_s = 0.0;  ///< idle waiting for other stages (fill/drain)
  double optimizer_s = 0.0;        ///< optimizer step (part of compute, reported apart)
};

/// Per-GPU memory for the GPU with the highest peak (pipeline stage 0 under 1F1B).
struct MemoryBreakdown {
  double weights_bytes = 0.0;
  double grads_bytes = 0.0;
  double optimizer_bytes = 0.0;
  double activations_bytes = 0.0;  ///< peak activations held (in-flight micro-batches)
  double workspace_bytes = 0.0;    ///< framework/cuBLAS/NCCL buffers and fragmentation allowance
  double peak_bytes_per_gpu = 0.0;
  double capacity_bytes = 0.0;  ///< HBM capacity of that GPU
  bool oom = false;
  std::string advice;  ///< what would make it fit (empty when it fits)
  int worst_stage = 0;
};

struct LinkUsage {
  std::string name;
  double utilization = 0.0;  ///< bytes carried / (capacity × iteration time), 0..1
  double bytes = 0.0;        ///< bytes carried in the last iteration
  double capacity_bytes_per_s = 0.0;
};

struct Report {
  std::string scenario;
  std::string gpu;
  int num_gpus = 0;
  int num_nodes = 0;
  int tp = 1, pp = 1, dp = 1;
  int micro_batches = 0;  ///< per pipeline per iteration
  double iteration_time_s = 0.0;
  double tokens_per_s = 0.0;
  double model_flops_per_iteration = 0.0;     ///< SC21 eq. 3 minus recomputation (MFU basis)
  double hardware_flops_per_iteration = 0.0;  ///< includes recomputed FLOPs (HFU basis)
  double tflops_per_gpu = 0.0;                ///< model FLOP/s per GPU / 1e12
  double hardware_tflops_per_gpu = 0.0;
  double mfu = 0.0;  ///< fraction 0..1 of dense peak for the precision
  double hfu = 0.0;
  double peak_flops_per_gpu = 0.0;  ///< the dense peak used for MFU [FLOP/s]
  TimeBreakdown breakdown;
  MemoryBreakdown memory;
  std::vector<LinkUsage> busiest_links;  ///< top 3 by utilisation
  double train_tokens = 0.0;
  double time_to_train_s = 0.0;  ///< 0 when no token budget was given
  std::uint64_t events = 0;      ///< engine events processed
  bool folded = false;           ///< one DP replica simulated for all (symmetry)
  int iterations_simulated = 1;
};

}  // namespace traincast::models
