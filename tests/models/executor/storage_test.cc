// Storage model: RAID arithmetic, controller cache policies, checkpoint size from the memory
// model, data-loader stalls, and monotonicity (more bandwidth is never slower).
#include <gtest/gtest.h>

#include "models/executor/training_executor.h"
#include "models/storage/storage_model.h"
#include "models/workload/transformer.h"

namespace traincast::models {
namespace {

Scenario gpt_on(int nodes) {
  Scenario s;
  s.cluster.node_template = "dgx_h100";
  s.cluster.num_nodes = nodes;
  s.model.num_layers = 32;
  s.model.hidden_size = 4096;
  s.model.num_attention_heads = 32;
  s.model.vocab_size = 51200;
  s.model.seq_length = 2048;
  s.parallel.tp = 8;
  s.parallel.pp = 1;
  s.parallel.dp = nodes;
  s.training.global_batch_size = 64 * nodes;
  s.storage = StorageSpec{};
  return s;
}

StorageNodes dgx(int nodes) { return {nodes, 8, 63.0e9}; }

TEST(Storage, RaidWriteArithmetic) {
  LocalStorageSpec l;
  l.drives = 8;
  l.drive_write_gb_per_s = 4.0;
  l.raid = RaidLevel::raid0;
  EXPECT_DOUBLE_EQ(raid_write_bytes_per_s(l, true), 32e9);
  l.raid = RaidLevel::raid10;
  EXPECT_DOUBLE_EQ(raid_write_bytes_per_s(l, true), 16e9);
  l.raid = RaidLevel::raid5;
  EXPECT_DOUBLE_EQ(raid_write_bytes_per_s(l, true), 28e9);  // 7 data drives
  EXPECT_DOUBLE_EQ(raid_write_bytes_per_s(l, false), 8e9);  // 4 I/Os per write
  l.raid = RaidLevel::raid6;
  EXPECT_DOUBLE_EQ(raid_write_bytes_per_s(l, true), 24e9);
  EXPECT_NEAR(raid_write_bytes_per_s(l, false), 32e9 / 6, 1);
  l.drives = 3;
  EXPECT_THROW(raid_write_bytes_per_s(l, true), std::invalid_argument);
}

TEST(Storage, WriteBackCacheAbsorbsThenDrains) {
  LocalStorageSpec l;
  l.drives = 4;
  l.drive_write_gb_per_s = 2.0;
  l.raid = RaidLevel::raid5;  // full stripe 6 GB/s, read-modify-write 2 GB/s
  l.hardware_controller = true;
  l.controller_gb_per_s = 12.0;
  l.controller_cache_bytes = 6e9;
  l.cache_policy = WriteCachePolicy::write_back;
  // Cache fills at 12 - 6 = 6 GB/s: full after 1 s, having taken 12 GB at link speed.
  EXPECT_NEAR(local_write_seconds(l, 12e9), 1.0, 1e-12);
  EXPECT_NEAR(local_write_seconds(l, 6e9), 0.5, 1e-12);
  EXPECT_NEAR(local_write_seconds(l, 24e9), 1.0 + 12e9 / 6e9, 1e-12);
  l.cache_policy = WriteCachePolicy::write_through;
  EXPECT_NEAR(local_write_seconds(l, 24e9), 24e9 / 2e9, 1e-9);
  // Write-through is never faster than write-back, for any size.
  for (double bytes : {1e6, 1e9, 1e10, 1e11, 1e12}) {
    l.cache_policy = WriteCachePolicy::write_back;
    const double wb = local_write_seconds(l, bytes);
    l.cache_policy = WriteCachePolicy::write_through;
    EXPECT_GE(local_write_seconds(l, bytes), wb) << bytes;
  }
}

TEST(Storage, CheckpointBytesAreWeightsPlusAdamStatePerParameter) {
  Scenario s = gpt_on(1);
  s.model.untied_embeddings = true;  // the memory model keeps a tied output copy on the last stage
  // Mixed-precision Adam: 2 B weights + 12 B fp32 master, m, v per parameter; grads not saved.
  const double params = total_parameters(s.model);
  EXPECT_NEAR(checkpoint_bytes(s) / (14.0 * params), 1.0, 1e-3);
  // Sharding (ZeRO-1, more TP or PP) moves bytes between GPUs, it does not change the total.
  s.parallel.zero_stage = 1;
  EXPECT_NEAR(checkpoint_bytes(s) / (14.0 * params), 1.0, 1e-3);
}

TEST(Storage, WritersZeroVersusDpRankZero) {
  Scenario s = gpt_on(16);
  EXPECT_EQ(checkpoint_writer_nodes(s, dgx(16)), 1);  // tp 8 x pp 1 = one node of DP replica 0
  s.parallel.zero_stage = 1;
  EXPECT_EQ(checkpoint_writer_nodes(s, dgx(16)), 16);
}

TEST(Storage, DataStallOnlyWhenReadingIsSlowerThanComputing) {
  Scenario s = gpt_on(2);
  s.storage->bytes_per_sample = 10e6;  // e.g. images: 10 MB per sequence
  s.storage->shared_fs.aggregate_read_gb_per_s = 1.0;
  // 128 sequences x (2048 x 2 B + 10 MB) = 1.28 GB per iteration at 1 GB/s: 1.28 s to read.
  const StorageReport slow = evaluate_storage(s, dgx(2), 0.5);
  EXPECT_NEAR(slow.data_bytes_per_iteration, 128 * (2048 * 2 + 10e6), 1);
  EXPECT_NEAR(slow.data_read_s_per_iteration, slow.data_bytes_per_iteration / 1e9, 1e-9);
  EXPECT_NEAR(slow.data_stall_s_per_iteration, slow.data_read_s_per_iteration - 0.5, 1e-9);
  const StorageReport fast = evaluate_storage(s, dgx(2), 2.0);
  EXPECT_EQ(fast.data_stall_s_per_iteration, 0.0);
  // vocab >= 65,500 needs 4-byte token IDs.
  s.storage->bytes_per_sample = 0;
  s.model.vocab_size = 128256;
  EXPECT_NEAR(evaluate_storage(s, dgx(2), 1.0).data_bytes_per_iteration, 128 * 2048 * 4.0, 1e-6);
}

TEST(Storage, PropertyMoreBandwidthNeverSlower) {
  for (const StorageTarget target : {StorageTarget::local, StorageTarget::shared_fs}) {
    for (const CheckpointMode mode : {CheckpointMode::synchronous, CheckpointMode::asynchronous}) {
      Scenario s = gpt_on(4);
      s.parallel.zero_stage = 1;
      s.storage->bytes_per_sample = 1e6;
      s.storage->data_source = target;
      s.storage->checkpoint_target = target;
      s.storage->checkpoint_mode = mode;
      s.storage->local.hardware_controller = true;
      s.storage->local.raid = RaidLevel::raid5;
      double prev_read = 1e300, prev_write = 1e300, prev_stall = 1e300;
      for (double scale : {0.05, 0.1, 0.3, 1.0, 3.0, 10.0}) {
        Scenario t = s;
        StorageSpec& st = *t.storage;
        st.local.drive_read_gb_per_s *= scale;
        st.local.drive_write_gb_per_s *= scale;
        st.local.controller_gb_per_s *= scale;
        st.shared_fs.aggregate_read_gb_per_s *= scale;
        st.shared_fs.aggregate_write_gb_per_s *= scale;
        st.shared_fs.per_node_gb_per_s *= scale;
        StorageReport r = evaluate_storage(t, dgx(4), 0.2);
        set_checkpoint_interval(r, st, 600.0, 0.2);
        EXPECT_LE(r.data_read_s_per_iteration, prev_read);
        EXPECT_LE(r.checkpoint_write_s, prev_write);
        EXPECT_LE(r.checkpoint_stall_s, prev_stall);
        prev_read = r.data_read_s_per_iteration, prev_write = r.checkpoint_write_s, prev_stall = r.checkpoint_stall_s;
      }
    }
  }
}

TEST(Storage, AsynchronousStallsOnlyForTheSnapshotUnlessWritesOverlap) {
  Scenario s = gpt_on(1);
  s.storage->checkpoint_mode = CheckpointMode::asynchronous;
  s.storage->shared_fs.per_node_gb_per_s = 1.0;  // slow writes
  StorageReport r = evaluate_storage(s, dgx(1), 1.0);
  ASSERT_GT(r.checkpoint_write_s, r.checkpoint_snapshot_s);
  set_checkpoint_interval(r, *s.storage, r.checkpoint_write_s * 2, 1.0);
  EXPECT_DOUBLE_EQ(r.checkpoint_stall_s, r.checkpoint_snapshot_s);
  set_checkpoint_interval(r, *s.storage, r.checkpoint_write_s / 2, 1.0);
  EXPECT_NEAR(r.checkpoint_stall_s, r.checkpoint_snapshot_s + r.checkpoint_write_s / 2, 1e-9);
  s.storage->checkpoint_mode = CheckpointMode::synchronous;
  StorageReport sync = evaluate_storage(s, dgx(1), 1.0);
  set_checkpoint_interval(sync, *s.storage, sync.checkpoint_write_s * 2, 1.0);
  EXPECT_GE(sync.checkpoint_stall_s, r.checkpoint_snapshot_s);
}

// The storage stall is part of the simulated timeline: the GPUs wait idle. A GEMM-heavy job on
// one DGX H100 (TP 2 x DP 4, 16 sequences of 2,048 tokens) whose loader reads 100 MB per sequence
// from a shared file system at 1 GB/s: 16 x (2,048 x 2 B + 100e6 B) = 1.6000655e9 B per iteration,
// 1.6000655 s to read, so the data stall is 1.6000655 s - T (T: the iteration without storage).
// Every GPU draws its idle power during the stall, 70 W (catalog H100 SXM idle_w), so its energy
// per iteration grows by exactly 70 W x stall; the compute-busy fraction falls by T / (T + stall).
TEST(StorageInTimeline, StallIsIdleTimeForPowerAndUtilization) {
  Scenario s;
  s.cluster.node_template = "dgx_h100";
  s.model.num_layers = 2;
  s.model.hidden_size = 8192;
  s.model.num_attention_heads = 64;
  s.model.vocab_size = 32000;
  s.model.seq_length = 2048;
  s.parallel.tp = 2;
  s.parallel.dp = 4;
  s.training.global_batch_size = 16;
  s.training.micro_batch_size = 2;
  s.training.precision = Precision::bf16;
  s.options.iterations = 2;
  const Report base = simulate_training(s);
  s.storage = StorageSpec{};
  s.storage->bytes_per_sample = 100e6;
  s.storage->shared_fs.aggregate_read_gb_per_s = 1.0;
  const Report r = simulate_training(s);
  const double t = base.iteration_time_s;
  ASSERT_LT(t, 1.0);
  EXPECT_NEAR(r.storage.data_stall_s_per_iteration, 16 * (2048 * 2 + 100e6) / 1e9 - t, 1e-9);
  const double stall = r.storage.data_stall_s_per_iteration + r.storage.checkpoint_stall_s_per_iteration;
  EXPECT_NEAR(r.breakdown.storage_stall_s, stall, 1e-9);
  EXPECT_NEAR(r.iteration_time_s, t + stall, 2e-9);
  ASSERT_EQ(r.power.gpus.size(), base.power.gpus.size());
  for (std::size_t i = 0; i < r.power.gpus.size(); ++i) {
    EXPECT_NEAR(r.power.gpus[i].energy_j, base.power.gpus[i].energy_j + 70.0 * stall, 1e-6) << i;
    EXPECT_NEAR(r.power.gpus[i].average_w, r.power.gpus[i].energy_j / r.iteration_time_s, 1e-9) << i;
  }
  EXPECT_LT(r.power.gpu_average_w, 0.5 * base.power.gpu_average_w);  // mostly idle now
  EXPECT_NEAR(r.utilization.gpu_compute_busy_fraction_mean,
              base.utilization.gpu_compute_busy_fraction_mean * t / (t + stall), 1e-6);
  // Cooler on average: idle for most of the iteration.
  EXPECT_LT(r.thermal.gpus[0].average_c, base.thermal.gpus[0].average_c);
}

}  // namespace
}  // namespace traincast::models
