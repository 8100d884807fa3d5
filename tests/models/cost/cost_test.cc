// Cost: capex, amortisation, energy, cost to train and buy-vs-rent payback by hand.
#include <gtest/gtest.h>

#include "models/cost/cost_model.h"

#include <stdexcept>
#include <utility>

namespace traincast::models {
namespace {

CostInputs eight_nodes() {
  CostInputs in;
  in.gpu = "H100-SXM5-80GB";
  in.nodes = 8;
  in.gpus_per_node = 8;
  in.switches = 3;
  in.cables = 128;
  in.spec.node_price_usd = 300000;
  in.spec.switch_price_usd = 30000;
  in.spec.cable_price_usd = 1000;
  in.spec.amortization_years = 4;
  in.spec.upkeep_fraction_per_year = 0.1;
  in.spec.energy_price_usd_per_kwh = 0.1;
  in.spec.cloud_price_per_gpu_hour_usd = 4.0;
  in.spec.utilization = 0.6;
  in.facility_power_w = 100000;  // 100 kW while training
  in.train_wall_clock_s = 10 * 3600.0;
  return in;
}

TEST(Cost, ByHand) {
  const CostReport r = evaluate_cost(eight_nodes());
  const double capex = 8 * 300000.0 + 3 * 30000.0 + 128 * 1000.0;  // 2,618,000
  EXPECT_DOUBLE_EQ(r.capex_usd, capex);
  EXPECT_DOUBLE_EQ(r.capex_per_year_usd, capex / 4);
  EXPECT_DOUBLE_EQ(r.upkeep_per_year_usd, capex * 0.1);
  const double busy_h = 8766 * 0.6;
  EXPECT_NEAR(r.energy_per_year_usd, 100.0 * busy_h * 0.1, 1e-6);
  const double own = capex / 4 + capex * 0.1 + 100.0 * busy_h * 0.1;
  EXPECT_NEAR(r.own_cost_per_gpu_hour_usd, own / (64 * busy_h), 1e-9);
  EXPECT_NEAR(r.train_gpu_hours, 640, 1e-9);
  EXPECT_NEAR(r.cloud_cost_to_train_usd, 2560, 1e-9);
  const double rent = 4.0 * 64 * busy_h;
  EXPECT_NEAR(r.payback_years, capex / (rent - capex * 0.1 - 100.0 * busy_h * 0.1), 1e-9);
  EXPECT_NEAR(r.breakeven_utilization, (capex / 4 + capex * 0.1) / (4.0 * 64 * 8766 - 100.0 * 8766 * 0.1), 1e-12);
  EXPECT_TRUE(r.energy_modelled);
}

// The default switch price is per port (fresh user, session 34: a 512-port switch was bought at the
// 64-port price, so a larger radix or a faster NIC's 144-port switch made capex cheaper).
TEST(Cost, DefaultSwitchPriceIsPerPortOfTheSwitchBought) {
  EXPECT_DOUBLE_EQ(default_switch_price_usd(0), 36000.0);
  EXPECT_DOUBLE_EQ(default_switch_price_usd(64), 36000.0);
  EXPECT_DOUBLE_EQ(default_switch_price_usd(144), 81000.0);
  EXPECT_DOUBLE_EQ(default_switch_price_usd(32), 18000.0);
  CostInputs in = eight_nodes();
  in.spec.switch_price_usd = 0;  // not given
  in.switch_ports = 512;
  in.switches = 1;
  EXPECT_DOUBLE_EQ(evaluate_cost(in).capex_usd, 8 * 300000.0 + 288000.0 + 128 * 1000.0);
  in.spec.switch_price_usd = 30000;  // given: one price for every switch, whatever its ports
  EXPECT_DOUBLE_EQ(evaluate_cost(in).capex_usd, 8 * 300000.0 + 30000.0 + 128 * 1000.0);
}

TEST(Cost, PaybackShortensWithUtilisationAndNeverWhenRentIsCheaper) {
  double prev = 1e300;
  for (double u : {0.3, 0.5, 0.7, 0.9, 1.0}) {
    CostInputs in = eight_nodes();
    in.spec.utilization = u;
    const double p = evaluate_cost(in).payback_years;
    EXPECT_GT(p, 0.0);
    EXPECT_LT(p, prev);
    prev = p;
  }
  CostInputs in = eight_nodes();
  in.spec.cloud_price_per_gpu_hour_usd = 0.01;
  EXPECT_EQ(evaluate_cost(in).payback_years, 0.0);  // never pays back
}

TEST(Cost, DefaultsAndMissingPrices) {
  CostInputs in = eight_nodes();
  in.spec.node_price_usd = 0;
  in.spec.cloud_price_per_gpu_hour_usd = 0;
  const CostReport r = evaluate_cost(in);
  EXPECT_DOUBLE_EQ(r.cloud_price_per_gpu_hour_usd, 3.20);  // Hyperstack on-demand, 2026-08-26
  EXPECT_DOUBLE_EQ(r.capex_usd, 8 * 317000.0 + 3 * 30000.0 + 128 * 1000.0);
  in.gpu = "MI300X";
  EXPECT_THROW(evaluate_cost(in), std::invalid_argument);
  in = eight_nodes();
  in.facility_power_w = 0;
  const CostReport no_energy = evaluate_cost(in);
  EXPECT_FALSE(no_energy.energy_modelled);
  EXPECT_EQ(no_energy.energy_per_year_usd, 0.0);
  EXPECT_FALSE(no_energy.note.empty());
}

// Issue 21: rent-only (no purchase price anywhere) prices the rent side and leaves owning out.
TEST(Cost, RentOnlyWithoutAPurchasePrice) {
  CostInputs in = eight_nodes();
  in.gpu = "H200-SXM-141GB";  // public rent, no public server price (models/cost/prices.cc)
  in.spec.node_price_usd = 0;
  in.spec.cloud_price_per_gpu_hour_usd = 0;
  const CostReport r = evaluate_cost(in);
  EXPECT_TRUE(r.rent_modelled);
  EXPECT_FALSE(r.own_modelled);
  EXPECT_DOUBLE_EQ(r.cloud_price_per_gpu_hour_usd, 3.99);
  EXPECT_NEAR(r.cloud_cost_to_train_usd, 3.99 * 640, 1e-9);
  EXPECT_EQ(r.capex_usd, 0.0);
  EXPECT_EQ(r.own_cost_to_train_usd, 0.0);
  EXPECT_EQ(r.payback_years, 0.0);
  EXPECT_EQ(r.node_price_source, "");
  EXPECT_NE(r.cloud_price_source.find("Hyperstack, 2026-08-26"), std::string::npos) << r.cloud_price_source;
  EXPECT_NE(r.note.find("rent only: no public purchase price for H200-SXM-141GB"), std::string::npos) << r.note;
}

// A public purchase price is for a server of a stated GPU count (HGX H100: 8); a node of another
// count (a 4-GPU HGX board, a one-GPU box) gets no default, not the 8-GPU server's price.
TEST(Cost, NodePriceDefaultsOnlyForTheServerSizeItPrices) {
  EXPECT_EQ(default_node_price_usd("H100-SXM5-80GB", 8), 317000.0);
  EXPECT_FALSE(default_node_price_usd("H100-SXM5-80GB", 4).has_value());
  EXPECT_FALSE(default_node_price_usd("H100-SXM5-80GB", 1).has_value());
  CostInputs in = eight_nodes();
  in.gpus_per_node = 4;
  in.spec.node_price_usd = 0;
  in.spec.cloud_price_per_gpu_hour_usd = 0;
  const CostReport r = evaluate_cost(in);
  EXPECT_FALSE(r.own_modelled);
  EXPECT_TRUE(r.rent_modelled);
  EXPECT_NEAR(r.cloud_cost_to_train_usd, 3.20 * 8 * 4 * 10, 1e-9);  // 32 GPUs for 10 h
  EXPECT_NE(r.note.find("is for a server of 8 GPUs and this node has 4"), std::string::npos) << r.note;
  in.spec.node_price_usd = 150000;  // the user's own price is taken whatever the size
  EXPECT_TRUE(evaluate_cost(in).own_modelled);
}

// Fresh-user finding: the node price is for the physical server or rack, and NVLink-domain
// partitions of it ("gb200_nvl72/36": 2 per rack) are bought as whole racks; a user's price and
// the catalog default both mean the whole product, so one rack costs the same however it is cut.
TEST(Cost, PartitionsAreChargedWholeRacks) {
  CostInputs in = eight_nodes();
  in.gpu = "GB200";
  in.switches = 0;
  in.cables = 0;
  in.spec.node_price_usd = 3e6;  // one GB200 NVL72 rack
  in.physical_gpus = 72;
  const auto rack_capex = [&](int nodes, int gpus_per_node) {
    in.nodes = nodes;
    in.gpus_per_node = gpus_per_node;
    in.nodes_per_physical = 72 / gpus_per_node;
    return evaluate_cost(in);
  };
  for (const auto& [nodes, gpn] : {std::pair{1, 72}, {2, 36}, {9, 8}}) {
    const CostReport r = rack_capex(nodes, gpn);
    EXPECT_DOUBLE_EQ(r.capex_usd, 3e6) << nodes << " x " << gpn;
    EXPECT_EQ(r.units_bought, 1) << nodes << " x " << gpn;
    EXPECT_NEAR(r.own_cost_per_gpu_hour_usd, rack_capex(1, 72).own_cost_per_gpu_hour_usd, 1e-12);
  }
  // 5 domains of 36 GPUs need 3 racks (the third half idle): whole racks are bought.
  EXPECT_EQ(rack_capex(5, 36).units_bought, 3);
  EXPECT_DOUBLE_EQ(rack_capex(5, 36).capex_usd, 9e6);
  // "/64": one 64-GPU domain per rack (8 spare GPUs), so 2 domains are 2 racks.
  EXPECT_DOUBLE_EQ(rack_capex(2, 64).capex_usd, 6e6);
  // The catalog default is for the whole server: an "hgx_h100/4" half is half the price.
  CostInputs half = eight_nodes();
  half.spec.node_price_usd = 0;
  half.gpus_per_node = 4;
  half.physical_gpus = 8;
  half.nodes_per_physical = 2;
  half.nodes = 16;
  const CostReport h = evaluate_cost(half);
  ASSERT_TRUE(h.own_modelled) << h.note;
  EXPECT_EQ(h.units_bought, 8);
  EXPECT_DOUBLE_EQ(h.capex_usd, evaluate_cost([] {
                                  CostInputs whole = eight_nodes();
                                  whole.spec.node_price_usd = 0;
                                  return whole;
                                }())
                                    .capex_usd);
}

TEST(Cost, OwnOnlyAndNeitherPrice) {
  CostInputs in = eight_nodes();
  in.gpu = "MI300X";  // neither price is public
  in.spec.cloud_price_per_gpu_hour_usd = 0;
  const CostReport r = evaluate_cost(in);
  EXPECT_TRUE(r.own_modelled);
  EXPECT_FALSE(r.rent_modelled);
  EXPECT_EQ(r.node_price_source, "scenario");
  EXPECT_GT(r.own_cost_to_train_usd, 0.0);
  EXPECT_EQ(r.cloud_cost_to_train_usd, 0.0);
  in.spec.node_price_usd = 0;
  EXPECT_THROW(evaluate_cost(in), std::invalid_argument);
}

}  // namespace
}  // namespace traincast::models
