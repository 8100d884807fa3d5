// The storage / failures / cost scenarios (scenarios/operations/) through the CLI: their stalls
// reach the iteration time, write-back beats write-through, the JSON is the same for any thread
// count, and bad input exits 2 with a positioned message.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "models/executor/training_executor.h"
#include "models/io/scenario_io.h"
#include "models/spec/report.h"
#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"
#include "tools/cli/commands.h"

namespace traincast::cli {
namespace {

using test_support::slurp;

const std::string kOps = std::string(TRAINCAST_SOURCE_DIR) + "/scenarios/operations/";

models::Report simulate(const std::string& file, const std::vector<std::string>& set = {}) {
  return models::simulate_training(io::load_scenario_file(kOps + file, set));
}

TEST(OperationsScenarios, WriteThroughCheckpointingIsSlowerAndShowsInTheBreakdown) {
  const models::Report wt = simulate("raid_write_through_checkpoint.textproto");
  const models::Report wb =
      simulate("raid_write_through_checkpoint.textproto", {"storage.local.cache_policy=write_back"});
  const models::Report none =
      simulate("raid_write_through_checkpoint.textproto", {"storage.checkpoint_interval_s=1e12"});
  EXPECT_GT(wt.storage.checkpoint_write_s, 3 * wb.storage.checkpoint_write_s);
  EXPECT_GT(wt.iteration_time_s, wb.iteration_time_s);
  EXPECT_GT(wb.iteration_time_s, none.iteration_time_s);
  // The stall is part of the iteration: breakdown rows add up to the iteration time.
  const models::TimeBreakdown& b = wt.breakdown;
  const double sum = b.compute_s + b.optimizer_s + b.tp_comm_exposed_s + b.dp_comm_exposed_s + b.pp_comm_exposed_s +
                     b.pipeline_bubble_s + b.storage_stall_s + b.straggler_wait_s;
  EXPECT_NEAR(sum, wt.iteration_time_s, 1e-6 * wt.iteration_time_s);
  // The stall is an op of the simulated timeline, which holds whole ns (seconds round up).
  EXPECT_NEAR(b.storage_stall_s, std::ceil(wt.storage.checkpoint_stall_s_per_iteration * 1e9) * 1e-9, 1e-12);
}

TEST(OperationsScenarios, SlowSharedFileSystemStallsTheDataLoaderAndMoreBandwidthHelps) {
  const models::Report slow = simulate("lora_slow_shared_fs.textproto");
  EXPECT_GT(slow.storage.data_stall_s_per_iteration, 0.1);
  EXPECT_GT(slow.breakdown.storage_stall_s, slow.storage.data_stall_s_per_iteration - 1e-12);
  double prev = slow.iteration_time_s;
  for (const char* bw : {"0.3", "1.17", "12.5"}) {
    const models::Report r =
        simulate("lora_slow_shared_fs.textproto", {std::string("storage.shared_fs.per_node_gb_per_s=") + bw,
                                                   std::string("storage.shared_fs.aggregate_read_gb_per_s=") + bw,
                                                   std::string("storage.shared_fs.aggregate_write_gb_per_s=") + bw});
    EXPECT_LE(r.iteration_time_s, prev) << bw;
    prev = r.iteration_time_s;
  }
}

TEST(OperationsScenarios, BuyVersusRentReportsPaybackWithSimulatedEnergy) {
  const models::Report r = simulate("buy_vs_rent_60pct.textproto");
  ASSERT_TRUE(r.cost.modelled);
  EXPECT_TRUE(r.cost.energy_modelled);
  EXPECT_FALSE(r.cost.payback_never);
  // 8 DGX H100 at 60%: facility draw x 8,766 h x 0.6 x USD 0.0806/kWh.
  EXPECT_NEAR(r.cost.energy_per_year_usd, r.power.facility_average_w / 1000 * 8766 * 0.6 * 0.0806, 1e-6);
  ASSERT_TRUE(r.reliability.modelled);
  EXPECT_GT(r.cost.payback_years, 0.0);
  EXPECT_GT(r.cost.own_cost_to_train_usd, 0.0);
  EXPECT_NEAR(r.cost.train_gpu_hours, 64 * r.reliability.wall_clock_s_mean / 3600, 1e-6);
  EXPECT_GT(r.reliability.goodput_mean, 0.0);
  EXPECT_LE(r.reliability.goodput_mean, 1.0);
}

// Fresh-user finding: one GB200 NVL72 rack at USD 3M cost $3.0M whole, $7.48M as 2 x "/36" and
// $27.5M as 9 x "/8" (the price was charged per NVLink domain). The price is per rack: every
// layout buys 1 rack, the text report says so, and only the fabric the domains need is added.
TEST(OperationsScenarios, NvlinkPartitionsOfOneRackBuyOneRack) {
  const auto one_rack = [](const std::string& tmpl, int nodes) {
    const std::string text =
        "cluster { node_template: \"" + tmpl + "\" num_nodes: " + std::to_string(nodes) +
        " }\n"
        "workload { model { num_layers: 4 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 "
        "seq_length: 1024 }\n"
        "  parallel { tp: 4 dp: 18 } training { global_batch_size: 36 train_tokens: 1e9 } }\n"
        "thermal { cooling: liquid }\n"
        "cost { node_price_usd: 3000000 cloud_price_per_gpu_hour_usd: 6 }\n";
    return models::simulate_training(io::load_scenario_text(text, "rack.textproto", io::Format::text, {}));
  };
  const models::Report whole = one_rack("gb200_nvl72", 1);
  for (const auto& [tmpl, nodes] : {std::pair<std::string, int>{"gb200_nvl72/36", 2}, {"gb200_nvl72/8", 9}}) {
    const models::Report r = one_rack(tmpl, nodes);
    ASSERT_TRUE(r.cost.own_modelled) << tmpl;
    EXPECT_EQ(r.cost.units_bought, 1) << tmpl;
    EXPECT_EQ(r.cost.node_price_unit,
              "gb200_nvl72 rack of 72 GPUs, " + std::to_string(nodes) + " " + tmpl + " nodes each")
        << tmpl;
    // The rack is priced once; the rest is the NIC fabric between the domains.
    EXPECT_DOUBLE_EQ(r.cost.capex_usd - r.cost.switches * 36000.0 - r.cost.cables * 2560.0, 3e6) << tmpl;
  }
  EXPECT_EQ(whole.cost.units_bought, 1);
  EXPECT_DOUBLE_EQ(whole.cost.capex_usd, 3e6);
  EXPECT_EQ(whole.cost.node_price_unit, "gb200_nvl72 rack of 72 GPUs");
}

TEST(OperationsScenarios, JsonIdenticalForAnyThreadCountAndBadInputExitsTwo) {
  auto run = [](const std::vector<std::string>& args, std::string& out) {
    const test_support::Result r = test_support::run(args);
    out = r.out + r.err;
    return r.status;
  };
  const traincast::test_support::TempDir tmp("ops");
  const std::string a = tmp.file("a.json"), b = tmp.file("b.json");
  std::string out;
  ASSERT_EQ(run({"run", kOps + "lora_slow_shared_fs.textproto", "--json", a, "--set", "options.threads=1", "--set",
                 "reliability.horizon_s=864000", "--set", "cost.utilization=0.6"},
                out),
            0)
      << out;
  ASSERT_EQ(run({"run", kOps + "lora_slow_shared_fs.textproto", "--json", b, "--set", "options.threads=2", "--set",
                 "reliability.horizon_s=864000", "--set", "cost.utilization=0.6"},
                out),
            0)
      << out;
  EXPECT_EQ(slurp(a), slurp(b));
  EXPECT_NE(slurp(a).find("\"goodput_mean\""), std::string::npos);
  EXPECT_EQ(run({"run", kOps + "lora_slow_shared_fs.textproto", "--set", "cost.energy_price_usd_per_kwh=-1"}, out), 2);
  EXPECT_NE(out.find("cost.energy_price_usd_per_kwh: got -1 (expected a finite number >= 0 and <= 100"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace traincast::cli
