#include "fracmfg/frac/weights.hpp"

#include <cmath>
#include <sstream>

#include "fracmfg/core/error.hpp"

namespace fracmfg::frac {

namespace {

// Differences of powers k^p without cancellation. The product-integration and L1/L2
// weights are first and second differences of k^p; the direct formulas subtract numbers of
// size k^p to get results of size k^{p-1} or k^{p-2}, losing k (or k^2) times the unit
// round-off. Rewritten as
//   (k+1)^p - k^p = k^p expm1(p log1p(1/k)),
//   (k+1)^p - 2 k^p + (k-1)^p = 2 k^p sum_{m>=1} binom(p, 2m) k^{-2m},
// they keep a few ulps of relative accuracy for every k.

/// (k+1)^p - k^p for k >= 0, p > 0.
double power_first_difference(double p, std::size_t k) {
  if (k == 0) return 1.0;
  const double x = static_cast<double>(k);
  return std::pow(x, p) * std::expm1(p * std::log1p(1.0 / x));
}

/// sum_{j >= j0} binom(p, j) y^j, |y| <= 1/2, for the series below; `binom` is binom(p, j0).
double binomial_tail(double p, int j0, double binom, double y) {
  double term = binom * std::pow(y, j0);
  double sum = 0.0;
  for (int j = j0; j < 400; ++j) {
    sum += term;
    const double next = term * (p - j) / (j + 1) * y;
    if (std::fabs(next) <= 1e-17 * std::fabs(sum)) break;
    term = next;
  }
  return sum;
}

/// (k+1)^p - 2 k^p + (k-1)^p for k >= 1, p > 0.
double power_second_difference(double p, std::size_t k) {
  if (k == 1) return 2.0 * std::expm1((p - 1.0) * std::log(2.0));  // 2^p - 2
  const double x = static_cast<double>(k);
  const double y = 1.0 / x;
  // (1+y)^p + (1-y)^p - 2 = 2 sum_{m >= 1} binom(p, 2m) y^{2m}: the odd terms cancel.
  // Summed as the even part of the binomial series, term by term with the ratio
  // binom(p, j+2)/binom(p, j) y^2, starting at binom(p, 2) = p (p - 1) / 2.
  double term = 0.5 * p * (p - 1.0) * y * y;
  double sum = 0.0;
  for (int j = 2; j < 800; j += 2) {
    sum += term;
    const double next = term * (p - j) * (p - j - 1) / ((j + 1.0) * (j + 2.0)) * y * y;
    if (std::fabs(next) <= 1e-17 * std::fabs(sum)) break;
    term = next;
  }
  return 2.0 * std::pow(x, p) * sum;
}

/// (n-1)^{a+1} - (n-1-a) n^a for n >= 1, a > 0 (the trapezoid start weight without the
/// factor h^a / Gamma(a+2)). With y = 1/n it equals n^{a+1} sum_{j>=2} binom(a+1, j) (-y)^j.
double trapezoid_start_factor(double a, std::size_t n) {
  if (n == 1) return a;
  const double x = static_cast<double>(n);
  const double p = a + 1.0;
  return std::pow(x, p) * binomial_tail(p, 2, 0.5 * p * (p - 1.0), -1.0 / x);
}

void require(bool ok, const char* what, double value) {
  if (ok) return;
  std::ostringstream os;
  os << "frac weights: " << what << " (got " << value << ")";
  throw Error(os.str());
}

void require_step(double h) {
  require(h > 0.0 && std::isfinite(h), "step h must be > 0", h);
}

}  // namespace

std::vector<double> gl_weights(double alpha, std::size_t n) {
  require(std::isfinite(alpha), "GL order must be finite", alpha);
  std::vector<double> w(n);
  if (n == 0) return w;
  w[0] = 1.0;
  // The recursion multiplies by factors of modulus <= 1 for k > alpha + 1; it is the
  // stable way (Podlubny 1999, Ch. 7), binomials through Gamma would overflow.
  for (std::size_t k = 1; k < n; ++k) {
    w[k] = (1.0 - (alpha + 1.0) / static_cast<double>(k)) * w[k - 1];
  }
  return w;
}

std::vector<double> l1_weights(double alpha, std::size_t n) {
  require(alpha > 0.0 && alpha < 1.0, "L1 order must satisfy 0 < alpha < 1", alpha);
  std::vector<double> b(n);
  for (std::size_t k = 0; k < n; ++k) b[k] = power_first_difference(1.0 - alpha, k);
  return b;
}

double l1_scale(double alpha, double h) {
  require(alpha > 0.0 && alpha < 1.0, "L1 order must satisfy 0 < alpha < 1", alpha);
  require_step(h);
  return std::pow(h, -alpha) / std::tgamma(2.0 - alpha);
}

std::vector<double> l2_weights(double alpha, std::size_t n) {
  require(alpha > 1.0 && alpha < 2.0, "L2 order must satisfy 1 < alpha < 2", alpha);
  std::vector<double> b(n);
  for (std::size_t k = 0; k < n; ++k) b[k] = power_first_difference(2.0 - alpha, k);
  return b;
}

double l2_scale(double alpha, double h) {
  require(alpha > 1.0 && alpha < 2.0, "L2 order must satisfy 1 < alpha < 2", alpha);
  require_step(h);
  return std::pow(h, -alpha) / std::tgamma(3.0 - alpha);
}

std::vector<double> rl_rectangle_weights(double alpha, double h, std::size_t n) {
  require(alpha > 0.0 && std::isfinite(alpha), "integral order must be > 0", alpha);
  require_step(h);
  const double c = std::pow(h, alpha) / std::tgamma(alpha + 1.0);
  std::vector<double> b(n);
  for (std::size_t k = 0; k < n; ++k) b[k] = c * power_first_difference(alpha, k);
  return b;
}

std::vector<double> rl_trapezoid_weights(double alpha, double h, std::size_t n) {
  require(alpha > 0.0 && std::isfinite(alpha), "integral order must be > 0", alpha);
  require_step(h);
  const double c = std::pow(h, alpha) / std::tgamma(alpha + 2.0);
  std::vector<double> t(n);
  if (n == 0) return t;
  t[0] = c;
  for (std::size_t k = 1; k < n; ++k) t[k] = c * power_second_difference(alpha + 1.0, k);
  return t;
}

double rl_trapezoid_start_weight(double alpha, double h, std::size_t n) {
  require(alpha > 0.0 && std::isfinite(alpha), "integral order must be > 0", alpha);
  require_step(h);
  if (n == 0) return 0.0;
  const double c = std::pow(h, alpha) / std::tgamma(alpha + 2.0);
  return c * trapezoid_start_factor(alpha, n);
}

}  // namespace fracmfg::frac
