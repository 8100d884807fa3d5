// Defects a new user hit on first contact: output options given '-', enums given as numbers in
// JSON. Each is a refusal with exit status 2 naming where and what was expected.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::Result;
using test_support::run;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

class NewUserCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("traincast_new_user_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    old_cwd_ = fs::current_path();
    fs::current_path(dir_);  // a file named '-' would land here
  }
  void TearDown() override {
    fs::current_path(old_cwd_);
    fs::remove_all(dir_);
  }
  fs::path dir_, old_cwd_;
};

// '-' is not standard output for any output option (none of them writes there: the summary
// does): refused before anything is simulated, and no file named '-' appears.
TEST_F(NewUserCli, DashAsAnOutputFileIsRefused) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--trace", "-"},
        {"run", "--json", "-"},
        {"run", "--print-scenario", "--json", "-"},
        {"nccl-tests", kSrc + "/scenarios/nccl/dgx_h100.textproto", "--csv", "-"}}) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << args[1] << " " << args[2];
    EXPECT_NE(r.err.find("-: output to standard output is not supported (expected a file name"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.out.find("Iteration"), std::string::npos);
    EXPECT_FALSE(fs::exists(dir_ / "-"));
  }
}

}  // namespace
}  // namespace traincast::cli
