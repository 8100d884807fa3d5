// `traincast explain SCENARIO [--path GPU_A GPU_B] [--dot FILE]`: the cluster a scenario builds,
// in words (per node: devices and links with bandwidths; the fabric), the route between two GPUs
// with its bottleneck, and a Graphviz DOT export.

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <map>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "models/hardware/cluster.h"
#include "models/io/scenario_io.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/commands.h"

namespace traincast::cli {

namespace {

/// Across nodes, NCCL's send/recv from `a` to `b` may leave the route Cluster::route gives: its
/// NIC choice (ncclTopoGetLocalNet / ncclTopoGetLocal, the largest path bandwidth first) skips a
/// NIC slowed or failed by cluster.overrides, and the collectives' p2p plans follow it
/// (CollectiveEngine's send_recv plan). Where its paths differ from `route`, prints them, each
/// with its share of the bytes and its slowest link, and the bottleneck they give; nothing
/// otherwise (same node, or the same route).
void print_nccl_p2p_route(std::ostream& out, const models::Cluster& cluster, const models::CollectiveEngine& engine,
                          int a, int b, std::span<const sim::ResourceId> route) {
  if (cluster.node_of(a) == cluster.node_of(b)) return;
  models::CollectiveCall call;
  call.op = models::CollectiveOp::send_recv;
  call.ranks = {a, b};
  call.bytes = 1 << 30;
  const models::CollectiveEngine::Prepared prepared = engine.prepare(call);
  if (prepared.plan == nullptr) return;
  std::vector<const models::CollectiveFlowTemplate*> flows;
  for (const models::CollectiveFlowTemplate& f : prepared.plan->flows)
    if (f.multipath < 0 && f.byte_fraction > 0) flows.push_back(&f);
  if (flows.empty() || (flows.size() == 1 && std::ranges::equal(flows.front()->path, route))) return;
  double total = 0;
  for (const models::CollectiveFlowTemplate* f : flows) total += f->byte_fraction;
  out << "NCCL's send/recv between them takes " << (flows.size() == 1 ? "another route" : "other routes")
      << " (its NIC choice skips a slowed or failed NIC: docs/fabric.md):\n";
  // The paths run at once, each moving its share: a link carries the shares of the paths that
  // cross it, and each flow is held to NCCL's rate cap for it (CollectiveFlowTemplate); the call's
  // rate is the least of capacity / load over the links and cap / share over the flows.
  std::map<sim::ResourceId, double> load;
  double rate = 1e300;
  for (const models::CollectiveFlowTemplate* f : flows) {
    double slowest = 1e300;
    std::string slowest_name;
    std::string nics;  // the NICs it leaves and enters through, "node0.nic5.tx -> node1.nic5.rx"
    for (sim::ResourceId r : f->path) {
      const std::string& n = cluster.resource_name(r);
      load[r] += f->byte_fraction / total;
      if (cluster.capacity(r) < slowest) {
        slowest = cluster.capacity(r);
        slowest_name = n;
      }
      if (n.ends_with(".tx") || n.ends_with(".rx")) nics += (nics.empty() ? "" : " -> ") + n;
    }
    const double share = f->byte_fraction / total;
    if (f->cap_bytes_per_s > 0) rate = std::min(rate, f->cap_bytes_per_s / share);
    char line[320];
    std::snprintf(line, sizeof line, "  %5.1f%% of the bytes via %s; slowest link %s at %.2f GB/s (%zu links)\n",
                  100 * share, nics.c_str(), slowest_name.c_str(), slowest / 1e9, f->path.size());
    out << line;
  }
  for (const auto& [r, l] : load) rate = std::min(rate, cluster.capacity(r) / l);
  char line[200];
  std::snprintf(line, sizeof line,
                "Bottleneck of NCCL's route: %.2f GB/s per direction for the pair alone (its links and NCCL's "
                "per-channel caps)\n",
                rate / 1e9);
  out << line;
}

}  // namespace

namespace po = boost::program_options;

namespace {

const char* kind_name(models::LinkKind k) {
  switch (k) {
    case models::LinkKind::nvlink:
      return "NVLink";
    case models::LinkKind::pcie:
      return "PCIe";
    case models::LinkKind::socket:
      return "socket";
    case models::LinkKind::nic:
      return "NIC";
    case models::LinkKind::fabric:
      return "fabric";
    case models::LinkKind::other:
      return "other";
  }
  return "?";
}

/// What --path takes, for its messages.
constexpr const char* kGpuForms = "gpuN, N, nodeM.gpuK or nodeM/gpuK";

/// A GPU in --path's form built from `text`, for its messages: "node3/gpu0" for text naming
/// node3 ("node3/nic0", "node3", "node3.gpu9x"), else "gpu3".
std::string gpu_example(const std::string& text) {
  const std::size_t digits = text.rfind("node", 0) == 0 ? text.find_first_not_of("0123456789", 4) : 4;
  const std::size_t end = digits == std::string::npos ? text.size() : digits;
  if (end == 4 || end - 4 > 9) return "gpu3";
  return text.substr(0, end) + "/gpu0";
}

/// The message for a --path argument that is not a GPU: what it names instead where it reads as
/// a cluster.overrides selector of something else ("node3/nic0", "node3", "node0-1/gpu2"), each
/// with the accepted forms and an example built from it.
std::string not_a_gpu(const std::string& text) {
  const std::string expected = std::string("(expected ") + kGpuForms + ", e.g. " + gpu_example(text) + ")";
  const std::size_t slash = text.find_first_of("/.");
  const std::string node = text.substr(0, slash);
  if (node.rfind("node", 0) == 0 && node.find('-') != std::string::npos)
    return "--path: '" + text + "' names a range of nodes, not one GPU " + expected;
  if (node.rfind("node", 0) == 0 && node.size() > 4 && slash == std::string::npos)
    return "--path: '" + text + "' names a node, not one GPU " + expected;
  if (node.rfind("node", 0) == 0 && slash != std::string::npos && text.compare(slash + 1, 3, "nic") == 0)
    return "--path: '" + text + "' is a NIC: the path runs from GPU to GPU and lists the NICs it crosses " + expected;
  return "--path: bad GPU '" + text + "' " + expected;
}

/// "gpu3", "3", "node1.gpu2" or "node1/gpu2" (the form cluster.overrides selectors take) ->
/// global GPU id. Throws UsageError.
int parse_gpu(const std::string& text, const models::Cluster& cluster) {
  const auto bad = [&] { return UsageError(not_a_gpu(text)); };
  // A number of at most 9 digits (std::stoi's range: "node99999999999.gpu0" threw out_of_range).
  auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) throw bad();
    // As cluster.overrides selectors: decimal without leading zeros ("node01" is not node1).
    if (s.size() > 1 && s[0] == '0')
      throw UsageError("--path: '" + text + "': " + s + " has a leading zero (expected " + kGpuForms +
                       " with decimal numbers without leading zeros, as cluster.overrides selectors)");
    return std::stoi(s);
  };
  int gpu = 0;
  if (text.rfind("node", 0) == 0) {
    std::size_t dot = text.find(".gpu");
    if (dot == std::string::npos) dot = text.find("/gpu");
    if (dot == std::string::npos) throw bad();
    // nodeM is the scenario's node M, as selectors and link names number it: with a drained node
    // (a missing GPU) the job's nodes skip it.
    const int slot = number(text.substr(4, dot - 4));
    const int local = number(text.substr(dot + 4));
    if (local >= cluster.gpus_per_node()) {
      throw UsageError("--path: " + text + ": a node has " + std::to_string(cluster.gpus_per_node()) +
                       (cluster.gpus_per_node() == 1 ? " GPU" : " GPUs") + " (expected gpu0 to gpu" +
                       std::to_string(cluster.gpus_per_node() - 1) + ")");
    }
    if (slot >= cluster.fabric_slots()) {
      throw UsageError("--path: " + text + " outside the cluster's " + std::to_string(cluster.fabric_slots()) +
                       " nodes (expected node0 to node" + std::to_string(cluster.fabric_slots() - 1) + ")");
    }
    const int node = cluster.node_at_slot(slot);
    if (node < 0) {
      throw UsageError("--path: " + text + ": node" + std::to_string(slot) +
                       " is drained (a GPU of it is missing: cluster.overrides) (expected a node in service)");
    }
    gpu = node * cluster.gpus_per_node() + local;
  } else {
    gpu = number(text.rfind("gpu", 0) == 0 ? text.substr(3) : text);
  }
  if (gpu >= cluster.num_gpus()) {
    throw UsageError("--path: GPU " + text + " outside the cluster's " + std::to_string(cluster.num_gpus()) +
                     " GPUs (expected gpu0 to gpu" + std::to_string(cluster.num_gpus() - 1) + ", or nodeM.gpuK)");
  }
  return gpu;
}

}  // namespace

