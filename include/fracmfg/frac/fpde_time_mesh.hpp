#pragma once
// The time levels of a fractional PDE run: t_n = T (n / N)^r, n = 0..N, with grading
// exponent r >= 1 (r = 1: the uniform mesh t_n = n T / N).
//
//   frac::FpdeTimeMesh mesh(1.0, 400, 2.0);   // T = 1, 400 steps, t_n = (n/400)^2
//   double tau = mesh.step(1);                // t_1 - t_0 = 1/160000
//
// A graded mesh concentrates steps near t = 0, where the solution of a time-fractional
// problem with non-smooth data has a weak singularity u ~ c t^a; r = (2 - a) / a restores
// the L1 scheme's order 2 - a (M. Stynes, E. O'Riordan and J. L. Gracia, "Error analysis of
// a finite difference method on graded meshes for a time-fractional diffusion equation",
// SIAM J. Numer. Anal. 55 (2017) 1057-1079, Theorem 5.2: error O(N^-min(r a, 2 - a))).
// Steps are computed without cancellation (t_n - t_{n-1} = t_n (1 - (1 - 1/n)^r) by expm1
// and log1p), and for r = 1 every step is exactly T / N. A value, not collective.

#include <cstdint>
#include <vector>

namespace fracmfg::frac {

class FpdeTimeMesh {
 public:
  /// horizon T > 0, steps N >= 1, grading r >= 1 (fracmfg::Error otherwise).
  FpdeTimeMesh(double horizon, std::int64_t steps, double grading = 1.0);

  double horizon() const { return horizon_; }
  std::int64_t steps() const { return steps_; }
  double grading() const { return grading_; }
  bool uniform() const { return grading_ == 1.0; }

  /// t_n, 0 <= n <= steps() (t_0 = 0, t_N = T exactly).
  double time(std::int64_t n) const { return t_[static_cast<std::size_t>(n)]; }
  /// tau_n = t_n - t_{n-1}, 1 <= n <= steps().
  double step(std::int64_t n) const { return tau_[static_cast<std::size_t>(n)]; }
  /// The smallest step after the first, min_{n >= 2} tau_n (tau_1 when steps() == 1): the
  /// shortest lag t_n - s over which a history integral (s <= t_{n-1}) is ever evaluated.
  double min_history_lag() const;

 private:
  double horizon_;
  std::int64_t steps_;
  double grading_;
  std::vector<double> t_;
  std::vector<double> tau_;  ///< tau_[0] unused
};

}  // namespace fracmfg::frac
