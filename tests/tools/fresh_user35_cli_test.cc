// What fresh users found on the command line (session 35): `switch_price_usd: 1e-400` in a scenario
// file was read as 0 (protobuf's text and JSON parsers underflow without a word) where `--set`
// refused it as out of range as written; `compare --tokens 1e-400` said "got 0". `--threads " 2"`
// was refused and `--set "tp= 4"` trimmed; docs/commands.md said integer options take digits only
// while `--tokens 1e12` (a count read as a number) was accepted. JSON took `"tp": "2"` where text
// refused `tp: "2"`.

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;
const std::string kDoubleRange =
    "out of range as written (expected 0 or a finite number of magnitude 2.2e-308 to 1.8e308: a double holds no "
    "larger one, and smaller ones only subnormal, with digits lost)";

using test_support::has;
using test_support::Result;
using test_support::run;

std::string default_scenario() { return traincast::test_support::slurp(kSrc + "/scenarios/default.textproto"); }

TEST(FreshUser35Cli, ANumberThatUnderflowsIsOutOfRangeAsWrittenInTextAndJson) {
  const traincast::test_support::TempDir dir("fresh_user35_underflow");
  // hidden_dropout takes 0: an underflow read as 0 would have run without a word.
  std::string text = default_scenario();
  const std::string zero = "hidden_dropout: 0";
  text.replace(text.find(zero), zero.size(), "hidden_dropout: 1e-400");
  const Result t = run({"run", dir.write("u.textproto", text)});
  EXPECT_EQ(t.status, 2);
  EXPECT_TRUE(has(t.err, "u.textproto:25:21: workload.model.hidden_dropout: 1e-400 is " + kDoubleRange)) << t.err;
  // A price: "got 0 (expected a price > 0 ...)" named a value nobody wrote.
  const Result p = run({"run", dir.write("p.textproto", default_scenario() + "cost { switch_price_usd: 1e-400 }\n")});
  EXPECT_EQ(p.status, 2);
  EXPECT_TRUE(has(p.err, "cost.switch_price_usd: 1e-400 is " + kDoubleRange)) << p.err;
  EXPECT_FALSE(has(p.err, "got 0")) << p.err;
  // Overflow, as before, in the same words.
  const Result o = run({"run", dir.write("o.textproto", default_scenario() + "cost { switch_price_usd: -1e400 }\n")});
  EXPECT_TRUE(has(o.err, "cost.switch_price_usd: -1e400 is " + kDoubleRange)) << o.err;
  // A subnormal (session 36: MAPE inf %, MTBF inf days): refused as written too.
  const Result s = run({"run", dir.write("s.textproto", default_scenario() + "power { pue: 1e-310 }\n")});
  EXPECT_TRUE(has(s.err, "power.pue: 1e-310 is " + kDoubleRange)) << s.err;
  // JSON.
  const Result j = run({"run", dir.write("u.json", "{\"workload\": {\"model\": {\"hidden_dropout\": 1e-400}}}")});
  EXPECT_EQ(j.status, 2);
  EXPECT_TRUE(has(j.err, "u.json:1:43: workload.model.hidden_dropout: 1e-400 is " + kDoubleRange)) << j.err;
  // --set, as before.
  const Result set = run({"run", "--set", "cost.switch_price_usd=1e-400"});
  EXPECT_EQ(set.err, "--set: cost.switch_price_usd: invalid value \"1e-400\": " + kDoubleRange + "\n");
}

TEST(FreshUser35Cli, ANumericOptionThatUnderflowsIsOutOfRangeAsWritten) {
  for (const std::string v : {"1e-400", "1e400"}) {
    const Result r = run({"compare", "--vary", "workload.parallel.tp=1,2", "--tokens", v});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "traincast: --tokens: got \"" + v + "\": " + kDoubleRange + "\n");
  }
  const Result f = run({"nccl-tests", kSrc + "/scenarios/nccl/consumer_2x2080ti_nop2p.textproto", "-f", "1e-999"});
  EXPECT_EQ(f.status, 2);
  EXPECT_EQ(f.err, "traincast: --stepfactor: got \"1e-999\": " + kDoubleRange + "\n");
}

