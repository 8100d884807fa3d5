#pragma once
// Human-readable output of the CLI: every number with its unit.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "models/hardware/leaf_ports.h"
#include "models/io/validation_case.h"
#include "models/spec/report.h"
#include "models/spec/scenario.h"

namespace traincast::cli {

/// Where power.pue's default (models::PowerSpec::pue, 1.58) comes from, as run and compare quote it
/// beside a liquid-cooled scenario run at that default (cooling does not change PUE).
inline constexpr std::string_view kDefaultPueSource =
    "the Uptime Institute Global Data Center Survey 2023's average over the data centers surveyed";

/// "12.35" style fixed-point formatting.
std::string format_fixed(double value, int decimals);
/// format_fixed with a "+" before a value >= 0 ("+12.35", "-0.50").
std::string signed_fixed(double value, int decimals);
/// Seconds in the most readable unit (µs, ms, s, h, days).
std::string format_duration(double seconds);
/// Bytes as GiB (2^30) with one decimal (MiB below 1 GiB).
std::string format_gib(double bytes);
/// 1234567 -> "1,234,567" (rounded to an integer).
std::string with_thousands(double v);
/// Left-aligned (pad) or right-aligned (lpad) to `width` characters; longer text is kept whole.
std::string pad(const std::string& s, std::size_t width);
std::string lpad(const std::string& s, std::size_t width);
/// "50.3 GiB per GPU of 40.0 GiB, 10.3 GiB over": what a GPU needs against what it has. Where one
/// decimal would print the two alike ("40.0 GiB of 40.0 GiB", issue 21) three are printed; the excess
/// is named whenever need > have.
std::string format_memory_need(double need_bytes, double have_bytes);
/// Energy in joules as kWh (3 decimals) from 1 kWh, Wh (1 decimal) from 1 Wh, else J (1 decimal):
/// "7.942 kWh", "54.0 Wh", "6.1 J" (a short iteration printed "0.000 kWh").
std::string format_energy(double joules);
/// Facility-scale power: kW (1 decimal) below 1 MW, else MW (2 decimals): "107.0 kW", "23.23 MW".
std::string format_power(double watts);
/// Energy to train: "0.42 kWh" below 10 kWh, "757 kWh" below 1,000 kWh, else MWh to three
/// significant figures at least: "4.93 MWh", "49.3 MWh", "37,968 MWh".
std::string format_energy_kwh(double kwh);
/// A count and its noun, plural unless 1: "1 node", "2 nodes", "0 switches".
std::string count_of(long long n, const std::string& noun);
/// A count with a K, M, B, T, P or E suffix: 15e12 -> "15.0T"; small counts as they are.
std::string format_count(double v);
/// FLOP count with an SI prefix ("60.7 PFLOP").
std::string format_flop(double flop);
/// The leaf oversubscription the cluster is built with, as the run header prints it after the
/// fabric's name: " (2.0:1)" where it is the one asked for, " (1:1, 1:1 ports per leaf; 2.0:1
/// asked)" where whole up-link ports make it another (summary_fabric.cc), " (non-blocking: one
/// leaf group; 2.0:1 asked)"; "" for a non-blocking fabric asked as such, one node or another kind.
std::string fabric_ratio_text(const models::ClusterSpec& cluster);
/// A leaf's down and up ports as models::Cluster builds them (over its fabric slots, with its NICs
/// per node; whole up-link ports): up 0 for one leaf group, one node, or a fabric without leaves
/// (torus, none). Builds only the cluster's sizes, not its network.
models::LeafPortsUsed built_leaf_ports(const models::ClusterSpec& cluster);

/// The "Overrides" section: one line per cluster.overrides entry (the first 8) with what the run
/// measured on its element, and, where `traincast run` or `compare` simulated the job without them
/// (OverridesReport::cost_known), what they cost per iteration. "" without overrides. `of`: the
/// side it belongs to in `compare` ("Overrides of B (cluster.overrides)"); empty for `run`.
std::string format_overrides(const models::Report& r, const std::string& of = "");
/// What entry `e` of `ov` did, as its line of the Overrides section says after "[i] SELECT SETTING: "
/// ("carried 0.00 GB per iteration ...", "SM clock 1,782 of 1,980 MHz while computing ...").
std::string override_effect_text(const models::OverridesReport& ov, const models::OverrideEffectReport& e);

/// The rule of the token budget `run` and `compare` use for a scenario that gives none (the
/// `train_tokens_source` of their JSON).
inline constexpr const char* kDefaultBudgetRule = "20 tokens per parameter (Hoffmann et al. 2022), the default budget";
/// That budget: models::kDefaultTokensPerParameter x the model's parameters; 0 for a ResNet (no tokens).
double default_token_budget(const models::Scenario& scenario);
/// Seconds to train the default budget without failures: whole iterations (ceil(budget / tokens
/// per iteration) x iteration_time_s), as the report counts a scenario's; 0 without a budget
/// (a ResNet) or an iteration time.
double default_budget_time_s(const models::Scenario& scenario, const models::Report& report);
/// The report as `run --json` writes it: without a budget in the scenario, train_tokens is the
/// default budget the summary's "To train" line uses (train_tokens_source kDefaultBudgetRule) and
/// time_to_train_s its time, default_budget_time_s (no failures counted; 0 for a run that does not
/// fit in memory), with the energy and rent to train that the summary's line prints. With a
/// scenario budget and no cost section, the catalog's rent to train it is added likewise; a cost
/// section's own figures are kept.
models::Report with_default_budget(const models::Scenario& scenario, models::Report report);

/// The memory model's error against measured peaks per GPU, as a fraction of the predicted peak:
/// the case-weighted MAPE of docs/accuracy.md's memory table (torchtitan 20 peaks, 9.4 %; BLOOM 69,
/// 13.4 %; `traincast validate` on development/torchtitan_memory and bloom_memory). Measured
/// peaks are mostly above the prediction (signed -2.6 % and -13.3 %).
inline constexpr double kMemoryModelMapeFraction = (20 * 0.094 + 69 * 0.134) / 89;
/// true when a run fits but its headroom (capacity - predicted peak) is within the memory model's
/// error: `plan`'s "!", `run`'s "tight" and `compare`'s "!" (JSON `memory_tight`).
bool tight_memory(const models::MemoryBreakdown& memory);
/// "within the memory model's error, +/-12.5 % of the peak against 89 measured peaks, which are
/// usually higher than predicted (docs/accuracy.md): it may not fit" — the words of every mark.
std::string tight_memory_reason();

/// The `traincast run` summary. origin: the scenario file (or "(embedded default)");
/// wall_s: simulation wall time (printed, never part of the JSON report); set_changed: a --set
/// (other than options.*) changed the scenario, so its description (the file's fixed text) is
/// marked as written before it.
std::string format_summary(const models::Scenario& scenario, const models::Report& report, const std::string& origin,
                           double wall_s, bool set_changed = false);

/// Storage, failures and cost sections of the summary (empty when none was modelled).
std::string format_job_effects(const models::Report& report);

std::string format_catalog();
/// `traincast catalog --prices`: per catalog GPU, the default node price and rent with kind, vendor,
/// date, region and page (models/cost/prices.h), or why there is none.
std::string format_prices();

/// For the run report's Power section: a line per node group (or the cluster's template) that is a
/// rack cut into NVLink domains with GPUs left over (gb200_nvl72/64: 8 per rack), saying that those
/// spare GPUs draw nothing in the model and what they would draw idle (the GPU's idle_w x their
/// count); "" for none. The power model charges simulated domains only (models/power, docs/hardware.md).
std::string spare_gpus_note(const models::ClusterSpec& cluster);

/// `traincast catalog --json F`: {"gpus": [...], "nics": [...], "node_templates": [...], "prices":
/// [...]}, every catalog figure in SI units (FLOP/s, bytes, bytes/s, W, deg C) with its source;
/// a missing price is {"usd": null, "missing": why} (tools/cli/catalog_json.cc, docs/python.md).
std::string catalog_to_json();

}  // namespace traincast::cli
