// The power and congestion Hamiltonians (mfg/hamiltonian.hpp) in the finite-difference
// solvers: the HJB Jacobian is the exact derivative of the residual (finite differences),
// the Fokker-Planck matrix is its transpose at the same density (column sums 1/dt, M-matrix
// signs), the 1D fast path gives the PETSc path's steps, mass is conserved to round-off and
// m >= 0 at every level; power with q = 2 and congestion with alpha = 0 reproduce the
// quadratic game. 1D and 2D, periodic and reflecting.
#include <gtest/gtest.h>
#include <petscmat.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "common/scoped_options.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/fokker_planck.hpp"
#include "fracmfg/mfg/hamiltonian.hpp"
#include "fracmfg/mfg/hjb.hpp"
#include "fracmfg/mfg/model.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/petsc_handles.hpp"

namespace {

using fracmfg::io::Deck;
using fracmfg::io::MfgConfig;
using fracmfg::test::Options;
using fracmfg::test::ScopedOptions;
namespace mfg = fracmfg::mfg;
namespace detail = fracmfg::mfg::detail;

fracmfg::core::Logger quiet() {
  return fracmfg::core::Logger(0, fracmfg::core::LogLevel::warn, false);
}

// The Hamiltonians under test, as deck text.
const char* const kPower15 = "{type: power, exponent: 1.5, control_cost: \"1 + 0.3*sin(2*pi*x)\"}";
const char* const kPower3 = "{type: power, exponent: 3, control_cost: \"1 + 0.3*sin(2*pi*x)\"}";
const char* const kCongestion =
    "{type: congestion, epsilon: 0.2, alpha: 1.5, control_cost: \"1 + 0.3*sin(2*pi*x)\"}";

MfgConfig config(int dim, const std::string& boundary, const std::string& hamiltonian, int points,
                 int steps) {
  const std::string n = std::to_string(points);
  std::string deck = "problem: mfg\nmfg:\n";
  if (dim == 1) {
    deck += "  domain: {length: [1.0], boundary: " + boundary + "}\n  grid: {points: [" + n +
            "]}\n  initial_density: \"exp(-(x-0.3)^2/0.005)\"\n"
            "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
            "  terminal_cost: \"0.2*x*(1-x)\"\n  diffusion: 0.05\n";
  } else {
    deck += "  domain: {length: [1.0, 1.5], boundary: " + boundary + "}\n  grid: {points: [" + n +
            ", " + std::to_string(points + 3) +
            "]}\n  initial_density: \"exp(-((x-0.3)^2+(y-0.8)^2)/0.02)\"\n"
            "  coupling: {type: power, exponent: 2, potential: \"cos(2*pi*x)*sin(pi*y)\"}\n"
            "  terminal_cost: \"(x-0.7)^2 + 0.5*(y-0.5)^2\"\n  diffusion: 0.02\n";
  }
  deck += "  time: {horizon: 0.5, steps: " + std::to_string(steps) +
          "}\n  hamiltonian: " + hamiltonian +
          "\n  iteration: {damping: 0.5, anderson: 3, tolerance: 1.0e-9, max_iterations: 200}\n";
  return Deck::from_string(deck, "hamiltonian.yaml").mfg();
}

// A smooth field at the owned points whose differences change sign.
void fill_test_field(const mfg::Model& model, Vec u, double phase) {
  detail::WriteArray a(u);
  const auto& x = model.x();
  const auto& y = model.y();
  for (std::size_t k = 0; k < x.size(); ++k) {
    a[static_cast<PetscInt>(k)] = std::sin(2 * M_PI * x[k] + phase) + 0.5 * std::cos(3 * y[k]);
  }
}

// A positive density (for the congestion Hamiltonian).
void fill_density(const mfg::Model& model, Vec m) {
  detail::WriteArray a(m);
  const auto& x = model.x();
  const auto& y = model.y();
  for (std::size_t k = 0; k < x.size(); ++k) {
    a[static_cast<PetscInt>(k)] = 1.0 + 0.8 * std::cos(2 * M_PI * x[k]) * std::cos(y[k]);
  }
}

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

// The squared upwind norm s_i of u at every point of a one-rank grid (natural order): where
// it is 0 the power Hamiltonian's derivative is 0 but not differentiable again for q < 2.
std::vector<double> upwind_norms(const mfg::Model& model, Vec u) {
  const mfg::Grid& g = model.grid();
  const PetscInt nx = g.points[0], ny = g.dim == 2 ? g.points[1] : 1;
  const bool periodic = g.boundary == mfg::Boundary::periodic;
  detail::ReadArray a(u);
  auto at = [&](PetscInt i, PetscInt j) {
    if (periodic) {
      i = (i + nx) % nx;
      j = (j + ny) % ny;
    } else {
      i = std::clamp<PetscInt>(i, 0, nx - 1);
      j = std::clamp<PetscInt>(j, 0, ny - 1);
    }
    return a[j * nx + i];
  };
  std::vector<double> s(static_cast<std::size_t>(nx * ny));
  for (PetscInt j = 0; j < ny; ++j) {
    for (PetscInt i = 0; i < nx; ++i) {
      const double ihx = 1.0 / g.spacing(0);
      double v =
          mfg::upwind_norm2((at(i + 1, j) - at(i, j)) * ihx, (at(i, j) - at(i - 1, j)) * ihx);
      if (g.dim == 2) {
        const double ihy = 1.0 / g.spacing(1);
        v += mfg::upwind_norm2((at(i, j + 1) - at(i, j)) * ihy, (at(i, j) - at(i, j - 1)) * ihy);
      }
      s[static_cast<std::size_t>(j * nx + i)] = v;
    }
  }
  return s;
}

class GeneralHamiltonian
    : public ::testing::TestWithParam<std::tuple<int, std::string, const char*>> {
 protected:
  MfgConfig small() const {
    const auto [dim, boundary, hamiltonian] = GetParam();
    return dim == 1 ? config(1, boundary, hamiltonian, 12, 10)
                    : config(2, boundary, hamiltonian, 7, 10);
  }
};

TEST_P(GeneralHamiltonian, HjbJacobianIsTheDerivativeOfTheResidual) {
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(small()));
  mfg::HjbSolver hjb(model);
  auto m = detail::global_vec(model.dm());
  fill_density(model, m.get());
  hjb.set_density(m.get());
  auto u = detail::global_vec(model.dm());
  auto u_next = detail::global_vec(model.dm());
  auto rhs = detail::global_vec(model.dm());
  fill_test_field(model, u.get(), 0.3);
  fill_test_field(model, u_next.get(), 1.1);
  VecSet(rhs.get(), 0.7);
  const PetscInt n = model.grid().size();
  const std::vector<double> jac = dense(hjb.jacobian(u.get()), n);
  const std::vector<double> s = upwind_norms(model, u.get());
  auto r1 = detail::global_vec(model.dm());
  auto r2 = detail::global_vec(model.dm());
  const double eps = 1e-7;
  double worst = 0.0;
  int compared = 0, zero_rows = 0;
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
      // At s = 0 (a discrete minimum) H_h = O(|du|^q): the derivative is 0, which a central
      // difference sees only to O(eps^(q-1)); those rows are checked against the
      // Hamiltonian-free row below.
      if (s[static_cast<std::size_t>(i)] == 0.0) continue;
      const double fd = (a[i] - b[i]) / (2 * eps);
      const double exact = jac[static_cast<std::size_t>(i * n + j)];
      worst = std::max(worst, std::abs(fd - exact) / (1.0 + std::abs(exact)));
      ++compared;
    }
  }
  EXPECT_LT(worst, 1e-5);
  EXPECT_GT(compared, n);
  // Rows at s = 0: I/dt - nu Lap_h alone, the neighbours' entries -nu / h^2 of their axis.
  const double nu = model.diffusion();
  const double lap_x = nu / (model.grid().spacing(0) * model.grid().spacing(0));
  const double lap_y =
      model.grid().dim == 2 ? nu / (model.grid().spacing(1) * model.grid().spacing(1)) : lap_x;
  for (PetscInt i = 0; i < n; ++i) {
    if (s[static_cast<std::size_t>(i)] != 0.0) continue;
    ++zero_rows;
    for (PetscInt j = 0; j < n; ++j) {
      const double v = jac[static_cast<std::size_t>(i * n + j)];
      if (j == i || v == 0.0) continue;
      EXPECT_TRUE(std::abs(v + lap_x) <= 1e-12 * lap_x || std::abs(v + lap_y) <= 1e-12 * lap_y)
          << "row " << i << " col " << j << ": " << v;
    }
  }
  std::printf("  %d entries compared, %d rows at s = 0, worst relative error %.2e\n", compared,
              zero_rows, worst);
}

