// The semantic checks of how the cluster runs: power and thermal, storage, reliability and cost
// (scenario_checks.h).

#include <cmath>
#include <set>
#include <string>
#include <utility>

#include <google/protobuf/descriptor.h>

#include "models/cost/cost_model.h"
#include "models/io/scenario_checks.h"
#include "models/power/power_model.h"
#include "models/reliability/reliability_model.h"
#include "models/workload/transformer.h"
#include "traincast.pb.h"

namespace traincast::io::detail {

void check_power_thermal(const models::Scenario& s, Checker& k, const models::NodeTemplate* node,
                         const models::GpuSpec* gpu) {
  const models::PowerSpec& pw = s.power;
  const models::ThermalSpec& th = s.thermal;
  auto range = [&](const std::string& path, double v, double lo, double hi, const std::string& unit) {
    if (std::isfinite(v) && v >= lo && v <= hi) return true;
    k.error(path, "got " + Checker::number(v) + " (expected " + Checker::number(lo) + " to " + Checker::number(hi) +
                      unit + ")");
    return false;
  };
  if (k.finite_at_least("power.gpu_power_limit_w", pw.gpu_power_limit_w, 0.0, false) && gpu != nullptr &&
      pw.gpu_power_limit_w != 0.0) {
    // As nvidia-smi -pl: a cap below the board's minimum is refused, not silently exceeded.
    const double lo = models::min_power_limit_w(*gpu);
    if (pw.gpu_power_limit_w < lo || pw.gpu_power_limit_w > gpu->tdp_w) {
      // Above the TDP: the board's maximum limit (nvidia-smi's Max Power Limit is the TDP on these boards).
      const std::string why =
          pw.gpu_power_limit_w > gpu->tdp_w
              ? "nvidia-smi -pl refuses caps above its Max Power Limit, the TDP; leave the field out, or 0, for none"
          : gpu->min_power_limit_w >= lo
              ? "nvidia-smi -pl refuses caps below its Min Power Limit"
              : "below it the GPU draws more than the cap even at its lowest clock under full tensor load" +
                    std::string(gpu->min_power_limit_w > 0 ? " (its published Min Power Limit is " +
                                                                 Checker::number(gpu->min_power_limit_w) + " W)"
                                                           : "; the catalog has no published Min Power Limit for it");
      k.error("power.gpu_power_limit_w",
              "got " + Checker::number(pw.gpu_power_limit_w) + " W (expected 0 for no cap, or " + Checker::number(lo) +
                  " to " + Checker::number(gpu->tdp_w) + " W (the TDP) for " + gpu->name + ": " + why + ")");
    }
  }
  range("power.pue", pw.pue, 1.0, 3.0, " (facility / IT power; 1 = no overhead)");
  range("power.cpu_load_fraction", pw.cpu_load_fraction, 0.0, 1.0, "");
  if (pw.memory_bound_fraction) range("power.memory_bound_fraction", *pw.memory_bound_fraction, 0.0, 1.0, "");
  if (pw.comm_fraction) range("power.comm_fraction", *pw.comm_fraction, 0.0, 1.0, "");
  if (pw.psu_redundant && node != nullptr && gpu != nullptr) {
    const int count = models::node_power_spec(*node, *gpu).psu_count;
    if (k.int_field("power.psu_redundant", *pw.psu_redundant) && *pw.psu_redundant >= count)
      k.error("power.psu_redundant", "got " + std::to_string(*pw.psu_redundant) + " (expected 0 to " +
                                         std::to_string(count - 1) + ": " + node->name + " has " +
                                         std::to_string(count) + " power supplies)");
  }
  // -273.15 C is absolute zero; the ranges are what air and water loops of data centres run at.
  range("thermal.supply_air_c", th.supply_air_c, 0.0, 60.0, " C");
  range("thermal.coolant_c", th.coolant_c, 0.0, 70.0, " C");
  if (node != nullptr && th.gpu_airflow_fraction.size() > static_cast<std::size_t>(node->gpus_per_node))
    k.error("thermal.gpu_airflow_fraction", std::to_string(th.gpu_airflow_fraction.size()) + " values for " +
                                                std::to_string(node->gpus_per_node) +
                                                " GPUs per node (expected at most one per local GPU)");
  for (std::size_t i = 0; i < th.gpu_airflow_fraction.size(); ++i) {
    const double a = th.gpu_airflow_fraction[i];
    if (!(std::isfinite(a) && a > 0.0 && a <= 1.0))
      k.error("thermal.gpu_airflow_fraction[" + std::to_string(i) + "]",
              "got " + Checker::number(a) + " (expected a fraction > 0 and <= 1 of the design airflow)");
  }
  // The ranges a profile's fitted power_thermal takes (0 here = the default RC): R above 10 K/W
  // puts a 100 W GPU 1,000 K above its inlet; C above 1e6 J/K is a ton of copper per GPU.
  range("thermal.r_k_per_w", th.r_k_per_w, 0.0, 10.0, " K/W; 0 = the default");
  range("thermal.c_j_per_k", th.c_j_per_k, 0.0, 1e6, " J/K; 0 = the default");
  if (k.finite_at_least("thermal.rack_cooling_capacity_w", th.rack_cooling_capacity_w, 0.0, false) &&
      th.rack_cooling_capacity_w > 0 && th.cooling == models::Cooling::liquid)
    k.error("thermal.rack_cooling_capacity_w", "applies to air cooling (expected 0 with cooling: liquid)");
  if (node != nullptr && node->liquid_cooled && th.cooling == models::Cooling::air)
    k.error("thermal.cooling", "got air (expected liquid: " + node->name +
                                   " is built with cold plates only; leave it unset or write liquid)");
  if (k.int_field("thermal.nodes_per_rack", th.nodes_per_rack) && node != nullptr && node->gpus_per_rack > 0 &&
      th.nodes_per_rack != node->gpus_per_rack / node->gpus_per_node)
    k.error("thermal.nodes_per_rack", "got " + std::to_string(th.nodes_per_rack) + " (expected " +
                                          std::to_string(node->gpus_per_rack / node->gpus_per_node) + ": " +
                                          node->name + " is a rack of " + std::to_string(node->gpus_per_rack) +
                                          " GPUs in nodes of " + std::to_string(node->gpus_per_node) +
                                          "; leave it unset)");
}

namespace {

/// reliability: failure causes unique, each with a rate in [0, 1] per component-hour; the
/// checkpoint interval, restart overhead and horizon within the simulator's range.
void check_reliability(const models::Scenario& s, Checker& k) {
  using std::to_string;
  if (!s.reliability) return;
  const models::ReliabilitySpec& r = *s.reliability;
  std::set<std::string> causes;
  for (std::size_t i = 0; i < r.failures.size(); ++i) {
    const std::string at = "reliability.failure[" + to_string(i) + "]";
    const models::FailureRate& f = r.failures[i];
    if (f.cause.empty()) {
      k.error(at + ".cause", std::string(k.present(at + ".cause") ? "is empty" : "not set") +
                                 " (expected a cause name, unique in the list)");
    } else if (!causes.insert(f.cause).second) {
      // Quoted from a named string, not a temporary: GCC 12 warns falsely (-Wrestrict) on
      // "\"" + temporary here.
      const std::string cause = detail::clip(f.cause);
      k.error(at + ".cause", "\"" + cause + "\" is used by an earlier failure (expected a unique name)");
    }
    k.finite_at_least(at + ".per_gpu_hour", f.per_gpu_hour, 0.0, false);
    k.finite_at_least(at + ".per_node_hour", f.per_node_hour, 0.0, false);
    // A failure written without a rate would draw nothing and still print as a cause.
    if (!k.present(at + ".per_gpu_hour") && !k.present(at + ".per_node_hour"))
      k.error(at,
              "has no rate (expected per_gpu_hour or per_node_hour, e.g. per_gpu_hour: 7e-6; 0 states a "
              "cause that never fails)");
    if (f.per_gpu_hour > 1.0 || f.per_node_hour > 1.0) {
      k.error(at + (f.per_gpu_hour > 1.0 ? ".per_gpu_hour" : ".per_node_hour"),
              "more than one failure per hour per component (expected a rate <= 1: failures per GPU-hour or "
              "node-hour, e.g. 7e-6)");
    }
  }
  if (k.finite_at_least("reliability.checkpoint_interval_s", r.checkpoint_interval_s, 0.0, false) &&
      r.checkpoint_interval_s > 0 && r.checkpoint_interval_s < 1.0) {
    k.error("reliability.checkpoint_interval_s",
            "got " + Checker::number(r.checkpoint_interval_s) + " (expected 0 for Daly's optimum, or at least 1 s)");
  }
  if (k.finite_at_least("reliability.restart_overhead_s", r.restart_overhead_s, 0.0, false) &&
      r.restart_overhead_s > models::kMaxFailureWindowS)
    k.error("reliability.restart_overhead_s", "got " + Checker::number(r.restart_overhead_s) +
                                                  " (expected at most 3.2e8 s, about 10 years: the simulator's range)");
  if (r.horizon_s > models::kMaxFailureWindowS && std::isfinite(r.horizon_s)) {
    k.error("reliability.horizon_s", "got " + Checker::number(r.horizon_s) +
                                         " (expected at most 3.2e8 s, about 10 years: the simulator's range)");
  }
  if (k.finite_at_least("reliability.horizon_s", r.horizon_s, 0.0, false) && r.horizon_s == 0 &&
      s.training.train_tokens <= 0) {
    // The run summary's default budget is only printed, never simulated: failures are drawn over
    // a window the user states, so the error offers that budget as a value to write.
    std::string example;
    const double params = s.model.family == models::ModelFamily::resnet ? 0.0 : models::total_parameters(s.model);
    if (std::isfinite(params) && params > 0) {
      example = ", e.g. " + Checker::number(models::kDefaultTokensPerParameter * params) + ": " +
                Checker::number(models::kDefaultTokensPerParameter) + " tokens per parameter of this " +
                Checker::number(params) + "-parameter model, Hoffmann et al. 2022, the budget the run summary uses";
    }
    k.error("reliability.horizon_s",
            "is 0 and no token budget is given (expected horizon_s > 0, or "
            "workload.training.train_tokens > 0" +
                example + ")");
  }
  k.int_field("reliability.monte_carlo_draws", r.monte_carlo_draws);
}

}  // namespace

std::vector<std::string> unused_local_storage_notes(const models::Scenario& s, const Checker& k) {
  if (!s.storage || s.storage->data_source == models::StorageTarget::local ||
      s.storage->checkpoint_target == models::StorageTarget::local || !k.present("storage.local"))
    return {};
  const google::protobuf::Descriptor* local = traincast::proto::LocalStorageSpec::descriptor();
  for (int i = 0; i < local->field_count(); ++i)
    if (k.overridden("storage.local." + local->field(i)->name())) return {};  // refused as an error
  return {k.where("storage.local") +
          ": storage.local: has no effect: neither storage.data_source nor storage.checkpoint_target is local, so "
          "nothing reads or writes these drives (expected storage.data_source: local or storage.checkpoint_target: "
          "local for them to be modelled; both default to shared_fs)"};
}

void check_storage_reliability_cost(const models::Scenario& s, const std::string& gpu_name, int physical_gpus,
                                    Checker& k) {
  using std::to_string;
  if (s.storage) {
    const models::StorageSpec& st = *s.storage;
    const models::LocalStorageSpec& l = st.local;
    // A local drive setting given by an override with nothing on the local drives would be
    // silently ignored (e.g. --set storage.local.raid=... on a scenario without a storage
    // section, whose defaults read and checkpoint on the shared file system). A file may describe
    // drives it does not use (and a written-back scenario always has them).
    if (st.data_source != models::StorageTarget::local && st.checkpoint_target != models::StorageTarget::local) {
      const google::protobuf::Descriptor* local = traincast::proto::LocalStorageSpec::descriptor();
      for (int i = 0; i < local->field_count(); ++i) {
        const std::string path = "storage.local." + local->field(i)->name();
        if (!k.overridden(path)) continue;
        k.error(path,
                "has no effect: neither storage.data_source nor storage.checkpoint_target is local (expected "
                "one of them set to local; both default to shared_fs)");
        break;
      }
    }
    if (k.int_field("storage.local.drives", l.drives)) {
      const int need[] = {1, 2, 2, 3, 4};
      const char* names[] = {"raid0", "raid1", "raid10", "raid5", "raid6"};
      const int level = static_cast<int>(l.raid);
      if (l.drives < need[level] || (l.raid == models::RaidLevel::raid10 && l.drives % 2 != 0)) {
        k.error(
            "storage.local.drives",
            "got " + to_string(l.drives) + " for " + names[level] + " (expected " +
                (l.raid == models::RaidLevel::raid10 ? "an even number >= 2" : "at least " + to_string(need[level])) +
                ")");
      }
    }
    k.finite_at_least("storage.local.drive_read_gb_per_s", l.drive_read_gb_per_s, 0.0, true);
    k.finite_at_least("storage.local.drive_write_gb_per_s", l.drive_write_gb_per_s, 0.0, true);
    k.finite_at_least("storage.local.controller_cache_bytes", l.controller_cache_bytes, 0.0, false);
    k.finite_at_least("storage.local.controller_gb_per_s", l.controller_gb_per_s, 0.0, true);
    k.finite_at_least("storage.shared_fs.aggregate_read_gb_per_s", st.shared_fs.aggregate_read_gb_per_s, 0.0, true);
    k.finite_at_least("storage.shared_fs.aggregate_write_gb_per_s", st.shared_fs.aggregate_write_gb_per_s, 0.0, true);
    k.finite_at_least("storage.shared_fs.per_node_gb_per_s", st.shared_fs.per_node_gb_per_s, 0.0, true);
    k.finite_at_least("storage.bytes_per_token", st.bytes_per_token, 0.0, false);
    k.finite_at_least("storage.bytes_per_sample", st.bytes_per_sample, 0.0, false);
    k.finite_at_least("storage.checkpoint_interval_s", st.checkpoint_interval_s, 0.0, false);
    k.finite_at_least("storage.snapshot_gb_per_s", st.snapshot_gb_per_s, 0.0, false);
  }
  check_reliability(s, k);
  if (s.cost) {
    const models::CostSpec& c = *s.cost;
    // Upper bounds far above any real price, so that a slip of the exponent (1e300) is refused
    // instead of printing a 60-digit cost: a GB200 NVL72 rack lists near USD 3.5M, retail
    // electricity tops out near USD 0.5/kWh, the dearest cloud GPU-hour near USD 15.
    k.finite_within("cost.cable_price_usd", c.cable_price_usd, 0.0, false, 1e6, "USD 1M for one cable");
    k.finite_within("cost.amortization_years", c.amortization_years, 0.0, true, 100.0, "a century");
    if (c.amortization_years > 0 && c.amortization_years < 1.0 / 12.0)
      k.error("cost.amortization_years", "got " + Checker::number(c.amortization_years) +
                                             " (expected at least 1/12, a month: hardware is not written off faster)");
    k.finite_within("cost.upkeep_fraction_per_year", c.upkeep_fraction_per_year, 0.0, false, 10.0,
                    "ten times the purchase price a year");
    k.finite_within("cost.energy_price_usd_per_kwh", c.energy_price_usd_per_kwh, 0.0, false, 100.0,
                    "USD 100 per kWh, 200x retail");
    // The prices with a default: absent (0 in the struct) is the default (the GPU's, the switch's
    // for its radix), so a written 0 is refused with the rest, lest it silently price the cluster at
    // the default's figure.
    struct Price {
      const char* path;
      double value, maximum;
      const char* why;
      const char* default_is;
    };
    const char* const gpu_default = "the GPU's default price, which `traincast catalog --prices` lists";
    for (const Price& p :
         {Price{"cost.node_price_usd", c.node_price_usd, 1e8, "USD 100M for one server or rack", gpu_default},
          Price{"cost.switch_price_usd", c.switch_price_usd, 1e7, "USD 10M for one switch",
                "the default, USD 36,000 per 64-port switch and per port for another cluster.fabric.leaf_ports"},
          Price{"cost.cloud_price_per_gpu_hour_usd", c.cloud_price_per_gpu_hour_usd, 1e4, "USD 10,000 per GPU-hour",
                gpu_default}}) {
      if (k.present(p.path) && !(std::isfinite(p.value) && p.value > 0 && p.value <= p.maximum))
        k.error(p.path, "got " + Checker::number(p.value) +
                            " (expected a price > 0 and <= " + Checker::number(p.maximum) + " in USD: " + p.why +
                            "; leave the field out for " + p.default_is + ")");
    }
    if (!(std::isfinite(c.utilization) && c.utilization > 0 && c.utilization <= 1)) {
      k.error("cost.utilization", "got " + Checker::number(c.utilization) + " (expected a fraction in (0, 1])");
    }
    // Either side alone is priced (rent-only needs no purchase price): refused only when the
    // scenario gives neither price and the GPU has no public default for either. An unknown GPU
    // (a node template or GPU name already refused) has no name to say this of.
    if (!gpu_name.empty() && !k.present("cost.node_price_usd") && !k.present("cost.cloud_price_per_gpu_hour_usd") &&
        !models::default_node_price_usd(gpu_name, physical_gpus) &&
        !models::default_cloud_price_per_gpu_hour_usd(gpu_name)) {
      k.error("cost.cloud_price_per_gpu_hour_usd",
              "no public rent or purchase price is recorded for " + gpu_name +
                  " (expected cost.cloud_price_per_gpu_hour_usd > 0 in USD, or cost.node_price_usd > 0; "
                  "`traincast catalog --prices` lists the GPUs with defaults)");
    }
  }
}

}  // namespace traincast::io::detail
