// Tests of models/io scenario loading: text and JSON, --set overrides, parse and file errors
// (exact text with file:line:col and field path). The semantic checks are tested in
// scenario_checks_test.cc, report JSON in report_io_test.cc, validation case files in
// validation_cases_io_test.cc.

#include "models/io/scenario_io.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/models/io/scenario_errors.h"
#include "tests/models/io/small_scenario.h"

namespace traincast::io {
namespace {

const std::string kSourceDir = TRAINCAST_SOURCE_DIR;
const std::string kDataDir = kSourceDir + "/tests/models/io/data";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

using test_support::errors_of;
using test_support::small;

// ------------------------------------------------------------------------------------------------
// Loading
// ------------------------------------------------------------------------------------------------

TEST(ScenarioIo, EmbeddedDefaultIsTheGalleryFile) {
  const std::string path = kSourceDir + "/scenarios/default.textproto";
  EXPECT_EQ(default_scenario_text(), read(path));
  const models::Scenario embedded = default_scenario();
  EXPECT_TRUE(embedded == load_scenario_file(path));
  // Values written in the file (Meta Llama 3 8B model card shapes) and defaults kept for the rest.
  EXPECT_EQ(embedded.name, "llama3-8b-dgx-h100");
  EXPECT_EQ(embedded.model.num_layers, 32);
  EXPECT_EQ(embedded.model.num_query_groups, 8);
  EXPECT_EQ(embedded.model.vocab_size, 128256);
  EXPECT_EQ(embedded.parallel.tp, 2);
  EXPECT_EQ(embedded.parallel.dp, 4);
  EXPECT_TRUE(embedded.parallel.sequence_parallel);
  EXPECT_EQ(embedded.parallel.zero_stage, 1);
  EXPECT_EQ(embedded.training.precision, models::Precision::bf16);
  EXPECT_EQ(embedded.training.recompute, models::Recompute::selective);
  const models::Scenario defaults;  // fields the file leaves out keep models/spec/scenario.h's defaults
  EXPECT_EQ(embedded.cluster.fabric.kind, defaults.cluster.fabric.kind);
  EXPECT_EQ(embedded.cluster.fabric.switch_latency_ns, defaults.cluster.fabric.switch_latency_ns);
  EXPECT_EQ(embedded.parallel.dp_bucket_bytes, defaults.parallel.dp_bucket_bytes);
  EXPECT_EQ(embedded.training.fp32_grad_accumulation, defaults.training.fp32_grad_accumulation);
  EXPECT_EQ(embedded.options.iterations, defaults.options.iterations);
}

TEST(ScenarioIo, JsonEquivalentLoadsToTheSameStruct) {
  EXPECT_TRUE(load_scenario_file(kDataDir + "/default.json") == default_scenario());
}

TEST(ScenarioIo, JsonAcceptsLowerCamelNamesAndQuoted64BitIntegers) {  // a 32-bit one: fresh_user35_cli_test
  const std::string json = R"({"cluster": {"nodeTemplate": "dgx_h100", "numNodes": 1,
                                           "fabric": {"switchLatencyNs": "150"}},
    "workload": {"model": {"numLayers": 8, "hidden_size": 1024, "num_attention_heads": 16,
                           "vocab_size": 32000, "seq_length": 2048},
                 "parallel": {"tp": 2, "pp": 2, "dp": 2},
                 "training": {"globalBatchSize": 16, "precision": "fp16"}}})";
  const models::Scenario s = load_scenario_text(json, "t.json", Format::json);
  EXPECT_EQ(s.model.num_layers, 8);
  EXPECT_EQ(s.training.global_batch_size, 16);
  EXPECT_EQ(s.training.precision, models::Precision::fp16);
  EXPECT_EQ(s.cluster.fabric.switch_latency_ns, 150);
}

TEST(ScenarioIo, TextRoundTripKeepsEveryField) {
  models::Scenario s = load_scenario_text(small(" num_query_groups: 8 ffn_hidden_size: 3000 gated_mlp: true",
                                                " sequence_parallel: true zero_stage: 1 overlap_param_gather: true"
                                                " tp_comm_overlap: true dp_bucket_bytes: 1e6",
                                                " micro_batch_size: 2 precision: fp8 recompute: full"
                                                " train_tokens: 1e12 flash_attention: false"),
                                          "t.textproto", Format::text);
  s.cluster.fabric.kind = models::FabricKind::fat_tree;
  s.cluster.fabric.oversubscription = 2;
  s.options.threads = 3;
  EXPECT_TRUE(load_scenario_text(scenario_to_text(s), "round-trip", Format::text) == s);
}

