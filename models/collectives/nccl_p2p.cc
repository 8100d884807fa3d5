// NCCL's point-to-point schedule on one node. See nccl_p2p.h (sources there).

#include "models/collectives/nccl_p2p.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/collectives/collective_plan.h"
#include "models/collectives/nccl_tuning.h"

namespace traincast::models {
namespace {

int pow2_up(int x) {
  int p = 1;
  while (p < x) p <<= 1;
  return p;
}

int log2_up(int x) {
  int l = 0;
  while ((1 << l) < x) ++l;
  return l;
}

// src/include/bitops.h reverseBits(x, nBits): the low nBits of x in reverse order (higher bits dropped).
int reverse_bits(int x, int bits) {
  int r = 0;
  for (int i = 0; i < bits; ++i) r |= ((x >> i) & 1) << (bits - 1 - i);
  return r;
}

// addP2pToPlan's channel count for one direction (one node): see nccl_p2p.h.
int part_count(double bytes, double step_bytes, int channels_min, int channels_max) {
  if (bytes <= 0) return 1;
  const double min_part = step_bytes / 8, max_part = step_bytes * 32;
  int k = std::min(channels_min, static_cast<int>(std::ceil(bytes / min_part)));
  double part = std::max(min_part, std::ceil(bytes / k));
  while (part > max_part && k <= channels_max / 2) {
    k *= 2;
    part = std::ceil(bytes / k);
  }
  return k;
}

}  // namespace

NcclP2pChannels nccl_p2p_channels(int comm_channels, int fewest_peer_channels) {
  if (comm_channels < 1 || fewest_peer_channels < 1) {
    throw std::invalid_argument("nccl_p2p_channels: channel counts must be >= 1 (got " + std::to_string(comm_channels) +
                                ", " + std::to_string(fewest_peer_channels) + ")");
  }
  // paths.cc ncclTopoComputeP2pChannels (NCCL_MIN_P2P_NCHANNELS 1, NCCL_MAX_P2P_NCHANNELS MAXCHANNELS).
  const int p2p = std::max(1, std::min(comm_channels, kNcclMaxP2pChannels));
  const int fewest = std::min(p2p, fewest_peer_channels);
  NcclP2pChannels c;
  c.channels = pow2_up(p2p);
  c.per_peer = std::min(pow2_up(fewest), c.channels);
  return c;
}

int nccl_p2p_peer_channels(int nvlinks) { return 2 * std::max(1, nvlinks); }

int nccl_p2p_net_peer_channels(int n_ranks, int p2p_channels, int nics_by_bw) {
  if (n_ranks < 1 || p2p_channels < 1 || nics_by_bw < 1) {
    throw std::invalid_argument("nccl_p2p_net_peer_channels: counts must be >= 1 (got " + std::to_string(n_ranks) +
                                ", " + std::to_string(p2p_channels) + ", " + std::to_string(nics_by_bw) + ")");
  }
  int channels = 2;
  while (channels * n_ranks > p2p_channels * 4 && channels > 1) channels /= 2;
  return std::max(nics_by_bw, channels);
}

double nccl_p2p_net_ll_bytes(int comm_channels, int n_ranks, int nics_by_bw) {
  const int p2p = std::max(1, std::min(comm_channels, kNcclMaxP2pChannels));
  const int net = nccl_p2p_net_peer_channels(n_ranks, p2p, nics_by_bw);
  // NCCL's p2pnChannelsPerPeer takes the fewest of every peer's count. A peer on the node gives at
  // least 2 (2 x its NVLinks, or 2), so the network peer's is the fewest whenever it is at most 2,
  // i.e. unless a GPU needs 3 or more NICs for its bandwidth (no template of the catalog).
  return nccl_p2p_channels(comm_channels, net).per_peer * kNcclP2pLlThresholdBytes;
}

NcclP2pPlan nccl_p2p_plan(int n_ranks, std::span<const int> rounds, double bytes_per_peer, const NcclP2pChannels& ch,
                          double simple_chunk_bytes) {
  if (n_ranks < 1) throw std::invalid_argument("nccl_p2p_plan: n_ranks must be >= 1");
  if (!(bytes_per_peer >= 0) || !std::isfinite(bytes_per_peer)) {
    throw std::invalid_argument("nccl_p2p_plan: bytes must be finite and >= 0");
  }
  // scheduleP2pTasksToPlan: nChannelsMax = p2pnChannelsPerPeer; nChannelsMin halved while
  // nChannelsMin x nRanks > p2pnChannels.
  const int channels_max = ch.per_peer;
  int channels_min = channels_max;
  while (channels_min * n_ranks > ch.channels && channels_min > 1) channels_min /= 2;
  NcclP2pPlan plan;
  // addP2pToPlan: LL up to nChannelsMax x NCCL_P2P_LL_THRESHOLD (to another rank only).
  plan.ll = bytes_per_peer <= channels_max * kNcclP2pLlThresholdBytes;
  const double peer_step = plan.ll ? kNcclP2pLlStepBytes : simple_chunk_bytes;
  plan.parts = part_count(bytes_per_peer, peer_step, channels_min, channels_max);
  const int bits = log2_up(ch.channels);
  std::vector<double> load(static_cast<std::size_t>(ch.channels), 0.0);
  for (int round : rounds) {
    if (round < 0 || round >= n_ranks) {
      throw std::invalid_argument("nccl_p2p_plan: round " + std::to_string(round) + " outside [0, " +
                                  std::to_string(n_ranks) + ")");
    }
    // Round 0 sends to the rank itself: Simple, its own part count.
    const int parts =
        round == 0 ? part_count(bytes_per_peer, simple_chunk_bytes, channels_min, channels_max) : plan.parts;
    const double part_bytes =
        std::ceil(std::ceil(bytes_per_peer / parts) / kNcclP2pPartAlignBytes) * kNcclP2pPartAlignBytes;
    const int base = reverse_bits(round, bits);  // channel.h ncclP2pChannelBaseForRound, one node
    for (int part = 0; part < parts; ++part) {
      const double beg = std::min(part * part_bytes, bytes_per_peer);
      const double end = std::min((part + 1) * part_bytes, bytes_per_peer);
      const int channel = (base + part) & (ch.channels - 1);  // ncclP2pChannelForPart
      load[static_cast<std::size_t>(channel)] += end - beg;
    }
  }
  for (double b : load) {
    plan.max_channel_bytes = std::max(plan.max_channel_bytes, b);
    plan.busy_channels += b > 0 ? 1 : 0;
  }
  return plan;
}

// Declared in nccl_tuning.h (the tuner's p2p protocol and channel factor read it).
NcclP2pPlan p2p_plan_at(const CollectivePlan& plan, double bytes) {
  const double per_peer = plan.op == CollectiveOp::all_to_all ? bytes / static_cast<double>(plan.ranks.size()) : bytes;
  return nccl_p2p_plan(static_cast<int>(plan.ranks.size()), plan.p2p_rounds, per_peer, plan.p2p_channels,
                       plan.p2p_chunk_bytes);
}

}  // namespace traincast::models
