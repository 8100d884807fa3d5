// The op-graph runner: stream order, dependencies across workers, collectives that start when
// all participants arrive, and clear errors for graphs that cannot finish.

#include "models/executor/op_graph.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>
#include <vector>

#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

struct Rig {
  Rig() : net(sim), cluster(spec(), net), coll(sim, net, cluster) {}
  static ClusterSpec spec() {
    ClusterSpec s;
    s.node_template = "dgx_h100";
    s.num_nodes = 1;
    return s;
  }
  sim::Simulator sim;
  sim::FlowNetwork net;
  Cluster cluster;
  CollectiveEngine coll;
};

Op compute(std::uint32_t worker, std::int64_t ns, Stream stream = kCompute) {
  Op op;
  op.worker = worker;
  op.duration_ns = ns;
  op.stream = stream;
  return op;
}

TEST(OpGraph, StreamOrderAndDependencies) {
  Rig rig;
  OpGraph g;
  g.workers = 2;
  g.ops = {compute(0, 100), compute(0, 50), compute(1, 30), compute(1, 20)};
  // op 3 (worker 1) waits for op 0 (worker 0); op 2 runs at once.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges = {{0, 3}};
  g.set_edges(edges);
  EXPECT_TRUE(edges.empty());
  run_op_graph(rig.sim, rig.coll, g);
  EXPECT_EQ(g.ops[0].end_ns, 100);
  EXPECT_EQ(g.ops[1].start_ns, 100);  // same stream: after op 0
  EXPECT_EQ(g.ops[1].end_ns, 150);
  EXPECT_EQ(g.ops[2].end_ns, 30);
  EXPECT_EQ(g.ops[3].start_ns, 100);  // waited for op 0, not for op 2 only
  EXPECT_EQ(g.ops[3].last_dep, 0u);
  EXPECT_EQ(g.ops[3].end_ns, 120);
}

TEST(OpGraph, CollectiveStartsWhenAllParticipantsArriveAndTakesTheModelledTime) {
  Rig rig;
  OpGraph g;
  g.workers = 2;
  const std::uint32_t group = g.groups.add({0, 1});
  Task t;
  t.op = CollectiveOp::all_reduce;
  t.bytes = 256e6;
  t.group_begin = group;
  t.group_count = 1;
  t.expected = 2;
  t.participant_count = 2;
  g.tasks = {t};
  g.ops = {compute(0, 1000), compute(1, 5000)};
  for (std::uint32_t w = 0; w < 2; ++w) {
    Op c;
    c.worker = w;
    c.task = 0;
    c.stream = kDp;
    g.ops.push_back(c);
  }
  g.participants = {2, 3};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges = {{0, 2}, {1, 3}};
  g.set_edges(edges);
  run_op_graph(rig.sim, rig.coll, g);
  CollectiveCall call;
  call.op = CollectiveOp::all_reduce;
  call.bytes = 256e6;
  call.ranks = {0, 1};
  const double expected_s = rig.coll.estimate_seconds(call);
  // Both participants finish together, once the later one (worker 1 at 5 us) arrived.
  EXPECT_EQ(g.ops[2].end_ns, g.ops[3].end_ns);
  EXPECT_NEAR(static_cast<double>(g.ops[3].end_ns - 5000) * 1e-9, expected_s, 0.02 * expected_s);
}

TEST(OpGraph, CycleIsALogicError) {
  Rig rig;
  OpGraph g;
  g.workers = 1;
  g.ops = {compute(0, 10, kCompute), compute(0, 10, kTp)};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges = {{0, 1}, {1, 0}};
  g.set_edges(edges);
  EXPECT_THROW(run_op_graph(rig.sim, rig.coll, g), std::logic_error);
}

TEST(OpGraph, CollectiveMissingAParticipantIsALogicError) {
  Rig rig;
  OpGraph g;
  g.workers = 1;
  Task t;
  t.group_begin = g.groups.add({0, 1});
  t.group_count = 1;
  t.expected = 2;
  t.participant_count = 1;
  g.tasks = {t};
  Op c;
  c.task = 0;
  g.ops = {c};
  g.participants = {0};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  g.set_edges(edges);
  EXPECT_THROW(run_op_graph(rig.sim, rig.coll, g), std::logic_error);
}

TEST(OpGraph, EdgeToMissingOpIsALogicError) {
  OpGraph g;
  g.workers = 1;
  g.ops = {compute(0, 10)};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges = {{0, 7}};
  EXPECT_THROW(g.set_edges(edges), std::logic_error);
}

}  // namespace
}  // namespace traincast::models
