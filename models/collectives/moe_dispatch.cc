#include "models/collectives/moe_dispatch.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace traincast::models {
namespace {

/// C(a, k) / C(b, k) = Π_{i=0}^{k-1} (a − i) / (b − i) for 0 <= a <= b, k <= b; 0 when a < k.
double choose_ratio(int a, int b, int k) {
  double r = 1.0;
  for (int i = 0; i < k; ++i) {
    if (a - i <= 0) return 0.0;
    r *= static_cast<double>(a - i) / static_cast<double>(b - i);
  }
  return r;
}

}  // namespace

DeepEpFanout deepep_fanout(int experts, int top_k, int max_nodes_per_token, int nodes, int gpus_per_node) {
  using std::to_string;
  if (nodes < 1 || gpus_per_node < 1)
    throw std::invalid_argument("deepep all-to-all: the group needs >= 1 node and >= 1 GPU per node (got " +
                                to_string(nodes) + " x " + to_string(gpus_per_node) + ")");
  const int gpus = nodes * gpus_per_node;
  if (experts < 1 || experts % gpus != 0)
    throw std::invalid_argument("deepep all-to-all: " + to_string(experts) + " experts do not spread evenly over " +
                                to_string(gpus) + " GPUs");
  if (top_k < 1 || top_k > experts)
    throw std::invalid_argument("deepep all-to-all: top_k " + to_string(top_k) + " outside [1, " + to_string(experts) +
                                "]");
  if (max_nodes_per_token < 0)
    throw std::invalid_argument("deepep all-to-all: max_nodes_per_token " + to_string(max_nodes_per_token) + " < 0");
  DeepEpFanout f;
  f.nodes = nodes;
  f.gpus_per_node = gpus_per_node;
  f.routed_nodes = max_nodes_per_token == 0 ? nodes : std::min(max_nodes_per_token, nodes);
  const int per_node = experts / nodes;              // c
  const int per_gpu = experts / gpus;                // g
  const int candidates = f.routed_nodes * per_node;  // C = M·c
  if (candidates < top_k)
    throw std::invalid_argument("workload.training.moe_max_nodes_per_token: " + to_string(f.routed_nodes) +
                                " node(s) hold " + to_string(candidates) + " experts, fewer than moe_top_k " +
                                to_string(top_k) + " (expected >= " + to_string((top_k + per_node - 1) / per_node) +
                                ", or 0 for no limit)");
  const double m = f.routed_nodes;
  f.nodes_per_token = m * (1.0 - choose_ratio(candidates - per_node, candidates, top_k));
  f.gpu_probability = m / nodes * (1.0 - choose_ratio(candidates - per_gpu, candidates, top_k));
  f.node_probability = f.nodes_per_token / nodes;
  f.gpus_per_token = f.gpu_probability * gpus;
  f.rdma_ratio = f.nodes_per_token / top_k;
  return f;
}

DeepEpFractions deepep_fractions(const DeepEpFanout& f, int top_k) {
  DeepEpFractions d;
  d.rdma_peer = f.node_probability / top_k;
  d.nvlink_pair = f.nodes * f.gpu_probability / top_k;
  return d;
}

}  // namespace traincast::models
