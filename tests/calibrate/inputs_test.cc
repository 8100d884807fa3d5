// calibrate/fit inputs (inputs.h): every shared nccl-tests log through the fit's input path, CSV
// rows and positioned errors, and traincast-bench's Measurements text.
#include "calibrate/fit/inputs.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

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
  try {  // a --device the file lacks: the message lists the devices it has
    read_measurement_csv("device_key,b,m,n,k,dtype,flops_per_s\nsm_90,1,8,8,8,bf16,1e12\ngfx950,1,8,8,8,bf16,1e12\n",
                         "x.csv", "sm_90_H100", notes);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.errors()[0],
              "x.csv: no usable rows for --device sm_90_H100 (expected one of the file's devices: gfx950, sm_90)");
  }
}

std::vector<std::string> csv_errors(const std::string& text) {
  InputNotes notes;
  try {
    read_measurement_csv(text, "c.csv", "", notes);
  } catch (const InputError& e) {
    return e.errors();
  }
  return {"(no error)"};
}

// Fresh-user findings in GEMM CSVs: sides beyond what a profile holds (m = 1e20 made the fit write
// a profile its own reader refused, exit 1), a column named twice, time and rate columns that
// disagree; and RFC 4180 quoting, which is read.
TEST(FitInputs, GemmCsvRowsAProfileCannotHoldAreRefused) {
  EXPECT_EQ(csv_errors("m,n,k,dtype,tflops\n99999999999999999999,4096,4096,bf16,700\n"),
            (std::vector<std::string>{"c.csv:2: column 'm': got 99999999999999999999 (expected a number in (0, "
                                      "1e+09]: a profile holds GEMM sides up to that)"}));
  EXPECT_EQ(csv_errors("b,m,n,k,dtype,tflops\n1000,4000000,4096,4096,bf16,700\n"),
            (std::vector<std::string>{"c.csv:2: columns 'b' x 'm': got 1000 x 4e+06 = 4e+09 (expected at most 1e+09: "
                                      "the batch is folded into m, which a profile holds up to that)"}));
  EXPECT_EQ(csv_errors("m,n,k,dtype,tflops,tflops\n4096,4096,4096,bf16,700,600\n"),
            (std::vector<std::string>{"c.csv:1: header column 'tflops': got it twice (columns 5 and 6; expected each "
                                      "column once)"}));
  // 2 x 4096^3 FLOP at 700 TFLOP/s is 0.196 ms, not 1 s.
  EXPECT_EQ(csv_errors("m,n,k,dtype,tflops,time_s\n4096,4096,4096,bf16,700,1\n"),
            (std::vector<std::string>{"c.csv:2: column 'tflops': got 700, a time of 0.000196341 s (expected 1 s "
                                      "within 1%, as column 'time_s' 1 gives; wrong units? keep one of them)"}));
  InputNotes notes;
  models::MeasurementSet m =
      read_measurement_csv("m,n,k,dtype,tflops,time_s\n4096,4096,4096,bf16,700,0.000196\n", "c.csv", "", notes);
  ASSERT_EQ(m.gemm.size(), 1u);
  EXPECT_EQ(m.gemm[0].time_s, 0.000196);  // time_s is the measurement; tflops agrees within 1%
  m = read_measurement_csv("\"m\",\"n\",\"k\",\"dtype\",\"tflops\"\n\"4096\",\"4096\",\"4096\",\"bf16\",\"700\"\n",
                           "c.csv", "", notes);
  ASSERT_EQ(m.gemm.size(), 1u);
  EXPECT_NEAR(m.gemm[0].time_s, 2 * 4096.0 * 4096 * 4096 / 700e12, 1e-15);
  m = read_measurement_csv("device_key,m,n,k,dtype,tflops\n\"sm_90, \"\"x\"\"\",8,8,8,bf16,1\n", "c.csv", "", notes);
  ASSERT_EQ(m.gemm.size(), 1u);
  EXPECT_EQ(m.gemm[0].device, "sm_90, \"x\"");
}

