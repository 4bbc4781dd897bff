// frac::MultiTermSolver on problems with known solutions (h = T/N):
//  * Bagley-Torvik a y'' + b D^{3/2} y + c y = c (1 + t), y(0) = 1, y'(0) = 1: y = 1 + t
//    makes every integrand combination of the Volterra form vanish, so the implicit method
//    reproduces it to round-off.
//  * A nonlinear Bagley-Torvik problem y'' + 0.5 D^{3/2} y + y = g(t) + sin(y_e) - sin(y),
//    y_e = 1 + t + t^4 (D^{3/2} (1 + t) = 0, so g = 12 t^2 + 12/Gamma(3.5) t^{5/2}
//    + y_e is C^2): reduced orders 1, 1/2, 1 (both order-2 integrals split), so trapezoidal
//    is O(h^2) and abm (mu = 1) O(h^{1 + 1/2}).
//  * Three fractional orders 1.8, 0.6, 0: D^{1.8} y + 2 D^{0.6} y + y = g(t) + y_e^2 - y^2,
//    y_e = 1 + t^4, y(0) = 1, y'(0) = 0 (g = 24/Gamma(3.2) t^{2.2} + 48/Gamma(4.4) t^{3.4}
//    + y_e is C^2); reduced orders 1.8, 1.2, 1.8 with C^2 integrands f(t, y_e(t)), t^4 and
//    y_e: O(h^2) for both methods. (With y_e = 1 + t + t^4 instead, 2 D^{0.6} t puts a
//    t^{0.4} term into f, which the product rules integrate with an error O(h^{1.4}) only, as
//    for the relaxation equation in fode_convergence_test.cpp.)
// Observed orders log2(e(h)/e(h/2)) of the error at T at the finest pair must be within 0.15
// of these.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/multi_term_solver.hpp"

namespace ff = fracmfg::frac;

namespace {

double ye(double t) {
  return 1.0 + t + std::pow(t, 4);
}
double ye_three(double t) {
  return 1.0 + std::pow(t, 4);
}
using Exact = double (*)(double);

ff::MultiTermProblem bagley_torvik_nonlinear() {
  ff::MultiTermProblem p;
  p.orders = {2.0, 1.5, 0.0};
  p.coefficients = {1.0, 0.5, 1.0};
  const double c15 = 0.5 * 24.0 / std::tgamma(3.5);
  p.rhs = [=](double t, double y) {
    return 12.0 * t * t + c15 * std::pow(t, 2.5) + ye(t) + std::sin(ye(t)) - std::sin(y);
  };
  p.rhs_derivative = [](double, double y) { return -std::cos(y); };
  p.initial = {1.0, 1.0};
  p.horizon = 1.0;
  return p;
}

ff::MultiTermProblem three_orders() {
  ff::MultiTermProblem p;
  p.orders = {0.6, 0.0, 1.8};  // any order of the list
  p.coefficients = {2.0, 1.0, 1.0};
  const double c18 = 24.0 / std::tgamma(3.2);
  const double c06 = 2.0 * 24.0 / std::tgamma(4.4);
  p.rhs = [=](double t, double y) {
    const double e = ye_three(t);
    return c18 * std::pow(t, 2.2) + c06 * std::pow(t, 3.4) + e + e * e - y * y;
  };
  // No derivative: the solver's forward difference.
  p.initial = {1.0, 0.0};
  p.horizon = 1.0;
  return p;
}

double error_at_end(ff::MultiTermProblem p, Exact exact, ff::FodeMethod method, std::int64_t n) {
  p.steps = n;
  ff::FodeOptions o;
  o.method = method;
  ff::MultiTermSolver s(MPI_COMM_SELF, p, o);
  s.solve();
  return std::fabs(s.solution() - exact(p.horizon));
}

void expect_order(const char* name, const ff::MultiTermProblem& p, Exact exact,
                  ff::FodeMethod method, double expected) {
  std::vector<double> e;
  for (std::int64_t n : {64, 128, 256, 512}) e.push_back(error_at_end(p, exact, method, n));
  std::printf("%s, %s: errors", name, ff::to_string(method));
  for (double v : e) std::printf(" %.3e", v);
  std::printf("; orders");
  for (std::size_t i = 1; i < e.size(); ++i) std::printf(" %.3f", std::log2(e[i - 1] / e[i]));
  std::printf(" (expected %.2f)\n", expected);
  EXPECT_NEAR(std::log2(e[e.size() - 2] / e.back()), expected, 0.15) << name;
}

}  // namespace

