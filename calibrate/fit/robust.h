#pragma once
// Robust least squares (Huber M-estimation by iteratively reweighted least squares), Eigen.
//
// Huber's loss with tuning constant 1.345 sigma (95% efficiency at Gaussian residuals; Huber
// 1964, Holland & Welsch 1977); sigma is re-estimated every iteration as 1.4826 x the median
// absolute residual (the MAD, consistent for Gaussian noise), floored at `min_sigma` so that an
// exact fit does not divide by zero.

#include <functional>
#include <vector>

#include <Eigen/Dense>

namespace traincast::calibrate {

struct RobustOptions {
  double huber_k = 1.345;   ///< in units of sigma
  double min_sigma = 1e-3;  ///< floor of the residual scale (same unit as the residuals)
  int max_iterations = 50;
  double tolerance = 1e-10;  ///< stop when the parameter step's norm is below this
  /// Ridge weight pulling each parameter to `prior` (0 = none): keeps a parameter the data do not
  /// determine at its prior instead of wandering.
  double ridge = 0;
};

struct RobustResult {
  Eigen::VectorXd params;
  Eigen::VectorXd weights;    ///< final Huber weight per point, in (0, 1]
  Eigen::VectorXd residuals;  ///< final residual per point
  double sigma = 0;           ///< final robust scale
  int iterations = 0;
};

/// Robust scale: 1.4826 x median |r|, at least min_sigma. r may be empty (gives min_sigma).
double robust_sigma(const Eigen::VectorXd& r, double min_sigma);

/// Linear model y ~ X b with Huber IRLS. X: N x P (N >= 1), y: N. Throws std::invalid_argument
/// when the sizes disagree.
RobustResult huber_linear(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const RobustOptions& options = {});

/// Nonlinear model: residuals(params) -> N residuals. Levenberg-Marquardt with a numerical
/// (central difference) Jacobian, Huber weights updated each iteration, and optional ridge to
/// `prior`. Returns the best parameters found from `start`.
RobustResult huber_nonlinear(const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& residuals,
                             const Eigen::VectorXd& start, const Eigen::VectorXd& prior,
                             const RobustOptions& options = {});

/// Sum of Huber losses of r at scale sigma (for comparing candidate starts).
double huber_loss(const Eigen::VectorXd& r, double sigma, double k = 1.345);

}  // namespace traincast::calibrate
