// Per-element overrides: the selector grammar's parser and its resolution (element_overrides.h).
#include "models/hardware/element_overrides.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/hardware/cluster.h"

namespace traincast::models {
namespace {

/// A decimal number without sign or leading zero at the front of `s`, consumed; nullopt when none.
/// One beyond 2^31 - 1 (node99999999999) reads as 2^31 - 1, past every cluster's nodes and GPUs,
/// so it is refused as out of range with what exists (number_text quotes it as written); when
/// `digits` is not null it receives the digits as written.
std::optional<int> take_number(std::string_view& s, std::string_view* digits = nullptr) {
  std::size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  if (n == 0 || (n > 1 && s[0] == '0')) return std::nullopt;
  long long v = 0;
  constexpr long long kMax = std::numeric_limits<int>::max();
  for (std::size_t i = 0; i < n; ++i) v = std::min(kMax, v * 10 + (s[i] - '0'));
  if (digits != nullptr) *digits = s.substr(0, n);
  s.remove_prefix(n);
  return static_cast<int>(v);
}

bool take(std::string_view& s, std::string_view word) {
  if (s.substr(0, word.size()) != word) return false;
  s.remove_prefix(word.size());
  return true;
}

std::string range_text(const char* what, int count) {
  return count == 1 ? std::string(what) + "0" : std::string(what) + "0-" + std::to_string(count - 1);
}

/// Why node `digits` (as written) of a cluster of `nodes` node places does not exist: "no node20
/// (the cluster has node0-15)"; a number of 10 digits or more (past int range from 2147483648, and
/// past the simulator's 2^20 GPUs from 10^9) says that it is out of range and which indices are
/// accepted (fresh user 41: node0-99999999999 read "expected node<A>-<B> with A <= B").
std::string no_node(std::string_view digits, int nodes) {
  const std::string n(digits);
  if (digits.size() < 10) return "no node" + n + " (the cluster has " + range_text("node", nodes) + ")";
  return "node number " + n + " is out of range (expected a node index from 0 to " + std::to_string(nodes - 1) +
         ": the cluster has " + range_text("node", nodes) + ")";
}

/// As no_node for GPU or NIC `what` index `digits` of a node that has `count` of them.
std::string no_index(const char* what, std::string_view digits, std::string_view node, int count) {
  const std::string n(digits);
  const std::string has = count == 0 ? std::string("it has no compute NIC") : "it has " + range_text(what, count);
  if (digits.size() < 10 || count == 0)
    return "no " + std::string(what) + n + " on " + std::string(node) + " (" + has + ")";
  return std::string(what) + " number " + n + " is out of range (expected an index from 0 to " +
         std::to_string(count - 1) + " on " + std::string(node) + ": " + has + ")";
}

const char* kGrammar =
    "expected node<N>/gpu<K>, node<N>, node<A>-<B>, node<A>-<B>/gpu<K>, node<N>/nic<K>, or a link name as "
    "reports print it, e.g. node0.gpu3.nvl_up or leaf0->spine1";

/// Why NIC selector `select` names nothing on a cluster of one node in service, whose NICs are not
/// built (nothing crosses them): a one-node cluster, or one whose other nodes are drained (fresh
/// user 41: the drained case read "no GPU, NIC or link named \"node1.nic3.tx\"").
std::string one_node_nic(const Cluster& cluster, const std::string& select) {
  const std::string expected = std::string(" (expected a NIC of a cluster of 2 or more nodes") +
                               (cluster.drained_nodes().empty() ? "" : " in service") +
                               ", or a GPU or NVLink/PCIe link here)";
  if (cluster.drained_nodes().empty())
    return "\"" + select + "\": a one-node cluster has no network, so its NICs carry nothing" + expected;
  const Cluster::DrainedNode& d = cluster.drained_nodes().front();
  const std::size_t more = cluster.drained_nodes().size() - 1;
  return "\"" + select + "\": node" + std::to_string(cluster.fabric_slot(0)) + " is the only node in service (node" +
         std::to_string(d.slot) + " is drained: " + d.reason() +
         (more == 0 ? std::string() : "; and " + std::to_string(more) + " more drained node(s)") +
         "), so the job runs on one node, without a network, and its NICs carry nothing" + expected;
}

/// Whether `select` names a direction of a compute NIC by its resource name, node<N>.nic<K>.tx or .rx.
bool nic_direction_name(std::string_view s) {
  if (!take(s, "node") || !take_number(s) || !take(s, ".nic") || !take_number(s)) return false;
  return s == ".tx" || s == ".rx";
}

/// A selector that is no GPU or NIC form: one resource by its exact name.
ResolvedSelector resolve_resource_name(const Cluster& cluster, const std::string& select) {
  for (std::size_t r = 0; r < cluster.num_resources(); ++r)
    if (cluster.resource_name(static_cast<sim::ResourceId>(r)) == select)
      return {{}, {static_cast<sim::ResourceId>(r)}};
  if (cluster.num_nodes() == 1 && nic_direction_name(select))
    throw std::invalid_argument(one_node_nic(cluster, select));
  // Name what exists near it: the resources of the node it names, else the first few.
  // A switch link ("leaf0->spine3") lists the links leaving the same switch.
  std::string prefix;
  if (select.rfind("node", 0) == 0) prefix = select.substr(0, select.find('.') + 1);
  if (const std::size_t arrow = select.find("->"); arrow != std::string::npos) prefix = select.substr(0, arrow + 2);
  std::string near;
  int listed = 0;
  std::string pooled;  // adaptive routing's one resource for a leaf's up-links (docs/fabric.md)
  for (std::size_t r = 0; r < cluster.num_resources() && listed < 12; ++r) {
    const std::string& name = cluster.resource_name(static_cast<sim::ResourceId>(r));
    if (!prefix.empty() && name.rfind(prefix, 0) != 0) continue;
    near += (listed++ == 0 ? "" : ", ") + name;
    if (name.ends_with("->spines") || name.ends_with(".aggs")) pooled = name;
  }
  // A switch link that is not there: the fabric's switch links (fresh user 41: a rail-optimized
  // fabric's "leaf0->spine1" listed node0's GPU links and the grammar's leaf0->spine1 example).
  const bool switch_link = select.find("->") != std::string::npos && select.rfind("node", 0) != 0;
  if (listed == 0 && switch_link) {
    for (std::size_t r = 0; r < cluster.num_resources() && listed < 12; ++r) {
      const std::string& name = cluster.resource_name(static_cast<sim::ResourceId>(r));
      if (name.find("->") == std::string::npos || name.rfind("node", 0) == 0) continue;
      near += (listed++ == 0 ? "" : ", ") + name;
    }
    if (listed == 0)
      throw std::invalid_argument("no link named \"" + select +
                                  "\": this cluster's fabric has no switch-to-switch links (one leaf group, or a "
                                  "fabric without switches; expected a node's link or NIC, e.g. node0.nic0.tx)");
    throw std::invalid_argument("no link named \"" + select +
                                "\" (expected a switch link of this fabric, such as: " + near + ", ...)");
  }
  if (listed == 0)
    for (std::size_t r = 0; r < cluster.num_resources() && listed < 12; ++r)
      near += (listed++ == 0 ? "" : ", ") + cluster.resource_name(static_cast<sim::ResourceId>(r));
  const std::string why =
      pooled.empty() ? ""
                     : "; adaptive routing pools a leaf's up-links as one link, " + pooled +
                           ": one failed cable of k is bandwidth_factor (k-1)/k on it, or set cluster.fabric.routing "
                           "to d_mod_k or ecmp_hash for cables one by one";
  throw std::invalid_argument("no GPU, NIC or link named \"" + select + "\" (" + kGrammar + "; links such as: " + near +
                              ", ..." + why + ")");
}

}  // namespace

std::string override_setting(const ElementOverride& o) {
  const auto number = [](double v) {
    std::array<char, 32> buf{};
    return std::string(buf.data(), std::to_chars(buf.data(), buf.data() + buf.size(), v).ptr);
  };
  if (o.missing) return "missing: true";
  if (o.failed) return "failed: true";
  if (o.supply_c) return "supply_c " + number(*o.supply_c);
  if (o.power_cap_w != 0.0) return "power_cap_w " + number(o.power_cap_w);
  if (o.clock_factor != 0.0) return "clock_factor " + number(o.clock_factor);
  if (o.bandwidth_factor != 0.0) return "bandwidth_factor " + number(o.bandwidth_factor);
  return "";
}

std::optional<SelectorNodes> selector_nodes(const std::string& select) {
  std::string_view s = select;
  if (!take(s, "node")) return std::nullopt;
  const std::optional<int> first = take_number(s);
  if (!first) return std::nullopt;
  SelectorNodes out{*first, *first, {}};
  if (take(s, "-")) {
    const std::optional<int> last = take_number(s);
    // A first number past int range (read as its maximum) is refused as out of range, not here.
    if (!last || (*last < *first && *first != std::numeric_limits<int>::max())) return std::nullopt;
    out.last = *last;
  }
  out.rest = std::string(s);
  return out;
}

bool selector_reads_no_resource(const std::string& select) {
  std::string_view s = select;
  if (!take(s, "node") || s.empty() || s[0] < '0' || s[0] > '9') return false;  // a resource name
  return s.find('.') == std::string_view::npos && s.find("/nic") == std::string_view::npos;
}

ResolvedSelector resolve_selector(const Cluster& cluster, const std::string& select) {
  // A space before, after or inside (fresh user 43: " node3/gpu1" read "no GPU, NIC or link named",
  // "node3/gpu1 " "cannot read"): one message for all, with the place of the first.
  if (const std::size_t blank = select.find_first_of(" \t\r\n\v\f"); blank != std::string::npos)
    throw std::invalid_argument(
        "a selector has no spaces: \"" + select + "\" has " + (select[blank] == ' ' ? "a space" : "a blank character") +
        " at character " + std::to_string(blank + 1) + " of " + std::to_string(select.size()) + " (" + kGrammar + ")");
  std::string_view s = select;
  if (select.rfind("node[", 0) == 0)
    throw std::invalid_argument("write a node range as node<A>-<B>, e.g. node0-15 (got \"" + select + "\"; " +
                                kGrammar + ")");
  if (!take(s, "node") || s.empty() || s[0] < '0' || s[0] > '9') return resolve_resource_name(cluster, select);
  std::string_view rest = s, first_digits, last_digits;
  const std::optional<int> first = take_number(rest, &first_digits);
  if (!first) throw std::invalid_argument("bad node number in \"" + select + "\" (" + kGrammar + ")");
  int last = *first;
  last_digits = first_digits;
  if (take(rest, "-")) {
    const std::optional<int> b = take_number(rest, &last_digits);
    if (!b)
      throw std::invalid_argument("bad node range in \"" + select +
                                  "\" (expected node<A>-<B> with A <= B, e.g. node0-15)");
    last = *b;
  }
  // A first number past every cluster (node99999999999-3) is out of range, not a range out of order.
  if (last < *first && first_digits.size() < 10)
    throw std::invalid_argument("bad node range in \"" + select +
                                "\" (expected node<A>-<B> with A <= B, e.g. node0-15)");
  if (!rest.empty() && rest[0] == '.') return resolve_resource_name(cluster, select);  // "node0.gpu3.nvl_up"
  // Node numbers are fabric places (the scenario's numbering); a drained node has no GPU or NIC.
  const int nodes = cluster.fabric_slots(), gpn = cluster.gpus_per_node();
  if (*first >= nodes) throw std::invalid_argument(no_node(first_digits, nodes));
  if (last >= nodes) throw std::invalid_argument(no_node(last_digits, nodes));
  auto only_drained = [&]() {
    const Cluster::DrainedNode* d = nullptr;
    for (const Cluster::DrainedNode& x : cluster.drained_nodes())
      if (x.slot >= *first && x.slot <= last) d = d != nullptr ? d : &x;
    return std::invalid_argument("node" + std::to_string(d->slot) + " is drained (its GPU " + d->gpu +
                                 " is missing, cluster.overrides[" + std::to_string(d->override_index) +
                                 "]), so no job runs on it (expected a node in service)");
  };
  ResolvedSelector out;
  if (rest.empty()) {
    for (int n = *first; n <= last; ++n)
      if (const int c = cluster.node_at_slot(n); c >= 0)
        for (int k = 0; k < gpn; ++k) out.gpus.push_back(c * gpn + k);
    if (out.gpus.empty()) throw only_drained();
    return out;
  }
  const bool gpu = take(rest, "/gpu"), nic = !gpu && take(rest, "/nic");
  std::string_view k_digits;
  const std::optional<int> k = (gpu || nic) ? take_number(rest, &k_digits) : std::nullopt;
  if (!k || !rest.empty()) throw std::invalid_argument("cannot read \"" + select + "\" (" + kGrammar + ")");
  if (gpu) {
    if (*k >= gpn) throw std::invalid_argument(no_index("gpu", k_digits, "node" + std::to_string(*first), gpn));
    for (int n = *first; n <= last; ++n)
      if (const int c = cluster.node_at_slot(n); c >= 0) out.gpus.push_back(c * gpn + *k);
    if (out.gpus.empty()) throw only_drained();
    return out;
  }
  if (last != *first)
    throw std::invalid_argument("a NIC selector names one node (got \"" + select + "\"; expected node<N>/nic<K>, " +
                                "one override per node, e.g. \"node" + std::to_string(*first) + "/nic" +
                                std::to_string(*k) + "\")");
  if (cluster.node_at_slot(*first) < 0) throw only_drained();
  if (*k >= cluster.nics_per_node())
    throw std::invalid_argument(no_index("nic", k_digits, "node" + std::to_string(*first), cluster.nics_per_node()));
  const std::string nn = "node" + std::to_string(*first) + ".nic" + std::to_string(*k);
  if (cluster.num_nodes() == 1) throw std::invalid_argument(one_node_nic(cluster, select));
  for (const char* dir : {".tx", ".rx"}) {
    const ResolvedSelector one = resolve_resource_name(cluster, nn + dir);
    out.resources.push_back(one.resources.front());
  }
  return out;
}

void Cluster::apply_overrides() {
  std::vector<double> resource_factor;
  std::vector<int> nic_failed;  // node * nics + nic: 1 + the index of the override failing it, 0 = up
  for (std::size_t i = 0; i < spec_.overrides.size(); ++i) {
    const ElementOverride& o = spec_.overrides[i];
    const std::string at = "cluster.overrides[" + std::to_string(i) + "].";
    if (o.missing) continue;  // drain_missing_gpus
    ResolvedSelector sel;
    try {
      sel = resolve_selector(*this, o.select);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(at + "select: " + e.what());
    }
    const bool gpus = !sel.gpus.empty();
    if (o.supply_c) {
      apply_supply(at, o, sel);
      continue;
    }
    if (o.power_cap_w != 0.0) {
      if (!gpus || o.failed || o.clock_factor != 0.0 || o.bandwidth_factor != 0.0)
        throw std::invalid_argument(
            at + "power_cap_w: \"" + o.select + "\"" +
            (gpus ? " with another field (expected power_cap_w alone)" : " names a link or NIC (expected GPUs)"));
      if (!(o.power_cap_w > 0.0 && o.power_cap_w <= gpu_->tdp_w))
        throw std::invalid_argument(at + "power_cap_w: got " + std::to_string(o.power_cap_w) +
                                    " W (expected 0 < p <= " + std::to_string(gpu_->tdp_w) + " W, the TDP of " +
                                    gpu_->name + ")");
      if (gpu_power_cap_w_.empty()) gpu_power_cap_w_.assign(static_cast<std::size_t>(num_gpus()), 0.0);
      for (int g : sel.gpus) gpu_power_cap_w_[static_cast<std::size_t>(g)] = o.power_cap_w;
      continue;
    }
    if (o.failed) {
      if (gpus || o.clock_factor != 0.0 || o.bandwidth_factor != 0.0)
        throw std::invalid_argument(at + "failed: \"" + o.select + "\"" +
                                    (gpus ? " names GPUs (expected a NIC or a leaf up-link)"
                                          : " with a factor (expected failed or a factor, not both)"));
      for (sim::ResourceId r : sel.resources) fail_resource(static_cast<int>(i), o.select, r, nic_failed);
      continue;
    }
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
      if (resource_factor.empty()) resource_factor.assign(edges_->size(), 1.0);
      for (sim::ResourceId r : sel.resources) resource_factor[r] = f;
    }
  }
  for (int g = 0; g < num_gpus(); ++g)
    if (clock_factor(g) < 1.0 || power_cap_w(g) > 0.0 || !std::isnan(supply_c(node_of(g)))) slowed_gpus_.push_back(g);
  for (std::size_t r = 0; r < resource_factor.size(); ++r)
    if (resource_factor[r] < 1.0) {
      (*edges_)[r].capacity_bytes_per_s *= resource_factor[r];
      scaled_resources_.emplace_back(static_cast<sim::ResourceId>(r), resource_factor[r]);
    }
  settle_failures(nic_failed);
}

