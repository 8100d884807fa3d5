// Tests of models/io: scenario loading (text and JSON), --set overrides, every error message
// (exact text with file:line:col and field path), report JSON, validation case files.

#include "models/io/scenario_io.h"

#include <gtest/gtest.h>
#include <algorithm>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "tests/models/io/scenario_errors.h"

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

/// A valid scenario (1 DGX H100 node, TP 2 x PP 2 x DP 2) with `extra` spliced into `parallel`.
/// Line numbers: line 1 name, 2 cluster, 3 workload, 4 model, 5 parallel, 6 training.
std::string small(const std::string& model_extra = "", const std::string& parallel_extra = "",
                  const std::string& training_extra = "") {
  return "name: \"t\"\n"
         "cluster { node_template: \"dgx_h100\" num_nodes: 1 }\n"
         "workload {\n"
         "  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048" +
         model_extra +
         " }\n"
         "  parallel { tp: 2 pp: 2 dp: 2" +
         parallel_extra +
         " }\n"
         "  training { global_batch_size: 16" +
         training_extra +
         " }\n"
         "}\n";
}

/// Field-by-field equality of two scenarios (no operator== on the plain structs).
void expect_same(const models::Scenario& a, const models::Scenario& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.cluster.node_template, b.cluster.node_template);
  EXPECT_EQ(a.cluster.num_nodes, b.cluster.num_nodes);
  EXPECT_EQ(a.cluster.gpu, b.cluster.gpu);
  EXPECT_EQ(a.cluster.fabric.kind, b.cluster.fabric.kind);
  EXPECT_EQ(a.cluster.fabric.oversubscription, b.cluster.fabric.oversubscription);
  EXPECT_EQ(a.cluster.fabric.switch_latency_ns, b.cluster.fabric.switch_latency_ns);
  EXPECT_EQ(a.cluster.fabric.nodes_per_leaf, b.cluster.fabric.nodes_per_leaf);
  EXPECT_EQ(a.model.name, b.model.name);
  EXPECT_EQ(a.model.num_layers, b.model.num_layers);
  EXPECT_EQ(a.model.hidden_size, b.model.hidden_size);
  EXPECT_EQ(a.model.num_attention_heads, b.model.num_attention_heads);
  EXPECT_EQ(a.model.num_query_groups, b.model.num_query_groups);
  EXPECT_EQ(a.model.ffn_hidden_size, b.model.ffn_hidden_size);
  EXPECT_EQ(a.model.vocab_size, b.model.vocab_size);
  EXPECT_EQ(a.model.seq_length, b.model.seq_length);
  EXPECT_EQ(a.model.gated_mlp, b.model.gated_mlp);
  EXPECT_EQ(a.model.untied_embeddings, b.model.untied_embeddings);
  EXPECT_EQ(a.parallel.tp, b.parallel.tp);
  EXPECT_EQ(a.parallel.pp, b.parallel.pp);
  EXPECT_EQ(a.parallel.dp, b.parallel.dp);
  EXPECT_EQ(a.parallel.sequence_parallel, b.parallel.sequence_parallel);
  EXPECT_EQ(a.parallel.schedule, b.parallel.schedule);
  EXPECT_EQ(a.parallel.virtual_stages, b.parallel.virtual_stages);
  EXPECT_EQ(a.parallel.uneven_stages, b.parallel.uneven_stages);
  EXPECT_EQ(a.parallel.zero_stage, b.parallel.zero_stage);
  EXPECT_EQ(a.parallel.dp_bucket_bytes, b.parallel.dp_bucket_bytes);
  EXPECT_EQ(a.parallel.overlap_grad_reduce, b.parallel.overlap_grad_reduce);
  EXPECT_EQ(a.parallel.overlap_param_gather, b.parallel.overlap_param_gather);
  EXPECT_EQ(a.parallel.tp_comm_overlap, b.parallel.tp_comm_overlap);
  EXPECT_EQ(a.training.global_batch_size, b.training.global_batch_size);
  EXPECT_EQ(a.training.micro_batch_size, b.training.micro_batch_size);
  EXPECT_EQ(a.training.precision, b.training.precision);
  EXPECT_EQ(a.training.recompute, b.training.recompute);
  EXPECT_EQ(a.training.fp32_grad_accumulation, b.training.fp32_grad_accumulation);
  EXPECT_EQ(a.training.flash_attention, b.training.flash_attention);
  EXPECT_EQ(a.training.train_tokens, b.training.train_tokens);
  EXPECT_EQ(a.options.iterations, b.options.iterations);
  EXPECT_EQ(a.options.fold_symmetric, b.options.fold_symmetric);
  EXPECT_EQ(a.options.threads, b.options.threads);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// One node, the given model/parallel/training blocks. Lines: 1 cluster, 2 workload, 3 model,
/// 4 parallel, 5 training.
std::string scenario(const std::string& model, const std::string& parallel, const std::string& training) {
  return "cluster { node_template: \"dgx_h100\" }\n"
         "workload {\n"
         "  model { " +
         model +
         " }\n"
         "  parallel { " +
         parallel +
         " }\n"
         "  training { " +
         training +
         " }\n"
         "}\n";
}

const std::string kModel = "num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048";

// ------------------------------------------------------------------------------------------------
// Loading
// ------------------------------------------------------------------------------------------------

TEST(ScenarioIo, EmbeddedDefaultIsTheGalleryFile) {
  const std::string path = kSourceDir + "/scenarios/default.textproto";
  EXPECT_EQ(default_scenario_text(), read(path));
  const models::Scenario embedded = default_scenario();
  expect_same(embedded, load_scenario_file(path));
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
  const models::Scenario defaults;  // fields the file leaves out keep models/scenario.h's defaults
  EXPECT_EQ(embedded.cluster.fabric.kind, defaults.cluster.fabric.kind);
  EXPECT_EQ(embedded.cluster.fabric.switch_latency_ns, defaults.cluster.fabric.switch_latency_ns);
  EXPECT_EQ(embedded.parallel.dp_bucket_bytes, defaults.parallel.dp_bucket_bytes);
  EXPECT_EQ(embedded.training.fp32_grad_accumulation, defaults.training.fp32_grad_accumulation);
  EXPECT_EQ(embedded.options.iterations, defaults.options.iterations);
}