// Rows no measurement can be: the same point twice in one file (a CSV row is one measurement; the
// format has no rule for averaging rows, so a repeat would weigh twice), a fractional GEMM side or
// batch, a collective size that is not whole elements of its dtype. Each used to be read.
TEST(FitInputs, CsvRepeatsFractionsAndPartElementsAreRefused) {
  const std::string repeat_tail =
      " once per file: a row is one measurement, not a sample to be averaged, and a repeat would weigh twice in the "
      "fit; keep one row, e.g. the median of the repeats)";
  EXPECT_EQ(csv_errors("op,size_bytes,time_us,num_ranks\nall_reduce,1048576,25.5,8\nall_gather,1048576,20,8\n"
                       "allreduce,1048576,26.0,8\n"),
            (std::vector<std::string>{"c.csv:4: columns 'op', 'num_ranks', 'size_bytes': got all_reduce of 1048576 B "
                                      "on 8 ranks again after line 2 (expected each (op, num_ranks, size_bytes)" +
                                      repeat_tail}));
  EXPECT_EQ(csv_errors("op,size_bytes,time_us\nall_reduce,1048576,25.5\nall_reduce,1048576,26\n"),
            (std::vector<std::string>{"c.csv:3: columns 'op', 'size_bytes': got all_reduce of 1048576 B again after "
                                      "line 2 (expected each (op, size_bytes)" +
                                      repeat_tail}));
  EXPECT_EQ(csv_errors("m,n,k,dtype,tflops\n4096,4096,4096,bf16,700\n4096,4096,4096,bf16xbf16->bf16,690\n"),
            (std::vector<std::string>{"c.csv:3: columns 'dtype', 'm', 'n', 'k': got bf16xbf16->bf16 4096 x 4096 x "
                                      "4096 again after line 2 (expected each (dtype, m, n, k)" +
                                      repeat_tail}));
  EXPECT_EQ(csv_errors("device_key,b,m,n,k,dtype,tflops\nsm_90,2,512,512,512,fp16,100\nsm_90,2,512,512,512,fp16,99\n"),
            (std::vector<std::string>{"c.csv:3: columns 'dtype', 'm', 'n', 'k', 'b': got fp16 512 x 512 x 512 b 2 on "
                                      "sm_90 again after line 2 (expected each (dtype, m, n, k, b) per device" +
                                      repeat_tail}));
  // Fractional GEMM sides and batches.
  const std::string whole =
      " (expected a whole number from 1 to 1e+09: a GEMM side counts elements, b counts matrices)";
  EXPECT_EQ(
      csv_errors("b,m,n,k,dtype,tflops\n1,1024.5,1024,1024,bf16,100\n1.5,1024,1024,1024,bf16,100\n"),
      (std::vector<std::string>{"c.csv:2: column 'm': got 1024.5" + whole, "c.csv:3: column 'b': got 1.5" + whole}));
  // Collective sizes of whole elements of the dtype (float without one); a known dtype and op.
  EXPECT_EQ(csv_errors("op,size_bytes,time_us,dtype\nall_reduce,1022,10,float\nall_reduce,1022,10,half\n"
                       "all_reduce,2048,10,floatx\nall_reduce,4096,10,bfloat16\nall_reduce,8192,10,f8e4m3\n"),
            (std::vector<std::string>{
                "c.csv:2: column 'size_bytes': got 1022 (expected a multiple of 4 B, the size of one float: nccl-tests "
                "sizes are whole elements)",
                "c.csv:4: column 'dtype': unknown data type 'floatx' (expected one of: int8, uint8, int32, uint32, "
                "int64, uint64, half, float, double, bfloat16, f8e4m3, f8e5m2)"}));
  EXPECT_EQ(csv_errors("op,size_bytes,time_us\nall_reduce,1024.5,10\nallreduse,1024,10\nall_gather,1022,10\n"),
            (std::vector<std::string>{"c.csv:2: column 'size_bytes': got 1024.5 (expected a whole number of bytes "
                                      "from 1 to 9007199254740992 = 2^53, the largest size the model holds exactly)",
                                      "c.csv:3: column 'op': unknown nccl-tests operation 'allreduse' (expected one "
                                      "of: all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, "
                                      "sendrecv)",
                                      "c.csv:4: column 'size_bytes': got 1022 (expected a multiple of 4 B, the size "
                                      "of one float (no dtype column: the default): nccl-tests sizes are whole "
                                      "elements)"}));
  // What is one point each: the same size on another rank count or op, the same shape in another
  // dtype, batch or device (rows of the other device skipped).
  InputNotes notes;
  EXPECT_EQ(read_measurement_csv("op,size_bytes,time_us,num_ranks,dtype\nall_reduce,1048576,25.5,8,float\n"
                                 "all_reduce,1048576,40,16,float\nall_gather,1048576,20,8,half\n",
                                 "c.csv", "", notes)
                .collectives.size(),
            3u);
  EXPECT_EQ(read_measurement_csv("device_key,b,m,n,k,dtype,tflops\nsm_90,1,512,512,512,fp16,100\n"
                                 "sm_90,2,512,512,512,fp16,100\nsm_90,1,512,512,512,bf16,100\n"
                                 "sm_100,1,512,512,512,fp16,100\n",
                                 "c.csv", "sm_90", notes)
                .gemm.size(),
            3u);
}

