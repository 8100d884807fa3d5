#pragma once
// `traincast compare` (issue 21): several scenarios (or one scenario with one field varied) run
// side by side, one row of buyer's figures each — time, time to train a token budget with goodput,
// tokens/s, MFU, memory headroom, power, energy, rent and own cost — and a verdict that says when a
// difference is within the model's validated error. compare_command.cc loads the scenarios and
// prints; this library part (compare.cc, compare_format.cc) runs them and formats the result, so
// another front end can call compare_scenarios and convert the same CompareResult.

#include <string>
#include <vector>

#include "models/spec/report.h"
#include "models/spec/scenario.h"

namespace traincast::cli {

/// One side of a comparison, as loaded (with its own overrides already applied).
struct CompareInput {
  std::string label;   ///< column name: the scenario's file name, or "field=value" for --vary
  std::string origin;  ///< the file ("(embedded default)" when none)
  models::Scenario scenario;
  /// The reliability section is compare_defaults' (the user gave none): a budget too long for the
  /// failure draws then leaves failures out of that column, said in its failures_note, instead of
  /// refusing a section the user never wrote.
  bool reliability_added = false;
  /// The column's --set values and --vary assignment (last, with last_option "--vary"): a price one
  /// of them gave is sourced to that option, not "scenario" (name_price_options, cli_util.h).
  std::vector<std::string> overrides;
  std::string last_option;
};

/// The model's validated error for a GPU: MAPE of iteration time / tokens/s against published runs
/// (docs/accuracy.md, the CTest-gated sources). Absent (cases 0) for a GPU with no such runs.
struct ErrorBand {
  double mape_pct = 0.0;
  int cases = 0;  ///< runs scored
  /// The error of a ratio of two predictions on this GPU [%]: over the ordered pairs (i, j), i != j,
  /// of the same gated runs, the mean |(predicted_i / measured_i) / (predicted_j / measured_j) - 1|
  /// of their speeds (tokens/s, or 1 / iteration time). What two runs on one GPU, precision and
  /// compute model are judged by: their errors share the GPU's systematic part, which cancels in
  /// the ratio, and the spread between runs is what is left (docs/compare.md). 0 with pairs 0
  /// (no band, or a mixed cluster's).
  double ratio_mape_pct = 0.0;
  int ratio_pairs = 0;
  std::string source;  ///< the sources and their MAPEs, as docs/accuracy.md prints them
  std::string absent;  ///< with cases 0: why there is none, in words ("H20 has no validated error band")
};

/// The band for `gpu` (a catalog name) under `compute_model` (the report's, "training_fit" or
/// "kernel"); cases 0 when none is validated. The gated figures are training_fit's: a kernel-model
/// run has no band (its development figures are in docs/accuracy.md, not gated).
ErrorBand model_error_band(const std::string& gpu, const std::string& compute_model = "training_fit");

/// One column of the comparison. Times in seconds, power in W, energy in kWh, money in USD.
struct CompareRow {
  std::string label, origin, scenario_name, gpu;
  std::string model_name;         ///< workload.model.name
  double model_parameters = 0.0;  ///< total parameters of a transformer (0: another family)
  int gpus = 0, nodes = 0;
  models::Report report;  ///< the whole report (callers read the rest here)
  double iteration_time_s = 0.0;
  double tokens_per_s = 0.0;           ///< samples/s: images/s for a ResNet (`images`)
  bool images = false;                 ///< a ResNet: its samples are images, not tokens
  double mfu = 0.0;                    ///< 0..1
  double memory_headroom_bytes = 0.0;  ///< HBM capacity - peak of the fullest GPU (< 0: out of memory)
  bool oom = false;
  bool memory_tight = false;           ///< fits, with headroom within the memory model's error (tight_memory)
  double train_tokens = 0.0;           ///< the budget the days are for (0: none, a ResNet without one)
  std::string token_budget_source;     ///< "scenario", "--tokens" or the default's rule
  double goodput = 1.0;                ///< mean useful/wall fraction from the reliability model
  bool goodput_drawn = false;          ///< the reliability model drew failures for this row's budget
  std::string failures_note;           ///< why failures were not drawn for a default section (else empty)
  double wall_clock_to_train_s = 0.0;  ///< with goodput (failures, restarts, checkpoints)
  double facility_average_w = 0.0, facility_peak_w = 0.0;  ///< IT x PUE
  double energy_to_train_kwh = 0.0;                        ///< facility average x wall clock to train
  bool rent_priced = false, own_priced = false;
  double rent_usd_per_gpu_hour = 0.0, rent_to_train_usd = 0.0;
  double own_usd_per_gpu_hour = 0.0, own_to_train_usd = 0.0, capex_usd = 0.0;
  double payback_years = 0.0;       ///< 0 with payback_never or when not both priced
  double amortization_years = 0.0;  ///< the hardware's life in the cost model (payback beyond it: never within it)
  bool payback_never = false;
  std::string rent_source, node_price_source;  ///< provenance lines (models/cost/prices.h)
  /// Who publishes the rent: the catalog price's vendor ("Hyperstack"), "the scenario" for a rent the
  /// scenario file gives, "--set" or "--vary" for one those options give; empty when not priced. Two rents of different
  /// sources are said so in the verdict.
  std::string rent_vendor;
  std::string precision;  ///< workload.training.precision ("bf16", "fp8", ...)
  ErrorBand band;
  /// Where this row is a liquid- or air-cooled column at power.pue's default beside one of the other
  /// cooling: the text's "PUE: ..." paragraph (cooling_pue_row_notes, compare_notes.h); else empty.
  std::string pue_note;
};

struct CompareResult {
  std::vector<CompareRow> rows;       ///< in input order; the first is the baseline "A"
  std::vector<std::string> verdicts;  ///< one line per other row, against the baseline
};

/// Fills what a buyer's comparison needs and is absent from a scenario: a token budget (the
/// `tokens` argument when > 0, else 20 tokens per parameter, Hoffmann et al. 2022), a reliability
/// section (defaults: Llama 3 failure rates) and a cost section (defaults: catalog prices) when the
/// GPU has any public price. Returns the overrides that do it (to load the scenario again with).
std::vector<std::string> compare_defaults(const models::Scenario& sc, double tokens, std::string& budget_source);

/// What compare_scenarios reports its progress as (models::report_progress: columns simulated
/// of the inputs), for the command's progress line on a terminal.
inline constexpr const char* kCompareProgress = "compare: scenarios simulated";

/// Simulates every input (in parallel on `jobs` threads; output identical for any value) and
/// builds the rows and verdicts. Reports progress as kCompareProgress. Throws what
/// models::simulate_training throws.
CompareResult compare_scenarios(const std::vector<CompareInput>& inputs, const std::vector<std::string>& budget_sources,
                                int jobs);

/// The verdict of row `b` against the baseline `a`: speed, cost per token, power, each difference
/// judged against the two rows' error bands in quadrature as printed, and what makes it no answer.
std::string compare_verdict(const CompareRow& a, const CompareRow& b);
/// The table (metrics down, scenarios across), price provenance, error bands and verdicts.
std::string format_compare(const CompareResult& r);
/// One CSV line per row, a header with units first.
std::string compare_to_csv(const CompareResult& r);
/// {"rows": [{...}], "verdicts": [...]}: the CSV's figures per row plus provenance, stable keys.
std::string compare_to_json(const CompareResult& r);

}  // namespace traincast::cli