TEST(ScenarioIo, ByteOrderMarkIsSkipped) {
  const std::string bom = "\xEF\xBB\xBF";
  EXPECT_EQ(load_scenario_text(bom + small(), "t.textproto", Format::text).name, "t");
  EXPECT_EQ(load_scenario_text(bom + read(kDataDir + "/default.json"), "t.json", Format::json).name,
            "llama3-8b-dgx-h100");
  // Columns on line 1 do not count it.
  EXPECT_EQ(errors_of(bom + "nme: 1\n"),
            std::vector<std::string>{
                "t.textproto:1:1: nme: unknown field, did you mean "
                "\"name\"? (expected one of: name, description, "
                "cluster, workload, options, storage, reliability, cost, profile, power, thermal, scheduler, job, "
                "node_template)"});
}

TEST(ScenarioIo, FormatFollowsExtension) {
  EXPECT_EQ(format_for_path("a/b.textproto"), Format::text);
  EXPECT_EQ(format_for_path("b.txtpb"), Format::text);
  EXPECT_EQ(format_for_path("b.pbtxt"), Format::text);
  EXPECT_EQ(format_for_path("b.txt"), Format::text);
  EXPECT_EQ(format_for_path("b.JSON"), Format::json);
  const std::string yaml = testing::TempDir() + "b.yaml";
  std::ofstream(yaml) << "a: 1\n";
  try {
    format_for_path(yaml);
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(std::string(e.what()),
              yaml + ": unknown file extension \".yaml\" (expected .textproto, .txtpb, .pbtxt, .txt or .json)");
  }
  // A missing file is named as missing, not as a wrong extension.
  try {
    format_for_path(testing::TempDir() + "nosuchfile");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(std::string(e.what()), testing::TempDir() + "nosuchfile: cannot read file (No such file or directory)");
  }
}

TEST(ScenarioIo, SequenceParallelWithOneTpRankIsTurnedOff) {
  // Megatron-LM disables sequence parallelism when tp = 1 (it would be a no-op).
  const std::string text = small("", "", "");
  const models::Scenario s = load_scenario_text(
      text, "t.textproto", Format::text,
      {"workload.parallel.tp=1", "workload.parallel.dp=4", "workload.parallel.sequence_parallel=true"});
  EXPECT_FALSE(s.parallel.sequence_parallel);
}

TEST(ScenarioIo, UnevenStagesAcceptPpNotDividingLayers) {
  // 6 layers on 4 stages (tp 2 x pp 4 x dp 1 = 8 GPUs): 4 does not divide 6, allowed with
  // uneven_stages (the PpNotDividingLayers error below without it).
  const models::Scenario s = load_scenario_text(small(" ", " uneven_stages: true"), "t.textproto", Format::text,
                                                {"workload.model.num_layers=6", "workload.parallel.pp=4",
                                                 "workload.parallel.dp=1", "workload.training.global_batch_size=8"});
  EXPECT_EQ(s.model.num_layers, 6);
  EXPECT_EQ(s.parallel.pp, 4);
  EXPECT_TRUE(s.parallel.uneven_stages);
}

// ------------------------------------------------------------------------------------------------
// --set
// ------------------------------------------------------------------------------------------------

TEST(ScenarioIoSet, SetsEveryScalarKind) {
  const models::Scenario s = load_scenario_text(small(), "t.textproto", Format::text,
                                                {"workload.parallel.tp=4",                   // int32
                                                 "workload.parallel.dp=1",                   //
                                                 "cluster.fabric.switch_latency_ns=250",     // int64
                                                 "cluster.fabric.oversubscription=2.5",      // double
                                                 "workload.parallel.dp_bucket_bytes=2.5e7",  // double, exponent
                                                 "workload.model.gated_mlp=true",            // bool
                                                 "options.fold_symmetric=0",                 // bool as 0
                                                 "name=my run = 2",  // string, verbatim after the first '='
                                                 "workload.training.precision=fp16",          // enum
                                                 "cluster.fabric.kind=fat_tree",              // enum
                                                 "workload.training.global_batch_size=8",     //
                                                 "workload.training.global_batch_size=32"});  // the last one wins
  EXPECT_EQ(s.parallel.tp, 4);
  EXPECT_EQ(s.parallel.dp, 1);
  EXPECT_EQ(s.cluster.fabric.switch_latency_ns, 250);
  EXPECT_DOUBLE_EQ(s.cluster.fabric.oversubscription, 2.5);
  EXPECT_DOUBLE_EQ(s.parallel.dp_bucket_bytes, 2.5e7);
  EXPECT_TRUE(s.model.gated_mlp);
  EXPECT_FALSE(s.options.fold_symmetric);
  EXPECT_EQ(s.name, "my run = 2");
  EXPECT_EQ(s.training.precision, models::Precision::fp16);
  EXPECT_EQ(s.cluster.fabric.kind, models::FabricKind::fat_tree);
  EXPECT_EQ(s.training.global_batch_size, 32);
}