TEST_P(GeneralHamiltonian, FokkerPlanckMatrixIsTheTransposedJacobianAtTheSameDensity) {
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(small()));
  mfg::HjbSolver hjb(model);
  mfg::FokkerPlanckFdm fp(model);
  auto m = detail::global_vec(model.dm());
  fill_density(model, m.get());
  hjb.set_density(m.get());
  fp.set_density(m.get());
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

TEST_P(GeneralHamiltonian, MassIsConservedEachStepAndDensityStaysNonnegative) {
  mfg::Solver solver(PETSC_COMM_WORLD, mfg::problem_from_config(small()), nullptr, quiet());
  for (int k = 0; k < 3; ++k) solver.iterate();
  for (int n = 0; n <= solver.steps(); ++n) {
    EXPECT_NEAR(solver.model().mass(solver.m(n)), 1.0, 1e-12) << "level " << n;
    PetscReal lo = 0.0;
    VecMin(solver.m(n), nullptr, &lo);
    EXPECT_GE(lo, 0.0) << "level " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Grids, GeneralHamiltonian,
                         ::testing::Combine(::testing::Values(1, 2),
                                            ::testing::Values("periodic", "reflecting"),
                                            ::testing::Values(kPower15, kPower3, kCongestion)));

double max_relative_difference(Vec a, Vec b) {
  auto d = detail::copy_vec(a);
  VecAXPY(d.get(), -1.0, b);
  PetscReal diff = 0.0, size = 0.0;
  VecNorm(d.get(), NORM_INFINITY, &diff);
  VecNorm(b, NORM_INFINITY, &size);
  return diff / size;
}

class GeneralDirect1d : public ::testing::TestWithParam<std::tuple<std::string, const char*>> {
 protected:
  MfgConfig cfg() const {
    return config(1, std::get<0>(GetParam()), std::get<1>(GetParam()), 40, 10);
  }
};

TEST_P(GeneralDirect1d, HjbStepEqualsTheSnesStep) {
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(cfg()));
  auto m = detail::global_vec(model.dm());
  fill_density(model, m.get());
  mfg::HjbSolver fast(model);
  ASSERT_TRUE(fast.direct());
  const ScopedOptions snes_only(Options{{"-mfg_hjb_direct", "false"}});
  mfg::HjbSolver slow(model);
  ASSERT_FALSE(slow.direct());
  fast.set_density(m.get());
  slow.set_density(m.get());
  auto u_next = detail::global_vec(model.dm());
  auto rhs = detail::global_vec(model.dm());
  fill_test_field(model, u_next.get(), 1.1);
  VecSet(rhs.get(), 0.7);
  auto a = detail::global_vec(model.dm());
  auto b = detail::global_vec(model.dm());
  fill_test_field(model, a.get(), 0.2);
  fill_test_field(model, b.get(), 0.2);
  const int its_fast = fast.step(u_next.get(), rhs.get(), a.get(), "test", 1e-12);
  const int its_slow = slow.step(u_next.get(), rhs.get(), b.get(), "test", 1e-12);
  EXPECT_EQ(its_fast, its_slow);
  EXPECT_GE(its_fast, 1);
  EXPECT_LT(max_relative_difference(a.get(), b.get()), 1e-13);
}

