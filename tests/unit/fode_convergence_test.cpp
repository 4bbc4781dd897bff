// frac::FodeSolver converges at the theoretical orders on problems with known solutions.
//
// Problems (h = T/N):
//  * Diethelm-Ford-Freed's nonlinear test problem (Nonlinear Dynamics 29 (2002), Sec. 3.1),
//    on [0, T], T = 0.8 (on [0, 1] the two leading error terms of ABM with a = 0.8 cancel
//    near t = 1: the error at t = 1 changes sign between N = 1024 and 2048, which hides the
//    order there; the maximum error is not affected):
//      D^a y = 40320/Gamma(9-a) t^{8-a} - 3 Gamma(5+a/2)/Gamma(5-a/2) t^{4-a/2}
//              + 9/4 Gamma(a+1) + (3/2 t^{a/2} - t^4)^3 - y^{3/2},   y(0) = 0 (, y'(0) = 0),
//    exact y = t^8 - 3 t^{4+a/2} + 9/4 t^a. Here D^a y = f(t, y(t)) is in C^2[0, 1] (its
//    least smooth term is t^{4-a/2}), the setting of Diethelm, Ford & Freed, Numer. Algorithms
//    36 (2004), Thm. 3.1: the ABM method (mu = 1) has max_n |y(t_n) - y_n| = O(h^{min(2,1+a)}),
//    and the product trapezoidal rule solved exactly (Garrappa's PI2_IM) O(h^2) (its
//    quadrature error for a C^2 integrand, ibid. Thm. 2.4, without the predictor's h^{1+a}).
//    With mu corrector passes ABM reaches O(h^{min(2, 1+mu a)}) (ibid., Sec. 3).
//  * Relaxation D^a y = -y, y(0) = 1 (, y'(0) = 0), on [0, 1], exact y = E_a(-t^a)
//    = 1 - t^a/Gamma(1+a) + t^{2a}/Gamma(1+2a) - ... Here f(t, y(t)) = -y(t) behaves like
//    t^a near 0 and is not C^2, which lowers the orders. The product rules integrate the
//    t^a term with an error O(h^{1+a}) at a fixed t > 0 (the first cell contributes h^a times
//    its length, the others sum to h^2 int t^{a-2} ~ h^{1+a}) and O(h^2) for a > 1, so the
//    error at T is O(h^{min(2, 1+a)}) for both methods. At t_1 = h both give
//    y_1 = 1 - h^a/Gamma(1+a) + h^{2a}/(Gamma(1+a) Gamma(2+a)) + O(h^{3a}) against the exact
//    h^{2a}/Gamma(1+2a): the first steps carry an error of order h^{2a}, which dominates the
//    maximum error for a < 1 (the pointwise error behaves like t^{a-1} h^{1+a}): the maximum
//    error is O(h^{min(2a, 2)}). Its higher terms h^{3a}, h^{4a}, ... fade slowly for small a,
//    so a = 0.3 is measured at N = 2^15, 2^16 (h^a = 0.036 there).
// Observed orders log2(e(h)/e(h/2)) at the finest pair must be within 0.15 of these.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fracmfg/frac/fode_solver.hpp"
#include "fracmfg/frac/mittag_leffler.hpp"

namespace ff = fracmfg::frac;

