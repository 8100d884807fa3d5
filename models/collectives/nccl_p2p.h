#pragma once
// NCCL's point-to-point schedule inside one NVLink domain: all_to_all and send_recv run as grouped
// ncclSend / ncclRecv, which NCCL's tuner never sees. Its planner picks the protocol by size, cuts
// each peer's transfer into parts, one per channel, and places the parts of every p2p round on the
// communicator's p2p channels; the busiest channel, moving at one channel's rate, can bound the
// time well before the GPU's links do.
//
// Sources (NVIDIA/nccl, the planner with ncclDevWorkP2p, 2.22+; stored copies of each file):
//  - src/graph/paths.cc ncclTopoComputeP2pChannels: p2pnChannels = min(comm->nChannels,
//    NCCL_MAX_P2P_NCHANNELS = MAXCHANNELS), at least NCCL_MIN_P2P_NCHANNELS = 1; minChannels = the
//    fewest of p2pnChannels and ncclTopoGetNchannels over every peer; p2pnChannelsPerPeer =
//    pow2Up(minChannels), p2pnChannels = pow2Up(p2pnChannels), the first at most the second.
//    ncclTopoGetNchannels, local peer: PATH_NVL: 2 x max(1, (int)(path bw / per-link NVLink bw)),
//    i.e. 2 x the NVLink links on the path (18 on an H100 or B200 NVSwitch port: 36); else 2.
//  - src/enqueue.cc scheduleP2pTasksToPlan: nChannelsMax = p2pnChannelsPerPeer; nChannelsMin =
//    nChannelsMax, halved "while (nChannelsMin*nRanks > comm->p2pnChannels && nChannelsMin > 1)";
//    rounds 0 .. nRanks-1 of comm->p2pSchedule (round 0: the rank itself).
//  - src/enqueue.cc addP2pToPlan: LL when bytes <= nChannelsMax x NCCL_P2P_LL_THRESHOLD (16384)
//    and not to itself, else Simple (never LL128); stepSize: LL buffSizes[LL] / NCCL_STEPS =
//    DEFAULT_LL_BUFFSIZE (8 lines x 512 threads x 8 steps x 16 B = 512 KiB) / 8 = 64 KiB, Simple
//    comm->p2pChunkSize (src/init.cc: NCCL_P2P_NVL_CHUNKSIZE 512 KiB when every path is NVLink,
//    NCCL_P2P_PCI_CHUNKSIZE / NCCL_P2P_NET_CHUNKSIZE 128 KiB otherwise); one node: minPartSize =
//    stepSize / 8, maxPartSize = stepSize x 32; nChannels = min(nChannelsMin, divUp(bytes,
//    minPartSize)), doubled while divUp(bytes, nChannels) > maxPartSize and nChannels <=
//    nChannelsMax / 2; 0 bytes: 1 channel.
//  - src/include/device.h ncclP2pPartBounds: part bytes = alignUp(divUp(bytes, nParts), 4 KiB);
//    ncclP2pChannelForPart: channel = (base + part) & (p2pnChannels - 1); src/include/channel.h
//    ncclP2pChannelBaseForRound, one node: reverseBits(round, log2Up(p2pnChannels)) (bits above
//    log2 p2pnChannels dropped), so consecutive rounds start half the channels apart and a
//    peer's parts fill the channels next to its base. Stored copies hold a second form of
//    ncclP2pChannelForPart, (base + reverseBits(part, log2 p2pnChannels)) & (p2pnChannels - 1),
//    which keeps an 8-rank group's 4 parts per peer on 8 of 32 channels; the GB200 rows of
//    openxla's table (docs/hardware.md) run 8- and 16-rank groups at the rate of all 32, as the
//    form used here does, so the model follows it.
//
// Time: a channel is one thread block moving its parts one after the other at one channel's rate;
// the model takes that rate from NCCL's own ring graph (ncclTopoCompute's per-channel bandwidth
// bwIntra, nccl_topo_search.h), the figure NCCL's tuner multiplies by the channels. The call takes
// the longer of its links' time (the flows) and the busiest channel's bytes / that rate, times the
// protocol's bandwidth factor.

#include <span>

