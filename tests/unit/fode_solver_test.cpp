// frac::FodeSolver on one rank: systems and groups of orders, the right-hand side forms
// (function, Jacobian, PETSc Mat + pointwise part), failure reports, observers, statistics
// and input checks.
#include "fracmfg/frac/fode_solver.hpp"

#include <gtest/gtest.h>
#include <petscmat.h>

#include <cmath>
#include <complex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/frac/mittag_leffler.hpp"

namespace ff = fracmfg::frac;

namespace {

ff::FodeProblem problem(std::vector<double> orders, std::int64_t steps, double horizon = 1.0) {
  const std::size_t d = orders.size();
  ff::FodeProblem p;
  p.global_size = static_cast<PetscInt>(d);
  p.local_size = static_cast<PetscInt>(d);
  p.order = std::move(orders);
  p.horizon = horizon;
  p.steps = steps;
  p.initial.assign(d, 1.0);
  p.initial_derivative.assign(d, 0.0);
  return p;
}

std::vector<double> solve_final(const ff::FodeProblem& p, const ff::FodeRhs& rhs,
                                const ff::FodeOptions& o) {
  ff::FodeSolver s(MPI_COMM_SELF, p, rhs, o);
  s.solve();
  return s.solution();
}

/// A tridiagonal Mat tridiag(1, -2, 1) * kappa of size n on PETSC_COMM_SELF.
Mat laplacian(PetscInt n, double kappa) {
  Mat a = nullptr;
  MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, 3, nullptr, &a);
  for (PetscInt i = 0; i < n; ++i) {
    if (i > 0) MatSetValue(a, i, i - 1, kappa, INSERT_VALUES);
    MatSetValue(a, i, i, -2.0 * kappa, INSERT_VALUES);
    if (i + 1 < n) MatSetValue(a, i, i + 1, kappa, INSERT_VALUES);
  }
  MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY);
  return a;
}

}  // namespace

TEST(fode_solver_test, SystemOfTwoOrdersEqualsItsScalarEquationsSolvedAlone) {
  // Uncoupled D^0.8 y1 = -y1, D^1.6 y2 = -2 y2: two weight groups in one solver.
  for (const ff::FodeMethod method : {ff::FodeMethod::abm, ff::FodeMethod::trapezoidal}) {
    ff::FodeOptions o;
    o.method = method;
    o.history = ff::FodeHistory::fft;
    o.block_size = 8;
    ff::FodeRhs both;
    both.function = [](double, const double* y, double* f) {
      f[0] = -y[0];
      f[1] = -2.0 * y[1];
    };
    const auto y = solve_final(problem({0.8, 1.6}, 300), both, o);
    ff::FodeRhs first, second;
    first.function = [](double, const double* v, double* f) { f[0] = -v[0]; };
    second.function = [](double, const double* v, double* f) { f[0] = -2.0 * v[0]; };
    const auto y1 = solve_final(problem({0.8}, 300), first, o);
    const auto y2 = solve_final(problem({1.6}, 300), second, o);
    EXPECT_NEAR(y[0], y1[0], 1e-14);
    EXPECT_NEAR(y[1], y2[0], 1e-14);
    // And the values are the Mittag-Leffler solutions to the discretisation error.
    EXPECT_NEAR(y[0], ff::mittag_leffler(-1.0, 0.8), 1e-4);
    EXPECT_NEAR(y[1], ff::mittag_leffler(-2.0, 1.6), 1e-4);
  }
}

TEST(fode_solver_test, CoupledRotationMatchesComplexMittagLeffler) {
  // D^a (y1, y2) = (y2, -y1), i.e. z = y1 + i y2 solves D^a z = -i z: z = E_a(-i t^a) z0.
  const double a = 0.7;
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) {
    f[0] = y[1];
    f[1] = -y[0];
  };
  ff::FodeProblem p = problem({a}, 2000, 2.0);
  p.global_size = p.local_size = 2;
  p.initial = {1.0, 0.0};
  for (const ff::FodeMethod method : {ff::FodeMethod::abm, ff::FodeMethod::trapezoidal}) {
    ff::FodeOptions o;
    o.method = method;
    const auto y = solve_final(p, rhs, o);
    const std::complex<double> z =
        ff::mittag_leffler(std::complex<double>(0.0, -std::pow(2.0, a)), a);
    EXPECT_NEAR(y[0], z.real(), 2e-5) << ff::to_string(method);
    EXPECT_NEAR(y[1], z.imag(), 2e-5) << ff::to_string(method);
  }
}

