// Scenario sections storage / reliability / cost (issue 4): loading, round trip, every check with
// its position, and the report's JSON keys (storage.*, reliability.*, cost.*).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

/// Line 1-3: a valid 1-node job; line 4 onwards: `extra`.
std::string job(const std::string& extra, const std::string& training = "") {
  return "cluster { node_template: \"dgx_h100\" num_nodes: 1 }\n"
         "workload { model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: "
         "2048 }\n"
         "  parallel { tp: 2 pp: 2 dp: 2 } training { global_batch_size: 16" +
         training + " } }\n" + extra;
}

using test_support::errors_of;

TEST(StorageReliabilityCostIo, AbsentSectionsAreNotModelled) {
  const models::Scenario s = load_scenario_text(job(""), "t.textproto", Format::text, {});
  EXPECT_FALSE(s.storage.has_value());
  EXPECT_FALSE(s.reliability.has_value());
  EXPECT_FALSE(s.cost.has_value());
}

TEST(StorageReliabilityCostIo, PresentSectionsKeepDefaultsAndRoundTrip) {
  const std::string text =
      job("storage { checkpoint_mode: asynchronous local { raid: raid5 hardware_controller: true cache_policy: "
          "write_through } }\n"
          "reliability { failure { cause: \"gpu\" per_gpu_hour: 1e-5 } failure { cause: \"host\" per_node_hour: 2e-5 } "
          "horizon_s: 86400 seed: 9 }\n"
          "cost { utilization: 0.6 }\n");
  const models::Scenario s = load_scenario_text(text, "t.textproto", Format::text, {});
  ASSERT_TRUE(s.storage && s.reliability && s.cost);
  EXPECT_EQ(s.storage->checkpoint_mode, models::CheckpointMode::asynchronous);
  EXPECT_EQ(s.storage->local.raid, models::RaidLevel::raid5);
  EXPECT_EQ(s.storage->local.cache_policy, models::WriteCachePolicy::write_through);
  EXPECT_EQ(s.storage->local.drives, 8);                          // default kept
  EXPECT_EQ(s.storage->shared_fs.aggregate_read_gb_per_s, 90.0);  // default kept
  ASSERT_EQ(s.reliability->failures.size(), 2u);
  EXPECT_EQ(s.reliability->failures[1].per_node_hour, 2e-5);
  EXPECT_EQ(s.reliability->restart_overhead_s, 600.0);
  EXPECT_EQ(s.reliability->seed, 9u);
  EXPECT_EQ(s.cost->utilization, 0.6);
  EXPECT_EQ(s.cost->amortization_years, 5.0);
  // Text round trip.
  const models::Scenario again = load_scenario_text(scenario_to_text(s), "r.textproto", Format::text, {});
  ASSERT_TRUE(again.storage && again.reliability && again.cost);
  EXPECT_EQ(again.storage->local.cache_policy, models::WriteCachePolicy::write_through);
  EXPECT_EQ(again.reliability->failures[0].cause, "gpu");
  EXPECT_EQ(again.cost->utilization, 0.6);
  // The local drives are written but neither read nor written to (both targets shared_fs): each
  // load warns once, at its own position (t.textproto:1:..., r.textproto:...); the scenarios agree.
  ASSERT_EQ(s.input_warnings.size(), 1u);
  EXPECT_NE(s.input_warnings[0].find(": storage.local: has no effect: "), std::string::npos) << s.input_warnings[0];
  ASSERT_EQ(again.input_warnings.size(), 1u);
  models::Scenario again_here = again;
  again_here.input_warnings = s.input_warnings;
  EXPECT_TRUE(again_here == s);  // and every other field
  // --set reaches the new fields (a local drive field only with something on the local drives).
  const models::Scenario set = load_scenario_text(
      text, "t.textproto", Format::text,
      {"storage.local.cache_policy=write_back", "storage.checkpoint_target=local", "cost.utilization=0.3"});
  EXPECT_EQ(set.storage->local.cache_policy, models::WriteCachePolicy::write_back);
  EXPECT_EQ(set.cost->utilization, 0.3);
}

