// The finite-difference building blocks of the MFG solver: the HJB Jacobian is the exact
// derivative of the HJB residual, the Fokker-Planck matrix is its transpose, mass is
// conserved to round-off at every time level and the density stays >= 0, in 1D and 2D,
// periodic and reflecting. In 1D the fast path (no SNES/KSP) gives the PETSc path's steps
// to round-off, and its failures are reported like the SNES's.
#include <gtest/gtest.h>
#include <petscmat.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common/scoped_options.hpp"
#include "fracmfg/core/guarded_main.hpp"
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
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(config()));
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
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(config()));
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
  mfg::Solver solver(PETSC_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, quiet());
  for (int k = 0; k < 3; ++k) solver.iterate();
  for (int n = 0; n <= solver.steps(); ++n) {
    const double mass = solver.model().mass(solver.m(n));
    EXPECT_NEAR(mass, 1.0, 1e-12) << "level " << n;
    PetscReal lo = 0.0;
    VecMin(solver.m(n), nullptr, &lo);
    EXPECT_GE(lo, 0.0) << "level " << n;
  }
}

using fracmfg::test::Options;
using fracmfg::test::ScopedOptions;

double max_relative_difference(Vec a, Vec b) {
  auto d = detail::copy_vec(a);
  VecAXPY(d.get(), -1.0, b);
  PetscReal diff = 0.0, size = 0.0;
  VecNorm(d.get(), NORM_INFINITY, &diff);
  VecNorm(b, NORM_INFINITY, &size);
  return diff / size;
}

class Direct1d : public ::testing::TestWithParam<std::string> {};

TEST_P(Direct1d, HjbStepEqualsTheSnesStep) {
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(config_1d(GetParam(), 40, 10)));
  mfg::HjbSolver fast(model);
  ASSERT_TRUE(fast.direct());
  // -mfg_hjb_direct false selects PETSc's SNES (with the same solver types).
  const ScopedOptions snes_only(Options{{"-mfg_hjb_direct", "false"}});
  mfg::HjbSolver slow(model);
  ASSERT_FALSE(slow.direct());
  auto u_next = detail::global_vec(model.dm());
  auto rhs = detail::global_vec(model.dm());
  fill_test_field(model, u_next.get(), 1.1);
  VecSet(rhs.get(), 0.7);
  for (const double tolerance : {1e-3, 1e-12}) {
    auto a = detail::global_vec(model.dm());
    auto b = detail::global_vec(model.dm());
    fill_test_field(model, a.get(), 0.2);
    fill_test_field(model, b.get(), 0.2);
    const int its_fast = fast.step(u_next.get(), rhs.get(), a.get(), "test", tolerance);
    const int its_slow = slow.step(u_next.get(), rhs.get(), b.get(), "test", tolerance);
    EXPECT_EQ(its_fast, its_slow) << "tolerance " << tolerance;
    EXPECT_GE(its_fast, 1);
    EXPECT_LT(max_relative_difference(a.get(), b.get()), 1e-13) << "tolerance " << tolerance;
  }
  EXPECT_EQ(fast.newton_iterations(), slow.newton_iterations());
  EXPECT_EQ(fast.steps(), 2);
}

TEST_P(Direct1d, FokkerPlanckStepEqualsTheKspStep) {
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(config_1d(GetParam(), 40, 10)));
  mfg::FokkerPlanckFdm fast(model);
  ASSERT_TRUE(fast.direct());
  const ScopedOptions ksp(Options{{"-mfg_fp_ksp_type", "gmres"}, {"-mfg_fp_ksp_rtol", "1e-15"}});
  mfg::FokkerPlanckFdm slow(model);
  ASSERT_FALSE(slow.direct());
  auto u = detail::global_vec(model.dm());
  fill_test_field(model, u.get(), 0.4);
  VecScale(u.get(), 5.0);  // strong drift: upwinding on both sides
  auto m_fast = detail::global_vec(model.dm());
  auto m_slow = detail::global_vec(model.dm());
  fast.step(u.get(), model.initial_density(), nullptr, m_fast.get());
  slow.step(u.get(), model.initial_density(), nullptr, m_slow.get());
  EXPECT_LT(max_relative_difference(m_fast.get(), m_slow.get()), 1e-13);
  {
    // -mfg_fp_direct false: the same tridiagonal solve through PETSc's KSP.
    const ScopedOptions plain(Options{{"-mfg_fp_direct", "false"}});
    mfg::FokkerPlanckFdm petsc(model);
    ASSERT_FALSE(petsc.direct());
    auto m_petsc = detail::global_vec(model.dm());
    petsc.step(u.get(), model.initial_density(), nullptr, m_petsc.get());
    EXPECT_LT(max_relative_difference(m_fast.get(), m_petsc.get()), 1e-13);
  }
  EXPECT_NEAR(model.mass(m_fast.get()), model.mass(model.initial_density()), 1e-14);
  PetscReal lo = 0.0;
  VecMin(m_fast.get(), nullptr, &lo);
  EXPECT_GE(lo, 0.0);
}

