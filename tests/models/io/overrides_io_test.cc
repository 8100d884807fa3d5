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
            (std::vector<std::string>{"t.textproto:2:36: cluster.overrides[0].clock_factor: got 1.2 (expected 0.1 <= f "
                                      "<= 1; an element cannot run faster than its datasheet)"}));
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
  // A fresh user's inputs: 0 and false were reported as "select: no factor"; 1e-15 overflowed the
  // clock ("Simulator::schedule_in: negative delay"); a one-node NIC named node0.nic0.tx.
  EXPECT_EQ(errors_of(scenario("select: \"node1/gpu0\" clock_factor: 0")),
            (std::vector<std::string>{"t.textproto:2:36: cluster.overrides[0].clock_factor: got 0 (expected 0.1 <= f "
                                      "<= 1; a GPU that is gone takes missing: true)"}));

  EXPECT_EQ(errors_of(scenario("select: \"node1/nic0\" failed: false")),
            (std::vector<std::string>{"t.textproto:2:36: cluster.overrides[0].failed: got false (expected true, or no "
                                      "override: an element that is up needs none)"}));
  EXPECT_EQ(errors_of(scenario("select: \"node1/gpu0\" clock_factor: 1e-15")),
            (std::vector<std::string>{"t.textproto:2:36: cluster.overrides[0].clock_factor: got 1e-15 (expected 0.1 <= "
                                      "f <= 1: an A100's lowest clock is 0.15 of its boost clock)"}));
  EXPECT_EQ(errors_of(scenario("select: \"node1/nic0\" bandwidth_factor: 1e-9")),
            (std::vector<std::string>{"t.textproto:2:36: cluster.overrides[0].bandwidth_factor: got 1e-9 (expected "
                                      "0.001 <= f <= 1: a PCIe gen5 x16 link trained at gen1 x1 still runs at 0.004 of "
                                      "its rate)"}));
  std::string one_node = scenario("select: \"node0/nic0\" failed: true");
  one_node.replace(one_node.find("num_nodes: 2"), 12, "num_nodes: 1");
  one_node.replace(one_node.find("dp: 2"), 5, "dp: 1");
  EXPECT_EQ(errors_of(one_node),
            (std::vector<std::string>{"t.textproto:2:15: cluster.overrides[0].select: \"node0/nic0\": a one-node "
                                      "cluster has no network, so its NICs carry nothing (expected a NIC of a cluster "
                                      "of 2 or more nodes, or a GPU or NVLink/PCIe link here)"}));
}

TEST(OverridesIo, FailedNicsAndLinksLoadAndBadOnesArePositioned) {
  const models::Scenario s =
      load_scenario_text(scenario("select: \"node1/nic2\" failed: true"), "t.textproto", Format::text, {});
  ASSERT_EQ(s.cluster.overrides.size(), 1u);
  EXPECT_EQ(s.cluster.overrides[0], (models::ElementOverride{"node1/nic2", 0.0, 0.0, true}));
  EXPECT_EQ(load_scenario_text(scenario_to_text(s), "p.textproto", Format::text, {}).cluster.overrides,
            s.cluster.overrides);
  EXPECT_EQ(errors_of(scenario("select: \"node1/gpu2\" failed: true")),
            (std::vector<std::string>{"t.textproto:2:36: cluster.overrides[0].failed: \"node1/gpu2\" names GPUs "
                                      "(expected a NIC, node<N>/nic<K>, or a leaf up-link, leafA->spineB; a GPU takes "
                                      "clock_factor)"}));
  EXPECT_EQ(errors_of(scenario("select: \"node1/nic2\" bandwidth_factor: 0.5 failed: true")),
            (std::vector<std::string>{"t.textproto:2:58: cluster.overrides[0].failed: set with bandwidth_factor "
                                      "(expected failed: true or a factor, not both)"}));
  const std::vector<std::string> nvl = errors_of(scenario("select: \"node0.gpu3.nvl_up\" failed: true"));
  ASSERT_EQ(nvl.size(), 1u);
  EXPECT_EQ(nvl[0].rfind("t.textproto:2:43: cluster.overrides[0].failed: \"node0.gpu3.nvl_up\" is an NVLink link, "
                         "which routes cannot avoid here",
                         0),
            0u)
      << nvl[0];
}

TEST(OverridesIo, PowerCapsLoadAndOutOfRangeOnesArePositioned) {
  const models::Scenario s =
      load_scenario_text(scenario("select: \"node1/gpu2\" power_cap_w: 400"), "t.textproto", Format::text, {});
  EXPECT_EQ(s.cluster.overrides[0], (models::ElementOverride{"node1/gpu2", 0.0, 0.0, false, 400.0}));
  EXPECT_EQ(load_scenario_text(scenario_to_text(s), "p.textproto", Format::text, {}).cluster.overrides,
            s.cluster.overrides);
  // H100 SXM5: nvidia-smi -q Min Power Limit 200 W, Max (TDP) 700 W (models/hardware/catalog.cc).
  const std::vector<std::string> low = errors_of(scenario("select: \"node1/gpu2\" power_cap_w: 100"));
  ASSERT_EQ(low.size(), 1u);
  EXPECT_EQ(low[0].rfind("t.textproto:2:36: cluster.overrides[0].power_cap_w: got 100 W (expected ", 0), 0u) << low[0];
  EXPECT_NE(low[0].find(" to 700 W for H100"), std::string::npos) << low[0];
  EXPECT_EQ(errors_of(scenario("select: \"node1/nic0\" power_cap_w: 400")),
            (std::vector<std::string>{"t.textproto:2:36: cluster.overrides[0].power_cap_w: \"node1/nic0\" names a link "
                                      "or NIC (expected a GPU selector; a link takes bandwidth_factor or failed)"}));
}

TEST(OverridesIo, NodeSupplyTemperaturesLoadAndBadOnesArePositioned) {
  const models::Scenario s =
      load_scenario_text(scenario("select: \"node1\" supply_c: 40"), "t.textproto", Format::text, {});
  ASSERT_TRUE(s.cluster.overrides[0].supply_c.has_value());
  EXPECT_EQ(*s.cluster.overrides[0].supply_c, 40.0);
  EXPECT_EQ(load_scenario_text(scenario_to_text(s), "p.textproto", Format::text, {}).cluster.overrides,
            s.cluster.overrides);
  EXPECT_EQ(
      errors_of(scenario("select: \"node1\" supply_c: 75")),
      (std::vector<std::string>{"t.textproto:2:31: cluster.overrides[0].supply_c: got 75 C (expected 0 to 60 C "
                                "supply air, as thermal.supply_air_c (ASHRAE allowable classes A1-A4: 5-45 C))"}));
  EXPECT_EQ(errors_of(scenario("select: \"node1/gpu2\" supply_c: 40")),
            (std::vector<std::string>{"t.textproto:2:36: cluster.overrides[0].supply_c: \"node1/gpu2\" is not a whole "
                                      "node (expected node<N> or node<A>-<B>)"}));
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
