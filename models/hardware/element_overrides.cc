// Per-element overrides: the selector grammar's parser and its resolution (element_overrides.h).
#include "models/hardware/element_overrides.h"

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/hardware/cluster.h"

namespace traincast::models {
namespace {

/// A decimal number without sign or leading zero at the front of `s`, consumed; nullopt when none
/// (or one beyond 2^31 - 1).
std::optional<int> take_number(std::string_view& s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  if (n == 0 || n > 9 || (n > 1 && s[0] == '0')) return std::nullopt;
  int v = 0;
  for (std::size_t i = 0; i < n; ++i) v = v * 10 + (s[i] - '0');
  s.remove_prefix(n);
  return v;
}

bool take(std::string_view& s, std::string_view word) {
  if (s.substr(0, word.size()) != word) return false;
  s.remove_prefix(word.size());
  return true;
}

std::string range_text(const char* what, int count) {
  return count == 1 ? std::string(what) + "0" : std::string(what) + "0-" + std::to_string(count - 1);
}

const char* kGrammar =
    "expected node<N>/gpu<K>, node<N>, node<A>-<B>, node<A>-<B>/gpu<K>, node<N>/nic<K>, or a link name as "
    "reports print it, e.g. node0.gpu3.nvl_up or leaf0->spine1";

/// A selector that is no GPU or NIC form: one resource by its exact name.
ResolvedSelector resolve_resource_name(const Cluster& cluster, const std::string& select) {
  for (std::size_t r = 0; r < cluster.num_resources(); ++r)
    if (cluster.resource_name(static_cast<sim::ResourceId>(r)) == select)
      return {{}, {static_cast<sim::ResourceId>(r)}};
  // Name what exists near it: the resources of the node it names, else the first few.
  std::string prefix;
  if (select.rfind("node", 0) == 0) prefix = select.substr(0, select.find('.') + 1);
  std::string near;
  int listed = 0;
  for (std::size_t r = 0; r < cluster.num_resources() && listed < 12; ++r) {
    const std::string& name = cluster.resource_name(static_cast<sim::ResourceId>(r));
    if (!prefix.empty() && name.rfind(prefix, 0) != 0) continue;
    near += (listed++ == 0 ? "" : ", ") + name;
  }
  if (listed == 0)
    for (std::size_t r = 0; r < cluster.num_resources() && listed < 12; ++r)
      near += (listed++ == 0 ? "" : ", ") + cluster.resource_name(static_cast<sim::ResourceId>(r));
  throw std::invalid_argument("no GPU, NIC or link named \"" + select + "\" (" + kGrammar + "; links such as: " + near +
                              ", ...)");
}

}  // namespace

ResolvedSelector resolve_selector(const Cluster& cluster, const std::string& select) {
  std::string_view s = select;
  if (select.rfind("node[", 0) == 0)
    throw std::invalid_argument("write a node range as node<A>-<B>, e.g. node0-15 (got \"" + select + "\"; " +
                                kGrammar + ")");
  if (!take(s, "node") || s.empty() || s[0] < '0' || s[0] > '9') return resolve_resource_name(cluster, select);
  std::string_view rest = s;
  const std::optional<int> first = take_number(rest);
  if (!first) throw std::invalid_argument("bad node number in \"" + select + "\" (" + kGrammar + ")");
  int last = *first;
  if (take(rest, "-")) {
    const std::optional<int> b = take_number(rest);
    if (!b || *b < *first)
      throw std::invalid_argument("bad node range in \"" + select +
                                  "\" (expected node<A>-<B> with A <= B, e.g. node0-15)");
    last = *b;
  }
  if (!rest.empty() && rest[0] == '.') return resolve_resource_name(cluster, select);  // "node0.gpu3.nvl_up"
  const int nodes = cluster.num_nodes(), gpn = cluster.gpus_per_node();
  if (last >= nodes)
    throw std::invalid_argument("no node" + std::to_string(last) + " (the cluster has " + range_text("node", nodes) +
                                ")");
  ResolvedSelector out;
  if (rest.empty()) {
    for (int n = *first; n <= last; ++n)
      for (int k = 0; k < gpn; ++k) out.gpus.push_back(n * gpn + k);
    return out;
  }
  const bool gpu = take(rest, "/gpu"), nic = !gpu && take(rest, "/nic");
  const std::optional<int> k = (gpu || nic) ? take_number(rest) : std::nullopt;
  if (!k || !rest.empty()) throw std::invalid_argument("cannot read \"" + select + "\" (" + kGrammar + ")");
  if (gpu) {
    if (*k >= gpn)
      throw std::invalid_argument("no gpu" + std::to_string(*k) + " on node" + std::to_string(*first) + " (it has " +
                                  range_text("gpu", gpn) + ")");
    for (int n = *first; n <= last; ++n) out.gpus.push_back(n * gpn + *k);
    return out;
  }
  if (last != *first) throw std::invalid_argument("a NIC selector names one node (got \"" + select + "\")");
  if (*k >= cluster.nics_per_node())
    throw std::invalid_argument("no nic" + std::to_string(*k) + " on node" + std::to_string(*first) +
                                (cluster.nics_per_node() == 0
                                     ? std::string(" (it has no compute NIC)")
                                     : " (it has " + range_text("nic", cluster.nics_per_node()) + ")"));
  const std::string nn = "node" + std::to_string(*first) + ".nic" + std::to_string(*k);
  for (const char* dir : {".tx", ".rx"}) {
    const ResolvedSelector one = resolve_resource_name(cluster, nn + dir);
    out.resources.push_back(one.resources.front());
  }
  return out;
}

void Cluster::apply_overrides() {
  std::vector<double> resource_factor;
  for (std::size_t i = 0; i < spec_.overrides.size(); ++i) {
    const ElementOverride& o = spec_.overrides[i];
    const std::string at = "cluster.overrides[" + std::to_string(i) + "].";
    ResolvedSelector sel;
    try {
      sel = resolve_selector(*this, o.select);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(at + "select: " + e.what());
    }
    const bool gpus = !sel.gpus.empty();
    const char* wanted = gpus ? "clock_factor" : "bandwidth_factor";
    const char* other = gpus ? "bandwidth_factor" : "clock_factor";
    const double f = gpus ? o.clock_factor : o.bandwidth_factor;
    if ((gpus ? o.bandwidth_factor : o.clock_factor) != 0.0)
      throw std::invalid_argument(at + other + ": \"" + o.select + "\" names " + (gpus ? "GPUs" : "a link or NIC") +
                                  " (expected " + wanted + " only)");
    if (!(f > 0.0 && f <= 1.0))
      throw std::invalid_argument(at + wanted + ": got " + std::to_string(f) + " (expected 0 < f <= 1" +
                                  (f > 1.0 ? std::string(": an element cannot run faster than its datasheet") : "") +
                                  ")");
    if (gpus) {
      if (gpu_clock_factor_.empty()) gpu_clock_factor_.assign(static_cast<std::size_t>(num_gpus()), 1.0);
      for (int g : sel.gpus) gpu_clock_factor_[static_cast<std::size_t>(g)] = f;
    } else {
      if (resource_factor.empty()) resource_factor.assign(edges_.size(), 1.0);
      for (sim::ResourceId r : sel.resources) resource_factor[r] = f;
    }
  }
  for (std::size_t g = 0; g < gpu_clock_factor_.size(); ++g)
    if (gpu_clock_factor_[g] < 1.0) slowed_gpus_.push_back(static_cast<int>(g));
  for (std::size_t r = 0; r < resource_factor.size(); ++r)
    if (resource_factor[r] < 1.0) {
      edges_[r].capacity_bytes_per_s *= resource_factor[r];
      scaled_resources_.emplace_back(static_cast<sim::ResourceId>(r), resource_factor[r]);
    }
}

std::string gpu_selector_name(const Cluster& cluster, int gpu) {
  return "node" + std::to_string(cluster.node_of(gpu)) + "/gpu" + std::to_string(cluster.local_rank(gpu));
}

}  // namespace traincast::models
