// Context parallelism, the ResNet NUMA-binding what-if and the ResNet CLI fixes, as a user runs
// them: exit codes, the lines the summary prints, the answers the what-if scenarios state.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/cli_run.h"
#include "tools/cli/commands.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::Result;
using test_support::run;

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