namespace {

enum class Problem { relaxation, nonlinear };

double exact(Problem p, double a, double t) {
  if (p == Problem::relaxation) return ff::mittag_leffler(-std::pow(t, a), a);
  return std::pow(t, 8) - 3.0 * std::pow(t, 4 + a / 2) + 2.25 * std::pow(t, a);
}

ff::FodeRhs rhs_of(Problem p, double a) {
  ff::FodeRhs rhs;
  if (p == Problem::relaxation) {
    rhs.function = [](double, const double* y, double* f) { f[0] = -y[0]; };
    rhs.jacobian = [](double, const double*, double* j) { j[0] = -1.0; };
    return rhs;
  }
  const double c1 = 40320.0 / std::tgamma(9 - a);
  const double c2 = 3.0 * std::tgamma(5 + a / 2) / std::tgamma(5 - a / 2);
  const double c3 = 2.25 * std::tgamma(a + 1);
  rhs.function = [=](double t, const double* y, double* f) {
    const double s = 1.5 * std::pow(t, a / 2) - std::pow(t, 4);
    f[0] = c1 * std::pow(t, 8 - a) - c2 * std::pow(t, 4 - a / 2) + c3 + s * s * s -
           std::pow(y[0], 1.5);
  };
  return rhs;
}

struct Errors {
  double at_end = 0.0;
  double max = 0.0;
};

Errors run(Problem p, double a, ff::FodeMethod method, std::int64_t n, int mu = 1) {
  ff::FodeProblem prob;
  prob.global_size = 1;
  prob.local_size = 1;
  prob.order = {a};
  prob.horizon = p == Problem::relaxation ? 1.0 : 0.8;
  prob.steps = n;
  prob.initial = {p == Problem::relaxation ? 1.0 : 0.0};
  if (a > 1) prob.initial_derivative = {0.0};
  ff::FodeOptions opt;
  opt.method = method;
  opt.corrector_iterations = mu;
  ff::FodeSolver solver(MPI_COMM_SELF, prob, rhs_of(p, a), opt);
  Errors e;
  solver.solve([&](const ff::FodeStepView& v) {
    const double err = std::fabs(v.y[0] - exact(p, a, v.time));
    e.max = std::max(e.max, err);
    if (v.step == n) e.at_end = err;
  });
  return e;
}

struct Case {
  Problem problem;
  double order;
  ff::FodeMethod method;
  int mu;
};

std::string name_of(const Case& c) {
  std::string s = c.problem == Problem::relaxation ? "relaxation" : "nonlinear";
  s += c.method == ff::FodeMethod::abm ? "_abm" : "_trapezoidal";
  if (c.mu > 1) s += "_mu" + std::to_string(c.mu);
  s += "_a" + std::to_string(static_cast<int>(std::lround(c.order * 10)));
  return s;
}

/// The orders stated in the header comment.
double order_at_end(const Case& c) {
  const double a = c.order;
  if (c.problem == Problem::relaxation) return std::min(2.0, 1.0 + a);
  if (c.method == ff::FodeMethod::trapezoidal) return 2.0;
  return std::min(2.0, 1.0 + c.mu * a);
}
double order_max(const Case& c) {
  if (c.problem == Problem::relaxation) return std::min(2.0, 2.0 * c.order);
  return order_at_end(c);
}

class FodeConvergence : public testing::TestWithParam<Case> {};

}  // namespace

TEST_P(FodeConvergence, ErrorAtEndAndMaximumErrorConvergeAtTheoreticalOrders) {
  const Case c = GetParam();
  const std::int64_t finest = c.problem == Problem::relaxation && c.order < 0.4 ? 65536 : 2048;
  const std::vector<std::int64_t> steps = {finest / 4, finest / 2, finest};
  std::vector<Errors> e;
  for (std::int64_t n : steps) e.push_back(run(c.problem, c.order, c.method, n, c.mu));
  for (std::size_t i = 1; i < e.size(); ++i) {
    std::printf("%-28s N=%5lld  e(T)=%.3e (order %.3f)  max=%.3e (order %.3f)\n",
                name_of(c).c_str(), static_cast<long long>(steps[i]), e[i].at_end,
                std::log2(e[i - 1].at_end / e[i].at_end), e[i].max,
                std::log2(e[i - 1].max / e[i].max));
  }
  const std::size_t k = e.size() - 1;
  EXPECT_NEAR(std::log2(e[k - 1].at_end / e[k].at_end), order_at_end(c), 0.15);
  EXPECT_NEAR(std::log2(e[k - 1].max / e[k].max), order_max(c), 0.15);
}

namespace {
std::vector<Case> cases() {
  std::vector<Case> v;
  for (Problem p : {Problem::nonlinear, Problem::relaxation}) {
    for (ff::FodeMethod m : {ff::FodeMethod::abm, ff::FodeMethod::trapezoidal}) {
      for (double a : {0.3, 0.5, 0.8, 1.5}) v.push_back({p, a, m, 1});
    }
  }
  v.push_back({Problem::nonlinear, 0.3, ff::FodeMethod::abm, 2});
  v.push_back({Problem::nonlinear, 0.5, ff::FodeMethod::abm, 3});
  return v;
}
}  // namespace

INSTANTIATE_TEST_SUITE_P(Orders, FodeConvergence, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& param) {
                           return name_of(param.param);
                         });
