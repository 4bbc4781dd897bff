// Space-fractional (Riesz) diffusion u_t = -K (-Laplace)^(s/2) u + f (frac::FpdeSolver, type
// space_fractional): second order in space against exact solutions (1D and 2D, Dirichlet and
// periodic), the time schemes' orders (Crank-Nicolson 2, implicit Euler 1), bounded Krylov
// iterations with the circulant preconditioner, and the settings it refuses.
//
// Exact solutions:
//  - Dirichlet: u = e^-t w(x) [w(y)], w = x^2 (1 - x)^2 continued by zero (Celik & Duman,
//    J. Comput. Phys. 231 (2012) 1743-1750, Example 1), source from
//    d^s w / d|x|^s = -1/(2 cos(pi s/2)) (D_{0+}^s w + D_{1-}^s w) and
//    D_{0+}^s x^p = Gamma(p+1)/Gamma(p+1-s) x^(p-s);
//  - periodic: u = exp(-K (2 pi)^s t) sin(2 pi x), f = 0 ((-Laplace)^(s/2) sin(2 pi x) =
//    (2 pi)^s sin(2 pi x) on the torus).
#include <gtest/gtest.h>
#include <petscsys.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/frac/fpde_solver.hpp"

namespace {

using namespace fracmfg;
using frac::FpdeSolver;
using Boundary = io::FpdeConfig::Domain::Boundary;

constexpr double kPi = 3.14159265358979323846;

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
  c.diffusivity = 1.0;
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
  // -(d^s/d|x|^s) w = 1/(2 cos(pi s/2)) (D+ w + D- w).
  return "(" + num(1.0 / (2.0 * std::cos(kPi * s / 2.0))) + "*(" + rl(v) + "+" + rl("1-" + v) +
         "))";
}

std::vector<double> orders(const std::vector<double>& e) {
  std::vector<double> p;
  for (std::size_t k = 0; k + 1 < e.size(); ++k) p.push_back(std::log2(e[k] / e[k + 1]));
  return p;
}

void print_table(const std::string& title, const std::vector<int>& n,
                 const std::vector<double>& e) {
  std::printf("%s\n", title.c_str());
  for (std::size_t k = 0; k < e.size(); ++k) {
    std::printf("  %6d  error %.3e", n[k], e[k]);
    if (k > 0) std::printf("  order %.3f", std::log2(e[k - 1] / e[k]));
    std::printf("\n");
  }
}

TEST(FpdeSpaceFractional, ConvergesAtOrderTwoInSpace1D) {
  for (double s : {1.4, 1.8}) {
    std::vector<int> points = {33, 65, 129, 257};
    std::vector<double> err;
    for (int n : points) {
      // Crank-Nicolson with tau = h: both errors O(h^2).
      auto c = riesz_config(1, Boundary::dirichlet, n, n - 1, s);
      c.initial = {"x^2*(1-x)^2", {"x", "y"}};
      // f = u_t + K (-Laplace)^(s/2) u = e^-t (-w + (-d^s/d|x|^s) w).
      c.source = {"exp(-t)*(-x^2*(1-x)^2 + " + riesz_of_w("x", s) + ")", {"x", "y", "t"}};
      FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
      solver.run_until(c.time.steps);
      err.push_back(
          solver.error_against(core::Expression("exp(-t)*x^2*(1-x)^2", {"x", "y", "t"})).max);
      EXPECT_LE(solver.statistics().last_linear_iterations, 15);
    }
    char title[64];
    std::snprintf(title, sizeof title, "Riesz 1D dirichlet, s = %.1f", s);
    print_table(title, points, err);
    for (double p : orders(err)) EXPECT_NEAR(p, 2.0, 0.15) << "s " << s;
  }
}

TEST(FpdeSpaceFractional, ConvergesAtOrderTwoInSpace2D) {
  const double s = 1.6;
  std::vector<int> points = {17, 33, 65};
  std::vector<double> err;
  for (int n : points) {
    auto c = riesz_config(2, Boundary::dirichlet, n, n - 1, s);
    const std::string wx = "x^2*(1-x)^2";
    const std::string wy = "y^2*(1-y)^2";
    c.initial = {wx + "*" + wy, {"x", "y"}};
    c.source = {"exp(-t)*(-" + wx + "*" + wy + " + " + riesz_of_w("x", s) + "*" + wy + " + " + wx +
                    "*" + riesz_of_w("y", s) + ")",
                {"x", "y", "t"}};
    FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
    solver.run_until(c.time.steps);
    err.push_back(
        solver.error_against(core::Expression("exp(-t)*" + wx + "*" + wy, {"x", "y", "t"})).max);
  }
  print_table("Riesz 2D dirichlet, s = 1.6", points, err);
  for (double p : orders(err)) EXPECT_NEAR(p, 2.0, 0.15);
}