TEST(fode_solver_test, SuppliedJacobianGivesTheFiniteDifferenceSolution) {
  // D^0.6 y = [-y1^3 + y2, -sin(y1) - y2] with and without the Jacobian.
  ff::FodeProblem p = problem({0.6}, 400, 1.0);
  p.global_size = p.local_size = 2;
  p.initial = {1.0, -0.5};
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) {
    f[0] = -y[0] * y[0] * y[0] + y[1];
    f[1] = -std::sin(y[0]) - y[1];
  };
  ff::FodeOptions o;
  o.method = ff::FodeMethod::trapezoidal;
  ff::FodeSolver fd(MPI_COMM_SELF, p, rhs, o);
  const ff::FodeStats fd_stats = fd.solve();
  rhs.jacobian = [](double, const double* y, double* j) {
    j[0] = -3.0 * y[0] * y[0];
    j[1] = 1.0;
    j[2] = -std::cos(y[0]);
    j[3] = -1.0;
  };
  ff::FodeSolver exact(MPI_COMM_SELF, p, rhs, o);
  const ff::FodeStats exact_stats = exact.solve();
  EXPECT_NEAR(fd.solution()[0], exact.solution()[0], 1e-11);
  EXPECT_NEAR(fd.solution()[1], exact.solution()[1], 1e-11);
  // Finite differences cost d = 2 extra evaluations per Newton iteration.
  EXPECT_EQ(fd_stats.rhs_evaluations - exact_stats.rhs_evaluations, 2 * fd_stats.newton_iterations);
  EXPECT_EQ(exact_stats.newton_not_converged, 0);
  EXPECT_LE(exact_stats.newton_iterations, 4 * 400);
}

TEST(fode_solver_test, MatPlusPointwiseFormEqualsFunctionForm) {
  // f = A y + g(t, y), A = tridiag(1, -2, 1), g_i = -y_i^3 + cos(t + i) / 4, d = 30.
  const PetscInt d = 30;
  Mat a = laplacian(d, 1.0);
  ff::FodeProblem p = problem({0.75}, 200, 1.0);
  p.global_size = p.local_size = d;
  p.initial.resize(static_cast<std::size_t>(d));
  for (PetscInt i = 0; i < d; ++i) p.initial[static_cast<std::size_t>(i)] = std::sin(0.3 * i);
  const auto g = [](double t, PetscInt i, double y) { return -y * y * y + 0.25 * std::cos(t + i); };
  ff::FodeRhs split;
  split.linear = a;
  split.pointwise = [&](double t, PetscInt first, std::size_t n, const double* y, double* out) {
    for (std::size_t k = 0; k < n; ++k) out[k] = g(t, first + static_cast<PetscInt>(k), y[k]);
  };
  ff::FodeRhs function;
  function.function = [&](double t, const double* y, double* f) {
    for (PetscInt i = 0; i < d; ++i) {
      const double left = i > 0 ? y[i - 1] : 0.0;
      const double right = i + 1 < d ? y[i + 1] : 0.0;
      f[i] = left - 2.0 * y[i] + right + g(t, i, y[i]);
    }
  };
  for (const ff::FodeMethod method : {ff::FodeMethod::abm, ff::FodeMethod::trapezoidal}) {
    ff::FodeOptions o;
    o.method = method;
    const auto ys = solve_final(p, split, o);
    const auto yf = solve_final(p, function, o);
    for (std::size_t i = 0; i < ys.size(); ++i) {
      EXPECT_NEAR(ys[i], yf[i], 1e-11) << ff::to_string(method) << " component " << i;
    }
  }
  // The analytic derivative of g gives the same as its finite differences.
  split.pointwise_derivative = [](double, PetscInt, std::size_t n, const double* y, double* dg) {
    for (std::size_t k = 0; k < n; ++k) dg[k] = -3.0 * y[k] * y[k];
  };
  ff::FodeOptions o;
  o.method = ff::FodeMethod::trapezoidal;
  const auto ya = solve_final(p, split, o);
  const auto yf = solve_final(p, function, o);
  for (std::size_t i = 0; i < ya.size(); ++i) EXPECT_NEAR(ya[i], yf[i], 1e-11);
  MatDestroy(&a);  // the solvers held their own references
}

