#pragma once
// Vocabulary: the collective operations, shared by the collectives engine
// (models/collectives/), the calibration profile's fits and the workload generators.

namespace traincast::models {

/// A collective operation as NCCL and nccl-tests name it. Sizes per op (the nccl-tests `bytes`)
/// and busbw factors: models/collectives/collective_engine.h; send_recv is one point-to-point
/// message, all_to_all S/n from every rank to every other.
enum class CollectiveOp { all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv };
// CollectiveAlgorithm and CollectiveProtocol: models/spec/scenario.h (a scenario may force them).

}  // namespace traincast::models
