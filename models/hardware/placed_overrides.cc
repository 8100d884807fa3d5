// Cluster overrides as each job of a shared cluster sees them (placed_overrides.h).
#include "models/hardware/placed_overrides.h"

#include <cstdio>
#include <stdexcept>

#include "models/hardware/element_overrides.h"

namespace traincast::models {
namespace {

/// Whether the selector names something inside one node: a GPU, the node, a NIC, or a link whose
/// name (after "node<N>.") names no other node (a torus link, "node0.router->node1.router", does).
bool inside_one_node(const std::string& select) {
  const std::optional<SelectorNodes> n = selector_nodes(select);
  if (!n) return false;
  if (n->rest.empty() || n->rest[0] == '/') return true;
  return n->rest[0] == '.' && n->rest.find("node") == std::string::npos;
}

/// A NIC or one of its network directions: gone on a one-node sub-cluster.
bool network_nic(const std::string& rest) {
  if (rest.rfind("/nic", 0) == 0) return true;
  return rest.rfind(".nic", 0) == 0 && (rest.ends_with(".tx") || rest.ends_with(".rx"));
}

}  // namespace

std::optional<std::string> selector_not_per_job(const std::string& select) {
  if (inside_one_node(select)) return std::nullopt;
  // A resource name outside one node ("leaf0->spine1", a pooled "leaf0->spines", a torus
  // "node0.router->node1.router") is a link the jobs share; anything else names nothing here.
  const bool shared_link = select.find("->") != std::string::npos || select.find('.') != std::string::npos;
  return "\"" + select + "\" " +
         (shared_link ? "is a link between switches or nodes, which the jobs share; traincast cluster simulates each "
                        "job on a sub-cluster of its own nodes, which has no such link"
                      : "names no GPU, node, NIC or node-internal link") +
         " (expected, in traincast cluster, a selector inside the nodes a job is placed on: node<N>/gpu<K>, "
         "node<N>, node<A>-<B>, node<A>-<B>/gpu<K>, node<N>/nic<K> or a node's own link node<N>.<link>, e.g. "
         "node3/gpu5, node0-1, node2/nic0 or node0.gpu3.nvl_up" +
         (shared_link ? "; traincast run models this link for one job)" : ")");
}

std::optional<std::pair<int, std::string>> override_not_per_job(const ClusterSpec& spec) {
  for (std::size_t i = 0; i < spec.overrides.size(); ++i) {
    const ElementOverride& o = spec.overrides[i];
    if (o.missing.has_value()) continue;
    if (std::optional<std::string> why = selector_not_per_job(o.select))
      return std::make_pair(static_cast<int>(i), std::move(*why));
  }
  return std::nullopt;
}

std::vector<ElementOverride> placed_overrides(const ClusterSpec& spec, const std::vector<int>& nodes) {
  std::vector<ElementOverride> out;
  for (const ElementOverride& o : spec.overrides) {
    if (o.missing.has_value()) continue;
    const std::optional<SelectorNodes> n = selector_nodes(o.select);
    if (!n || !inside_one_node(o.select)) {
      const std::optional<std::pair<int, std::string>> why = override_not_per_job(spec);
      throw std::invalid_argument(why ? why->second : "\"" + o.select + "\" is not a node selector");
    }
    if (nodes.size() == 1 && network_nic(n->rest)) continue;
    for (std::size_t j = 0; j < nodes.size(); ++j) {
      if (nodes[j] < n->first || nodes[j] > n->last) continue;
      out.push_back(o);
      out.back().select = "node" + std::to_string(j) + n->rest;
    }
  }
  return out;
}

std::vector<int> overrides_left_out_of_one_node_job(const ClusterSpec& spec, int node) {
  std::vector<int> out;
  for (std::size_t i = 0; i < spec.overrides.size(); ++i) {
    const ElementOverride& o = spec.overrides[i];
    if (o.missing.has_value()) continue;
    const std::optional<SelectorNodes> n = selector_nodes(o.select);
    if (n && inside_one_node(o.select) && network_nic(n->rest) && n->first <= node && node <= n->last)
      out.push_back(static_cast<int>(i));
  }
  return out;
}

std::string overrides_key(const std::vector<ElementOverride>& overrides) {
  std::string out;
  for (const ElementOverride& o : overrides) {
    char buf[160];
    // %a: every double bit for bit.
    std::snprintf(buf, sizeof buf, "|%a|%a|%d|%a|%s%a", o.clock_factor, o.bandwidth_factor, o.failed ? 1 : 0,
                  o.power_cap_w, o.supply_c ? "s" : "-", o.supply_c.value_or(0.0));
    out.append(o.select).append(buf).append(";");
  }
  return out;
}

}  // namespace traincast::models