TEST(fode_solver_test, PointwiseOnlySystemSolvesEachRelaxationEquation) {
  // D^0.9 y_i = lambda_i y_i, lambda_i = -i/10, exact E_0.9(lambda_i t^0.9), elementwise Newton.
  const PetscInt d = 50;
  ff::FodeProblem p = problem({0.9}, 1000, 1.0);
  p.global_size = p.local_size = d;
  ff::FodeRhs rhs;
  rhs.pointwise = [](double, PetscInt first, std::size_t n, const double* y, double* g) {
    for (std::size_t k = 0; k < n; ++k) g[k] = -0.1 * static_cast<double>(first + k) * y[k];
  };
  for (const ff::FodeMethod method : {ff::FodeMethod::abm, ff::FodeMethod::trapezoidal}) {
    ff::FodeOptions o;
    o.method = method;
    const auto y = solve_final(p, rhs, o);
    for (PetscInt i = 0; i < d; ++i) {
      EXPECT_NEAR(y[static_cast<std::size_t>(i)], ff::mittag_leffler(-0.1 * i, 0.9), 1e-5)
          << "component " << i;
    }
  }
}

TEST(fode_solver_test, BlowUpStopsWithNumericalErrorNamingStepTimeAndComponent) {
  // D^0.5 y = y^2, y(0) = 1 blows up in finite time; the second component stays tame.
  ff::FodeProblem p = problem({0.5}, 1000, 5.0);
  p.global_size = p.local_size = 2;
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) {
    f[0] = -y[0];
    f[1] = y[1] * y[1];
  };
  ff::FodeOptions o;
  o.divergence_threshold = 1e8;
  ff::FodeSolver s(MPI_COMM_SELF, p, rhs, o);
  std::int64_t last_seen = -1;
  try {
    s.solve([&](const ff::FodeStepView& v) { last_seen = v.step; });
    FAIL() << "expected a CollectiveError";
  } catch (const fracmfg::core::CollectiveError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::numerical);
    EXPECT_NE(what.find("diverged"), std::string::npos) << what;
    EXPECT_NE(what.find("component y2 (global index 1)"), std::string::npos) << what;
    const std::string step = "at step " + std::to_string(last_seen + 1) + " (t = ";
    EXPECT_NE(what.find(step), std::string::npos) << what << " (expected " << step << ")";
  }
  EXPECT_GT(last_seen, 10);
  EXPECT_LT(std::fabs(s.solution()[1]), HUGE_VAL);
}

TEST(fode_solver_test, NanStopsAtTheFirstStepItAppears) {
  // f = sqrt(y - 1.5) is NaN at y(0) = 1: named at step 0, before y_1 becomes NaN.
  ff::FodeProblem p = problem({0.5}, 10);
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) { f[0] = std::sqrt(y[0] - 1.5); };
  ff::FodeSolver s(MPI_COMM_SELF, p, rhs, {});
  try {
    s.solve();
    FAIL() << "expected a CollectiveError";
  } catch (const fracmfg::core::CollectiveError& e) {
    EXPECT_EQ(std::string(e.what()),
              "fode: the right-hand side f1 is not a number (NaN) at the initial value, at step 0 "
              "(t = 0), component y1 (global index 0)");
  }
}

// The message of the CollectiveError that solving throws, or "no error".
std::string failure_of(const ff::FodeProblem& p, const ff::FodeRhs& rhs, const ff::FodeOptions& o) {
  try {
    solve_final(p, rhs, o);
  } catch (const fracmfg::core::CollectiveError& e) {
    EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::numerical);
    return e.what();
  }
  return "no error";
}

ff::FodeOptions method(ff::FodeMethod m) {
  ff::FodeOptions o;
  o.method = m;
  return o;
}

