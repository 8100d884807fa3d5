#pragma once
// Storage (DESIGN §4.5): data-loader read demand against local NVMe/RAID or a shared file system,
// and checkpoint size, write, snapshot and read-back times. Pure arithmetic on plain structs; the
// executor adds the resulting stalls to the simulated iteration (models/executor/job_effects.h).
//
// Bandwidth units: bytes/s inside, GB/s (1e9 bytes/s) in the scenario fields.

#include <string>

#include "models/hardware/catalog.h"
#include "models/spec/report.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// The node facts storage needs.
struct StorageNodes {
  int num_nodes = 1;
  int gpus_per_node = 8;
  double pcie_bytes_per_s = 0.0;  ///< each GPU's host link per direction (catalog node template)
};

/// Aggregate sequential write bandwidth of a node's drives behind their RAID layout [bytes/s].
/// full_stripe: writes arrive as whole stripes (software RAID with its stripe cache, or a
/// write-back controller cache coalescing them); otherwise parity RAID pays read-modify-write:
/// 4 drive I/Os per host write for RAID 5, 6 for RAID 6 (Patterson, Gibson, Katz, "A Case for
/// Redundant Arrays of Inexpensive Disks", SIGMOD 1988, small-write penalty). Mirrors write every
/// byte twice. Throws std::invalid_argument for too few drives for the level.
double raid_write_bytes_per_s(const LocalStorageSpec& local, bool full_stripe);

/// Aggregate sequential read bandwidth of a node's drives (every level reads from all drives),
/// capped by the controller's host link when there is a controller [bytes/s].
double local_read_bytes_per_s(const LocalStorageSpec& local);

/// Time to write `bytes` sequentially to one node's local storage [s]. Without a controller:
/// full-stripe drive rate. Write-through controller: min(host link, drive rate with
/// read-modify-write for parity RAID). Write-back controller: the cache accepts writes at the host
/// link while draining at the full-stripe drive rate; once full, writes go at the drive rate.
double local_write_seconds(const LocalStorageSpec& local, double bytes);

/// Checkpoint bytes of the whole job: weights + optimizer state of every parameter (mixed
/// precision: 2 + 12 bytes, fp32: 4 + 8), from the memory model's per-parameter bytes
/// (models/workload/memory_model.h). Gradients are not saved.
double checkpoint_bytes(const Scenario& sc);

/// Nodes that write a checkpoint: every node with ZeRO-1 (each DP rank owns an optimizer shard;
/// Megatron-Core's distributed checkpoint also spreads the weights over DP ranks); otherwise only
/// the nodes of DP replica 0 (tp x pp GPUs), as Megatron-LM saves from DP rank 0.
int checkpoint_writer_nodes(const Scenario& sc, const StorageNodes& nodes);

/// Everything storage reports except the interval-dependent parts (interval, amortised stall);
/// `compute_iteration_s` is the simulated iteration without storage stalls.
StorageReport evaluate_storage(const Scenario& sc, const StorageNodes& nodes, double compute_iteration_s);

/// Fills the interval-dependent parts: interval, stall per checkpoint (asynchronous: snapshot
/// plus any part of the background write that outlasts the interval) and per iteration.
void set_checkpoint_interval(StorageReport& r, const StorageSpec& spec, double interval_s, double iteration_s);

}  // namespace traincast::models