// A bool takes the spellings protobuf's text format takes (true, True, t, 1; false, False, f, 0),
// so a --set reads as the same value in a scenario file; anything else is refused.
TEST(ScenarioIoSet, BoolTakesTheTextFormatSpellings) {
  for (const char* yes : {"true", "True", "t", "1"}) {
    const models::Scenario s =
        load_scenario_text(small(), "t.textproto", Format::text, {std::string("workload.model.gated_mlp=") + yes});
    EXPECT_TRUE(s.model.gated_mlp) << yes;
  }
  for (const char* no : {"false", "False", "f", "0"}) {
    const models::Scenario s =
        load_scenario_text(small(), "t.textproto", Format::text,
                           {"workload.model.gated_mlp=true", std::string("workload.model.gated_mlp=") + no});
    EXPECT_FALSE(s.model.gated_mlp) << no;
  }
  for (const char* bad : {"yes", "TRUE", "2", ""}) {
    EXPECT_EQ(errors_of(small(), Format::text, {std::string("workload.model.gated_mlp=") + bad}).size(), 1U) << bad;
  }
}

TEST(ScenarioIoSet, AppliesToTheEmbeddedDefault) {
  const models::Scenario s = default_scenario({"workload.parallel.tp=4", "workload.parallel.dp=2"});
  EXPECT_EQ(s.parallel.tp, 4);
  EXPECT_EQ(s.parallel.dp, 2);
}

TEST(ScenarioIoSet, UnknownPath) {
  EXPECT_EQ(errors_of(small(), Format::text, {"workload.parallel.tpp=4"}),
            std::vector<std::string>{
                "--set: workload.parallel.tpp: unknown field, did you mean \"tp\"? (expected one of: tp, pp, dp, "
                "sequence_parallel, schedule, virtual_stages, uneven_stages, zero_stage, dp_bucket_bytes, "
                "overlap_grad_reduce, tp_comm_overlap, overlap_param_gather, ep, cp, reshard_after_forward, "
                "reshard_after_backward, param_gather_bytes, grad_sync_every_microbatch, pipeline_stage_layers, "
                "zero_implementation, reduce_bucket_elements, tp_overlap_implementation, moe_shared_expert_overlap, "
                "activation_layout, overlap_tp_grad_reduce)"});
}

TEST(ScenarioIoSet, PathThroughAScalar) {
  EXPECT_EQ(errors_of(small(), Format::text, {"workload.parallel.tp.x=4"}),
            std::vector<std::string>{"--set: workload.parallel.tp: is not a message, it has no field \"x\" (expected "
                                     "workload.parallel.tp=value)"});
}

TEST(ScenarioIoSet, NonScalarTarget) {
  EXPECT_EQ(errors_of(small(), Format::text, {"workload.parallel=4"}),
            std::vector<std::string>{
                "--set: workload.parallel: is a message, not a scalar field (expected a path to one of its "
                "fields: tp, pp, dp, sequence_parallel, schedule, virtual_stages, uneven_stages, zero_stage, "
                "dp_bucket_bytes, overlap_grad_reduce, tp_comm_overlap, overlap_param_gather, ep, cp, "
                "reshard_after_forward, reshard_after_backward, param_gather_bytes, grad_sync_every_microbatch, "
                "pipeline_stage_layers, zero_implementation, reduce_bucket_elements, tp_overlap_implementation, "
                "moe_shared_expert_overlap, activation_layout, overlap_tp_grad_reduce)"});
}