void Cluster::fail_resource(int i, const std::string& select, sim::ResourceId r, std::vector<int>& nic_failed) {
  auto index_in = [r](const std::vector<sim::ResourceId>& ids) {
    const auto it = std::find(ids.begin(), ids.end(), r);
    return it == ids.end() ? -1 : static_cast<int>(it - ids.begin());
  };
  int j = index_in(nic_tx_);
  if (j < 0) j = index_in(nic_rx_);
  if (j >= 0) {  // a NIC port is down both ways
    if (nic_failed.empty()) nic_failed.assign(nic_tx_.size(), 0);
    nic_failed[static_cast<std::size_t>(j)] = i + 1;
    failed_resources_.push_back(nic_tx_[static_cast<std::size_t>(j)]);
    failed_resources_.push_back(nic_rx_[static_cast<std::size_t>(j)]);
    return;
  }
  const bool pooled = routing_ == FabricRouting::adaptive;
  j = pooled ? -1 : index_in(leaf_up_);
  if (j < 0 && !pooled) j = index_in(spine_down_);
  if (j >= 0) {  // a cable between a leaf and a spine (aggregation) switch: both directions
    if (up_link_failed_.empty()) up_link_failed_.assign(leaf_up_.size(), 0);
    up_link_failed_[static_cast<std::size_t>(j)] = i + 1;
    failed_resources_.push_back(leaf_up_[static_cast<std::size_t>(j)]);
    failed_resources_.push_back(spine_down_[static_cast<std::size_t>(j)]);
    return;
  }
  std::string why = link_kind(r) == LinkKind::nvlink   ? "an NVLink link"
                    : link_kind(r) == LinkKind::pcie   ? "a PCIe link"
                    : link_kind(r) == LinkKind::socket ? "a CPU socket link"
                                                       : "a fabric link";
  if (pooled && (index_in(leaf_up_) >= 0 || index_in(spine_down_) >= 0))
    why =
        "the pooled up-links of a leaf under adaptive routing (one failed cable of k: bandwidth_factor (k-1)/k "
        "on it)";
  throw std::invalid_argument("cluster.overrides[" + std::to_string(i) + "].failed: \"" + select + "\" is " + why +
                              ", which routes cannot avoid here (expected a compute NIC, node<N>/nic<K>, or a leaf "
                              "up-link, leafA->spineB, under d_mod_k or ecmp_hash routing; bandwidth_factor for a "
                              "degraded link)");
}

