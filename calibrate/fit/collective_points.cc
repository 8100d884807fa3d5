// Collective samples grouped per operation, and the model's times at their sizes. See
// collective_points.h.

#include "calibrate/fit/collective_points.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "calibrate/fit/fit_helpers.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::calibrate {
namespace {

std::vector<int> all_ranks(const models::ClusterSpec& cs) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const models::Cluster c(cs, net);
  std::vector<int> r(static_cast<std::size_t>(c.num_gpus()));
  for (int i = 0; i < c.num_gpus(); ++i) r[i] = i;
  return r;
}

}  // namespace

std::vector<int> call_ranks(const OpData& d) {
  if (!d.call_ranks.empty()) return d.call_ranks;
  return d.cop == models::CollectiveOp::send_recv ? std::vector<int>{d.ranks[0], d.ranks[1]} : d.ranks;
}

std::vector<OpData> op_groups(const models::MeasurementSet& m, const FitOptions& o) {
  std::vector<OpData> out;
  if (m.collectives.empty()) return out;
  if (!o.cluster) {
    throw std::invalid_argument(
        "collective points need a system: --base must name a node template or a scenario file (got \"" + o.base +
        "\")");
  }
  const std::vector<int> ranks = o.gpus.empty() ? all_ranks(*o.cluster) : o.gpus;
  std::map<std::string, std::size_t> index;
  for (const models::CollectiveSample& s : m.collectives) {
    const models::NcclTestsOp op = models::parse_nccl_tests_op(s.op);
    const std::string name(models::nccl_tests_op_name(op));
    if (s.num_ranks > 0 && s.num_ranks != static_cast<int>(ranks.size())) {
      throw std::invalid_argument(s.where + ": measured on " + std::to_string(s.num_ranks) +
                                  " ranks, the base selects " + std::to_string(ranks.size()) +
                                  " GPUs (expected --gpus with " + std::to_string(s.num_ranks) +
                                  " ids, or a matching --base)");
    }
    auto it = index.find(name);
    if (it == index.end()) {
      OpData d;
      d.op = op;
      d.cop = models::collective_op_of(op);
      d.name = name;
      d.ranks = ranks;
      d.key_ranks = op == models::NcclTestsOp::sendrecv ? 2 : static_cast<int>(ranks.size());
      d.word_bytes = s.dtype.empty() ? 4 : models::nccl_tests_type_bytes(s.dtype);
      it = index.emplace(name, out.size()).first;
      out.push_back(std::move(d));
    }
    OpData& d = out[it->second];
    d.bytes.push_back(s.size_bytes);
    d.time_s.push_back(s.time_us * 1e-6);
    d.where.push_back(s.where);
  }
  for (OpData& d : out) {
    std::vector<std::size_t> order(d.bytes.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return d.bytes[a] < d.bytes[b]; });
    OpData s = d;
    for (std::size_t i = 0; i < order.size(); ++i) {
      s.bytes[i] = d.bytes[order[i]];
      s.time_s[i] = d.time_s[order[i]];
      s.where[i] = d.where[order[i]];
    }
    // Distinct sizes are indexed for the holdout (repeated sizes share their size's index).
    s.fit.assign(s.bytes.size(), true);
    std::size_t k = 0;
    for (std::size_t i = 0; i < s.bytes.size(); ++i) {
      if (i > 0 && s.bytes[i] != s.bytes[i - 1]) ++k;
      s.fit[i] = is_fit(o.holdout, k);
    }
    d = std::move(s);
  }
  return out;
}

std::vector<double> choose_times(const models::CollectiveEngine& e, const OpData& d) {
  std::vector<double> t(d.bytes.size());
  models::CollectiveCall call;
  call.op = d.cop;
  call.ranks = call_ranks(d);
  for (std::size_t i = 0; i < t.size(); ++i) {
    call.bytes = d.bytes[i];
    t[i] = e.choose(call).seconds();
  }
  return t;
}

std::vector<double> simulated_times(const models::ClusterSpec& cs, const OpData& d) {
  models::NcclTestsOptions opt;
  opt.op = d.op;
  opt.gpus = d.ranks;
  opt.word_bytes = d.word_bytes;
  const std::vector<models::NcclTestsResult> r = models::simulate_nccl_tests(cs, opt, d.bytes);
  std::vector<double> t(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) t[i] = r[i].time_s;
  return t;
}

}  // namespace traincast::calibrate
