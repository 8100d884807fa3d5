#include "models/storage/storage_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/workload/memory_model.h"
#include "models/workload/pipeline_schedule.h"

namespace traincast::models {
namespace {

constexpr double kGB = 1e9;

int min_drives(RaidLevel level) {
  switch (level) {
    case RaidLevel::raid0:
      return 1;
    case RaidLevel::raid1:
    case RaidLevel::raid10:
      return 2;
    case RaidLevel::raid5:
      return 3;
    case RaidLevel::raid6:
      return 4;
  }
  return 1;
}

/// Bytes per second of sequential reads or full-stripe writes to `target` for `readers` nodes,
/// each at most `per_node`, all together at most `aggregate`.
double shared_rate(double aggregate, double per_node, int nodes) { return std::min(aggregate, per_node * nodes); }

}  // namespace

double raid_write_bytes_per_s(const LocalStorageSpec& l, bool full_stripe) {
  const int n = l.drives;
  if (n < min_drives(l.raid) || (l.raid == RaidLevel::raid10 && n % 2 != 0))
    throw std::invalid_argument("storage: " + std::to_string(n) + " drives cannot form the RAID level");
  const double w = l.drive_write_gb_per_s * kGB;
  switch (l.raid) {
    case RaidLevel::raid0:
      return n * w;
    case RaidLevel::raid1:
    case RaidLevel::raid10:
      return n * w / 2.0;  // every byte goes to two drives
    case RaidLevel::raid5:
      return full_stripe ? (n - 1) * w : n * w / 4.0;  // read data+parity, write data+parity
    case RaidLevel::raid6:
      return full_stripe ? (n - 2) * w : n * w / 6.0;  // read data+P+Q, write data+P+Q
  }
  return n * w;
}

double local_read_bytes_per_s(const LocalStorageSpec& l) {
  const double drives = l.drives * l.drive_read_gb_per_s * kGB;
  return l.hardware_controller ? std::min(drives, l.controller_gb_per_s * kGB) : drives;
}

double local_write_seconds(const LocalStorageSpec& l, double bytes) {
  if (bytes <= 0) return 0.0;
  if (!l.hardware_controller) return bytes / raid_write_bytes_per_s(l, /*full_stripe=*/true);
  const double link = l.controller_gb_per_s * kGB;
  if (l.cache_policy == WriteCachePolicy::write_through)
    return bytes / std::min(link, raid_write_bytes_per_s(l, /*full_stripe=*/false));
  // Write-back: the cache fills at (link - drain) until full, then writes go at the drain rate.
  const double drain = std::min(link, raid_write_bytes_per_s(l, /*full_stripe=*/true));
  if (link <= drain || l.controller_cache_bytes <= 0) return bytes / drain;
  const double fill_s = l.controller_cache_bytes / (link - drain);
  const double absorbed = link * fill_s;  // host bytes accepted while the cache fills
  if (bytes <= absorbed) return bytes / link;
  return fill_s + (bytes - absorbed) / drain;
}

double checkpoint_bytes(const Scenario& sc) {
  // The memory model's per-GPU weights and optimizer state, unsharded over DP, times TP, summed
  // over stages (activations play no part: stage_memory's in-flight count is irrelevant here).
  const GpuSpec& gpu = find_gpu(sc.cluster.gpu.empty() ? cluster_node_template(sc.cluster).gpu : sc.cluster.gpu);
  const std::vector<int> layers = stage_layer_counts(sc);
  double total = 0;
  for (int s = 0; s < sc.parallel.pp; ++s) {
    const MemoryBreakdown mb = stage_memory(sc, gpu, s, layers[static_cast<std::size_t>(s)], 0.0);
    // ZeRO shards over dp x cp (context-parallel ranks hold the same parameters).
    const double optimizer =
        mb.optimizer_bytes * (sc.parallel.zero_stage >= 1 ? sc.parallel.dp * std::max(1, sc.parallel.cp) : 1);
    total += (mb.weights_bytes + optimizer) * sc.parallel.tp;
  }
  return total;
}

int checkpoint_writer_nodes(const Scenario& sc, const StorageNodes& nodes) {
  if (sc.parallel.zero_stage >= 1) return nodes.num_nodes;
  const long long gpus = static_cast<long long>(sc.parallel.tp) * sc.parallel.pp;
  return static_cast<int>(
      std::clamp<long long>((gpus + nodes.gpus_per_node - 1) / nodes.gpus_per_node, 1, nodes.num_nodes));
}

StorageReport evaluate_storage(const Scenario& sc, const StorageNodes& nodes, double compute_iteration_s) {
  const StorageSpec& spec = sc.storage.value();
  StorageReport r;
  r.modelled = true;

  // Data loading. Megatron-LM builds a data iterator on the first and the last pipeline stage
  // (the last needs the labels); TP rank 0 reads and broadcasts, so TP does not multiply reads.
  // Stage s holds GPUs [s tp dp, (s+1) tp dp) (TP innermost, PP outermost), so its nodes are
  // ceil(tp dp / gpus_per_node).
  const double bytes_per_token =
      spec.bytes_per_token > 0 ? spec.bytes_per_token : (sc.model.vocab_size < 65500 ? 2.0 : 4.0);
  const double sample_bytes = sc.model.seq_length * bytes_per_token + spec.bytes_per_sample;
  const int reading_stages = sc.parallel.pp > 1 ? 2 : 1;
  r.data_bytes_per_iteration = static_cast<double>(sc.training.global_batch_size) * sample_bytes * reading_stages;
  const long long stage_gpus = static_cast<long long>(sc.parallel.tp) * sc.parallel.dp * std::max(1, sc.parallel.cp);
  const int stage_nodes = static_cast<int>(
      std::clamp<long long>((stage_gpus + nodes.gpus_per_node - 1) / nodes.gpus_per_node, 1, nodes.num_nodes));
  const int readers = std::min(nodes.num_nodes, stage_nodes * reading_stages);
  const double read_rate =
      spec.data_source == StorageTarget::local
          ? local_read_bytes_per_s(spec.local) * readers
          : shared_rate(spec.shared_fs.aggregate_read_gb_per_s * kGB, spec.shared_fs.per_node_gb_per_s * kGB, readers);
  r.data_read_gb_per_s_available = read_rate / kGB;
  r.data_read_s_per_iteration = r.data_bytes_per_iteration / read_rate;
  r.data_read_gb_per_s_needed = compute_iteration_s > 0 ? r.data_bytes_per_iteration / compute_iteration_s / kGB : 0.0;
  // The loader prefetches the next batches while the GPUs compute (PyTorch DataLoader workers with
  // prefetch_factor): it only stalls training when reading a batch takes longer than computing one.
  r.data_stall_s_per_iteration = std::max(0.0, r.data_read_s_per_iteration - compute_iteration_s);

  // Checkpoint.
  r.checkpoint_bytes = checkpoint_bytes(sc);
  r.checkpoint_writer_nodes = checkpoint_writer_nodes(sc, nodes);
  r.checkpoint_bytes_per_writer_node = r.checkpoint_bytes / r.checkpoint_writer_nodes;
  const int writer_gpus_per_node = std::min<long long>(
      nodes.gpus_per_node, static_cast<long long>(sc.parallel.tp) * sc.parallel.pp *
                               (sc.parallel.zero_stage >= 1 ? sc.parallel.dp * std::max(1, sc.parallel.cp) : 1));
  const double snapshot_rate = (spec.snapshot_gb_per_s > 0 ? spec.snapshot_gb_per_s * kGB : nodes.pcie_bytes_per_s) *
                               std::max(1, writer_gpus_per_node);
  r.checkpoint_snapshot_s = snapshot_rate > 0 ? r.checkpoint_bytes_per_writer_node / snapshot_rate : 0.0;
  double storage_s = 0;
  if (spec.checkpoint_target == StorageTarget::local) {
    storage_s = local_write_seconds(spec.local, r.checkpoint_bytes_per_writer_node);
    r.checkpoint_read_s = r.checkpoint_bytes_per_writer_node / local_read_bytes_per_s(spec.local);
    const LocalStorageSpec& l = spec.local;
    r.bottleneck = !l.hardware_controller ? "local drives (software RAID)"
                   : l.cache_policy == WriteCachePolicy::write_through
                       ? "RAID controller in write-through (no write cache)"
                       : "local drives behind a write-back controller cache";
  } else {
    const SharedFsSpec& f = spec.shared_fs;
    const double write_rate =
        shared_rate(f.aggregate_write_gb_per_s * kGB, f.per_node_gb_per_s * kGB, r.checkpoint_writer_nodes);
    storage_s = r.checkpoint_bytes / write_rate;
    // Restart: every node reads its part back (all nodes load, writers' shards are read by the
    // ranks that need them; the bytes are the same).
    const double restart_read_rate =
        shared_rate(f.aggregate_read_gb_per_s * kGB, f.per_node_gb_per_s * kGB, nodes.num_nodes);
    r.checkpoint_read_s = r.checkpoint_bytes / restart_read_rate;
    r.bottleneck = f.aggregate_write_gb_per_s <= f.per_node_gb_per_s * r.checkpoint_writer_nodes
                       ? "shared file system aggregate write bandwidth"
                       : "per-node storage links";
  }
  // Synchronous: the device-to-host copy and the write are pipelined, the slower one sets the pace.
  r.checkpoint_write_s =
      std::max(storage_s, spec.checkpoint_mode == CheckpointMode::synchronous ? r.checkpoint_snapshot_s : 0.0);
  r.checkpoint_write_gb_per_s = r.checkpoint_write_s > 0 ? r.checkpoint_bytes / r.checkpoint_write_s / kGB : 0.0;
  return r;
}

void set_checkpoint_interval(StorageReport& r, const StorageSpec& spec, double interval_s, double iteration_s) {
  r.checkpoint_interval_s = interval_s;
  r.checkpoint_interval_iterations = iteration_s > 0 ? interval_s / iteration_s : 0.0;
  if (spec.checkpoint_mode == CheckpointMode::synchronous) {
    r.checkpoint_stall_s = r.checkpoint_write_s;
  } else {
    // The next snapshot waits for the previous background write to finish.
    r.checkpoint_stall_s = r.checkpoint_snapshot_s + std::max(0.0, r.checkpoint_write_s - interval_s);
  }
  r.checkpoint_stall_s_per_iteration = r.checkpoint_interval_iterations > 0
                                           ? r.checkpoint_stall_s / std::max(1.0, r.checkpoint_interval_iterations)
                                           : 0.0;
}

}  // namespace traincast::models
