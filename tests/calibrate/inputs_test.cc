// calibrate/fit inputs (inputs.h): every shared nccl-tests log through the fit's input path, CSV
// rows and positioned errors, and traincast-bench's Measurements text.
#include "calibrate/fit/inputs.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "calibrate/nccl_tests_log.h"
#include "models/io/profile_io.h"
#include "models/io/scenario_io.h"

namespace traincast::calibrate {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(TRAINCAST_SHARED_DATA_DIR) / "nccl-tests";

TEST(FitInputs, EverySharedLogGivesSamplesOrARefusalWithAReason) {
  if (!fs::exists(kData)) GTEST_SKIP() << "no shared data at " << kData;
  int with_samples = 0, no_op = 0, refused = 0;
  for (const fs::path& dir : {kData, kData / "raw"}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (name == "INDEX.csv" || name == "SOURCES.md" || entry.is_directory()) continue;
      NcclTestsLog log;
      try {
        log = read_nccl_tests_log(entry.path().string());
      } catch (const NcclTestsLogError& e) {
        EXPECT_NE(std::string(e.what()).find(entry.path().string()), std::string::npos) << e.what();
        ++refused;
        continue;
      }
      InputNotes notes;
      try {
        const models::MeasurementSet m = samples_from_nccl_log(log, entry.path().string(), "", notes);
        EXPECT_FALSE(m.collectives.empty()) << name;
        for (const auto& s : m.collectives) EXPECT_GT(s.time_us, 0) << s.where;
        ++with_samples;
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("names no operation"), std::string::npos) << e.what();
        // With --op the same log is accepted.
        EXPECT_FALSE(samples_from_nccl_log(log, entry.path().string(), "all_reduce", notes).collectives.empty());
        ++no_op;
      }
    }
  }
  EXPECT_EQ(with_samples + no_op + refused, 39);
  EXPECT_EQ(refused, 1);  // r15: the run failed at NCCL init
  EXPECT_GT(with_samples, 25);
}

TEST(FitInputs, CsvRowsAndErrorsWithLineNumbers) {
  InputNotes notes;
  const models::MeasurementSet m = read_measurement_csv(
      "# a comment\nop,size_bytes,time_us,num_ranks\nall_reduce,1048576,25.5,8\nall_gather,2048,10,8\n", "c.csv", "",
      notes);
  ASSERT_EQ(m.collectives.size(), 2u);
  EXPECT_EQ(m.collectives[0].where, "c.csv:3");
  EXPECT_EQ(m.collectives[1].num_ranks, 8);
  try {
    read_measurement_csv("m,n,k,dtype,tflops\n1024,1024,x,bf16,500\n1,2,3,int4,5\n", "g.csv", "", notes);
    FAIL() << "expected errors";
  } catch (const InputError& e) {
    ASSERT_EQ(e.errors().size(), 2u);
    EXPECT_EQ(e.errors()[0], "g.csv:2: column 'k': 'x' is not a number > 0");
    EXPECT_EQ(e.errors()[1],
              "g.csv:3: column 'dtype': unknown 'int4' (expected fp32, tf32, fp16, bf16, fp8 or an openxla dtype such "
              "as bf16xbf16->bf16)");
  }
  try {
    read_measurement_csv("device_key,b,m,n,k,dtype,flops_per_s\nsm_90,1,8,8,8,bf16,1e12\ngfx950,1,8,8,8,bf16,1e12\n",
                         "x.csv", "", notes);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.errors()[0], "x.csv: rows of 2 devices (gfx950, sm_90); pick one with --device");
  }
}

TEST(MeasurementsText, ReadsBenchOutputAndPositionsErrors) {
  const models::MeasurementSet m = io::load_measurements_text(
      "machine { gpu_name: \"NVIDIA H200\" gpu_count: 8 }\n"
      "gemm { dtype: \"bf16\" m: 4096 n: 4096 k: 4096 time_s: 0.0002 tflops: 687 repeats: 20 }\n"
      "bandwidth { kind: hbm_copy size_bytes: 1e9 bytes: 2e9 time_s: 0.0005 gb_per_s: 4000 }\n"
      "launch { back_to_back_kernel_s: 2.5e-6 }\n"
      "collective { op: \"all_reduce\" num_ranks: 8 size_bytes: 0 time_us: 5 }\n"
      "collective { op: \"all_reduce\" num_ranks: 8 size_bytes: 1048576 time_us: 40 }\n",
      "m.textproto");
  EXPECT_EQ(m.gpu_name, "NVIDIA H200");
  ASSERT_EQ(m.gemm.size(), 1u);
  EXPECT_EQ(m.gemm[0].where, "m.textproto:2");
  ASSERT_EQ(m.bandwidth.size(), 1u);
  EXPECT_EQ(m.launch_back_to_back_s, 2.5e-6);
  ASSERT_EQ(m.collectives.size(), 1u);  // size 0 (nccl-tests prints it) is kept out
  EXPECT_EQ(m.collectives[0].where, "m.textproto:6");
  try {
    io::load_measurements_text(
        "gemm { dtype: \"int4\" m: 1 n: 1 k: 1 time_s: 1 }\ngemm { dtype: \"bf16\" m: 0 n: 1 k: 1 time_s: 1 }\n",
        "b.textproto");
    FAIL() << "expected errors";
  } catch (const io::ScenarioError& e) {
    ASSERT_EQ(e.errors().size(), 2u);
    EXPECT_EQ(e.errors()[0],
              "b.textproto:1:8: gemm[0].dtype: got \"int4\" (expected one of: fp32, tf32, fp16, bf16, fp8)");
    EXPECT_EQ(e.errors()[1], "b.textproto:2:22: gemm[1].m: got 0 (expected a number in (0, 1e+09])");
  }
}

}  // namespace
}  // namespace traincast::calibrate
