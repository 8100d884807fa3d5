// Regression tests for what the libFuzzer targets (tests/fuzz, docs/fuzzing.md) found in the
// calibration readers (nccl-tests logs, measurement CSVs): each crashing input is committed as a
// seed under tests/fuzz/corpus/<target>/ and read from there, and must now give a positioned error.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/fit/inputs.h"
#include "calibrate/nccl_tests_log.h"

namespace traincast::calibrate {
namespace {

const std::string kCorpus = std::string(TRAINCAST_SOURCE_DIR) + "/tests/fuzz/corpus";

std::string corpus_file(const std::string& name) {
  std::ifstream in(kCorpus + "/" + name, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  EXPECT_TRUE(in.good() || in.eof()) << name;
  return s.str();
}

// "#  Rank 2147483647 ..." made the run's rank count INT_MAX + 1 (signed overflow, UBSan); "ranks:"
// and "nodes:" notes went through atoi, undefined beyond an int.
TEST(FuzzFindings, NcclTestsRankBeyondAnIntIsRefused) {
  try {
    parse_nccl_tests_log(corpus_file("nccl_tests_log/rank_int_max.txt"), "in.txt");
    ADD_FAILURE() << "no NcclTestsLogError";
  } catch (const NcclTestsLogError& e) {
    EXPECT_EQ(e.errors(), std::vector<std::string>{"in.txt:2: Rank 2147483647 is out of range (expected an integer "
                                                   "below 2147483647, as nccl-tests counts ranks in an int)"});
  }
  try {
    parse_nccl_tests_log("# ranks: 99999999999 nodes: 3\n", "in.txt");
    ADD_FAILURE() << "no NcclTestsLogError";
  } catch (const NcclTestsLogError& e) {
    ASSERT_FALSE(e.errors().empty());
    EXPECT_EQ(e.errors()[0],
              "in.txt:1: ranks: 99999999999 is out of range (expected an integer below 2147483647, as nccl-tests "
              "counts ranks in an int)");
  }
}

// num_ranks 1e300 passed the integer check and was cast to int (undefined, UBSan).
TEST(FuzzFindings, MeasurementCsvRankCountBeyondAnIntIsRefused) {
  InputNotes notes;
  try {
    read_measurement_csv(corpus_file("measurement_csv/num_ranks_1e300.csv"), "c.csv", "", notes);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.errors(), std::vector<std::string>{"c.csv:2: column 'num_ranks': '1e300' is not an integer from 1 "
                                                   "to 2147483647"});
  }
}

}  // namespace
}  // namespace traincast::calibrate