// The note of a disturbed row prints its ratio in 3 digits: a time of 1e308 printed 131 digits.
TEST(FitInputs, OpFromOutsideMustMatchTheLogsBusFactor) {
  // A fresh user's all_reduce log (busbw = 2(n-1)/n x algbw, no op named) fitted with --op
  // all_gather gave "0.0 % error" and a profile that made all_reduce 1.66x slow.
  NcclTestsLog log;
  log.runs.push_back({});
  log.runs[0].num_ranks = 8;
  NcclTestsRow row;
  row.line = 31;
  row.size_bytes = 1e9;
  row.out_of_place = {true, 5000, 200, 350, "0"};  // 350 / 200 = 1.75 = 2 x 7 / 8
  log.runs[0].rows.push_back(row);
  InputNotes notes;
  // The refusal of fitting the log as `op` ("" when it is taken).
  const auto refusal = [&](const std::string& op) -> std::string {
    try {
      (void)samples_from_nccl_log(log, "l.txt", op, notes, "--op");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(samples_from_nccl_log(log, "l.txt", "all_reduce", notes).collectives.size(), 1u);
  EXPECT_EQ(refusal("all_gather"),
            "l.txt:31: busbw / algbw is 1.75, the factor of all_reduce for 8 ranks, not --op all_gather's 0.875 "
            "(expected a log of all_gather: nccl-tests prints busbw = algbw x the operation's factor; give --op "
            "all_reduce)");
  // Without a rank count (a pasted table, no "#  Rank" lines) the ratio must be one the op has on
  // some rank count: all_reduce 1..2, all_gather / reduce_scatter / alltoall 0.5..1, broadcast 1
  // (a second fresh user fitted such an all_gather table as all_reduce with exit 0).
  log.runs[0].num_ranks = 0;
  EXPECT_EQ(refusal("all_reduce"), "");
  EXPECT_EQ(refusal("all_gather"),
            "l.txt:31: busbw / algbw is 1.75, a factor --op all_gather has on no rank count (expected from 0.5 to 1 "
            "for all_gather: nccl-tests prints busbw = algbw x the operation's factor; the log names no ranks (no "
            "\"#  Rank\" lines), so a log of another operation?)");
  EXPECT_NE(refusal("broadcast"), "");
  log.runs[0].rows[0].out_of_place = {true, 5000, 200, 175, "0"};  // 0.875: all_gather on 8 ranks
  EXPECT_EQ(refusal("all_gather"), "");
  EXPECT_EQ(refusal("alltoall"), "");
  EXPECT_NE(refusal("all_reduce"), "");
  log.runs[0].rows[0].out_of_place = {true, 5000, 200, 200, "0"};  // 1: all_gather as nccl-tests of 2019 printed it
  EXPECT_EQ(refusal("all_gather"), "");
  // all_gather and reduce_scatter share the factor; the redop column tells them apart (none for
  // all_gather, alltoall, broadcast; the reduction for the others, as logs r02 / r03 print).
  log.runs[0].rows[0].out_of_place = {true, 5000, 200, 175, "0"};
  log.runs[0].rows[0].redop = "none";
  EXPECT_EQ(refusal("all_gather"), "");
  EXPECT_EQ(refusal("reduce_scatter"),
            "l.txt:31: redop is none, which --op reduce_scatter does not print (expected a reduction such as sum for "
            "reduce_scatter: nccl-tests prints none for all_gather, alltoall and broadcast, and the reduction for "
            "all_reduce, reduce_scatter and reduce (sum for sendrecv); a log of all_gather, alltoall or broadcast?)");
  log.runs[0].rows[0].redop = "sum";
  EXPECT_EQ(refusal("reduce_scatter"), "");
  EXPECT_EQ(refusal("all_gather"),
            "l.txt:31: redop is sum, a reduction, which --op all_gather does not print (expected none for all_gather: "
            "nccl-tests prints none for all_gather, alltoall and broadcast, and the reduction for all_reduce, "
            "reduce_scatter and reduce (sum for sendrecv); a log of all_reduce, reduce_scatter, reduce or sendrecv?)");
  log.runs[0].num_ranks = 8;  // with the rank count as well
  EXPECT_NE(refusal("alltoall"), "");
}

TEST(FitInputs, DisturbedRowNoteIsBounded) {
  NcclTestsLog log;
  log.runs.push_back({});
  log.runs[0].op = "all_reduce";
  NcclTestsRow row;
  row.line = 18;
  row.size_bytes = 1048576;
  row.out_of_place = {true, 1e308, 0, 0, "0"};
  row.in_place = {true, 82.98, 12.64, 23.69, "0"};
  log.runs[0].rows.push_back(row);
  InputNotes notes;
  (void)samples_from_nccl_log(log, "l.txt", "", notes);
  ASSERT_FALSE(notes.notes.empty());
  EXPECT_EQ(notes.notes[0],
            "l.txt:18: out-of-place 1e+308 us is 1.21e+306x the in-place 82.98 us: a disturbed row, the in-place time "
            "is taken");
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