TEST(StorageReliabilityCostIo, ChecksArePositioned) {
  const std::vector<std::string> e =
      errors_of(job("storage {\n"
                    "  local { drives: 2 raid: raid5 drive_write_gb_per_s: -1 }\n"
                    "  shared_fs { per_node_gb_per_s: 0 }\n"
                    "  bytes_per_sample: -5\n"
                    "}\n"
                    "reliability {\n"
                    "  failure { per_gpu_hour: -1e-5 }\n"
                    "  monte_carlo_draws: 0\n"
                    "}\n"
                    "cost { energy_price_usd_per_kwh: -0.1 utilization: 1.5 amortization_years: 0 }\n"));
  const std::vector<std::string> want = {
      "t.textproto:5:11: storage.local.drives: got 2 for raid5 (expected at least 3)",
      "t.textproto:5:33: storage.local.drive_write_gb_per_s: got -1 (expected a finite number > 0)",
      "t.textproto:6:15: storage.shared_fs.per_node_gb_per_s: got 0 (expected a finite number > 0)",
      "t.textproto:7:3: storage.bytes_per_sample: got -5 (expected a finite number >= 0)",
      "t.textproto:9:1: reliability.horizon_s: is 0 and no token budget is given (expected horizon_s > 0, or "
      "workload.training.train_tokens > 0, e.g. 2670796800: 20 tokens per parameter of this 133539840-parameter "
      "model, "
      "Hoffmann et al. 2022, the budget the run summary uses)",
      "t.textproto:10:3: reliability.failure[0].cause: not set (expected a cause name, unique in the list)",
      "t.textproto:10:13: reliability.failure[0].per_gpu_hour: got -1e-5 (expected a finite number >= 0)",
      "t.textproto:11:3: reliability.monte_carlo_draws: got 0 (expected an integer from 1 to 1000000: the "
      "simulator's range)",
      "t.textproto:13:8: cost.energy_price_usd_per_kwh: got -0.1 (expected a finite number >= 0 and <= 100: USD 100 "
      "per kWh, 200x retail)",
      "t.textproto:13:39: cost.utilization: got 1.5 (expected a fraction in (0, 1])",
      "t.textproto:13:56: cost.amortization_years: got 0 (expected a finite number > 0 and <= 100: a century)",
  };
  EXPECT_EQ(e, want);
}

TEST(StorageReliabilityCostIo, PricesWithoutDefaultsMustBeGiven) {
  const std::string mi300 =
      "cluster { node_template: \"mi300x_platform\" num_nodes: 1 }\n"
      "workload { model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: "
      "2048 }\n"
      "  parallel { tp: 2 pp: 2 dp: 2 } training { global_batch_size: 16 } }\n"
      "cost { }\n";
  const std::vector<std::string> e = errors_of(mi300);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0],
            "t.textproto:4:1: cost.cloud_price_per_gpu_hour_usd: no public rent or purchase price is recorded for "
            "MI300X (expected cost.cloud_price_per_gpu_hour_usd > 0 in USD, or cost.node_price_usd > 0; "
            "`traincast catalog --prices` lists the GPUs with defaults)");
  // Given prices are accepted, and either one alone prices its side (rent-only, own-only).
  for (const char* given : {"cost { node_price_usd: 250000 cloud_price_per_gpu_hour_usd: 3 }",
                            "cost { cloud_price_per_gpu_hour_usd: 3 }", "cost { node_price_usd: 250000 }"}) {
    std::string priced = mi300;
    priced.replace(priced.find("cost { }"), 8, given);
    EXPECT_NO_THROW(load_scenario_text(priced, "t.textproto", Format::text, {})) << given;
  }
}

