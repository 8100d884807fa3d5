// The loader's hardware and Megatron-LM checks (scenario_checks_hardware.cc): a GPU that does not
// fit its node template, kernels the GPU cannot run (flash attention, fp8, fp4), sequence
// parallelism over a sequence TP does not divide, expert parallelism in fp16.

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "models/io/scenario_io.h"
#include "models/workload/transformer.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

/// Lines: 1 cluster, 2 workload, 3 model, 4 parallel, 5 training, 6 closing brace.
std::string scenario(const std::string& cluster, const std::string& model, const std::string& parallel,
                     const std::string& training = "") {
  return "cluster { " + cluster +
         " }\n"
         "workload {\n"
         "  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 " +
         model +
         " }\n"
         "  parallel { " +
         parallel +
         " }\n"
         "  training { global_batch_size: 8 " +
         training +
         " }\n"
         "}\n";
}

models::Scenario load(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return load_scenario_text(text, "t.textproto", Format::text, overrides);
}

TEST(HardwareChecksIo, GpuThatDoesNotFitItsNodeTemplateIsRefusedWithBothNames) {
  const std::string mi300_in_dgx = scenario("node_template: \"dgx_h100\" gpu: \"MI300X\"", "seq_length: 2048", "dp: 8");
  EXPECT_EQ(errors_of(mi300_in_dgx),
            (std::vector<std::string>{
                "t.textproto:1:37: cluster.gpu: MI300X is an OAM module and dgx_h100 (built for H100-SXM5-80GB) has "
                "an SXM baseboard (expected an SXM module; GPUs that fit dgx_h100: H100-SXM5-80GB, H800-SXM5-80GB, "
                "H100-SXM5-96GB, H200-SXM-141GB, H20; node templates MI300X fits: mi300x_platform)"}));
  // Overriding only the template blames the template.
  const std::string b200 = scenario("node_template: \"dgx_b200\" gpu: \"B200\"", "seq_length: 2048", "dp: 8");
  const std::vector<std::string> e = errors_of(b200, Format::text, {"cluster.node_template=dgx_h100"});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].rfind("--set: cluster.node_template: B200 has NVLink5 links and dgx_h100 (built for "
                       "H100-SXM5-80GB) is wired for NVLink4 (expected a GPU with NVLink4; ",
                       0),
            0u)
      << e[0];
  // The catalog's own variants of a baseboard's GPU load.
  for (const char* ok :
       {"node_template: \"dgx_h100\" gpu: \"H200-SXM-141GB\"", "node_template: \"dgx_h100\" gpu: \"H800-SXM5-80GB\"",
        "node_template: \"dgx_a100\" gpu: \"A100-SXM4-40GB\""})
    EXPECT_NO_THROW(load(scenario(ok, "seq_length: 2048", "dp: 8"))) << ok;
}

TEST(HardwareChecksIo, NicCountIsBoundedBeforeNcclsSearchRuns) {
  // A million NICs per node once hung NCCL's search; more than any server holds is refused.
  const std::string text = scenario("node_template: \"dgx_h100\" nics_per_node: 1000000", "seq_length: 2048", "dp: 8");
  const std::vector<std::string> e = errors_of(text);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].find("cluster.nics_per_node: got 1000000 (expected an integer from 0 to 32"), std::string::npos)
      << e[0];
  EXPECT_NO_THROW(load(scenario("node_template: \"dgx_h100\" nics_per_node: 32", "seq_length: 2048", "dp: 8")));
}

TEST(HardwareChecksIo, ClusterOnlyCommandsRefuseItToo) {
  // nccl-tests and explain read the cluster alone; an impossible GPU is refused there as well.
  const std::string path = ::testing::TempDir() + "/hardware_checks_cluster.textproto";
  {
    std::ofstream out(path);
    out << "cluster { node_template: \"consumer_2x2080ti_nop2p\" gpu: \"B200\" }\n";
  }
  try {
    load_cluster_scenario_file(path);
    ADD_FAILURE() << "no ScenarioError";
  } catch (const ScenarioError& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_EQ(e.errors()[0].rfind(path + ":1:52: cluster.gpu: B200 is an SXM module and consumer_2x2080ti_nop2p (built "
                                         "for RTX-2080-Ti) has PCIe slots (expected a PCIe card; ",
                                  0),
              0u)
        << e.errors()[0];
  }
}

