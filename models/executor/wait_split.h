#pragma once
// What the breakdown's worker waited for, split along the critical path behind the wait
// (training_report's breakdown of a pipeline-parallel job; DESIGN §4: "why" an iteration takes
// its time).
//
// The breakdown's worker `ref` (one stage of one simulated replica) waits in [lo, hi] for op d,
// the dependency that finished last. Two kinds of join hide a cause behind d:
// - the iteration barrier (every worker's last ops, before the optimizer step): it ends when the
//   last worker of the whole job arrives. When that is another replica and ref's own replica had
//   arrived earlier (its latest barrier dependency ended at `own`), [own, hi] is straggler wait,
//   credited to the late worker, and the split goes on with ref's replica's latest dependency;
// - a collective shared by data-, expert- or context-parallel replicas (StragglerWalk's `shared`):
//   it starts when its last participant arrives. The time between ref's replica's participant's
//   arrival and a later one of another replica is straggler wait; the split goes on with what
//   held ref's replica's participant: its stream's previous op (queued behind an earlier
//   transfer) or its dependency.
// Along the way, another stage's data-parallel traffic (gradient reductions, ZeRO parameter
// gathers, shared or folded to one participant) counts as exposed DP traffic where that stage's
// compute stream had no other op running, and as bubble where it did (the traffic was hidden
// there; the stage's work held ref). Every other op of another stage is bubble (its compute, TP
// and PP traffic, EP / CP steps: pipeline fill and drain), except the directly awaited op d
// itself, whose own time keeps its kind (a pipeline send's transfer is exposed PP send/recv, as
// before this split). A wait on an op of ref's own stage (a replica of it runs the same program)
// is that op's kind, less the straggler wait StragglerWalk::wait finds. Straggler waits are
// credited on the StragglerWalk (its late_ns(), waits(), slowest()), so the report names the late
// worker.

#include <array>
#include <cstdint>
#include <vector>

#include "models/executor/op_graph.h"
#include "models/executor/straggler.h"

namespace traincast::models {

/// A wait of the breakdown's worker, split [ns]: `direct_ns` of the directly awaited op's kind
/// (`direct`; Role::barrier when nothing was awaited), `behind[r]` of role r's kind found behind it
/// (Role::compute: pipeline bubble, i.e. another stage's work; dp_grad / dp_param, ep_comm,
/// cp_comm: another stage's exposed transfers), `straggler_ns` waiting for a slower replica. The
/// parts add up to the wait.
struct WaitSplit {
  static constexpr std::size_t kRoles = static_cast<std::size_t>(Role::storage_stall) + 1;
  Role direct = Role::barrier;
  std::int64_t direct_ns = 0;
  std::array<std::int64_t, kRoles> behind{};
  std::int64_t straggler_ns = 0;
  std::int64_t& operator[](Role r) { return behind[static_cast<std::size_t>(r)]; }
  std::int64_t at(Role r) const { return behind[static_cast<std::size_t>(r)]; }
};

class WaitSplitter {
 public:
  /// `graph` has run (start_ns, end_ns, last_dep set) and outlives the splitter, as `skew` (the
  /// StragglerWalk of worker `ref`, which receives the straggler credits). Worker w is stage
  /// w % pp of simulated replica w / pp (pp >= 1). `barrier`: the op id of the barrier whose
  /// straggler wait is split (the last iteration's; kNone: none); its dependencies are read from
  /// graph.dep_offset / dependents.
  WaitSplitter(const OpGraph& graph, std::uint32_t ref, int pp, std::uint32_t barrier, StragglerWalk& skew);

  /// Splits ref's wait [lo, hi] (lo <= hi, ns) for op d (kNone: nothing awaited, all bubble).
  WaitSplit split(std::uint32_t d, std::int64_t lo, std::int64_t hi);

  /// The op of ref's replica among `barrier`'s dependencies that ended last (ref's own on ties,
  /// else the first), or kNone.
  std::uint32_t own_barrier_dep() const { return own_barrier_dep_; }

 private:
  std::uint32_t replica(std::uint32_t op) const { return g_.ops[op].worker / pp_; }
  std::uint32_t stage(std::uint32_t op) const { return g_.ops[op].worker % pp_; }
  /// Through barrier b: the op to follow, after crediting [max(lo, own end), hi] as straggler
  /// wait when the last arrival is another replica's (hi moves down to that point).
  std::uint32_t through_barrier(std::uint32_t b, std::int64_t lo, std::int64_t& hi, WaitSplit& out);
  /// What held op x until its start: its dependency or its stream's previous op, whichever ended
  /// then (a shared collective first, then the dependency); kNone when neither did.
  std::uint32_t holder(std::uint32_t x) const;
  /// Time [ns] in [a, b] that `worker` (of ref's replica; else 0) ran compute-stream ops other
  /// than data-parallel collectives: its own work.
  std::int64_t busy_ns(std::uint32_t worker, std::int64_t a, std::int64_t b) const;
  /// [a, b] of data-parallel op role `role` of `worker`: its busy time bubble, the rest `role`.
  void add_dp(Role role, std::uint32_t worker, std::int64_t a, std::int64_t b, WaitSplit& out) const;
  /// Walks back from op d (another stage's, or reached behind one) over [lo, hi].
  void walk(std::uint32_t d, std::int64_t lo, std::int64_t hi, WaitSplit& out);

  const OpGraph& g_;
  std::uint32_t ref_;
  std::uint32_t pp_;
  std::uint32_t barrier_;
  StragglerWalk& skew_;
  std::uint32_t own_barrier_dep_ = kNone;
  /// Per stage of ref's replica: its compute-stream ops other than DP collectives, as sorted
  /// [start_ns, end_ns] and the prefix sums of their durations (prefix_ns[0] = 0).
  struct Busy {
    std::vector<std::int64_t> start_ns, end_ns, prefix_ns{0};
  };
  std::vector<Busy> busy_;
};

}  // namespace traincast::models
