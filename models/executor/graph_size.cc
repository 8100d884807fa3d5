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

GraphOpsTerms graph_ops_terms(const ModelPrograms& programs, const std::vector<int>& stage_layers, int zero_stage,
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
  return {per_microbatch, layers_max, microbatches, iterations, replicas, pp};
}

double graph_ops(const ModelPrograms& programs, const std::vector<int>& stage_layers, int zero_stage,
                 double microbatches, int iterations, int replicas, int pp) {
  return graph_ops_terms(programs, stage_layers, zero_stage, microbatches, iterations, replicas, pp).ops();
}

void refuse_graph_ops_over_limit(const GraphOpsTerms& t, const Scenario& sc, int data_ranks) {
  const double ops = t.ops();
  if (ops <= kMaxGraphOps) return;
  auto count = [](double v) { return std::to_string(static_cast<long long>(v)); };
  auto plural = [&](double v, const std::string& one, const std::string& many) {
    return count(v) + " " + (v == 1 ? one : many);
  };
  // Each factor of the count with the field (and its value) that drives it.
  const std::string terms =
      plural(t.iterations, "iteration", "iterations") + " (options.iterations " + count(sc.options.iterations) +
      ") x " + plural(t.microbatches, "micro-batch", "micro-batches") +
      " per iteration (workload.training.global_batch_size " + count(sc.training.global_batch_size) +
      " / workload.training.micro_batch_size " + count(sc.training.micro_batch_size) + " / " +
      plural(data_ranks, "data-parallel rank", "data-parallel ranks") + ") x " +
      plural(t.pp, "pipeline stage", "pipeline stages") + " (workload.parallel.pp) x " +
      plural(t.replicas, "data-parallel replica", "data-parallel replicas") + " simulated (options.fold_symmetric " +
      (sc.options.fold_symmetric ? "on" : "off") + ") x " + count(t.per_microbatch) + " ops per micro-batch (" +
      plural(t.stage_layers, "layer", "layers") + " on the fullest stage, of workload.model.num_layers " +
      count(sc.model.num_layers) + ")";
  // Only the factors that can shrink are offered (fresh user, session 32: one iteration was told to
  // set options.iterations=1, and the layers were never named).
  std::string fixes;
  if (sc.options.iterations > 1) fixes += "options.iterations (--set options.iterations=1), ";
  if (t.microbatches > 1)
    fixes += "workload.training.global_batch_size (--set workload.training.global_batch_size=N), ";
  fixes += std::string(fixes.empty() ? "" : "or ") +
           "the layers on the fullest stage (workload.model.num_layers, or more stages with workload.parallel.pp)";
  throw std::invalid_argument(
      "the job would need about " + count(ops / 1e6) + " million ops to simulate (limit " + count(kMaxGraphOps / 1e6) +
      " million): " + terms + "; reduce " + fixes +
      (sc.options.fold_symmetric
           ? std::string(" (options.fold_symmetric is already on: the data-parallel replicas left cannot be "
                         "folded, or one replica alone is this large)")
           : std::string(", or turn options.fold_symmetric on (--set options.fold_symmetric=true)")));
}

namespace {

/// estimate_graph_ops's factors; `data_ranks` receives the job's data-parallel ranks.
GraphOpsTerms estimate_graph_ops_terms(const Scenario& sc, int& data_ranks) {
  const NodeTemplate& node = cluster_node_template(sc.cluster);
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
  data_ranks = L.dp;
  return graph_ops_terms(programs, stage_layers, sc.parallel.zero_stage, m, iterations, replicas, L.pp);
}

}  // namespace

double estimate_graph_ops(const Scenario& sc) {
  int data_ranks = 0;
  return estimate_graph_ops_terms(sc, data_ranks).ops();
}

void check_graph_size_early(const Scenario& sc) {
  GraphOpsTerms terms;
  int data_ranks = 0;
  try {
    terms = estimate_graph_ops_terms(sc, data_ranks);
  } catch (const std::exception&) {
    return;  // a scenario the estimate cannot read: the executor reports it as it always did
  }
  refuse_graph_ops_over_limit(terms, sc, data_ranks);
}

}  // namespace traincast::models