// "name[i]" names entry i of a repeated field the scenario writes: a node group's field, one
// stage's layers; the entry must exist, a list without an index and an index on a singular field
// are refused, each naming the override.
TEST(ScenarioIoSet, IndexedEntriesOfRepeatedFields) {
  const std::string mixed = kSourceDir + "/scenarios/cluster/a100_h100_one_pipeline.textproto";
  const models::Scenario s = load_scenario_file(
      mixed, {"cluster.node_group[1].gpu=H200-SXM-141GB", "workload.parallel.pipeline_stage_layers[0]=12",
              "workload.parallel.pipeline_stage_layers[1]=20"});
  ASSERT_EQ(s.cluster.node_groups.size(), 2U);
  EXPECT_EQ(s.cluster.node_groups[0].gpu, "");
  EXPECT_EQ(s.cluster.node_groups[1].gpu, "H200-SXM-141GB");
  EXPECT_EQ(s.parallel.pipeline_stage_layers, (std::vector<int>{12, 20}));
  auto errors = [&](const std::string& assignment) -> std::vector<std::string> {
    try {
      (void)load_scenario_file(mixed, {assignment});
    } catch (const ScenarioError& e) {
      return e.errors();
    }
    return std::vector<std::string>{};
  };
  EXPECT_EQ(errors("cluster.node_group[3].num_nodes=2"),
            std::vector<std::string>{"--set: cluster.node_group[3]: index 3 is out of range (the scenario has 2 "
                                     "node_group entries: expected 0 to 1 to change one, or 2 to add one)"});
  EXPECT_EQ(errors("cluster.node_group[x].num_nodes=2"),
            std::vector<std::string>{
                "--set: cluster.node_group: invalid index \"x\" (expected an entry's index in decimal, from 0)"});
  EXPECT_EQ(errors("cluster.node_group.num_nodes=2"),
            std::vector<std::string>{"--set: cluster.node_group: is a repeated field (expected one entry by its "
                                     "index, e.g. cluster.node_group[0].FIELD=value)"});
  EXPECT_EQ(
      errors("cluster.fabric[0].kind=ring"),
      std::vector<std::string>{
          "--set: cluster.fabric: is not a repeated field, it takes no index (expected cluster.fabric without [0])"});
  EXPECT_EQ(errors("cluster.overrides[1].select=node0"),
            std::vector<std::string>{"--set: cluster.overrides[1]: index 1 is out of range (the scenario has no "
                                     "overrides entries: expected 0 to add one)"});
  EXPECT_EQ(errors("workload.parallel.pipeline_stage_layers[1]=x"),
            std::vector<std::string>{"--set: workload.parallel.pipeline_stage_layers[1]: invalid value \"x\" "
                                     "(expected an integer from 1 to 2147483647)"});
  // A check of the whole list that fails on an entry's new value is reported at the --set.
  EXPECT_EQ(errors("workload.parallel.pipeline_stage_layers[0]=12"),
            std::vector<std::string>{
                "--set: workload.parallel.pipeline_stage_layers: sums to 34 layers (expected num_layers = 32)"});
  EXPECT_EQ(errors("cluster.node_group[1].num_nodes=2147483647").front(),
            "--set: cluster.node_group[1].num_nodes: the node groups hold 2147483648 nodes in all (expected at most "
            "1073741824)");
  // [01] names entry 1 by another spelling: refused, as a selector's "node01" is (session 43).
  EXPECT_EQ(errors("cluster.node_group[01].num_nodes=0"),
            std::vector<std::string>{"--set: cluster.node_group: invalid index \"01\": has a leading zero (expected an "
                                     "entry's index in decimal without leading zeros, e.g. [1])"});
}

TEST(ScenarioIoSet, WrongValueTypes) {
  EXPECT_EQ(errors_of(small(), Format::text,
                      {"workload.parallel.tp=two", "workload.parallel.pp=2.5", "cluster.num_nodes=99999999999",
                       "workload.model.gated_mlp=yes", "workload.training.precision=bf61",
                       "cluster.fabric.oversubscription=1.5x"}),
            (std::vector<std::string>{
                "--set: workload.parallel.tp: invalid value \"two\" (expected an integer from 1 to 2147483647)",
                "--set: workload.parallel.pp: invalid value \"2.5\" (expected an integer from 1 to 2147483647)",
                "--set: cluster.num_nodes: invalid value \"99999999999\" (expected an integer from 1 to 2147483647)",
                "--set: workload.model.gated_mlp: invalid value \"yes\" (expected true or false)",
                "--set: workload.training.precision: invalid value \"bf61\", did you mean \"bf16\"? (expected one "
                "of: fp32, tf32, fp16, bf16, fp8)",
                "--set: cluster.fabric.oversubscription: invalid value \"1.5x\" (expected a number)"}));
}

// --set numbers are decimal: hexadecimal, a leading '+' and trailing text refused; exponent, leading dot taken.
TEST(ScenarioIoSet, NumbersAreDecimal) {
  EXPECT_EQ(
      errors_of(small(), Format::text, {"power.pue=0x1", "power.cpu_load_fraction=+0.5", "thermal.supply_air_c=25C"}),
      (std::vector<std::string>{"--set: power.pue: 0x1 is hexadecimal (expected a decimal number, e.g. 1)",
                                "--set: power.cpu_load_fraction: invalid value \"+0.5\": a number takes no '+' sign, "
                                "as in a scenario file (expected power.cpu_load_fraction=0.5)",
                                "--set: thermal.supply_air_c: invalid value \"25C\" (expected a number)"}));
  const models::Scenario s =
      load_scenario_text(small(), "t.textproto", Format::text, {"power.pue=1.2e0", "power.cpu_load_fraction=.5"});
  EXPECT_DOUBLE_EQ(s.power.pue, 1.2);
  EXPECT_DOUBLE_EQ(s.power.cpu_load_fraction, 0.5);
}

