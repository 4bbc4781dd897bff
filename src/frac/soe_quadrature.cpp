#include "fracmfg/frac/soe_quadrature.hpp"

#include <cmath>
#include <sstream>

#include "fracmfg/core/error.hpp"

extern "C" {
// LAPACK: eigenvalues and eigenvectors of a real symmetric tridiagonal matrix.
void dstev_(const char* jobz, const int* n, double* d, double* e, double* z, const int* ldz,
            double* work, int* info);
}

namespace fracmfg::frac {

namespace {

/// Golub-Welsch: nodes and weights from the recurrence coefficients alpha_0..alpha_{n-1},
/// beta_1..beta_{n-1} of the monic orthogonal polynomials and mu0 = int w.
GaussRule golub_welsch(std::vector<double> alpha, std::vector<double> beta, double mu0) {
  const int n = static_cast<int>(alpha.size());
  std::vector<double> off(static_cast<std::size_t>(n), 0.0);
  for (int k = 0; k + 1 < n; ++k) off[static_cast<std::size_t>(k)] = std::sqrt(beta[k]);
  std::vector<double> z(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  std::vector<double> work(static_cast<std::size_t>(2 * n > 2 ? 2 * n - 2 : 1));
  int info = 0;
  const char jobz = 'V';
  dstev_(&jobz, &n, alpha.data(), off.data(), z.data(), &n, work.data(), &info);
  if (info != 0) {
    std::ostringstream os;
    os << "gauss rule: the tridiagonal eigensolver failed (LAPACK dstev info " << info << ")";
    throw NumericalError(os.str());
  }
  GaussRule rule;
  rule.nodes = alpha;
  rule.weights.resize(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    const double v = z[static_cast<std::size_t>(k) * static_cast<std::size_t>(n)];
    rule.weights[static_cast<std::size_t>(k)] = mu0 * v * v;
  }
  return rule;
}

}  // namespace

GaussRule gauss_jacobi(int n, double a, double b) {
  if (n < 1 || !(a > -1.0) || !(b > -1.0) || !std::isfinite(a) || !std::isfinite(b)) {
    std::ostringstream os;
    os << "gauss_jacobi: need n >= 1 and exponents > -1 (got n = " << n << ", a = " << a
       << ", b = " << b << ")";
    throw Error(os.str());
  }
  const double ab = a + b;
  std::vector<double> alpha(static_cast<std::size_t>(n));
  std::vector<double> beta(static_cast<std::size_t>(n), 0.0);
  for (int k = 0; k < n; ++k) {
    const double s = 2.0 * k + ab;
    // k = 0 with a + b = 0 is 0/0 in the general formula; its limit is (b - a) / (a + b + 2).
    alpha[static_cast<std::size_t>(k)] =
        k == 0 ? (b - a) / (ab + 2.0) : (b * b - a * a) / (s * (s + 2.0));
  }
  for (int k = 1; k < n; ++k) {
    const double s = 2.0 * k + ab;
    // k = 1: the factor (k + a + b) / (2k + a + b - 1) is 1, which avoids 0/0 for a + b = -1.
    const double ratio = k == 1 ? 1.0 : (k + ab) / (s - 1.0);
    beta[static_cast<std::size_t>(k - 1)] =
        4.0 * k * (k + a) * (k + b) * ratio / (s * s * (s + 1.0));
  }
  const double mu0 = std::exp((ab + 1.0) * std::log(2.0) + std::lgamma(a + 1.0) +
                              std::lgamma(b + 1.0) - std::lgamma(ab + 2.0));
  return golub_welsch(std::move(alpha), std::move(beta), mu0);
}

GaussRule gauss_legendre(int n) {
  return gauss_jacobi(n, 0.0, 0.0);
}

}  // namespace fracmfg::frac
