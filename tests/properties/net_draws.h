#pragma once
// Generated collective scenarios (issue 16 property tests): one nccl-tests call on a generated
// cluster, its loadable scenario text, the run through the library, and the collective properties.

#include <string>
#include <utility>
#include <vector>

#include "tests/properties/property_harness.h"

namespace traincast::properties {

/// One generated collective: a cluster (written as a scenario textproto) and one nccl-tests call.
struct NetDraw {
  std::string id;
  std::string node_template = "dgx_h100";
  std::string nic;  ///< "" = the template's
  int num_nodes = 2;
  int nics_per_node = 0;  ///< 0 = the template's
  std::string fabric_kind = "fat_tree";
  int nodes_per_leaf = 32;
  double oversubscription = 1.0;
  std::string op = "all_reduce";  ///< nccl-tests operation name
  double bytes = 64.0 * 1024 * 1024;
  std::string algorithm = "automatic";  ///< cluster.collectives.algorithm
  std::string protocol = "any";         ///< cluster.collectives.protocol
  int first_node = 0;                   ///< the call's GPUs: every GPU of nodes [first_node, first_node + group_nodes)
  int group_nodes = 0;                  ///< 0 = every node
  /// Every link's achievable rate x this (an in-memory calibration profile whose link_efficiency is
  /// the default efficiency of each link kind x rate_scale); 1 = no profile.
  double rate_scale = 1.0;
  /// cluster.collectives.min_channels = max_channels = this (NCCL_MIN/MAX_NCHANNELS); 0 = NCCL's.
  int channels = 0;
  /// cluster.fabric.sharp (in-network reduction, NCCL CollNet).
  bool sharp = false;
  /// The template's PCIe switch uplinks x this, as a scenario's own copy of the template
  /// (node_template block); 1 = the catalog template itself.
  double pcie_uplink_factor = 1.0;
  std::string nic_placement;        ///< cluster.nic_placement; "" = affine (the default)
  std::string routing;              ///< cluster.fabric.routing; "" = automatic
  std::vector<std::string> failed;  ///< cluster.overrides selectors with failed: true
  /// cluster.overrides selectors with bandwidth_factor (selector, factor).
  std::vector<std::pair<std::string, double>> slowed;
  bool forced() const { return algorithm != "automatic" && protocol != "any"; }
};

/// The draw as a loadable scenario textproto (cluster, and a one-layer workload so that
/// `traincast run` loads it too; `traincast nccl-tests` reads only the cluster).
std::string scenario_text(const NetDraw& d);
/// `traincast nccl-tests` command line that runs the draw (scenario saved as FILE).
std::string nccl_tests_command(const NetDraw& d);

/// What one run gave: the time and the tuner's choice ("ring/Simple/8").
struct NetOutcome {
  double time_s = 0;
  double latency_s = 0;   ///< the tuner's latency term of the choice
  double tuner_s = 0;     ///< the predicted time the choice weighs (CollectiveChoice::choice_seconds)
  int kept_channels = 0;  ///< the channels the call runs on after NCCL's cut (the choice's channel count)
  std::string choice;
};
/// Loads scenario_text(d) with models/io and runs the call as `traincast nccl-tests` does
/// (models::simulate_nccl_tests). Throws what they throw.
NetOutcome run_net(const NetDraw& d);

/// Fabric group: multi-node NVSwitch servers on oversubscribed fat trees / rail-optimized
/// fabrics with 2-4 leaves (every collective crosses leaves).
NetDraw draw_fabric(int index);
/// PCIe group: 2-socket PCIe servers (pcie_8gpu_2socket, pcie_8gpu_2socket_h100_nvlink_bridge)
/// with 2-8 NICs, 2-4 nodes.
NetDraw draw_pcie(int index);

/// The extra command-line arguments of a property's two sides (second empty: one run).
using Sides = std::pair<std::string, std::string>;

/// One property over NetDraws: its name and its check (applies = false when it does not apply).
struct NetProperty {
  std::string name;
  CheckResult (*check)(const NetDraw&);
  /// Both sides of the comparison, for the reproduce line.
  Sides (*sides)(const NetDraw&);
};
/// less_oversubscription, faster_nic, more_nics, rates_x2, relabel_nodes, bytes_conserved,
/// sharp_never_slower, failed_nic_never_faster, failed_up_link_never_faster, faster_pcie_uplink.
const std::vector<NetProperty>& net_properties();

/// Smaller draws than d for the greedy shrink: fewer nodes, fewer NICs, smaller size, one leaf
/// fewer, a simpler fabric.
std::vector<NetDraw> smaller_net_draws(const NetDraw& d);

/// Runs every property on `count` draws of `make` (group `group`), shrinking each violation.
Tally run_net_group(const std::string& group, int count, NetDraw (*make)(int));
/// The same with the properties `properties` (instead of net_properties()).
Tally run_net_group(int count, NetDraw (*make)(int), const std::vector<NetProperty>& properties);

/// base is expected no faster than better (better.time <= base.time) within the collective
/// tolerances: 0.1 %, or 2 % at a tuner switch point on automatic draws.
CheckResult monotone(const NetDraw& d, const std::string& base_what, const NetOutcome& base,
                     const std::string& better_what, const NetOutcome& better);

}  // namespace traincast::properties
