#pragma once
// Vocabulary: the collective operations, shared by the collectives engine
// (models/collectives/), the calibration profile's fits and the workload generators.

#include "models/spec/enums.h"

namespace traincast::models {

/// A collective operation as NCCL and nccl-tests name it. Sizes per op (the nccl-tests `bytes`)
/// and busbw factors: models/collectives/collective_engine.h; send_recv is one point-to-point
/// message, all_to_all S/n from every rank to every other.
enum class CollectiveOp { all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv };
// CollectiveAlgorithm and CollectiveProtocol: models/spec/scenario.h (a scenario may force them).

/// What an expert-parallel all_to_all carries, for DeepEP's per-node and per-GPU deduplication
/// (models/collectives/moe_dispatch.h). kind flat (the default): an ordinary all_to_all, the other
/// fields unused. kind deepep: the call's bytes are the flat send buffer (tokens x top_k slots x
/// hidden x element bytes per rank) of a MoE layer with `experts` routed experts spread evenly over
/// the group, `top_k` per token, and at most `max_nodes_per_token` nodes per token (0 = unlimited).
struct MoeDispatch {
  EpAllToAll kind = EpAllToAll::flat;
  int experts = 0;
  int top_k = 0;
  int max_nodes_per_token = 0;
  bool operator==(const MoeDispatch&) const = default;
};

}  // namespace traincast::models
