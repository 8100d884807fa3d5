// nccl-tests log parser: every shared log parses (or is refused with its reason), the layouts and
// launcher prefixes seen in the wild, and line-numbered errors for broken input.

#include "calibrate/nccl_tests_log.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace traincast::calibrate {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(TRAINCAST_SHARED_DATA_DIR) / "nccl-tests";

std::vector<std::string> error_of(std::string_view text) {
  try {
    parse_nccl_tests_log(text, "in.txt");
  } catch (const NcclTestsLogError& e) {
    return e.errors();
  }
  return {"(no error)"};
}

const std::string kHeader =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
    "#wrong\n";

TEST(NcclTestsLog, EverySharedLogParsesOrIsRefusedWithAReason) {
  if (!fs::exists(kData)) GTEST_SKIP() << "no shared data at " << kData;
  // Expected: runs, rows per run, operation of the first run ("" = not named in the log).
  struct Expect {
    std::size_t runs;
    std::size_t rows;
    std::string op;
  };
  const std::map<std::string, Expect> expected = {
      {"n01_h100_2x8_gcp_a3mega_allreduce.txt", {1, 31, "all_reduce"}},
      {"n03_h100_4x8_vmware_vm_ib400_allreduce.txt", {1, 32, "all_reduce"}},
      {"n04a_h100_8x8_ib400_allreduce_default.txt", {1, 14, "all_reduce"}},
      {"n04b_h100_2x8_ib400_allreduce_default.txt", {1, 14, "all_reduce"}},
      {"n04e_h100_2x8_ib400_allreduce_ring_minctas24_qps2.txt", {1, 14, "all_reduce"}},
      {"n05_h200_2x1_gcp_a3ultra_rdma_allgather.txt", {1, 24, "all_gather"}},
      {"n06_h200_2x1_gke_1gpu1nic_rdma_allreduce.txt", {1, 24, "all_reduce"}},
      {"n07_b200_2x8_gcp_a4_rdma_allgather.txt", {1, 24, "all_gather"}},
      {"n08_b200_2x1_gcp_a4_rdma_allgather_8B_1G.txt", {1, 28, "all_gather"}},
      {"n09_a100_1x8_nvlink_sendrecv.txt", {1, 4, "sendrecv"}},
      {"n10_rtx4090_1x6_pcie_p2p_tinybox_allreduce.txt", {1, 1, "all_reduce"}},
      {"n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt", {1, 28, "all_reduce"}},
      {"n11b_rtx2080ti_1x2_pcie3_nop2p_allgather.txt", {1, 28, "all_gather"}},
      {"n11c_rtx2080ti_1x2_pcie3_nop2p_broadcast.txt", {1, 28, "broadcast"}},
      {"n11d_rtx2080ti_1x2_pcie3_nop2p_reduce.txt", {1, 28, "reduce"}},
      {"n11e_rtx2080ti_1x2_pcie3_nop2p_alltoall.txt", {1, 28, "alltoall"}},
      {"n12a_a100_40gb_1x8_oci_bmgpu48_allreduce.txt", {1, 1, "all_reduce"}},
      {"n12b_a100_40gb_2x8_oci_bmgpu48_roce_allreduce.txt", {1, 1, "all_reduce"}},
      {"n14_h100pcie_1x2_nvlinkbridge_allreduce_partial.txt", {1, 3, "all_reduce"}},
      {"n15_h100_2x1_4nic_tree_allreduce_partial.txt", {1, 5, "all_reduce"}},
      {"n16_h20_2x8_ibndr_nvlstree_allreduce_smallmsg_partial.txt", {1, 8, "all_reduce"}},
      {"n18_h100_16nodes_64gpu_nrel_kestrel_slingshot_allreduce.txt", {1, 30, "all_reduce"}},
      {"r01_h100_1x8_allreduce.log", {1, 31, "all_reduce"}},
      {"r02_h100_1x8_5ops.log", {5, 10, "all_reduce"}},
      {"r03_h100_10x8_5ops.log", {5, 10, "all_reduce"}},
      {"r04_h100_1x8_allreduce.log", {1, 6, ""}},
      {"r05a_h100_2x8_allreduce.log", {1, 11, ""}},
      {"r05b_h100_2x8_allreduce_ring_partial.log", {1, 11, ""}},
      {"r06_a100_2x8_allreduce.log", {1, 31, ""}},
      {"r07_a100_2x8_allreduce.log", {1, 30, ""}},
      {"r08_t4_2x1_allreduce.log", {1, 31, ""}},
      {"r09a_l40s_2x1_allreduce.log", {1, 31, "all_reduce"}},
      {"r09b_l40s_2x2_allreduce.log", {1, 31, "all_reduce"}},
      {"r10_h200_2x8_allreduce.log", {1, 32, "all_reduce"}},
      {"r11_v100_1x12_5ops.log", {5, 31, "all_gather"}},
      {"r12_rtx4090_1x8_allreduce.log", {1, 25, "all_reduce"}},
      {"r13_v100_2x8_allreduce_partial.log", {1, 9, ""}},
      {"r14_a100_2x8_allreduce_partial.log", {1, 9, ""}},
  };
  const std::map<std::string, std::string> refused = {
      {"r15_h100_2x8_allreduce_initfail.log",
       "no nccl-tests data rows (expected rows after a \"#  size  count  type ...\" column header); the run failed "
       "at line 103: \"host2: Test NCCL failure common.cu:1057 'internal error / '\""}};
  int files = 0;
  for (const fs::path& dir : {kData, kData / "raw"}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (entry.path().extension() != ".txt" && entry.path().extension() != ".log") continue;
      ++files;
      SCOPED_TRACE(name);
      if (const auto it = refused.find(name); it != refused.end()) {
        try {
          read_nccl_tests_log(entry.path().string());
          ADD_FAILURE() << "parsed, expected refusal";
        } catch (const NcclTestsLogError& e) {
          ASSERT_EQ(e.errors().size(), 1u);
          EXPECT_EQ(e.errors()[0], entry.path().string() + ": " + it->second);
        }
        continue;
      }
      const auto it = expected.find(name);
      ASSERT_NE(it, expected.end()) << "new shared log: add its expectation";
      const NcclTestsLog log = read_nccl_tests_log(entry.path().string());
      // No shared log reads as missing a row (the note of MissingRowIsNotedAndADamagedRowRefused).
      for (const std::string& note : log.notes) EXPECT_EQ(note.find("missing between"), std::string::npos) << note;
      ASSERT_EQ(log.runs.size(), it->second.runs);
      EXPECT_EQ(log.runs[0].rows.size(), it->second.rows);
      EXPECT_EQ(log.runs[0].op, it->second.op);
      for (const NcclTestsRun& run : log.runs) {
        for (const NcclTestsRow& row : run.rows) {
          ASSERT_TRUE(row.out_of_place.present);
          // algbw = size / time as printed (2 decimals; times rounded to 3-4 digits). The 2019
          // nccl-tests of r11 computed algbw on other byte counts for some ops: not checked there.
          if (name != "r11_v100_1x12_5ops.log" && row.out_of_place.time_us > 1 && row.out_of_place.algbw_gbps > 1) {
            EXPECT_NEAR(row.size_bytes / row.out_of_place.time_us / 1e3, row.out_of_place.algbw_gbps,
                        0.01 * row.out_of_place.algbw_gbps + 0.011)
                << "line " << row.line;
          }
        }
      }
    }
  }
  EXPECT_EQ(files, static_cast<int>(expected.size() + refused.size()));
}

