#pragma once
// Sum-of-exponentials (SOE) approximation of the power kernel t^-beta:
//
//   t^-beta ~ sum_{j=1}^{N_exp} w_j exp(-s_j t),    delta <= t <= horizon,
//
// with relative error |t^-beta - sum| <= tolerance * t^-beta over the whole interval. The
// fast history of the Caputo derivative (fpde_history.hpp) keeps one vector per
// exponential instead of every past time level.
//
//   frac::SoeApproximation k = frac::soe_approximation(0.5, 1e-3, 1.0, 1e-10);
//   double v = k(0.25);                      // ~ 0.25^-0.5 to 1e-10 relative
//   double e = frac::soe_relative_error(k);  // <= 1e-10
//
// Construction (S. Jiang, J. Zhang, Q. Zhang and Z. Zhang, "Fast evaluation of the Caputo
// fractional derivative and its applications to fractional diffusion equations", Commun.
// Comput. Phys. 21 (2017) 650-678, Sec. 2.2, the quadrature of the Laplace-transform
// representation). In scaled time x = t / horizon, x in [d, 1], d = delta / horizon,
//
//   x^-beta = 1/Gamma(beta) int_0^inf exp(-x s) s^(beta-1) ds,
//
// 1. the integral is truncated at p = r / d, where Q(beta, r) (the regularised upper
//    incomplete gamma function, which is the relative truncation error at x = d and a
//    bound for it at larger x) is below tolerance / 4;
// 2. [0, p] is split into [0, 2^m0] and the dyadic intervals [2^j, 2^(j+1)], m0 <= j < J,
//    2^J >= p;
// 3. [0, 2^m0] gets an n_0-point Gauss-Jacobi rule for the weight s^(beta-1) (exp(-x s) is
//    smooth there for x <= 1), each dyadic interval an n_j-point Gauss-Legendre rule.
// Unlike the paper's fixed n_s per interval, each n_j is the smallest count whose error on
// that interval, against a 48-point reference rule, stays below tolerance / (2 * intervals)
// relative to x^-beta at every sample point x in [d, 1] (40 log-spaced points per decade);
// intervals whose whole contribution is below that budget are dropped; m0 in {0,..,3} is
// the value that gives the fewest terms. The result is then checked at 200 points per
// decade and rebuilt with halved budgets until the observed relative error is below
// 0.9 * tolerance (the paper's further model reduction is not applied). The count grows
// like log(1/tolerance) (log log(1/tolerance) + log(horizon / delta)).
//
// Pure functions, thread-safe, not collective.

#include <cstddef>
#include <vector>

namespace fracmfg::frac {

struct SoeApproximation {
  double beta = 0.0;            ///< exponent of the kernel t^-beta
  double delta = 0.0;           ///< left end of the interval (time units)
  double horizon = 0.0;         ///< right end of the interval (time units)
  double tolerance = 0.0;       ///< requested relative accuracy
  std::vector<double> nodes;    ///< s_j > 0, 1 / time units
  std::vector<double> weights;  ///< w_j > 0, time units^-beta

  std::size_t size() const { return nodes.size(); }
  /// sum_j w_j exp(-s_j t).
  double operator()(double t) const;
};

/// The SOE of t^-beta on [delta, horizon] to relative accuracy `tolerance`. Requires
/// beta > 0, 0 < delta <= horizon (finite) and 1e-14 <= tolerance <= 0.1; otherwise throws
/// fracmfg::Error.
SoeApproximation soe_approximation(double beta, double delta, double horizon, double tolerance);

/// max |t^-beta - soe(t)| / t^-beta over `points_per_decade` log-spaced points per decade of
/// [delta, horizon] (both ends included).
double soe_relative_error(const SoeApproximation& soe, int points_per_decade = 200);

}  // namespace fracmfg::frac