TEST(ScenarioIo, JsonEquivalentLoadsToTheSameStruct) {
  expect_same(load_scenario_file(kDataDir + "/default.json"), default_scenario());
}

TEST(ScenarioIo, JsonAcceptsLowerCamelNamesAndQuotedIntegers) {
  const std::string json = R"({"cluster": {"nodeTemplate": "dgx_h100", "numNodes": "1"},
    "workload": {"model": {"numLayers": 8, "hidden_size": 1024, "num_attention_heads": 16,
                           "vocab_size": 32000, "seq_length": 2048},
                 "parallel": {"tp": 2, "pp": 2, "dp": 2},
                 "training": {"globalBatchSize": 16, "precision": "fp16"}}})";
  const models::Scenario s = load_scenario_text(json, "t.json", Format::json);
  EXPECT_EQ(s.model.num_layers, 8);
  EXPECT_EQ(s.training.global_batch_size, 16);
  EXPECT_EQ(s.training.precision, models::Precision::fp16);
  EXPECT_EQ(s.cluster.gpu, "");
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
  expect_same(load_scenario_text(scenario_to_text(s), "round-trip", Format::text), s);
}

TEST(ScenarioIo, ByteOrderMarkIsSkipped) {
  const std::string bom = "\xEF\xBB\xBF";
  EXPECT_EQ(load_scenario_text(bom + small(), "t.textproto", Format::text).name, "t");
  EXPECT_EQ(load_scenario_text(bom + read(kDataDir + "/default.json"), "t.json", Format::json).name,
            "llama3-8b-dgx-h100");
  // Columns on line 1 do not count it.
  EXPECT_EQ(
      errors_of(bom + "nme: 1\n"),
      std::vector<std::string>{"t.textproto:1:1: nme: unknown field, did you mean "
                               "\"name\"? (expected one of: name, description, "
                               "cluster, workload, options, storage, reliability, cost, profile, power, thermal)"});
}

TEST(ScenarioIo, FormatFollowsExtension) {
  EXPECT_EQ(format_for_path("a/b.textproto"), Format::text);
  EXPECT_EQ(format_for_path("b.txtpb"), Format::text);
  EXPECT_EQ(format_for_path("b.pbtxt"), Format::text);
  EXPECT_EQ(format_for_path("b.txt"), Format::text);
  EXPECT_EQ(format_for_path("b.JSON"), Format::json);
  try {
    format_for_path("b.yaml");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(std::string(e.what()),
              "b.yaml: unknown file extension \".yaml\" (expected .textproto, .txtpb, .pbtxt, .txt or .json)");
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
                "overlap_grad_reduce, tp_comm_overlap, overlap_param_gather, ep, cp)"});
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
                "dp_bucket_bytes, overlap_grad_reduce, tp_comm_overlap, overlap_param_gather, ep, cp)"});
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

