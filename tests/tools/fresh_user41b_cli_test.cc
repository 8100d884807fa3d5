// What session 41's fresh user found, fixed by the lead: a field written in the wrong message
// named only the message's own fields, and a switch link that the fabric does not have listed
// node0's GPU links and the grammar's `leaf0->spine1` example.

#include <gtest/gtest.h>

#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::has;
using test_support::Result;
using test_support::run;

// Before: "overrides: unknown field (expected one of: name, description, cluster, ...)".
TEST(FreshUser41Lead, AFieldInTheWrongMessageNamesWhereItBelongs) {
  const traincast::test_support::TempDir dir("fresh_user41_elsewhere");
  const std::string text = dir.write("top.textproto", "overrides { select: \"node0/gpu1\" clock_factor: 0.9 }\n");
  Result r = run({"run", text});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, text + ":1:1: overrides: unknown field (expected one of: name, description, cluster"))
      << r.err;
  EXPECT_TRUE(has(r.err, "; overrides is a field of cluster)")) << r.err;
  // The same in a JSON scenario, and for a layout field one level too high.
  const std::string json = dir.write("tp.json", "{\"workload\": {\"tp\": 4}}\n");
  r = run({"run", json});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, "workload.tp: unknown field")) << r.err;
  EXPECT_TRUE(has(r.err, "; tp is a field of workload.parallel)")) << r.err;
  // A misspelling keeps its did-you-mean, without the other hint.
  const std::string typo = dir.write("typo.textproto", "cluster { overides { select: \"node0/gpu1\" } }\n");
  r = run({"run", typo});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, "did you mean \"overrides\"?")) << r.err;
  EXPECT_FALSE(has(r.err, "is a field of")) << r.err;
}

// Before: "no GPU, NIC or link named \"leaf0->spine1\" (...; links such as: node0.gpu0.nvl_up, ...".
TEST(FreshUser41Lead, AMissingSwitchLinkListsTheFabricsSwitchLinks) {
  const traincast::test_support::TempDir dir("fresh_user41_switch_link");
  const std::string one_leaf = dir.write("one_leaf.textproto",
                                         "cluster { node_template: \"dgx_h100\" num_nodes: 2\n"
                                         "  overrides { select: \"leaf0->spine1\" bandwidth_factor: 0.5 } }\n");
  Result r = run({"explain", one_leaf});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, one_leaf + ":2:")) << r.err;
  EXPECT_TRUE(has(r.err, "this cluster's fabric has no switch-to-switch links")) << r.err;
  EXPECT_FALSE(has(r.err, "nvl_up")) << r.err;
  const std::string fat_tree = dir.write("fat_tree.textproto",
                                         "cluster { node_template: \"dgx_h100\" num_nodes: 4\n"
                                         "  fabric { kind: fat_tree nodes_per_leaf: 2 routing: d_mod_k }\n"
                                         "  overrides { select: \"leaf0->spine99\" bandwidth_factor: 0.5 } }\n");
  r = run({"explain", fat_tree});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, "links such as: leaf0->spine0, leaf0->spine1,")) << r.err;
}

}  // namespace
}  // namespace traincast::cli
