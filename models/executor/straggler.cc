#include "models/executor/straggler.h"

#include <algorithm>
#include <utility>

namespace traincast::models {

StragglerWalk::StragglerWalk(const OpGraph& graph, std::uint32_t ref, std::function<bool(std::uint32_t)> shared)
    : g_(graph),
      ref_(ref),
      shared_(std::move(shared)),
      prev_on_stream_(graph.ops.size(), kNone),
      late_ns_(graph.workers, 0) {
  // Ops of one stream run in the order they were added (op_graph.h), so in index order.
  std::vector<std::array<std::uint32_t, kNumStreams>> latest(graph.workers);
  for (auto& l : latest) l.fill(kNone);
  for (std::uint32_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (op.stream == kNoStream) continue;
    std::uint32_t& l = latest[op.worker][op.stream];
    prev_on_stream_[i] = l;
    l = i;
  }
}

std::int64_t StragglerWalk::wait(std::uint32_t d, std::int64_t lo, std::int64_t hi) {
  const std::vector<Op>& ops = g_.ops;
  while (hi > lo && shared_(d)) {
    const Task& t = g_.tasks[ops[d].task];
    std::uint32_t late = kNone;
    for (std::uint32_t k = 0; k < t.participant_count; ++k) {
      const std::uint32_t q = g_.participants[t.participant_begin + k];
      if (late == kNone || ops[q].start_ns > ops[late].start_ns ||
          (ops[q].start_ns == ops[late].start_ns && ops[q].worker == ref_))
        late = q;
    }
    const std::int64_t launch = ops[late].start_ns;
    if (launch <= lo) break;
    // What held the last participant until `launch`: its stream's previous op, or (no stream)
    // the dependency that finished last.
    const std::uint32_t prev = ops[late].stream == kNoStream ? ops[late].last_dep : prev_on_stream_[late];
    if (prev != kNone && ops[prev].end_ns == launch && shared_(prev)) {
      d = prev, hi = launch;  // queued behind an earlier collective
      continue;
    }
    if (ops[late].worker == ref_) break;
    const std::int64_t wait = std::min(launch, hi) - lo;
    credit(ops[late].worker, lo, lo + wait);
    return wait;
  }
  return 0;
}

void StragglerWalk::credit(std::uint32_t worker, std::int64_t start_ns, std::int64_t end_ns) {
  if (end_ns <= start_ns) return;
  late_ns_[worker] += end_ns - start_ns;
  waits_.push_back(Wait{start_ns, end_ns, worker});
}

int StragglerWalk::slowest() const {
  const auto it = std::max_element(late_ns_.begin(), late_ns_.end());
  return it == late_ns_.end() || *it <= 0 ? -1 : static_cast<int>(it - late_ns_.begin());
}

}  // namespace traincast::models