// 2D Fokker-Planck steps solved loosely (set_relative_tolerance, as the solver does while the
// fixed point is far from converged) keep the exact discrete mass balance, with and without a
// source, and m >= 0 (a step with a negative entry is finished to 1e-12), and stay within
// the tolerance's reach of the tight solve. The narrow crowd has tails near 1e-40, where a
// loose Krylov solution would go negative.
class LooseFokkerPlanck : public ::testing::TestWithParam<std::string> {};

TEST_P(LooseFokkerPlanck, MassExactAndDensityNonnegativeAtAnyTolerance) {
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(config_2d(GetParam(), 24, 10)));
  mfg::FokkerPlanckFdm tight(model);
  auto u = detail::global_vec(model.dm());
  fill_test_field(model, u.get(), 0.4);
  VecScale(u.get(), 20.0);
  const PetscInt count = model.box().count();
  std::vector<double> source(static_cast<std::size_t>(count));
  for (PetscInt k = 0; k < count; ++k) {
    const double x = model.x()[static_cast<std::size_t>(k)];
    const double y = model.y()[static_cast<std::size_t>(k)];
    source[static_cast<std::size_t>(k)] = 0.5 * std::exp(-((x - 0.6) * (x - 0.6) + y * y) / 0.05);
  }
  auto src = detail::global_vec(model.dm());
  {
    detail::WriteArray s(src.get());
    for (PetscInt k = 0; k < count; ++k) s[k] = source[static_cast<std::size_t>(k)];
  }
  for (const double rtol : {1e-8, 1e-4, 1e-2}) {
    mfg::FokkerPlanckFdm loose(model);
    loose.set_relative_tolerance(rtol);
    PetscReal set = 0.0;
    KSPGetTolerances(loose.ksp(), &set, nullptr, nullptr, nullptr);
    EXPECT_EQ(set, rtol);
    for (const bool with_source : {false, true}) {
      auto m = detail::copy_vec(model.initial_density());
      auto m_tight = detail::copy_vec(m.get());
      auto next = detail::global_vec(model.dm());
      auto next_tight = detail::global_vec(model.dm());
      const double* s = with_source ? source.data() : nullptr;
      for (int n = 0; n < 5; ++n) {
        loose.step(u.get(), m.get(), s, next.get());
        tight.step(u.get(), m_tight.get(), s, next_tight.get());
        const double want =
            model.mass(m.get()) + (with_source ? model.dt() * model.mass(src.get()) : 0.0);
        EXPECT_NEAR(model.mass(next.get()), want, 1e-14 * want)
            << "rtol " << rtol << ", step " << n << (with_source ? ", source" : "");
        PetscReal lo = 0.0;
        VecMin(next.get(), nullptr, &lo);
        EXPECT_GE(lo, 0.0) << "rtol " << rtol << ", step " << n;
        EXPECT_LT(max_relative_difference(next.get(), next_tight.get()), 1e4 * rtol)
            << "rtol " << rtol << ", step " << n;
        VecCopy(next.get(), m.get());
        VecCopy(next_tight.get(), m_tight.get());
      }
    }
  }
}

TEST_P(LooseFokkerPlanck, AGivenKrylovToleranceIsKept) {
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(config_2d(GetParam(), 8, 4)));
  const ScopedOptions given(Options{{"-mfg_fp_ksp_rtol", "1e-9"}});
  mfg::FokkerPlanckFdm fp(model);
  fp.set_relative_tolerance(1e-3);
  PetscReal rtol = 0.0;
  KSPGetTolerances(fp.ksp(), &rtol, nullptr, nullptr, nullptr);
  EXPECT_EQ(rtol, 1e-9);
}

// The 2D solvers' defaults go onto their PETSc objects, not into the global options
// database: after a Fokker-Planck and an HJB step the database is as it was, and the
// block-Jacobi blocks factor with ILU(3); a level given on the command line is kept.
std::string all_options() {
  char* all = nullptr;
  PetscOptionsGetAll(nullptr, &all);
  std::string text = all != nullptr ? all : "";
  PetscFree(all);
  return text;
}