TEST(ScenarioIoSet, MissingEquals) {
  EXPECT_EQ(errors_of(small(), Format::text, {"workload.parallel.tp"}),
            std::vector<std::string>{"--set: workload.parallel.tp: missing \"=\" (expected field.path=value)"});
}

TEST(ScenarioIoSet, SemanticErrorOnAnOverriddenValueNamesTheOverride) {
  // tp 3 does not divide 16 heads; tp*pp*dp = 3*2*2 = 12 != 8 GPUs.
  EXPECT_EQ(errors_of(small(), Format::text, {"workload.parallel.tp=3"}),
            (std::vector<std::string>{
                "--set: workload.parallel.tp: 3 does not divide num_attention_heads 16 (expected a divisor of 16)",
                "--set: workload.parallel.tp: tp * pp * dp = 3 * 2 * 2 = 12 but the cluster has 8 GPUs "
                "(1 x dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 8)"}));
}

// ------------------------------------------------------------------------------------------------
// Errors: one test per error, exact text
// ------------------------------------------------------------------------------------------------

TEST(ScenarioIoErrors, UnknownField) {
  EXPECT_EQ(
      errors_of("cluster {\n  node_templat: \"dgx_h100\"\n}\n"),
      std::vector<std::string>{
          "t.textproto:2:3: cluster.node_templat: unknown field, did you mean \"node_template\"? (expected "
          "one of: node_template, num_nodes, gpu, fabric, collectives, gpu_direct_rdma, nic_placement, pcie_p2p, nic, "
          "nics_per_node, overrides, nvlink_bridge_gpus, node_group)"});
}

TEST(ScenarioIoErrors, UnknownFieldJson) {
  EXPECT_EQ(
      errors_of("{\n  \"cluster\": {\"node_templat\": \"dgx_h100\"}\n}\n", Format::json),
      std::vector<std::string>{
          "t.json:2:15: cluster.node_templat: unknown field, did you mean \"node_template\"? (expected one "
          "of: node_template, num_nodes, gpu, fabric, collectives, gpu_direct_rdma, nic_placement, pcie_p2p, nic, "
          "nics_per_node, overrides, nvlink_bridge_gpus, node_group)"});
}

TEST(ScenarioIoErrors, EveryUnknownFieldIsReported) {
  EXPECT_EQ(errors_of("nme: \"x\"\nworkload {\n  model { layers: 3 foo { bar: 1 } }\n}\n"),
            (std::vector<std::string>{
                "t.textproto:1:1: nme: unknown field, did you mean \"name\"? (expected one of: name, description, "
                "cluster, workload, options, storage, reliability, cost, profile, power, thermal, scheduler, job, "
                "node_template)",
                "t.textproto:3:11: workload.model.layers: unknown field (expected one of: name, num_layers, "
                "hidden_size, num_attention_heads, num_query_groups, ffn_hidden_size, vocab_size, seq_length, "
                "gated_mlp, untied_embeddings, num_experts, moe_top_k, moe_ffn_hidden_size, num_shared_experts, "
                "first_dense_layers, moe_capacity_factor, family, image_size, num_classes, architecture, "
                "mlm_prediction_fraction, max_position_embeddings, attention_dropout, hidden_dropout, "
                "make_vocab_size_divisible_by, head_dim, multi_latent_attention, q_lora_rank, kv_lora_rank, "
                "qk_nope_head_dim, qk_rope_head_dim, v_head_dim, sliding_window, sliding_window_pattern, "
                "moe_expert_imbalance, separate_projections)",
                "t.textproto:3:21: workload.model.foo: unknown field (expected one of: name, num_layers, "
                "hidden_size, num_attention_heads, num_query_groups, ffn_hidden_size, vocab_size, seq_length, "
                "gated_mlp, untied_embeddings, num_experts, moe_top_k, moe_ffn_hidden_size, num_shared_experts, "
                "first_dense_layers, moe_capacity_factor, family, image_size, num_classes, architecture, "
                "mlm_prediction_fraction, max_position_embeddings, attention_dropout, hidden_dropout, "
                "make_vocab_size_divisible_by, head_dim, multi_latent_attention, q_lora_rank, kv_lora_rank, "
                "qk_nope_head_dim, qk_rope_head_dim, v_head_dim, sliding_window, sliding_window_pattern, "
                "moe_expert_imbalance, separate_projections)"}));
}

