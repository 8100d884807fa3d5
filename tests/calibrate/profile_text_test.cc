// Calibration profile text (models/io/profile_io.h) as calibrate fit writes it: round trip,
// positioned load errors, efficiencies beyond the hardware refused, the scenario's profile field,
// Chakra runs with a profile, cut-short files, and the hardware it was fitted on.
#include <gtest/gtest.h>

#include "calibrate/fit/profile_fit.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/collectives/nccl_tests.h"
#include "models/compute/compute_model.h"
#include "models/executor/chakra_executor.h"
#include "models/hardware/catalog.h"
#include "models/io/profile_io.h"
#include "models/io/scenario_io.h"
#include "tests/calibrate/simulated_collectives.h"
#include "tests/support/fixtures.h"

namespace traincast::calibrate {
namespace {

using test_support::consumer_cluster;
using test_support::consumer_options;
using test_support::simulated;
using test_support::truth_profile;
namespace fs = std::filesystem;

TEST(ProfileText, RoundTripsExactly) {
  const auto truth = truth_profile();
  models::CalibrationProfile p =
      fit_profile(simulated(truth, {"all_reduce", "broadcast"}), consumer_options(Holdout::none));
  p.gpu = "RTX-2080-Ti";
  p.memory_efficiency = 0.8125;
  p.gemm.surfaces.push_back({models::Precision::bf16, {-0.1, 0.01, 0, 0, 0, 0, 0, 0, 0, 0.001}});
  p.gemm.points.push_back({models::Precision::bf16, 1024, 2048, 512, 0.7});
  const std::string text = io::profile_to_text(p, "header");
  const auto back = io::load_profile_text(text, "p.textproto");
  EXPECT_EQ(io::profile_to_text(*back, "header"), text);
  EXPECT_EQ(back->link_efficiency, p.link_efficiency);
  ASSERT_TRUE(p.pcie_duplex_efficiency.has_value());  // all_reduce's GPU links carry both ways
  EXPECT_EQ(back->pcie_duplex_efficiency, p.pcie_duplex_efficiency);
  EXPECT_EQ(back->collectives.size(), 2u);
  EXPECT_EQ(back->gemm.efficiency(models::Precision::bf16, 1024, 2048, 512), 0.7);
}

std::vector<std::string> profile_errors(const std::string& text) {
  try {
    io::load_profile_text(text, "bad.textproto");
  } catch (const io::ScenarioError& e) {
    return e.errors();
  }
  return {"(no error)"};
}

TEST(ProfileText, LoadErrorsArePositioned) {
  EXPECT_EQ(profile_errors("collective { op: \"all_reduce\" num_ranks: 2 protocol_latency_scale: [1, 2] }\n"),
            std::vector<std::string>{"bad.textproto:1:44: collective[0].protocol_latency_scale: got 2 values (expected "
                                     "3: LL, LL128, Simple)"});
  EXPECT_EQ(
      profile_errors("collective { op: \"all_reduce\" num_ranks: 2 protocol_bandwidth_scale: [1, 0, 1] }\n"),
      std::vector<std::string>{"bad.textproto:1:44: collective[0].protocol_bandwidth_scale: value 1 (LL128): got 0 "
                               "(expected a finite number > 0)"});
  EXPECT_EQ(
      profile_errors("base: \"x\"\npcie_duplex_efficiency: 3.5\n"),
      std::vector<std::string>{"bad.textproto:2:1: pcie_duplex_efficiency: got 3.5 (expected a number in (0, 2.1])"});
  EXPECT_EQ(profile_errors("base: \"x\"\nlatency_scale: -1\n"),
            std::vector<std::string>{"bad.textproto:2:1: latency_scale: got -1 (expected a finite number > 0)"});
  EXPECT_EQ(profile_errors("collective {\n  op: \"allreduce_x\"\n  num_ranks: 1\n}\n"),
            (std::vector<std::string>{
                "bad.textproto:2:3: collective[0].op: unknown nccl-tests operation 'allreduce_x' (expected one of: "
                "all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv)",
                "bad.textproto:3:3: collective[0].num_ranks: got 1 (expected an integer from 2 to 2147483647)"}));
  EXPECT_EQ(profile_errors("link_efficiency { link: \"nvlnk\" efficiency: 0.8 }\n"),
            std::vector<std::string>{"bad.textproto:1:19: link_efficiency[0].link: unknown link kind \"nvlnk\" "
                                     "(expected one of: nvlink, pcie, socket, nic, fabric)"});
  EXPECT_EQ(profile_errors("collective { op: \"all_reduce\" num_ranks: 2 size_correction { bytes: 8 time_ratio: 1 }\n"
                           "  size_correction { bytes: 4 time_ratio: 1 } }\n"),
            std::vector<std::string>{"bad.textproto:2:21: collective[0].size_correction[1].bytes: got 4 after 8 "
                                     "(expected sizes in increasing order)"});
  EXPECT_EQ(profile_errors("memory_efficiency: 0.9\n"),
            std::vector<std::string>{
                "bad.textproto:1:1: gpu: not set (required with compute fields: the GPU they were fitted on)"});
  EXPECT_EQ(profile_errors("gpu: \"H100\"\nlatncy_scale: 2\n").size(), 1u);  // unknown field: the reader's message
  EXPECT_NE(profile_errors("gpu: \"H100\"\nlatncy_scale: 2\n")[0].find("bad.textproto:2:1"), std::string::npos);
}

// Efficiencies are fractions of datasheet figures (models/calibration/calibration_profile.h): links and HBM at
// most 1.05, PCIe both ways 2.1, GEMMs 1.1; scales finite and > 0.
TEST(ProfileText, EfficienciesBeyondWhatTheHardwareCanDoAreRefused) {
  EXPECT_EQ(profile_errors("link_efficiency { link: \"pcie\" efficiency: 7.0 }\n"),
            std::vector<std::string>{
                "bad.textproto:1:32: link_efficiency[0].efficiency: got 7 (expected a number in (0, 1.05])"});
  EXPECT_EQ(profile_errors("gpu: \"H100-SXM5-80GB\"\nmemory_efficiency: 1.2\n"),
            std::vector<std::string>{"bad.textproto:2:1: memory_efficiency: got 1.2 (expected a number in (0, 1.05])"});
  const std::string surface =
      "gpu: \"H100-SXM5-80GB\"\ngemm_surface { dtype: bf16 coefficients: [-0.2, 0, 0, 0, 0, 0, 0, 0, 0, 0] }\n";
  EXPECT_EQ(
      profile_errors(surface + "gemm_point { dtype: bf16 m: 1024 n: 1024 k: 1024 efficiency: 3 }\n"),
      std::vector<std::string>{"bad.textproto:3:50: gemm_point[0].efficiency: got 3 (expected a number in (0, 1.1])"});
  EXPECT_EQ(
      profile_errors(surface + "gemm_point { dtype: bf16 m: 1024 n: 1024 k: 1024 efficiency: -1 }\n"),
      std::vector<std::string>{"bad.textproto:3:50: gemm_point[0].efficiency: got -1 (expected a number in (0, 1.1])"});
  // A surface rising as m (ln eta = 0.2 + ln m - ln 1024: 4.9 at m = 4096) between points measured
  // at 0.9: the model's efficiency is pinned to the points and capped at 1.1 between them.
  const double c0 = 0.2 - std::log(1024.0);
  const auto rising =
      io::load_profile_text("gpu: \"H100-SXM5-80GB\"\ngemm_surface { dtype: bf16 coefficients: [" + std::to_string(c0) +
                                ", 1, 0, 0, 0, 0, 0, 0, 0, 0] }\n"
                                "gemm_point { dtype: bf16 m: 1024 n: 1024 k: 1024 efficiency: 0.9 }\n"
                                "gemm_point { dtype: bf16 m: 4096 n: 1024 k: 1024 efficiency: 0.9 }\n",
                            "rising.textproto");
  EXPECT_NEAR(rising->gemm.efficiency(models::Precision::bf16, 4096, 1024, 1024), 0.9, 1e-12);
  for (double m = 1024; m <= 4096; m *= 1.1)
    EXPECT_LE(rising->gemm.efficiency(models::Precision::bf16, m, 1024, 1024), models::kMaxGemmPeakFraction) << m;
  EXPECT_EQ(
      profile_errors(
          "gpu: \"H100-SXM5-80GB\"\ngemm_surface { dtype: bf16 coefficients: [-0.2, 0, 0, 0, 0, 0, 0, 0, 0, 0] }\n"),
      std::vector<std::string>{
          "bad.textproto:2:1: gemm_surface[0]: has no gemm_point of its dtype (expected the fit's points of "
          "bf16: they bound the shapes the surface is evaluated at; without them it extrapolates without "
          "bound)"});
  EXPECT_EQ(
      profile_errors("base: \"x\"\npcie_duplex_efficiency: 2.5\n"),
      std::vector<std::string>{"bad.textproto:2:1: pcie_duplex_efficiency: got 2.5 (expected a number in (0, 2.1])"});
  EXPECT_EQ(profile_errors("base: \"x\"\nlatency_scale: 0\n"),
            std::vector<std::string>{"bad.textproto:2:1: latency_scale: got 0 (expected a finite number > 0)"});
  EXPECT_EQ(profile_errors("collective { op: \"all_reduce\" num_ranks: 2 bandwidth_scale: inf }\n"),
            std::vector<std::string>{
                "bad.textproto:1:44: collective[0].bandwidth_scale: got inf (expected a finite number > 0)"});
  // At the limits: loads.
  EXPECT_NO_THROW((void)io::load_profile_text(
      surface + "gemm_point { dtype: bf16 m: 1024 n: 1024 k: 1024 efficiency: 1.1 }\nmemory_efficiency: 1.05\n"
                "link_efficiency { link: \"nvlink\" efficiency: 1.05 }\npcie_duplex_efficiency: 2.1\n"
                "latency_scale: 5000\n",
      "ok.textproto"));
}

TEST(ProfileText, ScenarioFieldResolvesRelativeToTheScenarioAndTheModelUsesIt) {
  const test_support::TempDir tmp("profile_field_test");
  const fs::path& dir = tmp.path();
  fs::create_directories(dir / "profiles");
  const auto truth = truth_profile();
  {
    std::ofstream(dir / "profiles" / "p.textproto") << io::profile_to_text(*truth);
    std::ofstream(dir / "s.textproto") << "cluster { node_template: \"consumer_2x2080ti_nop2p\" }\n"
                                          "profile: \"profiles/p.textproto\"\n";
    std::ofstream(dir / "bad.textproto") << "cluster { node_template: \"consumer_2x2080ti_nop2p\" }\n"
                                            "profile: \"profiles/missing.textproto\"\n";
  }
  const models::Scenario sc = io::load_cluster_scenario_file((dir / "s.textproto").string());
  ASSERT_NE(sc.cluster.profile, nullptr);
  models::NcclTestsOptions o;
  const double with = models::simulate_nccl_tests(sc.cluster, o, {1 << 30})[0].time_s;
  models::ClusterSpec plain = sc.cluster;
  plain.profile = nullptr;
  const double without = models::simulate_nccl_tests(plain, o, {1 << 30})[0].time_s;
  EXPECT_GT(with / without, 1.3);  // GPU PCIe both ways at 0.5 of C in sum: 2S / (0.5 C) against 2S / (0.762 C)
  try {
    io::load_cluster_scenario_file((dir / "bad.textproto").string());
    FAIL() << "expected an error";
  } catch (const io::ScenarioError& e) {
    ASSERT_EQ(e.errors().size(), 2u);
    EXPECT_EQ(e.errors()[0],
              (dir / "bad.textproto").string() +
                  ":2:1: profile: cannot use profile \"profiles/missing.textproto\" (1 error(s) follow)");
    EXPECT_NE(e.errors()[1].find("missing.textproto: cannot read file"), std::string::npos);
  }
}

TEST(ProfileText, ScenarioToTextKeepsTheProfileFile) {
  // scenario_to_text used to drop the profile: the printed scenario ran uncalibrated.
  const test_support::TempDir tmp("profile_to_text_test");
  const fs::path& dir = tmp.path();
  fs::create_directories(dir / "profiles");
  std::ofstream(dir / "profiles" / "p.textproto") << io::profile_to_text(*truth_profile());
  models::Scenario sc = io::default_scenario();
  sc.cluster.profile = io::load_profile_file((dir / "profiles" / "p.textproto").string());
  const std::string text = io::scenario_to_text(sc);
  const std::string abs = fs::absolute(dir / "profiles" / "p.textproto").lexically_normal().string();
  EXPECT_NE(text.find("profile: \"" + abs + "\""), std::string::npos) << text;
  // Read back from another "directory": the absolute path still names the same file.
  const models::Scenario back = io::load_scenario_text(text, "/elsewhere/x.textproto", io::Format::text);
  ASSERT_NE(back.cluster.profile, nullptr);
  EXPECT_EQ(back.cluster.profile->link_efficiency, truth_profile()->link_efficiency);
  EXPECT_EQ(back.cluster.profile->latency_scale, 1.6);
  // A profile built in memory has no file: nothing is written.
  models::Scenario mem = sc;
  mem.cluster.profile = truth_profile();
  EXPECT_EQ(io::scenario_to_text(mem).find("profile:"), std::string::npos);
}

TEST(ProfileText, ChakraRunsUseTheProfileForComputeAndCollectives) {
  // One rank pair: a 1 GiB memory node (no duration: the compute model times it) then a 1 GiB
  // all_reduce. With a profile that halves memory_efficiency and sets PCIe 0.55 / latency x1.6,
  // the memory node takes twice as long (bytes / (efficiency x HBM bandwidth), kernel fixed cost
  // 2 us of 1.6 ms) and the all_reduce takes what the profiled engine gives it.
  models::Scenario sc;
  sc.cluster = consumer_cluster();
  sc.training.precision = models::Precision::fp16;
  const models::GpuSpec& gpu = models::find_gpu("RTX-2080-Ti");
  const double eff0 = models::default_compute_params(gpu).memory_efficiency;
  auto prof = truth_profile();
  prof->gpu = gpu.name;
  prof->memory_efficiency = eff0 / 2;
  std::vector<models::ChakraRankTrace> t(2);
  for (int r = 0; r < 2; ++r) {
    t[r].rank = r;
    t[r].path = "t." + std::to_string(r) + ".et";
    models::ChakraNode mem;
    mem.id = 0;
    mem.name = "mem";
    mem.type = models::ChakraNodeType::mem_load;
    mem.tensor_size_bytes = 1 << 30;
    models::ChakraNode ar;
    ar.id = 1;
    ar.name = "ar";
    ar.type = models::ChakraNodeType::comm_coll;
    ar.comm_type = static_cast<int>(models::ChakraCollective::all_reduce);
    ar.comm_size_bytes = 1 << 30;
    ar.data_deps = {0};
    t[r].nodes = {mem, ar};
  }
  const models::ChakraRunReport plain = models::simulate_chakra(sc, t);
  sc.cluster.profile = prof;
  const models::ChakraRunReport cal = models::simulate_chakra(sc, t);
  EXPECT_NEAR(cal.memory_s / plain.memory_s, 2.0, 0.01);
  models::NcclTestsOptions o;
  const double ar_plain = models::simulate_nccl_tests(consumer_cluster(), o, {1 << 30})[0].time_s;
  const double ar_cal = models::simulate_nccl_tests(sc.cluster, o, {1 << 30})[0].time_s;
  EXPECT_NEAR((cal.iteration_time_s - cal.memory_s) / (plain.iteration_time_s - plain.memory_s), ar_cal / ar_plain,
              0.01 * ar_cal / ar_plain);
}

TEST(ProfileText, CutShortOrEmptyIsRefusedWithItsLine) {
  // A profile as `calibrate fit` writes it, cut after each of its lines: every cut is refused,
  // with the file name and a line (the text format's own error inside an open message, else the
  // missing end_of_profile that is written last, at the line where the text ends).
  models::CalibrationProfile p =
      fit_profile(simulated(truth_profile(), {"all_reduce"}), consumer_options(Holdout::none));
  p.created_by = "test";
  const std::string text = io::profile_to_text(p, "header");
  EXPECT_NO_THROW(io::load_profile_text(text, "p.textproto"));
  int lines = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '\n') continue;
    ++lines;
    const std::vector<std::string> errors = profile_errors(text.substr(0, i + 1));
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(errors[0].rfind("bad.textproto:", 0), 0u) << "cut after line " << lines << ": " << errors[0];
  }
  EXPECT_GT(lines, 20);
  // Cut after line 4 ("# header", base, created_by, fit_options): nothing fitted and no
  // end_of_profile, both at line 4 where the text ends.
  std::size_t at = 0;
  for (int k = 0; k < 4; ++k) at = text.find('\n', at) + 1;
  EXPECT_EQ(text.substr(text.rfind('\n', at - 2) + 1, 11), "fit_options");
  const std::vector<std::string> cut = profile_errors(text.substr(0, at));
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_EQ(cut[0].substr(0, 35), "bad.textproto:4:1: no fitted field ");
  EXPECT_EQ(cut[1].substr(0, 35), "bad.textproto:4:1: end_of_profile: ");
  EXPECT_EQ(profile_errors("").at(0).substr(0, 36), "bad.textproto:1:1: no fitted field (");
  // Written false (fresh-user finding: the message said "not set where the file ends"): named at
  // its own line as false.
  std::string with_false = text;
  with_false.replace(with_false.rfind("end_of_profile: true"), 20, "end_of_profile: false");
  const std::vector<std::string> written_false = profile_errors(with_false);
  ASSERT_EQ(written_false.size(), 1u);
  const int false_line =
      static_cast<int>(std::count(text.begin(), text.begin() + text.rfind("end_of_profile"), '\n')) + 1;
  EXPECT_EQ(written_false[0], "bad.textproto:" + std::to_string(false_line) +
                                  ":1: end_of_profile: false (expected true, the last line `traincast calibrate fit` "
                                  "writes to say the file is whole, or no end_of_profile line in a hand-written "
                                  "profile)");
}

