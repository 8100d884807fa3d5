// nccl-tests validation cases. See nccl_validation.h.

#include "tools/cli/nccl_validation.h"

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "calibrate/nccl_tests_log.h"
#include "models/collectives/nccl_tests.h"
#include "models/hardware/cluster.h"
#include "models/spec/run_control.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::cli {
namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string pct(double fraction) { return fmt("%.1f%%", fraction * 100); }

struct Outcome {
  std::string error;  // non-empty: the case could not be run
  models::NcclTestsComparison comparison;
  int nranks = 0;
  std::string op;
};

/// nccl_case_field_errors for one case and its read log (run_case checks with it too).
void case_field_errors(const models::ValidationCase& c, const calibrate::NcclTestsLog& log,
                       std::vector<std::string>& errors) {
  const models::NcclTestsValidation& v = *c.nccl_tests;
  if (log.runs.empty()) return;  // the reader refuses a log without data rows
  if (v.run < 0 || v.run >= static_cast<int>(log.runs.size())) {
    errors.push_back((v.run_at + ": ") + std::to_string(v.run) + " (expected 0 to " +
                     std::to_string(log.runs.size() - 1) + ": " + v.log_path + " has " +
                     std::to_string(log.runs.size()) + (log.runs.size() == 1 ? " table)" : " tables)"));
    return;
  }
  const calibrate::NcclTestsRun& run = log.runs[v.run];
  if (const std::string e = calibrate::op_conflict(run, v.op, v.log_path, "case " + c.name + " nccl_tests.op");
      !e.empty())
    errors.push_back(v.op_at + ": " + e);  // op_conflict names the log's line
  else if (run.op.empty() && v.op.empty())
    errors.push_back((v.op_at + ": ") + "not set, and " + v.log_path +
                     " names no operation (expected nccl_tests.op: the operation the log ran)");
  if (v.gpus.empty() && run.num_ranks <= 0) return;
  int cluster_gpus = 0;
  try {
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    cluster_gpus = models::Cluster(c.scenario.cluster, net).num_gpus();
  } catch (const std::exception&) {
    return;  // the cluster's own error is reported when the case runs
  }
  int selected = cluster_gpus;
  if (!v.gpus.empty()) {
    std::vector<int> gpus;
    try {
      gpus = models::parse_gpu_list(v.gpus);
    } catch (const std::invalid_argument& e) {
      errors.push_back((v.gpus_at + ": ") + e.what());
      return;
    }
    for (int g : gpus) {
      if (g < 0 || g >= cluster_gpus) {
        errors.push_back((v.gpus_at + ": ") + "\"" + v.gpus + "\" names GPU " + std::to_string(g) +
                         ", the cluster has " + std::to_string(cluster_gpus) + " (expected GPUs 0 to " +
                         std::to_string(cluster_gpus - 1) + ")");
        return;
      }
    }
    selected = static_cast<int>(gpus.size());
  }
  if (run.num_ranks > 0 && run.num_ranks != selected)
    errors.push_back((v.gpus_at + ": ") + (v.gpus.empty() ? "not set, so all " : "\"" + v.gpus + "\" selects ") +
                     std::to_string(selected) + " GPUs, and " + v.log_path + " ran on " +
                     std::to_string(run.num_ranks) + " ranks (expected nccl_tests.gpus naming " +
                     std::to_string(run.num_ranks) + " GPUs)");
}

Outcome run_case(const models::ValidationCase& c) {
  Outcome o;
  try {
    const models::NcclTestsValidation& v = *c.nccl_tests;
    const calibrate::NcclTestsLog log = calibrate::read_nccl_tests_log(v.log_path);
    // validate refuses these before any case runs; a caller that did not ask gets them per case.
    std::vector<std::string> problems;
    case_field_errors(c, log, problems);
    if (!problems.empty() || log.runs.empty()) {
      o.error = problems.empty() ? v.log_path + ": no table" : problems.front();
      return o;
    }
    const calibrate::NcclTestsRun& run = log.runs[v.run];
    const std::string op_name = !run.op.empty() ? run.op : v.op;
    models::NcclTestsOptions options;
    options.op = models::parse_nccl_tests_op(op_name);
    o.op = std::string(models::nccl_tests_op_name(options.op));
    if (!v.gpus.empty()) options.gpus = models::parse_gpu_list(v.gpus);
    options.word_bytes = models::nccl_tests_type_bytes(run.rows.front().type);
    {
      sim::Simulator sim;
      sim::FlowNetwork net(sim);
      const models::Cluster cluster(c.scenario.cluster, net);
      o.nranks = options.gpus.empty() ? cluster.num_gpus() : static_cast<int>(options.gpus.size());
    }
    std::vector<models::NcclTestsMeasurement> measured;
    for (const calibrate::NcclTestsRow& row : run.rows) {
      measured.push_back({row.size_bytes, calibrate::row_time_us(row), row.line});
    }
    o.comparison = models::compare_nccl_tests(c.scenario.cluster, options, measured);
  } catch (const calibrate::NcclTestsLogError& e) {
    o.error = e.what();
  } catch (const models::Interrupted&) {
    throw;  // Ctrl-C ends the command, not the case
  } catch (const std::exception& e) {
    o.error = e.what();
  }
  return o;
}

}  // namespace

