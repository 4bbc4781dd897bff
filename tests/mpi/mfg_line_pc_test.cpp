// The 2D MFG solvers with the line preconditioner (-mfg_hjb_pc_type / -mfg_fp_pc_type
// fracmfg_line, la/line_pc.hpp) against the default block Jacobi/ILU(3): an HJB Newton step
// and a Fokker-Planck step give the same solution to the Krylov tolerance, and a whole game
// converges to the same u and m to the fixed-point tolerance, reflecting and periodic, on 1,
// 2 and 3 ranks.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>
#include <petscsnes.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common/mfg_configs.hpp"
#include "common/mpi_support.hpp"
#include "common/scoped_options.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/la/line_pc.hpp"
#include "fracmfg/mfg/fokker_planck.hpp"
#include "fracmfg/mfg/hjb.hpp"
#include "fracmfg/mfg/model.hpp"
#include "fracmfg/mfg/problem.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/petsc_handles.hpp"

namespace {

namespace mfg = fracmfg::mfg;
namespace detail = fracmfg::mfg::detail;
namespace la = fracmfg::la;

using fracmfg::test::Options;
using fracmfg::test::ScopedOptions;

const Options kLine = {{"-mfg_hjb_pc_type", "fracmfg_line"}, {"-mfg_fp_pc_type", "fracmfg_line"}};

fracmfg::io::MfgConfig config_2d(const std::string& boundary, int points, int steps,
                                 const std::string& iteration) {
  return fracmfg::io::Deck::from_string(
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
             "  iteration: " +
             iteration + "\n")
      .mfg();
}

// A smooth field with sign changes of its differences, at the owned points.
void fill_test_field(const mfg::Model& model, Vec u, double phase, double scale) {
  detail::WriteArray a(u);
  const auto& x = model.x();
  const auto& y = model.y();
  for (std::size_t k = 0; k < x.size(); ++k) {
    a[static_cast<PetscInt>(k)] =
        scale * (std::sin(2 * M_PI * x[k] + phase) + 0.5 * std::cos(3 * y[k]));
  }
}

double max_relative_difference(Vec a, Vec b) {
  auto d = detail::copy_vec(a);
  VecAXPY(d.get(), -1.0, b);
  PetscReal diff = 0.0, size = 0.0;
  VecNorm(d.get(), NORM_INFINITY, &diff);
  VecNorm(b, NORM_INFINITY, &size);
  return diff / size;
}

class LineSteps : public ::testing::TestWithParam<std::string> {};

TEST_P(LineSteps, HjbNewtonStepEqualsTheIluStep) {
  // Two models: a SNES keeps its residual callback on the model's DMDA, so two HJB solvers
  // cannot share one.
  const auto cfg =
      mfg::problem_from_config(config_2d(GetParam(), 20, 10, "{damping: 0.5, tolerance: 1.0e-8}"));
  const mfg::Model model(PETSC_COMM_WORLD, cfg);
  const mfg::Model twin(PETSC_COMM_WORLD, cfg);
  const ScopedOptions tight(Options{{"-mfg_hjb_ksp_rtol", "1e-12"}});
  mfg::HjbSolver ilu(model);
  const ScopedOptions line(kLine);
  mfg::HjbSolver lines(twin);
  KSP ksp = nullptr;
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(SNESGetKSP(lines.snes(), &ksp));
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  ASSERT_TRUE(la::is_line_pc(pc));
  auto u_next = detail::global_vec(model.dm());
  auto rhs = detail::global_vec(model.dm());
  fill_test_field(model, u_next.get(), 1.1, 1.0);
  VecSet(rhs.get(), 0.7);
  auto a = detail::global_vec(model.dm());
  auto b = detail::global_vec(model.dm());
  fill_test_field(model, a.get(), 0.2, 3.0);  // strong drift: upwinding on both sides
  fill_test_field(model, b.get(), 0.2, 3.0);
  const int its_ilu = ilu.step(u_next.get(), rhs.get(), a.get(), "test", 1e-12);
  const int its_line = lines.step(u_next.get(), rhs.get(), b.get(), "test", 1e-12);
  EXPECT_GE(its_line, 1);
  EXPECT_LE(std::abs(its_line - its_ilu), 1);
  EXPECT_LT(max_relative_difference(b.get(), a.get()), 1e-9);
  EXPECT_GE(la::line_pc_info(pc).setups, its_line);
}

TEST_P(LineSteps, FokkerPlanckStepEqualsTheIluStep) {
  const mfg::Model model(
      PETSC_COMM_WORLD,
      mfg::problem_from_config(config_2d(GetParam(), 20, 10, "{damping: 0.5, tolerance: 1.0e-8}")));
  mfg::FokkerPlanckFdm ilu(model);
  const ScopedOptions line(kLine);
  mfg::FokkerPlanckFdm lines(model);
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(lines.ksp(), &pc));
  ASSERT_TRUE(la::is_line_pc(pc));
  auto u = detail::global_vec(model.dm());
  fill_test_field(model, u.get(), 0.4, 3.0);
  auto m_ilu = detail::global_vec(model.dm());
  auto m_line = detail::global_vec(model.dm());
  ilu.step(u.get(), model.initial_density(), nullptr, m_ilu.get());
  lines.step(u.get(), model.initial_density(), nullptr, m_line.get());
  // Both solved to rtol 1e-12 (the default) and scaled onto the same mass balance.
  EXPECT_LT(max_relative_difference(m_line.get(), m_ilu.get()), 1e-9);
  EXPECT_EQ(la::line_pc_info(pc).setups, 1);
  PetscReal lo = 0.0;
  VecMin(m_line.get(), nullptr, &lo);
  EXPECT_GE(lo, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Boundaries, LineSteps, ::testing::Values("reflecting", "periodic"));

struct Fields {
  std::vector<double> u, m;
  int iterations = 0;
};

Fields solve_game(const fracmfg::io::MfgConfig& cfg) {
  mfg::Solver solver(PETSC_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                     fracmfg::test::quiet_logger());
  const auto r = solver.solve();
  EXPECT_TRUE(r.converged);
  const fracmfg::test::MfgLevels levels = fracmfg::test::levels_of(solver);
  Fields f;
  f.iterations = r.iterations;
  f.u = fracmfg::test::flatten(levels.u);
  f.m = fracmfg::test::flatten(levels.m);
  return f;
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0.0, size = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    diff = std::max(diff, std::fabs(a[k] - b[k]));
    size = std::max(size, std::fabs(b[k]));
  }
  return size > 0.0 ? diff / size : diff;
}

class LineGame : public ::testing::TestWithParam<std::string> {};

TEST_P(LineGame, ConvergesToTheIluResult) {
  const double tol = 1e-7;
  const auto cfg = config_2d(GetParam(), 14, 8,
                             "{damping: 0.5, anderson: 2, tolerance: 1.0e-7, max_iterations: 200}");
  const Fields ilu = solve_game(cfg);
  Fields line;
  {
    const ScopedOptions opts(kLine);
    line = solve_game(cfg);
  }
  if (fracmfg::test::world_rank() == 0) {
    // Both stop once the relative changes are below tol; the fixed point contracts by
    // about 1/2 per iteration, so each is within a few tol of the game's solution.
    EXPECT_LT(relative_difference(line.u, ilu.u), 20 * tol);
    EXPECT_LT(relative_difference(line.m, ilu.m), 20 * tol);
    EXPECT_LE(std::abs(line.iterations - ilu.iterations), 3);
  }
}

INSTANTIATE_TEST_SUITE_P(Boundaries, LineGame, ::testing::Values("reflecting", "periodic"));

}  // namespace
