// The embedded default scenario's errors under --set (models/io/scenario_io.h, default_scenario):
// where a --set caused the error, and the note that names the default file and the --set.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/io/scenario_io.h"

namespace traincast::io {
namespace {

TEST(ScenarioIoErrors, EmbeddedDefaultIsNamedWithTheSetsThatChangedIt) {
  // `traincast run --set workload.parallel.tp=4` with no file: default tp 2 x pp 1 x dp 4 = 8.
  std::vector<std::string> errors;
  try {
    default_scenario({"workload.parallel.tp=4"});
  } catch (const ScenarioError& e) {
    errors = e.errors();
  }
  EXPECT_EQ(errors, std::vector<std::string>{"--set: workload.parallel.tp: tp * pp * dp = 4 * 1 * 4 = 16 but the "
                                             "cluster has 8 GPUs (1 x dgx_h100 with 8 GPUs each) (expected tp * pp * "
                                             "dp = 8)"});
  // An error positioned in the embedded file gets a note naming it as the default and the --set
  // (num_attention_heads 32 no longer divides the hidden size the --set wrote; a micro_batch_size
  // --set that breaks global_batch_size's divisibility is now placed at the --set itself).
  errors.clear();
  try {
    default_scenario({"workload.model.hidden_size=1000"});
  } catch (const ScenarioError& e) {
    errors = e.errors();
  }
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors.front().rfind("scenarios/default.textproto:", 0), 0u) << errors.front();
  EXPECT_EQ(errors.back(),
            "scenarios/default.textproto: note: this is traincast's embedded default scenario (no scenario file was "
            "given), as changed by --set workload.model.hidden_size=1000");
}

}  // namespace
}  // namespace traincast::io