TEST(HardwareChecksIo, FlashAttentionFollowsTheGpuWhenUnsetAndIsRefusedWhereItCannotRun) {
  const std::string v100 = scenario("node_template: \"dgx1v_1gpu\"", "seq_length: 2048", "dp: 1", "precision: fp16");
  // Unset: off on V100 (sm70), on for an H100; --print-scenario's text says what was resolved.
  const models::Scenario off = load(v100);
  EXPECT_FALSE(off.training.flash_attention);
  EXPECT_NE(scenario_to_text(off).find("flash_attention: false"), std::string::npos);
  EXPECT_TRUE(
      load(scenario("node_template: \"h100_1gpu_4nic_roce\"", "seq_length: 2048", "dp: 1")).training.flash_attention);
  // The resolved text loads back the same.
  EXPECT_TRUE(load(scenario_to_text(off)) == off);
  // Asked for explicitly: refused, positioned at the field.
  EXPECT_EQ(errors_of(scenario("node_template: \"dgx1v_1gpu\"", "seq_length: 2048", "dp: 1",
                               "precision: fp16 flash_attention: true")),
            (std::vector<std::string>{
                "t.textproto:5:51: workload.training.flash_attention: is true but V100-SXM2-32GB (sm70) cannot run "
                "fused attention: FlashAttention-2 and TransformerEngine's cuDNN fused attention need sm80+ (Ampere "
                "or newer) (expected false, or leave it unset on this GPU)"}));
  EXPECT_NO_THROW(load(v100, {"workload.training.flash_attention=false"}));
}

TEST(HardwareChecksIo, Fp8AndFp4NeedTheirTensorCores) {
  // fp8 before Ada/Hopper: A100 has no fp8 peak.
  const std::vector<std::string> fp8 =
      errors_of(scenario("node_template: \"dgx_a100\"", "seq_length: 2048", "dp: 8", "precision: fp8"));
  ASSERT_EQ(fp8.size(), 1u);
  EXPECT_EQ(fp8[0].rfind("t.textproto:5:35: workload.training.precision: fp8 is not supported by A100-SXM4-80GB", 0),
            0u)
      << fp8[0];
  EXPECT_NO_THROW(
      load(scenario("node_template: \"pcie_8gpu_2socket\"", "seq_length: 2048", "dp: 8", "precision: fp8")));
  // fp4 is no precision of the schema (no GEMM model for it): refused at the value on any GPU.
  const std::vector<std::string> fp4 =
      errors_of(scenario("node_template: \"dgx_b200\"", "seq_length: 2048", "dp: 8", "precision: fp4"));
  ASSERT_EQ(fp4.size(), 1u);
  EXPECT_NE(fp4[0].find("t.textproto:5:46"), std::string::npos) << fp4[0];
  EXPECT_NE(fp4[0].find("fp4"), std::string::npos) << fp4[0];
}

TEST(HardwareChecksIo, ClusterOnlyCommandsRefuseAPrecisionTheGpuLacks) {
  // `traincast chakra run` times compute nodes at workload.training.precision: fp8 on an A100 is
  // refused there too; unset, nothing is checked.
  const std::string path = ::testing::TempDir() + "/hardware_checks_precision.textproto";
  {
    std::ofstream out(path);
    out << "cluster { node_template: \"dgx_a100\" }\nworkload { training { precision: fp8 } }\n";
  }
  try {
    load_cluster_scenario_file(path, {}, {"traincast chakra run", {"workload.training.precision"}});
    ADD_FAILURE() << "no ScenarioError";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.errors(),
              (std::vector<std::string>{path + ":2:23: workload.training.precision: fp8 is not supported by "
                                               "A100-SXM4-80GB (sm80: no tensor cores for it; fp8 needs "
                                               "sm89+) (expected a precision with a dense peak on it)"}));
  }
  {
    std::ofstream out(path);
    out << "cluster { node_template: \"dgx1v_1gpu\" }\n";  // V100: no bf16, the unused default
  }
  EXPECT_NO_THROW(load_cluster_scenario_file(path));
}