TEST(NcclTestsLog, DisturbedRowTakesItsFasterTime) {
  NcclTestsRow r;
  r.out_of_place = {true, 1272.4, 0, 0, "0"};  // n04a 8 MiB: 3.96x its in-place time
  r.in_place = {true, 321.4, 0, 0, "0"};
  EXPECT_TRUE(row_disturbed(r));
  EXPECT_EQ(row_time_us(r), 321.4);
  r.out_of_place.time_us = 1.39 * 321.4;  // within 1.4x: the out-of-place time stands
  EXPECT_FALSE(row_disturbed(r));
  EXPECT_EQ(row_time_us(r), 1.39 * 321.4);
  r.out_of_place.time_us = 113.8;  // n11c 1 MiB: in-place 2.5x slower; out-of-place is the faster
  r.in_place.time_us = 288.1;
  EXPECT_FALSE(row_disturbed(r));
  EXPECT_EQ(row_time_us(r), 113.8);
  r.out_of_place.time_us = 1272.4;  // in-place half cut off: nothing to compare with
  r.in_place = {};
  EXPECT_FALSE(row_disturbed(r));
  EXPECT_EQ(row_time_us(r), 1272.4);
}

TEST(NcclTestsLog, DisturbedRowsOfTheSharedLogs) {
  if (!fs::exists(kData)) GTEST_SKIP();
  // Listed by reading the logs (out-of-place over 1.4x in-place): n03 8 B 83.42 vs 34.75 us,
  // 256 B 107.5 vs 35.82, 512 B 56.35 vs 36.72, 2 MiB 191.3 vs 132.2; n04a 8 MiB 1272.4 vs 321.4;
  // n18 4 KiB 101.5 vs 72.0, 32 KiB 174.0 vs 102.1, 128 KiB 482.6 vs 235.5, 512 KiB 835.3 vs 462.2.
  const std::map<std::string, std::vector<double>> expected = {
      {"n03_h100_4x8_vmware_vm_ib400_allreduce.txt", {8, 256, 512, 2097152}},
      {"n04a_h100_8x8_ib400_allreduce_default.txt", {8388608}},
      {"n18_h100_16nodes_64gpu_nrel_kestrel_slingshot_allreduce.txt", {4096, 32768, 131072, 524288}}};
  std::map<std::string, std::vector<double>> found;
  for (const auto& entry : fs::directory_iterator(kData)) {
    if (entry.path().extension() != ".txt") continue;
    for (const NcclTestsRun& run : read_nccl_tests_log(entry.path().string()).runs) {
      for (const NcclTestsRow& row : run.rows) {
        if (row_disturbed(row)) found[entry.path().filename().string()].push_back(row.size_bytes);
      }
    }
  }
  EXPECT_EQ(found, expected);
}

