// `traincast nccl-tests` as a user runs it: nccl-tests' column layout, CSV, GPU subsets, errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"
#include "tools/cli/commands.h"

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = TRAINCAST_SOURCE_DIR;
const std::string kDgxH100 = kSrc + "/scenarios/nccl/dgx_h100.textproto";

using test_support::Result;

Result run(std::vector<std::string> args) {
  args.insert(args.begin(), "nccl-tests");
  return test_support::run(args);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(NcclTestsCli, PrintsNcclTestsColumns) {
  const Result r = run({kDgxH100, "--op", "all_reduce", "-b", "8", "-e", "8G", "-f", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  // The two header lines are byte-identical to nccl-tests 2.13+ (e.g. the shared log n03).
  EXPECT_NE(r.out.find("\n#       size         count      type   redop    root     time   algbw   busbw #wrong     "
                       "time   algbw   busbw #wrong\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
                       "(us)  (GB/s)  (GB/s)       \n"),
            std::string::npos);
  // 31 rows, 8 B to 8 GiB, in nccl-tests' row format.
  const std::regex row(R"( {0,11}\d+ {2,}\d+     float     sum      -1 +[0-9.]{4,7} +[0-9.]+ +[0-9.]+ +N/A +[0-9.]+ )"
                       R"(+[0-9.]+ +[0-9.]+ +N/A)");
  int rows = 0;
  std::string last;
  for (const std::string& line : lines_of(r.out)) {
    if (line.empty() || line[0] == '#') continue;
    EXPECT_TRUE(std::regex_match(line, row)) << line;
    ++rows;
    last = line;
  }
  EXPECT_EQ(rows, 31);
  EXPECT_EQ(last.substr(0, 26), "  8589934592    2147483648");
  EXPECT_NE(r.out.find("# Avg bus bandwidth    : "), std::string::npos);
  EXPECT_NE(r.out.find("#  Rank  7 Group  0 Pid      0 on      node0 device  7 [sim] H100-SXM5-80GB"),
            std::string::npos);
}

TEST(NcclTestsCli, TimeColumnPrecisionFollowsNcclTests) {
  // Below 100 us two decimals, below 10 ms one, above none (nccl-tests common.cu).
  const Result r = run({kDgxH100, "-b", "8", "-e", "8", "--op", "broadcast"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(R"(\n           8             2     float    none       0 +\d+\.\d\d )")))
      << r.out;
  const Result big = run({kDgxH100, "-b", "8G", "-e", "8G"});
  EXPECT_TRUE(
      std::regex_search(big.out, std::regex(R"(\n  8589934592    2147483648     float     sum      -1 +\d{5,} )")))
      << big.out;
}

TEST(NcclTestsCli, GpuSubsetAndCsv) {
  const fs::path csv = fs::temp_directory_path() / ("traincast_nccl_tests_" + std::to_string(::getpid()) + ".csv");
  fs::remove(csv);
  const Result r =
      run({kDgxH100, "--op", "all_gather", "-b", "1M", "-e", "4M", "-f", "2", "--gpus", "0-3", "--csv", csv.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("all_gather on 4 of 8 GPUs"), std::string::npos);
  std::ifstream f(csv);
  std::string header, first;
  std::getline(f, header);
  std::getline(f, first);
  EXPECT_EQ(header,
            "size_bytes,count,type,redop,root,time_us,algbw_gb_per_s,busbw_gb_per_s,algorithm,protocol,channels");
  EXPECT_EQ(first.substr(0, 28), "1048576,65536,float,none,-1,");  // 1 MiB / 4 B / 4 ranks per rank
  // Never overwritten without --force.
  const Result again = run({kDgxH100, "-b", "1M", "-e", "1M", "--csv", csv.string()});
  EXPECT_EQ(again.status, 2);
  EXPECT_EQ(again.err, "traincast: " + csv.string() + ": file exists (pass --force to overwrite it)\n");
  fs::remove(csv);
}

TEST(NcclTestsCli, BadInput) {
  Result r = run({kDgxH100, "--op", "allreduse"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(
      r.err,
      "traincast: --op: got \"allreduse\", did you mean \"all_reduce\"? (expected one of all_reduce, all_gather, "
      "reduce_scatter, alltoall, broadcast, reduce, sendrecv: the names of nccl-tests' binaries without _perf)\n");
  r = run({kDgxH100, "-b", "8Q"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: -b: bad size '8Q' (expected a number with an optional K, M or G suffix, e.g. 8, 64K, 8G)\n");
  r = run({kDgxH100, "--gpus", "0,8"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(
      r.err,
      "traincast: --gpus: 0,8 names GPU 8 that the cluster does not have: it has 8 GPUs (expected GPU indices 0 to "
      "7)\n");
  r = run({});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: nccl-tests: no scenario given (usage: traincast nccl-tests SCENARIO)\n");
  r = run({kSrc + "/scenarios/nccl/no_such_file.textproto"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no_such_file.textproto: cannot read file"), std::string::npos);
}

TEST(NcclTestsCli, TrainingScenariosWorkToo) {
  // A full training scenario has a cluster: nccl-tests uses it and ignores the workload.
  const Result r = run({kSrc + "/scenarios/llama3_70b_dgx_h100_8nodes.textproto", "-b", "1G", "-e", "1G"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("all_reduce on 64 of 64 GPUs"), std::string::npos);
}

Result run_validate(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  std::vector<std::string> argv_s = {"traincast", "validate"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  const int status = main_dispatch(static_cast<int>(argv.size()), argv.data(), out, err);
  return {status, out.str(), err.str()};
}

TEST(NcclTestsCli, ValidateReadsNcclTestsLogs) {
  const fs::path data = fs::path(TRAINCAST_SHARED_DATA_DIR) / "nccl-tests";
  if (!fs::exists(data)) GTEST_SKIP() << "no shared data";
  const traincast::test_support::TempDir tmp("nccl_validate");
  const fs::path& dir = tmp.path();
  fs::copy_file(kSrc + "/scenarios/nccl/tinybox_6x4090.textproto", dir / "tinybox.textproto",
                fs::copy_options::overwrite_existing);
  auto write = [&](const std::string& name, const std::string& text) { return tmp.write(name, text); };
  // Within limits: exit 0, the per-size table and the summary.
  const std::string ok =
      write("ok.cases.textproto", "case { name: \"n10\" scenario: \"tinybox.textproto\" nccl_tests { log: \"" +
                                      (data / "n10_rtx4090_1x6_pcie_p2p_tinybox_allreduce.txt").string() + "\" } }\n");
  Result r = run_validate({ok});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("n10: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(all_reduce, 6 GPUs)"), std::string::npos);
  EXPECT_NE(r.out.find("1 within limits, 0 known gaps, 0 failed"), std::string::npos);
  // Over a limit without a known gap: exit 1; with one: reported, exit 0.
  const std::string tight =
      write("tight.cases.textproto", "case { name: \"n10\" scenario: \"tinybox.textproto\" nccl_tests { log: \"" +
                                         (data / "n10_rtx4090_1x6_pcie_p2p_tinybox_allreduce.txt").string() +
                                         "\" max_large_error: 0.001 } }\n");
  r = run_validate({tight});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("0 within limits, 0 known gaps, 1 failed"), std::string::npos) << r.out;
  const std::string gap =
      write("gap.cases.textproto", "case { name: \"n10\" scenario: \"tinybox.textproto\" nccl_tests { log: \"" +
                                       (data / "n10_rtx4090_1x6_pcie_p2p_tinybox_allreduce.txt").string() +
                                       "\" max_large_error: 0.001 known_gap: \"test\" } }\n");
  r = run_validate({gap});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("KNOWN GAP: test"), std::string::npos);
  // A known gap longer than a table line is printed whole, its row ended by a newline (it was cut
  // at 512 characters and ran into the next row).
  const std::string reason = std::string(600, 'x') + " end of reason";
  const std::string log10 = (data / "n10_rtx4090_1x6_pcie_p2p_tinybox_allreduce.txt").string();
  const std::string longgap =
      write("longgap.cases.textproto", "case { name: \"n10\" scenario: \"tinybox.textproto\" nccl_tests { log: \"" +
                                           log10 + "\" max_large_error: 0.001 known_gap: \"" + reason +
                                           "\" } }\ncase { name: \"n10b\" scenario: "
                                           "\"tinybox.textproto\" nccl_tests { log: \"" +
                                           log10 + "\" } }\n");
  r = run_validate({longgap});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("KNOWN GAP: " + reason + "\nn10b "), std::string::npos) << r.out;
  // Rank count of the log against the GPUs the case selects.
  const std::string ranks =
      write("ranks.cases.textproto", "case { name: \"n10\" scenario: \"tinybox.textproto\" nccl_tests { log: \"" +
                                         (data / "n10_rtx4090_1x6_pcie_p2p_tinybox_allreduce.txt").string() +
                                         "\" gpus: \"0-3\" } }\n");
  // (since session 38 an input error at the field, exit 2, nothing simulated; was "cannot run", exit 1)
  r = run_validate({ranks});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind(ranks + ":1:", 0), 0u) << r.err;  // the column follows the log's path
  EXPECT_NE(r.err.find(": case[0].nccl_tests.gpus: \"0-3\" selects 4 GPUs, and "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" ran on 6 ranks (expected nccl_tests.gpus naming 6 GPUs)"), std::string::npos) << r.err;
  // A table index past the log's, and a GPU the cluster lacks, likewise.
  const std::string run3 =
      write("run3.cases.textproto", "case { name: \"n10\" scenario: \"tinybox.textproto\" nccl_tests { log: \"" +
                                        (data / "n10_rtx4090_1x6_pcie_p2p_tinybox_allreduce.txt").string() +
                                        "\" run: 3 } }\n");
  r = run_validate({run3});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("case[0].nccl_tests.run: 3 (expected 0 to 0: "), std::string::npos) << r.err;
  const std::string gpu9 =
      write("gpu9.cases.textproto", "case { name: \"n10\" scenario: \"tinybox.textproto\" nccl_tests { log: \"" +
                                        (data / "n10_rtx4090_1x6_pcie_p2p_tinybox_allreduce.txt").string() +
                                        "\" gpus: \"0-9\" } }\n");
  r = run_validate({gpu9});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("case[0].nccl_tests.gpus: \"0-9\" names GPU 6, the cluster has 6 (expected GPUs 0 to 5)"),
            std::string::npos)
      << r.err;
  // metric/measured together with nccl_tests: a positioned input error, exit 2.
  const std::string bad = write("bad.cases.textproto",
                                "case {\n  name: \"x\"\n  scenario: \"tinybox.textproto\"\n  metric: \"mfu\"\n"
                                "  nccl_tests { log: \"a.txt\" }\n}\n");
  r = run_validate({bad});
  EXPECT_EQ(r.status, 2);
  // The missing log is named at its position too (it was "cannot run", exit 1, when the case ran);
  // in line order (session 42: line 5 came before line 4).
  EXPECT_EQ(r.err, bad +
                       ":4:3: case[0].metric: set together with nccl_tests (expected either nccl_tests or metric and "
                       "measured)\n" +
                       bad + ":5:16: case[0].nccl_tests.log: \"a.txt\": no such file (" +
                       (fs::path(bad).parent_path() / "a.txt").string() +
                       "; expected a nccl-tests output file relative to the cases file)\n");
}

TEST(NcclTestsCli, SizesAndStepsAreRangeCheckedNamingTheOption) {
  // 2^64 - 1 (nccl-tests' size_t) used to print rows of size -9223372036854775808 with exit 0, and
  // 1e20 the internal "collective: bytes must be finite and >= 0 (got -3.68935e+19)".
  const std::string too_large =
      " is too large (expected 0 to 9007199254740992 bytes = 2^53 = 8388608G, the largest size the model holds "
      "exactly)\n";
  Result r = run({kDgxH100, "-b", "8", "-e", "18446744073709551615", "-f", "2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: -e: size 18446744073709551615" + too_large);
  EXPECT_EQ(r.out, "");
  r = run({kDgxH100, "-e", "99999999999999999999"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: -e: size 99999999999999999999" + too_large);
  r = run({kDgxH100, "-b", "8388609G", "-e", "8388609G"});
  EXPECT_EQ(r.err, "traincast: -b: size 8388609G" + too_large);
  // 2^53 itself is accepted as a size; it is above what nccl-tests runs on an H100 (sessions 39, 40).
  r = run({kDgxH100, "-b", "8388608G", "-e", "8388608G"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("traincast: -e 8388608G: all_reduce at 9007199254740992 bytes is more than nccl-tests runs", 0),
            0u)
      << r.err;
  r = run({kDgxH100, "-b", "1G", "-e", "1M"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: -b 1G is above -e 1M (expected -b <= -e)\n");
  r = run({kDgxH100, "-b", "8", "-e", "8G", "-f", "0.5"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: -f: step factor 0.5 is outside [1, 2^53 = 9007199254740992] (a larger factor cannot give a "
            "second row)\n");
  r = run({kDgxH100, "-b", "8", "-e", "8G", "-f", "1.5"});  // nccl-tests' -f is an integer
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: -f: step factor 1.5 is not an integer (expected a whole factor such as 2, as nccl-tests "
            "reads -f as an integer)\n");
  r = run({kDgxH100, "-b", "8", "-e", "8G", "-i", "0"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: -i: step of 0 bytes would repeat -b forever (expected 1 to 8388608G, or -f above 1)\n");
  r = run({kDgxH100, "-i", "8X"});
  EXPECT_EQ(r.err,
            "traincast: -i: bad size '8X' (expected a number with an optional K, M or G suffix, e.g. 8, 64K, 8G)\n");
  r = run({kDgxH100, "--gpus", "0-"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: --gpus: bad GPU list '0-' (expected ids and ranges such as 0,1,8-15)\n");
}

}  // namespace
}  // namespace traincast::cli

namespace traincast::cli {
namespace {

TEST(NcclTestsCli, ForcedAlgorithmThatCannotRunIsRefused) {
  // Issue 16: a forced tree all_gather silently ran ring; NCCL refuses it ("no algorithm/protocol
  // available ... NCCL_ALGO was set to ..."), and so does traincast, naming the field.
  Result r = run({kDgxH100, "--op", "all_gather", "--set", "cluster.collectives.algorithm=tree"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --set: cluster.collectives.algorithm: tree cannot run all_gather over 8 GPUs on 1 node(s): "
            "NCCL's tree runs only all_reduce (NCCL: no algorithm available with NCCL_ALGO=tree)\n");
  r = run({kDgxH100, "--set", "cluster.collectives.algorithm=tree", "-b", "1G", "-e", "1G"});
  EXPECT_EQ(r.status, 0) << r.err;  // tree all_reduce on one node: NCCL's chain
  // A training run: the first collective that cannot run it (TP 2's reduce_scatter with PAT).
  r = test_support::run({"run", kSrc + "/scenarios/default.textproto", "--set", "cluster.collectives.algorithm=pat"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cluster.collectives.algorithm: pat cannot run"), std::string::npos) << r.err;
}

// The refusal of a forced algorithm or protocol is raised when a collective it cannot run is
// issued (the op and group are known only then), and cites where the field was written.
TEST(NcclTestsCli, ForcedAlgorithmAndProtocolRefusalsCiteTheirPosition) {
  const fs::path dir = fs::temp_directory_path() / "traincast_forced_position_test";
  fs::create_directories(dir);
  const fs::path algo = dir / "tree.textproto";
  std::ofstream(algo) << "cluster {\n  node_template: \"dgx_h100\"\n  collectives { algorithm: tree }\n}\n";
  Result r = run({algo.string(), "--op", "all_gather"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: " + algo.string() +
                       ":3:17: cluster.collectives.algorithm: tree cannot run all_gather over 8 GPUs on 1 node(s): "
                       "NCCL's tree runs only all_reduce (NCCL: no algorithm available with NCCL_ALGO=tree)\n");
  const fs::path proto = dir / "ll128.textproto";
  std::ofstream(proto) << "cluster {\n  node_template: \"pcie_8gpu_2socket\"\n  collectives {\n    protocol: ll128\n  "
                          "}\n}\n";
  r = run({proto.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("traincast: " + proto.string() + ":4:5: cluster.collectives.protocol: LL128 cannot run", 0), 0u)
      << r.err;
  // all_to_all is NCCL's send/recv, which NCCL_ALGO does not govern: it runs, labelled p2p, with
  // the protocol of NCCL's p2p planner (128 KiB per peer <= 32 channels x 16 KiB: LL).
  r = run({algo.string(), "--op", "alltoall", "-b", "1M", "-e", "1M", "--show-algorithm"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("p2p/LL/"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("p2p/LL/1 "), std::string::npos) << r.out;  // the kernel's busy channels, not 1
  EXPECT_EQ(r.out.find("ring/"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

TEST(NcclTestsCli, NcclVersionIsCheckedWithItsPosition) {
  const fs::path dir = fs::temp_directory_path() / "traincast_nccl_version_test";
  fs::create_directories(dir);
  const fs::path file = dir / "old.textproto";
  std::ofstream(file) << "cluster {\n  node_template: \"dgx_h100\"\n  collectives { nccl_version: \"2.8.4\" }\n}\n";
  Result r = run({file.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, file.string() +
                       ":3:17: cluster.collectives.nccl_version: 2.8.4 is older than 2.9.0, the oldest modelled "
                       "release (got \"2.8.4\")\n");
  r = run({kDgxH100, "--set", "cluster.collectives.nccl_version=2.x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cluster.collectives.nccl_version: expected MAJOR.MINOR.PATCH"), std::string::npos) << r.err;
  // NVLS exists from 2.17: forced on 2.16 it is refused; 2.18 runs it.
  r = run(
      {kDgxH100, "--set", "cluster.collectives.nccl_version=2.16.5", "--set", "cluster.collectives.algorithm=nvls"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("NVLS exists from NCCL 2.17"), std::string::npos) << r.err;
  r = run(
      {kDgxH100, "--set", "cluster.collectives.nccl_version=2.18.3", "--set", "cluster.collectives.algorithm=nvls"});
  EXPECT_EQ(r.status, 0) << r.err;
  fs::remove_all(dir);
}

/// Out-of-place busbw [GB/s] of the last row of an nccl-tests table.
double last_busbw(const std::string& out) {
  std::string last;
  for (const std::string& line : lines_of(out))
    if (!line.empty() && line[0] != '#') last = line;
  std::istringstream row(last);
  std::string cell;
  for (int i = 0; i < 8; ++i) row >> cell;  // size count type redop root time algbw busbw
  return std::stod(cell);
}

// Issue 16: an H800 (A800) in dgx_h100 (dgx_a100) fits the baseboard, which wires the GPU's own
// links: 8 NVLink4 (NVLink3) links x 25 GB/s = 200 GB/s per direction, the datasheets' 400 GB/s
// bidirectional, not the template GPU's 18 (12). So the GPUs' NVLink bandwidth is theirs.
TEST(NcclTestsCli, ExportVariantsOnTheirBaseboardsGetTheirOwnNvlinkBandwidth) {
  const std::string dgx_a100 = kSrc + "/scenarios/nccl/dgx_a100.textproto";
  const Result explain_h800 = test_support::run({"explain", kDgxH100, "--set", "cluster.gpu=H800-SXM5-80GB"});
  ASSERT_EQ(explain_h800.status, 0) << explain_h800.err;
  EXPECT_NE(explain_h800.out.find("per GPU NVLink4 8 links x 25 GB/s = 200 GB/s per direction"), std::string::npos)
      << explain_h800.out;
  const Result explain_a800 = test_support::run({"explain", dgx_a100, "--set", "cluster.gpu=A800-SXM4-80GB"});
  ASSERT_EQ(explain_a800.status, 0) << explain_a800.err;
  EXPECT_NE(explain_a800.out.find("per GPU NVLink3 8 links x 25 GB/s = 200 GB/s per direction"), std::string::npos)
      << explain_a800.out;
  // All-reduce of 1 GiB on the 8 GPUs is NVLink-bound: busbw scales with the links (ring forced,
  // so the algorithm does not change with them).
  for (const auto& [file, base_gpu, variant, links] :
       {std::tuple{kDgxH100, "H100-SXM5-80GB", "H800-SXM5-80GB", 18.0},
        std::tuple{dgx_a100, "A100-SXM4-80GB", "A800-SXM4-80GB", 12.0}}) {
    const std::string scenario = file;  // clang 14 cannot capture a structured binding
    auto busbw = [&](const std::string& gpu) {
      const Result r = run({scenario, "--set", "cluster.gpu=" + gpu, "--set", "cluster.collectives.algorithm=ring",
                            "--op", "all_reduce", "-b", "1G", "-e", "1G"});
      EXPECT_EQ(r.status, 0) << r.err;
      return last_busbw(r.out);
    };
    const double full = busbw(base_gpu), cut = busbw(variant);
    EXPECT_NEAR(cut / full, 8.0 / links, 0.02 * 8.0 / links) << variant << ": " << cut << " vs " << full << " GB/s";
  }
}

}  // namespace
}  // namespace traincast::cli

namespace traincast::cli {
namespace {

// Session 38: size 0 of a collective costs what NCCL spends on it (nothing: src/enqueue.cc
// taskAppend discards it); fp8 reductions below sm_90 are refused as NCCL refuses them; a
// min_channels that changes no row says so.
TEST(NcclTestsCli, EmptyCollectiveFp8BelowSm90AndMinChannelsWithoutEffect) {
  const Result empty = run({kDgxH100, "-b", "0", "-e", "0", "--show-algorithm"});
  ASSERT_EQ(empty.status, 0) << empty.err;
  EXPECT_TRUE(test_support::has(empty.out,
                                "0     float     sum      -1     0.00    0.00    0.00    N/A     0.00    "
                                "0.00    0.00    N/A  none/none/0\n"))
      << empty.out;
  const std::string a100 = kSrc + "/scenarios/nccl/dgx_a100.textproto";
  const Result fp8 = run({a100, "-d", "f8e4m3", "-b", "1M", "-e", "1M"});
  EXPECT_EQ(fp8.status, 2);
  EXPECT_TRUE(test_support::has(
      fp8.err,
      "traincast: fp8 all_reduce: NCCL reduces fp8 only on sm_90 or newer, and GPU 0 is A100-SXM4-80GB, sm_80"))
      << fp8.err;
  EXPECT_EQ(fp8.out, "");
  EXPECT_EQ(run({a100, "-d", "f8e5m2", "--op", "all_gather", "-b", "1M", "-e", "1M"}).status, 0);
  EXPECT_EQ(run({kDgxH100, "-d", "f8e4m3", "-b", "1M", "-e", "1M"}).status, 0);

  const std::string four = kSrc + "/scenarios/nccl/h100_ib400_4node.textproto";
  const Result nvls = run({four, "-b", "64M", "-e", "256M", "-f", "4", "--set", "cluster.collectives.min_channels=64"});
  ASSERT_EQ(nvls.status, 0) << nvls.err;
  EXPECT_TRUE(
      test_support::has(nvls.err, "warning: --set: cluster.collectives.min_channels 64 changed no row's time: "))
      << nvls.err;
  EXPECT_TRUE(test_support::has(nvls.err, "(these rows ran nvls_tree/Simple/16 without it)")) << nvls.err;
  // A ring across nodes at 20 channels on its own 16: channels 0-3 carry twice, the bound moves.
  const Result ring = run({four, "-b", "256M", "-e", "256M", "--set", "cluster.collectives.algorithm=ring", "--set",
                           "cluster.collectives.min_channels=20"});
  ASSERT_EQ(ring.status, 0) << ring.err;
  EXPECT_FALSE(test_support::has(ring.err, "min_channels")) << ring.err;
}

// nccl-tests bounds -e by the GPU's memory before it allocates (src/common.cu: (memory - reserve -
// 1 GiB) / 3 with its data check on): a larger -e never prints a row there, so it is refused at -e.
// Before (fresh user, session 39): a 64 GiB all_reduce on 80 GB H100s printed 245449 us, exit 0;
// then (session 40) the bound counted all of HBM as send and receive buffers (42760404992 for
// all_reduce, all_gather's 64 GiB taken), where the shared H100 logs r02/r03 print "Reducing
// maxBytes to 26549638485 due to memory limitation" (CUDA's memory 480 MiB below the catalog's).
TEST(NcclTestsCli, SizesAboveNcclTestsOwnBoundAreRefusedAtE) {
  Result r = run({kDgxH100, "--op", "all_reduce", "-b", "64G", "-e", "64G"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: -e 64G: all_reduce at 68719476736 bytes is more than nccl-tests runs on H100-SXM5-80GB: it "
            "reduces -e to at most 26717366954 bytes (\"Reducing maxBytes to ... due to memory limitation\"; "
            "src/common.cu: (HBM - 4 GiB reserve - 1 GiB) / 3 for its send, receive and data-check buffers, of the "
            "85520809984 bytes of HBM) (expected -e 26717366952 or less; an upper bound: CUDA reports somewhat less "
            "memory than the HBM, so a real run's limit is a little lower)\n");
  EXPECT_EQ(r.out, "");
  // The bound is the size nccl-tests prints, whatever the op: all_gather's 64 GiB is refused too.
  EXPECT_EQ(run({kDgxH100, "--op", "all_gather", "-b", "64G", "-e", "64G"}).status, 2);
  // The log's own reduced size runs (it is below the catalog-based bound).
  EXPECT_EQ(run({kDgxH100, "--op", "all_reduce", "-b", "26549638480", "-e", "26549638480"}).status, 0);
  // The suggestion is whole elements per rank (fresh user, session 39: 80490174102 ran as 80490174080):
  // 26717366954 over 8 ranks of 4-byte floats, a multiple of 32.
  r = run({kDgxH100, "--op", "reduce_scatter", "-b", "32G", "-e", "32G", "-d", "float"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("(expected -e 26717366944 or less"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace traincast::cli
