// Loading mixed clusters (cluster.node_group, issue 20) and uneven pipeline splits
// (workload.parallel.pipeline_stage_layers): what the loader derives, and each refusal with its
// file:line:col and field.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

/// Lines: 1 cluster {, 2-3 the groups, 4 extra cluster fields, 5 }, 6 workload {, 7 model,
/// 8 parallel, 9 training, 10 }.
std::string mixed(const std::string& second_group, const std::string& cluster_extra, const std::string& parallel) {
  return "cluster {\n"
         "  node_group { node_template: \"dgx_a100\" num_nodes: 1 }\n"
         "  " +
         second_group +
         "\n"
         "  " +
         cluster_extra +
         "\n"
         "}\n"
         "workload {\n"
         "  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
         "  parallel { " +
         parallel +
         " }\n"
         "  training { global_batch_size: 8 micro_batch_size: 1 precision: bf16 }\n"
         "}\n";
}

const std::string kH100 = "node_group { node_template: \"dgx_h100\" num_nodes: 1 }";
const std::string kHdr = "nic: \"IB-HDR-200\"";

TEST(MixedClusterIo, GroupsGiveTheTemplateAndNodeCount) {
  const models::Scenario sc =
      load_scenario_text(mixed(kH100, kHdr, "tp: 8 pp: 2 pipeline_stage_layers: [3, 5]"), "t.textproto", Format::text);
  ASSERT_EQ(sc.cluster.node_groups.size(), 2U);
  EXPECT_EQ(sc.cluster.node_groups[1].node_template, "dgx_h100");
  EXPECT_EQ(sc.cluster.node_template, "dgx_a100");
  EXPECT_EQ(sc.cluster.num_nodes, 2);
  EXPECT_EQ(sc.parallel.pipeline_stage_layers, (std::vector<int>{3, 5}));
}

// Each group's GPU must run the precision, whichever group comes first (new-user pass: an A100
// group after an H100 one ran fp8 to an unpositioned "no dense peak" at simulation).
TEST(MixedClusterIo, EveryGroupsGpuMustRunThePrecision) {
  std::string fp8 = mixed(kH100, kHdr, "tp: 8 pp: 2");
  fp8.replace(fp8.find("precision: bf16"), 15, "precision: fp8");
  EXPECT_EQ(errors_of(fp8), std::vector<std::string>{"t.textproto:9:55: workload.training.precision: fp8 is not "
                                                     "supported by A100-SXM4-80GB (expected one of: fp32, tf32, "
                                                     "fp16, bf16)"});
  // The same groups in the other order.
  std::string swapped = fp8;
  const std::string a100 = "node_group { node_template: \"dgx_a100\" num_nodes: 1 }";
  swapped.replace(swapped.find(a100), a100.size(), "@");
  swapped.replace(swapped.find(kH100), kH100.size(), a100);
  swapped.replace(swapped.find("@"), 1, kH100);
  EXPECT_EQ(errors_of(swapped), errors_of(fp8));
}

TEST(MixedClusterIo, GroupsOnTwoNicsAreRefused) {
  EXPECT_EQ(errors_of(mixed(kH100, "", "tp: 8 pp: 2")),
            std::vector<std::string>{
                "t.textproto:3:16: cluster.node_group[1].node_template: 'dgx_h100' cannot share a fabric with "
                "'dgx_a100' (node_group[0]): NIC IB-NDR-400 vs IB-HDR-200 (one fabric runs at one line rate; set "
                "cluster.nic) (expected templates of the same board shape and NIC)"});
}

TEST(MixedClusterIo, GroupsOfAnotherBoardShapeAreRefused) {
  EXPECT_EQ(errors_of(mixed("node_group { node_template: \"gb200_nvl72\" num_nodes: 1 }", kHdr, "tp: 8 pp: 2")),
            std::vector<std::string>{
                "t.textproto:3:16: cluster.node_group[1].node_template: 'gb200_nvl72' cannot share a fabric with "
                "'dgx_a100' (node_group[0]): GPUs per node 72 vs 8 (expected templates of the same board shape and "
                "NIC)"});
}

