// cluster.overrides in the scenario schema (issue 18): loading, positioned errors naming what
// exists, the text round trip, and the report's folding section (present only with overrides).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/io/report_io.h"
#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

/// Lines: 1 cluster head, 2 first override, 3 second override, 4 cluster end, 5.. workload.
std::string scenario(const std::string& first, const std::string& second = "") {
  return "cluster { node_template: \"dgx_h100\" num_nodes: 2\n"
         "  overrides { " +
         first +
         " }\n"
         "  " +
         (second.empty() ? std::string() : "overrides { " + second + " }") +
         "\n"
         "}\n"
         "workload {\n"
         "  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
         "  parallel { tp: 8 dp: 2 }\n"
         "  training { global_batch_size: 8 }\n"
         "}\n";
}

TEST(OverridesIo, LoadsSelectorsAndFactors) {
  const models::Scenario s = load_scenario_text(
      scenario("select: \"node1/gpu3\" clock_factor: 0.9", "select: \"node0/nic2\" bandwidth_factor: 0.5"),
      "t.textproto", Format::text, {});
  ASSERT_EQ(s.cluster.overrides.size(), 2u);
  EXPECT_EQ(s.cluster.overrides[0], (models::ElementOverride{"node1/gpu3", 0.9, 0.0}));
  EXPECT_EQ(s.cluster.overrides[1], (models::ElementOverride{"node0/nic2", 0.0, 0.5}));
  // The printed scenario carries them (and reads back the same).
  const std::string text = scenario_to_text(s);
  EXPECT_NE(text.find("select: \"node1/gpu3\""), std::string::npos) << text;
  EXPECT_EQ(load_scenario_text(text, "p.textproto", Format::text, {}).cluster.overrides, s.cluster.overrides);
}

TEST(OverridesIo, BadSelectorsAndFactorsArePositionedAndNameWhatExists) {
  EXPECT_EQ(
      errors_of(scenario("select: \"node2/gpu0\" clock_factor: 0.9")),
      (std::vector<std::string>{"t.textproto:2:15: cluster.overrides[0].select: no node2 (the cluster has node0-1)"}));
  EXPECT_EQ(
      errors_of(scenario("select: \"node1/gpu0\" clock_factor: 0.9", "select: \"node1/gpu9\" clock_factor: 0.9")),
      (std::vector<std::string>{"t.textproto:3:15: cluster.overrides[1].select: no gpu9 on node1 (it has gpu0-7)"}));
  EXPECT_EQ(errors_of(scenario("select: \"node1/gpu0\" clock_factor: 1.2")),
            (std::vector<std::string>{"t.textproto:2:36: cluster.overrides[0].clock_factor: got 1.2 (expected 0 < f <= "
                                      "1; an element cannot run faster than its datasheet)"}));
  EXPECT_EQ(errors_of(scenario("select: \"node1/nic0\" clock_factor: 0.5")),
            (std::vector<std::string>{"t.textproto:2:36: cluster.overrides[0].clock_factor: \"node1/nic0\" names a "
                                      "link or NIC (expected bandwidth_factor for it)"}));
  const std::vector<std::string> range = errors_of(scenario("select: \"node[0-1]\" clock_factor: 0.9"));
  ASSERT_EQ(range.size(), 1u);
  EXPECT_EQ(range[0].rfind("t.textproto:2:15: cluster.overrides[0].select: write a node range as node<A>-<B>", 0), 0u)
      << range[0];
  EXPECT_EQ(errors_of(scenario("clock_factor: 0.9")),
            (std::vector<std::string>{"t.textproto:2:3: cluster.overrides[0].select: required (expected a GPU, node "
                                      "range, NIC or link, e.g. \"node17/gpu3\")"}));
}

TEST(OverridesIo, ReportCarriesFoldingOnlyWhenItHasClasses) {
  models::Report r;
  EXPECT_EQ(report_to_json(r).find("\"folding\""), std::string::npos);
  r.folding.replicas = 4;
  r.folding.simulated_replicas = 2;
  r.folding.classes = {{0, 3, "0, 2-3", "nominal"}, {1, 1, "1", "clock_factor 0.9 on node1/gpu3"}};
  const std::string json = report_to_json(r);
  EXPECT_NE(json.find("\"simulated_replicas\": 2"), std::string::npos) << json;
  EXPECT_NE(json.find("\"reason\": \"clock_factor 0.9 on node1/gpu3\""), std::string::npos) << json;
}

}  // namespace
}  // namespace traincast::io