TEST(ScenarioIoErrors, WrongType) {
  EXPECT_EQ(errors_of("workload {\n  model {\n    num_layers: \"many\"\n  }\n}\n"),
            std::vector<std::string>{
                "t.textproto:3:17: workload.model.num_layers: invalid value \"many\" (expected an integer from 1 to "
                "100000: the simulator's range)"});
}

TEST(ScenarioIoErrors, WrongTypeJson) {
  EXPECT_EQ(errors_of("{\"workload\": {\"model\": {\"num_layers\": 1.5, \"gated_mlp\": \"yes\"},\n"
                      "  \"parallel\": 4}}",
                      Format::json),
            (std::vector<std::string>{
                "t.json:1:39: workload.model.num_layers: invalid value 1.5 (expected an integer from 1 to 100000: the "
                "simulator's range)",
                "t.json:1:57: workload.model.gated_mlp: invalid value \"yes\" (expected true or false)",
                "t.json:2:15: workload.parallel: invalid value 4 (expected an object)"}));
}

TEST(ScenarioIoErrors, JsonNullIsRefusedAtTheField) {
  // null would read as "not set" (proto3 JSON) and take the default silently; "tp": null then made
  // the dp x tp x pp check blame dp.
  EXPECT_EQ(errors_of("{\"workload\": {\"parallel\": {\"tp\": null, \"zero_stage\": null},\n"
                      "  \"training\": {\"recompute\": null}}}",
                      Format::json),
            (std::vector<std::string>{
                "t.json:1:34: workload.parallel.tp: null is not accepted (expected an integer from 1 to 2147483647; "
                "leave the field out to take its default)",
                "t.json:1:54: workload.parallel.zero_stage: null is not accepted (expected an integer from 0 to 3: 0 = "
                "none, 1 = optimizer state, 2 = + gradients, 3 = + parameters sharded over DP; leave the field out to "
                "take its default)",
                "t.json:2:29: workload.training.recompute: null is not accepted (expected one of: none, selective, "
                "full; leave the field out to take its default)"}));
}

TEST(ScenarioIoErrors, IntegerOutOfRange) {
  EXPECT_EQ(
      errors_of("cluster { num_nodes: 99999999999 }\n"),
      std::vector<std::string>{"t.textproto:1:22: cluster.num_nodes: invalid value 99999999999 (expected an integer "
                               "from 1 to 2147483647)"});
}

TEST(ScenarioIoErrors, UnknownEnumValue) {
  EXPECT_EQ(errors_of(small("", "", "\n    precision: bf17")),
            std::vector<std::string>{
                "t.textproto:7:16: workload.training.precision: invalid value bf17, did you mean \"bf16\"? (expected "
                "one of: fp32, tf32, fp16, bf16, fp8)"});
}

TEST(ScenarioIoErrors, QuotedEnumValue) {
  EXPECT_EQ(errors_of("workload { training { precision: \"bf16\" } }"),
            std::vector<std::string>{
                "t.textproto:1:34: workload.training.precision: invalid value \"bf16\", did you mean bf16 (without "
                "quotes)? (expected one of: fp32, tf32, fp16, bf16, fp8)"});
}

TEST(ScenarioIoErrors, UnknownEnumValueJson) {
  EXPECT_EQ(errors_of("{\"workload\": {\"parallel\": {\"schedule\": \"gpipe\"}}}", Format::json),
            std::vector<std::string>{
                "t.json:1:40: workload.parallel.schedule: invalid value \"gpipe\" (expected one of: one_f_one_b, "
                "interleaved_one_f_one_b)"});
}

TEST(ScenarioIoErrors, EnumNumberNamingNoValue) {
  // proto3 enums are open, so protobuf parses `recompute: 7`; the reader refuses it at the number
  // (column 47; it was the field's name, column 36).
  EXPECT_EQ(errors_of(small("", "", " recompute: 7")),
            std::vector<std::string>{
                "t.textproto:6:47: workload.training.recompute: invalid value 7 (expected one of: none, selective, "
                "full)"});
}

TEST(ScenarioIoErrors, FieldGivenTwice) {
  EXPECT_EQ(errors_of("cluster { num_nodes: 1 num_nodes: 2 }\n"),
            std::vector<std::string>{
                "t.textproto:1:24: cluster.num_nodes: specified more than once (expected a single value)"});
}

TEST(ScenarioIoErrors, SyntaxError) {
  EXPECT_EQ(
      errors_of("cluster {\n  num_nodes: 1\n"),
      std::vector<std::string>{"t.textproto:3:1: cluster: unexpected end of file (expected \"}\" to close cluster)"});
  // A string with no closing quote, and a JSON document in a .textproto file (fresh-user findings).
  EXPECT_EQ(
      errors_of("name: \"abc\n")[0],
      "t.textproto:1:11: name: string not closed on its line (expected a closing '\"' before the line end; \"\\n\" "
      "writes a line break inside a string)");
  EXPECT_EQ(errors_of("{\"name\": \"x\"}\n"),
            std::vector<std::string>{"t.textproto:1:1: unexpected \"{\" (expected identifier); the file looks like "
                                     "JSON: name it .json to read it as JSON"});
}

