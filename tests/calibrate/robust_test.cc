// calibrate/fit/robust.h: Huber regression stays on the line with 10% outliers.
#include "calibrate/fit/robust.h"
#include <gtest/gtest.h>

#include <random>

namespace traincast::calibrate {
namespace {

TEST(Robust, HuberLinearIgnoresTenPercentOutliers) {
  // y = 2 + 3x with +-0.5% noise; every 10th point 50 too high. Plain least squares would move
  // the intercept by ~5; Huber stays within 0.05.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(-0.01, 0.01);
  const int n = 100;
  Eigen::MatrixXd X(n, 2);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    const double x = i * 0.1;
    X(i, 0) = 1;
    X(i, 1) = x;
    y[i] = 2 + 3 * x + noise(rng) + (i % 10 == 3 ? 50.0 : 0.0);
  }
  const RobustResult r = huber_linear(X, y);
  EXPECT_NEAR(r.params[0], 2.0, 0.05);
  EXPECT_NEAR(r.params[1], 3.0, 0.01);
  EXPECT_LT(r.weights[3], 0.01);  // the outlier is weighted down
}

}  // namespace
}  // namespace traincast::calibrate
