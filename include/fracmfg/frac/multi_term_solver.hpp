#pragma once
// frac::MultiTermSolver: multi-term fractional ODEs for one unknown y(t),
//
//     sum_{k=0..m} lambda_k D^{a_k} y(t) = f(t, y(t)),   0 <= t <= T,
//
// Caputo derivatives of distinct orders a_k in [0, 2] (D^0 y = y; at least one order > 0),
// with the initial values the highest order a_Q needs: y(0), and y'(0) when a_Q > 1. Example:
// the Bagley-Torvik equation a y'' + b D^{3/2} y + c y = f(t).
//
// Method (R. Garrappa, "Numerical solution of fractional differential equations: a survey and
// a software tutorial", Mathematics 6(2):16 (2018), the section on multi-term equations):
// the Riemann-Liouville integral I^{a_Q} applied to the equation, with I^{a_Q} D^{a_k} y =
// I^{a_Q - a_k} (y - T_k), gives the Volterra form
//
//     y(t) = T_Q(t) + (1/lambda_Q) [ I^{a_Q} f(., y)(t) - sum_{k != Q} lambda_k
//                                    I^{a_Q - a_k} (y - T_k)(t) ],
//
// T_k(t) = sum_{j < ceil(a_k)} y^(j)(0) t^j / j! (T_k = 0 for a_k = 0). Each integral is a
// component of a FodeSolver system with zero initial values: u = I^{a_Q} f solves
// D^{a_Q} u = f(t, y) and z_k = I^{a_Q - a_k} (y - T_k) solves D^{a_Q - a_k} z_k = y - T_k,
// where y = T_Q + (u - sum_k lambda_k z_k) / lambda_Q is a linear function of the components.
// An integral of order 2 (a_Q = 2 with f, or with a term of order 0), which FodeSolver does
// not take, is two integrals of order 1: D v = g, D w = v. The system is a multi-order one of
// at most m + 3 components, so every integral is summed by the solver's history (the nested
// FFT history, O(N log^2 N) for the whole solve), and the discrete solution is the
// product-integration scheme for the Volterra form above:
//   trapezoidal  the implicit product trapezoidal rule for every integral of order < 2 and the
//                trapezoidal rule twice for one of order 2 (Garrappa's implicit multi-term PI2
//                method up to that), Newton's method per step with the exact Jacobian of the
//                reduced system. Error O(h^2) when f(t, y(t)) and every y - T_k are C^2 on
//                [0, T] (each integral's rule is then O(h^2)); a solution that reduces every
//                integrand combination to zero, like y = 1 + t for Bagley-Torvik with
//                f = c (1 + t), is reproduced to round-off.
//   abm          the predictor-corrector of FodeSolver on the reduced system; error
//                O(h^{min(2, 1 + mu b)}) under the same smoothness, b the smallest order of
//                the reduced system (min(a_Q, a_Q - a_k), 1 for a split integral of order 2;
//                e.g. b = 1/2 and O(h^1.5) for Bagley-Torvik with mu = 1). The solver's
//                growth check is off: the components start at 0 (see FodeOptions).
// tests/unit/fode_multi_term_test.cpp checks both orders on manufactured problems.
//
// Distribution: the equation is one scalar unknown, so the reduced system lives on rank 0 of
// comm; the other ranks hold no component and only take part in the collective calls. The
// observer's FodeStepView shows the unknown y: one value on rank 0, none elsewhere.
// Collectivity: the constructor and solve() are collective on comm; rhs runs on rank 0.

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/frac/fode_solver.hpp"

namespace fracmfg::frac {

/// The equation's data (the same on every rank).
struct MultiTermProblem {
  /// a_k in [0, 2], distinct, at least one > 0 (any order of the list).
  std::vector<double> orders;
  /// lambda_k, one per order; the coefficient of the highest order must not be 0.
  std::vector<double> coefficients;
  /// f(t, y).
  std::function<double(double t, double y)> rhs;
  /// Optional d f / d y (the implicit method); a forward difference without it.
  std::function<double(double t, double y)> rhs_derivative;
  /// y(0), and y'(0) when the highest order is > 1: ceil(max order) values (1 if it is <= 1).
  std::vector<double> initial;
  double horizon = 1.0;      ///< T > 0
  std::int64_t steps = 100;  ///< N >= 1, h = T / N
  double grading = 1.0;      ///< FodeProblem::grading: t_n = T (n/N)^r
};

/// The number of initial values a problem of these orders needs: ceil(max order), at least 1.
std::size_t multi_term_initial_count(const std::vector<double>& orders);

class MultiTermSolver {
 public:
  /// Checks the problem (fracmfg::Error naming the problem, alike on every rank) and builds
  /// the reduced FodeSolver. options.growth_check is ignored (off). Collective on comm.
  MultiTermSolver(MPI_Comm comm, MultiTermProblem problem, FodeOptions options = {},
                  exec::Selector* selector = nullptr, core::Logger log = {});
  ~MultiTermSolver();
  MultiTermSolver(MultiTermSolver&&) noexcept;
  MultiTermSolver& operator=(MultiTermSolver&&) noexcept;
  MultiTermSolver(const MultiTermSolver&) = delete;
  MultiTermSolver& operator=(const MultiTermSolver&) = delete;

  /// Steps n = 0..N; `observer` as in FodeSolver::solve, seeing y (see the header comment).
  /// Collective.
  FodeStats solve(const FodeSolver::Observer& observer = {}, std::int64_t observe_every = 1);

  /// y at the last step computed (y(0) before solve()), on every rank.
  double solution() const;
  /// The highest order a_Q.
  double highest_order() const;
  /// The reduced system (its components are the integrals, not y).
  const FodeSolver& system() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::frac
