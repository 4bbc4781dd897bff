// The finite-difference building blocks of the MFG solver: the HJB Jacobian is the exact
// derivative of the HJB residual, the Fokker-Planck matrix is its transpose, mass is
// conserved to round-off at every time level and the density stays >= 0, in 1D and 2D,
// periodic and reflecting.
#include <gtest/gtest.h>
#include <petscmat.h>

#include <cmath>
#include <string>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/fokker_planck.hpp"
#include "fracmfg/mfg/hjb.hpp"
#include "fracmfg/mfg/model.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/petsc_handles.hpp"

namespace {

using fracmfg::io::Deck;
using fracmfg::io::MfgConfig;
namespace mfg = fracmfg::mfg;
namespace detail = fracmfg::mfg::detail;

fracmfg::core::Logger quiet() {
  return fracmfg::core::Logger(0, fracmfg::core::LogLevel::warn, false);
}

MfgConfig config_1d(const std::string& boundary, int points, int steps) {
  return Deck::from_string(
             "problem: mfg\n"
             "mfg:\n"
             "  domain: {length: [1.0], boundary: " +
             boundary + "}\n  grid: {points: [" + std::to_string(points) +
             "]}\n  time: {horizon: 0.5, steps: " + std::to_string(steps) +
             "}\n"
             "  diffusion: 0.05\n"
             "  hamiltonian: {control_cost: \"1 + 0.3*sin(2*pi*x)\"}\n"
             "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
             "  initial_density: \"exp(-(x-0.3)^2/0.005)\"\n"
             "  terminal_cost: \"0.2*x*(1-x)\"\n"
             "  iteration: {damping: 0.5, tolerance: 1.0e-9, max_iterations: 100}\n")
      .mfg();
}

MfgConfig config_2d(const std::string& boundary, int points, int steps) {
  return Deck::from_string(
             "problem: mfg\n"
             "mfg:\n"
             "  domain: {length: [1.0, 1.5], boundary: " +
             boundary + "}\n  grid: {points: [" + std::to_string(points) + ", " +
             std::to_string(points + 3) +
             "]}\n  time: {horizon: 0.5, steps: " + std::to_string(steps) +
             "}\n"
             "  diffusion: 0.02\n"
             "  coupling: {type: power, exponent: 2, potential: \"cos(2*pi*x)*sin(pi*y)\"}\n"
             "  initial_density: \"exp(-((x-0.3)^2+(y-0.8)^2)/0.02)\"\n"
             "  terminal_cost: \"(x-0.7)^2 + 0.5*(y-0.5)^2\"\n"
             "  iteration: {damping: 0.5, tolerance: 1.0e-8, max_iterations: 100}\n")
      .mfg();
}

// A smooth field with kinks in sign of its differences, at the owned points.
void fill_test_field(const mfg::Model& model, Vec u, double phase) {
  detail::WriteArray a(u);
  const auto& x = model.x();
  const auto& y = model.y();
  for (std::size_t k = 0; k < x.size(); ++k) {
    a[static_cast<PetscInt>(k)] = std::sin(2 * M_PI * x[k] + phase) + 0.5 * std::cos(3 * y[k]);
  }
}

// Dense copy of a (small, one-rank) matrix.
std::vector<double> dense(Mat a, PetscInt n) {
  std::vector<double> d(static_cast<std::size_t>(n * n), 0.0);
  for (PetscInt i = 0; i < n; ++i) {
    PetscInt ncols = 0;
    const PetscInt* cols = nullptr;
    const PetscScalar* vals = nullptr;
    MatGetRow(a, i, &ncols, &cols, &vals);
    for (PetscInt c = 0; c < ncols; ++c) d[static_cast<std::size_t>(i * n + cols[c])] = vals[c];
    MatRestoreRow(a, i, &ncols, &cols, &vals);
  }
  return d;
}

class FdmBlocks : public ::testing::TestWithParam<std::tuple<int, std::string>> {
 protected:
  MfgConfig config() const {
    const auto [dim, boundary] = GetParam();
    return dim == 1 ? config_1d(boundary, 12, 10) : config_2d(boundary, 7, 10);
  }
};

TEST_P(FdmBlocks, HjbJacobianIsTheDerivativeOfTheResidual) {
  const mfg::Model model(PETSC_COMM_WORLD, config());
  mfg::HjbSolver hjb(model);
  auto u = detail::global_vec(model.dm());
  auto u_next = detail::global_vec(model.dm());
  auto rhs = detail::global_vec(model.dm());
  fill_test_field(model, u.get(), 0.3);
  fill_test_field(model, u_next.get(), 1.1);
  VecSet(rhs.get(), 0.7);
  const PetscInt n = model.grid().size();
  const std::vector<double> jac = dense(hjb.jacobian(u.get()), n);
  auto r0 = detail::global_vec(model.dm());
  auto r1 = detail::global_vec(model.dm());
  auto r2 = detail::global_vec(model.dm());
  hjb.residual(u_next.get(), rhs.get(), u.get(), r0.get());
  // Central differences are exact for the quadratic pieces; the test field has no kink
  // within eps of a sign change of D+u or D-u.
  const double eps = 1e-7;
  double worst = 0.0;
  for (PetscInt j = 0; j < n; ++j) {
    auto up = detail::copy_vec(u.get());
    auto um = detail::copy_vec(u.get());
    VecSetValue(up.get(), j, eps, ADD_VALUES);
    VecAssemblyBegin(up.get());
    VecAssemblyEnd(up.get());
    VecSetValue(um.get(), j, -eps, ADD_VALUES);
    VecAssemblyBegin(um.get());
    VecAssemblyEnd(um.get());
    hjb.residual(u_next.get(), rhs.get(), up.get(), r1.get());
    hjb.residual(u_next.get(), rhs.get(), um.get(), r2.get());
    detail::ReadArray a(r1.get()), b(r2.get());
    for (PetscInt i = 0; i < n; ++i) {
      const double fd = (a[i] - b[i]) / (2 * eps);
      const double exact = jac[static_cast<std::size_t>(i * n + j)];
      worst = std::max(worst, std::abs(fd - exact) / (1.0 + std::abs(exact)));
    }
  }
  EXPECT_LT(worst, 1e-5);
}

TEST_P(FdmBlocks, FokkerPlanckMatrixIsTheTransposedJacobianWithColumnSumsOneOverDt) {
  const mfg::Model model(PETSC_COMM_WORLD, config());
  mfg::HjbSolver hjb(model);
  mfg::FokkerPlanckFdm fp(model);
  auto u = detail::global_vec(model.dm());
  fill_test_field(model, u.get(), 0.9);
  const PetscInt n = model.grid().size();
  const std::vector<double> j = dense(hjb.jacobian(u.get()), n);
  const std::vector<double> a = dense(fp.matrix(u.get()), n);
  for (PetscInt r = 0; r < n; ++r) {
    double column = 0.0;
    for (PetscInt c = 0; c < n; ++c) {
      EXPECT_EQ(a[static_cast<std::size_t>(r * n + c)], j[static_cast<std::size_t>(c * n + r)])
          << "row " << r << " col " << c;
      column += a[static_cast<std::size_t>(c * n + r)];
      if (r != c) {
        EXPECT_LE(a[static_cast<std::size_t>(r * n + c)], 0.0) << "M-matrix sign";
      }
    }
    EXPECT_NEAR(column, 1.0 / model.dt(), 1e-9 / model.dt());
  }
}

TEST_P(FdmBlocks, MassIsConservedEachStepAndDensityStaysNonnegative) {
  const MfgConfig cfg = config();
  mfg::Solver solver(PETSC_COMM_WORLD, cfg, nullptr, quiet());
  for (int k = 0; k < 3; ++k) solver.iterate();
  for (int n = 0; n <= solver.steps(); ++n) {
    const double mass = solver.model().mass(solver.m(n));
    EXPECT_NEAR(mass, 1.0, 1e-12) << "level " << n;
    PetscReal lo = 0.0;
    VecMin(solver.m(n), nullptr, &lo);
    EXPECT_GE(lo, 0.0) << "level " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Grids, FdmBlocks,
                         ::testing::Combine(::testing::Values(1, 2),
                                            ::testing::Values("periodic", "reflecting")));

TEST(MfgSolver, CrowdProblemConvergesWithDecreasingChanges) {
  const MfgConfig cfg = config_1d("periodic", 50, 20);
  mfg::Solver solver(PETSC_COMM_WORLD, cfg, nullptr, quiet());
  const mfg::SolveResult r = solver.solve();
  ASSERT_TRUE(r.converged);
  EXPECT_LE(r.change_u, cfg.iteration.tolerance);
  EXPECT_LE(r.change_m, cfg.iteration.tolerance);
  EXPECT_GT(r.iterations, 3);
  const auto& h = solver.history();
  EXPECT_LT(h.back().change_m, h[1].change_m * 1e-3);
}

}  // namespace
