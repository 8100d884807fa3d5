// cluster.collectives.min_channels / max_channels (NCCL_MIN_NCHANNELS / NCCL_MIN_CTAS and
// NCCL_MAX_NCHANNELS / NCCL_MAX_CTAS): 0 to NCCL's MAXCHANNELS (64), positioned errors outside,
// --set overrides, and the text round trip.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

// A small valid scenario (one DGX H100, DP 8); `collectives` is the body of its collectives block.
std::string with_collectives(const std::string& collectives) {
  return "cluster {\n"
         "  node_template: \"dgx_h100\"\n"
         "  collectives { " +
         collectives +
         " }\n}\n"
         "workload {\n"
         "  model { num_layers: 2 hidden_size: 256 num_attention_heads: 4 vocab_size: 1000 seq_length: 128 }\n"
         "  parallel { dp: 8 }\n"
         "  training { global_batch_size: 8 }\n}\n";
}

TEST(NcclChannelsIo, OutOfRangeIsAPositionedError) {
  // Line 3: "  collectives { " puts the first field at column 17.
  EXPECT_EQ(errors_of(with_collectives("min_channels: 65")),
            std::vector<std::string>{"t.textproto:3:17: cluster.collectives.min_channels: got 65 (expected an integer "
                                     "from 0 to 64: 0 for NCCL's default, else a channel count up to NCCL's "
                                     "MAXCHANNELS)"});
  EXPECT_EQ(errors_of(with_collectives("max_channels: -1")),
            std::vector<std::string>{
                "t.textproto:3:17: cluster.collectives.max_channels: got -1 (expected an integer from 0 to 64: 0 for "
                "NCCL's default, else a channel count up to NCCL's MAXCHANNELS)"});
}

TEST(NcclChannelsIo, LoadsSetsAndRoundTrips) {
  const models::Scenario s =
      load_scenario_text(with_collectives("min_channels: 24 max_channels: 64"), "t.textproto", Format::text);
  EXPECT_EQ(s.cluster.collectives.min_channels, 24);
  EXPECT_EQ(s.cluster.collectives.max_channels, 64);
  const models::Scenario back = load_scenario_text(scenario_to_text(s), "u.textproto", Format::text);
  EXPECT_EQ(back.cluster.collectives.min_channels, 24);
  EXPECT_EQ(back.cluster.collectives.max_channels, 64);
  EXPECT_TRUE(back == s);  // and every other field
  const models::Scenario set =
      load_scenario_text(with_collectives(""), "t.textproto", Format::text, {"cluster.collectives.min_channels=24"});
  EXPECT_EQ(set.cluster.collectives.min_channels, 24);
  EXPECT_EQ(set.cluster.collectives.max_channels, 0);
  try {
    load_scenario_text(with_collectives(""), "t.textproto", Format::text, {"cluster.collectives.max_channels=100"});
    ADD_FAILURE() << "max_channels=100 loaded";
  } catch (const ScenarioError& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_NE(e.errors()[0].find("cluster.collectives.max_channels: got 100"), std::string::npos) << e.errors()[0];
  }
}

}  // namespace
}  // namespace traincast::io
