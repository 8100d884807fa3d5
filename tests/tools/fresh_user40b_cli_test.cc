// What session 40's fresh user found around per-element overrides, fixed by the lead: nccl-tests
// on a cluster with a drained node said nothing of it, and `power_cap_w: 0` was reported as an
// override without a factor.

#include <gtest/gtest.h>

#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::has;
using test_support::Result;
using test_support::run;

// Before: 2 x DGX H100 with node1/gpu3 missing printed "all_reduce on 8 of 8 GPUs" and a busbw
// above the healthy 16 GPUs' (470.31 against 440.43 GB/s), with no word of the drained node.
TEST(FreshUser40Overrides, NcclTestsNamesADrainedNode) {
  const traincast::test_support::TempDir dir("fresh_user40_drained");
  const std::string path = dir.write("drained.textproto",
                                     "cluster { node_template: \"dgx_h100\" num_nodes: 2 "
                                     "overrides { select: \"node1/gpu3\" missing: true } }\n");
  const Result r = run({"nccl-tests", path, "-b", "1M", "-e", "1M"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(
      has(r.out, "all_reduce on 8 of 8 GPUs of " + path +
                     "\n"
                     "# drained node1: its GPU node1/gpu3 is missing (cluster.overrides[0]); no rank runs on it\n"))
      << r.out;
}

// Before: "cluster.overrides[0].select: no factor (expected clock_factor, power_cap_w or ...)".
TEST(FreshUser40Overrides, ZeroPowerCapIsNamedAtItsField) {
  const traincast::test_support::TempDir dir("fresh_user40_cap0");
  const std::string path = dir.write("cap0.textproto",
                                     "cluster { node_template: \"dgx_h100\" num_nodes: 1\n"
                                     "  overrides { select: \"node0/gpu1\" power_cap_w: 0 } }\n");
  const Result r = run({"run", path});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, path + ":2:"));
  EXPECT_TRUE(has(r.err, "cluster.overrides[0].power_cap_w: got 0 W (expected 200 to 700 W for H100")) << r.err;
  EXPECT_FALSE(has(r.err, "no factor")) << r.err;
}

// Before: "a NIC selector names one node (got \"node0-1/nic1\")", without what to write instead.
TEST(FreshUser40Overrides, NicRangeSelectorSaysWhatToWrite) {
  const traincast::test_support::TempDir dir("fresh_user40_nic_range");
  const std::string path = dir.write("nics.textproto",
                                     "cluster { node_template: \"dgx_h100\" num_nodes: 2\n"
                                     "  overrides { select: \"node0-1/nic1\" bandwidth_factor: 0.5 } }\n");
  const Result r = run({"run", path});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, path + ":2:"));
  EXPECT_TRUE(has(r.err,
                  "a NIC selector names one node (got \"node0-1/nic1\"; expected node<N>/nic<K>, one override "
                  "per node, e.g. \"node0/nic1\")"))
      << r.err;
}

}  // namespace
}  // namespace traincast::cli
