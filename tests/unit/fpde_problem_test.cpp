// frac::FpdeProblem built in code: the data as C++ lambdas, no deck and no formula strings.
// The solution equals that of the same problem written as deck formulas
// (frac::fpde_problem_from_config) to round-off, and its error against the exact solution
// (FpdeProblem::exact, error_against()) is the scheme's:
//  - time: u = (1 + t^2) sin(pi x), the source built on the discrete eigenvalue of the
//    3-point Laplacian, so the semi-discrete solution is exact and the error is the L1
//    scheme's, of order 2 - a in time;
//  - space, with non-zero Dirichlet data and a source depending on u (Newton):
//    u = (1 + t) exp(x), linear in time (the L1 scheme is exact there), error of order 2 in
//    space;
//  - space_fractional, periodic: u = exp(-lambda_h t) sin(2 pi x) with the discrete symbol
//    lambda_h = h^-s |2 sin(pi h)|^s, Crank-Nicolson's second order in time.
#include "fracmfg/frac/fpde_problem.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <petscvec.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/fpde_solver.hpp"

namespace {

using namespace fracmfg;
using frac::FpdeProblem;
using frac::FpdeSolver;

constexpr double kPi = 3.14159265358979323846;

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// 4/h^2 sin^2(pi h / 2): the eigenvalue of -Laplace_h for sin(pi x) on [0, 1].
double discrete_eigenvalue(int points) {
  const double h = 1.0 / (points - 1);
  const double s = std::sin(kPi * h / 2.0);
  return 4.0 / (h * h) * s * s;
}

/// max_p |a_p - b_p| over all ranks, relative to max_p |a_p|.
double relative_difference(const FpdeSolver& a, const FpdeSolver& b) {
  const double* ua = nullptr;
  const double* ub = nullptr;
  VecGetArrayRead(a.solution(), &ua);
  VecGetArrayRead(b.solution(), &ub);
  double local[2] = {0.0, 0.0};
  for (std::size_t p = 0; p < a.grid().local_size(); ++p) {
    local[0] = std::max(local[0], std::fabs(ua[p] - ub[p]));
    local[1] = std::max(local[1], std::fabs(ua[p]));
  }
  VecRestoreArrayRead(a.solution(), &ua);
  VecRestoreArrayRead(b.solution(), &ub);
  double global[2] = {0.0, 0.0};
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return global[0] / global[1];
}

std::vector<double> orders(const std::vector<double>& e) {
  std::vector<double> p;
  for (std::size_t k = 0; k + 1 < e.size(); ++k) p.push_back(std::log2(e[k] / e[k + 1]));
  return p;
}

void print_table(const char* title, const std::vector<int>& n, const std::vector<double>& e) {
  std::printf("%s\n", title);
  for (std::size_t k = 0; k < e.size(); ++k) {
    std::printf("  %6d  error %.3e", n[k], e[k]);
    if (k > 0) std::printf("  order %.3f", std::log2(e[k - 1] / e[k]));
    std::printf("\n");
  }
}

TEST(FpdeProblem, LambdasGiveTheFormulasSolutionAndTheL1ErrorInTime) {
  const double alpha = 0.5;
  const int points = 33;
  const double lambda = discrete_eigenvalue(points);
  const double g3 = std::tgamma(3.0 - alpha);
  FpdeProblem p;
  p.order = alpha;
  p.grid.points = {points};
  p.history.method = FpdeProblem::History::Method::direct;
  p.initial = [](double x, double, double) { return std::sin(kPi * x); };
  p.source = [=](double x, double, double t) {
    return std::sin(kPi * x) * (2.0 * std::pow(t, 2.0 - alpha) / g3 + lambda * (1.0 + t * t));
  };
  p.exact = [](double x, double, double t) { return (1.0 + t * t) * std::sin(kPi * x); };

  // The same problem as deck formulas.
  io::FpdeConfig c;
  c.order = alpha;
  c.grid.points = {points};
  c.history.method = io::FpdeConfig::History::Method::direct;
  c.initial = {"sin(pi*x)", {"x", "y"}};
  c.source = {
      "sin(pi*x)*(2*t^(" + num(2.0 - alpha) + ")/" + num(g3) + "+" + num(lambda) + "*(1+t^2))",
      {"x", "y", "t"}};

  std::vector<int> steps = {20, 40, 80};
  std::vector<double> err;
  for (int n : steps) {
    p.time.steps = n;
    c.time.steps = n;
    FpdeSolver from_code(PETSC_COMM_WORLD, p);
    FpdeSolver from_formulas(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
    from_code.run_until(n);
    from_formulas.run_until(n);
    const frac::FpdeErrorNorms e = from_code.error_against();
    const frac::FpdeErrorNorms e_formulas = from_formulas.error_against(p.exact);
    EXPECT_LE(relative_difference(from_code, from_formulas), 1e-13) << n << " steps";
    EXPECT_NEAR(e.max, e_formulas.max, 1e-12 * e.max) << n << " steps";
    EXPECT_NEAR(e.l2, e_formulas.l2, 1e-12 * e.l2) << n << " steps";
    err.push_back(e.max);
  }
  print_table("lambdas, 1D time, alpha 0.5", steps, err);
  for (double q : orders(err)) EXPECT_NEAR(q, 2.0 - alpha, 0.15);
  // The level: this problem's L1 error constant, measured (4.8e-4 at N = 20).
  EXPECT_LT(err.front(), 6e-4);
}

TEST(FpdeProblem, LambdasWithDirichletDataAndANonlinearSourceConvergeAtOrderTwoInSpace) {
  // D^a u = u_xx + f(x, t, u), f = D^a u* - u*_xx + u*^3 - u^3, u* = (1 + t) exp(x).
  const double alpha = 0.6;
  const double g2 = std::tgamma(2.0 - alpha);
  auto exact = [](double x, double, double t) { return (1.0 + t) * std::exp(x); };
  std::vector<int> points = {11, 21, 41};
  std::vector<double> err;
  for (int n : points) {
    FpdeProblem p;
    p.order = alpha;
    p.grid.points = {n};
    p.time.steps = 4;
    p.initial = exact;
    p.boundary_value = exact;
    p.exact = exact;
    p.nonlinear_source = [=](double x, double y, double t, double u) {
      const double star = exact(x, y, t);
      return std::exp(x) * (std::pow(t, 1.0 - alpha) / g2 - (1.0 + t)) + star * star * star -
             u * u * u;
    };
    io::FpdeConfig c;
    c.order = alpha;
    c.grid.points = {n};
    c.time.steps = 4;
    c.initial = {"exp(x)", {"x", "y"}};
    c.boundary_value = {"(1+t)*exp(x)", {"x", "y", "t"}};
    c.source = {"exp(x)*(t^(" + num(1.0 - alpha) + ")/" + num(g2) + "-(1+t))+((1+t)*exp(x))^3-u^3",
                {"x", "y", "t", "u"}};
    FpdeSolver from_code(PETSC_COMM_WORLD, p);
    FpdeSolver from_formulas(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
    ASSERT_TRUE(from_formulas.problem().nonlinear());
    from_code.run_until(4);
    from_formulas.run_until(4);
    EXPECT_GE(from_code.statistics().nonlinear_iterations, 4);
    // Newton stops at rtol 1e-10; both runs take the same iterations.
    EXPECT_LE(relative_difference(from_code, from_formulas), 1e-12) << n << " points";
    err.push_back(from_code.error_against().max);
  }
  print_table("lambdas, 1D space, dirichlet data, nonlinear source", points, err);
  for (double q : orders(err)) EXPECT_NEAR(q, 2.0, 0.15);
}

TEST(FpdeProblem, LambdasForRieszDiffusionGiveCrankNicolsonsError) {
  const double s = 1.7;
  const int n = 32;
  const double h = 1.0 / n;
  const double lambda = std::pow(h, -s) * std::pow(2.0 * std::sin(kPi * h), s);
  FpdeProblem p;
  p.type = FpdeProblem::Type::space_fractional;
  p.order = s;
  p.domain.boundary = FpdeProblem::Boundary::periodic;
  p.grid.points = {n};
  p.time.horizon = 0.02;
  p.initial = [](double x, double, double) { return std::sin(2.0 * kPi * x); };
  p.source_depends_on_time = false;  // no source
  p.exact = [=](double x, double, double t) {
    return std::exp(-lambda * t) * std::sin(2.0 * kPi * x);
  };
  io::FpdeConfig c;
  c.type = io::FpdeConfig::Type::space_fractional;
  c.order = s;
  c.domain.boundary = io::FpdeConfig::Domain::Boundary::periodic;
  c.grid.points = {n};
  c.time.horizon = 0.02;
  c.initial = {"sin(2*pi*x)", {"x", "y"}};
  std::vector<int> steps = {10, 20, 40};
  std::vector<double> err;
  for (int m : steps) {
    p.time.steps = m;
    c.time.steps = m;
    FpdeSolver from_code(PETSC_COMM_WORLD, p);
    FpdeSolver from_formulas(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
    from_code.run_until(m);
    from_formulas.run_until(m);
    EXPECT_LE(relative_difference(from_code, from_formulas), 1e-13) << m << " steps";
    err.push_back(from_code.error_against().max);
  }
  print_table("lambdas, Riesz 1D periodic, Crank-Nicolson", steps, err);
  for (double q : orders(err)) EXPECT_NEAR(q, 2.0, 0.15);
}

TEST(FpdeProblem, EmptyFunctionsAreZeroAndMissingOrDoubleDataIsRefused) {
  FpdeProblem p;
  p.grid.points = {11};
  p.time.steps = 3;
  {
    FpdeSolver s(PETSC_COMM_WORLD, p);  // u = 0, f = 0, g = 0: u stays 0
    s.run_until(3);
    EXPECT_EQ(s.error_against([](double, double, double) { return 0.0; }).max, 0.0);
    EXPECT_THROW(s.error_against(), Error);  // no exact solution
  }
  p.source = [](double, double, double) { return 1.0; };
  p.nonlinear_source = [](double, double, double, double u) { return u; };
  EXPECT_THROW(FpdeSolver(PETSC_COMM_WORLD, p), Error);
}

TEST(FpdeProblem, DeckFormulasBecomeCallables) {
  io::FpdeConfig c;
  c.initial = {"x+2*y", {"x", "y"}};
  c.source = {"x*t", {"x", "y", "t"}};
  c.boundary_value = {"y-t", {"x", "y", "t"}};
  FpdeProblem p = frac::fpde_problem_from_config(c);
  EXPECT_EQ(p.initial(1.0, 2.0, 7.0), 5.0);
  EXPECT_EQ(p.source(3.0, 0.0, 2.0), 6.0);
  EXPECT_TRUE(p.source_depends_on_time);
  EXPECT_FALSE(p.nonlinear());
  EXPECT_EQ(p.boundary_value(0.0, 1.0, 0.25), 0.75);
  EXPECT_FALSE(p.exact);
  c.source = {"x", {"x", "y", "t"}};
  EXPECT_FALSE(frac::fpde_problem_from_config(c).source_depends_on_time);
  c.source = {"x-u", {"x", "y", "t", "u"}};
  const FpdeProblem q = frac::fpde_problem_from_config(c);
  ASSERT_TRUE(q.nonlinear());
  EXPECT_FALSE(q.source);
  EXPECT_EQ(q.nonlinear_source(3.0, 0.0, 0.0, 1.0), 2.0);
  const FpdeProblem copy = q;  // a copy owns its own compiled formulas
  EXPECT_EQ(copy.nonlinear_source(3.0, 0.0, 0.0, 1.0), 2.0);
  c.initial = {"z", {"x", "y", "z"}};
  EXPECT_THROW(frac::fpde_problem_from_config(c), Error);
}

}  // namespace
