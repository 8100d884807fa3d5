#pragma once
// For calibrate/fit tests: nccl-tests measurements simulated on the 2-GPU no-P2P consumer system
// with a known profile, to be fitted back (CollectiveFit and ProfileText tests).

#include <memory>
#include <string>
#include <vector>

#include "calibrate/fit/fit_options.h"
#include "models/calibration/calibration_profile.h"
#include "models/calibration/measurements.h"
#include "models/collectives/nccl_tests.h"
#include "models/hardware/cluster.h"
#include "models/io/scenario_io.h"

namespace traincast::test_support {

/// scenarios/nccl/consumer_2x2080ti_nop2p.textproto's cluster (TRAINCAST_SOURCE_DIR).
inline models::ClusterSpec consumer_cluster() {
  return io::load_cluster_scenario_file(std::string(TRAINCAST_SOURCE_DIR) +
                                        "/scenarios/nccl/consumer_2x2080ti_nop2p.textproto")
      .cluster;
}

/// all_reduce and all_gather times simulated with a known profile at 8 B .. 1 GiB.
inline models::MeasurementSet simulated(const std::shared_ptr<const models::CalibrationProfile>& truth,
                                        const std::vector<std::string>& ops) {
  models::ClusterSpec cs = consumer_cluster();
  cs.profile = truth;
  models::MeasurementSet m;
  const std::vector<double> sizes = models::nccl_tests_sizes(8, 1 << 30, 2, 0);
  for (const std::string& op : ops) {
    models::NcclTestsOptions o;
    o.op = models::parse_nccl_tests_op(op);
    const auto rows = models::simulate_nccl_tests(cs, o, sizes);
    for (const auto& r : rows) {
      if (r.bytes > 0)
        m.collectives.push_back({op, 2, r.bytes, r.time_s * 1e6, "float", "sim:" + std::to_string(r.bytes)});
    }
  }
  return m;
}

/// Known parameters: one-way PCIe at 0.65 of line rate, a GPU PCIe link loaded both ways at 0.5
/// of one direction's line rate in sum, NCCL's latency x 1.6. On the 2-GPU no-P2P system
/// (capacity C per direction everywhere) all_reduce's GPU links carry S each way: 2S / (0.5 C)
/// beats the switch uplink's 2S per direction at 0.65 (2S / (0.65 C)); broadcast is one-way:
/// S / (0.65 C).
inline std::shared_ptr<models::CalibrationProfile> truth_profile() {
  auto p = std::make_shared<models::CalibrationProfile>();
  p->link_efficiency[static_cast<int>(models::LinkKind::pcie)] = 0.65;
  p->pcie_duplex_efficiency = 0.5;
  p->latency_scale = 1.6;
  return p;
}

/// The consumer system as --base "consumer" with holdout h.
inline calibrate::FitOptions consumer_options(calibrate::Holdout h) {
  calibrate::FitOptions o;
  o.base = "consumer";
  o.cluster = consumer_cluster();
  o.holdout = h;
  return o;
}

}  // namespace traincast::test_support
