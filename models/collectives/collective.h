#pragma once
// NCCL-semantics collectives executed as flows on the FlowNetwork plus per-step latency.
// Sizes follow nccl-tests: `bytes` is the per-rank buffer size as nccl-tests prints it
// (all_reduce: the buffer; all_gather: the gathered output per rank; reduce_scatter: the input
// per rank; send_recv: the message). busbw factors: DESIGN.md §4.3.

#include <cstdint>
#include <vector>

#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {

enum class CollectiveOp { all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv };
enum class CollectiveAlgorithm { automatic, ring, hierarchical };

struct CollectiveCall {
  CollectiveOp op = CollectiveOp::all_reduce;
  std::vector<int> ranks;  ///< GPU ids in rank order; send_recv: {src, dst}
  double bytes = 0;        ///< >= 0, nccl-tests size (see above)
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::automatic;
};

class CollectiveListener {
 public:
  virtual ~CollectiveListener() = default;
  virtual void on_collective_done(std::uint64_t tag) = 0;
};

class CollectiveEngine {
 public:
  CollectiveEngine(sim::Simulator& sim, sim::FlowNetwork& net, const Cluster& cluster);
  /// Starts now; tells `listener` with `tag` when every rank has its result.
  /// A single-rank group completes immediately (after zero time, via an event).
  /// Throws std::invalid_argument for an empty group, duplicate ranks, ranks out of range.
  void start(const CollectiveCall& call, CollectiveListener* listener, std::uint64_t tag);
  /// busbw factor of nccl-tests for op over n ranks.
  static double busbw_factor(CollectiveOp op, int n);
};

}  // namespace traincast::models