void Cluster::apply_supply(const std::string& at, const ElementOverride& o, const ResolvedSelector& sel) {
  // Whole nodes only: every GPU of each node the selector names.
  const std::size_t gpn = static_cast<std::size_t>(gpus_per_node_);
  bool whole = !sel.gpus.empty() && sel.gpus.size() % gpn == 0;
  for (std::size_t i = 0; whole && i < sel.gpus.size(); ++i)
    whole = local_rank(sel.gpus[i]) == static_cast<int>(i % gpn);
  if (!whole || o.failed || o.power_cap_w != 0.0 || o.clock_factor != 0.0 || o.bandwidth_factor != 0.0)
    throw std::invalid_argument(at + "supply_c: \"" + o.select + "\"" +
                                (whole ? " with another field (expected supply_c alone)"
                                       : " is not a whole node (expected node<N> or node<A>-<B>)"));
  if (!std::isfinite(*o.supply_c)) throw std::invalid_argument(at + "supply_c: not a finite temperature");
  if (node_supply_c_.empty())
    node_supply_c_.assign(static_cast<std::size_t>(num_nodes_), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < sel.gpus.size(); i += gpn)
    node_supply_c_[static_cast<std::size_t>(node_of(sel.gpus[i]))] = *o.supply_c;
}

int Cluster::failed_nics(int node) const {
  int n = 0;
  for (int k = 0; k < nics_per_node_; ++k) n += nic_up(node, k) ? 0 : 1;
  return n;
}