TEST(NcclTestsLog, LayoutsAndPrefixes) {
  if (!fs::exists(kData)) GTEST_SKIP();
  // srun -l prefixes, N/A in #wrong (r05a).
  NcclTestsLog log = read_nccl_tests_log((kData / "raw/r05a_h100_2x8_allreduce.log").string());
  const NcclTestsRow& r = log.runs[0].rows[0];
  EXPECT_EQ(r.size_bytes, 8388608.0);
  EXPECT_EQ(r.count, 2097152);
  EXPECT_EQ(r.type, "float");
  EXPECT_EQ(r.redop, "sum");
  EXPECT_EQ(r.root, -1);
  EXPECT_EQ(r.out_of_place.time_us, 215.3);
  EXPECT_EQ(r.out_of_place.busbw_gbps, 73.04);
  EXPECT_EQ(r.out_of_place.wrong, "N/A");
  EXPECT_EQ(r.in_place.busbw_gbps, 87.38);
  EXPECT_EQ(log.runs[0].num_ranks, 16);
  EXPECT_EQ(log.runs[0].num_hosts, 2);
  // Open MPI [1,0]<stdout>: prefixes, old layout without root, `error` column (r07).
  log = read_nccl_tests_log((kData / "raw/r07_a100_2x8_allreduce.log").string());
  EXPECT_EQ(log.runs[0].columns.size(), 12u);
  EXPECT_EQ(log.runs[0].rows.back().size_bytes, 4294967296.0);
  EXPECT_EQ(log.runs[0].rows.back().root, -1);
  EXPECT_EQ(log.runs[0].devices.size(), 16u);
  // Old layouts per op in one paste (r11): all_gather without redop/root, broadcast with root only.
  log = read_nccl_tests_log((kData / "raw/r11_v100_1x12_5ops.log").string());
  EXPECT_EQ(log.runs[0].columns.size(), 11u);
  EXPECT_EQ(log.runs[0].check, "FAILED");
  EXPECT_EQ(log.runs[2].op, "broadcast");
  EXPECT_EQ(log.runs[2].rows[5].redop, "");
  EXPECT_EQ(log.runs[2].rows[5].root, 0);
  EXPECT_EQ(log.runs[3].op, "reduce");
  EXPECT_EQ(log.runs[3].rows[5].redop, "sum");
  ASSERT_TRUE(log.runs[1].avg_busbw_gbps.has_value());
  // Truncated in-place half (n14): out-of-place kept, noted.
  log = read_nccl_tests_log((kData / "n14_h100pcie_1x2_nvlinkbridge_allreduce_partial.txt").string());
  EXPECT_TRUE(log.runs[0].rows[2].out_of_place.present);
  EXPECT_FALSE(log.runs[0].rows[2].in_place.present);
  ASSERT_EQ(log.notes.size(), 1u);
  EXPECT_NE(log.notes[0].find(":14: last data row cut short in the in-place columns (11 of 13 fields)"),
            std::string::npos);
}

TEST(NcclTestsLog, WindowsLineEndsAndNoise) {
  const std::string text = "# nThread 1 nGpus 2\r\n#\r\n" + kHeader +
                           "host1:1:1 [0] NCCL INFO Channel 00/02 : 0 1\r\n"
                           "         8             2     float     sum      -1    12.25    0.00    0.00      0    "
                           "12.00    0.00    0.00      0\r\n";
  const NcclTestsLog log = parse_nccl_tests_log(text, "in.txt");
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_EQ(log.runs[0].rows[0].line, 5);
  EXPECT_EQ(log.runs[0].rows[0].in_place.wrong, "0");
}

