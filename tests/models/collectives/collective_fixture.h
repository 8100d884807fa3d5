#pragma once
// For collective tests: a cluster with its engine on a fresh simulator (Bench), a listener that
// records completions, and CollectiveCall shorthands.

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models::test_support {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Recorder : CollectiveListener {
  void on_collective_done(std::uint64_t tag) override {
    tags.push_back(tag);
    times_ns.push_back(sim->now().ns());
  }
  sim::Simulator* sim = nullptr;
  std::vector<std::uint64_t> tags;
  std::vector<std::int64_t> times_ns;
};

struct Bench {
  Bench(const std::string& tmpl, int nodes) : Bench(make(tmpl, nodes)) {}
  explicit Bench(const ClusterSpec& spec) : net(sim), cluster(spec, net), engine(sim, net, cluster) { rec.sim = &sim; }
  static ClusterSpec make(const std::string& tmpl, int nodes) {
    ClusterSpec s;
    s.node_template = tmpl;
    s.num_nodes = nodes;
    return s;
  }
  /// Runs one collective alone, returns its duration [s].
  double run(const CollectiveCall& call) {
    const std::int64_t t0 = sim.now().ns();
    const std::size_t before = rec.tags.size();
    engine.start(call, &rec, 42);
    sim.run();
    EXPECT_EQ(rec.tags.size(), before + 1);
    return (rec.times_ns.back() - t0) * 1e-9;
  }
  /// Sum of bytes carried by the resources whose name starts with `prefix`.
  double carried_prefix(const std::string& prefix) const {
    double sum = 0;
    for (sim::ResourceId r = 0; r < net.num_resources(); ++r) {
      if (net.resource_name(r).rfind(prefix, 0) == 0) sum += net.stats(r).bytes_carried;
    }
    return sum;
  }
  double carried(const std::string& name) const {
    for (sim::ResourceId r = 0; r < net.num_resources(); ++r) {
      if (net.resource_name(r) == name) return net.stats(r).bytes_carried;
    }
    ADD_FAILURE() << "no resource " << name;
    return -1;
  }
  sim::Simulator sim;
  sim::FlowNetwork net;
  Cluster cluster;
  CollectiveEngine engine;
  Recorder rec;
};

inline std::vector<int> iota(int first, int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

inline CollectiveCall call(CollectiveOp op, std::vector<int> ranks, double bytes,
                           CollectiveAlgorithm a = CollectiveAlgorithm::automatic) {
  CollectiveCall c;
  c.op = op;
  c.ranks = std::move(ranks);
  c.bytes = bytes;
  c.algorithm = a;
  return c;
}

}  // namespace traincast::models::test_support
