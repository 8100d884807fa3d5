// NCCL's tree chunk and the tree's chunk pipeline fill. See nccl_chunking.h.

#include "models/collectives/nccl_chunking.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "models/calibration/calibration_profile.h"
#include "models/collectives/nccl_tuning.h"

namespace traincast::models {
namespace {

// Whole chunks per channel, NCCL's integer division ("nBytes / (nChannels*chunkSize)").
std::int64_t whole_chunks(std::int64_t bytes, std::int64_t channels, std::int64_t chunk) {
  return bytes / (channels * chunk);
}

// Down to a multiple of the grain (integer division, as NCCL's alignment).
std::int64_t align_down(std::int64_t n, std::int64_t grain) { return n - n % grain; }

}  // namespace

double tree_chunk_bytes(const CollectivePlan& plan, int p, double bytes, int channels) {
  if (plan.algorithm != CollectiveAlgorithm::tree || !(bytes > 0)) return 0;
  // calcCollChunking (nccl_chunking.h): one step per chunk for a tree.
  const double buff = p == kNcclLl      ? NcclChunking::ll_buff_bytes
                      : p == kNcclLl128 ? NcclChunking::ll128_buff_bytes
                                        : NcclChunking::simple_buff_bytes;
  auto chunk = static_cast<std::int64_t>(buff) / NcclChunking::steps;
  if (p == kNcclLl) chunk /= 2;
  if (p == kNcclLl128) chunk = chunk / 16 * 15;  // NCCL_LL128_LINEELEMS 16, NCCL_LL128_DATAELEMS 15
  const std::int64_t n_bytes = static_cast<std::int64_t>(bytes);
  const std::int64_t nc = std::max(1, channels);
  if (p == kNcclLl128) {
    const int nodes = std::max(1, plan.num_nodes);
    const double ppn = static_cast<double>(plan.ranks.size()) / nodes;
    if (ppn > 0) {
      const double nsteps = 1 + nccl_log2i(nodes) + 0.1 * ppn;
      while (static_cast<double>(whole_chunks(n_bytes, nc, chunk)) < nsteps * 64 / ppn && chunk > 131072) chunk /= 2;
      while (static_cast<double>(whole_chunks(n_bytes, nc, chunk)) < nsteps * 16 / ppn && chunk > 32768) chunk /= 2;
    }
  }
  // ncclProtoGrainSize: LL 16, LL128 WARP_SIZE x NCCL_LL128_SHMEM_ELEMS_PER_THREAD /
  // NCCL_LL128_LINEELEMS x NCCL_LL128_DATAELEMS x 8 = 1920, Simple 512.
  const std::int64_t grain = p == kNcclLl ? 16 : p == kNcclLl128 ? 32 * 8 / 16 * 15 * 8 : 512;
  return static_cast<double>(align_down(chunk, grain));
}

int tree_pipeline_hops(const CollectivePlan& plan) {
  if (plan.algorithm != CollectiveAlgorithm::tree || plan.num_nodes < 2) return 0;
  return 2 * nccl_log2i(plan.num_nodes);
}

double tree_pipeline_fill_s(const CollectivePlan& plan, const CollectivePhase& phase, int p, double bytes) {
  const int hops = tree_pipeline_hops(plan);
  // LL128 only (nccl_chunking.h: LL runs where one chunk per channel holds the call, and Simple's
  // fill is not established by the logs).
  if (hops == 0 || p != kNcclLl128 || !(bytes > 0) || phase.num_flows == 0 || !(phase.tuner_seconds_per_byte > 0)) {
    return 0;
  }
  const NcclChannelCut cut = nccl_channel_cut(plan, p, bytes);
  const int all_channels = std::max(1, plan.nccl_channels > 0 ? plan.nccl_channels : plan.channels);
  const int kept = cut.channels > 0 ? cut.channels : all_channels;
  const double chunk = tree_chunk_bytes(plan, p, bytes, kept);
  if (!(chunk > 0)) return 0;
  // Chunks per channel beyond the first: one chunk's store-and-forward is in NCCL's per-hop
  // latency; the fill comes in with the second chunk (0 at one chunk or less, all of it from two).
  const double ramp = std::clamp(bytes / (kept * chunk) - 1.0, 0.0, 1.0);
  if (!(ramp > 0)) return 0;
  // A channel's share of the phase's links (1 / nChannels of them, whatever the cut keeps), at the
  // protocol's wire efficiency and the calibration fit's scales.
  double rate = NcclChunking::wire_efficiency[static_cast<std::size_t>(p)];
  if (plan.fit != nullptr) {
    rate *= plan.fit->bandwidth_scale * plan.fit->protocol_bandwidth_scale[static_cast<std::size_t>(p)] /
            plan.fit->correction(bytes);
  }
  return ramp * hops * NcclChunking::fill_chunks_per_hop * chunk * all_channels * phase.tuner_seconds_per_byte / rate;
}

}  // namespace traincast::models