TEST(NcclTestsLog, MalformedLinesAreNamed) {
  const std::string good =
      "           8             2     float     sum      -1    12.25    0.00    0.00      0    12.00    0.00    0.00 "
      "     0\n";
  const std::string later =  // another size: a size measured twice in one table is refused
      "          64            16     float     sum      -1    12.50    0.01    0.01      0    12.40    0.01    0.01 "
      "     0\n";
  // A short row in the middle of a table, a non-number, a bad size.
  const std::string text = kHeader + good + "          16             4     float     sum      -1    12.25    0.00\n" +
                           "          32             8     float     sum      -1    1x.25    0.00    0.00      0    "
                           "12.00    0.00    0.00      0\n" +
                           later;
  EXPECT_EQ(error_of(text),
            (std::vector<std::string>{
                "in.txt:3: data row has 7 fields (expected 13: size count type redop root time algbw busbw #wrong "
                "time algbw busbw #wrong)",
                "in.txt:4: out-of-place time \"1x.25\" is not a number >= 0"}));
  EXPECT_EQ(error_of(good + good),
            (std::vector<std::string>{"in.txt:1: data row before any column header (expected a \"#  size  count  "
                                      "type ...\" header line first)",
                                      "in.txt:2: data row before any column header (expected a \"#  size  count  "
                                      "type ...\" header line first)"}));
  EXPECT_EQ(error_of("# size count type flavour time algbw busbw #wrong\n"),
            (std::vector<std::string>{
                "in.txt:1: unknown column header \"size count type flavour time algbw busbw #wrong\" (expected size "
                "count type [redop] [root] time algbw busbw #wrong time algbw busbw #wrong)"}));
  EXPECT_EQ(error_of(""), (std::vector<std::string>{"in.txt: no nccl-tests data rows (expected rows after a \"#  size  "
                                                    "count  type ...\" column header)"}));
  EXPECT_EQ(error_of(kHeader), (std::vector<std::string>{"in.txt: no nccl-tests data rows (expected rows after a "
                                                         "\"#  size  count  type ...\" column header)"}));
}

// A row replaced by other text is skipped as noise: the size step it leaves is noted (a fit would
// otherwise lose a size without a word); a damaged row starting with two integers is refused.
TEST(NcclTestsLog, MissingRowIsNotedAndADamagedRowRefused) {
  const auto row = [](long long size) {
    return std::to_string(size) + " " + std::to_string(size / 4) +
           " float sum -1 1225.0 0.00 0.00 0 1200.0 0.00 0.00 0\n";
  };
  const std::string whole = kHeader + row(8) + row(16) + row(32) + row(64) + row(128);
  EXPECT_TRUE(parse_nccl_tests_log(whole, "in.txt").notes.empty());
  const std::string replaced = kHeader + row(8) + row(16) + "garbage line here\n" + row(64) + row(128);
  const NcclTestsLog log = parse_nccl_tests_log(replaced, "in.txt");
  EXPECT_EQ(log.runs[0].rows.size(), 4u);
  EXPECT_EQ(log.notes, (std::vector<std::string>{"in.txt:5: size 64 follows 16 on line 3, 2 steps of the table's "
                                                 "usual one: 1 row(s) missing between them (deleted, or a damaged row "
                                                 "skipped as noise)"}));
  // A size with a character glued after it, inside a table: refused at its line (was skipped).
  EXPECT_EQ(error_of(kHeader + row(8) + "16x 4 float sum -1 1225.0 0.00 0.00 0 1200.0 0.00 0.00 0\n" + row(32)),
            (std::vector<std::string>{"in.txt:3: size and count must be integers (got \"16x\" and \"4\")"}));
  EXPECT_EQ(
      error_of(kHeader + row(8) + row(16) + "64 9 9   16 float sum -1 12.25 0.00 0.00 0\n" + row(64)),
      (std::vector<std::string>{"in.txt:4: line starts with two integers as a data row does, but its third field "
                                "\"9\" is not an nccl-tests data type (expected a row: size count type redop "
                                "root time algbw busbw #wrong time algbw busbw #wrong; mend or delete the line)"}));
}