void Cluster::settle_failures(const std::vector<int>& nic_failed) {
  std::sort(failed_resources_.begin(), failed_resources_.end());
  failed_resources_.erase(std::unique(failed_resources_.begin(), failed_resources_.end()), failed_resources_.end());
  const int nics = nics_per_node_;
  if (!nic_failed.empty()) {
    serving_nic_.resize(nic_failed.size());
    for (int n = 0; n < num_nodes_; ++n) {
      const std::size_t base = static_cast<std::size_t>(n) * nics;
      for (int k = 0; k < nics; ++k) {
        int pick = -1;
        for (int step = 0; step < nics && pick < 0; ++step) {  // same socket first
          const int c = (k + step) % nics;
          if (nic_failed[base + c] == 0 && socket_of_nic(c) == socket_of_nic(k)) pick = c;
        }
        for (int step = 0; step < nics && pick < 0; ++step)
          if (nic_failed[base + (k + step) % nics] == 0) pick = (k + step) % nics;
        if (pick < 0 && num_nodes_ > 1)
          throw std::invalid_argument(
              "cluster.overrides[" +
              std::to_string(*std::max_element(nic_failed.begin() + static_cast<std::ptrdiff_t>(base),
                                               nic_failed.begin() + static_cast<std::ptrdiff_t>(base) + nics) -
                             1) +
              "].failed: every compute NIC of node" + std::to_string(n) + " is failed, so node" + std::to_string(n) +
              " reaches no other node (expected at least one of nic0-" + std::to_string(nics - 1) + " up)");
        serving_nic_[base + k] = pick < 0 ? k : pick;
      }
    }
  }
  if (!nic_failed.empty() && spec_.fabric.kind == FabricKind::rail_optimized && leaf_up_.empty()) {
    // A rail-only fabric (no spine joins the rails): two nodes need a rail up at both.
    std::vector<int> broken;
    for (int n = 0; n < num_nodes_; ++n)
      if (failed_nics(n) > 0) broken.push_back(n);
    for (std::size_t a = 0; a < broken.size(); ++a)
      for (std::size_t b = a + 1; b < broken.size(); ++b) {
        bool common = false;
        for (int k = 0; k < nics && !common; ++k) common = nic_up(broken[a], k) && nic_up(broken[b], k);
        if (!common)
          throw std::invalid_argument(
              "cluster.overrides[" + std::to_string(*std::max_element(nic_failed.begin(), nic_failed.end()) - 1) +
              "].failed: node" + std::to_string(broken[a]) + " and node" + std::to_string(broken[b]) +
              " have no rail with a NIC up at both, and no spine joins the rails of this rail-optimized fabric "
              "(expected fewer failed NICs)");
      }
  }
  if (up_link_failed_.empty()) return;
  // Every two leaves must share an up-link that is up at both (the spine or aggregation switch
  // joining them); only leaves with a failed cable can break that.
  const int ups = static_cast<int>(leaf_up_.size()) / std::max(1, num_leaves_);
  std::vector<int> broken;
  for (int l = 0; l < num_leaves_; ++l)
    for (int k = 0; k < ups; ++k)
      if (up_link_failed_[static_cast<std::size_t>(l) * ups + k] != 0) {
        broken.push_back(l);
        break;
      }
  for (int a : broken)
    for (int b = 0; b < num_leaves_; ++b) {
      if (b == a) continue;
      bool common = false;
      for (int k = 0; k < ups && !common; ++k)
        common = up_link_failed_[static_cast<std::size_t>(a) * ups + k] == 0 &&
                 up_link_failed_[static_cast<std::size_t>(b) * ups + k] == 0;
      int last = 0;  // the override that failed a's last up-link
      for (int k = 0; k < ups; ++k) last = std::max(last, up_link_failed_[static_cast<std::size_t>(a) * ups + k]);
      if (!common)
        throw std::invalid_argument("cluster.overrides[" + std::to_string(last - 1) + "].failed: leaf" +
                                    std::to_string(a) + " and leaf" + std::to_string(b) +
                                    " have no up-link left to a common spine or aggregation switch, so their nodes "
                                    "cannot reach each other (expected fewer failed up-links)");
    }
}