// "160,000": protobuf's text format reads ',' as a field separator, so it said "cost.node_price_usd: "
// (nothing more), then "cost.000: unknown field" and an unexpected "}".
TEST(ScenarioIoErrors, ThousandsSeparatorIsNamedOnce) {
  EXPECT_EQ(errors_of("cluster { num_nodes: 1,024 }\n"),
            std::vector<std::string>{"t.textproto:1:22: cluster.num_nodes: a ',' inside a number, as a thousands "
                                     "separator (expected the digits alone, e.g. 160000 or 1.6e5: in this format ',' "
                                     "separates fields)"});
  // A list keeps its commas ("[0,100]" is two GPUs, whatever else the block lacks).
  for (const std::string& e : errors_of("node_template { name: \"b\" nvlink { gpus: [0,100] } }\n"))
    EXPECT_EQ(e.find("a ',' inside a number"), std::string::npos) << e;
}

TEST(ScenarioIoErrors, SyntaxErrorJson) {
  EXPECT_EQ(errors_of("{\n  \"name\": \"x\",\n}\n", Format::json),
            std::vector<std::string>{"t.json:3:1: trailing comma before '}' (expected another key)"});
}

TEST(ScenarioIoErrors, NegativeSize) {
  EXPECT_EQ(
      errors_of(small(" ffn_hidden_size: -1", "", "\n    micro_batch_size: -2")),
      (std::vector<std::string>{
          "t.textproto:4:102: workload.model.ffn_hidden_size: got -1 (expected an integer from 0 to 2147483647, 0 "
          "for 4 * hidden_size)",
          "t.textproto:7:5: workload.training.micro_batch_size: got -2 (expected an integer from 1 to 16777216: about "
          "200x the largest published global batches: 81,920 images for ResNet-50 (Yamazaki et al. 2019), 2,048 x "
          "8,192-token sequences for Llama 3 405B (Meta 2024))"}));
}

TEST(ScenarioIoErrors, ZeroSize) {
  EXPECT_EQ(errors_of(small(), Format::text, {"cluster.num_nodes=0"}),
            std::vector<std::string>{"--set: cluster.num_nodes: got 0 (expected an integer from 1 to 2147483647)"});
}

TEST(ScenarioIoErrors, RequiredSizeNotSet) {
  // No model block at all: its sizes keep their default 0; the error points at `workload`.
  EXPECT_EQ(
      errors_of("workload {\n  training { global_batch_size: 8 }\n}\n", Format::text, {"workload.parallel.dp=8"}),
      (std::vector<std::string>{
          "t.textproto:1:1: workload.model.num_layers: not set (expected an integer from 1 to 100000: the "
          "simulator's range)",
          "t.textproto:1:1: workload.model.hidden_size: not set (expected an integer from 1 to 1048576: the "
          "simulator's range)",
          "t.textproto:1:1: workload.model.num_attention_heads: not set (expected an integer from 1 to 2147483647)",
          "t.textproto:1:1: workload.model.vocab_size: not set (expected an integer from 1 to 16777216: the "
          "simulator's range)",
          "t.textproto:1:1: workload.model.seq_length: not set (expected an integer from 1 to 16777216: the "
          "simulator's range)"}));
}

TEST(ScenarioIoErrors, NoWorkloadSectionIsOneError) {
  // Used to be 7 "not set" lines at 1:1, one per required field.
  const std::string shape = " with model, parallel and training, as in scenarios/default.textproto";
  EXPECT_EQ(errors_of(""), std::vector<std::string>{"t.textproto:1:1: workload: the file has no workload section "
                                                    "(expected a workload { ... } block" +
                                                    shape + ")"});
  EXPECT_EQ(errors_of("{}", Format::json), std::vector<std::string>{"t.json:1:1: workload: the file has no workload "
                                                                    "section (expected a \"workload\": {...} object" +
                                                                    shape + ")"});
  EXPECT_EQ(errors_of("cluster { node_template: \"dgx_h100\" num_nodes: 2 }\n"),
            std::vector<std::string>{
                "t.textproto:1:1: workload: the file describes only a cluster, it has no workload section (expected "
                "a workload { ... } block" +
                shape +
                "; a cluster-only file is read by traincast nccl-tests, traincast explain and traincast chakra run)"});
  // The cluster's own errors come with it (the run stopped at the missing workload, and the
  // unknown NIC came only after one was added).
  const std::vector<std::string> both = errors_of("cluster { node_template: \"dgx_h100\" nic: \"IB-NDR-40\" }\n");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_NE(both[0].find("the file describes only a cluster"), std::string::npos) << both[0];
  EXPECT_NE(both[1].find("t.textproto:1:37: cluster.nic: unknown NIC \"IB-NDR-40\""), std::string::npos) << both[1];
}