// Numbers in --set are decimal, as the integers are: hexadecimal, a leading '+' and trailing text
// are refused; the decimal forms (exponent, leading dot) are taken.
TEST(ScenarioIoSet, NumbersAreDecimal) {
  EXPECT_EQ(
      errors_of(small(), Format::text, {"power.pue=0x1", "power.cpu_load_fraction=+0.5", "thermal.supply_air_c=25C"}),
      (std::vector<std::string>{"--set: power.pue: invalid value \"0x1\" (expected a number)",
                                "--set: power.cpu_load_fraction: invalid value \"+0.5\" (expected a number)",
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
          "nics_per_node)"});
}

TEST(ScenarioIoErrors, UnknownFieldJson) {
  EXPECT_EQ(
      errors_of("{\n  \"cluster\": {\"node_templat\": \"dgx_h100\"}\n}\n", Format::json),
      std::vector<std::string>{
          "t.json:2:15: cluster.node_templat: unknown field, did you mean \"node_template\"? (expected one "
          "of: node_template, num_nodes, gpu, fabric, collectives, gpu_direct_rdma, nic_placement, pcie_p2p, nic, "
          "nics_per_node)"});
}

TEST(ScenarioIoErrors, EveryUnknownFieldIsReported) {
  EXPECT_EQ(errors_of("nme: \"x\"\nworkload {\n  model { layers: 3 foo { bar: 1 } }\n}\n"),
            (std::vector<std::string>{
                "t.textproto:1:1: nme: unknown field, did you mean \"name\"? (expected one of: name, description, "
                "cluster, workload, options, storage, reliability, cost, profile, power, thermal)",
                "t.textproto:3:11: workload.model.layers: unknown field (expected one of: name, num_layers, "
                "hidden_size, num_attention_heads, num_query_groups, ffn_hidden_size, vocab_size, seq_length, "
                "gated_mlp, untied_embeddings, num_experts, moe_top_k, moe_ffn_hidden_size, num_shared_experts, "
                "first_dense_layers, moe_capacity_factor, family, image_size, num_classes, architecture, "
                "mlm_prediction_fraction, max_position_embeddings, attention_dropout, hidden_dropout)",
                "t.textproto:3:21: workload.model.foo: unknown field (expected one of: name, num_layers, "
                "hidden_size, num_attention_heads, num_query_groups, ffn_hidden_size, vocab_size, seq_length, "
                "gated_mlp, untied_embeddings, num_experts, moe_top_k, moe_ffn_hidden_size, num_shared_experts, "
                "first_dense_layers, moe_capacity_factor, family, image_size, num_classes, architecture, "
                "mlm_prediction_fraction, max_position_embeddings, attention_dropout, hidden_dropout)"}));
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
  // proto3 enums are open, so protobuf parses `recompute: 7`; the loader refuses it.
  EXPECT_EQ(errors_of(small("", "", " recompute: 7")),
            std::vector<std::string>{
                "t.textproto:6:36: workload.training.recompute: invalid value 7 (expected one of: none, selective, "
                "full)"});
}

TEST(ScenarioIoErrors, FieldGivenTwice) {
  EXPECT_EQ(errors_of("cluster { num_nodes: 1 num_nodes: 2 }\n"),
            std::vector<std::string>{
                "t.textproto:1:24: cluster.num_nodes: specified more than once (expected a single value)"});
}

TEST(ScenarioIoErrors, SyntaxError) {
  EXPECT_EQ(errors_of("cluster {\n  num_nodes: 1\n"),
            std::vector<std::string>{"t.textproto:3:1: cluster: unexpected end of file (expected identifier)"});
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
  EXPECT_EQ(
      errors_of("cluster { node_template: \"dgx_h100\" num_nodes: 2 }\n"),
      std::vector<std::string>{
          "t.textproto:1:1: workload: the file describes only a cluster, it has no workload section (expected "
          "a workload { ... } block" +
          shape + "; a cluster-only file is read by traincast nccl-tests, traincast explain and traincast chakra)"});
}

TEST(ScenarioIoErrors, GpuProductBlamesTheOverriddenField) {
  // small(): tp 2 x pp 2 x dp 2 = 8 GPUs of one DGX H100; --set tp=4 makes 16. The error used to
  // blame dp at its line in the file, a field the user did not touch.
  EXPECT_EQ(errors_of(small(), Format::text, {"workload.parallel.tp=4"}),
            std::vector<std::string>{"--set: workload.parallel.tp: tp * pp * dp = 4 * 2 * 2 = 16 but the cluster has 8 "
                                     "GPUs (1 x dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 8)"});
  EXPECT_EQ(errors_of(small(), Format::text, {"cluster.num_nodes=2"}),
            std::vector<std::string>{"--set: cluster.num_nodes: tp * pp * dp = 2 * 2 * 2 = 8 but the cluster has 16 "
                                     "GPUs (2 x dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 16)"});
}

TEST(ScenarioIoErrors, EmbeddedDefaultIsNamedWithTheSetsThatChangedIt) {
  // `traincast run --set workload.parallel.tp=4` with no file: default tp 2 x pp 1 x dp 4 = 8.
  std::vector<std::string> errors;
  try {
    default_scenario({"workload.parallel.tp=4"});
  } catch (const ScenarioError& e) {
    errors = e.errors();
  }
  EXPECT_EQ(errors, std::vector<std::string>{"--set: workload.parallel.tp: tp * pp * dp = 4 * 1 * 4 = 16 but the "
                                             "cluster has 8 GPUs (1 x dgx_h100 with 8 GPUs each) (expected tp * pp * "
                                             "dp = 8)"});
  // An error positioned in the embedded file gets a note naming it as the default and the --set.
  errors.clear();
  try {
    default_scenario({"workload.training.micro_batch_size=3"});
  } catch (const ScenarioError& e) {
    errors = e.errors();
  }
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors.back(),
            "scenarios/default.textproto: note: this is traincast's embedded default scenario (no scenario file was "
            "given), as changed by --set workload.training.micro_batch_size=3");
}

TEST(ScenarioIoErrors, HeadsNotDividingHidden) {
  EXPECT_EQ(errors_of(small(), Format::text, {"workload.model.hidden_size=1000"}),
            std::vector<std::string>{
                "t.textproto:4:43: workload.model.num_attention_heads: 16 does not divide hidden_size 1000 "
                "(expected a divisor of 1000)"});
}