namespace traincast::models {

/// NCCL_P2P_LL_THRESHOLD (src/enqueue.cc NCCL_PARAM(P2pLLThreshold, "P2P_LL_THRESHOLD", 16384)).
inline constexpr double kNcclP2pLlThresholdBytes = 16384.0;
/// NCCL_P2P_NVL_CHUNKSIZE (src/init.cc NCCL_PARAM(P2pNvlChunkSize, ..., 1 << 19)): Simple's step
/// between GPUs of one node when every path is NVLink.
inline constexpr double kNcclP2pNvlChunkBytes = 512.0 * 1024;
/// LL's step: DEFAULT_LL_BUFFSIZE / NCCL_STEPS (src/include/device.h: NCCL_LL_LINES_PER_THREAD 8
/// x NCCL_LL_MAX_NTHREADS 512 x NCCL_STEPS 8 x sizeof(ncclLLFifoLine) 16 = 512 KiB, / 8 steps).
inline constexpr double kNcclP2pLlStepBytes = 64.0 * 1024;
/// ncclP2pPartBounds' alignment (src/include/device.h: alignUp(divUp(bytes, nParts), 4<<10)).
inline constexpr double kNcclP2pPartAlignBytes = 4096.0;
/// NCCL_MAX_P2P_NCHANNELS' default, MAXCHANNELS (src/include/device.h, 2.2x: 64).
inline constexpr int kNcclMaxP2pChannels = 64;

/// The communicator's p2p channels (ncclTopoComputeP2pChannels).
struct NcclP2pChannels {
  int channels = 1;  ///< comm->p2pnChannels, a power of 2
  int per_peer = 1;  ///< comm->p2pnChannelsPerPeer, a power of 2, <= channels
};

/// ncclTopoComputeP2pChannels from comm->nChannels (>= 1) and the fewest ncclTopoGetNchannels of
/// any peer (>= 1). Throws std::invalid_argument for a count < 1.
NcclP2pChannels nccl_p2p_channels(int comm_channels, int fewest_peer_channels);
/// ncclTopoGetNchannels for a peer of the node: 2 x max(1, nvlinks) over NVLink (nvlinks: the
/// links of the path's narrowest hop), 2 over any other path (nvlinks 0).
int nccl_p2p_peer_channels(int nvlinks);

/// ncclTopoGetNchannels for a peer on another node (src/graph/paths.cc, 2.19-2.28; "start from 2
/// channels per NIC and reduce with scale"): 2, halved while it x n_ranks > 4 x p2p_channels
/// (comm->p2pnChannels before its pow2Up: min(comm->nChannels, NCCL_MAX_P2P_NCHANNELS)) and it > 1
/// ("Avoid overloading channels with 8+ operations"), then at least `nics_by_bw`, the GPU's NICs
/// needed for its bandwidth (getLocalNetCountByBw: its local NICs, added until their bandwidth
/// reaches the GPU's to its CPU). 2.29 counts NIC bandwidth over NCCL_P2P_PER_CHANNEL_NET_BW
/// instead; the model follows 2.28. Throws std::invalid_argument for a count < 1.
int nccl_p2p_net_peer_channels(int n_ranks, int p2p_channels, int nics_by_bw);
/// NCCL's LL limit per peer for grouped send/recv across nodes [bytes] (src/enqueue.cc
/// addP2pToPlan: LL while a peer's bytes <= nChannelsMax x NCCL_P2P_LL_THRESHOLD, else Simple,
/// never LL128): nChannelsMax = p2pnChannelsPerPeer (nccl_p2p_channels) from comm_channels and
/// the fewest channels of any peer, taken as a network peer's (nccl_p2p_net_peer_channels; a peer
/// on the node has at least 2, ncclTopoGetNchannels). 2 x DGX H100 (16 ranks, 16 comm channels):
/// 2 channels, 32 KiB; 128 or 512 ranks: 1 channel, 16 KiB. Throws as nccl_p2p_channels.
double nccl_p2p_net_ll_bytes(int comm_channels, int n_ranks, int nics_by_bw);

/// What NCCL's planner does with one rank's sends of one grouped call on one node.
struct NcclP2pPlan {
  bool ll = false;               ///< LL (else Simple) for the transfers to other ranks
  int parts = 0;                 ///< channels (parts) one transfer to another rank uses
  double max_channel_bytes = 0;  ///< bytes of the busiest channel, every round's parts summed
  int busy_channels = 0;         ///< channels that carry any bytes
};

/// The schedule of one rank of an `n_ranks` communicator sending `bytes_per_peer` in each round of
/// `rounds` (p2p schedule rounds, 0 = itself, each < n_ranks), on one node with `ch` channels and
/// Simple chunk `simple_chunk_bytes`. Throws std::invalid_argument for n_ranks < 1, a round
/// outside [0, n_ranks), bytes < 0 or not finite.
NcclP2pPlan nccl_p2p_plan(int n_ranks, std::span<const int> rounds, double bytes_per_peer, const NcclP2pChannels& ch,
                          double simple_chunk_bytes);

}  // namespace traincast::models