TEST(HardwareChecksIo, SequenceParallelNeedsTpToDivideTheSequence) {
  const std::string odd =
      scenario("node_template: \"dgx_h100\"", "seq_length: 8191", "tp: 2 dp: 4 sequence_parallel: true");
  EXPECT_EQ(errors_of(odd),
            (std::vector<std::string>{
                "t.textproto:3:85: workload.model.seq_length: 8191 is not divisible by tp = 2 with sequence_parallel "
                "(expected a multiple of 2: Megatron-LM splits each sequence over the TP ranks and asserts it, "
                "mappings.py _split_along_first_dim; or sequence_parallel: false)"}));
  // Without sequence parallelism, or with tp 1, the sequence is not split.
  EXPECT_NO_THROW(load(scenario("node_template: \"dgx_h100\"", "seq_length: 8191", "tp: 2 dp: 4")));
  EXPECT_NO_THROW(
      load(scenario("node_template: \"dgx_h100\"", "seq_length: 8191", "tp: 1 dp: 8 sequence_parallel: true")));
  // With context parallelism each CP rank's share is split: 8192 / cp 4 = 2048 is divisible by tp 2.
  EXPECT_NO_THROW(
      load(scenario("node_template: \"dgx_h100\"", "seq_length: 8192", "tp: 2 cp: 4 sequence_parallel: true")));
}

TEST(HardwareChecksIo, ExpertParallelismRefusesFp16AsMegatronDoes) {
  const std::string moe = scenario("node_template: \"dgx_h100\"", "seq_length: 2048 num_experts: 8",
                                   "tp: 1 dp: 8 ep: 4", "precision: fp16");
  EXPECT_EQ(errors_of(moe), (std::vector<std::string>{
                                "t.textproto:4:26: workload.parallel.ep: got 4 with precision fp16 (expected ep: 1, or "
                                "precision bf16: Megatron-LM refuses expert parallelism with fp16 training, "
                                "arguments.py validate_args)"}));
}

// Issue 16: Megatron-LM's --make-vocab-size-divisible-by was fixed at 128. It is
// workload.model.make_vocab_size_divisible_by now, default 128, at least 1.
TEST(HardwareChecksIo, VocabularyPaddingMultipleIsAFieldDefault128) {
  const std::string text = scenario("node_template: \"dgx_h100\"", "seq_length: 2048", "tp: 2 dp: 4");
  models::Scenario sc = load(text, {"workload.model.vocab_size=32001"});
  EXPECT_EQ(sc.model.make_vocab_size_divisible_by, 128);
  EXPECT_EQ(models::padded_vocab_size(sc.model, sc.parallel.tp), 32256);  // 126 x 128 x 2
  sc = load(text, {"workload.model.vocab_size=32001", "workload.model.make_vocab_size_divisible_by=64"});
  EXPECT_EQ(models::padded_vocab_size(sc.model, sc.parallel.tp), 32128);  // 251 x 64 x 2
  sc = load(text, {"workload.model.vocab_size=32001", "workload.model.make_vocab_size_divisible_by=1"});
  EXPECT_EQ(models::padded_vocab_size(sc.model, sc.parallel.tp), 32002);  // a multiple of tp only
  EXPECT_EQ(errors_of(text, Format::text, {"workload.model.make_vocab_size_divisible_by=0"}),
            (std::vector<std::string>{"--set: workload.model.make_vocab_size_divisible_by: got 0 (expected an integer "
                                      "from 1 to 16777216: the simulator's range)"}));
  // A --set path of real field names is printed whole (it was cut at 40 characters); a segment
  // that names no field is clipped.
  const std::vector<std::string> e = errors_of(text, Format::text, {"workload.model.make_vocab_size_divisible_by=1.5"});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].rfind("--set: workload.model.make_vocab_size_divisible_by: invalid value \"1.5\"", 0), 0u) << e[0];
  const std::vector<std::string> u = errors_of(text, Format::text, {"workload.model." + std::string(80, 'x') + "=1"});
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].rfind("--set: workload.model." + std::string(40, 'x') + "...: unknown field", 0), 0u) << u[0];
}

