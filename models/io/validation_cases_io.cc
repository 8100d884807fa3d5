// Validation cases files in: the cases' own fields checked, each case's scenario loaded with its
// `set` overrides (validation_cases_io.h).

#include "models/io/validation_cases_io.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "models/io/file_kind.h"
#include "models/io/scenario_io.h"
#include "models/io/scenario_io_internal.h"
#include "models/io/suggest.h"
#include "traincast.pb.h"

namespace traincast::io {
namespace {

namespace tp = traincast::proto;
using detail::Checker;
using detail::kMaxInputBytes;
using detail::load_impl;
using detail::names_list;
using detail::Override;

/// Data rows of the shared training table `file` (a plain name), found in shared/data/training
/// beside `base_dir` or any folder above it (../shared/data/training from a clone's
/// scenarios/validation/); -1 when no such table exists. One header line; every further
/// non-empty line is one row (the shared tables quote no line breaks).
long shared_table_rows(const std::string& file, const std::string& base_dir) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(base_dir.empty() ? "." : base_dir, ec);
  if (ec) return -1;
  for (;;) {
    const std::filesystem::path table = dir / "shared" / "data" / "training" / file;
    if (std::filesystem::is_regular_file(table, ec)) {
      std::ifstream in(table);
      std::string line;
      long lines = 0;
      while (std::getline(in, line)) {
        if (!line.empty() && line != "\r") ++lines;
      }
      return lines > 0 ? lines - 1 : 0;
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) return -1;
    dir = dir.parent_path();
  }
}

/// Largest case.measured in any metric's unit (a 1e308 measurement was scored as a -inf % error,
/// exit 0): 1e12 is far above every metric (tokens/s of a 100,000-GPU run ~1e8; seconds to train
/// ~1e7; GiB per GPU ~1e2).
constexpr double kMaxMeasured = 1e12;

/// case.tolerance: a fraction of the measurement (0.05 = 5 %), 0 (or unset) for no limit of its own.
/// `validate --max-error` is in percent, so `tolerance: 5` meant 500 % and passed every case.
void check_tolerance(Checker& k, const std::string& at, double tolerance) {
  if (std::isfinite(tolerance) && tolerance >= 0 && tolerance <= 1) return;
  k.error(at + ".tolerance", "got " + Checker::number(tolerance) +
                                 " (expected a fraction >= 0 and <= 1: 0.05 for 5 %, 0 or unset for no limit of "
                                 "its own; validate --max-error is the one in percent)");
}

/// The fields of case `i` (name unique among `names`, scenario set; nccl_tests or metric and
/// measured; data_row a row of a shared table found from `base_dir`), appended to `k`'s errors.
void check_case_fields(const tp::ValidationCases::Case& c, int i, Checker& k, std::set<std::string>& names,
                       const std::string& base_dir, const std::string& cases_path,
                       std::map<std::string, long>& table_rows) {
  const std::string at = "case[" + std::to_string(i) + "]";
  if (c.name().empty()) {
    k.error(at + ".name", std::string(k.present(at + ".name") ? "is empty" : "not set") + " (expected a unique name)");
  } else if (!detail::valid_utf8(c.name())) {  // printed in the validation table (session 36: accepted raw)
    k.error(at + ".name", "is not valid UTF-8 (expected a unique name in UTF-8 text)");
  } else if (!names.insert(c.name()).second) {
    k.error(at + ".name", "\"" + detail::clip(c.name()) + "\" is used by an earlier case (expected a unique name)");
  }
  if (k.present(at + ".data_row")) {
    // "FILE.csv:INDEX", INDEX a 0-based data row of at most 9 digits (the split rule reads its parity).
    const std::string& row = c.data_row();
    const std::size_t colon = row.rfind(':');
    const std::string index = colon == std::string::npos ? std::string() : row.substr(colon + 1);
    const bool digits = !index.empty() && index.size() <= 9 &&
                        std::all_of(index.begin(), index.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    const std::string file = colon == std::string::npos ? std::string() : row.substr(0, colon);
    const bool plain_csv = file.size() > 4 && file.compare(file.size() - 4, 4, ".csv") == 0 &&
                           file.find_first_of("/\\:") == std::string::npos;
    if (colon == 0 || colon == std::string::npos || !digits || !plain_csv) {
      k.error(at + ".data_row", "\"" + detail::clip(row) +
                                    "\" (expected FILE.csv:INDEX, FILE a table of shared/data/training and INDEX "
                                    "its 0-based data row, e.g. \"megatron_sc21_table1_a100.csv:2\")");
    } else {
      auto [it, inserted] = table_rows.try_emplace(file, 0L);
      if (inserted) it->second = shared_table_rows(file, base_dir);
      const long index_value = std::stol(index);
      if (it->second < 0) {
        k.error(at + ".data_row", "\"" + detail::clip(file) +
                                      "\" is not in shared/data/training beside the cases file or any folder above "
                                      "it (expected one of the shared training tables)");
      } else if (index_value >= it->second) {
        k.error(at + ".data_row", "row " + index + " of " + file + ", which has " + std::to_string(it->second) +
                                      " data rows (expected 0 to " + std::to_string(it->second - 1) + ")");
      }
    }
  }
  if (k.present(at + ".oom_known_gap") && c.oom_known_gap().find_first_not_of(" \t\r\n") == std::string::npos) {
    k.error(at + ".oom_known_gap", "is blank (expected why the model predicts this run out of memory although it ran)");
  }
  if (c.scenario().empty()) {
    k.error(at + ".scenario", std::string(k.present(at + ".scenario") ? "is empty" : "not set") +
                                  " (expected a scenario file path relative to the cases file)");
  } else if (std::error_code ec;
             std::filesystem::equivalent(std::filesystem::path(base_dir) / c.scenario(), cases_path, ec)) {
    // Else its load says "this is a validation cases file ... run it with traincast validate",
    // the command just run, at 1:1.
    k.error(at + ".scenario", "\"" + detail::clip(c.scenario()) +
                                  "\" is this cases file itself (expected the scenario the case runs, a .textproto "
                                  "or .json scenario file relative to the cases file)");
  }
  if (c.has_nccl_tests()) {
    const tp::ValidationCases::NcclTests& t = c.nccl_tests();
    const std::string nt = at + ".nccl_tests";
    if (t.log().empty()) {
      k.error(nt + ".log", std::string(k.present(nt + ".log") ? "is empty" : "not set") +
                               " (expected a nccl-tests output file relative to the cases file)");
    } else {
      // Checked here, at its position, not when the case runs ("cannot run", exit 1, before).
      const std::filesystem::path log = std::filesystem::path(base_dir) / t.log();
      std::error_code ec;
      if (!std::filesystem::is_regular_file(log, ec))
        k.error(nt + ".log", "\"" + detail::clip(t.log()) +
                                 "\": " + (std::filesystem::exists(log, ec) ? "not a regular file" : "no such file") +
                                 " (" + log.lexically_normal().string() +
                                 "; expected a nccl-tests output file relative to the cases file)");
    }
    for (const char* field : {"metric", "measured"}) {
      if (k.present(at + "." + field)) {
        k.error(at + "." + field, "set together with nccl_tests (expected either nccl_tests or metric and measured)");
      }
    }
    k.int_field(nt + ".run", t.run());
    if (t.has_max_large_error()) k.finite_at_least(nt + ".max_large_error", t.max_large_error(), 0.0, true);
    if (t.has_max_small_error()) k.finite_at_least(nt + ".max_small_error", t.max_small_error(), 0.0, true);
    check_tolerance(k, at, c.tolerance());
    return;
  }
  const auto& metrics = models::validation_metrics();
  if (std::find(metrics.begin(), metrics.end(), c.metric()) == metrics.end()) {
    std::vector<std::string> names_v(metrics.begin(), metrics.end());
    k.error(at + ".metric", (k.present(at + ".metric") ? "unknown metric \"" + detail::clip(c.metric()) + "\"" +
                                                             detail::did_you_mean(c.metric(), names_v)
                                                       : std::string("not set")) +
                                " (expected one of: " + names_list(names_v) + ")");
  }
  if (!k.present(at + ".measured")) {
    k.error(at + ".measured", "not set (expected a finite number > 0)");
  } else if (k.finite_within(at + ".measured", c.measured(), 0.0, true, kMaxMeasured,
                             "no metric's measurement comes near it: 1e12 tokens/s is 10,000x a 100,000-GPU run, "
                             "1e12 s 30,000 years") &&
             (c.metric() == "mfu" || c.metric() == "hfu") && c.measured() > 1) {
    // A percentage where a fraction belongs: 5 (500 %) was scored as an 89 % error, exit 0.
    k.error(at + ".measured", "got " + Checker::number(c.measured()) + " for " + c.metric() +
                                  " (expected a fraction > 0 and <= 1: 0.5 for 50 %)");
  }
  check_tolerance(k, at, c.tolerance());
}

}  // namespace

std::vector<models::ValidationCase> load_validation_cases(const std::string& path,
                                                          const std::vector<std::string>& cli_overrides) {
  const InputText input = read_input(path);
  return load_validation_cases_text(input.text, path, input.format, detail::relative_base_dir(path), cli_overrides);
}

std::vector<models::ValidationCase> load_validation_cases_text(std::string_view text_view, std::string_view origin,
                                                               Format format, const std::string& base_dir,
                                                               const std::vector<std::string>& cli_overrides) {
  const std::string path(origin);
  const std::string text(text_view);
  if (text.size() > kMaxInputBytes) {
    throw ScenarioError({path + ": input too large (" + std::to_string(text.size()) + " bytes; expected at most " +
                         std::to_string(kMaxInputBytes) + ")"});
  }
  tp::ValidationCases message;
  detail::ReadOutcome read = detail::read_message(text, path, format, message);
  if (!read.errors.empty()) {
    if (auto other = detail::wrong_kind_message(text, path, format, message.GetDescriptor()))
      throw ScenarioError({*other});
  }
  std::vector<std::string> errors = std::move(read.errors);
  if (!errors.empty()) throw ScenarioError(std::move(errors));

  const std::map<std::string, std::string> no_overrides;
  Checker k(message, *read.source_map, path, no_overrides, errors);
  k.set_source(text);
  if (message.case__size() == 0) k.error("case", "no cases (expected at least one case { ... })");
  std::set<std::string> names;
  std::map<std::string, long> table_rows;  // data rows per shared table named by a data_row
  for (int i = 0; i < message.case__size(); ++i)
    check_case_fields(message.case_(i), i, k, names, base_dir, path, table_rows);

  const std::filesystem::path base(base_dir);
  std::vector<models::ValidationCase> cases;
  for (int i = 0; i < message.case__size(); ++i) {
    const tp::ValidationCases::Case& c = message.case_(i);
    models::ValidationCase out;
    out.name = c.name();
    out.scenario_path = c.scenario().empty() ? std::string() : (base / c.scenario()).lexically_normal().string();
    out.metric = c.metric();
    out.measured = c.measured();
    out.tolerance = c.tolerance();
    out.source = c.has_source() && !c.source().empty() ? c.source() : message.source();
    out.notes = c.notes();
    out.data_row = c.data_row();
    out.assumptions = c.assumptions();
    out.oom_known_gap = c.oom_known_gap();
    out.group = message.group();
    if (c.has_nccl_tests()) {
      const tp::ValidationCases::NcclTests& t = c.nccl_tests();
      models::NcclTestsValidation v;
      v.log_path = t.log().empty() ? std::string() : (base / t.log()).lexically_normal().string();
      v.op = t.op();
      v.gpus = t.gpus();
      v.run = t.run();
      if (t.has_max_large_error()) v.max_large_error = t.max_large_error();
      if (t.has_max_small_error()) v.max_small_error = t.max_small_error();
      v.known_gap = t.known_gap();
      v.holdout_known_gap = t.holdout_known_gap();
      const std::string nt = "case[" + std::to_string(i) + "].nccl_tests";
      const auto field_at = [&](const char* name) {  // "FILE:L:C: case[i].nccl_tests.NAME"
        std::string field = nt;
        field.append(".").append(name);
        std::string at = k.where(field);
        at.append(": ").append(field);
        return at;
      };
      v.run_at = field_at("run");
      v.op_at = field_at("op");
      v.gpus_at = field_at("gpus");
      out.nccl_tests = v;
      out.metric = "nccl_tests_busbw";
    }
    std::vector<Override> overrides;
    for (int j = 0; j < c.set_size(); ++j) {
      out.overrides.push_back(c.set(j));
      overrides.push_back({c.set(j), k.where("case[" + std::to_string(i) + "].set[" + std::to_string(j) + "]")});
    }
    for (const std::string& a : cli_overrides) {
      out.overrides.push_back(a);
      overrides.push_back({a, "--set"});
    }
    if (!out.scenario_path.empty()) {
      const std::string at = "case[" + std::to_string(i) + "].scenario";
      std::string scenario_text;
      Format scenario_format = Format::text;
      try {
        InputText input = read_input(out.scenario_path);
        scenario_format = input.format;
        scenario_text = std::move(input.text);
      } catch (const ScenarioError& e) {
        // The file itself is the problem: say which case named it.
        k.error(at, e.what());
        cases.push_back(std::move(out));
        continue;
      }
      try {
        const ClusterUse nccl_case{"an nccl_tests case", {}};
        out.scenario = load_impl(scenario_text, out.scenario_path, scenario_format, overrides,
                                 out.nccl_tests ? &nccl_case : nullptr);
      } catch (const ScenarioError& e) {
        // The scenario's own errors keep their file:line:col (overrides: the `set` entry's); one
        // in the scenario file itself, shared by many cases, also names the case that loaded it.
        const std::string via = " (loaded by case[" + std::to_string(i) + "] \"" + detail::clip(c.name()) + "\", " +
                                k.where("case[" + std::to_string(i) + "]") + ")";
        for (const std::string& line : e.errors()) errors.push_back(line.rfind(path + ":", 0) == 0 ? line : line + via);
      }
    }
    cases.push_back(std::move(out));
  }
  if (!errors.empty()) throw ScenarioError(std::move(errors));
  return cases;
}

}  // namespace traincast::io