std::string gpu_selector_name(const Cluster& cluster, int gpu) {
  return "node" + std::to_string(cluster.fabric_slot(cluster.node_of(gpu))) + "/gpu" +
         std::to_string(cluster.local_rank(gpu));
}

std::vector<std::pair<int, int>> drained_nodes_of(const ClusterSpec& spec) {
  std::vector<std::pair<int, int>> out;
  // A torus drains nothing: Cluster refuses `missing` there (fresh user 41: the job's GPU count was
  // then refused as well, at workload.parallel.dp, counting a node as drained that never was).
  if (spec.fabric.kind == FabricKind::torus) return out;
  for (std::size_t i = 0; i < spec.overrides.size(); ++i) {
    const ElementOverride& o = spec.overrides[i];
    const bool alone = !o.failed && o.clock_factor == 0.0 && o.bandwidth_factor == 0.0 && o.power_cap_w == 0.0 &&
                       !o.supply_c.has_value();
    if (!o.missing.value_or(false) || !alone) continue;
    std::string_view s = o.select;
    std::optional<int> node;
    if (take(s, "node")) node = take_number(s);
    if (!node || *node >= spec.num_nodes || !take(s, "/gpu") || !take_number(s) || !s.empty()) continue;
    const int n = *node;
    if (std::none_of(out.begin(), out.end(), [n](const std::pair<int, int>& d) { return d.first == n; }))
      out.emplace_back(n, static_cast<int>(i));
  }
  std::sort(out.begin(), out.end());
  return out;
}