// One rule for spaces on the command line: options and --set alike refuse them around a value.
TEST(FreshUser35Cli, SpacesAroundACommandLineValueAreRefusedForSetAsForOptions) {
  const Result t = run({"run", "--threads", " 2"});
  EXPECT_EQ(t.status, 2);
  EXPECT_TRUE(has(t.err, "--threads: got \" 2\" (expected a whole number without spaces around it")) << t.err;
  for (const std::string v : {" 4", "4 "}) {
    const Result s = run({"run", "--set", "workload.parallel.tp=" + v});
    EXPECT_EQ(s.status, 2);
    EXPECT_EQ(s.err, "--set: workload.parallel.tp: invalid value \"" + v +
                         "\": --set takes the value without spaces around it (expected workload.parallel.tp=4)\n");
  }
  const Result tab = run({"run", "--set", "workload.parallel.tp=\t4"});
  EXPECT_TRUE(has(tab.err, "--set takes the value without spaces around it")) << tab.err;
  const Result d = run({"run", "--set", "cost.utilization= 0.5"});
  EXPECT_TRUE(has(d.err, "--set: cost.utilization: invalid value \" 0.5\": --set takes the value without spaces"))
      << d.err;
  // --vary's list may have spaces after its commas (the list's, not the values').
  const Result v = run({"compare", "--vary", "workload.training.micro_batch_size=1, 2"});
  EXPECT_EQ(v.status, 0) << v.err;
}

// A count read as a number (--tokens) takes 1e12, as docs/commands.md now says; an integer option
// takes digits only; a count that is not whole is refused.
TEST(FreshUser35Cli, TokensTakesAWholeNumberInAnyFormIntegerOptionsDigitsOnly) {
  const Result e = run({"compare", "--vary", "workload.training.micro_batch_size=1,2", "--tokens", "1e12"});
  EXPECT_EQ(e.status, 0) << e.err;
  EXPECT_TRUE(has(e.out, "1.00T tokens *")) << e.out;
  const Result half = run({"compare", "--vary", "workload.training.micro_batch_size=1,2", "--tokens", "1.5"});
  EXPECT_EQ(half.status, 2);
  EXPECT_TRUE(has(half.err, "--tokens: got 1.5 (expected a whole number of tokens from 1 to 1e15")) << half.err;
  const Result j = run({"compare", "--vary", "workload.training.micro_batch_size=1,2", "--jobs", "1e0"});
  EXPECT_EQ(j.status, 2);
  EXPECT_TRUE(has(j.err, "--jobs: got \"1e0\" (expected a whole number, written in digits")) << j.err;
  const std::string doc = traincast::test_support::slurp(kSrc + "/docs/commands.md");
  EXPECT_TRUE(has(doc, "so `--tokens 1e12` and `-f 2e0` are\naccepted")) << "docs/commands.md";
}

TEST(FreshUser35Cli, AQuotedThirtyTwoBitIntegerIsRefusedInJsonAsInText) {
  const traincast::test_support::TempDir dir("fresh_user35_quoted");
  const std::string expected = "workload.parallel.tp: invalid value \"2\" (expected an integer from 1 to 2147483647)";
  const Result j = run({"run", dir.write("q.json", "{\"workload\": {\"parallel\": {\"tp\": \"2\"}}}")});
  EXPECT_EQ(j.status, 2);
  EXPECT_TRUE(has(j.err, "q.json:1:34: " + expected)) << j.err;
  std::string text = default_scenario();
  text.replace(text.find("tp: 2"), 5, "tp: \"2\"");
  const Result t = run({"run", dir.write("q.textproto", text)});
  EXPECT_EQ(t.status, 2);
  EXPECT_TRUE(has(t.err, "q.textproto:29:9: " + expected)) << t.err;
  // A 64-bit integer may be quoted: proto3 JSON writes it so, and --print-scenario's JSON reads back.
  const std::string printed = dir.file("printed.json");
  ASSERT_EQ(run({"run", "--print-scenario", "--json", printed}).status, 0);
  EXPECT_TRUE(has(traincast::test_support::slurp(printed), "\"switch_latency_ns\": \"130\""));
  const Result back = run({"run", printed, "--print-scenario"});
  EXPECT_EQ(back.status, 0) << back.err;
}

