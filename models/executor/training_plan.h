#pragma once
// The shape of a training job that every worker's graph builder reads: layout, layer programs,
// gradient buckets, the shared data-parallel tasks, optimizer steps, labels (graph_builder.h).

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/executor/folding.h"
#include "models/executor/op_graph.h"
#include "models/executor/parallel_layout.h"
#include "models/hardware/cluster.h"
#include "models/spec/scenario.h"
#include "models/workload/layer_program.h"
#include "models/workload/transformer.h"

namespace traincast::models {

/// OpGraph::host_buffers index of the input copies' buffers (the data loaders' memory).
constexpr std::uint32_t kInputBuffers = 0;

/// One bucket of gradients launched after backward item `after_item` of a chunk.
struct GradBucket {
  int after_item = 0;
  double params = 0;         ///< DP-replicated parameters (per TP rank)
  double expert_params = 0;  ///< routed-expert parameters (per GPU), reduced over dp_cp / ep ranks
  std::vector<int> layers;   ///< chunk-local layers whose parameters it holds (for param gather)
};

/// The job's shape, shared read-only by all builders: its ParallelLayout (ranks, GPUs, groups)
/// and what the op graph of every worker is made of.
struct TrainingPlan : ParallelLayout {
  const Scenario* sc = nullptr;
  ModelPrograms programs;
  int v = 1, m = 1;  // chunks (virtual stages), micro-batches
  int iterations = 1;
  bool folded = false;                                        // replicas folded (DESIGN §3)
  FoldingPlan folding;                                        // classes and representatives (folding.h)
  std::vector<int> stage_layers;                              // [stage] layer count
  std::vector<std::vector<int>> chunk_layers;                 // [stage][chunk] layer count
  std::vector<std::vector<int>> chunk_first_layer;            // [stage][chunk] global index of its first layer
  std::vector<std::vector<std::vector<GradBucket>>> buckets;  // [stage][chunk] -> buckets
  std::vector<std::vector<std::uint32_t>> dp_task_base;       // [stage][chunk] first grad task of iteration 0
  std::uint32_t dp_tasks_per_iteration = 0;
  std::vector<Task> dp_tasks;  // the shared DP tasks of every iteration (first in OpGraph::tasks)
  int zero_stage = 0;
  /// Gradient reduce-scatters per bucket per iteration: 1 (DDP, ZeRO-1: accumulate the full
  /// gradient locally, reduce once) or m (ZeRO-2/3: the full gradient is not kept, so every
  /// micro-batch's backward reduce-scatters its buckets into the shard, as DeepSpeed ZeRO-2/3
  /// and FSDP without no_sync do).
  int grad_reductions = 1;
  std::vector<std::int64_t> optimizer_ns;  // per stage (CPU-Adam with offload)
  std::int64_t storage_stall_ns = 0;       // idle op at the start of every iteration (storage)
  /// CPU offload (workload.offload.optimizer): gradient shards go to the host after each
  /// reduction, the step runs on the CPU, updated 16-bit parameters come back.
  bool offload = false;
  std::vector<double> offload_h2d_bytes;  // per stage, per GPU: updated parameter shard
  std::vector<double> stage_params;       // per stage, per TP rank
  double grad_bytes = 4, weight_bytes = 2;
  /// ZeRO-3 / FSDP (ParallelSpec): bytes per parameter of the per-item gathers, whether backward
  /// gathers again (reshard_after_forward) and whether every micro-batch's forward gathers
  /// (reshard_after_backward; false: only the first micro-batch's).
  double gather_bytes = 2;
  bool reshard_after_forward = true, reshard_after_backward = true;
  std::vector<std::string> labels;
  /// Input copies (scenario data_loader): bytes per micro-batch per GPU, and the socket of every
  /// first-stage GPU's loader memory (OpGraph::host_buffers[kInputBuffers] of the job).
  bool input_copies = false;
  bool input_prefetch = true;
  double input_bytes = 0;
  HostBuffers input_buffers;

  const LayerPrograms& layer(int stage, int chunk, int local) const {
    const int global = chunk_first_layer[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)] + local;
    return programs.layer_kinds[static_cast<std::size_t>(programs.layer_kind[static_cast<std::size_t>(global)])];
  }

