// cluster.overrides missing: true (issue 20): a missing GPU drains its node; the loader takes it,
// keeps it through the text round trip, counts the job's GPUs without the drained node and
// refuses at its position what cannot be drained.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

/// Lines: 1 cluster head, 2 first override, 3 second override, 4 cluster end, 5 workload, 6
/// model, 7 parallel (tp 8, dp `dp`), 8 training.
std::string scenario(const std::string& first, const std::string& second = "", int dp = 2) {
  return "cluster { node_template: \"dgx_h100\" num_nodes: 3\n"
         "  overrides { " +
         first + " }\n  " + (second.empty() ? std::string() : "overrides { " + second + " }") +
         "\n"
         "}\n"
         "workload {\n"
         "  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
         "  parallel { tp: 8 dp: " +
         std::to_string(dp) +
         " }\n"
         "  training { global_batch_size: 48 }\n"
         "}\n";
}

TEST(DrainedNodesIo, AMissingGpuLoadsAndTheJobHasTheOtherNodes) {
  // 3 nodes, node1 drained: tp 8 x dp 2 = 16 GPUs on nodes 0 and 2.
  const models::Scenario s =
      load_scenario_text(scenario("select: \"node1/gpu3\" missing: true"), "t.textproto", Format::text, {});
  ASSERT_EQ(s.cluster.overrides.size(), 1u);
  EXPECT_EQ(s.cluster.overrides[0].select, "node1/gpu3");
  EXPECT_EQ(s.cluster.overrides[0].missing, std::optional<bool>(true));
  EXPECT_EQ(load_scenario_text(scenario_to_text(s), "p.textproto", Format::text, {}).cluster.overrides,
            s.cluster.overrides);
}

TEST(DrainedNodesIo, ALayoutThatNeedsTheDrainedNodeIsRefusedNamingTheMissingGpu) {
  EXPECT_EQ(errors_of(scenario("select: \"node1/gpu3\" missing: true", "", 3)),
            (std::vector<std::string>{
                "t.textproto:7:20: workload.parallel.dp: tp * cp * pp * dp = 24 GPUs, but node1 is drained (its GPU "
                "node1/gpu3 is missing, cluster.overrides[0]), so the job has 2 of the 3 nodes = 16 GPUs (expected "
                "tp * cp * pp * dp = 16)"}));
}

TEST(DrainedNodesIo, WhatCannotBeDrainedIsPositioned) {
  // dp 3: every GPU of the 3 nodes, as an override refused drains nothing.
  EXPECT_EQ(errors_of(scenario("select: \"node1/gpu3\" missing: false", "", 3)),
            (std::vector<std::string>{"t.textproto:2:36: cluster.overrides[0].missing: false (expected missing: true, "
                                      "or no missing field: a GPU is present unless an override says otherwise)"}));
  EXPECT_EQ(errors_of(scenario("select: \"node1\" missing: true", "", 3)),
            (std::vector<std::string>{"t.textproto:2:31: cluster.overrides[0].missing: \"node1\" is not one GPU "
                                      "(expected node<N>/gpu<K>: a node is drained for each missing GPU it has)"}));
  EXPECT_EQ(errors_of(scenario("select: \"node1/nic0\" missing: true", "", 3)),
            (std::vector<std::string>{"t.textproto:2:36: cluster.overrides[0].missing: \"node1/nic0\" is not one GPU "
                                      "(expected node<N>/gpu<K>: a node is drained for each missing GPU it has)"}));
  EXPECT_EQ(errors_of(scenario("select: \"node1/gpu3\" clock_factor: 0.5 missing: true", "", 3)),
            (std::vector<std::string>{"t.textproto:2:54: cluster.overrides[0].missing: set with another field "
                                      "(expected missing: true alone: a missing GPU has no clock, power cap or supply "
                                      "temperature)"}));
  EXPECT_EQ(errors_of(scenario("select: \"node5/gpu3\" missing: true", "", 3)),
            (std::vector<std::string>{"t.textproto:2:15: cluster.overrides[0].select: no node5 (the cluster has "
                                      "node0-2)"}));
  // Another override on the drained node's elements.
  EXPECT_EQ(errors_of(scenario("select: \"node1/gpu3\" missing: true", "select: \"node1/nic0\" bandwidth_factor: 0.5")),
            (std::vector<std::string>{"t.textproto:3:15: cluster.overrides[1].select: node1 is drained (its GPU "
                                      "node1/gpu3 is missing, cluster.overrides[0]), so no job runs on it (expected a "
                                      "node in service)"}));
}

}  // namespace
}  // namespace traincast::io