int explain_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "traincast explain SCENARIO [options]\n\n"
      "Describes the cluster SCENARIO builds: per node the GPUs, NVLink/NVSwitch, PCIe switches, CPU\n"
      "sockets and NICs with their bandwidths (per direction, GB = 1e9 B), and the fabric. --path\n"
      "lists the links a byte crosses between two GPUs (as the collectives route it), with the\n"
      "bottleneck and what NCCL achieves on it; --dot writes the graph for Graphviz.\n\nOptions");
  opts.add_options()("help,h", "show this help")(
      "path", po::value<std::vector<std::string>>()->multitoken(),
      "two GPUs: gpuN, N, nodeM.gpuK or nodeM/gpuK (the cluster.overrides form), e.g. --path gpu3 "
      "node1/gpu4")("dot", po::value<std::string>(), "write the topology as Graphviz DOT to this file")(
      "max-nodes", po::value<int>()->default_value(8), "nodes drawn in the DOT file")(
      "force", "overwrite an existing --dot file")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a cluster field, e.g. --set cluster.num_nodes=2 (others are refused)")(
      "scenario", po::value<std::string>(), "scenario file (positional)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  return guarded(err, [&]() -> int {
    const po::variables_map vm = parse_options(args, opts, pos);
    if (vm.count("help")) {
      out << opts << "\n";
      return 0;
    }
    if (!vm.count("scenario")) throw UsageError("explain: no scenario given (usage: traincast explain SCENARIO)");
    const std::string scenario_path = vm["scenario"].as<std::string>();
    std::vector<std::string> path;
    if (vm.count("path")) {
      path = vm["path"].as<std::vector<std::string>>();
      if (path.size() != 2)
        throw UsageError("--path: needs exactly two GPUs (got " + std::to_string(path.size()) + ")");
    }
    const int max_nodes = vm["max-nodes"].as<int>();
    check_at_least("--max-nodes", max_nodes, 1, "the nodes drawn in the DOT file");
    if (!vm["max-nodes"].defaulted() && !vm.count("dot"))
      throw UsageError(
          "--max-nodes: limits the DOT file's drawing, and no --dot FILE is given (expected --dot FILE "
          "beside it)");
    std::vector<std::string> overrides;
    if (vm.count("set")) overrides = vm["set"].as<std::vector<std::string>>();
    const models::Scenario sc = io::load_cluster_scenario_file(scenario_path, overrides, {"traincast explain", {}});
    check_network_size_at(sc, scenario_path, overrides);  // before the cluster is built
    warn_settings_without_effect(sc, err, scenario_path, overrides);
    const models::Cluster cluster(sc.cluster);
    if (vm.count("dot"))
      check_output_path(vm["dot"].as<std::string>(), vm.count("force") > 0, scenario_input_files(sc, scenario_path));
    // Bad --path arguments are refused before anything is printed.
    const int a = path.empty() ? 0 : parse_gpu(path[0], cluster), b = path.empty() ? 0 : parse_gpu(path[1], cluster);
    if (!path.empty() && a == b) throw UsageError("--path: the two GPUs are the same (" + path[0] + ")");
    out << cluster.describe();
    if (!path.empty()) {
      // The engine only gives the per-link efficiency here; it needs a network to exist.
      sim::Simulator sim;
      sim::FlowNetwork net(sim);
      cluster.install(net);
      const models::CollectiveEngine engine(sim, net, cluster);
      const auto route = cluster.route(a, b);
      // Named as the scenario numbers nodes (a drained node keeps its number).
      const auto name = [&](int g) {
        return "node" + std::to_string(cluster.fabric_slot(cluster.node_of(g))) + ".gpu" +
               std::to_string(cluster.local_rank(g));
      };
      out << "\nPath gpu" << a << " (" << name(a) << ") -> gpu" << b << " (" << name(b) << "), " << route.size()
          << " links:\n";
      double bottleneck = 1e300, achievable = 1e300;
      std::string bottleneck_name;
      long long latency_ns = 0;
      char line[256];
      for (sim::ResourceId r : route) {
        const double cap = cluster.capacity(r);
        const double eff = engine.efficiency(r);
        std::snprintf(line, sizeof line, "  %-36s %-7s %9.2f GB/s (NCCL achieves %6.1f%%) %6lld ns\n",
                      cluster.resource_name(r).c_str(), kind_name(cluster.link_kind(r)), cap / 1e9, eff * 100,
                      static_cast<long long>(cluster.latency(r).ns()));
        out << line;
        if (cap < bottleneck) {
          bottleneck = cap;
          bottleneck_name = cluster.resource_name(r);
        }
        achievable = std::min(achievable, cap * eff);
        latency_ns += cluster.latency(r).ns();
      }
      std::snprintf(line, sizeof line,
                    "Bottleneck: %s at %.2f GB/s per direction; achievable %.2f GB/s; wire latency %lld ns\n",
                    bottleneck_name.c_str(), bottleneck / 1e9, achievable / 1e9, latency_ns);
      out << line;
      print_nccl_p2p_route(out, cluster, engine, a, b, route);
    }
    if (vm.count("dot")) {
      write_output_file(vm["dot"].as<std::string>(), cluster.to_dot(max_nodes));
      out << "\nWrote " << vm["dot"].as<std::string>() << " (render: dot -Tsvg " << vm["dot"].as<std::string>()
          << " -o topology.svg)\n";
    }
    return 0;
  });
}

}  // namespace traincast::cli
