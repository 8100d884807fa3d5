// Printing `traincast compare`'s result: the table, CSV and JSON (tools/cli/compare.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "models/cost/prices.h"
#include "models/io/report_io.h"
#include "tools/cli/cli_util.h"
#include "tools/cli/compare.h"
#include "tools/cli/summary.h"
#include "tools/cli/summary_cost.h"

namespace traincast::cli {
namespace {

/// Whole dollars with thousands separators; cents below $100, where whole dollars would round a
/// short job's cost to "$0" (a cost of 0 stays "$0").
std::string usd(double v) {
  std::string s = "$";
  s += v > 0 && v < 100 ? format_fixed(v, 2) : with_thousands(v);
  return s;
}

/// "$3.99": appended, not "$" + ... (bogus GCC 12 -Wrestrict, GCC bug 105651).
std::string dollars(double v, int decimals) {
  std::string s = "$";
  s += format_fixed(v, decimals);
  return s;
}

/// Days from a tenth of a day (two decimals below 10 days); a shorter job in s, min or h, where
/// "0.00 days" would hide it.
std::string train_time_text(double s) {
  if (s <= 0) return "-";
  if (s < 60) return format_fixed(s, 1) + " s";
  if (s < 3600) return format_fixed(s / 60.0, 1) + " min";
  if (s < 8640) return format_fixed(s / 3600.0, 2) + " h";
  return format_fixed(s / 86400.0, s < 864000 ? 2 : 1) + " days";
}

std::string tokens_text(double t) {
  if (t <= 0) return "-";
  const char* units[] = {"", "K", "M", "B", "T"};
  int u = 0;
  while (t >= 1000.0 && u < 4) t /= 1000.0, ++u;
  return format_fixed(t, 2) + units[u] + " tokens";
}

/// The table's rows: label, then one cell per scenario.
std::vector<std::vector<std::string>> table_cells(const CompareResult& r) {
  std::vector<std::vector<std::string>> t;
  auto row = [&](const std::string& name, auto cell) {
    std::vector<std::string> line{name};
    for (const CompareRow& w : r.rows) line.push_back(cell(w));
    t.push_back(std::move(line));
  };
  row("", [](const CompareRow& w) { return w.label; });
  row("GPUs", [](const CompareRow& w) {
    // A mixed cluster: each node group's GPUs ("8 x A100-SXM4-80GB + 8 x H100-SXM5-80GB").
    const std::vector<models::NodeGroupReport>& groups = w.report.mixed.groups;
    if (groups.empty() || w.nodes <= 0) return std::to_string(w.gpus) + " x " + w.gpu;
    std::string out;
    for (const models::NodeGroupReport& g : groups)
      out += (out.empty() ? "" : " + ") + std::to_string(static_cast<long long>(g.num_nodes) * (w.gpus / w.nodes)) +
             " x " + g.gpu;
    return out;
  });
  // How compute was timed, when a side does not run the default (as `run`'s Compute line): the
  // kernel model ranks by other GEMM and attention times, and carries no error band.
  // (The report always names its compute model: training_report.cc report_throughput.)
  const bool other_model = std::any_of(r.rows.begin(), r.rows.end(),
                                       [](const CompareRow& w) { return w.report.compute_model != "training_fit"; });
  if (other_model) {
    row("compute model", [](const CompareRow& w) {
      const std::string& m = w.report.compute_model;
      return m == "training_fit" || w.report.attention_kernel.empty() ? m
                                                                      : m + ", attention " + w.report.attention_kernel;
    });
  }
  row("time per iteration", [](const CompareRow& w) { return format_duration(w.iteration_time_s); });
  // A ResNet's throughput is images/s (the report's tokens_per_s field holds samples/s for it):
  // the row says which, per cell when the columns differ.
  const auto is_resnet = [](const CompareRow& w) { return w.images; };
  const bool any_resnet = std::any_of(r.rows.begin(), r.rows.end(), is_resnet);
  const bool all_resnet = std::all_of(r.rows.begin(), r.rows.end(), is_resnet);
  if (!any_resnet || all_resnet) {
    row(all_resnet ? "images/s" : "tokens/s", [](const CompareRow& w) { return with_thousands(w.tokens_per_s); });
  } else {
    row("throughput per second",
        [&](const CompareRow& w) { return with_thousands(w.tokens_per_s) + (is_resnet(w) ? " images" : " tokens"); });
  }
  row("MFU", [](const CompareRow& w) { return format_fixed(100 * w.mfu, 1) + " %"; });
  row("memory headroom per GPU", [](const CompareRow& w) {
    return w.oom ? "OUT OF MEMORY (" + format_gib(-w.memory_headroom_bytes) + " over)"
                 : format_gib(w.memory_headroom_bytes) + " free" + (w.memory_tight ? " !" : "");
  });
  row("token budget", [](const CompareRow& w) {
    return tokens_text(w.train_tokens) + (w.token_budget_source == "scenario" ? "" : " *");
  });
  // A run that does not fit has no time to train, so no goodput and no cost to train: "-", not 0.
  row("goodput (failures)", [](const CompareRow& w) {
    if (w.oom) return std::string("-");
    if (!w.failures_note.empty()) return std::string("not drawn **");
    return format_fixed(100 * w.goodput, 2) + " %";
  });
  row("time to train", [](const CompareRow& w) { return train_time_text(w.wall_clock_to_train_s); });
  row("facility power avg / peak",
      [](const CompareRow& w) { return format_power(w.facility_average_w) + " / " + format_power(w.facility_peak_w); });
  row("energy to train", [](const CompareRow& w) {
    return w.energy_to_train_kwh > 0 ? format_energy_kwh(w.energy_to_train_kwh) : std::string("-");
  });
  row("rent per GPU-hour", [](const CompareRow& w) {
    return w.rent_priced ? dollars(w.rent_usd_per_gpu_hour, 2) : std::string("not priced");
  });
  row("rent to train", [](const CompareRow& w) {
    return w.rent_priced && w.train_tokens > 0 && !w.oom ? usd(w.rent_to_train_usd) : std::string("-");
  });
  row("own per GPU-hour (TCO)", [](const CompareRow& w) {
    return w.own_priced ? dollars(w.own_usd_per_gpu_hour, 2) : std::string("not priced");
  });
  row("own to train (TCO)", [](const CompareRow& w) {
    return w.own_priced && w.train_tokens > 0 && !w.oom ? usd(w.own_to_train_usd) : std::string("-");
  });
  row("capex", [](const CompareRow& w) { return w.own_priced ? usd(w.capex_usd) : std::string("-"); });
  row("payback vs renting", [](const CompareRow& w) {
    if (!w.own_priced || !w.rent_priced) return std::string("-");
    if (w.payback_never) return std::string("never");
    // Beyond the hardware's life the capex is not recovered within it (run's summary says so too).
    return format_fixed(w.payback_years, 2) + " years" +
           (w.payback_years > w.amortization_years
                ? " (beyond its " + format_fixed(w.amortization_years, 1) + "-year life)"
                : std::string());
  });
  return t;
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

/// (key, text value, is number) per figure of a row, in CSV/JSON order; keys carry units.
std::vector<std::pair<std::string, std::string>> figures(const CompareRow& w, std::vector<bool>& numeric) {
  std::vector<std::pair<std::string, std::string>> f;
  numeric.clear();
  auto str = [&](const char* k, const std::string& v) { f.emplace_back(k, v), numeric.push_back(false); };
  auto num = [&](const char* k, double v) { f.emplace_back(k, number(v)), numeric.push_back(true); };
  auto flag = [&](const char* k, bool v) { f.emplace_back(k, v ? "true" : "false"), numeric.push_back(true); };
  // A price the row does not have is missing (an empty CSV cell, JSON null), not $0 (fresh user,
  // session 32: "rent_usd_per_gpu_hour 0" read as free in a spreadsheet).
  auto price = [&](const char* k, bool priced, double v) {
    f.emplace_back(k, priced ? number(v) : std::string()), numeric.push_back(true);
  };
  // Likewise any figure the row has no answer for (fresh user, session 36: a ResNet's
  // days_to_train 0, a payback of 0 years where neither side is priced).
  const bool trains = w.train_tokens > 0 && !w.oom;  // a time (and cost) to train exists
  str("label", w.label);
  str("scenario", w.scenario_name);
  str("gpu", w.gpu);
  str("compute_model", w.report.compute_model);
  str("attention_kernel", w.images ? std::string() : w.report.attention_kernel);  // a ResNet has no attention
  num("gpus", w.gpus);
  num("nodes", w.nodes);
  num("iteration_time_s", w.iteration_time_s);
  price("tokens_per_s", !w.images, w.tokens_per_s);
  price("images_per_s", w.images, w.tokens_per_s);
  num("mfu", w.mfu);
  num("memory_headroom_gib", w.memory_headroom_bytes / 1073741824.0);
  flag("oom", w.oom);
  flag("memory_tight", w.memory_tight);
  num("train_tokens", w.train_tokens);
  str("train_tokens_source", w.token_budget_source);  // run --json's key for the same fact
  price("goodput", trains && w.goodput_drawn, w.goodput);
  price("days_to_train", trains, w.wall_clock_to_train_s / 86400.0);
  num("facility_average_kw", w.facility_average_w / 1000.0);
  num("facility_peak_kw", w.facility_peak_w / 1000.0);
  price("energy_to_train_mwh", trains, w.energy_to_train_kwh / 1000.0);
  flag("rent_priced", w.rent_priced);
  price("rent_usd_per_gpu_hour", w.rent_priced, w.rent_usd_per_gpu_hour);
  price("rent_to_train_usd", w.rent_priced && trains, w.rent_to_train_usd);
  flag("own_priced", w.own_priced);
  price("own_usd_per_gpu_hour", w.own_priced, w.own_usd_per_gpu_hour);
  price("own_to_train_usd", w.own_priced && trains, w.own_to_train_usd);
  price("capex_usd", w.own_priced, w.capex_usd);
  price("payback_years", w.own_priced && w.rent_priced && !w.payback_never, w.payback_years);
  // Only where both prices exist is there a payback to be "never" (fresh user, session 39: false
  // beside an empty payback_years read as "it pays back").
  if (w.own_priced && w.rent_priced)
    flag("payback_never", w.payback_never);
  else
    price("payback_never", false, 0.0);
  num("model_error_band_pct", w.band.mape_pct);
  str("rent_source", w.rent_source);
  str("node_price_source", w.node_price_source);
  return f;
}

/// A row's JSON keys for its cluster.overrides (only where it has some): `overrides`, the object
/// `run --json` writes (io::overrides_to_json: the same keys and number formats), and
/// `override_effects`, each entry's line of the text section in entry order.
std::string overrides_json(const models::OverridesReport& ov) {
  std::string o = ", \"overrides\": " + io::overrides_to_json(ov) + ", \"override_effects\": [";
  for (std::size_t i = 0; i < ov.entries.size(); ++i)
    o += (i ? ", " : "") + json_string(override_effect_text(ov, ov.entries[i]));
  return o + "]";
}

}  // namespace

std::string format_compare(const CompareResult& r) {
  const auto t = table_cells(r);
  std::vector<std::size_t> width(t[0].size(), 0);
  for (const auto& line : t)
    for (std::size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  std::ostringstream o;
  for (const auto& line : t) {
    std::string s = pad(line[0], width[0]);
    for (std::size_t c = 1; c < line.size(); ++c) s += "   " + lpad(line[c], width[c]);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    o << s << "\n";
  }
  bool starred = false;
  for (const CompareRow& w : r.rows) starred = starred || w.token_budget_source != "scenario";
  if (starred) {
    o << "\n* token budget not in the scenario:";
    for (const CompareRow& w : r.rows)
      if (w.token_budget_source != "scenario") o << " " << w.label << ": " << w.token_budget_source << ";";
    o.seekp(-1, std::ios_base::cur);
    o << "\n";
  }
  for (const CompareRow& w : r.rows)
    if (!w.failures_note.empty()) o << "\n** " << w.label << ": " << w.failures_note << "\n";
  if (std::any_of(r.rows.begin(), r.rows.end(), [](const CompareRow& w) { return w.memory_tight; }))
    o << "\n! tight: the headroom left is " << tight_memory_reason() << "\n";
  // Each side with cluster.overrides: what each entry did and what they cost, as `run` prints it.
  for (const CompareRow& w : r.rows) o << format_overrides(w.report, w.label);
  o << "\nPrices (USD; kind, source, date, region):\n";
  for (const CompareRow& w : r.rows) {
    // A price the user gave, with its value and option, as run's cost section prints it.
    o << "  " << w.label << " rent: " << (w.rent_priced ? price_source_text(w.report.cost, true) : "not priced")
      << "\n";
    o << "  " << w.label << " node: "
      << (w.own_priced ? price_source_text(w.report.cost, false)
                       : "not priced: " + models::node_price_missing(w.gpu, w.gpus / std::max(1, w.nodes)))
      << "\n";
  }
  o << "\nModel error (MAPE of iteration time / tokens/s against published runs):\n";
  std::vector<std::string> listed;
  for (const CompareRow& w : r.rows) {
    const bool sixteen_bit = w.precision == "bf16" || w.precision == "fp16" || w.precision.empty();
    const std::string subject = w.gpu + (w.images      ? " (ResNet)"
                                         : sixteen_bit ? std::string()
                                                       : " (" + w.precision + ")");
    if (std::find(listed.begin(), listed.end(), subject) != listed.end()) continue;
    listed.push_back(subject);
    o << "  " << subject << ": "
      << (w.band.cases > 0 ? format_fixed(w.band.mape_pct, 1) + " % over " + std::to_string(w.band.cases) + " runs (" +
                                 w.band.source + ")"
                           : "none: " + w.band.absent)
      << "\n";
  }
  o << "\nVerdict:\n";
  for (const std::string& v : r.verdicts) o << "  " << v << "\n";
  return o.str();
}

std::string compare_to_csv(const CompareResult& r) {
  std::ostringstream o;
  std::vector<bool> numeric;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const auto f = figures(r.rows[i], numeric);
    // model_error_band_pct is 0 where there is no band: the next column says why (as the JSON's
    // model_error_band_absent; fresh-user finding: a kernel-model row read as a 0 % error).
    if (i == 0) {
      for (std::size_t k = 0; k < f.size(); ++k) o << (k ? "," : "") << f[k].first;
      o << ",model_error_band_absent,pue_note\n";
    }
    for (std::size_t k = 0; k < f.size(); ++k) o << (k ? "," : "") << csv_field(f[k].second);
    o << "," << csv_field(r.rows[i].band.absent) << "," << csv_field(r.rows[i].pue_note) << "\n";
  }
  return o.str();
}

std::string compare_to_json(const CompareResult& r) {
  std::ostringstream o;
  o << "{\n  \"rows\": [";
  std::vector<bool> numeric;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const auto f = figures(r.rows[i], numeric);
    o << (i ? ",\n" : "\n") << "    {";
    for (std::size_t k = 0; k < f.size(); ++k)
      o << (k ? ", " : "") << json_string(f[k].first) << ": "
        << (!numeric[k]           ? json_string(f[k].second)
            : f[k].second.empty() ? std::string("null")
                                  : f[k].second);
    o << ", \"model_error_band_source\": " << json_string(r.rows[i].band.source)
      << ", \"model_error_band_absent\": " << json_string(r.rows[i].band.absent)
      << ", \"pue_note\": " << json_string(r.rows[i].pue_note);  // "" where the text has no PUE note for it
    // Only a row whose scenario has cluster.overrides: the other rows' keys stay as they were.
    if (!r.rows[i].report.overrides.entries.empty()) o << overrides_json(r.rows[i].report.overrides);
    o << "}";
  }
  o << "\n  ],\n  \"verdicts\": [";
  for (std::size_t i = 0; i < r.verdicts.size(); ++i) o << (i ? ", " : "") << json_string(r.verdicts[i]);
  o << "]\n}\n";
  return o.str();
}

}  // namespace traincast::cli