TEST_P(GeneralDirect1d, FokkerPlanckStepEqualsTheKspStep) {
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(cfg()));
  auto m = detail::global_vec(model.dm());
  fill_density(model, m.get());
  mfg::FokkerPlanckFdm fast(model);
  ASSERT_TRUE(fast.direct());
  const ScopedOptions plain(Options{{"-mfg_fp_direct", "false"}});
  mfg::FokkerPlanckFdm slow(model);
  ASSERT_FALSE(slow.direct());
  fast.set_density(m.get());
  slow.set_density(m.get());
  auto u = detail::global_vec(model.dm());
  fill_test_field(model, u.get(), 0.4);
  VecScale(u.get(), 5.0);  // strong drift: upwinding on both sides
  auto m_fast = detail::global_vec(model.dm());
  auto m_slow = detail::global_vec(model.dm());
  fast.step(u.get(), model.initial_density(), nullptr, m_fast.get());
  slow.step(u.get(), model.initial_density(), nullptr, m_slow.get());
  EXPECT_LT(max_relative_difference(m_fast.get(), m_slow.get()), 1e-13);
}

INSTANTIATE_TEST_SUITE_P(Boundaries, GeneralDirect1d,
                         ::testing::Combine(::testing::Values("periodic", "reflecting"),
                                            ::testing::Values(kPower15, kPower3, kCongestion)));

