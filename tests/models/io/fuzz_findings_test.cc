// Regression tests for what the libFuzzer targets (tests/fuzz, docs/fuzzing.md) found in models/io's
// parsers: each crashing input is committed as a seed under tests/fuzz/corpus/<target>/ and read
// from there, and must now give a positioned error.

#include <gtest/gtest.h>

#include <string>

#include "models/io/scenario_io.h"
#include "models/io/sweep_csv.h"
#include "models/io/sweep_loader.h"

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

// A constraint "tp+tp+...+tp > 0" of 20,000 terms built a tree 20,000 deep, and type-checking it
// recursed that deep: a stack overflow. At most 1000 binary operators now.
TEST(FuzzFindings, SweepConstraintWithTooManyOperatorsIsRefused) {
  const std::string path = kCorpus + "/sweep_loader/operator_chain_20000.sweep.textproto";
  // Column 3003: the 1001st "+" (terms "tp" at columns 1, 4, 7, ...).
  EXPECT_EQ(error_of(load_sweep_file, path),
            path +
                ":13:1: constraint[0]: at column 3003 of \"tp+tp+tp+tp+tp+tp+tp+tp+tp+tp+tp+tp+tp+t...\": more than "
                "1000 binary operators (expected at most 1000 in one expression)");
}

}  // namespace
}  // namespace traincast::io