// A row with text pasted in front of it inside a table is refused (skipping it as noise dropped a
// size from the fit); NCCL INFO lines between rows stay noise, and so does such a line outside a table.
TEST(NcclTestsLog, RowWithTextInFrontIsRefused) {
  const std::string good =
      "           8             2     float     sum      -1    12.25    0.00    0.00      0    12.00    0.00    0.00 "
      "     0\n";
  const std::string later =  // another size: a size measured twice in one table is refused
      "          64            16     float     sum      -1    12.50    0.01    0.01      0    12.40    0.01    0.01 "
      "     0\n";
  const std::string tail = "16 4 float sum -1 12.25 0.00 0.00 0 12.00 0.00 0.00 0\n";
  const std::string info = "host1:1:1 [0] NCCL INFO Channel 00/02 : 0 1 2 3 4 5 6 7 8 9 10 11 12\n";
  EXPECT_EQ(error_of(kHeader + good + "host3: " + tail + info + later),
            (std::vector<std::string>{"in.txt:3: data row with leading unexpected text \"host3:\" (1 field(s) "
                                      "before its size; expected a row to start with its size: size count type "
                                      "redop root time algbw busbw #wrong time algbw busbw #wrong; delete the text "
                                      "in front of the row, or the line)"}));
  EXPECT_NE(error_of(kHeader + good + "xy" + tail)[0].find(
                "in.txt:3: data row with leading unexpected text \"xy\" (glued to its size;"),
            std::string::npos);
  // Before any header: not inside a table, noise as before.
  const NcclTestsLog log = parse_nccl_tests_log("host3: " + tail + kHeader + info + good, "in.txt");
  ASSERT_EQ(log.runs.size(), 1u);
  EXPECT_EQ(log.runs[0].rows.size(), 1u);
}

TEST(NcclTestsLog, TruncatedTailInsideTheOutOfPlaceColumnsIsRefused) {
  // The paste stops inside the last row's out-of-place half (new-user test: the row was dropped
  // with a note nobody saw, and the fit lost its largest size): refused, naming the line and the
  // 13 fields the header (size count type redop root + 2 x 4) implies.
  const std::string good =
      "           8             2     float     sum      -1    12.25    0.00    0.00      0    12.00    0.00    0.00 "
      "     0\n";
  const std::string expected_columns =
      "(expected 13: size count type redop root time algbw busbw #wrong time algbw busbw #wrong); the log ends "
      "inside its out-of-place columns: delete the partial row (or paste the rest of it)";
  EXPECT_EQ(error_of(kHeader + good + "          16             4     float     sum   "),
            (std::vector<std::string>{"in.txt:3: data row cut short: 4 of 13 fields " + expected_columns}));
  // The example of the report: cut after the out-of-place algbw (busbw may be cut inside its digits).
  EXPECT_EQ(error_of(kHeader + good + "  33554432  8388608  float  sum  -1  812.3  41.3\n\n"),
            (std::vector<std::string>{"in.txt:3: data row cut short: 7 of 13 fields " + expected_columns}));
  // Cut inside the in-place half: the four out-of-place fields are whole (each is followed by more
  // text), so they are kept and the cut is noted.
  const NcclTestsLog log = parse_nccl_tests_log(
      kHeader + good + "          16             4     float     sum      -1    12.25    0.00    0.00      0    12.0",
      "in.txt");
  ASSERT_EQ(log.runs[0].rows.size(), 2u);
  EXPECT_FALSE(log.runs[0].rows[1].in_place.present);
  ASSERT_EQ(log.notes.size(), 1u);
  EXPECT_EQ(log.notes[0],
            "in.txt:3: last data row cut short in the in-place columns (10 of 13 fields); out-of-place kept");
}