TEST(fode_solver_test, TrapezoidalNamesANanRightHandSideAndItsComponent) {
  // f2 = sqrt(y1 - 2) is NaN at the initial value: once reported as a singular Newton matrix.
  ff::FodeProblem p = problem({0.5, 0.5}, 10);
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) {
    f[0] = -y[0];
    f[1] = std::sqrt(y[0] - 2.0);
  };
  EXPECT_EQ(failure_of(p, rhs, method(ff::FodeMethod::trapezoidal)),
            "fode: the right-hand side f2 is not a number (NaN) at the initial value, at step 0 "
            "(t = 0), component y2 (global index 1)");
}

TEST(fode_solver_test, TrapezoidalNamesARightHandSideThatTurnsNanDuringNewton) {
  // f = -1/sqrt(y - 0.5) - 40: the first Newton iterate of step 1 falls below 0.5.
  ff::FodeProblem p = problem({0.9}, 10);
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) {
    f[0] = -1.0 / std::sqrt(y[0] - 0.5) - 40.0;
  };
  const std::string what = failure_of(p, rhs, method(ff::FodeMethod::trapezoidal));
  EXPECT_EQ(what.rfind("fode: the right-hand side f1 is not a number (NaN) at step 1", 0), 0u)
      << what;
}

TEST(fode_solver_test, AbmPastItsStabilityLimitStopsAndSuggestsTrapezoidal) {
  // D^a y = -lambda y decays (|y| <= 1), but abm beyond its stability limit grew to 3.5e4 and
  // 1.9e49 and returned that.
  struct Case {
    double order, lambda;
    std::int64_t steps;
    const char* h;
  };
  for (const Case c : {Case{0.8, 10.0, 8, "h = 0.125"}, Case{0.5, 1000.0, 10, "h = 0.1"}}) {
    ff::FodeProblem p = problem({c.order}, c.steps);
    ff::FodeRhs rhs;
    const double lambda = c.lambda;
    rhs.function = [lambda](double, const double* y, double* f) { f[0] = -lambda * y[0]; };
    const std::string what = failure_of(p, rhs, method(ff::FodeMethod::abm));
    EXPECT_EQ(what.rfind(std::string("fode: method abm is unstable at this step size (") + c.h, 0),
              0u)
        << what;
    EXPECT_NE(what.find("component y1 (global index 0); use method: trapezoidal"),
              std::string::npos)
        << what;
    // The implicit method at the same step decays.
    const double exact = ff::mittag_leffler(-lambda, c.order);
    EXPECT_NEAR(solve_final(p, rhs, method(ff::FodeMethod::trapezoidal))[0], exact, 0.05);
  }
  // abm within its limit (h^a lambda about 0.12) is not stopped.
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) { f[0] = -10.0 * y[0]; };
  EXPECT_NEAR(solve_final(problem({0.8}, 256), rhs, method(ff::FodeMethod::abm))[0],
              ff::mittag_leffler(-10.0, 0.8), 1e-3);
}

TEST(fode_solver_test, AbmAtVerySmallOrdersStopsWhereItsCorrectorFails) {
  // D^a y = -y, y(1) = E_a(-1): at a = 1e-3 with 100 steps (h^a/Gamma(a+2) = 0.995) the
  // corrector's passes stop contracting and abm returned 0.683 for 0.49986.
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) { f[0] = -y[0]; };
  const double exact =
      solve_final(problem({1e-3}, 4000), rhs, method(ff::FodeMethod::trapezoidal))[0];
  EXPECT_NEAR(exact, 0.49986, 1e-5);
  for (const auto& [order, steps] :
       {std::pair{1e-3, 100}, std::pair{1e-4, 1000}, std::pair{1e-2, 10}}) {
    const std::string what = failure_of(problem({order}, steps), rhs, method(ff::FodeMethod::abm));
    EXPECT_EQ(what.rfind(
                  "fode: method abm did not solve its corrector equation: the defect of y1 is ", 0),
              0u)
        << order << " " << steps << ": " << what;
    EXPECT_NE(what.find("; use method: trapezoidal (implicit) or more steps"), std::string::npos)
        << what;
  }
  // Where its passes do contract, abm is accurate and not stopped, down to the same order.
  for (const auto& [order, steps, tolerance] :
       {std::tuple{1e-3, 1000, 1e-4}, std::tuple{1e-2, 100, 1e-3}, std::tuple{0.1, 10, 1e-2}}) {
    ff::FodeSolver s(MPI_COMM_SELF, problem({order}, steps), rhs, method(ff::FodeMethod::abm));
    const ff::FodeStats stats = s.solve();
    const double reference =
        solve_final(problem({order}, 4000), rhs, method(ff::FodeMethod::trapezoidal))[0];
    EXPECT_NEAR(s.solution()[0], reference, tolerance) << order << " " << steps;
    EXPECT_LT(stats.corrector_defect, 0.1) << order << " " << steps;
    EXPECT_GT(stats.corrector_defect, 0.0);
  }
}

