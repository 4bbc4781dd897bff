// Time-fractional diffusion with a variable diffusivity D_t^a u = div(K grad u) + f,
// K(x, y) = diffusivity * profile(x, y) (frac::FpdeSolver, type time_fractional): second
// order in space against exact solutions (1D and 2D, Dirichlet, Neumann and periodic), a
// symmetric operator and the same solution as the constant-K code for a constant profile
// (space_fractional with a profile: fpde_riesz_variable_diffusivity_test.cpp).
//
// Exact solutions are linear in time, u = (1 + t) g, where the L1 scheme is exact, so only
// the spatial error (the 5-point operator with K at the half points) is measured.
#include <gtest/gtest.h>
#include <petscmat.h>
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
using HistoryMethod = io::FpdeConfig::History::Method;

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

constexpr double kAlpha = 0.6;
constexpr double kK = 0.7;

io::FpdeConfig config(int dim, Boundary b, int points) {
  io::FpdeConfig c;
  c.type = io::FpdeConfig::Type::time_fractional;
  c.order = kAlpha;
  c.domain.length.assign(static_cast<std::size_t>(dim), 1.0);
  c.domain.boundary = b;
  c.grid.points.assign(static_cast<std::size_t>(dim), points);
  c.time.horizon = 1.0;
  c.time.steps = 4;
  c.diffusivity = kK;
  c.history.method = HistoryMethod::direct;
  return c;
}

std::vector<double> orders(const std::vector<double>& e) {
  std::vector<double> p;
  for (std::size_t k = 0; k + 1 < e.size(); ++k) p.push_back(std::log2(e[k] / e[k + 1]));
  return p;
}

struct Case {
  const char* name;
  int dim;
  Boundary boundary;
  std::string profile, exact_g, initial, source, boundary_value;
};

TEST(FpdeVariableDiffusivity, ConvergesAtOrderTwoInSpace) {
  // f = D^a u - div(K grad u) with u = (1 + t) g: D^a u = t^(1-a)/Gamma(2-a) g.
  const std::string dt = "t^(" + num(1 - kAlpha) + ")/" + num(std::tgamma(2 - kAlpha));
  const std::string k = num(kK);
  const std::vector<Case> cases = {
      // k = 1 + x/2, g = sin(pi x): (k g')' = pi/2 cos(pi x) - (1 + x/2) pi^2 sin(pi x).
      {"1D dirichlet", 1, Boundary::dirichlet, "1 + x/2", "sin(pi*x)", "sin(pi*x)",
       dt + "*sin(pi*x) - " + k + "*(1+t)*(pi/2*cos(pi*x) - (1+x/2)*pi^2*sin(pi*x))", "0"},
      // k = 2 + sin(3 x), g = cos(pi x) (zero flux): (k g')' = -3 cos(3x) pi sin(pi x)
      //   - (2 + sin(3x)) pi^2 cos(pi x).
      {"1D neumann", 1, Boundary::neumann, "2 + sin(3*x)", "cos(pi*x)", "cos(pi*x)",
       dt + "*cos(pi*x) + " + k + "*(1+t)*(3*cos(3*x)*pi*sin(pi*x) + (2+sin(3*x))*pi^2*cos(pi*x))",
       "0"},
      // Periodic: k = 1.5 + cos(2 pi x), g = sin(2 pi x): (k g')' = -2 pi sin(2 pi x) 2 pi
      //   cos(2 pi x) - (1.5 + cos(2 pi x)) 4 pi^2 sin(2 pi x).
      {"1D periodic", 1, Boundary::periodic, "1.5 + cos(2*pi*x)", "sin(2*pi*x)", "sin(2*pi*x)",
       dt + "*sin(2*pi*x) + " + k +
           "*(1+t)*(4*pi^2*sin(2*pi*x)*cos(2*pi*x) + (1.5+cos(2*pi*x))*4*pi^2*sin(2*pi*x))",
       "0"},
      // 2D Dirichlet: k = 1 + x y, g = sin(pi x) sin(pi y): div(k grad g) = y pi cos(pi x)
      //   sin(pi y) + x pi sin(pi x) cos(pi y) - 2 pi^2 (1 + x y) g.
      {"2D dirichlet", 2, Boundary::dirichlet, "1 + x*y", "sin(pi*x)*sin(pi*y)",
       "sin(pi*x)*sin(pi*y)",
       dt + "*sin(pi*x)*sin(pi*y) - " + k +
           "*(1+t)*(y*pi*cos(pi*x)*sin(pi*y) + x*pi*sin(pi*x)*cos(pi*y) - "
           "2*pi^2*(1+x*y)*sin(pi*x)*sin(pi*y))",
       "0"},
  };
  for (const Case& c : cases) {
    const std::vector<int> points =
        c.dim == 1 ? std::vector<int>{11, 21, 41, 81} : std::vector<int>{9, 17, 33};
    std::vector<double> err;
    for (int n : points) {
      auto cfg = config(c.dim, c.boundary, c.boundary == Boundary::periodic ? n - 1 : n);
      cfg.diffusivity_profile = {c.profile, {"x", "y"}};
      cfg.initial = {c.initial, {"x", "y"}};
      cfg.source = {c.source, {"x", "y", "t", "u"}};
      cfg.boundary_value = {c.boundary_value, {"x", "y", "t"}};
      FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(cfg));
      solver.run_until(cfg.time.steps);
      err.push_back(
          solver.error_against(core::Expression("(1+t)*" + c.exact_g, {"x", "y", "t"})).max);
    }
    std::printf("variable K, %s\n", c.name);
    for (std::size_t i = 0; i < err.size(); ++i) {
      std::printf("  %4d  error %.3e", points[i], err[i]);
      if (i > 0) std::printf("  order %.3f", std::log2(err[i - 1] / err[i]));
      std::printf("\n");
    }
    for (double p : orders(err)) EXPECT_NEAR(p, 2.0, 0.15) << c.name;
  }
}