// A measurement file where the profile belongs (`calibrate validate LOG LOG`, fresh-user finding:
// the text format's errors on the log's first line) is named for what it is.
TEST(ProfileText, AMeasurementFileGivenAsTheProfileIsNamed) {
  const std::string log =
      std::string(TRAINCAST_SHARED_DATA_DIR) + "/nccl-tests/n04b_h100_2x8_ib400_allreduce_default.txt";
  try {
    io::load_profile_file(log);
    FAIL() << "expected an error";
  } catch (const io::ScenarioError& e) {
    EXPECT_EQ(e.errors().at(0), log +
                                    ":1:1: this is an nccl-tests log, not a calibration profile (expected a "
                                    "profile that `traincast calibrate fit` wrote; `traincast calibrate validate "
                                    "PROFILE MEASUREMENTS...` takes the profile first)");
  }
}

// A traincast-bench measurements file (it has `power`, a field a scenario has too) given as the
// profile is named a measurements file, with the fit command (fresh-user finding: it was called a
// scenario, whose run then called it a measurements file).
TEST(ProfileText, ABenchMeasurementsFileGivenAsTheProfileIsNamed) {
  const std::string text =
      "machine { gpu_name: \"NVIDIA H200\" gpu_count: 1 }\n"
      "power { gpu: 0 t_s: 0.5 power_w: 130 temperature_c: 40 sm_clock_mhz: 1980 }\n";
  try {
    io::load_profile_text(text, "bench.textproto");
    FAIL() << "expected an error";
  } catch (const io::ScenarioError& e) {
    EXPECT_NE(e.errors().at(0).find("bench.textproto:1:1: machine: this is a measurements file, not a calibration "
                                    "profile (top-level fields machine, power); fit a profile to it with `traincast "
                                    "calibrate fit bench.textproto"),
              std::string::npos)
        << e.errors().at(0);
  }
}