int nodes_in_service(const ClusterSpec& spec) {
  return spec.num_nodes - static_cast<int>(drained_nodes_of(spec).size());
}

int Cluster::node_at_slot(int slot) const {
  if (slot_of_node_.empty()) return slot;
  const auto it = std::lower_bound(slot_of_node_.begin(), slot_of_node_.end(), slot);
  return it != slot_of_node_.end() && *it == slot ? static_cast<int>(it - slot_of_node_.begin()) : -1;
}

void Cluster::drain_missing_gpus(const ClusterSpec& spec) {
  // Slurm's rule (slurm.conf(5) and gres.conf(5): a node whose GPUs found at slurmd start are
  // fewer than its configured Gres=gpu:N is set DRAIN, reason "gres/gpu count reported lower than
  // configured"): a node with a missing GPU runs no job. Its switch ports stay where they are.
  const int slots = spec.num_nodes;
  std::vector<char> drained(static_cast<std::size_t>(std::max(0, slots)), 0);
  for (std::size_t i = 0; i < spec.overrides.size(); ++i) {
    const ElementOverride& o = spec.overrides[i];
    if (!o.missing) continue;
    const std::string at = "cluster.overrides[" + std::to_string(i) + "].";
    if (!*o.missing)
      throw std::invalid_argument(at +
                                  "missing: false (expected missing: true, or no missing field: a GPU is "
                                  "present unless an override says otherwise)");
    if (o.failed || o.clock_factor != 0.0 || o.bandwidth_factor != 0.0 || o.power_cap_w != 0.0 || o.supply_c)
      throw std::invalid_argument(at +
                                  "missing: set with another field (expected missing: true alone: a missing GPU "
                                  "has no clock, power cap or supply temperature)");
    std::string_view s = o.select, node_digits, gpu_digits;
    std::optional<int> node, gpu;
    if (take(s, "node")) node = take_number(s, &node_digits);
    if (node && take(s, "/gpu")) gpu = take_number(s, &gpu_digits);
    if (!node || !gpu || !s.empty())
      throw std::invalid_argument(at + "missing: \"" + o.select +
                                  "\" is not one GPU (expected node<N>/gpu<K>: a node is drained for each missing "
                                  "GPU it has)");
    if (*node >= slots) throw std::invalid_argument(at + "select: " + no_node(node_digits, slots));
    if (*gpu >= gpus_per_node_)
      throw std::invalid_argument(
          at + "select: " + no_index("gpu", gpu_digits, "node" + std::string(node_digits), gpus_per_node_));
    if (spec.fabric.kind == FabricKind::torus)
      throw std::invalid_argument(at +
                                  "missing: a torus routes through every node's router, so a drained node "
                                  "would still carry traffic (expected a fat_tree or rail_optimized fabric)");
    if (drained[static_cast<std::size_t>(*node)] != 0) continue;
    drained[static_cast<std::size_t>(*node)] = 1;
    drained_.push_back({*node, o.select, static_cast<int>(i)});
  }
  if (drained_.empty()) return;
  std::sort(drained_.begin(), drained_.end(),
            [](const DrainedNode& a, const DrainedNode& b) { return a.slot < b.slot; });
  if (static_cast<int>(drained_.size()) == slots)
    throw std::invalid_argument("cluster.overrides[" + std::to_string(drained_.back().override_index) +
                                "].missing: every node is drained (expected at least one node with all its GPUs)");
  for (int n = 0; n < slots; ++n)
    if (drained[static_cast<std::size_t>(n)] == 0) slot_of_node_.push_back(n);
  num_nodes_ = static_cast<int>(slot_of_node_.size());
  // Node groups hold the nodes in service: each loses its drained nodes, in node order.
  int first = 0;
  int slot = 0;
  for (NodeGroup& g : groups_) {
    const int end = slot + g.num_nodes;
    for (; slot < end; ++slot) g.num_nodes -= drained[static_cast<std::size_t>(slot)] != 0 ? 1 : 0;
    g.first_node = first;
    first += g.num_nodes;  // a group left empty stays, so group indices stay the scenario's
  }
}

}  // namespace traincast::models
