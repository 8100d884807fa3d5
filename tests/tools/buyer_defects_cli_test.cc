// Issue 21's defects found by a new user's test, each with the output it must now give.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"
#include "tools/cli/summary.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;
using test_support::Result;
using test_support::run;
using test_support::slurp;

class BuyerDefects : public traincast::test_support::TempDirTest {};

// A job one GPU wide on a small model: "1 GPU", not "1 GPUs"; "1.31 GFLOP", not "0.0 PFLOP".
const std::vector<std::string> kTinyJob = {"--set", "cluster.node_template=pcie_1gpu_ib_hdr",
                                           "--set", "workload.parallel.tp=1",
                                           "--set", "workload.parallel.dp=1",
                                           "--set", "workload.model.num_layers=2",
                                           "--set", "workload.model.hidden_size=256",
                                           "--set", "workload.model.num_attention_heads=4",
                                           "--set", "workload.model.num_query_groups=4",
                                           "--set", "workload.model.ffn_hidden_size=512",
                                           "--set", "workload.model.seq_length=128",
                                           "--set", "workload.training.global_batch_size=1",
                                           "--set", "workload.model.vocab_size=1000",
                                           "--set", "workload.parallel.sequence_parallel=false"};

TEST_F(BuyerDefects, OneGpuIsSingularAndSmallFlopCountsKeepTheirDigits) {
  const Result bad = run({"run", "--set", "cluster.node_template=pcie_1gpu_ib_hdr"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err,
            "--set: cluster.node_template: tp * pp * dp = 2 * 1 * 4 = 8 but the cluster has 1 GPU (1 x "
            "pcie_1gpu_ib_hdr with 1 GPU each) (expected tp * pp * dp = 1)\n");
  std::vector<std::string> args = {"run", "--json", path("r.json")};
  args.insert(args.end(), kTinyJob.begin(), kTinyJob.end());
  const Result r = run(args);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("1.31 GFLOP per iteration"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0.0 PFLOP"), std::string::npos) << r.out;
  // The "generic defaults" caveat is in the JSON report as well as the text.
  const std::string caveat =
      "no measured kernel efficiencies for A30: generic defaults used (GEMM 0.65 of peak); treat with care";
  EXPECT_NE(r.out.find("Note       " + caveat), std::string::npos) << r.out;
  EXPECT_NE(slurp(path("r.json")).find("\"caveat\": \"" + caveat + "\""), std::string::npos);
  // A calibrated GPU has no caveat.
  const Result h100 = run({"run", "--json", path("h.json")});
  ASSERT_EQ(h100.status, 0) << h100.err;
  EXPECT_NE(slurp(path("h.json")).find("\"caveat\": \"\""), std::string::npos);
}

TEST(BuyerDefectsCli, DefaultRunPrintsDaysAndDollarsForAMarkedDefaultBudget) {
  const Result r = run({"run"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("To train   25.2 days for 160.6B tokens (default budget: 20 tokens per parameter, Hoffmann "
                       "et al. 2022; set workload.training.train_tokens; no failures counted), rent $15,"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("at $3.20/GPU-hour (Hyperstack cloud on-demand, 2026-08-26)"), std::string::npos) << r.out;
}

TEST(BuyerDefectsCli, MisspelledFieldGetsTheFieldItBegins) {
  const Result r = run({"run", "--set", "workload.training.micro_batch=2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find(" (expected")),
            "--set: workload.training.micro_batch: unknown field, did you mean \"micro_batch_size\"?");
}

TEST(BuyerDefectsCli, GpuListBeyondTheClusterNamesWhatIsMissing) {
  const Result r = run({"nccl-tests", kSrc + "/scenarios/nccl/dgx_h100.textproto", "--gpus", "0-99"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --gpus: 0-99 names 92 GPUs (8 ... 99) that the cluster does not have: it has 8 GPUs (expected "
            "GPU indices 0 to 7)\n");
}

// Also pins the refusal's factors, each with the field that drives it and its value (fresh-user defect).
TEST(BuyerDefectsCli, OpLimitDoesNotAdviseFoldingWhenItIsOn) {
  const Result r = run({"run", "--set", "options.iterations=1000"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: the job would need about 116 million ops to simulate (limit 40 million): 1000 iterations "
            "(options.iterations 1000) x 32 micro-batches per iteration (workload.training.global_batch_size 128 / "
            "workload.training.micro_batch_size 1 / 4 data-parallel ranks) x 1 pipeline stage (workload.parallel.pp) "
            "x 4 data-parallel replicas simulated (options.fold_symmetric on) x 908 ops per micro-batch (32 layers on "
            "the fullest stage, of workload.model.num_layers 32); reduce options.iterations (--set "
            "options.iterations=1), workload.training.global_batch_size (--set workload.training.global_batch_size=N), "
            "or the layers on the fullest stage (workload.model.num_layers, or more stages with workload.parallel.pp) "
            "(options.fold_symmetric is already on: the data-parallel replicas left cannot be folded, or one replica "
            "alone is this large)\n");
  // One iteration: options.iterations is not offered, the layers are (fresh user, session 32).
  const Result layers = run({"run", "--set", "workload.model.num_layers=100000"});
  EXPECT_EQ(layers.status, 2);
  EXPECT_NE(
      layers.err.find("; reduce workload.training.global_batch_size (--set workload.training.global_batch_size=N), "
                      "or the layers on the fullest stage (workload.model.num_layers, or more stages with "
                      "workload.parallel.pp)"),
      std::string::npos)
      << layers.err;
  EXPECT_EQ(layers.err.find("options.iterations=1"), std::string::npos) << layers.err;
}

TEST(BuyerDefectsCli, IterationPastTheClockNamesTheFields) {
  const Result r =
      run({"run", "--set", "workload.model.hidden_size=1048576", "--set", "workload.model.ffn_hidden_size=1048576",
           "--set", "workload.model.seq_length=16777216", "--set", "workload.model.num_attention_heads=32", "--set",
           "workload.model.num_query_groups=32", "--set", "workload.training.global_batch_size=512"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: the scenario is beyond the simulator's range: workload.model: one iteration of this job runs "
            "past 292 years of simulated time (Simulator::schedule_in: now() + delay is past Time::max()) (expected "
            "a smaller model: workload.model.num_layers, hidden_size, seq_length; a smaller "
            "workload.training.global_batch_size; or more GPUs)\n");
}

// The out-of-memory advice said "More TP or PP" when TP already spanned the node, and never named
// how many GPUs the model needs.
TEST(BuyerDefectsCli, OutOfMemoryAdviceKeepsTpInsideTheNodeAndNamesAGpuCount) {
  // Llama-3-70B, TP 8 on one 8-GPU DGX H100: 70.6 B parameters x 18 bytes (bf16 weights, fp32
  // gradient accumulation, fp32 master, m, v) = 1,182.9 GiB; 76.6 GiB usable per GPU (79.6 - 3
  // workspace) -> 15.4, so 16.
  const Result r = run({"run", kSrc + "/scenarios/llama3_70b_one_node_oom.textproto"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("More TP"), std::string::npos) << r.out;
  // The verdict first: the cluster is too small whatever the layout, and by how much.
  EXPECT_NE(r.out.find("needs 172.3 GiB of 79.6 GiB on stage 0. No layout of this cluster fits: the model's "
                       "weights, gradients and optimizer state are 1182.9 GiB: at least 16 H100-SXM5-80GB hold them, "
                       "fully sharded (TP x PP, ZeRO-3) and before activations; this cluster has 8. Plan for at least "
                       "2 nodes (traincast plan --set cluster.num_nodes=2)."),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("TP 8 already spans the node's 8 GPUs: more would run TP over the network. PP 2 halves "
                       "each stage's layers (on twice the GPUs: 16)."),
            std::string::npos)
      << r.out;
  // No days or dollars for a run that cannot happen.
  EXPECT_NE(r.out.find("To train   not feasible: the job does not fit in GPU memory"), std::string::npos) << r.out;
  // TP 2 in the same node (8 heads per KV group divide by 4): a larger TP is the first advice.
  const Result small = run({"run", kSrc + "/scenarios/llama3_70b_one_node_oom.textproto", "--set",
                            "workload.parallel.tp=2", "--set", "workload.parallel.dp=4"});
  ASSERT_EQ(small.status, 0) << small.err;
  EXPECT_NE(small.out.find("TP 4 (inside the node's 8 GPUs) halves each GPU's weights, gradients and optimizer "
                           "state. PP 2 halves each stage's layers (with DP 2, on the same GPUs)."),
            std::string::npos)
      << small.out;
}

// libprotobuf's own "[libprotobuf ERROR ...]" line went to the process's stderr before our message.
TEST_F(BuyerDefects, CorruptChakraFilePrintsOnlyOurMessage) {
  const std::string trace = path("bad.et");
  std::ofstream(trace, std::ios::binary) << std::string("\x04\x0a\x02\xff\xfe", 5);
  const std::string captured = path("fd2.txt");
  std::fflush(stderr);
  const int saved = dup(2);
  FILE* f = std::fopen(captured.c_str(), "w");
  ASSERT_NE(f, nullptr);
  dup2(fileno(f), 2);
  const Result r = run({"chakra", "run", kSrc + "/scenarios/default.textproto", trace});
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::fclose(f);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: " + trace +
                       ": byte 0: the first message is not a Chakra GlobalMetadata (file not a Chakra .et trace?)\n");
  EXPECT_EQ(slurp(captured), "");
}

TEST_F(BuyerDefects, PlanWithNothingThatFitsWritesItsJsonAndSaysWhy) {
  const Result r = run({"plan", kSrc + "/scenarios/llama3_70b_one_node_oom.textproto", "--json", path("p.json")});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "traincast: plan: no layout fits in memory and simulates (exit status 1); " + path("p.json") +
                       " holds the empty ranking\n");
  EXPECT_NE(slurp(path("p.json")).find("\"ranked\": []"), std::string::npos);
  EXPECT_NE(r.out.find("needs 152.9 GiB per GPU of 79.6 GiB, 73.2 GiB over"), std::string::npos) << r.out;
}

TEST(BuyerDefectsCli, MemoryNeedShowsTheDifferenceOneDecimalHides) {
  const double gib = 1073741824.0;
  EXPECT_EQ(format_memory_need(40.003 * gib, 40.0 * gib), "40.003 GiB per GPU of 40.000 GiB, 3.1 MiB over");
  EXPECT_EQ(format_memory_need(30.0 * gib, 40.0 * gib), "30.0 GiB per GPU of 40.0 GiB");
}

// A short iteration's energy printed "0.000 kWh" (fresh-user finding): the unit follows the size.
TEST(BuyerDefectsCli, EnergyPerIterationKeepsItsDigits) {
  EXPECT_EQ(format_energy(7.942 * 3.6e6), "7.942 kWh");
  EXPECT_EQ(format_energy(3.6e6), "1.000 kWh");
  EXPECT_EQ(format_energy(0.054 * 3.6e6), "54.0 Wh");
  EXPECT_EQ(format_energy(3600.0), "1.0 Wh");
  EXPECT_EQ(format_energy(6.14), "6.1 J");
  EXPECT_NE(run({"run"}).out.find("; energy 53.9 Wh per iteration"), std::string::npos);  // the default scenario
}

}  // namespace
}  // namespace traincast::cli