TEST(FpdeSpaceFractional, ConvergesAtOrderTwoInSpacePeriodic) {
  const double s = 1.5;
  const double rate = std::pow(2.0 * kPi, s);
  std::vector<int> points = {16, 32, 64, 128};
  std::vector<double> err;
  for (int n : points) {
    auto c = riesz_config(1, Boundary::periodic, n, 400, s);
    c.time.horizon = 0.05;
    c.initial = {"sin(2*pi*x)", {"x", "y"}};
    FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
    solver.run_until(c.time.steps);
    EXPECT_EQ(solver.statistics().last_linear_iterations, 1);  // the circulant is exact
    err.push_back(solver
                      .error_against(core::Expression("exp(-" + num(rate) + "*t)*sin(2*pi*x)",
                                                      {"x", "y", "t"}))
                      .max);
  }
  print_table("Riesz 1D periodic, s = 1.5", points, err);
  for (double p : orders(err)) EXPECT_NEAR(p, 2.0, 0.15);
}

TEST(FpdeSpaceFractional, CrankNicolsonIsSecondOrderAndEulerFirstOrderInTime) {
  // Periodic grid, u = exp(-lambda_h t) sin(2 pi x) with the discrete symbol lambda_h =
  // h^-s |2 sin(pi h)|^s: the semi-discrete solution is exact, the error is the time error.
  const double s = 1.7;
  const int n = 32;
  const double h = 1.0 / n;
  const double lambda = std::pow(h, -s) * std::pow(2.0 * std::sin(kPi * h), s);
  for (const char* scheme : {"crank_nicolson", "euler"}) {
    ASSERT_EQ(PetscOptionsSetValue(nullptr, "-ts_time_scheme", scheme), 0);
    std::vector<int> steps = {10, 20, 40, 80};
    std::vector<double> err;
    for (int m : steps) {
      auto c = riesz_config(1, Boundary::periodic, n, m, s);
      c.time.horizon = 0.02;
      c.initial = {"sin(2*pi*x)", {"x", "y"}};
      frac::FpdeSolverOptions o;
      o.prefix = "ts_";
      FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c), o);
      solver.run_until(m);
      err.push_back(solver
                        .error_against(core::Expression("exp(-" + num(lambda) + "*t)*sin(2*pi*x)",
                                                        {"x", "y", "t"}))
                        .max);
    }
    print_table(std::string("Riesz time scheme ") + scheme, steps, err);
    const double expected = std::string(scheme) == "euler" ? 1.0 : 2.0;
    for (double p : orders(err)) EXPECT_NEAR(p, expected, 0.15) << scheme;
  }
  ASSERT_EQ(PetscOptionsClearValue(nullptr, "-ts_time_scheme"), 0);
}

TEST(FpdeSpaceFractional, NonZeroDirichletDataIsContinuedOutsideTheDomain) {
  // u = 1 everywhere (inside and, through the constant extension, outside) is a steady
  // solution: (-Laplace)^(s/2) 1 = 0.
  auto c = riesz_config(2, Boundary::dirichlet, 21, 10, 1.5);
  c.initial = {"1", {"x", "y"}};
  c.boundary_value = {"1", {"x", "y", "t"}};
  FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
  solver.run_until(10);
  EXPECT_LE(solver.error_against(core::Expression("1", {"x", "y", "t"})).max, 1e-9);
}

TEST(FpdeSpaceFractional, OtherPreconditionersFromTheOptionsGiveTheSameSolution) {
  // Graded steps change the matrix every step; Jacobi reads the shell's diagonal, none is
  // plain CG. All agree with the circulant-preconditioned run to the Krylov tolerance.
  auto c = riesz_config(1, Boundary::dirichlet, 129, 12, 1.5);
  c.time.grading = 2.0;
  c.initial = {"sin(pi*x)", {"x", "y"}};
  c.source = {"x*(1-x)*cos(3*t)", {"x", "y", "t"}};
  FpdeSolver reference(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
  reference.run_until(12);
  for (const char* pc : {"jacobi", "none"}) {
    ASSERT_EQ(PetscOptionsSetValue(nullptr, "-alt_pc_type", pc), 0);
    ASSERT_EQ(PetscOptionsSetValue(nullptr, "-alt_ksp_rtol", "1e-12"), 0);
    frac::FpdeSolverOptions o;
    o.prefix = "alt_";
    FpdeSolver other(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c), o);
    ASSERT_EQ(PetscOptionsClearValue(nullptr, "-alt_pc_type"), 0);
    ASSERT_EQ(PetscOptionsClearValue(nullptr, "-alt_ksp_rtol"), 0);
    other.run_until(12);
    EXPECT_GT(other.statistics().linear_iterations, reference.statistics().linear_iterations);
    Vec d = nullptr;
    VecDuplicate(reference.solution(), &d);
    VecWAXPY(d, -1.0, reference.solution(), other.solution());
    PetscReal diff = 0.0;
    VecNorm(d, NORM_INFINITY, &diff);
    VecDestroy(&d);
    EXPECT_LE(diff, 1e-8) << pc;
  }
}

TEST(FpdeSpaceFractional, UnsupportedSettingsAreRefused) {
  auto c = riesz_config(1, Boundary::neumann, 21, 4, 1.5);
  EXPECT_THROW(FpdeSolver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c)), Error);
  c.domain.boundary = Boundary::dirichlet;
  ASSERT_EQ(PetscOptionsSetValue(nullptr, "-bad_time_scheme", "leapfrog"), 0);
  frac::FpdeSolverOptions o;
  o.prefix = "bad_";
  EXPECT_THROW(FpdeSolver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c), o), Error);
  ASSERT_EQ(PetscOptionsClearValue(nullptr, "-bad_time_scheme"), 0);
}

}  // namespace