// Rows no nccl-tests run prints (fresh-user findings): a type nccl-tests has no name for, a size
// that is not count x word (x ranks), sizes falling within a table, a time of 0.
TEST(NcclTestsLog, RowsNoRunPrintsAreRefused) {
  const auto row = [](const std::string& size, const std::string& count, const std::string& type,
                      const std::string& time) {
    char algbw[32];  // as nccl-tests prints it: size / time
    std::snprintf(algbw, sizeof algbw, "%.2f", std::stod(time) > 0 ? std::stod(size) / std::stod(time) / 1e3 : 0.0);
    const std::string bw = std::string(" ") + algbw + " " + algbw + " 0 ";
    return size + " " + count + " " + type + " sum -1 " + time + bw + time + bw + "\n";
  };
  const std::string ok = row("1024", "256", "float", "12.25");
  EXPECT_EQ(error_of(kHeader + ok + row("2048", "512", "floatx", "13.00")),
            (std::vector<std::string>{"in.txt:3: type \"floatx\" is not an nccl-tests data type (expected int8, "
                                      "uint8, int32, uint32, int64, uint64, half, float, double, bfloat16, f8e4m3 "
                                      "or f8e5m2)"}));
  EXPECT_EQ(error_of(kHeader + ok + row("2048", "100", "float", "13.00")),
            (std::vector<std::string>{"in.txt:3: size 2048 does not match count 100 of float (4 bytes each): "
                                      "expected size = count x 4 or a multiple of it, as nccl-tests prints"}));
  EXPECT_EQ(error_of(kHeader + ok + row("2048", "512", "float", "13.00") + row("1024", "256", "float", "12.50")),
            (std::vector<std::string>{"in.txt:4: size 1024 float sum after size 2048 on line 3 (expected sizes in "
                                      "rising order within a table, as nccl-tests prints them; a second run pasted "
                                      "under the same header? split the log at a column header)"}));
  EXPECT_EQ(error_of(kHeader + ok + row("2048", "512", "float", "0.00")),
            (std::vector<std::string>{"in.txt:3: time 0 for 2048 bytes (expected a measured time > 0: nccl-tests "
                                      "prints microseconds to 0.01 and no transfer of data takes less)"}));
  // What runs do print: each type over all its sizes, then the next from the first size again
  // (-d all), fp8 names, size-0 rows of time 0 (repeated: rounded to whole elements), and a
  // second table, here of size = count x word x ranks (8 ranks, no operation named).
  std::string ranks;
  for (int r = 0; r < 8; ++r)
    ranks += "#  Rank  " + std::to_string(r) + " Group  0 Pid 1 on host1 device  0 [0x1b] H100\n";
  const NcclTestsLog log = parse_nccl_tests_log(
      ranks + kHeader + ok + row("8192", "2048", "float", "20.00") + row("1024", "512", "half", "12.00") +
          row("1024", "1024", "f8e4m3", "11.00") + row("0", "0", "int8", "0.00") + row("0", "0", "int8", "0.00") +
          kHeader + row("8192", "256", "float", "20.00"),
      "in.txt");
  ASSERT_EQ(log.runs.size(), 2u);
  EXPECT_EQ(log.runs[0].num_ranks, 8);
  EXPECT_EQ(log.runs[0].rows.size(), 6u);
  EXPECT_EQ(error_of(ranks + kHeader + row("4096", "256", "float", "20.00")),
            (std::vector<std::string>{"in.txt:10: size 4096 does not match count 256 of float (4 bytes each): "
                                      "expected size = count x 4 or count x 4 x 8 ranks"}));
}

