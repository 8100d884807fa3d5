#pragma once
// A scratch directory per test for tests that write files: TempDir (RAII) and the GoogleTest
// fixture TempDirTest holding one. GoogleTest and std::filesystem only, so any test binary may
// include it (tests/tools/cli_run.h runs the CLI itself).

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

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

}  // namespace traincast::test_support