// A value refused by a check is printed as written: 1.0000001 printed as "got 1" read as a valid value.
TEST(FreshUser35Cli, ARefusedValueIsPrintedWithTheDigitsItWasWrittenWith) {
  const Result r = run({"run", "--set", "cost.utilization=1.0000001"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "--set: cost.utilization: got 1.0000001 (expected a fraction in (0, 1])\n");
  const Result p = run({"run", "--set", "power.pue=0.30000000000000004"});
  EXPECT_TRUE(has(p.err, "power.pue: got 0.30000000000000004 (expected 1 to 3")) << p.err;
}

// explain said "1 spines", "2 pods of 1 leaf groups with 1 aggregation switches", "1 cores".
TEST(FreshUser35Cli, ExplainCountsAreSingularForOne) {
  const std::string s = kSrc + "/scenarios/default.textproto";
  const Result two = run({"explain", s, "--set", "cluster.num_nodes=2", "--set", "cluster.fabric.nodes_per_leaf=1"});
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_TRUE(has(two.out, "1 node per leaf group), 1 spine, leaf uplinks 1 x 50 GB/s")) << two.out;
  EXPECT_TRUE(has(two.out, "+ 1 spine (16 leaves x 1 up-link / 64 ports)")) << two.out;
  const Result three = run({"explain", s, "--set", "cluster.num_nodes=2", "--set", "cluster.fabric.nodes_per_leaf=1",
                            "--set", "cluster.fabric.tiers=3", "--set", "cluster.fabric.leaves_per_pod=1"});
  ASSERT_EQ(three.status, 0) << three.err;
  EXPECT_TRUE(has(three.out, "2 pods of 1 leaf group with 1 aggregation switch, leaf uplinks 1 x 50 GB/s, 1 core,"))
      << three.out;
  EXPECT_TRUE(has(three.out, "simulated: 2 pods of 1 leaf group, 1 aggregation switch per pod and 1 core"))
      << three.out;
  EXPECT_FALSE(has(three.out + two.out, " 1 spines")) << three.out;
}

// `merge a.csv a.csv` said "point 0 is also in a.csv:3"; a CSV with a NUL byte was asked to be
// ".textproto or .json".
TEST(FreshUser35Cli, MergeNamesAPartGivenTwiceAndANulByteInACsv) {
  const traincast::test_support::TempDir dir("fresh_user35_merge");
  const std::string part = dir.write("a.csv", "index,tp,status,iteration_time_s,reason\n");
  const Result twice = run({"merge", dir.file("m.csv"), part, part});
  EXPECT_EQ(twice.status, 2);
  EXPECT_EQ(twice.err, "traincast: merge: " + part +
                           " is given twice (expected each part once: a part given twice holds every point twice)\n");
  const Result other = run({"merge", dir.file("m.csv"), part, dir.file(".") + "/a.csv"});
  EXPECT_TRUE(has(other.err, "is given twice")) << other.err;
  const std::string nul = dir.write("n.csv", std::string("index,tp\n0,1\n1,\0\n", 17));
  const Result n = run({"merge", dir.file("m2.csv"), nul});
  EXPECT_EQ(n.status, 2);
  EXPECT_EQ(n.err, nul +
                       ":3: not a text file (a NUL byte at offset 15; expected a sweep CSV, text as traincast sweep "
                       "writes it)\n");
}

// A price without a region read "not stated (USD)", as if the region were USD.
TEST(FreshUser35Cli, APriceWithoutARegionSaysTheRegionIsNotStated) {
  const Result r = run({"run", kSrc + "/scenarios/operations/buy_vs_rent_60pct.textproto"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "USD 3.20/GPU-hour, cloud on-demand, Hyperstack, 2026-08-26, region not stated: NVIDIA H100"))
      << r.out;
  EXPECT_FALSE(has(r.out, "not stated (USD)")) << r.out;
  const Result c = run({"catalog", "--prices"});
  EXPECT_TRUE(has(c.out, "Thinkmate, 2024-08-22, region US: HGX H100")) << c.out;
}

// cluster printed "Makespan     27559684.3 s" with no unit a reader can picture.
TEST(FreshUser35Cli, ClusterPrintsLongDurationsInDaysToo) {
  const Result r = run({"cluster", kSrc + "/scenarios/cluster/alibaba_slice_12_jobs_on_64_gpus.textproto"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Makespan     27559684.3 s (319.0 days)\n")) << r.out;
  EXPECT_TRUE(has(r.out, "Wait         mean 5112550.8 s (59.2 days), p95 15634632.3 s (181.0 days)\n")) << r.out;
  // Under an hour, seconds alone.
  const Result s = run({"cluster", kSrc + "/scenarios/cluster/six_jobs_fifo_vs_backfill.textproto"});
  EXPECT_TRUE(has(s.out, "Makespan     35.0 s\nUtilisation")) << s.out;
}

// compare's verdict said "the same cost per token (within 0.5 %, rent) and the same cost per token
// (within 0.5 %, own, TCO)".
TEST(FreshUser35Cli, AVerdictSaysACostDifferenceOnceWhenRentAndOwnAgree) {
  const Result r = run({"compare", "--vary", "power.gpu_power_limit_w=700,699", "--tokens", "1e9"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "(time to train) for the same cost per token (within 0.5 %, rent and own, TCO); both"))
      << r.out;
  // Differences that print differently stay two.
  const Result b = run({"compare", "--vary", "cost.cloud_price_per_gpu_hour_usd=3.2,3.5", "--tokens", "1e9"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_TRUE(has(b.out, "for 9 % more per token (rent) and the same cost per token (within 0.5 %, own, TCO)"))
      << b.out;
}

// A torus was charged one cable per neighbour link (8 for a ring of 8 DGX H100, 64 NIC ports).
TEST(FreshUser35Cli, ATorusIsChargedACablePerTwoNicPorts) {
  const std::string s = kSrc + "/scenarios/operations/buy_vs_rent_60pct.textproto";
  // The cables depend on the cluster only: a 4-layer, 8-sample job keeps the test short (the
  // scenario's Llama 3 70B took 67 s of the CI's ASan stage).
  const std::vector<std::string> small{"--set", "workload.model.num_layers=4", "--set",
                                       "workload.training.global_batch_size=8"};
  const auto with_small = [&](std::vector<std::string> args) {
    args.insert(args.end(), small.begin(), small.end());
    return args;
  };
  const Result ring = run(with_small({"run", s, "--set", "cluster.fabric.kind=torus"}));
  ASSERT_EQ(ring.status, 0) << ring.err;
  EXPECT_TRUE(has(ring.out, "(8 nodes, 0 switches, 32 cables)")) << ring.out;
  // 2 x 4 and 2 x 2 x 2 (3 neighbour directions each since session 36, so 6 NICs a node): every
  // port cabled to a neighbour, the same 48 ports: 24 cables.
  const traincast::test_support::TempDir dir("fresh_user35_torus");
  for (const auto& [dims, cables] :
       std::vector<std::pair<std::string, std::string>>{{"2, 4", "24"}, {"2, 2, 2", "24"}}) {
    std::string text = traincast::test_support::slurp(s);
    const std::string nodes = "num_nodes: 8\n";
    text.replace(text.find(nodes), nodes.size(),
                 nodes + "  nics_per_node: 6\n  fabric { kind: torus torus_dims: [" + dims + "] }\n");
    const Result r = run(with_small({"run", dir.write("t.textproto", text)}));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "(8 nodes, 0 switches, " + cables + " cables)")) << dims << "\n" << r.out;
  }
  const std::string doc = traincast::test_support::slurp(kSrc + "/docs/fabric.md");
  EXPECT_TRUE(has(doc, "**Torus cabling.**")) << "docs/fabric.md";
}

// chakra export said 3,328 nodes where chakra run of its files said 3,336 (the 8 metadata nodes).
TEST(FreshUser35Cli, ChakraExportCountsTheNodesChakraRunReads) {
  const traincast::test_support::TempDir dir("fresh_user35_chakra");
  const std::string s = kSrc + "/scenarios/chakra/gpt_small_export.textproto";
  const Result e = run({"chakra", "export", s, "--out", dir.file("t")});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_TRUE(has(e.out, ".et: 3,336 nodes (3,328 operations, 8 process_group:init metadata), ")) << e.out;
  const Result r = run({"chakra", "run", s, dir.file("t") + "/gpt-small-export"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "(8 ranks, 3,336 nodes)")) << r.out;
}

// scenarios/whatif/README.md said 51.813 s and 30.45 s where run printed 51.816 s and 30.457 s: the
// README and the files' answers quote what run prints now.
TEST(FreshUser35Cli, WhatIfReadmeQuotesTheIterationTimesRunPrints) {
  const std::string w = kSrc + "/scenarios/whatif/";
  const std::string readme = traincast::test_support::slurp(w + "README.md");
  const auto iteration = [](const Result& r) {
    const std::size_t at = r.out.find("\nIteration  ");
    return at == std::string::npos ? std::string() : r.out.substr(at + 12, r.out.find(" s\n", at) - at - 12);
  };
  const std::string fp32 =
      iteration(run({"run", w + "dgx_a100_mixed_precision.textproto", "--set", "workload.training.precision=fp32"}));
  const std::string a100 = iteration(run({"run", w + "lora_70b_16x_a100.textproto"}));
  const std::string h200 = iteration(run({"run", w + "lora_70b_8x_h200.textproto"}));
  EXPECT_EQ(fp32, "51.816");
  EXPECT_TRUE(has(readme, "3.659 s vs " + fp32 + " s vs 7.112 s")) << fp32;
  EXPECT_TRUE(has(readme, h200 + " vs " + a100 + " s per 64 sequences")) << h200 << " " << a100;
  EXPECT_TRUE(has(traincast::test_support::slurp(w + "lora_70b_16x_a100.textproto"), "vs " + a100 + " s on 16x A100"));
}

}  // namespace
}  // namespace traincast::cli
