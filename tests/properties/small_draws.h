#pragma once
// Small collectives (session 33): 1 KiB-1 MiB calls on 2-4 nodes with 1-8 NICs, both NIC
// placements and oversubscribed fat trees, where NCCL's channel cut, LL's llMaxBw and the NIC
// choice decide; with the properties that caught those defects (more NICs, placement, size).

#include <vector>

#include "tests/properties/net_draws.h"

namespace traincast::properties {

/// Small group: DGX H100/A100, HGX H200 and the two 2-socket PCIe servers, 2-4 nodes, 1-8 NICs,
/// affine or other_socket NICs, fat tree (1-2 nodes per leaf, 1-3:1) or rail-optimized; all-reduce,
/// all-gather or reduce-scatter of 1 KiB-1 MiB, automatic or forced ring.
NetDraw draw_small(int index);

/// more_nics_small (N against N + 1 NICs, 1 <= N < 8), affine_never_slower (affine against
/// other_socket), bigger_message_never_faster (2 S against S, but at a channel-cut step),
/// tuner_time_grows_with_size (the tuner's predicted time at 2 S against S), and from
/// net_properties(): less_oversubscription, faster_nic, failed_nic_never_faster.
const std::vector<NetProperty>& small_properties();

}  // namespace traincast::properties
