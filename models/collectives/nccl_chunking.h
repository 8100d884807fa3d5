#pragma once
// NCCL's chunk for tree calls and the tree's chunk pipeline fill (issue 17, "Ring and tree chunk
// pipelining" in docs/hardware.md). Pure functions of the plan.

#include <array>

#include "models/collectives/collective_plan.h"

namespace traincast::models {

/// NCCL's buffers and chunk rule for tree all-reduce (NVIDIA/nccl 2.19-2.28):
///  - per-connection buffers (src/init.cc, DEFAULT_LL_BUFFSIZE / DEFAULT_LL128_BUFFSIZE /
///    DEFAULT_BUFFSIZE): LL NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512 x NCCL_STEPS 8 x
///    sizeof(ncclLLFifoLine) 16 = 524288 B; LL128 NCCL_LL128_ELEMS_PER_THREAD 120 x
///    NCCL_LL128_MAX_NTHREADS 640 x NCCL_STEPS 8 x 8 B = 4915200 B; Simple 1 << 22 = 4 MiB.
///  - src/enqueue.cc calcCollChunking (2.22-2.28; computeColl in 2.19-2.21): stepSize = buffSize /
///    NCCL_STEPS; chunkSteps = sliceSteps = 1 for everything but ring Simple, so a tree's chunk is
///    one step: LL chunk / 2 (half of each line is flags), LL128 (chunk / NCCL_LL128_LINEELEMS 16)
///    x NCCL_LL128_DATAELEMS 15 = 576000 B, Simple 524288 B.
///  - tree LL128 only ("NCCL_ALGO_TREE && NCCL_PROTO_LL128"): nstepsLL128 = 1 + log2i(nNodes) +
///    0.1 ppn; while nBytes / (nChannels x chunk) < nstepsLL128 x 64 / ppn and chunk > 131072:
///    chunk /= 2; then while it is < nstepsLL128 x 16 / ppn and chunk > 32768: chunk /= 2 (integer
///    division on the left, as NCCL; nChannels: the channels the call keeps, nccl_channel_cut).
///  - aligned down to the protocol's grain (calcCollChunking 2.22+, "align chunkSize to multiple
///    grainSize"; ncclProtoGrainSize, src/include/device.h): LL 16, LL128 32 x 8 / 16 x 15 x 8 =
///    1920, Simple 512 bytes.
/// Worked by hand (tests/models/collectives/nccl_chunking_test.cc): 8 x 8 H100 (n04a), 4 MiB,
/// 16 channels: nstepsLL128 4.8; 576000 -> 288000 -> 144000 -> 72000 (first loop), 4194304 /
/// (16 x 72000) = 3 < 9.6 -> 36000, 4194304 / (16 x 36000) = 7 < 9.6 -> 18000; aligned 17280 B.
struct NcclChunking {
  static constexpr int steps = 8;                                  ///< NCCL_STEPS
  static constexpr double ll_buff_bytes = 8.0 * 512 * 8 * 16;      ///< DEFAULT_LL_BUFFSIZE
  static constexpr double ll128_buff_bytes = 120.0 * 640 * 8 * 8;  ///< DEFAULT_LL128_BUFFSIZE
  static constexpr double simple_buff_bytes = 4194304.0;           ///< DEFAULT_BUFFSIZE
  /// The tree's fill per network hop, in chunk times of one channel at its share of the phase's
  /// links and the protocol's wire efficiency (tree_pipeline_fill_s). Fitted: 4.8 (least
  /// geometric-mean |busbw error|, optimum 4.79; 39.0% -> 12.7%) on the even-indexed sizes (the
  /// project's split, `calibrate validate --holdout odd`'s fit rows) of the tree/LL128 rows at
  /// 1-64 MiB of the logs the issue names: n03 (4 x 8 H100, IB NDR 400) 2 and 8 MiB, n04a (8 x 8)
  /// and n04b (2 x 8) 1, 4 and 16 MiB: 8 rows. Every other row and log is held out
  /// (docs/hardware.md, "Ring and tree chunk pipelining"). More than the two chunk times of a
  /// store-and-forward hop (the GPU writes the step, the NIC moves it): the proxy's per-step
  /// handling and the receiver's flag wait are not modelled apart.
  static constexpr double fill_chunks_per_hop = 4.8;
  /// Whether choose_protocol and the engine add the fill to a tree's time. Off: with it, the
  /// 1-64 MiB band improves on every log it moves but n03's held-out sizes, and the per-log refit
  /// (`calibrate validate --cases ... --holdout odd`) gets worse on n03, n04a, n18 and fails r07
  /// (3.4 -> 8.6%, limit 5%); the fabric properties find 2 draws beyond a tuner switch's 2%
  /// (docs/hardware.md, "Ring and tree chunk pipelining"): worse on held-out rows, so not the
  /// default.
  static constexpr bool in_time = false;
  /// Data per byte on the wire, per protocol (LL, LL128, Simple): LL's 16-byte line carries 8
  /// bytes of data and 8 of flags (ncclLLFifoLine); LL128's 128-byte line 120 bytes of data
  /// (NCCL_LL128_DATAELEMS 15 of NCCL_LL128_LINEELEMS 16); Simple moves data only. The chunk's
  /// time is taken at this physical rate, not at NCCL's tuner factors (its busBw factors, caps and
  /// treeCorrectionFactor are fitted figures that already price the small sizes' inefficiency).
  static constexpr std::array<double, 3> wire_efficiency{0.5, 15.0 / 16.0, 1.0};
};

/// NCCL's chunk [bytes of data] for a tree plan with protocol p (0 LL, 1 LL128, 2 Simple) at
/// nccl-tests size `bytes` over `channels` channels (NcclChunking); 0 for other algorithms.
double tree_chunk_bytes(const CollectivePlan& plan, int p, double bytes, int channels);
/// The hops of the tree pipeline that hold a whole chunk: 2 log2i(nNodes), up the inter-node
/// tree and back down (NCCL's own tree depth, src/graph/tuning.cc's tree latency; the double
/// binary tree of nNodes nodes, src/graph/trees.cc). A network hop is store-and-forward at step
/// granularity: the proxy posts a step to the NIC once the GPU has written all of it and hands a
/// received step to the GPU once all of it has arrived (src/transport/net.cc sendProxyProgress /
/// recvProxyProgress). The hops inside a node are not counted: LL and LL128 forward line by line
/// (each line carries its flag, src/device/prims_ll128.h), and the intra-node chain's LL128 and
/// LL latency per hop is in NCCL's latency term already. 0 on one node and for other algorithms.
int tree_pipeline_hops(const CollectivePlan& plan);
/// Fill of the tree's chunk pipeline [s] for a phase at nccl-tests size `bytes` and protocol p:
/// ramp x hops x fill_chunks_per_hop x chunk x nChannels x tuner_seconds_per_byte /
/// (wire_efficiency[p] x the calibration fit's bandwidth scales, if any). chunk: tree_chunk_bytes
/// over the channels nccl_channel_cut keeps (the chunk rule's nChannels); nChannels: the comm's
/// (nccl_channels): the phase's time per byte at protocol factor 1 is that of all of them, so one
/// channel moves a byte in nChannels x tuner_seconds_per_byte, and a cut leaves each kept channel
/// its own share (nccl_channel_share). ramp = clamp(bytes / (kept x chunk) - 1, 0, 1): with one
/// chunk per channel there is no pipeline, and NCCL's per-hop latency already prices that chunk's
/// store-and-forward (n03, 4 x 8 H100: within 9% at <= 512 KiB without a fill); the fill comes in
/// over the second chunk. LL128 only: LL runs where a channel's data is one chunk (ramp 0), and
/// for Simple (chunk 512 KiB) the one tree/Simple log at mid sizes, n15 (2 x 1 H100, 4 NICs),
/// already runs faster than the model (-17 to -42%) and a fill moved it to -52 to -70%.
/// At the tuner's time per byte (no switch-to-switch link: a spine every channel crosses is the
/// shared stage the pipeline streams through, as in nvls_pipeline_fill_s). Never negative, and
/// linear in the phase's time per byte (a faster link never lengthens it); 0 for other algorithms
/// and protocols, on one node, for bytes <= 0 and for a phase that moves nothing. Counted in the
/// time (when NcclChunking::in_time), not in NCCL's choice (NCCL's tuner has no such term), as the
/// channel cut.
double tree_pipeline_fill_s(const CollectivePlan& plan, const CollectivePhase& phase, int p, double bytes);

}  // namespace traincast::models