std::vector<std::string> nccl_case_field_errors(const std::vector<models::ValidationCase>& cases) {
  std::vector<std::string> errors;
  for (const models::ValidationCase& c : cases) {
    if (!c.nccl_tests) continue;
    try {
      case_field_errors(c, calibrate::read_nccl_tests_log(c.nccl_tests->log_path), errors);
    } catch (const std::exception&) {
      // a log that does not parse: reported when the case runs, at the log's own line
    }
  }
  return errors;
}

NcclValidationReport run_nccl_validation(const std::vector<models::ValidationCase>& cases,
                                         const std::vector<std::string>& case_file, int jobs) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].nccl_tests) idx.push_back(i);
  }
  std::vector<Outcome> outcomes(idx.size());
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(jobs));
    tbb::parallel_for(std::size_t{0}, idx.size(), [&](std::size_t k) {
      models::throw_if_interrupted("validate: nccl-tests cases");
      outcomes[k] = run_case(cases[idx[k]]);
    });
  }
  NcclValidationReport r;
  std::ostringstream o, summary, csv;
  o << "nccl-tests cases: busbw per size; measured = size / time x busbw factor (out-of-place time; the in-place time "
       "where it is over "
    << calibrate::kDisturbedRowRatio
    << "x faster: a disturbed row), error = predicted / "
       "measured - 1\n";
  summary << "\nnccl-tests summary: geometric-mean |busbw error| = exp(mean |ln(predicted/measured)|) - 1\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-46s %5s %-14s %12s %12s  %s\n", "case", "GPUs", "op", ">= 32 MiB", "<= 64 KiB",
                "verdict");
  summary << line;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    const models::ValidationCase& c = cases[idx[k]];
    const models::NcclTestsValidation& v = *c.nccl_tests;
    const Outcome& out = outcomes[k];
    o << "\n" << c.name << ": " << v.log_path << " vs " << c.scenario_path;
    if (!out.error.empty()) {
      o << "\n  cannot run: " << out.error << "\n";
      std::snprintf(line, sizeof line, "%-46s %5s %-14s %12s %12s  %s\n", c.name.c_str(), "-", "-", "-", "-",
                    "FAILED (cannot run)");
      summary << line;
      ++r.failed;
      continue;
    }
    const models::NcclTestsComparison& cmp = out.comparison;
    o << " (" << out.op << ", " << out.nranks << " GPUs)\n";
    std::snprintf(line, sizeof line, "  %12s %12s %12s %8s  %s\n", "size (B)", "measured", "predicted", "error",
                  "algorithm/protocol/channels");
    o << line;
    for (const auto& row : cmp.rows) {
      std::snprintf(line, sizeof line, "  %12.0f %12.4g %12.4g %7.1f%%  %s/%s/%d\n", row.bytes, row.measured_busbw_gbps,
                    row.predicted_busbw_gbps, row.error * 100, models::choice_algorithm_name(row.predicted.choice),
                    models::protocol_name(row.predicted.choice.protocol), row.predicted.choice.channels);
      o << line;
      csv << case_file[idx[k]] << "," << c.name << ",busbw_gbps@" << fmt("%.0f", row.bytes) << ","
          << fmt("%.6g", row.measured_busbw_gbps) << "," << fmt("%.6g", row.predicted_busbw_gbps) << ","
          << fmt("%.3f", row.error * 100) << ",\"" << c.source << "\"\n";
    }
    const bool large_bad = cmp.large_rows > 0 && cmp.large_error > v.max_large_error;
    const bool small_bad = cmp.small_rows > 0 && cmp.small_error > v.max_small_error;
    auto part = [&](int rows, double err, double limit, bool bad) {
      if (rows == 0) return std::string("no sizes");
      return pct(err) + " over " + std::to_string(rows) + " sizes (limit " + pct(limit) + (bad ? ", OVER)" : ", ok)");
    };
    o << "  geometric-mean |error|: >= 32 MiB " << part(cmp.large_rows, cmp.large_error, v.max_large_error, large_bad)
      << "; <= 64 KiB " << part(cmp.small_rows, cmp.small_error, v.max_small_error, small_bad) << "\n";
    std::string verdict = "ok";
    if (large_bad || small_bad) {
      if (!v.known_gap.empty()) {
        verdict = "KNOWN GAP: " + v.known_gap;
        ++r.known_gaps;
      } else {
        verdict = "FAILED";
        ++r.failed;
      }
    } else {
      ++r.passed;
    }
    if (!v.known_gap.empty() && !(large_bad || small_bad)) verdict = "ok (was a known gap: remove known_gap)";
    // The verdict goes after the fixed columns, not through `line`: a long known_gap would be cut
    // at the buffer's size (and lose its newline).
    std::snprintf(line, sizeof line, "%-46s %5d %-14s %12s %12s  ", c.name.c_str(), out.nranks, out.op.c_str(),
                  cmp.large_rows ? pct(cmp.large_error).c_str() : "-",
                  cmp.small_rows ? pct(cmp.small_error).c_str() : "-");
    summary << line << verdict << "\n";
  }
  summary << r.passed << " within limits, " << r.known_gaps << " known gaps, " << r.failed << " failed\n";
  r.text = o.str() + summary.str();
  r.csv = csv.str();
  return r;
}

}  // namespace traincast::cli