// A slip of the exponent is refused, not priced (fresh-user finding: 1e300 USD/kWh printed a
// 60-digit cost); and hardware is not written off in less than a month.
TEST(StorageReliabilityCostIo, PricesHaveUpperBounds) {
  const std::string base =
      "cluster { node_template: \"dgx_h100\" num_nodes: 1 }\n"
      "workload { model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: "
      "2048 }\n"
      "  parallel { tp: 2 pp: 2 dp: 2 } training { global_batch_size: 16 } }\n"
      "cost { COST }\n";
  const auto errors_with = [&](const std::string& cost) {
    std::string t = base;
    t.replace(t.find("COST"), 4, cost);
    return errors_of(t);
  };
  EXPECT_EQ(errors_with("energy_price_usd_per_kwh: 1e300"),
            std::vector<std::string>{"t.textproto:4:8: cost.energy_price_usd_per_kwh: got 1e300 (expected a finite "
                                     "number >= 0 and <= 100: USD 100 per kWh, 200x retail)"});
  EXPECT_EQ(errors_with("node_price_usd: 1e300"),
            std::vector<std::string>{"t.textproto:4:8: cost.node_price_usd: got 1e300 (expected a price > 0 and <= "
                                     "1e+08 in USD: USD 100M for one server or rack; leave the field out for the "
                                     "GPU's default price, which `traincast catalog --prices` lists)"});
  EXPECT_EQ(errors_with("amortization_years: 1e-300"),
            std::vector<std::string>{"t.textproto:4:8: cost.amortization_years: got 1e-300 (expected at least 1/12, a "
                                     "month: hardware is not written off faster)"});
  std::string fine = base;
  fine.replace(fine.find("COST"), 4, "energy_price_usd_per_kwh: 0.5 amortization_years: 0.25 node_price_usd: 3.5e6");
  EXPECT_NO_THROW(load_scenario_text(fine, "t.textproto", Format::text, {}));
}

// Issue 21: a rent-only comparison needs no purchase price: H200 has a public rent but no public
// server price, and `cost { }` loads.
TEST(StorageReliabilityCostIo, RentOnlyNeedsNoPurchasePrice) {
  const std::string h200 =
      "cluster { node_template: \"hgx_h200\" num_nodes: 1 }\n"
      "workload { model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: "
      "2048 }\n"
      "  parallel { tp: 2 pp: 2 dp: 2 } training { global_batch_size: 16 } }\n"
      "cost { }\n";
  const models::Scenario s = load_scenario_text(h200, "t.textproto", Format::text, {});
  EXPECT_TRUE(s.cost.has_value());
}

TEST(StorageReliabilityCostIo, ReportJsonHasTheSectionKeys) {
  models::Report r;
  r.breakdown.storage_stall_s = 0.25;
  r.storage.modelled = true;
  r.storage.checkpoint_write_s = 12.5;
  r.reliability.modelled = true;
  r.reliability.goodput_mean = 0.93;
  r.reliability.causes.push_back({"Faulty GPU", 0.05, 148});
  r.cost.modelled = true;
  r.cost.payback_years = 3.1;
  const std::string json = report_to_json(r);
  for (const char* key : {"\"storage_stall_s\": 0.25", "\"storage\": {", "\"checkpoint_write_s\": 12.5",
                          "\"reliability\": {", "\"goodput_mean\": 0.93", "\"cause\": \"Faulty GPU\"", "\"cost\": {",
                          "\"payback_years\": 3.1", "\"breakeven_utilization\""})
    EXPECT_NE(json.find(key), std::string::npos) << key << "\n" << json;
  EXPECT_NE(json.find("\"payback_never\": false"), std::string::npos) << json;
  // Never paying back: no payback_years key (0 would read as "at once"), payback_never true.
  r.cost.payback_years = 0;
  r.cost.payback_never = true;
  const std::string never = report_to_json(r);
  EXPECT_EQ(never.find("\"payback_years\""), std::string::npos) << never;
  EXPECT_NE(never.find("\"payback_never\": true"), std::string::npos) << never;
}

// A --set of a local drive setting when nothing reads or writes the local drives would be silently
// ignored (without a storage section, data and checkpoints default to the shared file system):
// an error naming the override. A file may describe drives it does not use (round trips).
TEST(StorageReliabilityCostIo, LocalDriveOverrideWithoutLocalTargetIsAnError) {
  try {
    load_scenario_text(job(""), "t.textproto", Format::text, {"storage.local.raid=raid5"});
    ADD_FAILURE() << "no ScenarioError";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.errors(), (std::vector<std::string>{
                              "--set: storage.local.raid: has no effect: neither storage.data_source nor "
                              "storage.checkpoint_target is local (expected one of them set to local; both default to "
                              "shared_fs)"}));
  }
  EXPECT_NO_THROW(load_scenario_text(job(""), "t.textproto", Format::text,
                                     {"storage.local.raid=raid5", "storage.checkpoint_target=local"}));
  EXPECT_NO_THROW(load_scenario_text(job("storage { local { raid: raid5 } }\n"), "t.textproto", Format::text, {}));
}

}  // namespace
}  // namespace traincast::io