// Issue 19: cluster.fabric.sharp only where the switches can reduce (InfiniBand HDR+, switched
// fabric), refused at the field with what was expected.
TEST(HardwareChecksIo, SharpNeedsInfinibandSwitches) {
  const std::string ib = "node_template: \"dgx_h100\" num_nodes: 2 fabric { kind: fat_tree sharp: true }";
  const std::string col = std::to_string(10 + ib.find("sharp") + 1);  // "cluster { " precedes it
  EXPECT_TRUE(load(scenario(ib, "seq_length: 1024", "tp: 2 dp: 8")).cluster.fabric.sharp);
  EXPECT_TRUE(load(scenario("node_template: \"dgx_h100\" num_nodes: 2", "seq_length: 1024", "tp: 2 dp: 8"),
                   {"cluster.fabric.sharp=true"})
                  .cluster.fabric.sharp);
  const std::string expected =
      " (expected an InfiniBand HDR or later NIC: IB-HDR-200, IB-NDR-400, IB-XDR-800; or sharp: false)";
  EXPECT_EQ(
      errors_of(scenario(ib, "seq_length: 1024", "tp: 2 dp: 8"), Format::text, {"cluster.nic=RoCE-400GbE"}),
      std::vector<std::string>{"t.textproto:1:" + col +
                               ": cluster.fabric.sharp: is true with NIC RoCE-400GbE (not InfiniBand: SHARP runs in "
                               "NVIDIA InfiniBand switches)" +
                               expected});
  EXPECT_EQ(errors_of(scenario(ib, "seq_length: 1024", "tp: 2 dp: 8"), Format::text, {"cluster.nic=IB-EDR-100"}),
            std::vector<std::string>{"t.textproto:1:" + col +
                                     ": cluster.fabric.sharp: is true with NIC IB-EDR-100 (EDR: SHARPv1 switches "
                                     "aggregate small messages only)" +
                                     expected});
  const std::string torus = "node_template: \"dgx_h100\" num_nodes: 2 fabric { kind: torus sharp: true }";
  EXPECT_EQ(errors_of(scenario(torus, "seq_length: 1024", "tp: 2 dp: 8")),
            std::vector<std::string>{"t.textproto:1:" + std::to_string(10 + torus.find("sharp") + 1) +
                                     ": cluster.fabric.sharp: is true on a fabric of kind torus, which has no switches "
                                     "to reduce in (expected kind fat_tree or rail_optimized, or sharp: false)"});
}

// A cable longer than any data-center optic (120 km, 400ZR) is refused at the field: at 1e18 m
// its propagation delay overflowed the simulator's clock.
TEST(HardwareChecksIo, CableLengthIsBoundedByTheLongestOptics) {
  const std::string base = "node_template: \"dgx_h100\" num_nodes: 2 fabric { kind: fat_tree }";
  EXPECT_EQ(load(scenario(base, "seq_length: 1024", "tp: 2 dp: 8"), {"cluster.fabric.cable_length_m=120000"})
                .cluster.fabric.cable_length_m,
            120000.0);
  EXPECT_EQ(errors_of(scenario(base, "seq_length: 1024", "tp: 2 dp: 8"), Format::text,
                      {"cluster.fabric.cable_length_m=1e18"}),
            std::vector<std::string>{"--set: cluster.fabric.cable_length_m: got 1e18 (expected at most 1.2e+05 m: 120 "
                                     "km, the longest reach of 400ZR data-center interconnect optics)"});
}

// Issue 16: `traincast plan` loads with load_scenario_for_layout_search: the rules tying the
// scenario's own layout to its model, batch and cluster become layout problems (positioned as
// errors are), every other rule stays an error.
TEST(HardwareChecksIo, LayoutSearchLoadingLeavesTheOwnLayoutToTheSearch) {
  const std::string path = ::testing::TempDir() + "layout_search.textproto";
  std::ofstream(path) << scenario("node_template: \"dgx_h100\"", "seq_length: 8191",
                                  "tp: 2 dp: 4 sequence_parallel: true");
  std::vector<std::string> problems;
  EXPECT_THROW(load_scenario_file(path, {"cluster.num_nodes=2"}), ScenarioError);
  const models::Scenario sc = load_scenario_for_layout_search(path, {"cluster.num_nodes=2"}, problems);
  EXPECT_EQ(sc.cluster.num_nodes, 2);
  EXPECT_EQ(problems,
            (std::vector<std::string>{
                path + ":3:85: workload.model.seq_length: 8191 is not divisible by tp = 2 with sequence_parallel "
                       "(expected a multiple of 2: Megatron-LM splits each sequence over the TP ranks and asserts it, "
                       "mappings.py _split_along_first_dim; or sequence_parallel: false)",
                "--set: cluster.num_nodes: tp * pp * dp = 2 * 1 * 4 = 8 but the cluster has 16 GPUs (2 x dgx_h100 with "
                "8 GPUs each) (expected tp * pp * dp = 16)"}));
  // A valid own layout: no problems (the list is cleared first).
  load_scenario_for_layout_search(path, {"workload.model.seq_length=8192"}, problems);
  EXPECT_TRUE(problems.empty());
  // Not a layout rule: still an error.
  EXPECT_THROW(
      load_scenario_for_layout_search(path, {"cluster.num_nodes=2", "workload.model.num_query_groups=5"}, problems),
      ScenarioError);
  // The embedded default with an empty path.
  load_scenario_for_layout_search("", {"cluster.num_nodes=2"}, problems);
  EXPECT_EQ(problems.size(), 1u);
}

}  // namespace
}  // namespace traincast::io
