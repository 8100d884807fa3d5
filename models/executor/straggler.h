#pragma once
// Waiting for slower GPUs (straggler wait) on an executed op graph, for every front end's
// breakdown: the transformer generator's (training_report) and Chakra traces' (simulate_chakra).
//
// A collective shared by several workers (a task with >= 2 participant ops; an op's start is its
// arrival) starts when its last participant arrives. While the breakdown's worker `ref` waits in
// [lo, hi] for the collective of op `d` (ending at hi), the time after the last arrival is
// transfer. Before it, the last participant (ref itself on a tie) was either still held by an
// earlier shared collective that ended just then (queued behind it on its stream, or, for an op
// on no stream, released by it as its last dependency: the split continues on that one, back in
// time), or arrived late on its own (its compute): when that is another worker, [lo, last
// arrival] is straggler wait, credited to that worker. Whatever the walk leaves (ref's own
// queueing, the transfer) stays with the collective's kind.

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "models/executor/op_graph.h"

namespace traincast::models {

class StragglerWalk {
 public:
  /// One wait found: [start_ns, end_ns] of `ref` waiting for `worker`.
  struct Wait {
    std::int64_t start_ns = 0, end_ns = 0;
    std::uint32_t worker = 0;
  };

  /// `graph` must have run (run_op_graph: start_ns, end_ns, last_dep set). `shared(d)`: whether
  /// op d takes part in a collective whose arrival skew counts as straggler wait (the front end
  /// decides: e.g. not pipeline sends, whose waits are bubbles); it must imply d's task has >= 2
  /// participants. The graph must outlive the walk.
  StragglerWalk(const OpGraph& graph, std::uint32_t ref, std::function<bool(std::uint32_t)> shared);

  /// Straggler wait [ns] of `ref` in [lo, hi] waiting for op d's collective (0 when d is not
  /// shared, or the last arrival was ref's own or not after lo); credits it to the late worker.
  std::int64_t wait(std::uint32_t d, std::int64_t lo, std::int64_t hi);

  /// Per worker: the wait credited to it [ns] (overlapping waits each count).
  const std::vector<std::int64_t>& late_ns() const { return late_ns_; }
  /// Every wait found, in the order found.
  const std::vector<Wait>& waits() const { return waits_; }
  /// The worker credited with the most wait (the first on ties); -1 when none was credited.
  int slowest() const;

  /// Credits `ref` waiting for `worker` over [start_ns, end_ns] (a wait another walk found, e.g.
  /// training_report's at the iteration barrier); nothing when end_ns <= start_ns.
  void credit(std::uint32_t worker, std::int64_t start_ns, std::int64_t end_ns);
  /// Whether op d takes part in a collective whose arrival skew counts (the constructor's `shared`).
  bool shared(std::uint32_t d) const { return shared_(d); }
  /// The op before op i on its worker's stream, or kNone (first on it, or i on no stream).
  std::uint32_t prev_on_stream(std::uint32_t i) const { return prev_on_stream_[i]; }

 private:
  const OpGraph& g_;
  std::uint32_t ref_;
  std::function<bool(std::uint32_t)> shared_;
  std::vector<std::uint32_t> prev_on_stream_;  ///< per op: previous op of its worker's stream, or kNone
  std::vector<std::int64_t> late_ns_;
  std::vector<Wait> waits_;
};

}  // namespace traincast::models
