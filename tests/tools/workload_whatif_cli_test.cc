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

TEST(ContextParallelCli, LongContextWhatIfFitsWithCpAndNotWithout) {
  const std::string file = kSrc + "/scenarios/whatif/llama3_8b_128k_context_parallel.textproto";
  const Result cp2 = run({"run", file});
  ASSERT_EQ(cp2.status, 0) << cp2.err;
  EXPECT_NE(cp2.out.find("TP 8 x CP 2 x PP 1 x DP 1"), std::string::npos) << cp2.out;
  EXPECT_NE(cp2.out.find("exposed CP send/recv"), std::string::npos);
  EXPECT_NE(cp2.out.find("-> fits"), std::string::npos);
  const Result cp1 = run({"run", file, "--set", "workload.parallel.cp=1", "--set", "workload.parallel.dp=2"});
  ASSERT_EQ(cp1.status, 0) << cp1.err;
  EXPECT_NE(cp1.out.find("OUT OF MEMORY"), std::string::npos);
  EXPECT_NE(cp1.out.find("Context parallelism (parallel.cp) divides activations by CP."), std::string::npos);
  // Layout errors name the field the --set changed: 16 GPUs are not tp 8 x cp 4 x dp 1.
  const Result bad = run({"run", file, "--set", "workload.parallel.cp=4"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--set: workload.parallel.cp: tp * cp * pp * dp = 8 * 4 * 1 * 1 = 32 but the cluster has 16 "
                         "GPUs"),
            std::string::npos)
      << bad.err;
  // The planner does not search CP and says so at the field.
  const Result plan = run({"plan", file});
  EXPECT_EQ(plan.status, 2);
  EXPECT_NE(plan.err.find(file + ":40:5: workload.parallel.cp: 2: traincast plan does not search context parallelism"),
            std::string::npos)
      << plan.err;
}

TEST(NumaCli, WrongBindingWhatIfIsSlowerThanTheRightOne) {
  const std::string file = kSrc + "/scenarios/whatif/resnet50_numa_binding.textproto";
  const Result wrong = run({"run", file});
  const Result right = run({"run", file, "--set", "workload.data_loader.numa_binding=correct"});
  ASSERT_EQ(wrong.status, 0) << wrong.err;
  ASSERT_EQ(right.status, 0) << right.err;
  EXPECT_NE(wrong.out.find("exposed input copies (H2D)"), std::string::npos) << wrong.out;
  EXPECT_NE(wrong.out, right.out);
  const Result bad = run({"run", file, "--set", "workload.data_loader.input_bytes_per_element=3"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("workload.data_loader.input_bytes_per_element: got 3 (expected 1 for uint8, 2 for fp16 or 4 "
                         "for fp32)"),
            std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace traincast::cli
