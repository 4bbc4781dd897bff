// frac::FodeSolver on the graded mesh t_n = T (n/N)^r: D^a y = -y, y(0) = 1, on [0, 1],
// exact y = E_a(-t^a) = 1 - t^a/Gamma(1+a) + ..., which behaves like t^a near t = 0.
// On the uniform mesh the first steps carry an error of order h^{2a}, so the maximum error
// over the steps converges at order min(2a, 2) only (fode_convergence_test.cpp). The graded
// mesh with r = 1/a makes the first step T N^{-1/a} short enough that its error h_1^{2a} is
// O(N^-2), and the maximum error converges at the full order of the method: 2 for
// trapezoidal, min(2, 1 + a) for abm (mu = 1). Observed orders log2(e(N)/e(2N)) at the
// finest pair, N = 512, 1024, must be within 0.15 of these and of 2a for trapezoidal on the
// uniform mesh (abm's uniform orders are printed: for a = 0.3 they are still far from the
// asymptotic regime at these N, see fode_convergence_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/fode_solver.hpp"
#include "fracmfg/frac/mittag_leffler.hpp"

namespace ff = fracmfg::frac;

namespace {

struct Errors {
  double max = 0.0;
  double at_end = 0.0;
};

Errors run(double a, double r, ff::FodeMethod method, std::int64_t n) {
  ff::FodeProblem p;
  p.global_size = 1;
  p.local_size = 1;
  p.order = {a};
  p.horizon = 1.0;
  p.steps = n;
  p.grading = r;
  p.initial = {1.0};
  if (a > 1.0) p.initial_derivative = {0.0};
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) { f[0] = -y[0]; };
  rhs.jacobian = [](double, const double*, double* j) { j[0] = -1.0; };
  ff::FodeOptions o;
  o.method = method;
  ff::FodeSolver s(MPI_COMM_SELF, p, rhs, o);
  Errors e;
  s.solve([&](const ff::FodeStepView& v) {
    const double err = std::fabs(v.y[0] - ff::mittag_leffler(-std::pow(v.time, a), a));
    e.max = std::max(e.max, err);
    if (v.step == n) e.at_end = err;
  });
  return e;
}

}  // namespace

double observed(double a, double r, ff::FodeMethod method) {
  std::vector<double> e;
  for (std::int64_t n : {128, 256, 512, 1024}) e.push_back(run(a, r, method, n).max);
  std::printf("a = %.2f, r = %.3f, %-11s max errors", a, r, ff::to_string(method));
  for (double v : e) std::printf(" %.3e", v);
  std::printf("; orders");
  for (std::size_t i = 1; i < e.size(); ++i) std::printf(" %.3f", std::log2(e[i - 1] / e[i]));
  std::printf("\n");
  return std::log2(e[e.size() - 2] / e.back());
}

TEST(fode_graded_test, GradedMeshRestoresTheFullOrderOfEachMethod) {
  for (double a : {0.3, 0.5}) {
    const double r = 1.0 / a;
    EXPECT_NEAR(observed(a, 1.0, ff::FodeMethod::trapezoidal), 2.0 * a, 0.15) << "a = " << a;
    EXPECT_NEAR(observed(a, r, ff::FodeMethod::trapezoidal), 2.0, 0.15) << "a = " << a;
    observed(a, 1.0, ff::FodeMethod::abm);  // printed: pre-asymptotic for a = 0.3 here
    EXPECT_NEAR(observed(a, r, ff::FodeMethod::abm), 1.0 + a, 0.15) << "a = " << a;
  }
}

TEST(fode_graded_test, GradingNearOneGivesTheUniformSolution) {
  // The non-uniform weights reduce to the uniform ones: r = 1 + 1e-13 (the graded, direct
  // code path) against r = 1 (the convolution weights and the history engine).
  for (auto method : {ff::FodeMethod::trapezoidal, ff::FodeMethod::abm}) {
    for (double a : {0.4, 1.3}) {
      ff::FodeProblem p;
      p.global_size = 1;
      p.local_size = 1;
      p.order = {a};
      p.steps = 300;
      p.initial = {1.0};
      p.initial_derivative = {0.5};
      ff::FodeRhs rhs;
      rhs.function = [](double t, const double* y, double* f) { f[0] = std::cos(t) - y[0] * y[0]; };
      double y[2] = {0.0, 0.0};
      for (int i = 0; i < 2; ++i) {
        p.grading = i == 0 ? 1.0 : 1.0 + 1e-13;
        ff::FodeOptions o;
        o.method = method;
        o.history = ff::FodeHistory::direct;
        ff::FodeSolver s(MPI_COMM_SELF, p, rhs, o);
        s.solve();
        y[i] = s.solution()[0];
      }
      EXPECT_NEAR(y[0], y[1], 1e-10) << ff::to_string(method) << ", a = " << a;
    }
  }
}

TEST(fode_graded_test, GradedMeshInputsAreChecked) {
  ff::FodeProblem p;
  p.global_size = 1;
  p.local_size = 1;
  p.initial = {1.0};
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) { f[0] = -y[0]; };
  const auto message = [&](double r, ff::FodeHistory history) {
    p.grading = r;
    ff::FodeOptions o;
    o.history = history;
    try {
      ff::FodeSolver s(MPI_COMM_SELF, p, rhs, o);
    } catch (const fracmfg::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(0.5, ff::FodeHistory::automatic).find("grading must be >= 1"),
            std::string::npos);
  EXPECT_NE(message(2.0, ff::FodeHistory::fft).find("fft history needs uniform steps"),
            std::string::npos);
  EXPECT_EQ(message(2.0, ff::FodeHistory::automatic), "no error");
  EXPECT_EQ(message(1.0, ff::FodeHistory::fft), "no error");
}
