// The bandwidth and launch part of a profile fit. See bandwidth_fit.h.

#include "calibrate/fit/bandwidth_fit.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

#include "calibrate/fit/fit_helpers.h"
#include "models/hardware/catalog.h"

namespace traincast::calibrate {

using models::CalibrationProfile;

namespace {
/// The least fraction of the datasheet rate a fitted bandwidth kind may reach. Measured copies
/// run at 0.74 to 0.90 of it: STREAM triad 3534 of 4800 GB/s on H200, 1832 of 2039 on H100 PCIe,
/// 1375 of 1555 on A100 40GB (../shared/data/memory-bandwidth/gpu_stream_bandwidth.csv);
/// nvbandwidth's host-to-device copy 55.3 of 63 GB/s (PCIe gen5 x16) on H800
/// (nvbandwidth_h800_8gpu.csv). 0.1, as for collectives (kMinLinkFraction), is a factor 7 below
/// the lowest.
constexpr double kMinBandwidthFraction = 0.1;
}  // namespace

bool streaming_size(double size_bytes, double max_size_bytes) {
  return size_bytes >= 64.0 * 1024 * 1024 || size_bytes >= 0.25 * max_size_bytes;
}

void fit_bandwidth_and_launch(const models::MeasurementSet& m, const FitOptions& o, CalibrationProfile& out,
                              std::vector<std::string>* notes) {
  if (m.launch_back_to_back_s > 0) {
    out.kernel_fixed_s = m.launch_back_to_back_s;
    if (notes) {
      std::ostringstream note;
      note << "launch: " << std::setprecision(3) << m.launch_back_to_back_s * 1e6
           << " us per kernel back to back (the host's launch rate) -> kernel_fixed_s";
      notes->push_back(note.str());
    }
  }
  if (m.bandwidth.empty()) return;
  if (o.gpu.empty())
    throw std::invalid_argument(
        "bandwidth points need a GPU: --base must name a catalog GPU, node template or scenario");
  const models::GpuSpec& gpu = models::find_gpu(o.gpu);
  // group: 0 hbm, 1 pcie, 2 nvlink
  std::map<int, std::vector<const models::BandwidthSample*>> by;
  for (const auto& s : m.bandwidth) {
    const int g = s.kind == models::BandwidthSampleKind::d2d_peer                                              ? 2
                  : (s.kind == models::BandwidthSampleKind::h2d || s.kind == models::BandwidthSampleKind::d2h) ? 1
                                                                                                               : 0;
    by[g].push_back(&s);
  }
  for (auto& [g, v] : by) {
    std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->size_bytes < b->size_bytes; });
    double capacity = 0;
    if (g == 0) capacity = gpu.hbm_bandwidth_bytes_per_s;
    if (g == 1) capacity = models::pcie_bytes_per_s(gpu.pcie_generation, gpu.pcie_lanes);
    if (g == 2) capacity = gpu.nvlink_links * gpu.nvlink_bytes_per_s_per_link;
    if (!(capacity > 0)) continue;
    std::vector<double> large, all;
    const double max_size = v.back()->size_bytes;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!is_fit(o.holdout, i)) continue;
      const double eff = v[i]->bytes / v[i]->time_s / capacity;
      all.push_back(eff);
      if (streaming_size(v[i]->size_bytes, max_size)) large.push_back(eff);
    }
    if (large.empty()) continue;
    // A median above the datasheet rate (kMaxLinkFraction, calibration_profile.h) is not noise:
    // the points are from another GPU than --base, or their byte counts are wrong (a copy counted
    // once where it reads and writes). Refused, as GEMMs above their peak are, rather than
    // written as an efficiency the profile reader refuses.
    if (median(large) > models::kMaxLinkFraction) {
      const char* what = g == 0 ? "HBM" : g == 1 ? "PCIe" : "NVLink peer";
      std::ostringstream e;
      e << v.back()->where << ": " << what << " bandwidth measured at " << median(large) << "x the datasheet's "
        << capacity / 1e9 << " GB/s of " << gpu.name << " (median of " << large.size()
        << " large points; expected at most " << models::kMaxLinkFraction
        << "x: no link carries more than its line rate): the measurements are from another GPU than --base, or "
           "their byte counts are wrong";
      throw std::invalid_argument(e.str());
    }
    // Below kMinBandwidthFraction the numbers are in other units (bytes as kB, seconds as us)
    // or not of this GPU: refused rather than written as an efficiency that makes every
    // memory-bound kernel ten or more times slower than the hardware.
    if (median(large) < kMinBandwidthFraction) {
      const char* what = g == 0 ? "HBM" : g == 1 ? "PCIe" : "NVLink peer";
      std::ostringstream e;
      e << v.back()->where << ": " << what << " bandwidth: got " << median(large) * capacity / 1e9 << " GB/s, "
        << median(large) << "x the datasheet's " << capacity / 1e9 << " GB/s of " << gpu.name << " (median of "
        << large.size() << " large points; expected at least " << kMinBandwidthFraction
        << "x: copies reach 0.74 to 0.9 of it; wrong units? bytes in bytes, time_s in seconds"
        << (g == 2 ? "; or peer copies that did not run over NVLink" : "") << ")";
      throw std::invalid_argument(e.str());
    }
    const double eff = median(large);
    if (g == 0) out.memory_efficiency = eff;
    if (g == 1 && !out.link_efficiency[static_cast<int>(models::LinkKind::pcie)])
      out.link_efficiency[static_cast<int>(models::LinkKind::pcie)] = eff;
    if (g == 2 && !out.link_efficiency[static_cast<int>(models::LinkKind::nvlink)])
      out.link_efficiency[static_cast<int>(models::LinkKind::nvlink)] = eff;
    if (notes) {
      std::ostringstream note;
      note << (g == 0   ? "HBM"
               : g == 1 ? "PCIe"
                        : "NVLink peer")
           << ": efficiency " << std::setprecision(3) << eff << " of " << std::setprecision(6) << capacity / 1e9
           << " GB/s = " << std::setprecision(4) << eff * capacity / 1e9 << " GB/s (median of " << large.size()
           << " streaming fit points: >= 64 MiB or >= 1/4 of the largest)";
      notes->push_back(note.str());
    }
  }
}

}  // namespace traincast::calibrate
