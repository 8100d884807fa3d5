#include "models/scheduler/placement.h"

#include <algorithm>
#include <set>

namespace traincast::models {
namespace {

/// Free nodes of each leaf, ascending.
std::vector<std::vector<int>> free_by_leaf(const std::vector<bool>& free, int nodes_per_leaf) {
  const int n = static_cast<int>(free.size());
  std::vector<std::vector<int>> leaves(static_cast<std::size_t>((n + nodes_per_leaf - 1) / nodes_per_leaf));
  for (int i = 0; i < n; ++i)
    if (free[static_cast<std::size_t>(i)]) leaves[static_cast<std::size_t>(i / nodes_per_leaf)].push_back(i);
  return leaves;
}

std::vector<int> packed(const std::vector<bool>& free, int count) {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(free.size()) && static_cast<int>(out.size()) < count; ++i)
    if (free[static_cast<std::size_t>(i)]) out.push_back(i);
  return out;
}

std::vector<int> spread(const std::vector<std::vector<int>>& leaves, int count) {
  std::vector<int> out;
  for (std::size_t round = 0; static_cast<int>(out.size()) < count; ++round) {
    for (const std::vector<int>& leaf : leaves) {
      if (round < leaf.size() && static_cast<int>(out.size()) < count) out.push_back(leaf[round]);
    }
  }
  return out;
}

std::vector<int> fewest_leaves(const std::vector<std::vector<int>>& leaves, int count) {
  const std::size_t need = static_cast<std::size_t>(count);
  std::size_t best = leaves.size();
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    if (leaves[l].size() >= need && (best == leaves.size() || leaves[l].size() < leaves[best].size())) best = l;
  }
  if (best != leaves.size()) return {leaves[best].begin(), leaves[best].begin() + static_cast<std::ptrdiff_t>(need)};
  std::vector<std::size_t> order(leaves.size());
  for (std::size_t l = 0; l < order.size(); ++l) order[l] = l;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return leaves[a].size() > leaves[b].size(); });
  std::vector<int> out;
  for (std::size_t l : order) {
    for (int node : leaves[l]) {
      if (out.size() == need) break;
      out.push_back(node);
    }
  }
  return out;
}

}  // namespace

std::vector<int> place_job(const std::vector<bool>& free, int nodes_per_leaf, int count, JobPlacement placement) {
  std::vector<int> out;
  switch (placement) {
    case JobPlacement::packed:
      out = packed(free, count);
      break;
    case JobPlacement::spread:
      out = spread(free_by_leaf(free, nodes_per_leaf), count);
      break;
    case JobPlacement::topology_aware:
      out = fewest_leaves(free_by_leaf(free, nodes_per_leaf), count);
      break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

int leaves_spanned(const std::vector<int>& nodes, int nodes_per_leaf) {
  std::set<int> leaves;
  for (int n : nodes) leaves.insert(n / nodes_per_leaf);
  return static_cast<int>(leaves.size());
}

}  // namespace traincast::models
