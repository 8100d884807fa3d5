// calibrate/fit bandwidth (bandwidth_fit.h): a median above the datasheet rate is refused.
#include "calibrate/fit/bandwidth_fit.h"
#include <gtest/gtest.h>

#include <string>

#include "calibrate/fit/profile_fit.h"
#include "models/hardware/catalog.h"
#include "models/io/profile_io.h"

namespace traincast::calibrate {
namespace {

// A bandwidth median above the datasheet rate cannot be written (the reader refuses efficiencies
// above kMaxLinkFraction): the fit refuses it, naming a point.
TEST(BandwidthFit, RefusesAMedianAboveTheDatasheetRate) {
  const models::GpuSpec& gpu = models::find_gpu("H100-SXM5-80GB");
  auto hbm = [&](double fraction) {
    models::MeasurementSet m;
    for (int i = 0; i < 4; ++i) {
      const double bytes = 2e9;
      m.bandwidth.push_back({models::BandwidthSampleKind::hbm_copy, 1e9, bytes,
                             bytes / (fraction * gpu.hbm_bandwidth_bytes_per_s),
                             "b.textproto:" + std::to_string(i + 1)});
    }
    return m;
  };
  FitOptions o;
  o.gpu = gpu.name;
  const models::CalibrationProfile ok = fit_profile(hbm(0.9), o);
  ASSERT_TRUE(ok.memory_efficiency.has_value());
  EXPECT_NEAR(*ok.memory_efficiency, 0.9, 1e-12);
  EXPECT_NO_THROW((void)io::load_profile_text(io::profile_to_text(ok), "p.textproto"));
  try {
    (void)fit_profile(hbm(1.2), o);
    ADD_FAILURE() << "fitted an HBM efficiency of 1.2";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("b.textproto:4: HBM bandwidth measured at 1.2x the datasheet's"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("expected at most 1.05x"), std::string::npos) << e.what();
  }
}

// Fresh-user finding: hbm_copy rows at 1 GB/s on an H100 (0.0003 of its 3.35 TB/s) were fitted
// as memory_efficiency 0.001, and every memory-bound kernel then ran 1000x slow. Below 0.1 of the
// datasheet rate (copies reach 0.74 to 0.9) the fit refuses, asking about units.
TEST(BandwidthFit, RefusesAMedianBelowATenthOfTheDatasheetRate) {
  const models::GpuSpec& gpu = models::find_gpu("H100-SXM5-80GB");
  models::MeasurementSet m;
  for (int i = 0; i < 2; ++i) {
    const double bytes = 1073741824.0 * (i + 1);
    m.bandwidth.push_back(
        {models::BandwidthSampleKind::hbm_copy, bytes, bytes, bytes / 1e9, "c14.csv:" + std::to_string(i + 2)});
  }
  FitOptions o;
  o.gpu = gpu.name;
  try {
    (void)fit_profile(m, o);
    ADD_FAILURE() << "fitted an HBM efficiency of 0.0003";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "c14.csv:3: HBM bandwidth: got 1 GB/s, 0.000298507x the datasheet's 3350 GB/s of H100-SXM5-80GB "
              "(median of 2 large points; expected at least 0.1x: copies reach 0.74 to 0.9 of it; wrong units? "
              "bytes in bytes, time_s in seconds)");
  }
  // At 0.1 of the rate and above: fitted.
  for (auto& s : m.bandwidth) s.time_s = s.bytes / (0.11 * gpu.hbm_bandwidth_bytes_per_s);
  EXPECT_NEAR(*fit_profile(m, o).memory_efficiency, 0.11, 1e-12);
}

}  // namespace
}  // namespace traincast::calibrate
