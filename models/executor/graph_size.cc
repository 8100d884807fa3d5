// estimate_graph_ops and check_graph_size_early (graph_size.h): the job's op count from the
// scenario, before the cluster is built.

#include "models/executor/graph_size.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/compute/compute_model.h"
#include "models/executor/folding.h"
#include "models/executor/parallel_layout.h"
#include "models/hardware/catalog.h"
#include "models/hardware/element_overrides.h"
#include "models/workload/layer_program.h"
#include "models/workload/pipeline_schedule.h"

namespace traincast::models {

double graph_ops(const ModelPrograms& programs, const std::vector<int>& stage_layers, int zero_stage,
                 double microbatches, int iterations, int replicas, int pp) {
  const int layers_max = *std::max_element(stage_layers.begin(), stage_layers.end());
  std::size_t layer_ops = 0;
  for (const LayerPrograms& lp : programs.layer_kinds)
    layer_ops = std::max(layer_ops, lp.forward.size() + lp.recompute.size() + lp.backward.size());
  double per_microbatch = static_cast<double>(layers_max) * static_cast<double>(layer_ops);
  per_microbatch += static_cast<double>(programs.embedding_forward.size() + programs.embedding_backward.size() +
                                        programs.head_forward.size() + programs.head_backward.size() + 2);
  if (zero_stage == 3) per_microbatch += 2.0 * (layers_max + 2);       // per-item gathers, both passes
  if (pp > 1 && programs.p2p_gather_bytes > 0) per_microbatch += 2.0;  // scatter/gather after each receive
  return per_microbatch * microbatches * iterations * static_cast<double>(replicas) * pp;
}

void refuse_graph_ops_over_limit(double ops, bool fold_symmetric_on) {
  if (ops > kMaxGraphOps)
    throw std::invalid_argument(
        "the job would need about " + std::to_string(static_cast<long long>(ops / 1e6)) +
        " million ops to simulate (limit " + std::to_string(static_cast<long long>(kMaxGraphOps / 1e6)) +
        " million): reduce options.iterations or workload.training.global_batch_size (--set "
        "options.iterations=1, --set workload.training.global_batch_size=N)" +
        (fold_symmetric_on
             ? std::string(" (options.fold_symmetric is already on: the data-parallel replicas left cannot be "
                           "folded, or one replica alone is this large)")
             : std::string(", or turn options.fold_symmetric on (--set options.fold_symmetric=true)")));
}

double estimate_graph_ops(const Scenario& sc) {
  const NodeTemplate& node = find_node_template(sc.cluster.node_template);
  const GpuSpec& gpu = find_gpu(sc.cluster.gpu.empty() ? node.gpu : sc.cluster.gpu);
  const int gpus_per_node = node.gpus_per_node;
  // The nodes in service: drained ones (a missing GPU) run nothing.
  const ParallelLayout L = parallel_layout_of(sc, nodes_in_service(sc.cluster) * gpus_per_node);
  // As plan_shape (training_plan.cc): micro-batches and iterations.
  const int m = sc.training.global_batch_size / (L.dp * sc.training.micro_batch_size);
  int iterations = std::max(1, sc.options.iterations);
  if (sc.parallel.zero_stage >= 1 && sc.parallel.overlap_param_gather && L.dp_cp > 1)
    iterations = std::max(iterations, 2);
  const ModelPrograms programs = build_layer_programs(sc, gpu, compute_params(gpu, sc.cluster.profile));
  // As plan_folding, without the tests by network position and clock feedback that can only unfold.
  const int replicas = fold_candidate(sc, L, gpus_per_node) ? L.ep * L.cp : L.dp_cp;
  const std::vector<int> stage_layers = static_cast<int>(sc.parallel.pipeline_stage_layers.size()) != L.pp
                                            ? layers_per_stage(static_cast<int>(programs.layer_kind.size()), L.pp)
                                            : sc.parallel.pipeline_stage_layers;
  return graph_ops(programs, stage_layers, sc.parallel.zero_stage, m, iterations, replicas, L.pp);
}

void check_graph_size_early(const Scenario& sc) {
  double ops = 0;
  try {
    ops = estimate_graph_ops(sc);
  } catch (const std::exception&) {
    return;  // a scenario the estimate cannot read: the executor reports it as it always did
  }
  refuse_graph_ops_over_limit(ops, sc.options.fold_symmetric);
}

}  // namespace traincast::models
