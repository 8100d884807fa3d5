// The job list's checks (`job { ... }`, traincast cluster; scenario_checks.h check_jobs).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "models/io/scenario_checks.h"

namespace traincast::io::detail {

void check_jobs(const models::Scenario& s, const models::NodeTemplate* node, Checker& k) {
  std::map<std::string, std::size_t> named;  // name -> first job with it
  for (std::size_t i = 0; i < s.jobs.size(); ++i) {
    const models::JobSpec& j = s.jobs[i];
    const std::string at = "job[" + std::to_string(i) + "].";
    if (std::any_of(j.name.begin(), j.name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
      k.error(at + "name",
              "holds a control character (expected a name on one line: the report prints one row per job)");
    if (!j.name.empty()) {
      const auto [first, added] = named.emplace(j.name, i);
      if (!added)
        k.error(at + "name", "\"" + j.name + "\" again (job[" + std::to_string(first->second) +
                                 "] has it; expected a unique name: the report and the CSV name each job by it)");
    }
    if (j.gpus <= 0) {
      k.error(at + "gpus", k.present(at + "gpus") ? "got " + std::to_string(j.gpus) + " (expected >= 1)"
                                                  : "not set (expected the GPUs the job asks for, >= 1)");
    } else if (node != nullptr && j.gpus % node->gpus_per_node != 0) {
      k.error(at + "gpus", "got " + std::to_string(j.gpus) + " (expected a multiple of the " +
                               std::to_string(node->gpus_per_node) + " GPUs of a " + s.cluster.node_template +
                               " node: jobs get whole nodes)");
    }
    // Job times stay below 1e9 s (31.7 years) and token budgets below 1e15 (as
    // workload.training.train_tokens): the scheduler adds arrivals, waits and run times of every
    // job on a clock that ends at 292 years (sim::Time, int64 ns).
    constexpr double kMaxJobSeconds = 1e9;
    constexpr double kMaxJobTokens = 1e15;
    const auto at_most = [&](const std::string& field, double value, double maximum, const char* unit) {
      if (std::isfinite(value) && value > maximum)
        k.error(at + field, "got " + Checker::number(value) + " (expected at most " + Checker::number(maximum) + unit +
                                ": the scheduler adds every job's arrival, wait and run time on a clock that "
                                "ends at 292 years)");
    };
    if (k.finite_at_least(at + "arrival_s", j.arrival_s, 0.0, false))
      at_most("arrival_s", j.arrival_s, kMaxJobSeconds, " s");
    int budgets = 0;
    for (const auto& [field, value] : {std::pair<const char*, double>{"tokens", j.tokens},
                                       {"duration_s", j.duration_s},
                                       {"alone_duration_s", j.alone_duration_s}}) {
      if (!k.present(at + field)) continue;
      if (++budgets > 1) {
        k.error(at + field, "set with another budget (expected exactly one of tokens, duration_s, alone_duration_s)");
        continue;
      }
      if (k.finite_at_least(at + field, value, 0.0, true))
        at_most(field, value, std::string_view(field) == "tokens" ? kMaxJobTokens : kMaxJobSeconds,
                std::string_view(field) == "tokens" ? " tokens" : " s");
    }
    if (budgets == 0)
      k.error(at + "gpus", "no budget (expected exactly one of tokens, duration_s or alone_duration_s)");
  }
  // A job without a name is "job<i>" in the report (models/scheduler/cluster_run.cc): a name given
  // to another job may not be one of those.
  for (std::size_t i = 0; i < s.jobs.size(); ++i) {
    if (!s.jobs[i].name.empty()) continue;
    const auto it = named.find("job" + std::to_string(i));
    if (it == named.end()) continue;
    k.error("job[" + std::to_string(it->second) + "].name",
            "\"" + it->first + "\" is the name job[" + std::to_string(i) +
                "] is reported by, which has none (expected a unique name: the report and the CSV name each job by "
                "it; name job[" +
                std::to_string(i) + "], or this one otherwise)");
  }
}

}  // namespace traincast::io::detail