// Fresh user 39: a row of another data type or reduction in the middle of a table, root 0 on an
// all_reduce row, and size = count x 4 x 2 ranks on an all_reduce row were all taken. nccl-tests
// runs each (type, redop, root) over all its sizes before the next, prints root -1 for operations
// without one (every shared log), and size = count x type size except for the per-rank counts of
// all_gather, reduce_scatter and alltoall (x ranks).
TEST(NcclTestsLog, RowsOfAnotherBlockRootOrSizeRuleAreRefused) {
  const auto row = [](const std::string& size, const std::string& count, const std::string& type,
                      const std::string& redop, const std::string& root) {
    char algbw[32];  // as nccl-tests prints it: size / 10 us
    std::snprintf(algbw, sizeof algbw, "%.2f", std::stod(size) / 10.0 / 1e3);
    const std::string half = std::string(" 10.00 ") + algbw + " " + algbw + " 0";
    return size + " " + count + " " + type + " " + redop + " " + root + half + half + "\n";
  };
  const std::string a = row("1024", "256", "float", "sum", "-1"), b = row("2048", "512", "float", "sum", "-1");
  EXPECT_EQ(error_of(kHeader + a + row("2048", "256", "double", "sum", "-1") + b),
            (std::vector<std::string>{"in.txt:3: type double after float on line 2 (expected float: nccl-tests runs "
                                      "each data type over all its sizes before the next, starting again from the "
                                      "table's first size, 1024 bytes (rounded down to whole elements), not at "
                                      "2048; a row from another table? delete it, or split the log at a column "
                                      "header)"}));
  EXPECT_EQ(error_of(kHeader + a + row("2048", "512", "float", "max", "-1")),
            (std::vector<std::string>{"in.txt:3: redop max after sum on line 2 (expected sum: nccl-tests runs each "
                                      "reduction over all its sizes before the next, starting again from the "
                                      "table's first size, 1024 bytes (rounded down to whole elements), not at "
                                      "2048; a row from another table? delete it, or split the log at a column "
                                      "header)"}));
  EXPECT_EQ(error_of(kHeader + a + row("1024", "128", "double", "sum", "-1") + b),
            (std::vector<std::string>{"in.txt:4: type float after double on line 3 (expected double: nccl-tests runs "
                                      "each data type over all its sizes before the next, and type float's sizes "
                                      "ended at line 2, so it does not come back; a row from another table? delete "
                                      "it, or split the log at a column header)"}));
  const std::string ar = "# all_reduce_perf -b 1K\n#  ranks: 2  nodes: 1\n" + kHeader;
  EXPECT_EQ(error_of(ar + row("1024", "256", "float", "sum", "0")),
            (std::vector<std::string>{"in.txt:4: root 0 for all_reduce, which has no root (expected -1: nccl-tests "
                                      "prints root -1 for all_reduce, all_gather, reduce_scatter, alltoall and "
                                      "sendrecv, and a rank only for broadcast, reduce, gather and scatter; a row of "
                                      "one of them?)"}));
  EXPECT_EQ(
      error_of("# broadcast_perf\n#  ranks: 2\n" + kHeader + row("1024", "256", "float", "none", "2")),
      (std::vector<std::string>{"in.txt:4: root 2 for broadcast (expected a rank 0 to 1: nccl-tests prints the "
                                "root rank of broadcast, reduce, gather and scatter, 0 unless -r names another)"}));
  EXPECT_EQ(error_of(kHeader + row("1024", "256", "float", "sum", "-2")),
            (std::vector<std::string>{"in.txt:2: root -2 (expected -1, or a rank 0 or above: nccl-tests prints -1 "
                                      "for an operation without a root and the root rank for broadcast, reduce, "
                                      "gather and scatter)"}));
  EXPECT_EQ(error_of(ar + row("2048", "256", "float", "sum", "-1")),
            (std::vector<std::string>{"in.txt:4: size 2048 does not match count 256 of float (4 bytes each): "
                                      "expected size = count x 4 = 1024 for all_reduce (nccl-tests prints size = "
                                      "count x type size for all_reduce, broadcast, reduce and sendrecv, and count x "
                                      "type size x ranks for all_gather, reduce_scatter and alltoall, whose count is "
                                      "per rank; a row from another table?)"}));
  EXPECT_EQ(error_of("# all_gather_perf\n#  ranks: 2\n" + kHeader + row("1024", "256", "float", "none", "-1")),
            (std::vector<std::string>{"in.txt:4: size 1024 does not match count 256 of float (4 bytes each): "
                                      "expected size = count x 4 x 2 ranks = 2048 for all_gather (nccl-tests prints "
                                      "size = count x type size for all_reduce, broadcast, reduce and sendrecv, and "
                                      "count x type size x ranks for all_gather, reduce_scatter and alltoall, whose "
                                      "count is per rank; a row from another table?)"}));
  // As printed: root -1 and size = count x 4 on all_reduce, x 2 ranks on all_gather, root 0 on
  // broadcast (n05, n11c).
  EXPECT_NO_THROW(parse_nccl_tests_log(ar + a + b, "in.txt"));
  EXPECT_NO_THROW(parse_nccl_tests_log(
      "# all_gather_perf\n#  ranks: 2\n" + kHeader + "2048 256 float none -1 10.00 0.20 0.10 0 10.00 0.20 0.10 0\n",
      "in.txt"));
  EXPECT_NO_THROW(parse_nccl_tests_log(
      "# broadcast_perf\n#  ranks: 2\n" + kHeader + row("1024", "256", "float", "none", "0"), "in.txt"));
}