TEST(fode_solver_test, AbmFollowsALegitimatelyGrowingSolution) {
  // D^a y = y grows like E_a(t^a) (about 30 at t = 3 for a = 0.8): y f > 0, never refused,
  // even at a coarse step.
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) { f[0] = y[0]; };
  const double exact = ff::mittag_leffler(std::pow(3.0, 0.8), 0.8);
  EXPECT_NEAR(solve_final(problem({0.8}, 600, 3.0), rhs, method(ff::FodeMethod::abm))[0], exact,
              1e-3 * exact);
  EXPECT_GT(solve_final(problem({0.8}, 6, 3.0), rhs, method(ff::FodeMethod::abm))[0], 10.0);
  // A decaying and a growing component side by side.
  ff::FodeProblem p = problem({0.8, 0.8}, 600, 3.0);
  ff::FodeRhs both;
  both.function = [](double, const double* y, double* f) {
    f[0] = -2.0 * y[0];
    f[1] = y[1] - 0.5 * y[0];
  };
  EXPECT_EQ(failure_of(p, both, method(ff::FodeMethod::abm)), "no error");
}

TEST(fode_solver_test, ObserverSeesEveryKthStepAndTheLast) {
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) { f[0] = -y[0]; };
  ff::FodeSolver s(MPI_COMM_SELF, problem({0.5}, 50, 2.5), rhs, {});
  std::vector<std::int64_t> steps;
  std::vector<double> times;
  s.solve(
      [&](const ff::FodeStepView& v) {
        steps.push_back(v.step);
        times.push_back(v.time);
        EXPECT_EQ(v.local_size, 1u);
      },
      7);
  const std::vector<std::int64_t> expected = {0, 7, 14, 21, 28, 35, 42, 49, 50};
  EXPECT_EQ(steps, expected);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    EXPECT_DOUBLE_EQ(times[k], 0.05 * static_cast<double>(steps[k]));
  }
  EXPECT_EQ(times.back(), 2.5);  // the last time is the horizon exactly
  // An observer's exception ends the solve as a CollectiveError on every rank.
  EXPECT_THROW(s.solve([](const ff::FodeStepView&) { throw fracmfg::IoError("disk full"); }),
               fracmfg::core::CollectiveError);
}

TEST(fode_solver_test, StatisticsCountEvaluationsAndNewtonIterations) {
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) { f[0] = -y[0] * y[0]; };
  ff::FodeOptions abm;
  abm.corrector_iterations = 3;
  ff::FodeSolver a(MPI_COMM_SELF, problem({0.5}, 40), rhs, abm);
  const ff::FodeStats sa = a.solve();
  EXPECT_EQ(sa.steps, 40);
  EXPECT_EQ(sa.rhs_evaluations, 1 + 40 * (3 + 1));  // P(EC)^3 E: four evaluations a step
  EXPECT_EQ(sa.newton_iterations, 0);

  ff::FodeOptions trap;
  trap.method = ff::FodeMethod::trapezoidal;
  trap.newton_max_iterations = 1;  // cannot reach 1e-12 in one iteration
  ff::FodeSolver t(MPI_COMM_SELF, problem({0.5}, 40), rhs, trap);
  const ff::FodeStats st = t.solve();
  EXPECT_EQ(st.newton_iterations, 40);
  EXPECT_EQ(st.newton_not_converged, 40);
}

