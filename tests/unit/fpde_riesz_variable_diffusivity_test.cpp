// Space-fractional diffusion with a variable diffusivity u_t = -K(x, y) (-Laplace)^(s/2) u + f,
// K = diffusivity * profile(x, y) multiplying the Riesz operator row by row (frac::FpdeSolver,
// type space_fractional with a diffusivity_profile): second order in space (1D and 2D,
// Dirichlet) and in time (Crank-Nicolson; implicit Euler first order), also with a source of
// u (Newton); bounded Krylov counts of the profile-scaled circulant as h -> 0; a constant
// profile gives the constant-K solution.
//
// Exact solutions:
//  - Dirichlet: u = e^-t w(x) [w(y)], w = x^2 (1 - x)^2 continued by zero, the source
//    f = u_t + K(x, y) (-Laplace)^(s/2) u with the Riesz derivative of w in closed form
//    (Celik & Duman, J. Comput. Phys. 231 (2012) 1743, Example 1);
//  - periodic, for the time order: u = e^-t sin(2 pi x) with the discrete symbol
//    lambda_h = h^-s |2 sin(pi h)|^s in f = u_t + K(x) lambda_h u: the semi-discrete solution
//    is exact, so the error is the time scheme's alone.
#include <gtest/gtest.h>
#include <petscsys.h>
#include <petscvec.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/frac/fpde_solver.hpp"