TEST(FpdeVariableDiffusivity, OperatorIsSymmetric) {
  for (Boundary b : {Boundary::dirichlet, Boundary::neumann, Boundary::periodic}) {
    auto cfg = config(2, b, 9);
    cfg.diffusivity_profile = {"1 + x*y + 0.3*sin(5*x)", {"x", "y"}};
    cfg.initial = {"x*y", {"x", "y"}};
    FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(cfg));
    solver.run_until(1);
    Mat a = nullptr;
    ASSERT_EQ(KSPGetOperators(solver.ksp(), &a, nullptr), 0);
    Mat t = nullptr;
    ASSERT_EQ(MatTranspose(a, MAT_INITIAL_MATRIX, &t), 0);
    ASSERT_EQ(MatAXPY(t, -1.0, a, DIFFERENT_NONZERO_PATTERN), 0);
    PetscReal diff = 1.0;
    PetscReal norm = 0.0;
    ASSERT_EQ(MatNorm(t, NORM_FROBENIUS, &diff), 0);
    ASSERT_EQ(MatNorm(a, NORM_FROBENIUS, &norm), 0);
    EXPECT_LE(diff, 1e-14 * norm) << "boundary " << static_cast<int>(b);
    MatDestroy(&t);
  }
}

TEST(FpdeVariableDiffusivity, ConstantProfileGivesTheConstantDiffusivitySolution) {
  // K = diffusivity * 1: the same matrix entries (k / h^2 and their sums) up to the order of
  // the additions in the diagonal, so the solutions agree to round-off.
  for (Boundary b : {Boundary::dirichlet, Boundary::neumann, Boundary::periodic}) {
    auto cfg = config(2, b, 13);
    cfg.initial = {"exp(-20*((x-0.4)^2+(y-0.6)^2))", {"x", "y"}};
    cfg.source = {"x*(1-y)*cos(t)", {"x", "y", "t", "u"}};
    FpdeSolver constant(PETSC_COMM_WORLD, frac::fpde_problem_from_config(cfg));
    cfg.diffusivity_profile = {"1", {"x", "y"}};
    FpdeSolver profiled(PETSC_COMM_WORLD, frac::fpde_problem_from_config(cfg));
    constant.run_until(4);
    profiled.run_until(4);
    const double* a = nullptr;
    const double* c = nullptr;
    PetscInt n = 0;
    VecGetLocalSize(constant.solution(), &n);
    VecGetArrayRead(constant.solution(), &a);
    VecGetArrayRead(profiled.solution(), &c);
    double diff = 0.0;
    for (PetscInt p = 0; p < n; ++p) diff = std::max(diff, std::fabs(a[p] - c[p]));
    VecRestoreArrayRead(constant.solution(), &a);
    VecRestoreArrayRead(profiled.solution(), &c);
    EXPECT_LE(diff, 1e-9) << "boundary " << static_cast<int>(b);
  }
}

}  // namespace
