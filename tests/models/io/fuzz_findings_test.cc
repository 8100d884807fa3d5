// Regression tests for what the libFuzzer targets (tests/fuzz, docs/fuzzing.md) found in models/io's
// parsers: each crashing input is committed as a seed under tests/fuzz/corpus/<target>/ and read
// from there, and must now give a positioned error.

#include <gtest/gtest.h>

#include <string>

#include "models/io/scenario_io.h"
#include "models/io/sweep_csv.h"

namespace traincast::io {
namespace {

const std::string kCorpus = std::string(TRAINCAST_SOURCE_DIR) + "/tests/fuzz/corpus";

/// The message of the ScenarioError that reading `path` with `read` throws ("no error" if none).
template <typename Read>
std::string error_of(Read read, const std::string& path) {
  try {
    read(path);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

// A comment line promising 2^64 - 1 points was taken as is: `merge` then made one slot per point
// (std::length_error / out of memory) and the fuzz target's per-point flags ran out of memory.
// No sweep has more than kMaxSweepPoints points, so no CSV of one names more.
TEST(FuzzFindings, SweepCsvWithMorePointsThanAnySweepIsRefused) {
  const std::string path = kCorpus + "/sweep_csv/points_beyond_any_sweep.csv";
  EXPECT_EQ(error_of(read_sweep_csv, path),
            path +
                ":1: points 18446744073709551615 is more than a sweep has (expected at most 10000000, as "
                "traincast sweep writes)");
}

}  // namespace
}  // namespace traincast::io
