// A phase's flows on the cluster's links: each flow's bytes and rate cap, and the phase's
// bottleneck (time per byte, link kind, PCIe duplex load; and the same as NCCL's tuner sees it,
// without the fabric's switch links). Declared in collective_plans.h.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <span>

#include "models/collectives/collective_plans.h"
#include "models/collectives/nccl_tuning.h"

namespace traincast::models {

void finish_phase(CollectivePlan& plan, CollectivePhase& phase, std::span<const std::span<const sim::ResourceId>> paths,
                  std::span<const double> fractions, const PlanInputs& in, std::size_t paths_per_flow) {
  const Cluster& cluster = in.cluster;
  const sim::FlowNetwork& net = in.net;
  std::vector<double>& load = in.scratch.load;
  std::vector<double>& eff_capacity = in.scratch.eff_capacity;
  std::vector<std::uint32_t>& count = in.scratch.count;
  std::vector<sim::ResourceId>& touched = in.scratch.touched;
  phase.first_flow = static_cast<std::uint32_t>(plan.flows.size());
  phase.num_flows = static_cast<std::uint32_t>(paths.size() / paths_per_flow);
  const std::size_t nres = net.num_resources();
  if (load.size() < nres) {
    load.resize(nres, 0.0);
    eff_capacity.resize(nres, 0.0);
    count.resize(nres, 0);
  }
  auto eff = [&](sim::ResourceId r) {
    return link_efficiency(cluster, r) * (cluster.link_kind(r) == LinkKind::nvlink ? phase.nvlink_scale : 1.0);
  };
  touched.clear();
  for (std::size_t i = 0; i < paths.size(); ++i) {
    for (auto r : paths[i]) {
      if (count[r] == 0) touched.push_back(r);
      ++count[r];
      load[r] += fractions[i];
    }
    if (paths_per_flow == 1) {
      CollectiveFlowTemplate f;
      f.path = paths[i];
      f.byte_fraction = fractions[i];
      plan.flows.push_back(f);
    } else if (i % paths_per_flow == 0) {  // a multi-path flow: paths i .. i + paths_per_flow - 1
      CollectiveFlowTemplate f;
      if (plan.multipath_first.empty()) plan.multipath_first.push_back(0);
      f.multipath = static_cast<std::int32_t>(plan.multipath_first.size() - 1);
      for (std::size_t k = i; k < i + paths_per_flow; ++k) {
        f.byte_fraction += fractions[k];
        plan.multipath_paths.push_back(paths[k]);
        plan.multipath_fractions.push_back(fractions[k]);
      }
      plan.multipath_first.push_back(static_cast<std::uint32_t>(plan.multipath_paths.size()));
      plan.flows.push_back(f);
    }
  }
  // Per-flow cap: the flows of this phase together get at most efficiency x capacity on each
  // link, shared in proportion to their bytes (a pipelined collective moves every edge's bytes
  // in step, so all flows on the bottleneck finish together); the bottleneck time per byte is
  // the largest load / (efficiency x capacity).
  // A GPU's PCIe link carrying this phase's bytes both ways is also bounded in sum (up + down <=
  // duplex_efficiency x capacity); reverse's load is 0 when untouched (the scratch is all zeros).
  auto duplex_load = [&](sim::ResourceId r) {
    const sim::ResourceId rev = cluster.gpu_pcie_reverse(r);
    if (rev == Cluster::kNoResource || load[r] <= 0 || load[rev] <= 0) return 0.0;
    return load[r] + load[rev];
  };
  double spb = 0, nvlink_spb = 0, other_spb = 0, fabric_spb = 0;
  for (auto r : touched) {
    eff_capacity[r] = eff(r) * net.capacity(r);  // read again by every flow crossing r below
    const double t = load[r] / eff_capacity[r];
    if (cluster.link_kind(r) == LinkKind::nvlink) {
      nvlink_spb = std::max(nvlink_spb, t);
    } else if (cluster.link_kind(r) != LinkKind::fabric) {
      other_spb = std::max(other_spb, t);
    } else {
      fabric_spb = std::max(fabric_spb, t);
    }
    if (t > spb) {
      spb = t;
      phase.bottleneck = cluster.link_kind(r);
      phase.bottleneck_duplex = false;
    }
    const double both = duplex_load(r);
    if (both > 0) {
      phase.duplex_load_seconds_per_byte = std::max(phase.duplex_load_seconds_per_byte, both / net.capacity(r));
      const double td = both / (pcie_duplex_efficiency(cluster, r) * net.capacity(r));
      other_spb = std::max(other_spb, td);
      if (td > spb) {  // strictly: with the default budget a symmetric load ties the one-way bound
        spb = td;
        phase.bottleneck = LinkKind::pcie;
        phase.bottleneck_duplex = true;
      }
    }
  }
  for (std::uint32_t i = phase.first_flow; i < plan.flows.size(); ++i) {
    CollectiveFlowTemplate& f = plan.flows[i];
    // A multi-path flow's links: those of its paths (a link on several counts once in a minimum).
    std::span<const std::span<const sim::ResourceId>> flow_paths(&f.path, 1);
    if (f.multipath >= 0) {
      const auto k = static_cast<std::size_t>(f.multipath);
      flow_paths = std::span<const std::span<const sim::ResourceId>>(plan.multipath_paths)
                       .subspan(plan.multipath_first[k], plan.multipath_first[k + 1] - plan.multipath_first[k]);
    }
    double node_cap = std::numeric_limits<double>::infinity();
    double fabric_cap = std::numeric_limits<double>::infinity();
    for (const std::span<const sim::ResourceId> path : flow_paths) {
      for (auto r : path) {
        double& cap = cluster.link_kind(r) == LinkKind::fabric ? fabric_cap : node_cap;
        cap = std::min(cap, eff_capacity[r] * f.byte_fraction / load[r]);
        const double both = duplex_load(r);
        if (both > 0)
          cap = std::min(cap, pcie_duplex_efficiency(cluster, r) * net.capacity(r) * f.byte_fraction / both);
      }
    }
    f.node_cap_bytes_per_s = node_cap;
    f.fabric_cap_bytes_per_s = fabric_cap;
    f.cap_bytes_per_s = std::min(node_cap, fabric_cap);
  }
  for (auto r : touched) {
    load[r] = 0;
    count[r] = 0;
  }
  phase.seconds_per_byte = spb;
  phase.nvlink_tuner_seconds_per_byte = nvlink_spb;
  phase.other_tuner_seconds_per_byte = other_spb;
  phase.fabric_seconds_per_byte = fabric_spb;
  phase.tuner_seconds_per_byte = std::max(nvlink_spb, other_spb);
}

double pat_tuner_seconds_per_byte_floor(const CollectivePlan& plan, const RankGroups& g, const PlanInputs& in) {
  // build_pat_plan's paths and fractions, for the ranks i that send to ranks[0] (all_gather: i = n - d; reduce_scatter:
  // i = d) and for ranks[0] itself, each at its index (i x rails + r) x dims + k in build_pat_plan's order, which
  // finish_phase sums the loads in.
  const Cluster& cluster = in.cluster;
  const int n = static_cast<int>(plan.ranks.size());
  const int rails = static_cast<int>(g.rails.size());
  const int dims = std::bit_width(static_cast<unsigned>(n - 1));
  const auto rails_z = static_cast<std::size_t>(rails), dims_z = static_cast<std::size_t>(dims);
  struct Path {
    std::size_t index = 0;
    std::span<const sim::ResourceId> path;
    double fraction = 0;
  };
  std::vector<Path> subset;
  subset.reserve(2 * rails_z * dims_z);
  for (int d = 1, k = 0; d < n; d <<= 1, ++k) {
    const int count = (n - 1 - d) / (2 * d) + 1;  // as build_pat_plan
    const bool gather = plan.op == CollectiveOp::all_gather;
    const int to = gather ? d % n : (n - d) % n;  // ranks[0]'s peer at distance d
    const int from = gather ? n - d : d;          // the rank whose peer at distance d is ranks[0]
    for (int r = 0; r < rails; ++r) {
      const double fraction = static_cast<double>(count) / n / rails;
      const auto at = [&](int i) {
        return (static_cast<std::size_t>(i) * rails_z + static_cast<std::size_t>(r)) * dims_z +
               static_cast<std::size_t>(k);
      };
      subset.push_back({at(0), cluster.route(plan.ranks[0], plan.ranks[to], g.rails[r]), fraction});
      subset.push_back({at(from), cluster.route(plan.ranks[from], plan.ranks[0], g.rails[r]), fraction});
    }
  }
  std::sort(subset.begin(), subset.end(), [](const Path& a, const Path& b) { return a.index < b.index; });
  std::vector<double>& load = in.scratch.load;
  std::vector<std::uint32_t>& count = in.scratch.count;
  std::vector<sim::ResourceId>& touched = in.scratch.touched;
  const std::size_t nres = in.net.num_resources();
  if (load.size() < nres) {
    load.resize(nres, 0.0);
    in.scratch.eff_capacity.resize(nres, 0.0);
    count.resize(nres, 0);
  }
  touched.clear();
  for (const Path& p : subset) {
    for (auto r : p.path) {
      if (count[r] == 0) touched.push_back(r);
      ++count[r];
      load[r] += p.fraction;
    }
  }
  // finish_phase's tuner time per byte over these links (PAT's phase has nvlink_scale 1).
  double spb = 0;
  for (auto r : touched) {
    if (cluster.link_kind(r) != LinkKind::fabric)
      spb = std::max(spb, load[r] / (link_efficiency(cluster, r) * in.net.capacity(r)));
    load[r] = 0;
    count[r] = 0;
  }
  return spb;
}

const sim::FlowNetwork::MultiPathRoute& multipath_route(const CollectivePlan& plan, std::size_t k,
                                                        const sim::FlowNetwork& net) {
  if (plan.routes.empty()) plan.routes.resize(plan.multipath_first.size() - 1);
  sim::FlowNetwork::MultiPathRoute& route = plan.routes[k];
  if (route.resources.empty()) {  // not built yet (a route of empty paths is merely rebuilt)
    const std::uint32_t first = plan.multipath_first[k];
    const std::uint32_t n = plan.multipath_first[k + 1] - first;
    route =
        net.multipath_route(std::span<const std::span<const sim::ResourceId>>(plan.multipath_paths).subspan(first, n),
                            std::span<const double>(plan.multipath_fractions).subspan(first, n));
  }
  return route;
}

}  // namespace traincast::models
