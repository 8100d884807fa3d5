#include "models/executor/wait_split.h"

#include <algorithm>

namespace traincast::models {

WaitSplitter::WaitSplitter(const OpGraph& graph, std::uint32_t ref, int pp, std::uint32_t barrier, StragglerWalk& skew)
    : g_(graph), ref_(ref), pp_(static_cast<std::uint32_t>(std::max(1, pp))), barrier_(barrier), skew_(skew) {
  if (g_.dep_offset.size() != g_.ops.size() + 1) barrier_ = kNone;
  // ref's replica's ops are the contiguous workers [first, first + pp) (graph_builder.cc merges
  // workers in order), but their op ranges are not kept here: scan every op once.
  const std::uint32_t mine = ref_ / pp_;
  busy_.resize(pp_);
  for (std::uint32_t i = 0; i < g_.ops.size(); ++i) {
    const Op& op = g_.ops[i];
    if (op.worker / pp_ != mine || op.end_ns < 0) continue;
    if (op.stream == kCompute && op.role != Role::dp_grad && op.role != Role::dp_param) {
      Busy& x = busy_[op.worker % pp_];  // in stream order: ascending, not overlapping
      x.start_ns.push_back(op.start_ns);
      x.end_ns.push_back(op.end_ns);
      x.prefix_ns.push_back(x.prefix_ns.back() + op.end_ns - op.start_ns);
    }
    if (barrier_ == kNone) continue;
    bool feeds = false;
    for (std::uint32_t k = g_.dep_offset[i]; k < g_.dep_offset[i + 1] && !feeds; ++k)
      feeds = g_.dependents[k] == barrier_;
    if (!feeds) continue;
    if (own_barrier_dep_ == kNone) {
      own_barrier_dep_ = i;
      continue;
    }
    const Op& best = g_.ops[own_barrier_dep_];
    if (op.end_ns > best.end_ns || (op.end_ns == best.end_ns && op.worker == ref_ && best.worker != ref_))
      own_barrier_dep_ = i;
  }
}

std::uint32_t WaitSplitter::through_barrier(std::uint32_t b, std::int64_t lo, std::int64_t& hi, WaitSplit& out) {
  const std::uint32_t last = g_.ops[b].last_dep;
  if (last == kNone || b != barrier_ || own_barrier_dep_ == kNone || replica(last) == ref_ / pp_) return last;
  // Another replica arrived last: from ref's replica's arrival on, the barrier waited for it.
  const std::int64_t own_end = std::clamp(g_.ops[own_barrier_dep_].end_ns, lo, hi);
  skew_.credit(g_.ops[last].worker, own_end, hi);
  out.straggler_ns += hi - own_end;
  hi = own_end;
  return own_barrier_dep_;
}

std::uint32_t WaitSplitter::holder(std::uint32_t x) const {
  const std::vector<Op>& ops = g_.ops;
  const std::uint32_t dep = ops[x].last_dep;
  const std::uint32_t prev = ops[x].stream == kNoStream ? kNone : skew_.prev_on_stream(x);
  if (dep == kNone) return prev;
  if (prev == kNone) return dep;
  if (ops[prev].end_ns != ops[dep].end_ns) return ops[prev].end_ns > ops[dep].end_ns ? prev : dep;
  return skew_.shared(prev) && !skew_.shared(dep) ? prev : dep;
}

std::int64_t WaitSplitter::busy_ns(std::uint32_t worker, std::int64_t a, std::int64_t b) const {
  if (b <= a || worker / pp_ != ref_ / pp_) return 0;
  const Busy& x = busy_[worker % pp_];
  // Intervals ending after a, up to the first starting at or after b: their overlap with [a, b].
  auto first = std::upper_bound(x.end_ns.begin(), x.end_ns.end(), a) - x.end_ns.begin();
  auto last = std::lower_bound(x.start_ns.begin(), x.start_ns.end(), b) - x.start_ns.begin();
  if (first >= last) return 0;
  const auto i = static_cast<std::size_t>(first), j = static_cast<std::size_t>(last);
  std::int64_t sum = x.prefix_ns[j] - x.prefix_ns[i];
  sum -= std::max<std::int64_t>(0, a - x.start_ns[i]);    // the first one's part before a
  sum -= std::max<std::int64_t>(0, x.end_ns[j - 1] - b);  // the last one's part after b
  return std::max<std::int64_t>(0, sum);
}

void WaitSplitter::add_dp(Role role, std::uint32_t worker, std::int64_t a, std::int64_t b, WaitSplit& out) const {
  const std::int64_t busy = busy_ns(worker, a, b);
  out[Role::compute] += busy;
  out[role] += b - a - busy;
}

void WaitSplitter::walk(std::uint32_t d, std::int64_t lo, std::int64_t hi, WaitSplit& out) {
  const std::vector<Op>& ops = g_.ops;
  const std::uint32_t mine = ref_ / pp_;
  bool first = true;  // d itself, the op ref waited for (through the barrier)
  while (hi > lo && d != kNone) {
    const Op& o = ops[d];
    const bool dp = o.role == Role::dp_grad || o.role == Role::dp_param;
    if (o.role == Role::barrier) {
      d = through_barrier(d, lo, hi, out);
      continue;
    }
    if (skew_.shared(d)) {
      // The last participant to arrive (ref's replica's on ties) and ref's replica's own.
      const Task& t = g_.tasks[o.task];
      std::uint32_t late = kNone, own = kNone;
      for (std::uint32_t k = 0; k < t.participant_count; ++k) {
        const std::uint32_t q = g_.participants[t.participant_begin + k];
        if (late == kNone || ops[q].start_ns > ops[late].start_ns ||
            (ops[q].start_ns == ops[late].start_ns && replica(q) == mine && replica(late) != mine))
          late = q;
        if (replica(q) == mine && (own == kNone || ops[q].start_ns > ops[own].start_ns)) own = q;
      }
      const std::int64_t launch = std::clamp(ops[late].start_ns, lo, hi);
      // The transfer: another stage's DP traffic where that stage's compute stream idled, else
      // its work; a directly awaited EP / CP step keeps its kind.
      if (dp) {
        add_dp(o.role, own != kNone ? ops[own].worker : o.worker, launch, hi, out);
      } else if (first) {
        out.direct = o.role, out.direct_ns += hi - launch;
      } else {
        out[Role::compute] += hi - launch;
      }
      hi = launch;
      if (own == kNone) break;
      if (replica(late) != mine) {
        // Waiting for a slower replica's arrival, where ref's replica's stage had nothing to run.
        const std::int64_t arrived = std::clamp(ops[own].start_ns, lo, hi);
        const std::int64_t busy = busy_ns(ops[own].worker, arrived, hi);
        skew_.credit(ops[late].worker, arrived, hi - busy);
        out.straggler_ns += hi - arrived - busy;
        out[Role::compute] += busy;
        hi = arrived;
      }
      d = holder(own);
      first = false;
      continue;
    }
    const std::int64_t began = std::clamp(o.start_ns, lo, hi);
    if (dp) {  // another stage's data-parallel traffic (one participant when folded)
      add_dp(o.role, o.worker, began, hi, out);
    } else if (first) {
      out.direct = o.role, out.direct_ns += hi - began;
    } else {  // its work
      out[Role::compute] += hi - began;
    }
    hi = began;
    d = holder(d);
    first = false;
  }
  if (hi > lo) out[Role::compute] += hi - lo;
}

WaitSplit WaitSplitter::split(std::uint32_t d, std::int64_t lo, std::int64_t hi) {
  WaitSplit out;
  if (hi <= lo) return out;
  if (d != kNone && g_.ops[d].role == Role::barrier) d = through_barrier(d, lo, hi, out);
  if (hi <= lo) return out;
  if (d == kNone) {
    out[Role::compute] += hi - lo;
    return out;
  }
  if (stage(d) == ref_ % pp_ && g_.ops[d].role != Role::pp_send) {
    // A data- or expert-parallel peer of the same stage (or ref itself) runs the same program as
    // ref: waiting for its op is that op's cost, less the wait for a slower peer's arrival.
    const std::int64_t skew_ns = skew_.wait(d, lo, hi);
    out.straggler_ns += skew_ns;
    out.direct = g_.ops[d].role;
    out.direct_ns = hi - lo - skew_ns;
    return out;
  }
  walk(d, lo, hi, out);
  return out;
}

}  // namespace traincast::models
