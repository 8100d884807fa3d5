// Robust least squares. See robust.h.

#include "calibrate/fit/robust.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace traincast::calibrate {
namespace {

Eigen::VectorXd huber_weights(const Eigen::VectorXd& r, double sigma, double k) {
  Eigen::VectorXd w(r.size());
  const double c = k * sigma;
  for (Eigen::Index i = 0; i < r.size(); ++i) {
    const double a = std::fabs(r[i]);
    w[i] = a <= c ? 1.0 : c / a;
  }
  return w;
}

}  // namespace

double robust_sigma(const Eigen::VectorXd& r, double min_sigma) {
  if (r.size() == 0) return min_sigma;
  std::vector<double> a(static_cast<std::size_t>(r.size()));
  for (Eigen::Index i = 0; i < r.size(); ++i) a[static_cast<std::size_t>(i)] = std::fabs(r[i]);
  const std::size_t mid = a.size() / 2;
  std::nth_element(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(mid), a.end());
  double med = a[mid];
  if (a.size() % 2 == 0) {
    med = 0.5 * (med + *std::max_element(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(mid)));
  }
  return std::max(1.4826 * med, min_sigma);
}

double huber_loss(const Eigen::VectorXd& r, double sigma, double k) {
  const double c = k * sigma;
  double sum = 0;
  for (Eigen::Index i = 0; i < r.size(); ++i) {
    const double a = std::fabs(r[i]);
    sum += a <= c ? 0.5 * a * a : c * (a - 0.5 * c);
  }
  return sum;
}

RobustResult huber_linear(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const RobustOptions& o) {
  if (X.rows() != y.size() || X.rows() == 0) throw std::invalid_argument("huber_linear: X and y sizes disagree");
  RobustResult res;
  Eigen::VectorXd w = Eigen::VectorXd::Ones(y.size());
  Eigen::VectorXd b = Eigen::VectorXd::Zero(X.cols());
  const Eigen::MatrixXd ridge = o.ridge * Eigen::MatrixXd::Identity(X.cols(), X.cols());
  for (int it = 0; it < o.max_iterations; ++it) {
    const Eigen::MatrixXd Xw = w.asDiagonal() * X;
    const Eigen::VectorXd next = (X.transpose() * Xw + ridge).ldlt().solve(Xw.transpose() * y);
    const double step = (next - b).norm();
    b = next;
    res.iterations = it + 1;
    const Eigen::VectorXd r = y - X * b;
    res.sigma = robust_sigma(r, o.min_sigma);
    w = huber_weights(r, res.sigma, o.huber_k);
    if (step < o.tolerance * (1 + b.norm()) && it > 0) break;
  }
  res.params = b;
  res.residuals = y - X * b;
  res.weights = w;
  return res;
}

RobustResult huber_nonlinear(const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& f,
                             const Eigen::VectorXd& start, const Eigen::VectorXd& prior, const RobustOptions& o) {
  const Eigen::Index P = start.size();
  Eigen::VectorXd p = start;
  Eigen::VectorXd r = f(p);
  RobustResult res;
  res.sigma = robust_sigma(r, o.min_sigma);
  Eigen::VectorXd w = huber_weights(r, res.sigma, o.huber_k);
  auto objective = [&](const Eigen::VectorXd& rr, const Eigen::VectorXd& pp) {
    return huber_loss(rr, res.sigma, o.huber_k) + 0.5 * o.ridge * (pp - prior).squaredNorm();
  };
  double lambda = 1e-3;
  double current = objective(r, p);
  for (int it = 0; it < o.max_iterations; ++it) {
    res.iterations = it + 1;
    Eigen::MatrixXd J(r.size(), P);
    for (Eigen::Index j = 0; j < P; ++j) {
      const double h = 1e-4 * std::max(1.0, std::fabs(p[j]));
      Eigen::VectorXd a = p, b = p;
      a[j] += h;
      b[j] -= h;
      J.col(j) = (f(a) - f(b)) / (2 * h);
    }
    const Eigen::MatrixXd JtW = J.transpose() * w.asDiagonal();
    Eigen::MatrixXd A = JtW * J + o.ridge * Eigen::MatrixXd::Identity(P, P);
    const Eigen::VectorXd g = JtW * r + o.ridge * (p - prior);
    bool improved = false;
    for (int tries = 0; tries < 12; ++tries) {
      Eigen::MatrixXd Ad = A;
      for (Eigen::Index j = 0; j < P; ++j) Ad(j, j) += lambda * (A(j, j) + 1e-12);
      const Eigen::VectorXd step = Ad.ldlt().solve(-g);
      const Eigen::VectorXd q = p + step;
      const Eigen::VectorXd rq = f(q);
      const double value = objective(rq, q);
      if (std::isfinite(value) && value < current) {
        const bool small = step.norm() < o.tolerance * (1 + p.norm());
        p = q;
        r = rq;
        lambda = std::max(lambda / 3, 1e-9);
        improved = true;
        if (small) it = o.max_iterations;
        break;
      }
      lambda *= 4;
    }
    if (!improved) break;
    res.sigma = robust_sigma(r, o.min_sigma);
    w = huber_weights(r, res.sigma, o.huber_k);
    current = objective(r, p);
  }
  res.params = p;
  res.residuals = r;
  res.weights = w;
  return res;
}

}  // namespace traincast::calibrate