TEST(ProfileText, RecordsTheSystemItWasFittedOn) {
  const models::CalibrationProfile p =
      fit_profile(simulated(truth_profile(), {"all_reduce"}), consumer_options(Holdout::none));
  EXPECT_EQ(p.fitted_on.gpu, "RTX-2080-Ti");
  EXPECT_EQ(p.fitted_on.node_template, "consumer_2x2080ti_nop2p");
  EXPECT_EQ(p.fitted_on.num_nodes, 1);
  const auto back = io::load_profile_text(io::profile_to_text(p, "h"), "p.textproto");
  EXPECT_EQ(back->fitted_on, p.fitted_on);
}

TEST(ProfileText, OtherHardwareIsNamedAndAnUnusableSurfaceRefused) {
  models::CalibrationProfile p;
  p.origin = "h100.textproto";
  p.fitted_on = {"H100-SXM5-80GB", "dgx_h100", 2, "", ""};
  p.latency_scale = 2;
  models::ClusterSpec a100;
  a100.node_template = "dgx_a100";
  const std::vector<std::string> w = io::profile_hardware_mismatch(p, a100);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("GPU H100-SXM5-80GB but the scenario's GPU is A100-SXM4-80GB"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("node template dgx_h100 (2 node(s)) but the scenario's is dgx_a100 (1 node(s))"),
            std::string::npos)
      << w[1];
  models::ClusterSpec h100;
  h100.node_template = "dgx_h100";
  EXPECT_TRUE(io::profile_hardware_mismatch(p, h100).empty());
  // An fp8 GEMM surface cannot apply to a GPU without an fp8 peak (A100): refused.
  p.gpu = "H100-SXM5-80GB";
  p.gemm.surfaces.push_back({models::Precision::fp8, {-0.1, 0, 0, 0, 0, 0, 0, 0, 0, 0}});
  // The refusals of `p` on the A100 (empty: none).
  const auto refusals = [&] {
    try {
      io::profile_hardware_mismatch(p, a100);
    } catch (const io::ScenarioError& e) {
      return e.errors();
    }
    return std::vector<std::string>{};
  };
  EXPECT_NO_THROW(io::profile_hardware_mismatch(p, h100));
  std::vector<std::string> errors = refusals();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("h100.textproto: gemm_surface fp8"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("A100-SXM4-80GB has no dense fp8 peak"), std::string::npos) << errors[0];
  // A power/thermal fit is the board's own: refused on another GPU, alone (no other-GPU warning
  // first, as when the power model refused it later; fresh-user finding).
  p.gemm.surfaces.clear();
  p.power_thermal.idle_w = 128.0;
  EXPECT_NO_THROW(io::profile_hardware_mismatch(p, h100));
  errors = refusals();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "profile h100.textproto: power_thermal was fitted on GPU \"H100-SXM5-80GB\" but the scenario's GPU is "
            "\"A100-SXM4-80GB\" (expected a profile of the same GPU: idle and full-load power, R and C are the "
            "board's own)");
}

}  // namespace
}  // namespace traincast::calibrate