namespace {

using namespace fracmfg;
using frac::FpdeSolver;
using Boundary = io::FpdeConfig::Domain::Boundary;

constexpr double kPi = 3.14159265358979323846;
constexpr double kK = 0.8;

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

io::FpdeConfig riesz_config(int dim, Boundary b, int points, int steps, double s) {
  io::FpdeConfig c;
  c.type = io::FpdeConfig::Type::space_fractional;
  c.order = s;
  c.domain.length.assign(static_cast<std::size_t>(dim), 1.0);
  c.domain.boundary = b;
  c.grid.points.assign(static_cast<std::size_t>(dim), points);
  c.time.horizon = 1.0;
  c.time.steps = steps;
  c.diffusivity = kK;
  c.initial = {"0", {"x", "y"}};
  c.source = {"0", {"x", "y", "t"}};
  c.boundary_value = {"0", {"x", "y", "t"}};
  return c;
}

/// -d^s w/d|x|^s for w = v^2 (1 - v)^2 in the variable v, as an expression.
std::string riesz_of_w(const std::string& v, double s) {
  auto rl = [&](const std::string& z) {
    return "(" + num(2.0 / std::tgamma(3 - s)) + "*(" + z + ")^" + num(2 - s) + "-" +
           num(12.0 / std::tgamma(4 - s)) + "*(" + z + ")^" + num(3 - s) + "+" +
           num(24.0 / std::tgamma(5 - s)) + "*(" + z + ")^" + num(4 - s) + ")";
  };
  return "(" + num(1.0 / (2.0 * std::cos(kPi * s / 2.0))) + "*(" + rl(v) + "+" + rl("1-" + v) +
         "))";
}

std::vector<double> orders(const std::vector<double>& e) {
  std::vector<double> p;
  for (std::size_t k = 0; k + 1 < e.size(); ++k) p.push_back(std::log2(e[k] / e[k + 1]));
  return p;
}

void print_table(const std::string& title, const std::vector<int>& n, const std::vector<double>& e,
                 const std::vector<int>& its) {
  std::printf("%s\n", title.c_str());
  for (std::size_t k = 0; k < e.size(); ++k) {
    std::printf("  %6d  error %.3e", n[k], e[k]);
    if (k > 0) std::printf("  order %.3f", std::log2(e[k - 1] / e[k]));
    std::printf("  CG iterations (last step) %d\n", its[k]);
  }
}

TEST(FpdeRieszVariableDiffusivity, ConvergesAtOrderTwoInSpaceAndTime1D) {
  // tau = h: the Crank-Nicolson error O(tau^2) and the space error O(h^2) shrink together.
  const std::string profile = "1+0.6*sin(pi*x)+0.3*x";
  for (double s : {1.4, 1.8}) {
    std::vector<int> points = {33, 65, 129, 257};
    std::vector<double> err;
    std::vector<int> its;
    for (int n : points) {
      auto c = riesz_config(1, Boundary::dirichlet, n, n - 1, s);
      c.diffusivity_profile = {profile, {"x", "y"}};
      c.initial = {"x^2*(1-x)^2", {"x", "y"}};
      c.source = {
          "exp(-t)*(-x^2*(1-x)^2 + " + num(kK) + "*(" + profile + ")*" + riesz_of_w("x", s) + ")",
          {"x", "y", "t"}};
      FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
      solver.run_until(c.time.steps);
      err.push_back(
          solver.error_against(core::Expression("exp(-t)*x^2*(1-x)^2", {"x", "y", "t"})).max);
      its.push_back(solver.statistics().last_linear_iterations);
    }
    char title[96];
    std::snprintf(title, sizeof title, "Riesz 1D dirichlet, K(x) = %g (%s), s = %.1f", kK,
                  profile.c_str(), s);
    print_table(title, points, err, its);
    for (double p : orders(err)) EXPECT_NEAR(p, 2.0, 0.15) << "s " << s;
    // The scaled circulant keeps the counts bounded: no growth as h halves.
    for (int k : its) EXPECT_LE(k, its.front() + 3) << "s " << s;
  }
}

TEST(FpdeRieszVariableDiffusivity, ConvergesAtOrderTwoInSpaceAndTime2D) {
  const double s = 1.6;
  const std::string profile = "1+0.5*x*y+0.4*cos(pi*y)";
  std::vector<int> points = {17, 33, 65};
  std::vector<double> err;
  std::vector<int> its;
  for (int n : points) {
    auto c = riesz_config(2, Boundary::dirichlet, n, n - 1, s);
    c.diffusivity_profile = {profile, {"x", "y"}};
    const std::string wx = "x^2*(1-x)^2";
    const std::string wy = "y^2*(1-y)^2";
    c.initial = {wx + "*" + wy, {"x", "y"}};
    c.source = {"exp(-t)*(-" + wx + "*" + wy + " + " + num(kK) + "*(" + profile + ")*(" +
                    riesz_of_w("x", s) + "*" + wy + " + " + wx + "*" + riesz_of_w("y", s) + "))",
                {"x", "y", "t"}};
    FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
    solver.run_until(c.time.steps);
    err.push_back(
        solver.error_against(core::Expression("exp(-t)*" + wx + "*" + wy, {"x", "y", "t"})).max);
    its.push_back(solver.statistics().last_linear_iterations);
  }
  print_table("Riesz 2D dirichlet, K(x, y) = 0.8 (" + profile + "), s = 1.6", points, err, its);
  for (double p : orders(err)) EXPECT_NEAR(p, 2.0, 0.15);
  for (int k : its) EXPECT_LE(k, its.front() + 3);
}

/// The periodic problem whose semi-discrete solution is u = e^-t sin(2 pi x) exactly; with
/// `nonlinear`, the source is u - u^3 + g(x, t) (Allen-Cahn, Newton per step).
io::FpdeConfig periodic_case(int steps, bool nonlinear) {
  const double s = 1.7;
  const int n = 32;
  const double h = 1.0 / n;
  const double lambda = std::pow(h, -s) * std::pow(2.0 * std::sin(kPi * h), s);
  const std::string profile = "1+0.7*cos(2*pi*x)";
  auto c = riesz_config(1, Boundary::periodic, n, steps, s);
  c.time.horizon = 0.5;
  c.diffusivity_profile = {profile, {"x", "y"}};
  c.initial = {"sin(2*pi*x)", {"x", "y"}};
  const std::string ue = "exp(-t)*sin(2*pi*x)";
  const std::string g = ue + "*(-1+" + num(kK * lambda) + "*(" + profile + "))";
  if (nonlinear) {
    c.source = {"u-u^3+" + g + "-(" + ue + ")+(" + ue + ")^3", {"x", "y", "t", "u"}};
    c.source_derivative = {"1-3*u^2", {"x", "y", "t", "u"}};
  } else {
    c.source = {g, {"x", "y", "t"}};
  }
  return c;
}

TEST(FpdeRieszVariableDiffusivity, CrankNicolsonIsSecondOrderAndEulerFirstOrderInTime) {
  for (bool nonlinear : {false, true}) {
    for (const char* scheme : {"crank_nicolson", "euler"}) {
      ASSERT_EQ(PetscOptionsSetValue(nullptr, "-vk_time_scheme", scheme), 0);
      std::vector<int> steps = {10, 20, 40, 80};
      std::vector<double> err;
      std::vector<int> its;
      for (int m : steps) {
        frac::FpdeSolverOptions o;
        o.prefix = "vk_";
        FpdeSolver solver(PETSC_COMM_WORLD,
                          frac::fpde_problem_from_config(periodic_case(m, nonlinear)), o);
        solver.run_until(m);
        err.push_back(
            solver.error_against(core::Expression("exp(-t)*sin(2*pi*x)", {"x", "y", "t"})).max);
        its.push_back(solver.statistics().last_linear_iterations);
      }
      print_table(std::string("Riesz periodic, K(x) = 0.8 (1+0.7*cos(2*pi*x)), ") + scheme +
                      (nonlinear ? ", source u - u^3 + g (Newton)" : ", source g"),
                  steps, err, its);
      const double expected = std::string(scheme) == "euler" ? 1.0 : 2.0;
      for (double p : orders(err)) EXPECT_NEAR(p, expected, 0.15) << scheme;
    }
  }
  ASSERT_EQ(PetscOptionsClearValue(nullptr, "-vk_time_scheme"), 0);
}

TEST(FpdeRieszVariableDiffusivity, AConstantProfileGivesTheConstantDiffusivitySolution) {
  for (Boundary b : {Boundary::dirichlet, Boundary::periodic}) {
    auto c = riesz_config(2, b, 24, 6, 1.5);
    c.initial = {"sin(2*pi*x)*cos(2*pi*y)+x*y", {"x", "y"}};
    c.source = {"x*(1-y)*cos(3*t)", {"x", "y", "t"}};
    c.boundary_value = {"0.1*t*x", {"x", "y", "t"}};
    auto scaled = c;
    scaled.diffusivity = 2.0 * kK;
    auto profiled = c;
    profiled.diffusivity_profile = {"2", {"x", "y"}};
    FpdeSolver constant(PETSC_COMM_WORLD, frac::fpde_problem_from_config(scaled));
    FpdeSolver with_profile(PETSC_COMM_WORLD, frac::fpde_problem_from_config(profiled));
    constant.run_until(6);
    with_profile.run_until(6);
    Vec d = nullptr;
    VecDuplicate(constant.solution(), &d);
    VecWAXPY(d, -1.0, constant.solution(), with_profile.solution());
    PetscReal diff = 0.0;
    PetscReal scale = 0.0;
    VecNorm(d, NORM_INFINITY, &diff);
    VecNorm(constant.solution(), NORM_INFINITY, &scale);
    VecDestroy(&d);
    std::printf("constant profile 2 vs diffusivity 2 K, boundary %d: max difference %.2e\n",
                static_cast<int>(b), static_cast<double>(diff));
    EXPECT_LE(diff, 1e-9 * scale) << "boundary " << static_cast<int>(b);
    EXPECT_GE(scale, 0.05);  // not a trivial solution
  }
}

}  // namespace