TEST(MixedClusterIo, FieldsTheGroupsReplaceAreRefused) {
  EXPECT_EQ(errors_of(mixed(kH100, kHdr + " node_template: \"dgx_h100\"", "tp: 8 pp: 2")),
            std::vector<std::string>{"t.textproto:4:21: cluster.node_template: \"dgx_h100\" set with node_group "
                                     "(expected it unset; each group names its template)"});
  EXPECT_EQ(errors_of(mixed(kH100, kHdr + " num_nodes: 3", "tp: 8 pp: 2")),
            (std::vector<std::string>{"t.textproto:4:21: cluster.num_nodes: 3 set with node_group holding 2 nodes "
                                      "(expected it unset, or their sum)",
                                      // Every error is collected: num_nodes 3 also fails the GPU count.
                                      "t.textproto:8:3: workload.parallel.dp: tp * pp * dp = 8 * 2 * 1 = 16 but the "
                                      "cluster has 24 GPUs (3 nodes of 8 GPUs in 2 node groups) (expected tp * pp "
                                      "* dp = 24)"}));
}

TEST(MixedClusterIo, UnknownGroupTemplateIsRefused) {
  const std::vector<std::string> e =
      errors_of(mixed("node_group { node_template: \"dgx_h1000\" num_nodes: 1 }", kHdr, "tp: 8 pp: 2"));
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e.front().rfind("t.textproto:3:16: cluster.node_group[1].node_template: unknown node template "
                            "\"dgx_h1000\"",
                            0),
            0U)
      << e.front();
}

// The first group's template and the groups' node count stand in for cluster.node_template and
// num_nodes; a mistake in the group is reported once, at the group, not again at the cluster.
TEST(MixedClusterIo, AMistakeInTheFirstGroupIsReportedOnce) {
  std::string typo = mixed(kH100, kHdr, "tp: 8 pp: 2");
  typo.replace(typo.find("\"dgx_a100\""), 10, "\"dgx_a10\"");
  const std::vector<std::string> e = errors_of(typo);
  ASSERT_EQ(e.size(), 1U) << e.front();
  EXPECT_EQ(e.front().rfind("t.textproto:2:16: cluster.node_group[0].node_template: unknown node template", 0), 0U)
      << e.front();
  std::string empty = mixed(kH100, kHdr, "tp: 8 pp: 2");
  empty.replace(empty.find("num_nodes: 1"), 12, "num_nodes: 0");
  EXPECT_EQ(errors_of(empty), std::vector<std::string>{"t.textproto:2:42: cluster.node_group[0].num_nodes: got 0 "
                                                       "(expected an integer from 1 to 2147483647)"});
}

TEST(MixedClusterIo, AJobListOnGroupsIsRefused) {
  EXPECT_EQ(errors_of(mixed(kH100, kHdr, "tp: 8 pp: 2") + "job { workload: \"llama3_8b\" gpus: 8 tokens: 1e9 }\n"),
            std::vector<std::string>{"t.textproto:2:3: cluster.node_group: set with a job list (expected one "
                                     "template per cluster for `traincast cluster`)"});
}

TEST(MixedClusterIo, StageLayersMustSumToTheModelOnePerStage) {
  EXPECT_EQ(errors_of(mixed(kH100, kHdr, "tp: 8 pp: 2 pipeline_stage_layers: [3, 4]")),
            std::vector<std::string>{"t.textproto:8:26: workload.parallel.pipeline_stage_layers: sums to 7 layers "
                                     "(expected num_layers = 8)"});
  EXPECT_EQ(errors_of(mixed(kH100, kHdr, "tp: 8 pp: 2 pipeline_stage_layers: [2, 3, 3]")),
            std::vector<std::string>{"t.textproto:8:26: workload.parallel.pipeline_stage_layers: 3 entries for pp = "
                                     "2 (expected one entry per pipeline stage)"});
}

}  // namespace
}  // namespace traincast::io