TEST(ScenarioIoErrors, TpNotDividingHeads) {
  // 16 heads on 8 GPUs as tp 8 is fine; 12 heads (hidden 1200) are not divisible by tp 8.
  EXPECT_EQ(errors_of(scenario("num_layers: 8 hidden_size: 1200 num_attention_heads: 12 vocab_size: 10 seq_length: 16",
                               "tp: 8", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:14: workload.parallel.tp: 8 does not divide num_attention_heads 12 (expected a divisor "
                "of 12)"});
}

TEST(ScenarioIoErrors, TpNotDividingQueryGroups) {
  EXPECT_EQ(errors_of(scenario(kModel + " num_query_groups: 4", "tp: 8", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:14: workload.parallel.tp: 8 does not divide num_query_groups 4 (expected a divisor of "
                "4)"});
}

TEST(ScenarioIoErrors, QueryGroupsNotDividingHeads) {
  EXPECT_EQ(errors_of(scenario(kModel + " num_query_groups: 5", "dp: 8", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:3:102: workload.model.num_query_groups: 5 does not divide num_attention_heads 16 "
                "(expected a divisor of 16)"});
}

TEST(ScenarioIoErrors, PpNotDividingLayers) {
  EXPECT_EQ(errors_of(scenario("num_layers: 6 hidden_size: 1024 num_attention_heads: 16 vocab_size: 10 seq_length: 16",
                               "tp: 2 pp: 4", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:20: workload.parallel.pp: 4 does not divide num_layers 6 (expected a divisor of 6, or "
                "uneven_stages: true)"});
}

TEST(ScenarioIoErrors, MoreStagesThanLayers) {
  EXPECT_EQ(errors_of(scenario("num_layers: 4 hidden_size: 1024 num_attention_heads: 16 vocab_size: 10 seq_length: 16",
                               "pp: 8 uneven_stages: true", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:14: workload.parallel.pp: 8 stages for 4 layers (expected at most num_layers = 4)"});
}

TEST(ScenarioIoErrors, TpPpDpNotTheGpuCount) {
  // Nothing overridden: dp is blamed at its position. Overridden: the --set is.
  EXPECT_EQ(errors_of(scenario(kModel, "tp: 2 pp: 2 dp: 4", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:26: workload.parallel.dp: tp * pp * dp = 2 * 2 * 4 = 16 but the cluster has 8 GPUs "
                "(1 x dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 8)"});
  EXPECT_EQ(
      errors_of(scenario(kModel, "tp: 2 pp: 2 dp: 4", "global_batch_size: 8"), Format::text, {"cluster.num_nodes=3"}),
      std::vector<std::string>{"--set: cluster.num_nodes: tp * pp * dp = 2 * 2 * 4 = 16 but the cluster has 24 GPUs "
                               "(3 x dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 24)"});
}

TEST(ScenarioIoErrors, GlobalBatchNotDivisibleByDpTimesMicroBatch) {
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8", "global_batch_size: 20 micro_batch_size: 2")),
            std::vector<std::string>{
                "t.textproto:5:14: workload.training.global_batch_size: 20 is not divisible by dp * micro_batch_size "
                "= 8 * 2 = 16 (expected a multiple of 16)"});
}

TEST(ScenarioIoErrors, InterleavedScheduleRules) {
  // interleaved needs pp >= 2 and virtual_stages >= 2 (neither written: both point at `parallel`) ...
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8 schedule: interleaved_one_f_one_b", "global_batch_size: 8")),
            (std::vector<std::string>{
                "t.textproto:4:3: workload.parallel.pp: got 1 with schedule interleaved_one_f_one_b (expected pp >= "
                "2, or schedule: one_f_one_b)",
                "t.textproto:4:3: workload.parallel.virtual_stages: got 1 with schedule interleaved_one_f_one_b "
                "(expected virtual_stages >= 2)"}));
  // ... and pp * virtual_stages dividing num_layers (8 layers, 2 x 3 chunks) ...
  EXPECT_EQ(
      errors_of(
          scenario(kModel, "pp: 2 dp: 4 schedule: interleaved_one_f_one_b virtual_stages: 3", "global_batch_size: 8")),
      std::vector<std::string>{
          "t.textproto:4:60: workload.parallel.virtual_stages: num_layers 8 is not divisible by pp * "
          "virtual_stages = 2 * 3 = 6 (expected pp * virtual_stages to divide num_layers, or uneven_stages: true)"});
  // ... and virtual stages mean nothing without it.
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8 virtual_stages: 2", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:20: workload.parallel.virtual_stages: got 2 with schedule one_f_one_b (expected 1, or "
                "schedule: interleaved_one_f_one_b)"});
  EXPECT_NO_THROW(load_scenario_text(
      scenario(kModel, "pp: 2 dp: 4 schedule: interleaved_one_f_one_b virtual_stages: 2", "global_batch_size: 8"),
      "t.textproto", Format::text));
  // Megatron runs interleaved micro-batches in groups of pp: 4 / (dp 4 x 1) = 1 micro-batch is not.
  EXPECT_EQ(errors_of(scenario(kModel, "pp: 2 dp: 4 schedule: interleaved_one_f_one_b virtual_stages: 2",
                               "global_batch_size: 4")),
            std::vector<std::string>{
                "t.textproto:5:14: workload.training.global_batch_size: 4 gives 1 micro-batches per pipeline, not a "
                "multiple of pp = 2 as interleaved_one_f_one_b needs (expected a multiple of 8)"});
}

TEST(ScenarioIoErrors, ZeroStageOutOfRange) {
  EXPECT_EQ(
      errors_of(scenario(kModel, "dp: 8 zero_stage: 4", "global_batch_size: 8")),
      std::vector<std::string>{"t.textproto:4:20: workload.parallel.zero_stage: got 4 (expected an integer from 0 "
                               "to 3: 0 = none, 1 = optimizer state, 2 = + gradients, 3 = + parameters sharded "
                               "over DP)"});
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8 zero_stage: -1", "global_batch_size: 8")).size(), 1u);
  EXPECT_EQ(
      load_scenario_text(scenario(kModel, "dp: 8 zero_stage: 3", "global_batch_size: 8"), "t.textproto", Format::text)
          .parallel.zero_stage,
      3);
}

TEST(ScenarioIoErrors, TpCommOverlapNeedsSequenceParallel) {
  EXPECT_EQ(errors_of(scenario(kModel, "tp: 8 tp_comm_overlap: true", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:20: workload.parallel.tp_comm_overlap: needs sequence parallelism (expected "
                "sequence_parallel: true, or tp_comm_overlap: false)"});
}

TEST(ScenarioIoErrors, MixtureOfExpertsFields) {
  const std::string moe = kModel + " num_experts: 8";
  EXPECT_NO_THROW(
      load_scenario_text(scenario(moe, "dp: 8 ep: 4", "global_batch_size: 8"), "t.textproto", Format::text));
  EXPECT_EQ(errors_of(scenario(moe + " moe_top_k: 9 moe_capacity_factor: 0.5 first_dense_layers: 8", "dp: 8 ep: 3",
                               "global_batch_size: 8")),
            (std::vector<std::string>{
                "t.textproto:3:117: workload.model.moe_top_k: got 9 (expected an integer from 1 to num_experts = 8)",
                "t.textproto:3:155: workload.model.first_dense_layers: got 8 (expected an integer from 0 to "
                "num_layers - 1 = 7)",
                "t.textproto:3:130: workload.model.moe_capacity_factor: got 0.5 (expected 0 for dropless routing, or "
                "a number from 1 to 64)",
                "t.textproto:4:20: workload.parallel.ep: 3 does not divide num_experts 8 (expected a divisor of 8)"}));
  EXPECT_EQ(errors_of(scenario(moe, "tp: 2 dp: 4 ep: 8", "global_batch_size: 8")),
            (std::vector<std::string>{
                "t.textproto:4:3: workload.parallel.sequence_parallel: a MoE model with tp > 1 needs sequence "
                "parallelism, as Megatron-Core does (expected sequence_parallel: true)",
                "t.textproto:4:26: workload.parallel.ep: 8 does not divide dp 4 (expected a divisor of dp: experts "
                "are split over data-parallel ranks)"}));
  EXPECT_EQ(errors_of(scenario(kModel + " moe_top_k: 2", "dp: 8 ep: 2", "global_batch_size: 8")),
            (std::vector<std::string>{
                "t.textproto:3:102: workload.model.moe_top_k: is set but num_experts is 0 (expected num_experts >= 1 "
                "for a MoE model)",
                "t.textproto:4:20: workload.parallel.ep: got 2 for a dense model (expected 1, or num_experts >= 1)"}));
}

TEST(ScenarioIoErrors, UnknownNodeTemplateAndGpu) {
  const std::string text = "cluster { node_template: \"dgx_h10\" gpu: \"H100\" }\n";
  EXPECT_EQ(errors_of(text, Format::text, {"workload.model.num_layers=1"})[0],
            "t.textproto:1:11: cluster.node_template: unknown node template \"dgx_h10\", did you mean \"dgx_h100\"? "
            "(expected one of: " +
                joined(models::node_template_names()) + ")");
  const std::vector<std::string> errors = errors_of(text, Format::text, {"workload.model.num_layers=1"});
  ASSERT_GE(errors.size(), 2u);
  EXPECT_EQ(errors[1],
            "t.textproto:1:36: cluster.gpu: unknown GPU \"H100\" (expected \"\" for the node "
            "template's GPU, or one of: " +
                joined(models::gpu_names()) + ")");
}

TEST(ScenarioIoErrors, PrecisionTheGpuLacks) {
  // The catalog's A100 has no fp8 peak (Ampere has no fp8 tensor cores).
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8", "global_batch_size: 8 precision: fp8"), Format::text,
                      {"cluster.node_template=dgx_a100"}),
            std::vector<std::string>{
                "t.textproto:5:35: workload.training.precision: fp8 is not supported by A100-SXM4-80GB (expected "
                "one of: fp32, tf32, fp16, bf16)"});
}

TEST(ScenarioIoErrors, FabricNoneWithSeveralNodes) {
  EXPECT_EQ(errors_of("cluster {\n  num_nodes: 2\n  fabric { kind: none }\n}\nworkload {\n  model { " + kModel +
                      " }\n  parallel { dp: 16 }\n  training { global_batch_size: 16 }\n}\n"),
            std::vector<std::string>{
                "t.textproto:3:12: cluster.fabric.kind: none cannot connect 2 nodes (expected rail_optimized or "
                "fat_tree when num_nodes > 1)"});
}

TEST(ScenarioIoErrors, NonFiniteAndOutOfRangeNumbers) {
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8 dp_bucket_bytes: 0", "global_batch_size: 8 train_tokens: nan"),
                      Format::text, {"cluster.fabric.oversubscription=0.5", "cluster.fabric.switch_latency_ns=-1"}),
            (std::vector<std::string>{
                "--set: cluster.fabric.oversubscription: got 0.5 (expected a finite number >= 1)",
                "--set: cluster.fabric.switch_latency_ns: got -1 (expected an integer from 0 to 1000000000: the "
                "simulator's range)",
                "t.textproto:4:20: workload.parallel.dp_bucket_bytes: got 0 (expected a finite number > 0)",
                "t.textproto:5:35: workload.training.train_tokens: got nan (expected a finite number >= 0)"}));
}

TEST(ScenarioIoErrors, SeveralErrorsCollectedAtOnce) {
  // Three independent semantic errors in one file, reported together in field order.
  EXPECT_EQ(errors_of(scenario("num_layers: 0 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 "
                               "seq_length: 2048",
                               "tp: 3 pp: 1 dp: 8", "global_batch_size: 8")),
            (std::vector<std::string>{
                "t.textproto:3:11: workload.model.num_layers: got 0 (expected an integer from 1 to 100000: the "
                "simulator's range)",
                "t.textproto:4:14: workload.parallel.tp: 3 does not divide num_attention_heads 16 (expected a "
                "divisor of 16)",
                "t.textproto:4:26: workload.parallel.dp: tp * pp * dp = 3 * 1 * 8 = 24 but the cluster has 8 GPUs "
                "(1 x dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 8)"}));
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

TEST(ScenarioIoErrors, HostileNestingIsAnErrorNotACrash) {
  EXPECT_EQ(errors_of(std::string(5000, '['), Format::json),
            std::vector<std::string>{"t.json:1:101: nesting deeper than 100 levels (expected a flatter document)"});
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "x {";
  const auto errors = errors_of(deep);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0],
            "t.textproto:1:1: x: unknown field (expected one of: name, description, cluster, workload, "
            "options, storage, reliability, cost, profile, power, thermal)");
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

TEST(ValidationMetric, ValuesAndUnits) {
  models::Report r;
  r.iteration_time_s = 2;
  r.memory.activations_bytes = 3.0 * (1 << 30);
  r.memory.peak_bytes_per_gpu = 40.0 * (1 << 30);
  EXPECT_DOUBLE_EQ(models::metric_value(r, "iteration_time_s"), 2.0);
  EXPECT_DOUBLE_EQ(models::metric_value(r, "activation_memory_gib"), 3.0);  // GiB = 2^30 bytes
  EXPECT_DOUBLE_EQ(models::metric_value(r, "peak_memory_gib"), 40.0);
  for (std::string_view m : models::validation_metrics()) EXPECT_NO_THROW(models::metric_value(r, m));
  EXPECT_THROW(models::metric_value(r, "speed"), std::invalid_argument);
}

// ------------------------------------------------------------------------------------------------
// Report JSON
// ------------------------------------------------------------------------------------------------

models::Report sample_report() {
  models::Report r;
  r.scenario = "s";
  r.gpu = "H100-SXM5-80GB";
  r.num_gpus = 8;
  r.num_nodes = 1;
  r.tp = 2;
  r.dp = 4;
  r.micro_batches = 32;
  r.iteration_time_s = 1.25;
  r.tokens_per_s = 838860.8;
  r.tflops_per_gpu = 412.5;
  r.mfu = 0.417;
  r.hfu = 0.45;
  r.breakdown.compute_s = 1.0;
  r.breakdown.dp_comm_exposed_s = 0.25;
  r.memory.peak_bytes_per_gpu = 7.5e10;
  r.memory.oom = true;
  r.memory.advice = "use tp 4";
  r.busiest_links.push_back({"nvlink gpu0 to nvswitch", 0.75, 1e10, 4.5e11});
  r.events = 123456789012ull;  // > 2^32: printed as a number, not a string
  return r;
}

TEST(ReportJson, KeysAndValues) {
  const std::string json = report_to_json(sample_report());
  for (const char* key :
       {"\"iteration_time_s\": 1.25", "\"tokens_per_s\": 838860.8", "\"tflops_per_gpu\": 412.5", "\"mfu\": 0.417",
        "\"oom\": true", "\"peak_bytes_per_gpu\": 75000000000", "\"compute_s\": 1", "\"tp_comm_exposed_s\": 0",
        "\"dp_comm_exposed_s\": 0.25", "\"pp_comm_exposed_s\": 0", "\"pipeline_bubble_s\": 0", "\"optimizer_s\": 0",
        "\"breakdown\": {", "\"memory\": {", "\"busiest_links\": [", "\"events\": 123456789012",
        "\"advice\": \"use tp 4\"", "\"name\": \"nvlink gpu0 to nvswitch\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " not in\n" << json;
  }
  EXPECT_EQ(json.back(), '\n');
}

TEST(ReportJson, EveryFieldPrintedEvenWhenZero) {
  const std::string json = report_to_json(models::Report{});
  for (const char* key : {"\"scenario\": \"\"", "\"time_to_train_s\": 0", "\"folded\": false", "\"busiest_links\": []",
                          "\"peak_bytes_per_gpu\": 0", "\"oom\": false", "\"compute_s\": 0"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key << " not in\n" << json;
  }
}

TEST(ReportJson, ByteIdenticalForIdenticalInput) {
  EXPECT_EQ(report_to_json(sample_report()), report_to_json(sample_report()));
}

// ------------------------------------------------------------------------------------------------
// Validation cases
// ------------------------------------------------------------------------------------------------

TEST(ValidationCases, LoadsCasesWithResolvedScenariosAndOverrides) {
  const auto cases = load_validation_cases(kDataDir + "/cases.textproto");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].name, "small-baseline");
  EXPECT_EQ(cases[0].scenario_path, kDataDir + "/small.textproto");
  EXPECT_EQ(cases[0].metric, "tflops_per_gpu");
  EXPECT_DOUBLE_EQ(cases[0].measured, 123.5);
  EXPECT_EQ(cases[0].source, "made-up table 1");
  EXPECT_EQ(cases[0].notes, "baseline");
  EXPECT_EQ(cases[0].scenario.name, "small");
  EXPECT_EQ(cases[0].scenario.training.precision, models::Precision::bf16);
  EXPECT_EQ(cases[1].source, "test suite citation");  // file-level source
  EXPECT_EQ(cases[1].overrides,
            (std::vector<std::string>{"workload.training.precision=fp16", "workload.training.global_batch_size=128"}));
  EXPECT_EQ(cases[1].scenario.training.precision, models::Precision::fp16);
  EXPECT_EQ(cases[1].scenario.training.global_batch_size, 128);
  EXPECT_DOUBLE_EQ(cases[1].tolerance, 0.1);
  models::Report report;
  report.mfu = 0.5;
  EXPECT_DOUBLE_EQ(models::metric_value(report, cases[1].metric), 0.5);
}

/// Writes `text` to a temporary file named `name` and returns the errors of loading it as cases.
std::vector<std::string> case_file_errors(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  try {
    load_validation_cases(path);
  } catch (const ScenarioError& e) {
    std::filesystem::remove(path);
    std::vector<std::string> out;
    for (const std::string& line : e.errors()) out.push_back(line.substr(line.find(name)));
    return out;
  }
  std::filesystem::remove(path);
  ADD_FAILURE() << "no ScenarioError for " << name;
  return {};
}

TEST(ValidationCases, ParseErrorsNameTheCaseIndex) {
  EXPECT_EQ(case_file_errors("tc_cases.textproto", "case { name: \"a\" }\ncase {\n  nmae: \"b\"\n}\n"),
            std::vector<std::string>{
                "tc_cases.textproto:3:3: case[1].nmae: unknown field, did you mean \"name\"? (expected one of: name, "
                "scenario, set, metric, measured, source, notes, tolerance, nccl_tests)"});
  EXPECT_EQ(
      case_file_errors("tc_cases.json", "{\"case\": [{\"name\": \"a\"},\n  {\"measured\": \"x\", \"set\": [1]}]}"),
      (std::vector<std::string>{"tc_cases.json:2:16: case[1].measured: invalid value \"x\" (expected a number)",
                                "tc_cases.json:2:29: case[1].set[0]: invalid value 1 (expected a string)"}));
}

TEST(ValidationCases, EveryGalleryFileLoads) {
  // scenarios/*.textproto and scenarios/validation/*: scenarios, and *.cases.textproto case files.
  int loaded = 0;
  for (const std::string dir : {"/scenarios", "/scenarios/validation"}) {
    for (const auto& entry : std::filesystem::directory_iterator(kSourceDir + dir)) {
      const std::string path = entry.path().string();
      if (entry.path().extension() != ".textproto") continue;
      SCOPED_TRACE(path);
      try {
        if (path.ends_with(".cases.textproto")) {
          EXPECT_FALSE(load_validation_cases(path).empty());
        } else {
          load_scenario_file(path);
        }
        ++loaded;
      } catch (const ScenarioError& e) {
        ADD_FAILURE() << e.what();
      }
    }
  }
  EXPECT_GE(loaded, 1);
}

TEST(ValidationCases, CollectsErrorsOfTheCasesAndOfTheirScenarios) {
  const std::string path = kDataDir + "/bad_cases.textproto";
  try {
    load_validation_cases(path);
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.errors(),
              (std::vector<std::string>{
                  path + ":5:3: case[0].metric: unknown metric \"tflops\" (expected one of: iteration_time_s, "
                         "tokens_per_s, tflops_per_gpu, hardware_tflops_per_gpu, mfu, hfu, activation_memory_gib, "
                         "peak_memory_gib, time_to_train_s)",
                  path + ":6:3: case[0].measured: got 0 (expected a finite number > 0)",
                  path + ":9:3: case[1].name: \"a\" is used by an earlier case (expected a unique name)",
                  path + ":8:1: case[1].measured: not set (expected a finite number > 0)",
                  path + ":4:3: workload.parallel.tp: 3 does not divide num_attention_heads 16 (expected a divisor "
                         "of 16)",
                  // The case's `set` of tp broke the product: it is blamed, not dp in the scenario file.
                  path + ":4:3: workload.parallel.tp: tp * pp * dp = 3 * 2 * 4 = 24 but the cluster has 16 GPUs (2 x "
                         "dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 16)",
                  path + ":10:3: case[1].scenario: " + kDataDir +
                      "/missing.textproto: cannot read file (No such file or directory)"}));
  }
}

}  // namespace
}  // namespace traincast::io

// ------------------------------------------------------------------------------------------------
// The simulator's range and the later semantic rules (scenarios/README.md, "Limits" and "Checks")
// ------------------------------------------------------------------------------------------------

namespace traincast::io {
namespace {

TEST(ScenarioIoLimits, SizesBeyondTheSimulatorsRangeAreErrors) {
  EXPECT_EQ(errors_of(small(), Format::text, {"workload.model.seq_length=1000000000"}),
            std::vector<std::string>{"--set: workload.model.seq_length: got 1000000000 (expected an integer from 1 to "
                                     "16777216: the simulator's range)"});
  EXPECT_EQ(
      errors_of(small(), Format::text, {"options.iterations=2147483647"}),
      std::vector<std::string>{
          "--set: options.iterations: got 2147483647 (expected an integer from 1 to 1000: the simulator's range)"});
  EXPECT_EQ(errors_of(small(), Format::text, {"cluster.fabric.oversubscription=1e12"}),
            std::vector<std::string>{
                "--set: cluster.fabric.oversubscription: got 1e+12 (expected 1 to 1000: the simulator's range)"});
  const auto too_many = errors_of(small(), Format::text, {"cluster.num_nodes=268435455"});
  ASSERT_FALSE(too_many.empty());
  EXPECT_EQ(too_many[0],
            "--set: cluster.num_nodes: 268435455 nodes of 8 GPUs = 2147483640 GPUs (expected at most 1048576 GPUs: the "
            "simulator's range)");
}

TEST(ScenarioIoErrors, TpMustDivideFfnHiddenSize) {
  EXPECT_EQ(errors_of(small(" ffn_hidden_size: 4097")),
            std::vector<std::string>{"t.textproto:5:14: workload.parallel.tp: 2 does not divide ffn_hidden_size 4097 "
                                     "(expected a divisor of 4097)"});
}

TEST(ScenarioIoErrors, OverlapParamGatherNeedsZero) {
  EXPECT_EQ(errors_of(small("", " overlap_param_gather: true")),
            std::vector<std::string>{"t.textproto:5:32: workload.parallel.overlap_param_gather: needs the distributed "
                                     "optimizer, which gathers parameters (expected zero_stage: 1 or 2, or "
                                     "overlap_param_gather: false)"});
}

TEST(ScenarioIoErrors, OverlapParamGatherNotWithZero3) {
  EXPECT_EQ(errors_of(small("", " zero_stage: 3 overlap_param_gather: true")),
            std::vector<std::string>{"t.textproto:5:46: workload.parallel.overlap_param_gather: ZeRO-3 gathers each "
                                     "layer's parameters right before use, with prefetch, not after the step "
                                     "(expected overlap_param_gather: false with zero_stage: 3)"});
}

TEST(ScenarioIoErrors, TextMustBeUtf8) {
  const std::string text = "name: \"\\xff\\xfe\"\n" + small().substr(small().find('\n') + 1);
  EXPECT_EQ(errors_of(text),
            std::vector<std::string>{"t.textproto:1:1: name: is not valid UTF-8 (expected UTF-8 text)"});
}

TEST(ScenarioIoErrors, ResNetFieldsArePositioned) {
  const std::string text =
      "cluster { node_template: \"dgx_a100\" }\n"
      "workload {\n"
      "  model { family: resnet num_layers: 34 hidden_size: 1024 image_size: 8 }\n"
      "  parallel { tp: 2 dp: 4 }\n"
      "  training { global_batch_size: 256 micro_batch_size: 64 }\n"
      "}\n";
  const std::vector<std::string> errors = errors_of(text);
  const std::vector<std::string> expected_starts = {
      "t.textproto:3:26: workload.model.num_layers: got 34 for a ResNet (expected the depth: 50, 101 or 152)",
      "t.textproto:3:59: workload.model.image_size: got 8",
      "t.textproto:3:41: workload.model.hidden_size: is a transformer field but family is resnet",
      "t.textproto:4:14: workload.parallel.tp: got 2 for a ResNet (expected 1: ResNets are trained with DDP)"};
  for (const std::string& want : expected_starts)
    EXPECT_TRUE(std::any_of(errors.begin(), errors.end(), [&](const std::string& e) { return e.rfind(want, 0) == 0; }))
        << "missing: " << want;
  // A transformer with a ResNet field.
  const std::vector<std::string> t = errors_of(
      "workload {\n  model { num_layers: 2 hidden_size: 64 num_attention_heads: 4 vocab_size: 100 seq_length: 8 "
      "num_classes: 10 }\n  training { global_batch_size: 8 }\n  parallel { dp: 8 }\n}\n");
  EXPECT_TRUE(std::any_of(t.begin(), t.end(), [](const std::string& e) {
    return e.find("workload.model.num_classes: is set but family is transformer") != std::string::npos;
  }));
}

}  // namespace
}  // namespace traincast::io

namespace traincast::io {
namespace {

// Power and thermal fields: every bad value names its field with what was expected.
TEST(ScenarioIoErrors, PowerAndThermalFields) {
  EXPECT_EQ(errors_of(small() + "power { gpu_power_limit_w: -5 pue: 0.9 }\n"),
            (std::vector<std::string>{
                "t.textproto:8:9: power.gpu_power_limit_w: got -5 (expected a finite number >= 0)",
                "t.textproto:8:31: power.pue: got 0.9 (expected 1 to 3 (facility / IT power; 1 = no overhead))"}));
  EXPECT_EQ(errors_of(small() + "power { gpu_power_limit_w: 800 }\n"),
            (std::vector<std::string>{"t.textproto:8:9: power.gpu_power_limit_w: got 800 W (expected 0 for no cap, "
                                      "or 200 to 700 W (the TDP) for H100-SXM5-80GB: nvidia-smi -pl refuses caps "
                                      "below its Min Power Limit)"}));
  // Below the board's minimum, as `nvidia-smi -pl 100` refuses it on an H100 SXM: Min Power Limit
  // 200 W (nvidia-smi -q, shared data power-thermal pt01), from a file and from --set.
  const std::string refused_100 =
      "power.gpu_power_limit_w: got 100 W (expected 0 for no cap, or 200 to 700 W (the TDP) for H100-SXM5-80GB: "
      "nvidia-smi -pl refuses caps below its Min Power Limit)";
  EXPECT_EQ(errors_of(small() + "power { gpu_power_limit_w: 100 }\n"),
            (std::vector<std::string>{"t.textproto:8:9: " + refused_100}));
  EXPECT_EQ(errors_of(small(), Format::text, {"power.gpu_power_limit_w=100"}),
            (std::vector<std::string>{"--set: " + refused_100}));
  EXPECT_TRUE(errors_of(small(), Format::text, {"power.gpu_power_limit_w=199.9"}).size() == 1);
  EXPECT_NO_THROW(load_scenario_text(small(), "t.textproto", Format::text, {"power.gpu_power_limit_w=200"}));
  // No published minimum (H100 PCIe): the model's floor, 50 + (350 - 50) x (345/1980) x
  // (0.725/1.10)^2 = 72.7 -> 73 W, the power at the lowest clock under full tensor load.
  const std::string pcie =
      "name: \"t\"\ncluster { node_template: \"pcie_8gpu_2socket\" gpu: \"H100-PCIe-80GB\" num_nodes: 1 }\n"
      "workload {\n  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: "
      "2048 }\n  parallel { dp: 8 }\n  training { global_batch_size: 16 }\n}\n";
  EXPECT_EQ(errors_of(pcie, Format::text, {"power.gpu_power_limit_w=72"}),
            (std::vector<std::string>{
                "--set: power.gpu_power_limit_w: got 72 W (expected 0 for no cap, or 73 to 350 W (the TDP) for "
                "H100-PCIe-80GB: below it the GPU draws more than the cap even at its lowest clock under full tensor "
                "load; the catalog has no published Min Power Limit for it)"}));
  EXPECT_EQ(errors_of(small() + "thermal { supply_air_c: -300 gpu_airflow_fraction: [1, 0] }\n"),
            (std::vector<std::string>{
                "t.textproto:8:11: thermal.supply_air_c: got -300 (expected 0 to 60 C)",
                "t.textproto:8:56: thermal.gpu_airflow_fraction[1]: got 0 (expected a fraction > 0 and <= 1 of the "
                "design airflow)"}));
  // Each list element is pointed at, also across repeated occurrences and in JSON.
  EXPECT_EQ(
      errors_of(small() + "thermal {\n  gpu_airflow_fraction: [1, 1,\n    -0.5, 1]\n  gpu_airflow_fraction: 2\n}\n"),
      (std::vector<std::string>{
          "t.textproto:10:5: thermal.gpu_airflow_fraction[2]: got -0.5 (expected a fraction > 0 and <= 1 of "
          "the design airflow)",
          "t.textproto:11:3: thermal.gpu_airflow_fraction[4]: got 2 (expected a fraction > 0 and <= 1 of the "
          "design airflow)"}));
  EXPECT_EQ(errors_of(small() + "thermal { cooling: liquid rack_cooling_capacity_w: 1000 }\n"),
            (std::vector<std::string>{"t.textproto:8:27: thermal.rack_cooling_capacity_w: applies to air cooling "
                                      "(expected 0 with cooling: liquid)"}));
  EXPECT_EQ(errors_of(small() + "power { psu_redundant: 6 }\n"),
            (std::vector<std::string>{"t.textproto:8:9: power.psu_redundant: got 6 (expected 0 to 5: dgx_h100 has "
                                      "6 power supplies)"}));
  EXPECT_EQ(errors_of(small() + "power { cpu_load_fraction: 1.5 comm_fraction: -0.1 }\n"),
            (std::vector<std::string>{"t.textproto:8:9: power.cpu_load_fraction: got 1.5 (expected 0 to 1)",
                                      "t.textproto:8:32: power.comm_fraction: got -0.1 (expected 0 to 1)"}));
  // Below absolute zero (-273.15 C), negative resistance and capacitance, no racks.
  EXPECT_EQ(errors_of(small() + "thermal { cooling: liquid coolant_c: -300 r_k_per_w: -0.1 c_j_per_k: -5 "
                                "nodes_per_rack: 0 }\n"),
            (std::vector<std::string>{
                "t.textproto:8:27: thermal.coolant_c: got -300 (expected 0 to 70 C)",
                "t.textproto:8:43: thermal.r_k_per_w: got -0.1 (expected a finite number >= 0)",
                "t.textproto:8:59: thermal.c_j_per_k: got -5 (expected a finite number >= 0)",
                "t.textproto:8:73: thermal.nodes_per_rack: got 0 (expected an integer from 1 to 1000: the "
                "simulator's range)"}));
}

}  // namespace
}  // namespace traincast::io