TEST(fode_solver_test, InvalidInputsAreRejectedWithClearMessages) {
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) { f[0] = -y[0]; };
  const auto message = [&](ff::FodeProblem p, ff::FodeRhs r = {}, ff::FodeOptions o = {}) {
    try {
      ff::FodeSolver s(MPI_COMM_SELF, p, r.function || r.pointwise ? r : rhs, o);
    } catch (const fracmfg::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(problem({2.0}, 10)).find("must lie in (0, 2)"), std::string::npos);
  EXPECT_NE(message(problem({0.0}, 10)).find("must lie in (0, 2)"), std::string::npos);
  EXPECT_NE(message(problem({0.5}, 0)).find("at least one step"), std::string::npos);
  ff::FodeProblem no_derivative = problem({1.5}, 10);
  no_derivative.initial_derivative.clear();
  EXPECT_NE(message(no_derivative).find("initial_derivative"), std::string::npos);
  ff::FodeProblem wrong_count = problem({0.5}, 10);
  wrong_count.initial = {1.0, 2.0, 3.0};
  EXPECT_NE(message(wrong_count).find("initial holds 3 values"), std::string::npos);
  ff::FodeRhs both = rhs;
  both.pointwise = [](double, PetscInt, std::size_t, const double*, double*) {};
  EXPECT_NE(message(problem({0.5}, 10), both).find("not both"), std::string::npos);
  ff::FodeOptions bad_block;
  bad_block.block_size = 1;
  EXPECT_NE(message(problem({0.5}, 10), rhs, bad_block).find("block_size"), std::string::npos);
}

TEST(fode_solver_test, DirectHistoryUsesOneBlockAndNoFft) {
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) { f[0] = -y[0]; };
  ff::FodeOptions o;
  o.history = ff::FodeHistory::direct;
  ff::FodeSolver s(MPI_COMM_SELF, problem({0.5}, 300), rhs, o);
  const ff::FodeStats st = s.solve();
  EXPECT_EQ(s.block_size(), 301);
  EXPECT_EQ(st.fft_squares, 0);
  EXPECT_EQ(st.direct_squares, 0);
  o.history = ff::FodeHistory::fft;
  o.block_size = 16;
  ff::FodeSolver f(MPI_COMM_SELF, problem({0.5}, 300), rhs, o);
  const ff::FodeStats sf = f.solve();
  // S = 512 = 16 * 2^5: one square per internal node of the tree that reaches [0, 301).
  EXPECT_GT(sf.fft_squares, 10);
  EXPECT_EQ(sf.direct_squares, 0);
  EXPECT_NEAR(s.solution()[0], f.solution()[0], 1e-13);
}

TEST(fode_solver_test, FftSquaresRunThroughTheSelectorAsKernelHistoryFft) {
  // 200 components of the relaxation equation with different rates; the selector (no GPU
  // here, or FRACMFG_BACKEND=cpu) places every FFT square and records it under "history_fft".
  namespace fe = fracmfg::exec;
  fe::SelectorConfig config;
  config.backend = fe::BackendChoice::cpu;
  config.persist = false;
  config.use_environment = false;
  fe::Selector selector(fe::Hardware::probe(MPI_COMM_SELF), config);
  const PetscInt d = 200;
  ff::FodeProblem p = problem({0.6}, 500, 1.0);
  p.global_size = p.local_size = d;
  p.initial = {1.0};
  ff::FodeRhs rhs;
  rhs.pointwise = [](double, PetscInt first, std::size_t n, const double* y, double* g) {
    for (std::size_t k = 0; k < n; ++k) g[k] = -0.01 * static_cast<double>(first + k) * y[k];
  };
  ff::FodeOptions o;
  o.history = ff::FodeHistory::fft;
  o.block_size = 16;
  ff::FodeSolver with(MPI_COMM_SELF, p, rhs, o, &selector);
  const ff::FodeStats stats = with.solve();
  const fe::KernelId id = selector.kernel("history_fft");
  EXPECT_EQ(static_cast<std::int64_t>(selector.stats(id, fe::Backend::cpu).calls),
            stats.fft_squares);
  EXPECT_GT(stats.fft_squares, 0);
  ff::FodeSolver without(MPI_COMM_SELF, p, rhs, o);
  without.solve();
  for (PetscInt i = 0; i < d; ++i) {
    const auto k = static_cast<std::size_t>(i);
    EXPECT_EQ(with.solution()[k], without.solution()[k]);
    EXPECT_NEAR(with.solution()[k], ff::mittag_leffler(-0.01 * i, 0.6), 1e-4);
  }
}
