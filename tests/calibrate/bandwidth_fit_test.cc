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

}  // namespace
}  // namespace traincast::calibrate