  // Shared DP task layout of one (stage, chunk) in one iteration, from dp_task_base[stage][chunk]:
  // gradient buckets, the post-step parameter gathers (one per bucket), MoE's expert tasks, then
  // from zero_extra_base: ZeRO-2/3's gradient rounds 1..m-1 (micro-batch major) and ZeRO-3's
  // per-item gathers (forward of every micro-batch, then backward; items in forward order:
  // embedding, layers, head).
  std::vector<std::vector<std::uint32_t>> zero_extra_base;  // [stage][chunk]
  std::size_t num_buckets(int stage, int chunk) const {
    return buckets[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)].size();
  }
  int num_items(int stage, int chunk) const {
    return chunk_layers[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)] +
           (stage == 0 && chunk == 0 ? 1 : 0) + (stage == pp - 1 && chunk == v - 1 ? 1 : 0);
  }
  std::uint32_t chunk_task_base(int iteration, int stage, int chunk) const {
    return dp_task_base[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)] +
           static_cast<std::uint32_t>(iteration) * dp_tasks_per_iteration;
  }
  std::uint32_t grad_task(int iteration, int stage, int chunk, int bucket, int mb) const {
    const std::size_t nb = num_buckets(stage, chunk);
    const std::size_t round = grad_reductions > 1 ? static_cast<std::size_t>(mb) : 0;
    if (round == 0) return chunk_task_base(iteration, stage, chunk) + static_cast<std::uint32_t>(bucket);
    return chunk_task_base(iteration, stage, chunk) + extra_base(stage, chunk) +
           static_cast<std::uint32_t>((round - 1) * nb + static_cast<std::size_t>(bucket));
  }
  /// The post-step (ZeRO-1/2) parameter gather of `bucket`.
  std::uint32_t param_gather_task(int iteration, int stage, int chunk, int bucket) const {
    return chunk_task_base(iteration, stage, chunk) + static_cast<std::uint32_t>(num_buckets(stage, chunk)) +
           static_cast<std::uint32_t>(bucket);
  }
  /// MoE's expert task of `bucket` for `replica`'s EP rank: pass 0 its gradient reduction,
  /// pass 1 its (ZeRO-1/2) post-step parameter gather.
  std::uint32_t expert_task(int iteration, int stage, int chunk, int bucket, int replica, int pass) const {
    const auto nb = static_cast<std::uint32_t>(num_buckets(stage, chunk));
    const auto e = static_cast<std::uint32_t>(ep);
    return chunk_task_base(iteration, stage, chunk) + 2 * nb + static_cast<std::uint32_t>(pass) * nb * e +
           static_cast<std::uint32_t>(bucket) * e + static_cast<std::uint32_t>(replica % ep);
  }
  std::uint32_t extra_base(int stage, int chunk) const {
    return zero_extra_base[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)];
  }
  /// ZeRO-3 gather of item `item` (forward order) for micro-batch mb, dir 0 forward, 1 backward.
  std::uint32_t gather_task(int iteration, int stage, int chunk, int item, int mb, int dir) const {
    const std::size_t nb = num_buckets(stage, chunk);
    return chunk_task_base(iteration, stage, chunk) + extra_base(stage, chunk) +
           static_cast<std::uint32_t>(static_cast<std::size_t>(grad_reductions - 1) * nb +
                                      static_cast<std::size_t>((dir * m + mb) * num_items(stage, chunk) + item));
  }
  std::uint32_t send_slot(int iteration, int dir, int mb, int chunk) const {
    return static_cast<std::uint32_t>(((iteration * 2 + dir) * m + mb) * v + chunk);
  }
  /// Label ids of each program's segments, and compute durations in ns (computed once).
  struct ProgramInfo {
    const Program* program;
    std::vector<std::uint32_t> label_ids;
    std::vector<std::int64_t> duration_ns;
    std::vector<double> compute_fraction;  ///< compute-bound share of each segment's time
  };
  std::vector<ProgramInfo> program_info;
  /// Mixed clusters (Cluster::node_groups, issue 20): the GPU types of the job, the first that of
  /// GPU 0 (program_info's), and the type of every stage's GPUs (one per stage). type_program_info[t]
  /// holds type t's durations, entry for entry as program_info (same programs, empty for t = 0).
  std::vector<const GpuSpec*> gpu_types;
  std::vector<int> stage_gpu_type;
  std::vector<std::vector<ProgramInfo>> type_program_info;

  std::uint32_t label(const std::string& s) const {
    auto it = std::find(labels.begin(), labels.end(), s);
    if (it == labels.end()) throw std::logic_error("executor: unknown label " + s);
    return static_cast<std::uint32_t>(it - labels.begin());
  }
  /// The durations of `prog` on the GPUs of pipeline stage `stage`.
  const ProgramInfo& info(const Program& prog, int stage) const {
    const int type = stage_gpu_type.empty() ? 0 : stage_gpu_type[static_cast<std::size_t>(stage)];
    for (std::size_t i = 0; i < program_info.size(); ++i)
      if (program_info[i].program == &prog)
        return type == 0 ? program_info[i] : type_program_info[static_cast<std::size_t>(type)][i];
    throw std::logic_error("executor: unknown program");
  }
};

/// Plans `sc`'s training job on `cluster` (built from sc.cluster): layout and folding (DESIGN §3),
/// layer programs, labels, input copies, collective groups, gradient buckets with the shared DP
/// tasks, optimizer steps. storage_stall_s > 0 adds an idle op per iteration (graph_builder.h).
/// Throws std::invalid_argument for scenarios the models cannot run (parallel_layout_of's checks,
/// a ResNet with tp, pp or ep > 1, a precision the GPU lacks, CPU offload without host-memory
/// bandwidth, a graph too large to hold).
TrainingPlan plan_training(const Scenario& sc, const Cluster& cluster, double storage_stall_s);

}  // namespace traincast::models