// The whole game: power with q = 2 is the quadratic game to round-off (H_h evaluated as
// s^(q/2) / (q c) instead of per-axis squares), congestion with alpha = 0 is it exactly.
class SameAsQuadratic : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(SameAsQuadratic, PowerTwoAndCongestionAlphaZeroReproduceTheQuadraticGame) {
  const auto [dim, boundary] = GetParam();
  const int points = dim == 1 ? 40 : 9;
  const std::string c = "control_cost: \"1 + 0.3*sin(2*pi*x)\"";
  mfg::Solver quadratic(PETSC_COMM_WORLD,
                        mfg::problem_from_config(config(dim, boundary, "{" + c + "}", points, 10)),
                        nullptr, quiet());
  mfg::Solver power(PETSC_COMM_WORLD,
                    mfg::problem_from_config(
                        config(dim, boundary, "{type: power, exponent: 2, " + c + "}", points, 10)),
                    nullptr, quiet());
  mfg::Solver congestion(
      PETSC_COMM_WORLD,
      mfg::problem_from_config(config(
          dim, boundary, "{type: congestion, epsilon: 0.3, alpha: 0, " + c + "}", points, 10)),
      nullptr, quiet());
  const auto rq = quadratic.solve();
  const auto rp = power.solve();
  const auto rc = congestion.solve();
  ASSERT_TRUE(rq.converged && rp.converged && rc.converged);
  EXPECT_EQ(rq.iterations, rc.iterations);
  double du = 0.0, dm = 0.0;
  for (int n = 0; n <= quadratic.steps(); ++n) {
    du = std::max(du, max_relative_difference(power.u(n), quadratic.u(n)));
    dm = std::max(dm, max_relative_difference(power.m(n), quadratic.m(n)));
    EXPECT_EQ(max_relative_difference(congestion.u(n), quadratic.u(n)), 0.0) << "level " << n;
    EXPECT_EQ(max_relative_difference(congestion.m(n), quadratic.m(n)), 0.0) << "level " << n;
  }
  std::printf(
      "  power q = 2 against quadratic: %d vs %d iterations, max relative difference "
      "u %.2e, m %.2e\n",
      rp.iterations, rq.iterations, du, dm);
  // The same iterations: they agree to round-off (the tolerance, 1e-9, plays no part).
  EXPECT_EQ(rp.iterations, rq.iterations);
  EXPECT_LT(du, 1e-12);
  EXPECT_LT(dm, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Grids, SameAsQuadratic,
                         ::testing::Combine(::testing::Values(1, 2),
                                            ::testing::Values("periodic", "reflecting")));

TEST(GeneralHamiltonianProblem, OutOfRangeParametersAndParticlesAreRefused) {
  mfg::Problem p = mfg::problem_from_config(config(1, "periodic", kPower15, 12, 4));
  p.hamiltonian.exponent = 1.0;
  try {
    mfg::check_problem(p);
    ADD_FAILURE() << "no error";
  } catch (const fracmfg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("problem.hamiltonian.exponent: must be > 1, but is 1"),
              std::string::npos)
        << e.what();
  }
  mfg::Problem c = mfg::problem_from_config(config(1, "periodic", kCongestion, 12, 4));
  c.hamiltonian.alpha = 2.0;
  EXPECT_THROW(mfg::check_problem(c), fracmfg::Error);
  c.hamiltonian.alpha = 1.0;
  c.hamiltonian.epsilon = 0.0;
  EXPECT_THROW(mfg::check_problem(c), fracmfg::Error);
  c.hamiltonian.epsilon = 0.1;
  c.fokker_planck.method = MfgConfig::FokkerPlanck::Method::particles;
  try {
    mfg::check_problem(c);
    ADD_FAILURE() << "no error";
  } catch (const fracmfg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("particles support only the quadratic Hamiltonian"),
              std::string::npos)
        << e.what();
  }
}

TEST(GeneralHamiltonianProblem, CongestionStepWithoutDensityIsRefused) {
  const mfg::Model model(PETSC_COMM_WORLD,
                         mfg::problem_from_config(config(1, "periodic", kCongestion, 12, 4)));
  mfg::HjbSolver hjb(model);
  auto u = detail::global_vec(model.dm());
  EXPECT_THROW(hjb.jacobian(u.get()), fracmfg::Error);
}

}  // namespace
