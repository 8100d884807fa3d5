#pragma once
// The other-hardware check of collective logs: a log whose busbw is outside a physical fraction
// of the base's link line rate did not run on the base's links, and is refused.

#include "calibrate/fit/collective_points.h"
#include "calibrate/fit/fit_options.h"
#include "models/collectives/collective_engine.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"

namespace traincast::calibrate {

/// Physical range of the fraction of a link's datasheet line rate that a measured collective
/// reaches: below kMinLinkFraction or above models::kMaxLinkFraction (calibration_profile.h: a
/// link cannot carry more than its line rate) the log did not run over the base's links. Lower: measured on
/// the shared logs (../shared/data/nccl-tests), each on its own scenario, this fraction is 0.39
/// (n14, H100 PCIe pair over an NVLink bridge) to 0.91 (n18, Slingshot NICs), and 0.1998 for the
/// raw log r05b (2x8 H100 with NCCL_ALGO=Ring: the nodes of NVIDIA/nccl-tests#290, which ran at a
/// quarter of their links' rate: a degraded cluster, what an operator calibrates to find out);
/// NCCL's own figures are 0.76 (PCIe) to 0.96 (NIC) (LinkEfficiency); a log from other hardware
/// is far outside (the RTX 2080 Ti all_reduce of n11a, 4.00 GB/s over PCIe gen3, on an H100
/// base's NVLink: 0.0089). 0.1 leaves a factor 2 below the slowest real log.
constexpr double kMinLinkFraction = 0.1;

/// Refuses (std::invalid_argument, naming the row) an op any of whose rows reaches more than
/// kMaxLinkFraction of the bottleneck link's datasheet rate, or whose largest fit size, where the
/// model's bandwidth term is at least 4x its latency term (the size says something about the
/// links), reaches a fraction of the bottleneck link's datasheet rate outside [kMinLinkFraction,
/// kMaxLinkFraction]. The fraction is NCCL's default efficiency x the bottleneck link's time per
/// byte at that efficiency (the phase with the largest, without protocol factors) x bytes / the
/// measured time: the measured time includes latency and other phases, so the fraction is a
/// lower bound of the true one (above the upper limit is certain; below the lower one the
/// bandwidth term alone, at 4x the latency, cannot account for the gap). e's profile must hold
/// no fitted scales for d yet.
void check_link_fraction(const models::CollectiveEngine& e, const models::Cluster& cluster, const sim::FlowNetwork& net,
                         const OpData& d, const FitOptions& o);

}  // namespace traincast::calibrate
