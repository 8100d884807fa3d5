// Generated collective scenarios and the collective properties (issue 16): scenario text, runs
// through models/io and the collective engine, checks, shrinking.

#include "tests/properties/net_draws.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "models/calibration/calibration_profile.h"
#include "models/collectives/collective_engine.h"
#include "models/collectives/nccl_tests.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/hardware/node_template_text.h"
#include "models/io/scenario_io.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::properties {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

int gpus_per_node(const NetDraw& d) { return models::find_builtin_node_template(d.node_template).gpus_per_node; }

std::string nic_of(const NetDraw& d) {
  return d.nic.empty() ? models::find_builtin_node_template(d.node_template).nic : d.nic;
}

int nics_of(const NetDraw& d) {
  return d.nics_per_node > 0 ? d.nics_per_node : models::find_builtin_node_template(d.node_template).nics;
}

std::string gpu_list(const NetDraw& d) {
  if (d.group_nodes == 0) return "";
  const int g = gpus_per_node(d);
  return std::to_string(d.first_node * g) + "-" + std::to_string((d.first_node + d.group_nodes) * g - 1);
}

/// The in-memory profile of rate_scale: every link kind at its default efficiency x the scale.
std::shared_ptr<const models::CalibrationProfile> rate_profile(const models::ClusterSpec& spec, double scale) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const models::Cluster cluster(spec, net);
  const models::CollectiveEngine engine(sim, net, cluster);
  auto p = std::make_shared<models::CalibrationProfile>();
  for (int k = 0; k < static_cast<int>(p->link_efficiency.size()); ++k)
    p->link_efficiency[k] = engine.default_efficiency(static_cast<models::LinkKind>(k)) * scale;
  return p;
}

models::Scenario load(const NetDraw& d) {
  models::Scenario sc = io::load_scenario_text(scenario_text(d), d.id + ".textproto", io::Format::text);
  if (d.rate_scale != 1.0) sc.cluster.profile = rate_profile(sc.cluster, d.rate_scale);
  return sc;
}

std::vector<int> group_gpus(const NetDraw& d) {
  std::vector<int> gpus;
  if (d.group_nodes == 0) return gpus;
  const int g = gpus_per_node(d);
  for (int i = d.first_node * g; i < (d.first_node + d.group_nodes) * g; ++i) gpus.push_back(i);
  return gpus;
}

std::string describe(const NetOutcome& o) { return fmt(o.time_s * 1e6) + " us (" + o.choice + ")"; }

}  // namespace

CheckResult monotone(const NetDraw& d, const std::string& base_what, const NetOutcome& base,
                     const std::string& better_what, const NetOutcome& better) {
  CheckResult r;
  const double e = excess(base.time_s, better.time_s);
  r.detail = base_what + ": " + describe(base) + "; " + better_what + ": " + describe(better) + "; " + fmt(e * 100) +
             " % slower";
  if (e <= kCollectiveStrict) return r;
  if (!d.forced() && better.choice != base.choice && e <= kTunerSwitch) {
    r.tuner_switch = true;
    return r;
  }
  r.violated = true;
  return r;
}