TEST(fode_multi_term_test, BagleyTorvikLinearSolutionIsExactToRoundOff) {
  const double a = 1.0, b = 0.5, c = 2.0;
  for (ff::FodeHistory history : {ff::FodeHistory::direct, ff::FodeHistory::fft}) {
    ff::MultiTermProblem p;
    p.orders = {2.0, 1.5, 0.0};
    p.coefficients = {a, b, c};
    p.rhs = [=](double t, double) { return c * (1.0 + t); };
    p.initial = {1.0, 1.0};
    p.horizon = 2.0;
    p.steps = 500;
    ff::FodeOptions o;
    o.method = ff::FodeMethod::trapezoidal;
    o.history = history;
    o.block_size = 8;
    ff::MultiTermSolver s(MPI_COMM_SELF, p, o);
    double worst = 0.0;
    s.solve([&](const ff::FodeStepView& v) {
      ASSERT_EQ(v.local_size, 1u);
      worst = std::max(worst, std::fabs(v.y[0] - (1.0 + v.time)));
    });
    std::printf("Bagley-Torvik y = 1 + t, history %s: max error %.3e\n", ff::to_string(history),
                worst);
    EXPECT_LT(worst, 1e-12);
    EXPECT_NEAR(s.solution(), 3.0, 1e-12);
    EXPECT_EQ(s.highest_order(), 2.0);
  }
}

TEST(fode_multi_term_test, BagleyTorvikLinearSolutionIsExactOnAGradedMesh) {
  // The non-uniform product-integration weights integrate linear integrands exactly too.
  ff::MultiTermProblem p;
  p.orders = {2.0, 1.5, 0.0};
  p.coefficients = {1.0, 1.0, 1.0};
  p.rhs = [](double t, double) { return 1.0 + t; };
  p.initial = {1.0, 1.0};
  p.horizon = 2.0;
  p.steps = 200;
  p.grading = 2.0;
  ff::FodeOptions o;
  o.method = ff::FodeMethod::trapezoidal;
  ff::MultiTermSolver s(MPI_COMM_SELF, p, o);
  double worst = 0.0;
  s.solve([&](const ff::FodeStepView& v) {
    worst = std::max(worst, std::fabs(v.y[0] - (1.0 + v.time)));
  });
  std::printf("Bagley-Torvik y = 1 + t, graded r = 2: max error %.3e\n", worst);
  EXPECT_LT(worst, 1e-12);
}

TEST(fode_multi_term_test, NonlinearBagleyTorvikConvergesAtTheMethodsOrders) {
  expect_order("Bagley-Torvik nonlinear", bagley_torvik_nonlinear(), ye,
               ff::FodeMethod::trapezoidal, 2.0);
  expect_order("Bagley-Torvik nonlinear", bagley_torvik_nonlinear(), ye, ff::FodeMethod::abm, 1.5);
}

TEST(fode_multi_term_test, ThreeFractionalOrdersConvergeAtOrderTwo) {
  expect_order("orders 1.8, 0.6, 0", three_orders(), ye_three, ff::FodeMethod::trapezoidal, 2.0);
  expect_order("orders 1.8, 0.6, 0", three_orders(), ye_three, ff::FodeMethod::abm, 2.0);
}

TEST(fode_multi_term_test, FftAndDirectHistoriesAgree) {
  ff::MultiTermProblem p = three_orders();
  p.steps = 1000;
  double y[2] = {0.0, 0.0};
  int i = 0;
  for (ff::FodeHistory history : {ff::FodeHistory::direct, ff::FodeHistory::fft}) {
    ff::FodeOptions o;
    o.history = history;
    o.block_size = 16;
    ff::MultiTermSolver s(MPI_COMM_SELF, p, o);
    s.solve();
    y[i++] = s.solution();
  }
  EXPECT_NEAR(y[0], y[1], 1e-11 * std::fabs(y[0]));
}

TEST(fode_multi_term_test, InvalidProblemsAreRejectedWithClearMessages) {
  const auto message = [](ff::MultiTermProblem p) {
    if (!p.rhs) p.rhs = [](double, double y) { return -y; };
    try {
      ff::MultiTermSolver s(MPI_COMM_SELF, p);
    } catch (const fracmfg::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ff::MultiTermProblem p;
  p.orders = {2.0, 1.5, 0.0};
  p.coefficients = {1.0, 1.0, 1.0};
  p.initial = {1.0, 0.0};
  EXPECT_EQ(message(p), "no error");
  ff::MultiTermProblem q = p;
  q.orders = {2.5, 1.0, 0.0};
  EXPECT_NE(message(q).find("must lie in [0, 2]"), std::string::npos);
  q = p;
  q.orders = {1.5, 1.5, 0.0};
  EXPECT_NE(message(q).find("same order"), std::string::npos);
  q = p;
  q.orders = {0.0};
  q.coefficients = {1.0};
  q.initial = {1.0};
  EXPECT_NE(message(q).find("at least one order must be > 0"), std::string::npos);
  q = p;
  q.coefficients = {0.0, 1.0, 1.0};
  EXPECT_NE(message(q).find("highest order 2 is 0"), std::string::npos);
  q = p;
  q.initial = {1.0};
  EXPECT_NE(message(q).find("expected 2 initial values"), std::string::npos);
  q = p;
  q.coefficients = {1.0, 1.0};
  EXPECT_NE(message(q).find("3 orders but 2 coefficients"), std::string::npos);
  EXPECT_EQ(ff::multi_term_initial_count({0.5, 0.0}), 1u);
  EXPECT_EQ(ff::multi_term_initial_count({1.0}), 1u);
  EXPECT_EQ(ff::multi_term_initial_count({1.01, 0.3}), 2u);
}