// Rows whose numbers disagree the way no nccl-tests run prints them (fresh-user findings: a time
// edited to 1e308 or 200 us next to the 1 MiB row's algbw of n04b, an algbw of 99.99 GB/s at
// 93.25 us, #wrong 3, the same size twice): refused at their line, naming the column.
TEST(NcclTestsLog, RowsWhoseNumbersDisagreeAreRefused) {
  const std::string pre = "# all_reduce_perf -b 1M -e 8G\n#  ranks: 16  nodes: 2\n" + kHeader;
  const std::string good =  // n04b's 1 MiB row
      "     1048576        262144     float     sum      -1    93.25   11.24   21.08      0    82.98   12.64   23.69 "
      "     0\n";
  const std::string next =
      "     2097152        524288     float     sum      -1    94.22   22.26   41.73      0    93.52   22.42   42.05 "
      "     0\n";
  const NcclTestsLog log = parse_nccl_tests_log(pre + good + next, "in.txt");
  ASSERT_EQ(log.runs[0].rows.size(), 2u);
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string r = good;
    r.replace(r.find(from), from.size(), to);
    return error_of(pre + r + next);
  };
  EXPECT_EQ(with("93.25   11.24   21.08", "93.25   99.99   99.99"),
            (std::vector<std::string>{
                "in.txt:4: out-of-place algbw: got 99.99 GB/s (expected 11.2448 = size 1048576 B / time 93.25 us, "
                "within 0.005 GB/s + 1%: nccl-tests prints algbw = size / time, so one of the two was changed; "
                "fix or delete the row)"}));
  EXPECT_EQ(with("93.25", "1e308")[0].rfind("in.txt:4: out-of-place algbw: got 11.24 GB/s (expected 1.04858e-305", 0),
            0u)
      << with("93.25", "1e308")[0];
  EXPECT_EQ(with("93.25", "200.0")[0].rfind("in.txt:4: out-of-place algbw: got 11.24 GB/s (expected 5.24288", 0), 0u)
      << with("93.25", "200.0")[0];
  // The in-place half is checked too.
  EXPECT_EQ(with("82.98", "1e308")[0].rfind("in.txt:4: in-place algbw: got 12.64 GB/s (expected", 0), 0u)
      << with("82.98", "1e308")[0];
  // busbw = algbw x 2(n-1)/n for all_reduce on the log's 16 ranks.
  EXPECT_EQ(with("21.08", "30.00"),
            (std::vector<std::string>{
                "in.txt:4: out-of-place busbw: got 30 GB/s (expected 21.075 = algbw 11.24 x 1.875, the all_reduce "
                "factor for 16 ranks, within 0.014375 GB/s + 1%: nccl-tests prints busbw = algbw x factor; a row "
                "from another operation or rank count?)"}));
  // #wrong > 0: nccl-tests' data check found corrupted results. N/A (-c 0) and 0 are fine.
  EXPECT_EQ(with("23.69      0", "23.69      3"),
            (std::vector<std::string>{
                "in.txt:4: in-place #wrong: got 3 (expected 0 or N/A: nccl-tests' data check found that many wrong "
                "elements in the result, so the time is of a broken run; fix the system and rerun, or delete the "
                "row)"}));
  EXPECT_EQ(with("21.08      0", "21.08    N/A"), (std::vector<std::string>{"(no error)"}));
  // The same size > 0 twice in one table (no shared log has one; only size 0 repeats).
  EXPECT_EQ(error_of(pre + good + good),
            (std::vector<std::string>{"in.txt:5: size: got 1048576 float sum again after line 4 (expected each size "
                                      "once within a table, as nccl-tests prints them: a row measured again or "
                                      "pasted twice; delete one)"}));
  // A rate beside a time of 0: nccl-tests prints time 0.00 only for size 0, whose algbw = 0 / time
  // and busbw are 0.00 (these rows used to be accepted and skipped).
  const std::string rate_at_time_0 =
      " GB/s at time 0 (expected 0.00: nccl-tests prints algbw = size / time and busbw = algbw x factor, so a rate "
      "> 0 needs a measured time > 0; one of them was changed; fix or delete the row)";
  EXPECT_EQ(with("93.25   11.24   21.08", "0.00   11.24   21.08"),
            (std::vector<std::string>{"in.txt:4: out-of-place algbw: got 11.24" + rate_at_time_0}));
  EXPECT_EQ(with("82.98   12.64   23.69", "0.00   12.64   23.69"),
            (std::vector<std::string>{"in.txt:4: in-place algbw: got 12.64" + rate_at_time_0}));
  EXPECT_EQ(with("93.25   11.24   21.08", "0.00    0.00   21.08"),
            (std::vector<std::string>{"in.txt:4: out-of-place busbw: got 21.08" + rate_at_time_0}));
  const std::string zero =
      "           0             0     float     sum      -1     0.00    0.00    0.00      0     0.00 "
      "   0.00    0.00      0\n";
  EXPECT_EQ(error_of(pre + zero + good), (std::vector<std::string>{"(no error)"}));  // as nccl-tests prints size 0
  std::string zero_rate = zero;
  zero_rate.replace(zero_rate.find("0.00    0.00"), 12, "0.00    5.00");
  EXPECT_EQ(error_of(pre + zero_rate + good),
            (std::vector<std::string>{"in.txt:4: out-of-place algbw: got 5" + rate_at_time_0}));
  // nccl-tests -C 1 prints the CPU time in a `cputime` column but computes algbw from the GPU
  // time: algbw is not checked against it there.
  std::string cpu = pre;
  cpu.replace(cpu.find("time"), 4, "cputime");
  std::string slow = good;
  slow.replace(slow.find("93.25"), 5, "200.0");
  EXPECT_EQ(parse_nccl_tests_log(cpu + slow, "in.txt").runs[0].rows.size(), 1u);
  EXPECT_EQ(parse_nccl_tests_log(cpu + zero_rate + good, "in.txt").runs[0].rows.size(), 2u);
}

TEST(NcclTestsLog, UnreadableFile) {
  try {
    read_nccl_tests_log("/nonexistent/x.log");
    ADD_FAILURE();
  } catch (const NcclTestsLogError& e) {
    EXPECT_EQ(e.errors()[0], "/nonexistent/x.log: cannot read file (No such file or directory)");
  }
}

}  // namespace
}  // namespace traincast::calibrate
