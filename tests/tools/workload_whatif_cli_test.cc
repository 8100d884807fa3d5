// Context parallelism, the ResNet NUMA-binding what-if and the ResNet CLI fixes, as a user runs
// them: exit codes, the lines the summary prints, the answers the what-if scenarios state.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tools/cli/commands.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;

struct Result {
  int status;
  std::string out, err;
};

Result run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  std::vector<std::string> argv_s = {"traincast"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  const int status = main_dispatch(static_cast<int>(argv.size()), argv.data(), out, err);
  return {status, out.str(), err.str()};
}

TEST(ResNetCli, PlanRefusesWithThePositionOfTheFamilyField) {
  const std::string file = kSrc + "/scenarios/models/resnet50.textproto";
  const Result r = run({"plan", file});
  EXPECT_EQ(r.status, 2);
  // `family: resnet` is on line 18, column 5 of the zoo file.
  EXPECT_NE(r.err.find(file + ":18:5: workload.model.family: resnet: traincast plan searches transformer layouts"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("nan"), std::string::npos) << r.err;
}

TEST(ResNetCli, SummaryLeavesOutRecomputation) {
  const Result r = run({"run", kSrc + "/scenarios/models/resnet50.textproto"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find(", recompute "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("           fp16\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("images/s"), std::string::npos);
}

}  // namespace
}  // namespace traincast::cli