namespace {

const std::vector<std::vector<std::string>>& nic_families() {
  static const std::vector<std::vector<std::string>> f{{"IB-EDR-100", "IB-HDR-200", "IB-NDR-400", "IB-XDR-800"},
                                                       {"RoCE-100GbE", "RoCE-200GbE", "RoCE-400GbE"}};
  return f;
}

/// (slower, faster) adjacent NICs of the draw's NIC family around its NIC; empty when none.
std::pair<std::string, std::string> nic_pair(const NetDraw& d) {
  const std::string nic = nic_of(d);
  for (const auto& fam : nic_families()) {
    const auto it = std::find(fam.begin(), fam.end(), nic);
    if (it == fam.end()) continue;
    if (it + 1 != fam.end()) return {*it, *(it + 1)};
    return {*(it - 1), *it};
  }
  return {};
}

const std::vector<double> kOversubscription{1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 3.25, 4.0};
const std::vector<int> kNics{2, 3, 4, 6, 8};

CheckResult less_oversubscription(const NetDraw& d) {
  if (d.oversubscription <= 1.0 || d.num_nodes <= d.nodes_per_leaf) return not_applicable();
  NetDraw better = d;
  better.oversubscription =
      *(std::lower_bound(kOversubscription.begin(), kOversubscription.end(), d.oversubscription) - 1);
  return monotone(d, "oversubscription " + fmt(d.oversubscription), run_net(d),
                  "oversubscription " + fmt(better.oversubscription), run_net(better));
}
Sides less_oversubscription_side(const NetDraw& d) {
  const double o = *(std::lower_bound(kOversubscription.begin(), kOversubscription.end(), d.oversubscription) - 1);
  return {"", "--set cluster.fabric.oversubscription=" + fmt(o)};
}

CheckResult faster_nic(const NetDraw& d) {
  const auto [slow, fast] = nic_pair(d);
  if (slow.empty()) return not_applicable();
  NetDraw a = d, b = d;
  a.nic = slow;
  b.nic = fast;
  return monotone(d, "nic " + slow, run_net(a), "nic " + fast, run_net(b));
}
Sides faster_nic_side(const NetDraw& d) {
  const auto [slow, fast] = nic_pair(d);
  return {"--set cluster.nic=" + slow, "--set cluster.nic=" + fast};
}

std::pair<int, int> nics_pair(const NetDraw& d) {
  const int n = nics_of(d);
  const auto it = std::upper_bound(kNics.begin(), kNics.end(), n);
  if (it != kNics.end()) return {n, *it};
  return {*(std::lower_bound(kNics.begin(), kNics.end(), n) - 1), n};
}

CheckResult more_nics(const NetDraw& d) {
  // Every template: the PCIe servers' drawn NIC count against the next, the DGX/HGX nodes' 8 NICs
  // against 6 (NVLS tree's heads, one per NIC: its pipeline fill must not grow with them).
  const auto [few, many] = nics_pair(d);
  NetDraw a = d, b = d;
  a.nics_per_node = few;
  b.nics_per_node = many;
  return monotone(d, std::to_string(few) + " NICs", run_net(a), std::to_string(many) + " NICs", run_net(b));
}
Sides more_nics_side(const NetDraw& d) {
  const auto [few, many] = nics_pair(d);
  return {"--set cluster.nics_per_node=" + std::to_string(few), "--set cluster.nics_per_node=" + std::to_string(many)};
}

/// More NICs than GPUs (issue 16): a node drawn at the largest NIC count (8, one per GPU) against
/// 16, two per GPU. NCCL's search gives each GPU its local NICs (ncclTopoGetLocalNet) and never
/// keeps fewer channels x bandwidth than a subset of the NICs gives, so 16 is never slower.
CheckResult more_nics_than_gpus(const NetDraw& d) {
  if (nics_of(d) != kNics.back() || gpus_per_node(d) != kNics.back()) return not_applicable();
  NetDraw b = d;
  b.nics_per_node = 2 * kNics.back();
  return monotone(d, std::to_string(kNics.back()) + " NICs", run_net(d), std::to_string(b.nics_per_node) + " NICs",
                  run_net(b));
}
Sides more_nics_than_gpus_side(const NetDraw&) {
  return {"--set cluster.nics_per_node=" + std::to_string(kNics.back()),
          "--set cluster.nics_per_node=" + std::to_string(2 * kNics.back())};
}

/// All link rates x2 halve the transfer time: with T(s) = L + X / s at rate scales s = 0.2, 0.4,
/// 0.8 (L: the size-independent latency, whatever its parts), T(0.2) = T(0.8) + 6 (T(0.4) - T(0.8)).
/// Forced ring Simple only: LL/LL128 and tree add NCCL's per-channel bandwidth maxima, which are
/// software constants, not link rates. NCCL's search picks its channels from discrete speed
/// arrays, so the channel count may change with the rates; the time must still scale.
CheckResult rates_x2(const NetDraw& d) {
  if (d.algorithm != "ring" || d.protocol != "simple") return not_applicable();
  NetDraw a = d, b = d, c = d;
  a.rate_scale = 0.2;
  b.rate_scale = 0.4;
  c.rate_scale = 0.8;
  const NetOutcome ta = run_net(a), tb = run_net(b), tc = run_net(c);
  CheckResult r;
  const double x = tb.time_s - tc.time_s;  // transfer time at scale 0.8
  const double predicted = tc.time_s + 3 * x;
  const double err = x > 0 ? std::fabs(ta.time_s - predicted) / (4 * x) : 1.0;
  r.detail = "rates x0.2/x0.4/x0.8: " + describe(ta) + ", " + describe(tb) + ", " + describe(tc) +
             "; transfer time at x0.2 " + fmt((ta.time_s - tc.time_s + x) * 1e6) + " us, expected " + fmt(4 * x * 1e6) +
             " us (" + fmt(err * 100) + " % off)";
  r.violated = err > kCollectiveStrict;
  return r;
}
Sides rates_x2_side(const NetDraw&) {
  return {"--profile P (link_efficiency: every kind's default x0.2, then x0.4)",
          "--profile P (link_efficiency: every kind's default x0.8)"};
}

/// The first half of the leaves' nodes against the second half: a symmetry of the fat tree.
CheckResult relabel_nodes(const NetDraw& d) {
  const int leaves = (d.num_nodes + d.nodes_per_leaf - 1) / d.nodes_per_leaf;
  int half = 0;
  if (d.num_nodes % d.nodes_per_leaf == 0 && leaves >= 2) half = (leaves / 2) * d.nodes_per_leaf;
  if (leaves == 1 && d.num_nodes >= 4) half = d.num_nodes / 2;
  if (half < 2) return not_applicable();
  NetDraw a = d, b = d;
  a.group_nodes = b.group_nodes = half;
  b.first_node = half;
  const NetOutcome ta = run_net(a), tb = run_net(b);
  CheckResult r;
  const double e = std::fabs(excess(ta.time_s, tb.time_s));
  r.detail = "nodes 0-" + std::to_string(half - 1) + ": " + describe(ta) + "; nodes " + std::to_string(half) + "-" +
             std::to_string(2 * half - 1) + ": " + describe(tb) + "; " + fmt(e * 100) + " % apart";
  r.violated = e > kCollectiveStrict || ta.choice != tb.choice;
  return r;
}
Sides relabel_side(const NetDraw& d) {
  const int leaves = (d.num_nodes + d.nodes_per_leaf - 1) / d.nodes_per_leaf;
  const int half = leaves == 1 ? d.num_nodes / 2 : (leaves / 2) * d.nodes_per_leaf;
  const int g = gpus_per_node(d);
  return {"--gpus 0-" + std::to_string(half * g - 1),
          "--gpus " + std::to_string(half * g) + "-" + std::to_string(2 * half * g - 1)};
}

struct DoneCount : models::CollectiveListener {
  void on_collective_done(std::uint64_t) override { ++done; }
  int done = 0;
};

/// Bytes conserved: on a forced ring across nodes every byte a NIC sends is received by a NIC,
/// every byte up a leaf comes down a leaf, and each of the C channels' rings crosses every node
/// boundary once with its share, so the NICs carry nodes x (ring edge bytes) = nodes x
/// 2 (n-1)/n S (all_reduce) or nodes x (n-1)/n S (all_gather, reduce_scatter) in all.
CheckResult bytes_conserved(const NetDraw& d) {
  if (d.algorithm != "ring" || d.group_nodes != 0) return not_applicable();
  const models::Scenario sc = load(d);
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const models::Cluster cluster(sc.cluster, net);
  models::CollectiveEngine engine(sim, net, cluster);
  const models::NcclTestsOp op = models::parse_nccl_tests_op(d.op);
  const int n = cluster.num_gpus();
  models::CollectiveCall call;
  call.op = models::collective_op_of(op);
  for (int i = 0; i < n; ++i) call.ranks.push_back(i);
  call.bytes = models::nccl_tests_size(op, d.bytes, n, 4).bytes;
  DoneCount done;
  engine.start(call, &done, 0);
  sim.run();
  double tx = 0, rx = 0, up = 0, down = 0;
  for (const models::ClusterEdge& e : cluster.edges()) {
    const double b = net.stats(e.resource).bytes_carried;
    if (e.kind == models::LinkKind::nic) (e.name.ends_with(".tx") ? tx : rx) += b;
    if (e.kind == models::LinkKind::fabric) (e.from.rfind("leaf", 0) == 0 ? up : down) += b;
  }
  const double edge = (op == models::NcclTestsOp::all_reduce ? 2.0 : 1.0) * (n - 1) / n * call.bytes;
  const double expected = cluster.num_nodes() * edge;
  CheckResult r;
  r.detail = "NIC tx " + fmt(tx) + " B, rx " + fmt(rx) + " B, expected " + fmt(expected) + " B; leaf up " + fmt(up) +
             " B, down " + fmt(down) + " B";
  const auto off = [](double a, double b) { return std::fabs(a - b) > 1e-6 * std::max({a, b, 1.0}); };
  r.violated = done.done != 1 || off(tx, rx) || off(up, down) || off(tx, expected);
  return r;
}
Sides bytes_side(const NetDraw&) { return {"(one run: compare the NIC and fabric byte counters)", ""}; }

/// Switching SHARP on (cluster.fabric.sharp) never makes an automatic all_reduce slower: NCCL's
/// tuner takes CollNet only where it predicts it faster, and CollNet crosses no switch-to-switch
/// link. A few draws: automatic all_reduce on InfiniBand HDR or later, switched fabrics (where
/// the loader allows SHARP).
CheckResult sharp_never_slower(const NetDraw& d) {
  const std::string nic = nic_of(d);
  const bool ib = nic.rfind("IB-", 0) == 0 && nic != "IB-EDR-100";
  if (d.sharp || d.algorithm != "automatic" || d.op != "all_reduce" || !ib || d.fabric_kind == "torus")
    return not_applicable();
  NetDraw on = d;
  on.sharp = true;
  return monotone(d, "sharp off", run_net(d), "sharp on", run_net(on));
}
Sides sharp_side(const NetDraw&) { return {"", "--set cluster.fabric.sharp=true"}; }

/// NIC 0 of the call's last node (a cluster.overrides selector).
std::string slowed_nic_of(const NetDraw& d) {
  const int last = d.first_node + (d.group_nodes != 0 ? d.group_nodes : d.num_nodes) - 1;
  return "node" + std::to_string(last) + "/nic0";
}

/// A failed compute NIC (the last of the call's first node) never makes the call faster: its rail
/// moves to another NIC of the node, whose load only grows (docs/fabric.md, failed links).
CheckResult failed_nic_never_faster(const NetDraw& d) {
  if (d.num_nodes < 2 || nics_of(d) < 2 || (d.group_nodes != 0 && d.group_nodes < 2)) return not_applicable();
  NetDraw failed = d;
  failed.failed = {"node" + std::to_string(d.first_node) + "/nic" + std::to_string(nics_of(d) - 1)};
  const NetOutcome down = run_net(failed), up = run_net(d);
  return monotone(d, failed.failed[0] + " failed", down, "all NICs up", up);
}
Sides failed_nic_side(const NetDraw& d) {
  return {"cluster { overrides { select: \"node" + std::to_string(d.first_node) + "/nic" +
              std::to_string(nics_of(d) - 1) + "\" failed: true } }",
          "(no overrides)"};
}

/// A compute NIC at a quarter of its rate on the call's last node (not its first, whose NICs the
/// ring search saw before 2026-12-07) never makes the call faster: NCCL's search, run for every
/// node of the group, keeps the rings off it or takes fewer or slower channels, and any flow
/// still crossing it only slows (docs/fabric.md, failed links).
CheckResult slowed_nic_never_faster(const NetDraw& d) {
  if (d.num_nodes < 2 || nics_of(d) < 1 || (d.group_nodes != 0 && d.group_nodes < 2)) return not_applicable();
  NetDraw slowed = d;
  slowed.slowed = {{slowed_nic_of(d), 0.25}};
  const NetOutcome slow = run_net(slowed), healthy = run_net(d);
  return monotone(d, slowed.slowed[0].first + " at 0.25", slow, "every NIC at its rate", healthy);
}
Sides slowed_nic_side(const NetDraw& d) {
  return {"cluster { overrides { select: \"" + slowed_nic_of(d) + "\" bandwidth_factor: 0.25 } }", "(no overrides)"};
}

/// A failed leaf up-link (leaf0 <-> spine0, or its first aggregation switch) never makes the call
/// faster: its flows move to the other up-links, whose flow sets only grow. Static routing where
/// the NIC's default is adaptive (a failed cable of a pooled leaf cannot be named).
CheckResult failed_up_link_never_faster(const NetDraw& d) {
  if (d.fabric_kind == "torus" || d.num_nodes <= d.nodes_per_leaf) return not_applicable();
  NetDraw healthy = d;
  if (healthy.routing.empty() &&
      models::Cluster::routing_for_nic(models::find_nic(nic_of(d))) == models::FabricRouting::adaptive)
    healthy.routing = "d_mod_k";
  const models::Cluster cluster(load(healthy).cluster);
  int ups = 0;  // leaf0's up-links
  for (const models::ClusterEdge& e : cluster.edges())
    if (e.from == "leaf0" && e.kind == models::LinkKind::fabric) ++ups;
  if (ups < 2) return not_applicable();
  NetDraw failed = healthy;
  for (const models::ClusterEdge& e : cluster.edges())
    if (e.from == "leaf0" && e.kind == models::LinkKind::fabric) {
      failed.failed = {e.name};
      break;
    }
  return monotone(d, failed.failed[0] + " failed", run_net(failed), "all up-links up", run_net(healthy));
}
Sides failed_up_link_side(const NetDraw&) {
  return {"cluster { fabric { routing: d_mod_k (if adaptive) } overrides { select: \"leaf0->spine0\" failed: true } }",
          "(no overrides)"};
}

/// A faster PCIe switch uplink (issue 19): the draw's template as a scenario's own node whose
/// switch uplinks run at 2x is never slower than the template itself. Every byte that crosses an
/// uplink finds more capacity, and NCCL's search budgets the uplinks with the other PCIe links,
/// so a wider one never takes channels away.
CheckResult faster_pcie_uplink(const NetDraw& d) {
  if (d.pcie_uplink_factor != 1.0 || models::find_builtin_node_template(d.node_template).pcie_switches == 0)
    return not_applicable();
  NetDraw fast = d;
  fast.pcie_uplink_factor = 2.0;
  return monotone(d, "template's uplinks", run_net(d), "uplinks x2", run_net(fast));
}
Sides faster_pcie_uplink_side(const NetDraw& d) {
  return {"", "node_template { (" + d.node_template + "'s fields) pcie_uplink_bytes_per_s: 2x }"};
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

/// The draw's template as a scenario's own node_template block, its uplinks x pcie_uplink_factor.
std::string uplink_copy(const NetDraw& d, const std::string& name) {
  const models::NodeTemplate& t = models::find_builtin_node_template(d.node_template);
  std::ostringstream o;
  o.precision(17);
  o << "node_template {\n  name: " << quoted(name) << " gpu: " << quoted(t.gpu) << " gpus_per_node: " << t.gpus_per_node
    << " scale_up: " << models::scale_up_name(t.scale_up)
    << (t.scale_up == models::ScaleUp::bridges ? " bridge_gpus: " + std::to_string(t.bridge_gpus) : std::string())
    << " nvswitches: " << t.nvswitches << "\n  nic: " << quoted(t.nic) << " nics: " << t.nics
    << " sockets: " << t.sockets << " pcie_switches: " << t.pcie_switches << " pcie_generation: " << t.pcie_generation
    << " pcie_lanes: " << t.pcie_lanes << "\n  pcie_bytes_per_s: " << t.pcie_bytes_per_s
    << " pcie_uplink_bytes_per_s: " << t.pcie_uplink_bytes_per_s * d.pcie_uplink_factor
    << " socket_link_bytes_per_s: " << t.socket_link_bytes_per_s << "\n  cpu: " << quoted(t.cpu)
    << " pcie_p2p: " << (t.pcie_p2p ? "true" : "false") << "\n  source: " << quoted(t.source) << "\n}\n";
  return o.str();
}

}  // namespace

std::string scenario_text(const NetDraw& d) {
  const int gpus = d.num_nodes * gpus_per_node(d);
  std::ostringstream o;
  o << "# property draw " << d.id << ": " << d.op << " of " << static_cast<long long>(d.bytes) << " bytes"
    << (d.group_nodes ? " on --gpus " + gpu_list(d) : std::string()) << "\n";
  std::string node = d.node_template;
  if (d.pcie_uplink_factor != 1.0) {
    node += "_uplink_x" + fmt(d.pcie_uplink_factor);
    o << uplink_copy(d, node);
  }
  o << "name: \"" << d.id << "\"\ncluster {\n  node_template: \"" << node << "\"\n  num_nodes: " << d.num_nodes << "\n";
  if (!d.nic.empty()) o << "  nic: \"" << d.nic << "\"\n";
  if (d.nics_per_node > 0) o << "  nics_per_node: " << d.nics_per_node << "\n";
  if (!d.nic_placement.empty()) o << "  nic_placement: " << d.nic_placement << "\n";
  // leaf_ports 1024: draws vary NICs, leaves and ratios at will (16 NICs x 4 nodes on one leaf);
  // the invariants are the collectives', not a switch radix (models/hardware/leaf_ports.h).
  o << "  fabric { kind: " << d.fabric_kind << " nodes_per_leaf: " << d.nodes_per_leaf << " leaf_ports: 1024"
    << " oversubscription: " << fmt(d.oversubscription) << (d.sharp ? " sharp: true" : "")
    << (d.routing.empty() ? std::string() : " routing: " + d.routing) << " }\n";
  for (const std::string& f : d.failed) o << "  overrides { select: \"" << f << "\" failed: true }\n";
  for (const auto& [select, factor] : d.slowed)
    o << "  overrides { select: \"" << select << "\" bandwidth_factor: " << fmt(factor) << " }\n";
  o << "  collectives { algorithm: " << d.algorithm << " protocol: " << d.protocol;
  if (d.channels > 0) o << " min_channels: " << d.channels << " max_channels: " << d.channels;
  o << " }\n}\n";
  o << "workload {\n  model { num_layers: 1 hidden_size: 64 num_attention_heads: 1 vocab_size: 64 seq_length: 64 }\n"
    << "  parallel { tp: 1 pp: 1 dp: " << gpus << " }\n  training { global_batch_size: " << gpus
    << " micro_batch_size: 1 }\n}\n";
  return o.str();
}

std::string nccl_tests_command(const NetDraw& d) {
  const std::string size = std::to_string(static_cast<long long>(d.bytes));
  std::string s = "traincast nccl-tests FILE --op " + d.op + " -b " + size + " -e " + size + " --show-algorithm";
  if (d.group_nodes) s += " --gpus " + gpu_list(d);
  return s;
}

NetOutcome run_net(const NetDraw& d) {
  const models::Scenario sc = load(d);
  models::NcclTestsOptions options;
  options.op = models::parse_nccl_tests_op(d.op);
  options.gpus = group_gpus(d);
  const std::vector<models::NcclTestsResult> rows = models::simulate_nccl_tests(sc.cluster, options, {d.bytes});
  NetOutcome o;
  o.time_s = rows.at(0).time_s;
  o.latency_s = rows[0].choice.latency_s;
  o.tuner_s = rows[0].choice.choice_seconds();
  o.kept_channels = rows[0].choice.channels;
  o.choice = std::string(models::algorithm_name(rows[0].choice.algorithm)) + "/" +
             std::string(models::protocol_name(rows[0].choice.protocol)) + "/" +
             std::to_string(rows[0].choice.channels);
  return o;
}

namespace {
void draw_call(Rng& rng, NetDraw& d, bool multi_leaf_tree) {
  d.op = rng.chance(0.5) ? "all_reduce" : rng.pick(std::vector<std::string>{"all_gather", "reduce_scatter"});
  d.bytes = std::ldexp(1.0, rng.uniform(22, 30));  // 4 MiB .. 1 GiB
  if (rng.chance(0.6)) {
    d.algorithm = d.op == "all_reduce" && multi_leaf_tree && rng.chance(0.35) ? "tree" : "ring";
    d.protocol = rng.pick(std::vector<std::string>{"simple", "simple", "ll128", "ll"});
    if (d.protocol == "ll") d.bytes = std::min(d.bytes, 64 * kMiB);  // LL moves small messages
  }
}
}  // namespace

NetDraw draw_fabric(int index) {
  Rng rng = draw_rng("fabric", index);
  NetDraw d;
  d.id = draw_id("fabric", index);
  d.node_template = rng.pick(std::vector<std::string>{"dgx_h100", "dgx_a100", "hgx_h200", "dgx_b200"});
  d.fabric_kind = rng.chance(0.7) ? "fat_tree" : "rail_optimized";
  d.nodes_per_leaf = rng.pick(std::vector<int>{1, 2, 4});
  d.num_nodes = d.nodes_per_leaf * rng.uniform(2, 4);
  if (d.num_nodes < 2) d.num_nodes = 2;
  d.oversubscription = rng.pick(std::vector<double>{1.25, 1.5, 2.0, 2.5, 3.0, 3.25, 4.0});
  draw_call(rng, d, true);
  return d;
}

NetDraw draw_pcie(int index) {
  Rng rng = draw_rng("pcie", index);
  NetDraw d;
  d.id = draw_id("pcie", index);
  d.node_template = rng.pick(std::vector<std::string>{"pcie_8gpu_2socket", "pcie_8gpu_2socket_h100_nvlink_bridge"});
  d.nics_per_node = rng.pick(kNics);
  d.num_nodes = rng.uniform(2, 4);
  if (rng.chance(0.5)) {
    d.fabric_kind = "rail_optimized";  // one leaf per rail (nodes_per_leaf 32)
  } else {
    d.nodes_per_leaf = rng.pick(std::vector<int>{1, 2});
    d.oversubscription = rng.pick(std::vector<double>{1.0, 1.5, 2.0});
  }
  draw_call(rng, d, true);
  return d;
}

const std::vector<NetProperty>& net_properties() {
  static const std::vector<NetProperty> p{
      {"less_oversubscription", less_oversubscription, less_oversubscription_side},
      {"faster_nic", faster_nic, faster_nic_side},
      {"more_nics", more_nics, more_nics_side},
      {"more_nics_than_gpus", more_nics_than_gpus, more_nics_than_gpus_side},
      {"rates_x2_halve_transfer", rates_x2, rates_x2_side},
      {"relabel_nodes", relabel_nodes, relabel_side},
      {"bytes_conserved", bytes_conserved, bytes_side},
      {"sharp_never_slower", sharp_never_slower, sharp_side},
      {"failed_nic_never_faster", failed_nic_never_faster, failed_nic_side},
      {"slowed_nic_never_faster", slowed_nic_never_faster, slowed_nic_side},
      {"failed_up_link_never_faster", failed_up_link_never_faster, failed_up_link_side},
      {"faster_pcie_uplink", faster_pcie_uplink, faster_pcie_uplink_side},
  };
  return p;
}

std::vector<NetDraw> smaller_net_draws(const NetDraw& d) {
  std::vector<NetDraw> out;
  auto add = [&](NetDraw c) {
    c.id = d.id;
    out.push_back(std::move(c));
  };
  if (d.num_nodes > 2) {
    NetDraw c = d;
    c.num_nodes = std::max(2, d.num_nodes / 2);
    add(c);
    c = d;
    c.num_nodes = d.num_nodes - 1;
    add(c);
  }
  if (d.nodes_per_leaf > 1) {
    NetDraw c = d;
    c.nodes_per_leaf = d.nodes_per_leaf / 2;
    c.num_nodes = std::max(2, d.num_nodes / 2);
    add(c);
  }
  if (d.fabric_kind == "rail_optimized") {
    NetDraw c = d;
    c.fabric_kind = "fat_tree";
    add(c);
  }
  if (d.bytes > 4 * kMiB) {
    NetDraw c = d;
    c.bytes = d.bytes / 4;
    add(c);
  }
  if (d.op != "all_reduce") {
    NetDraw c = d;
    c.op = "all_reduce";
    add(c);
  }
  return out;
}

namespace {
bool still_fails(const NetProperty& p, const NetDraw& d) {
  try {
    return p.check(d).violated;
  } catch (const std::exception&) {
    return false;  // a candidate the loader or the model refuses is not a smaller failing draw
  }
}

void check_draw(const NetDraw& d, Tally& tally, const std::vector<NetProperty>& properties) {
  for (const NetProperty& p : properties) {
    CheckResult r;
    try {
      r = p.check(d);
    } catch (const std::exception& e) {
      // A forced algorithm or protocol the model refuses for this topology (as NCCL does; tested in
      // tests/models/collectives/nccl_topo_search_test.cc) leaves the draw without this property.
      if (d.forced() && std::string(e.what()).find("cannot run") != std::string::npos) continue;
      r.violated = true;
      r.detail = std::string("threw: ") + e.what();
    }
    tally.count(p.name, r);
    if (r.tuner_switch) tally.add_switch(d.id, p.name, r.detail);
    if (!r.violated) continue;
    const std::function<std::vector<NetDraw>(const NetDraw&)> smaller = smaller_net_draws;
    const std::function<bool(const NetDraw&)> fails = [&](const NetDraw& c) { return still_fails(p, c); };
    const NetDraw s = shrink(d, smaller, fails);
    Violation v;
    v.draw = d.id;
    v.property = p.name;
    v.detail = r.detail;
    try {
      v.shrunk = p.check(s).detail;
    } catch (const std::exception& e) {
      v.shrunk = std::string("threw: ") + e.what();
    }
    v.scenario = scenario_text(s);
    const Sides sides = p.sides(s);
    v.reproduce = nccl_tests_command(s) + " " + sides.first;
    if (!sides.second.empty()) v.reproduce += "   vs   " + nccl_tests_command(s) + " " + sides.second;
    tally.add_violation(std::move(v));
  }
}
}  // namespace

Tally run_net_group(const std::string& /*group*/, int count, NetDraw (*make)(int)) {
  return run_net_group(count, make, net_properties());
}

Tally run_net_group(int count, NetDraw (*make)(int), const std::vector<NetProperty>& properties) {
  Tally tally;
  const std::string only = only_draw();
  for (int i = 0; i < count; ++i) {
    const NetDraw d = make(i);
    if (!only.empty() && only != d.id) continue;
    if (!only.empty()) std::printf("%s", scenario_text(d).c_str());
    check_draw(d, tally, properties);
  }
  return tally;
}

}  // namespace traincast::properties
