// The checks that tie the workload to the hardware and to Megatron-LM's layout rules: the GPU fits
// its node template, kernels the GPU cannot run are refused (or left off by default), and the
// divisibility asserts Megatron-LM makes that the other sections do not (scenario_checks.h).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/hardware/cluster.h"
#include "models/hardware/element_overrides.h"
#include "models/hardware/network_size.h"
#include "models/hardware/placed_overrides.h"
#include "models/io/scenario_checks.h"
#include "models/io/suggest.h"
#include "models/power/power_model.h"

namespace traincast::io::detail {
namespace {

/// "a, b, c", or "none" when empty.
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

/// The catalog GPUs that fit `node`, and the node templates `gpu` fits, for the messages.
std::vector<std::string> gpus_fitting(const models::NodeTemplate& node) {
  std::vector<std::string> out;
  for (const std::string& g : models::gpu_names())
    if (models::gpu_fit_problem(node, models::find_gpu(g)).empty()) out.push_back(g);
  return out;
}
std::vector<std::string> templates_fitting(const models::GpuSpec& gpu) {
  std::vector<std::string> out;
  for (const std::string& t : models::node_template_names())
    if (models::gpu_fit_problem(models::find_builtin_node_template(t), gpu).empty()) out.push_back(t);
  return out;
}

/// "1 GPU", "16 GPUs" (issue 21: "1 GPUs" on small jobs).
std::string gpus_text(std::int64_t n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

}  // namespace

std::vector<const models::GpuSpec*> node_group_gpus(const models::Scenario& s) {
  std::vector<const models::GpuSpec*> out;
  for (const models::NodeGroupSpec& g : s.cluster.node_groups) {
    try {
      const models::GpuSpec* gpu =
          &models::find_gpu(g.gpu.empty() ? models::find_node_template(g.node_template, s.cluster).gpu : g.gpu);
      if (std::find(out.begin(), out.end(), gpu) == out.end()) out.push_back(gpu);
    } catch (const std::exception&) {
      // an unknown template or GPU: check_node_groups names it
    }
  }
  return out;
}

void check_gpu_fits_node(const models::Scenario& s, const models::NodeTemplate* node, const models::GpuSpec* gpu,
                         Checker& k) {
  if (node == nullptr || gpu == nullptr || s.cluster.gpu.empty()) return;  // the template's own GPU fits it
  std::string problem;
  try {
    problem = models::gpu_fit_problem(*node, *gpu);
  } catch (const std::exception&) {
    return;  // the template names an unknown GPU: a catalog inconsistency its own tests catch
  }
  if (problem.empty()) return;
  // "... (expected X)" -> "... (expected X; GPUs that fit T: ...; templates G fits: ...)".
  if (!problem.empty() && problem.back() == ')') problem.pop_back();
  problem += "; GPUs that fit " + node->name + ": " + joined(gpus_fitting(*node)) + "; node templates " + gpu->name +
             " fits: " + joined(templates_fitting(*gpu)) + ")";
  // The field the user changed: the template when only it was overridden, else the GPU.
  const bool blame_template = k.overridden("cluster.node_template") && !k.overridden("cluster.gpu");
  k.error(blame_template ? "cluster.node_template" : "cluster.gpu", problem);
}

/// An override's power_cap_w: alone on a GPU selector, within what `nvidia-smi -pl` accepts for
/// the GPU (as power.gpu_power_limit_w: the board's Min Power Limit, or the power model's floor
/// where that is higher, to the TDP).
template <typename Fail>
void check_power_cap(const models::ElementOverride& o, const std::string& at, const models::Cluster* cluster,
                     Fail& fail) {
  const std::string field = at + "power_cap_w";
  if (o.failed || o.clock_factor != 0.0 || o.bandwidth_factor != 0.0) {
    fail(field, "set with " +
                    std::string(o.failed                ? "failed"
                                : o.clock_factor != 0.0 ? "clock_factor"
                                                        : "bandwidth_factor") +
                    " (expected one of clock_factor, bandwidth_factor, failed, power_cap_w, supply_c, missing per "
                    "override)");
    return;
  }
  if (cluster == nullptr) return;
  try {
    if (models::resolve_selector(*cluster, o.select).gpus.empty()) {
      fail(field, "\"" + o.select +
                      "\" names a link or NIC (expected a GPU selector; a link takes bandwidth_factor "
                      "or failed)");
      return;
    }
  } catch (const std::invalid_argument& e) {
    fail(at + "select", e.what());
    return;
  }
  const models::GpuSpec& gpu = cluster->gpu_spec(0);
  const double lo = models::min_power_limit_w(gpu);
  if (std::isfinite(o.power_cap_w) && o.power_cap_w >= lo && o.power_cap_w <= gpu.tdp_w) return;
  fail(field, "got " + Checker::number(o.power_cap_w) + " W (expected " + Checker::number(lo) + " to " +
                  Checker::number(gpu.tdp_w) + " W for " + gpu.name +
                  (gpu.min_power_limit_w >= lo ? ": nvidia-smi -pl refuses limits below its Min Power Limit or above "
                                                 "the TDP)"
                                               : ": below it the GPU draws more than the cap even at its lowest clock "
                                                 "under full tensor load)"));
}

/// An override's supply_c: alone, on whole nodes, in the range of thermal.supply_air_c (air) or
/// thermal.coolant_c (liquid).
template <typename Fail>
void check_supply(const models::Scenario& s, const models::ElementOverride& o, const std::string& at,
                  const models::Cluster* cluster, Fail& fail) {
  const std::string field = at + "supply_c";
  if (o.failed || o.clock_factor != 0.0 || o.bandwidth_factor != 0.0 || o.power_cap_w != 0.0) {
    fail(field,
         "set with another field (expected one of clock_factor, bandwidth_factor, failed, power_cap_w, "
         "supply_c, missing per override)");
    return;
  }
  // ASHRAE TC 9.9 (2021) allowable inlet air: A1 15-32 C ... A4 5-45 C; liquid classes W17-W45 and
  // W+ above 45 C: the ranges of thermal.supply_air_c and thermal.coolant_c hold a hot aisle or loop.
  const bool liquid = s.thermal.cooling == models::Cooling::liquid;
  const double hi = liquid ? 70.0 : 60.0;
  if (!(std::isfinite(*o.supply_c) && *o.supply_c >= 0.0 && *o.supply_c <= hi)) {
    fail(field, "got " + Checker::number(*o.supply_c) + " C (expected 0 to " + Checker::number(hi) + " C " +
                    (liquid ? "coolant, as thermal.coolant_c (ASHRAE liquid classes W17-W45, W+)"
                            : "supply air, as thermal.supply_air_c (ASHRAE allowable classes A1-A4: 5-45 C)") +
                    ")");
    return;
  }
  if (cluster == nullptr) return;
  try {
    const models::ResolvedSelector sel = models::resolve_selector(*cluster, o.select);
    const auto gpn = static_cast<std::size_t>(cluster->gpus_per_node());
    bool whole = !sel.gpus.empty() && sel.gpus.size() % gpn == 0;
    for (std::size_t i = 0; whole && i < sel.gpus.size(); ++i)
      whole = cluster->local_rank(sel.gpus[i]) == static_cast<int>(i % gpn);
    if (!whole) fail(field, "\"" + o.select + "\" is not a whole node (expected node<N> or node<A>-<B>)");
  } catch (const std::invalid_argument& e) {
    fail(at + "select", e.what());
  }
}

/// An override's missing: true alone, on one GPU (node<N>/gpu<K>), off a torus.
template <typename Fail>
void check_missing(const models::Scenario& s, const models::ElementOverride& o, const std::string& at,
                   const models::Cluster* cluster, Fail& fail) {
  const std::string field = at + "missing";
  if (!*o.missing) {
    fail(field,
         "false (expected missing: true, or no missing field: a GPU is present unless an override says "
         "otherwise)");
    return;
  }
  if (o.failed || o.clock_factor != 0.0 || o.bandwidth_factor != 0.0 || o.power_cap_w != 0.0 || o.supply_c) {
    fail(field,
         "set with another field (expected missing: true alone: a missing GPU has no clock, power cap or "
         "supply temperature)");
    return;
  }
  if (s.cluster.fabric.kind == models::FabricKind::torus) {
    fail(field,
         "on a torus fabric (expected a fat_tree or rail_optimized fabric: a torus routes through every "
         "node's router, so a drained node would still carry traffic)");
    return;
  }
  if (cluster == nullptr) return;
  try {
    const models::ResolvedSelector sel = models::resolve_selector(*cluster, o.select);
    if (sel.gpus.size() != 1 || o.select.find('-') != std::string::npos)
      fail(field, "\"" + o.select + "\" is not one GPU (expected node<N>/gpu<K>: a node is drained for each missing " +
                      "GPU it has)");
  } catch (const std::invalid_argument& e) {
    fail(at + "select", e.what());
  }
}

/// Failed elements that leave no route (a node without a NIC up, two leaves without a common
/// up-link) or that routes cannot avoid: Cluster's refusal, at the override's `failed`.
/// Also a drained node (a missing GPU) that another override names, or every node drained.
void check_failed_elements(const models::Scenario& s, Checker& k) {
  if (std::none_of(s.cluster.overrides.begin(), s.cluster.overrides.end(),
                   [](const models::ElementOverride& o) { return o.failed || o.missing; }))
    return;
  try {
    const models::Cluster cluster(s.cluster);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    const std::size_t dot = what.find("].");
    const std::size_t colon = dot == std::string::npos ? dot : what.find(": ", dot);
    if (what.rfind("cluster.overrides[", 0) == 0 && colon != std::string::npos)
      k.error(what.substr(0, colon), what.substr(colon + 2));
  } catch (const std::exception&) {
    // another field is wrong and has its own error
  }
}

/// True when the cluster is beyond the simulator's range: more GPUs than kMaxGpus or more network
/// resources than models::kMaxNetworkResources (counted from the spec, nothing built). Their own
/// errors name it (check_gpu_count, the network-size refusal); the override checks then build
/// nothing (a sizes-only cluster of 10^8 nodes took 21 s and 3 GB before it, session 35).
bool beyond_simulator_range(const models::ClusterSpec& spec, const models::NodeTemplate* node) {
  if (node != nullptr && static_cast<std::int64_t>(spec.num_nodes) * node->gpus_per_node > kMaxGpus) return true;
  try {
    return models::Cluster::network_size(spec).resources() > models::kMaxNetworkResources;
  } catch (const std::exception&) {
    return false;  // another cluster field is wrong and has its own error
  }
}

std::vector<std::string> check_element_overrides(const models::Scenario& s, const models::NodeTemplate* node,
                                                 Checker& k) {
  if (beyond_simulator_range(s.cluster, node)) return {};
  bool clean = true;
  auto fail = [&](const std::string& path, const std::string& what) {
    k.error(path, what);
    clean = false;
  };
  std::unique_ptr<models::Cluster> cluster;
  try {
    models::ClusterSpec plain = s.cluster;
    plain.overrides.clear();
    // GPU selectors read only sizes and places: the full network (~0.5 s and ~280 MB at 131,072
    // GPUs) is built here only when a NIC or link is named.
    const bool gpus_only =
        std::all_of(s.cluster.overrides.begin(), s.cluster.overrides.end(),
                    [](const models::ElementOverride& o) { return models::selector_reads_no_resource(o.select); });
    cluster = gpus_only ? models::Cluster::sizes_only(plain) : std::make_unique<models::Cluster>(plain);
  } catch (const std::exception&) {
    cluster.reset();  // another cluster field is wrong and has its own error
  }
  for (std::size_t i = 0; i < s.cluster.overrides.size(); ++i) {
    const models::ElementOverride& o = s.cluster.overrides[i];
    const std::string at = "cluster.overrides[" + std::to_string(i) + "].";
    if (o.select.empty() || !valid_utf8(o.select)) {  // not UTF-8: echoed raw, it garbled the terminal
      fail(at + "select", std::string(o.select.empty() ? "required" : "is not valid UTF-8") +
                              " (expected a GPU, node range, NIC or link, e.g. \"node17/gpu3\")");
      continue;
    }
    if (o.missing) {
      check_missing(s, o, at, cluster.get(), fail);
      continue;
    }
    // A job list (traincast cluster) runs each job on a sub-cluster of its own nodes: a selector
    // outside one node is refused as such, before it is looked up on the whole cluster (where
    // leaf0->spine1 of an adaptive fabric read "no GPU, NIC or link named", fresh user 39).
    if (!s.jobs.empty())
      if (const std::optional<std::string> why = models::selector_not_per_job(o.select)) {
        fail(at + "select", *why);
        continue;
      }
    if (o.supply_c) {
      check_supply(s, o, at, cluster.get(), fail);
      continue;
    }
    if (o.power_cap_w != 0.0) {
      check_power_cap(o, at, cluster.get(), fail);
      continue;
    }
    if (o.failed) {
      if (o.clock_factor != 0.0 || o.bandwidth_factor != 0.0) {
        fail(at + "failed", std::string("set with ") + (o.clock_factor != 0.0 ? "clock_factor" : "bandwidth_factor") +
                                " (expected failed: true or a factor, not both)");
        continue;
      }
      if (cluster == nullptr) continue;
      try {
        const models::ResolvedSelector sel = models::resolve_selector(*cluster, o.select);
        if (!sel.gpus.empty())
          fail(at + "failed", "\"" + o.select + "\" names GPUs (expected a NIC, node<N>/nic<K>, or a leaf up-link, " +
                                  "leafA->spineB; a GPU takes clock_factor)");
      } catch (const std::invalid_argument& e) {
        fail(at + "select", e.what());
      }
      continue;
    }
    if (o.clock_factor != 0.0 && o.bandwidth_factor != 0.0) {
      fail(at + "bandwidth_factor", "set with clock_factor (expected one factor per override)");
      continue;
    }
    if (o.clock_factor == 0.0 && o.bandwidth_factor == 0.0) {
      // A field written as 0 (or failed: false) is named at itself, not reported as missing.
      if (k.present(at + "clock_factor") || k.present(at + "bandwidth_factor")) {
        const std::string named = k.present(at + "clock_factor") ? "clock_factor" : "bandwidth_factor";
        fail(at + named, std::string("got 0 (expected ") + (named == "clock_factor" ? "0.1" : "0.001") + " <= f <= 1" +
                             (named == "clock_factor" ? "; a GPU that is gone takes missing: true)"
                                                      : "; a failed link or NIC takes failed: true)"));
      } else if (k.present(at + "power_cap_w")) {
        check_power_cap(o, at, cluster.get(), fail);  // 0 W: named at itself with the GPU's range
      } else if (k.present(at + "failed"))
        fail(at + "failed", "got false (expected true, or no override: an element that is up needs none)");
      else
        fail(at + "select",
             "no factor (expected clock_factor, power_cap_w or missing: true for a GPU selector, supply_c for a "
             "node selector, bandwidth_factor or failed: true for a link or NIC)");
      continue;
    }
    const bool clock = o.clock_factor != 0.0;
    const std::string field = at + (clock ? "clock_factor" : "bandwidth_factor");
    const double f = clock ? o.clock_factor : o.bandwidth_factor;
    // Floors: an A100's lowest supported graphics clock is 210 of 1,410 MHz (nvidia-smi -q -d
    // SUPPORTED_CLOCKS), 0.15; a PCIe gen5 x16 link that trained at gen1 x1 runs at 0.25 of 63 GB/s,
    // 0.004. Far smaller factors overflowed the simulator's clock (1e-15: a negative delay).
    const double floor = clock ? 0.1 : 0.001;
    if (!(f <= 1.0)) {  // NaN too
      fail(field, "got " + Checker::number(f) + " (expected " + Checker::number(floor) + " <= f <= 1" +
                      (f > 1.0 ? std::string("; an element cannot run faster than its datasheet") : "") + ")");
      continue;
    }
    if (!(f >= floor)) {
      fail(field, "got " + Checker::number(f) + " (expected " + Checker::number(floor) + " <= f <= 1: " +
                      (clock ? "an A100's lowest clock is 0.15 of its boost clock"
                             : "a PCIe gen5 x16 link trained at gen1 x1 still runs at 0.004 of its rate") +
                      ")");
      continue;
    }
    if (cluster == nullptr) continue;
    try {
      const models::ResolvedSelector sel = models::resolve_selector(*cluster, o.select);
      if (clock != !sel.gpus.empty())
        fail(field, "\"" + o.select + "\" names " + (clock ? "a link or NIC" : "GPUs") + " (expected " +
                        (clock ? "bandwidth_factor" : "clock_factor") + " for it)");
    } catch (const std::invalid_argument& e) {
      fail(at + "select", e.what());
    }
  }
  if (!clean) return {};
  check_failed_elements(s, k);  // what only the whole set can break
  return cluster != nullptr ? override_overlap_notes(s, *cluster, k) : std::vector<std::string>{};
}

void check_node_groups(const models::Scenario& s, Checker& k) {
  const std::vector<models::NodeGroupSpec>& groups = s.cluster.node_groups;
  bool groups_ok = true;
  long long sum = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string at = "cluster.node_group[" + std::to_string(i) + "].";
    const models::NodeGroupSpec& g = groups[i];
    groups_ok = k.int_field(at + "num_nodes", g.num_nodes) && groups_ok;
    sum += g.num_nodes;
    if (!k.present(at + "node_template")) {
      k.error(at + "node_template", "not set (expected a node template, e.g. \"dgx_a100\")");
      groups_ok = false;
      continue;
    }
    try {
      models::find_node_template(g.node_template, s.cluster);
    } catch (const std::exception& e) {
      // A refused block's errors say why, for it and its "base/N" partitions.
      const std::string base = g.node_template.substr(0, g.node_template.find('/'));
      const std::vector<std::string> names = models::node_template_names(s.cluster.described_node_templates);
      if (k.refused_node_templates.count(g.node_template) > 0 || k.refused_node_templates.count(base) > 0) {
        // nothing more to say here
      } else if (g.node_template.find('/') != std::string::npos) {
        // "base/N" (NVLink domains of N GPUs, models/hardware/nvlink_domains.h): the partition's reason.
        k.error(at + "node_template", e.what());
      } else {
        k.error(at + "node_template", "unknown node template \"" + detail::clip(g.node_template) + "\"" +
                                          detail::did_you_mean(g.node_template, names) +
                                          " (expected one of: " + names_list(names) + ")");
      }
      groups_ok = false;
    }
  }
  // The cluster-wide fields the groups replace: unset, or what the groups give.
  if (k.present("cluster.gpu") && !s.cluster.gpu.empty())
    k.error("cluster.gpu", "set with node_group (expected each group's gpu instead)");
  if (k.present("cluster.node_template") && s.cluster.node_template != groups.front().node_template)
    k.error("cluster.node_template", "\"" + detail::clip(s.cluster.node_template) +
                                         "\" set with node_group (expected it unset; each group names its template)");
  if (!k.present("cluster.num_nodes") && sum > (1LL << 30))  // scenario_convert.cc's bound
    k.error("cluster.node_group[" + std::to_string(groups.size() - 1) + "].num_nodes",
            "the node groups hold " + std::to_string(sum) + " nodes in all (expected at most " +
                std::to_string(1LL << 30) + ")");
  if (k.present("cluster.num_nodes") && s.cluster.num_nodes != sum)
    k.error("cluster.num_nodes", std::to_string(s.cluster.num_nodes) + " set with node_group holding " +
                                     std::to_string(sum) + " nodes (expected it unset, or their sum)");
  if (!s.jobs.empty())
    k.error("cluster.node_group", "set with a job list (expected one template per cluster for `traincast cluster`)");
  if (!groups_ok) return;
  // The rest as the cluster resolves the groups (node_groups.cc): GPUs that fit, one board shape and NIC.
  try {
    models::ClusterSpec plain = s.cluster;
    plain.overrides.clear();
    plain.num_nodes = static_cast<int>(sum);
    plain.gpu.clear();
    const models::Cluster cluster(plain);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    const std::size_t colon = what.find(": ");
    if (what.rfind("cluster.node_group[", 0) == 0 && colon != std::string::npos)
      k.error(what.substr(0, colon), what.substr(colon + 2));
    // Another cluster field is wrong and has its own error.
  }
}

void check_pipeline_stage_layers(const models::Scenario& s, Checker& k) {
  const models::ParallelSpec& p = s.parallel;
  const char* field = "workload.parallel.pipeline_stage_layers";
  if (p.schedule == models::PipelineSchedule::interleaved_one_f_one_b) {
    k.layout_error(field, "set with schedule interleaved_one_f_one_b (expected schedule one_f_one_b, or no list)");
    return;
  }
  if (static_cast<int>(p.pipeline_stage_layers.size()) != p.pp) {
    k.layout_error(field, std::to_string(p.pipeline_stage_layers.size()) + " entries for pp = " + std::to_string(p.pp) +
                              " (expected one entry per pipeline stage)");
    return;
  }
  long long sum = 0;
  for (std::size_t i = 0; i < p.pipeline_stage_layers.size(); ++i) {
    if (!k.int_field(std::string(field) + "[" + std::to_string(i) + "]", p.pipeline_stage_layers[i])) return;
    sum += p.pipeline_stage_layers[i];
  }
  if (sum != s.model.num_layers)
    k.layout_error(field, "sums to " + std::to_string(sum) +
                              " layers (expected num_layers = " + std::to_string(s.model.num_layers) + ")");
}

void check_sharp(const models::Scenario& s, const models::NodeTemplate* node, Checker& k) {
  if (!s.cluster.fabric.sharp) return;
  const char* field = "cluster.fabric.sharp";
  const models::FabricKind kind = s.cluster.fabric.kind;
  if (kind != models::FabricKind::fat_tree && kind != models::FabricKind::rail_optimized) {
    k.error(field, std::string("is true on a fabric of kind ") +
                       (kind == models::FabricKind::torus ? "torus" : "none") +
                       ", which has no switches to reduce in (expected kind fat_tree or rail_optimized, or sharp: "
                       "false)");
    return;
  }
  const std::string nic = !s.cluster.nic.empty() ? s.cluster.nic : (node != nullptr ? node->nic : std::string());
  if (nic.empty()) return;  // an unknown node template has its own error
  // SHARP runs in NVIDIA InfiniBand switches; NCCL's CollNet (the SHARP plugin) streams large
  // reductions with SHARPv2's streaming aggregation, first in Quantum HDR switches (R. L. Graham
  // et al., "Scalable Hierarchical Aggregation and Reduction Protocol (SHARP) Streaming-Aggregation
  // Hardware Design and Evaluation", ISC 2020); Switch-IB 2 (EDR, SHARPv1) reduces small messages
  // only. Ethernet (RoCE, TCPXO) and Slingshot switches have no SHARP.
  const bool ib = nic.rfind("IB-", 0) == 0;
  if (!ib || nic == "IB-EDR-100") {
    k.error(field, "is true with NIC " + nic +
                       (ib ? " (EDR: SHARPv1 switches aggregate small messages only)"
                           : " (not InfiniBand: SHARP runs in NVIDIA InfiniBand switches)") +
                       " (expected an InfiniBand HDR or later NIC: IB-HDR-200, IB-NDR-400, IB-XDR-800; or sharp: "
                       "false)");
  }
}

void check_nvlink_bridge(const models::Scenario& s, const models::NodeTemplate* node, const models::GpuSpec* gpu,
                         Checker& k) {
  if (!s.cluster.nvlink_bridge_gpus || node == nullptr || gpu == nullptr) return;
  const int g = *s.cluster.nvlink_bridge_gpus;
  if (!k.int_field("cluster.nvlink_bridge_gpus", g)) return;
  const std::string why = models::bridge_group_problem(*node, *gpu, g);
  if (!why.empty()) k.error("cluster.nvlink_bridge_gpus", why);
}

void resolve_kernels(models::Scenario& s, const models::GpuSpec* gpu, Checker& k) {
  if (gpu == nullptr || s.model.family != models::ModelFamily::transformer) return;
  if (models::runs_flash_attention(*gpu)) return;
  const char* field = "workload.training.flash_attention";
  if (!k.present(field)) {
    // Unset: the GPU's capability decides (the summary notes why it is off).
    s.training.flash_attention = false;
  } else if (s.training.flash_attention) {
    k.error(field, "is true but " + gpu->name + " (" + models::kernel_arch(*gpu) +
                       ") cannot run fused attention: FlashAttention-2 and TransformerEngine's cuDNN fused attention "
                       "need sm80+ (Ampere or newer) (expected false, or leave it unset on this GPU)");
  }
}

void check_cluster_only_precision(const models::Scenario& s, const models::GpuSpec* gpu, Checker& k) {
  const char* field = "workload.training.precision";
  if (gpu == nullptr || !k.present(field)) return;  // unset: a cluster-only command does not use it
  const models::Precision p = s.training.precision;
  const double peak = p == models::Precision::fp32   ? gpu->peak_fp32_flops
                      : p == models::Precision::tf32 ? gpu->peak_tf32_flops
                      : p == models::Precision::fp16 ? gpu->peak_fp16_flops
                      : p == models::Precision::bf16 ? gpu->peak_bf16_flops
                                                     : gpu->peak_fp8_flops;
  if (peak <= 0)
    k.error(field, std::string(models::precision_name(p)) + " is not supported by " + gpu->name + " (" +
                       models::kernel_arch(*gpu) +
                       ": no tensor cores for it; fp8 needs sm89+) (expected a precision with a dense peak on it)");
}

void check_megatron_divisibility(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  const models::ParallelSpec& p = s.parallel;
  if (m.family != models::ModelFamily::transformer) return;
  // Sequence parallelism scatters each (per-CP-rank) sequence over the TP ranks along its first
  // dimension: Megatron-Core's tensor_parallel/mappings.py _split_along_first_dim and
  // _reduce_scatter_along_first_dim assert "First dimension of the tensor should be divisible by
  // tensor parallel size" (the embedding's scatter_to_sequence_parallel_region runs it first).
  const int cp = p.cp >= 1 ? p.cp : 1;
  if (p.sequence_parallel && p.tp > 1 && m.seq_length >= 1 && m.seq_length % cp == 0 &&
      (m.seq_length / cp) % p.tp != 0) {
    const std::int64_t multiple = static_cast<std::int64_t>(p.tp) * cp;
    k.layout_error("workload.model.seq_length",
                   to_string(m.seq_length) + (cp > 1 ? " / cp " + to_string(cp) : std::string()) +
                       " is not divisible by tp = " + to_string(p.tp) +
                       " with sequence_parallel (expected a multiple of " + to_string(multiple) +
                       ": Megatron-LM splits each sequence over the TP ranks and asserts it, mappings.py "
                       "_split_along_first_dim; or sequence_parallel: false)");
  }
  // megatron/training/arguments.py validate_args, "Expert parallelism check": "Expert parallelism
  // is not supported with fp16 training."
  if (p.ep > 1 && m.num_experts > 0 && s.training.precision == models::Precision::fp16)
    k.error("workload.parallel.ep", "got " + to_string(p.ep) +
                                        " with precision fp16 (expected ep: 1, or precision bf16: Megatron-LM "
                                        "refuses expert parallelism with fp16 training, arguments.py validate_args)");
}

/// tp * pp * dp (times cp when used) is the cluster's GPU count, and that count is within the
/// simulator's range. node: the cluster's node template, not null.
void check_gpu_count(const models::Scenario& s, const models::NodeTemplate* node, Checker& k) {
  using std::to_string;
  const models::ParallelSpec& p = s.parallel;
  const std::int64_t gpus = static_cast<std::int64_t>(s.cluster.num_nodes) * node->gpus_per_node;
  if (gpus > kMaxGpus) {
    k.error("cluster.num_nodes", to_string(s.cluster.num_nodes) + " nodes of " + to_string(node->gpus_per_node) +
                                     " GPUs = " + to_string(gpus) + " GPUs (expected at most " + to_string(kMaxGpus) +
                                     " GPUs: the simulator's range)");
  }
  // PyTorch's async TP keeps its chunks in symmetric memory, which maps the peers' buffers over
  // NVLink / P2P inside one node (torch/distributed/_symmetric_memory, CUDA IPC handles): a TP
  // group spanning nodes cannot run it (ranks are TP-fastest, so a group stays in a node exactly
  // when tp divides the node's GPUs).
  if (p.tp_comm_overlap && p.tp_overlap_implementation == models::TpOverlapImplementation::async_tp && p.tp > 1 &&
      node->gpus_per_node > 0 && (p.tp > node->gpus_per_node || node->gpus_per_node % p.tp != 0))
    k.error("workload.parallel.tp_overlap_implementation",
            "async_tp with tp " + to_string(p.tp) + " on nodes of " + gpus_text(node->gpus_per_node) +
                ": a TP group would span nodes, and PyTorch's symmetric memory reaches peers only inside a node "
                "(expected tp dividing " +
                to_string(node->gpus_per_node) + ", or userbuffers)");
  // With a job list the workload is the jobs' default, each run on its own GPUs (job[i].gpus),
  // not on the whole cluster (docs/cluster.md).
  if (!s.jobs.empty()) return;
  if (k.present("scheduler")) {  // a traincast cluster file whose jobs are missing
    k.error("scheduler",
            "is set but the file has no job (expected at least one job { gpus: N tokens: T }: the "
            "scheduler queues the jobs of traincast cluster)");
    return;
  }
  // A node group of no nodes is refused at its own num_nodes: the cluster has no size to compare.
  for (const models::NodeGroupSpec& g : s.cluster.node_groups)
    if (g.num_nodes <= 0) return;
  const std::int64_t used = static_cast<std::int64_t>(p.tp) * p.pp * p.dp * std::max(1, p.cp);
  // Drained nodes (a missing GPU, cluster.overrides missing) run no job: the job has the others.
  const std::vector<std::pair<int, int>> drained = models::drained_nodes_of(s.cluster);
  if (!drained.empty() && s.cluster.num_nodes > static_cast<int>(drained.size())) {
    const std::int64_t in_service =
        static_cast<std::int64_t>(s.cluster.num_nodes - static_cast<int>(drained.size())) * node->gpus_per_node;
    if (used == in_service) return;
    const auto [node_no, i] = drained.front();
    const std::string gpu = s.cluster.overrides[static_cast<std::size_t>(i)].select;
    k.layout_error("workload.parallel.dp",
                   "tp * cp * pp * dp = " + to_string(used) + " GPUs, but node" + to_string(node_no) +
                       " is drained (its GPU " + gpu + " is missing, cluster.overrides[" + to_string(i) + "])" +
                       (drained.size() > 1 ? " with " + to_string(drained.size() - 1) + " other node(s)" : "") +
                       ", so the job has " + to_string(s.cluster.num_nodes - static_cast<int>(drained.size())) +
                       " of the " + to_string(s.cluster.num_nodes) + " nodes = " + gpus_text(in_service) +
                       " (expected tp * cp * pp * dp = " + to_string(in_service) + ")");
    return;
  }
  // The field blamed for a product that does not match: the one an override (--set, a case's
  // `set`) wrote, as that is what the user changed; dp when none was overridden.
  std::string blamed = "workload.parallel.dp";
  for (const char* f : {"workload.parallel.tp", "workload.parallel.cp", "workload.parallel.pp", "workload.parallel.dp",
                        "cluster.num_nodes", "cluster.node_template"}) {
    if (k.overridden(f)) {
      blamed = f;
      break;
    }
  }
  // "2 x dgx_h100 with 8 GPUs each", or for node groups "2 nodes of 8 GPUs in 2 node groups".
  const std::string nodes_text =
      s.cluster.node_groups.empty()
          ? to_string(s.cluster.num_nodes) + " x " + node->name + " with " + gpus_text(node->gpus_per_node) + " each"
          : to_string(s.cluster.num_nodes) + " nodes of " + gpus_text(node->gpus_per_node) + " in " +
                to_string(s.cluster.node_groups.size()) + " node groups";
  if (used != gpus && p.cp > 1) {
    k.layout_error(blamed, "tp * cp * pp * dp = " + to_string(p.tp) + " * " + to_string(p.cp) + " * " +
                               to_string(p.pp) + " * " + to_string(p.dp) + " = " + to_string(used) +
                               " but the cluster has " + gpus_text(gpus) + " (" + nodes_text +
                               ") (expected tp * cp * pp * dp = " + to_string(gpus) + ")");
  } else if (used != gpus) {
    k.layout_error(blamed, "tp * pp * dp = " + to_string(p.tp) + " * " + to_string(p.pp) + " * " + to_string(p.dp) +
                               " = " + to_string(used) + " but the cluster has " + gpus_text(gpus) + " (" + nodes_text +
                               ") (expected tp * pp * dp = " + to_string(gpus) + ")");
  }
}

}  // namespace traincast::io::detail
