#pragma once
// The fixtures the test binaries share (tests/ mirrors the source tree; this is the one place for
// what several folders' tests use): a scratch directory per test (TempDir, TempDirTest), slurp() to
// read an output file, and small_h100_job(), a small GEMM-heavy job on one DGX H100. GoogleTest,
// std::filesystem and models/spec only, so any test binary may include it. Folder-specific helpers
// stay beside their tests (tests/tools/cli_run.h runs the CLI, tests/models/io/scenario_errors.h
// collects loader errors, tests/models/collectives/collective_fixture.h builds collective benches).

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "models/spec/scenario.h"

namespace traincast::test_support {

/// <temp>/traincast_<stem>_<pid>: created empty (a stale one from a crashed run is removed
/// first), removed with everything in it on destruction. Unique per process: ctest runs every
/// discovered test in its own process.
class TempDir {
 public:
  explicit TempDir(const std::string& stem)
      : path_(std::filesystem::temp_directory_path() / ("traincast_" + stem + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;  // never throw from a destructor; a leftover directory is harmless
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// `name` inside the directory, as a string.
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  /// Writes `text` to `name` inside the directory (binary, as is); returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

/// Fixture: dir_ is a fresh directory for each test, <temp>/traincast_<suite>_<test>_<pid>
/// ('/' of parameterized names as '_'),
/// removed after it. A fixture that needs more overrides SetUp/TearDown and calls these first.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string stem = std::string(info->test_suite_name()) + "_" + info->name();
    std::replace(stem.begin(), stem.end(), '/', '_');  // parameterized names: Prefix/Suite, Name/0
    temp_.emplace(stem);
    dir_ = temp_->path();
  }
  void TearDown() override { temp_.reset(); }
  /// `name` inside dir_, as a string.
  std::string path(const std::string& name) const { return temp_->file(name); }
  /// Writes `text` to `name` inside dir_; returns its path.
  std::string write(const std::string& name, const std::string& text) const { return temp_->write(name, text); }

  std::filesystem::path dir_;

 private:
  std::optional<TempDir> temp_;
};

/// The whole file at `p` as bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace traincast::test_support

namespace traincast::models::test_support {

/// A small GPT-style job on one DGX H100 for the power, thermal and straggler tests: TP 2 x DP 4,
/// 2 layers of hidden 8192 (GEMM-heavy, so power and clocks matter), bf16, two iterations.
inline Scenario small_h100_job(const std::string& name) {
  Scenario sc;
  sc.name = name;
  sc.cluster.node_template = "dgx_h100";
  sc.model.num_layers = 2;
  sc.model.hidden_size = 8192;
  sc.model.num_attention_heads = 64;
  sc.model.vocab_size = 32000;
  sc.model.seq_length = 2048;
  sc.parallel.tp = 2;
  sc.parallel.dp = 4;
  sc.training.global_batch_size = 16;
  sc.training.micro_batch_size = 2;
  sc.training.precision = Precision::bf16;
  sc.options.iterations = 2;
  return sc;
}

}  // namespace traincast::models::test_support