PetscInt first_block_levels(KSP ksp) {
  PC pc = nullptr;
  KSPGetPC(ksp, &pc);
  PetscInt blocks = 0;
  KSP* subs = nullptr;
  PCBJacobiGetSubKSP(pc, &blocks, nullptr, &subs);
  if (blocks < 1) return -1;
  PC sub = nullptr;
  KSPGetPC(subs[0], &sub);
  PetscInt levels = -1;
  PCFactorGetLevels(sub, &levels);
  return levels;
}

TEST_P(LooseFokkerPlanck, DefaultsStayOffTheOptionsDatabase) {
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(config_2d(GetParam(), 8, 4)));
  const std::string before = all_options();
  mfg::FokkerPlanckFdm fp(model);
  mfg::HjbSolver hjb(model);
  auto u = detail::global_vec(model.dm());
  fill_test_field(model, u.get(), 0.4);
  auto m = detail::global_vec(model.dm());
  fp.step(u.get(), model.initial_density(), nullptr, m.get());
  auto u_next = detail::global_vec(model.dm());
  auto rhs = detail::global_vec(model.dm());
  fill_test_field(model, u_next.get(), 1.1);
  VecSet(rhs.get(), 0.7);
  hjb.step(u_next.get(), rhs.get(), u.get(), "test", 1e-8);
  EXPECT_EQ(all_options(), before);
  EXPECT_EQ(first_block_levels(fp.ksp()), 3);
  KSP hjb_ksp = nullptr;
  SNESGetKSP(hjb.snes(), &hjb_ksp);
  EXPECT_EQ(first_block_levels(hjb_ksp), 3);
  {
    const ScopedOptions given(Options{{"-mfg_fp_sub_pc_factor_levels", "1"}});
    mfg::FokkerPlanckFdm fp1(model);
    fp1.step(u.get(), model.initial_density(), nullptr, m.get());
    EXPECT_EQ(first_block_levels(fp1.ksp()), 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Boundaries, LooseFokkerPlanck,
                         ::testing::Values("periodic", "reflecting"));

TEST_P(Direct1d, NewtonFailuresNameTheReason) {
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(config_1d(GetParam(), 20, 10)));
  auto u_next = detail::global_vec(model.dm());
  auto rhs = detail::global_vec(model.dm());
  auto u = detail::global_vec(model.dm());
  fill_test_field(model, u_next.get(), 1.1);
  VecSet(rhs.get(), 0.7);
  {
    const ScopedOptions no_iterations(Options{{"-mfg_hjb_snes_max_it", "0"}});
    mfg::HjbSolver hjb(model);
    ASSERT_TRUE(hjb.direct());
    VecSet(u.get(), 0.0);
    try {
      hjb.step(u_next.get(), rhs.get(), u.get(), "level 3");
      ADD_FAILURE() << "no error";
    } catch (const fracmfg::core::CollectiveError& e) {
      EXPECT_NE(
          std::string(e.what()).find("level 3: Newton's method failed for u (DIVERGED_MAX_IT"),
          std::string::npos)
          << e.what();
    }
  }
  mfg::HjbSolver hjb(model);
  VecSet(rhs.get(), std::nan(""));
  try {
    hjb.step(u_next.get(), rhs.get(), u.get(), "level 4");
    ADD_FAILURE() << "no error";
  } catch (const fracmfg::core::CollectiveError& e) {
    EXPECT_NE(std::string(e.what()).find("DIVERGED_FNORM_NAN"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Boundaries, Direct1d, ::testing::Values("periodic", "reflecting"));

INSTANTIATE_TEST_SUITE_P(Grids, FdmBlocks,
                         ::testing::Combine(::testing::Values(1, 2),
                                            ::testing::Values("periodic", "reflecting")));

TEST(MfgSolver, CrowdProblemConvergesWithDecreasingChanges) {
  const MfgConfig cfg = config_1d("periodic", 50, 20);
  mfg::Solver solver(PETSC_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, quiet());
  const mfg::SolveResult r = solver.solve();
  ASSERT_TRUE(r.converged);
  EXPECT_LE(r.change_u, cfg.iteration.tolerance);
  EXPECT_LE(r.change_m, cfg.iteration.tolerance);
  EXPECT_GT(r.iterations, 3);
  const auto& h = solver.history();
  EXPECT_LT(h.back().change_m, h[1].change_m * 1e-3);
}

}  // namespace