TEST(ScenarioIoErrors, WhatJoinsAllMessages) {
  try {
    load_scenario_text("a: 1\nb: 2\n", "t.textproto", Format::text);
    FAIL();
  } catch (const ScenarioError& e) {
    ASSERT_EQ(e.errors().size(), 2u);
    EXPECT_EQ(std::string(e.what()), e.errors()[0] + "\n" + e.errors()[1]);
  }
}

TEST(ScenarioIoErrors, MissingFile) {
  try {
    load_scenario_file(kDataDir + "/no_such_file.textproto");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.errors(),
              std::vector<std::string>{kDataDir + "/no_such_file.textproto: cannot read file (No such file or "
                                                  "directory)"});
  }
}

TEST(ScenarioIoErrors, UnreadableFileADirectory) {
  const std::string dir = (std::filesystem::temp_directory_path() / "traincast_io_test_dir.textproto").string();
  std::filesystem::create_directories(dir);
  try {
    load_scenario_file(dir);
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.errors(), std::vector<std::string>{dir + ": is a directory (expected a .textproto, .txtpb, .pbtxt, "
                                                         ".txt or .json file)"});
  }
  std::filesystem::remove(dir);
}

TEST(ScenarioIoErrors, JsonDuplicateKeyAndNonObjectDocument) {
  EXPECT_EQ(errors_of("{\"name\": \"a\",\n \"name\": \"b\"}", Format::json),
            std::vector<std::string>{"t.json:2:2: name: specified more than once (expected a single value)"});
  EXPECT_EQ(errors_of("[1, 2]", Format::json),
            std::vector<std::string>{"t.json:1:1: invalid document an array (expected an object { ... })"});
}

// Names are printed by every command: an escape sequence would act on the terminal, and a name
// written empty would print as nothing ("Model      : 32 layers"); the description keeps newlines.
TEST(ScenarioIoErrors, NamesWithControlCharactersOrWrittenEmptyAreRefused) {
  const std::string body = small().substr(small().find('\n') + 1);  // without its name line
  EXPECT_EQ(errors_of("name: \"a\\033[2Jb\"\n" + body),
            std::vector<std::string>{"t.textproto:1:1: name: contains the control character 0x1B (expected printable "
                                     "text; a terminal would act on it)"});
  EXPECT_EQ(errors_of("name: \"\"\n" + body),
            std::vector<std::string>{"t.textproto:1:1: name: is empty (expected a name to print, or no such line)"});
  EXPECT_EQ(errors_of(small(" name: \"\"")),
            std::vector<std::string>{"t.textproto:4:102: workload.model.name: is empty (expected a name to print, or "
                                     "no such line)"});
  EXPECT_EQ(load_scenario_text("description: \"line one\\n\\tline two\"\n" + small(), "t.textproto", Format::text)
                .description,
            "line one\n\tline two");
}

TEST(ScenarioIoErrors, HostileNestingIsAnErrorNotACrash) {
  EXPECT_EQ(errors_of(std::string(5000, '['), Format::json),
            std::vector<std::string>{"t.json:1:101: nesting deeper than 100 levels (expected a flatter document)"});
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "x {";
  const auto errors = errors_of(deep);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0],
            "t.textproto:1:1: x: unknown field (expected one of: name, description, cluster, workload, "
            "options, storage, reliability, cost, profile, power, thermal, scheduler, job, "
            "node_template)");
}

TEST(ScenarioIoErrors, AtMostOneHundredParseErrorsAreListed) {
  std::string text;
  for (int i = 0; i < 150; ++i) text += "a: 1\n";
  const auto errors = errors_of(text);
  ASSERT_EQ(errors.size(), 101u);
  EXPECT_EQ(errors[99].substr(0, 18), "t.textproto:100:1:");
  EXPECT_EQ(errors[100], "t.textproto: 50 more errors not shown (fix the ones above first)");
  std::string json = "{";
  for (int i = 0; i < 150; ++i) json += std::string(i == 0 ? "" : ",") + "\"a\": 1";
  const auto json_errors = errors_of(json + "}", Format::json);
  ASSERT_EQ(json_errors.size(), 101u);
  EXPECT_EQ(json_errors[100], "t.json: 50 more errors not shown (fix the ones above first)");
}

}  // namespace
}  // namespace traincast::io
