// planner::why_no_layout (planner.h): why no layout of the search is valid, with the splits that
// fail and why, for `traincast plan`'s refusal; planner::mixed_node_kinds, a cluster it cannot search.

#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/hardware/element_overrides.h"
#include "models/planner/layout.h"
#include "models/planner/planner.h"

namespace traincast::models::planner {

std::string mixed_node_kinds(const Scenario& base) {
  const std::vector<NodeGroupSpec>& groups = base.cluster.node_groups;
  auto kind = [](const NodeGroupSpec& g) {
    return std::to_string(g.num_nodes) + " x " + g.node_template + (g.gpu.empty() ? "" : " (gpu " + g.gpu + ")");
  };
  for (const NodeGroupSpec& g : groups)
    if (g.node_template != groups.front().node_template || g.gpu != groups.front().gpu)
      return "cluster.node_group: " + kind(groups.front()) + " and " + kind(g) +
             ": traincast plan searches clusters of one node kind (expected every node_group with the same "
             "node_template and gpu; plan each group's nodes apart, then simulate a mixed layout with traincast run)";
  return {};
}

std::string why_no_layout(const Scenario& base, const PlanOptions& o) {
  if (!enumerate_layouts(base, o).empty()) return {};  // also checks the options and the family
  const NodeTemplate& node = cluster_node_template(base.cluster);
  const int gpus = nodes_in_service(base.cluster) * node.gpus_per_node;
  const int max_tp = o.max_tp > 0 ? o.max_tp : 2 * node.gpus_per_node;
  const ModelSpec& m = base.model;
  if (gpus < 1 || base.training.global_batch_size < 1 || m.num_layers < 1 || m.num_attention_heads < 1)
    return "the cluster, batch or model is empty";
  std::vector<std::string> examples;
  int splits = 0;
  for (int tp = 1; tp <= gpus && tp <= max_tp; ++tp) {
    if (gpus % tp != 0) continue;
    for (int pp = 1; pp <= gpus / tp; ++pp) {
      if ((gpus / tp) % pp != 0) continue;
      const int dp = gpus / (tp * pp);
      ++splits;
      // The split's lightest variant: micro-batch 1, no interleaving, SP only where a MoE model
      // needs it, ZeRO only where optimizer offload needs it.
      const Layout l{tp,
                     pp,
                     dp,
                     1,
                     m.num_experts > 0 && tp > 1,
                     base.offload.optimizer && dp > 1 ? 1 : 0,
                     1,
                     Recompute::none,
                     o.uneven_stages && m.num_layers % pp != 0};
      const std::string why = layout_error(base, l);
      if (!why.empty() && examples.size() < 3)
        examples.push_back("TP " + std::to_string(tp) + " x PP " + std::to_string(pp) + " x DP " + std::to_string(dp) +
                           ": " + why);
    }
  }
  std::string out = "no parallel layout is valid on " + std::to_string(gpus) + " GPUs for this model and batch (" +
                    std::to_string(splits) + " TP x PP x DP splits with TP up to " + std::to_string(max_tp) +
                    " tried at micro-batch 1, e.g. ";
  for (std::size_t i = 0; i < examples.size(); ++i) out += (i ? "; " : "") + examples[i];
  return out + ")";
}

}  // namespace traincast::models::planner
