// frac::FpdeSolver on several ranks: the distributed run agrees with the one-rank run to
// round-off, and a run stopped and restarted from a checkpoint reproduces the uninterrupted
// run bit for bit (time_fractional with direct and SOE histories, 1D and 2D, and
// space_fractional), including through the deck runner (frac::run_fpde_deck).
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscdmda.h>
#include <petscsys.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/fpde_cases.hpp"
#include "common/mpi_support.hpp"
#include "fracmfg/core/interrupt.hpp"
#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/frac/fpde_run.hpp"
#include "fracmfg/frac/fpde_solver.hpp"
#include "fracmfg/frac/riesz_shell.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/io/h5_reader.hpp"

namespace {

using namespace fracmfg;
using frac::FpdeSolver;
using Boundary = io::FpdeConfig::Domain::Boundary;
using Type = io::FpdeConfig::Type;
using HistoryMethod = io::FpdeConfig::History::Method;
using fracmfg::test::world_rank;
using fracmfg::test::world_size;

std::string scratch(const std::string& name) {
  const char* bin = std::getenv("FRACMFG_BINARY_DIR");
  const std::string dir = std::string(bin ? bin : ".") + "/fpde_parallel_np" +
                          std::to_string(world_size()) + "/" + name;
  if (world_rank() == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  return dir;
}

using Named = fracmfg::test::NamedFpdeConfig;

io::FpdeConfig base(Type type, int dim, Boundary b, int points, int steps) {
  return fracmfg::test::fpde_base_config(type, dim, b, points, steps);
}

std::vector<Named> cases() {
  std::vector<Named> v;
  {
    auto c = base(Type::time_fractional, 1, Boundary::dirichlet, 61, 30);
    c.time.grading = 2.0;
    c.history.method = HistoryMethod::soe;
    v.push_back({"time 1D dirichlet soe graded", c});
  }
  {
    auto c = base(Type::time_fractional, 1, Boundary::periodic, 60, 25);
    c.history.method = HistoryMethod::direct;
    v.push_back({"time 1D periodic direct", c});
  }
  {
    auto c = base(Type::time_fractional, 2, Boundary::neumann, 21, 12);
    c.time.grading = 1.5;
    c.history.method = HistoryMethod::soe;
    v.push_back({"time 2D neumann soe graded", c});
  }
  {
    auto c = base(Type::time_fractional, 2, Boundary::dirichlet, 19, 12);
    c.history.method = HistoryMethod::direct;
    v.push_back({"time 2D dirichlet direct", c});
  }
  v.push_back({"riesz 1D dirichlet", base(Type::space_fractional, 1, Boundary::dirichlet, 90, 15)});
  v.push_back({"riesz 2D dirichlet", base(Type::space_fractional, 2, Boundary::dirichlet, 21, 8)});
  v.push_back({"riesz 2D periodic", base(Type::space_fractional, 2, Boundary::periodic, 20, 8)});
  return v;
}

/// The whole solution in natural order, on every rank.
std::vector<double> gather(const FpdeSolver& s) {
  return fracmfg::test::natural_on_all(s.dm(), s.solution());
}

frac::FpdeSolverOptions tight() {
  frac::FpdeSolverOptions o;
  o.prefix = "par_";
  return o;
}

TEST(FpdeParallel, RanksAgreeWithTheOneRankRunToRoundOff) {
  // Krylov solves (2D GAMG, Riesz CG) run to rtol 1e-13, so that the iteration count's
  // dependence on the decomposition leaves only round-off; the 1D solves are exact.
  ASSERT_EQ(PetscOptionsSetValue(nullptr, "-par_ksp_rtol", "1e-13"), 0);
  for (const Named& c : cases()) {
    SCOPED_TRACE(c.name);
    FpdeSolver dist(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c.config), tight());
    FpdeSolver alone(PETSC_COMM_SELF, frac::fpde_problem_from_config(c.config), tight());
    dist.run_until(c.config.time.steps);
    alone.run_until(c.config.time.steps);
    const std::vector<double> a = gather(dist);
    const double* b = nullptr;
    VecGetArrayRead(alone.solution(), &b);
    double diff = 0.0;
    double scale = 0.0;
    for (std::size_t p = 0; p < a.size(); ++p) {
      diff = std::max(diff, std::fabs(a[p] - b[p]));
      scale = std::max(scale, std::fabs(b[p]));
    }
    VecRestoreArrayRead(alone.solution(), &b);
    if (world_rank() == 0) {
      std::printf("%-30s %d ranks: max |u_dist - u_1| = %.2e (max |u| %.2e)\n", c.name,
                  world_size(), diff, scale);
    }
    EXPECT_LE(diff, 1e-11 * scale);
  }
  ASSERT_EQ(PetscOptionsClearValue(nullptr, "-par_ksp_rtol"), 0);
}

TEST(FpdeParallel, RestartFromACheckpointReproducesTheUninterruptedRun) {
  const std::string dir = scratch("restart");
  fracmfg::test::expect_restart_reproduces_run(cases(), dir);
}

TEST(FpdeParallel, RieszShellProductEqualsTheDenseMatrixOnEveryRankCount) {
  // The distributed MATSHELL (gather, FFT, keep the own box) against the assembled dense
  // matrix applied on one rank.
  for (int dim : {1, 2}) {
    for (Boundary b : {Boundary::dirichlet, Boundary::periodic}) {
      auto c = base(Type::space_fractional, dim, b, dim == 1 ? 37 : 9, 1);
      frac::FpdeGrid grid(PETSC_COMM_WORLD, c);
      frac::RieszShell shell(grid, 1.55);
      shell.set_coefficients(0.0, 1.0);
      Vec x = nullptr;
      Vec y = nullptr;
      DMCreateGlobalVector(grid.dm(), &x);
      VecDuplicate(x, &y);
      const auto nx = static_cast<std::size_t>(grid.points(0));
      auto value = [](std::size_t i, std::size_t j) { return std::sin(0.9 * i + 2.1 * j) + 0.3; };
      {
        PetscScalar* a = nullptr;
        VecGetArray(x, &a);
        std::size_t p = 0;
        for (PetscInt j = grid.begin(1); j < grid.begin(1) + grid.count(1); ++j) {
          for (PetscInt i = grid.begin(0); i < grid.begin(0) + grid.count(0); ++i, ++p) {
            a[p] = grid.boundary()[p] ? 0.0 : value(i, j);
          }
        }
        VecRestoreArray(x, &a);
      }
      MatMult(shell.matrix(), x, y);
      const auto dense = shell.op().dense();
      const std::size_t n = shell.op().interior_size();
      std::vector<double> xi;
      std::vector<std::size_t> where;  // interior unknown -> natural index
      const std::size_t ny = static_cast<std::size_t>(grid.points(1));
      for (std::size_t j = 0; j < ny; ++j) {
        for (std::size_t i = 0; i < nx; ++i) {
          if (!shell.op().is_interior(i, j)) continue;
          xi.push_back(value(i, j));
          where.push_back(j * nx + i);
        }
      }
      ASSERT_EQ(xi.size(), n);
      // Compare on the owned points.
      const PetscScalar* ya = nullptr;
      VecGetArrayRead(y, &ya);
      double err = 0.0;
      double scale = 0.0;
      std::size_t p = 0;
      for (PetscInt j = grid.begin(1); j < grid.begin(1) + grid.count(1); ++j) {
        for (PetscInt i = grid.begin(0); i < grid.begin(0) + grid.count(0); ++i, ++p) {
          const std::size_t natural =
              static_cast<std::size_t>(j) * nx + static_cast<std::size_t>(i);
          const auto it = std::find(where.begin(), where.end(), natural);
          if (it == where.end()) continue;
          const auto r = static_cast<std::size_t>(it - where.begin());
          double v = 0.0;
          for (std::size_t k = 0; k < n; ++k) v += dense[r * n + k] * xi[k];
          err = std::max(err, std::fabs(v - ya[p]));
          scale = std::max(scale, std::fabs(v));
        }
      }
      VecRestoreArrayRead(y, &ya);
      double g[2] = {0.0, 0.0};
      double l[2] = {err, scale};
      MPI_Allreduce(l, g, 2, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
      EXPECT_LE(g[0], 1e-12 * g[1]) << "dim " << dim;
      VecDestroy(&x);
      VecDestroy(&y);
    }
  }
}

TEST(FpdeParallel, CheckpointOfAnotherProblemIsRefused) {
  const std::string dir = scratch("refuse");
  auto c = base(Type::time_fractional, 1, Boundary::dirichlet, 31, 6);
  FpdeSolver s(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
  s.run_until(2);
  s.write_checkpoint(dir + "/a.chk.h5");
  c.order = 0.7;
  FpdeSolver other(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
  EXPECT_THROW(other.restart(dir + "/a.chk.h5"), Error);
  c.order = 0.6;
  c.history.method = HistoryMethod::direct;
  FpdeSolver direct(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
  EXPECT_THROW(direct.restart(dir + "/a.chk.h5"), Error);
  EXPECT_THROW(direct.restart(dir + "/missing.chk.h5"), IoError);
}

TEST(FpdeParallel, DeckRunStoppedAndContinuedWritesTheSameFields) {
  const std::string dir = scratch("deck");
  const std::string deck_text =
      "problem: fpde\n"
      "fpde:\n"
      "  type: time_fractional\n"
      "  order: 0.4\n"
      "  diffusivity: 1.0\n"
      "  initial: \"sin(pi*x)*sin(pi*y)\"\n"
      "  source: \"x*y*t\"\n"
      "  domain: {length: [1.0, 1.0], boundary: dirichlet}\n"
      "  grid: {points: [17, 21]}\n"
      "  time: {horizon: 1.0, steps: 12, grading: 2.0}\n"
      "  history: {method: soe, tolerance: 1.0e-9}\n"
      "output: {file: " +
      dir + "/run.h5, every: 3, checkpoint_every: 4}\n";
  const io::Deck deck = io::Deck::from_string(deck_text, "deck.yaml");
  const core::Logger quiet = fracmfg::test::quiet_logger();
  frac::FpdeRunOptions full_opts;
  full_opts.output_file = dir + "/full.h5";
  const auto full = frac::run_fpde_deck(PETSC_COMM_WORLD, deck, quiet, full_opts);
  EXPECT_EQ(full.last_step, 12);
  EXPECT_EQ(full.outputs, 5);  // steps 0, 3, 6, 9, 12
  EXPECT_EQ(full.checkpoints, 3);

  frac::FpdeRunOptions stop_opts;
  stop_opts.output_file = dir + "/first.h5";
  stop_opts.stop_at = 7;
  const auto first = frac::run_fpde_deck(PETSC_COMM_WORLD, deck, quiet, stop_opts);
  EXPECT_EQ(first.last_step, 7);
  EXPECT_EQ(first.checkpoint, dir + "/run.chk.h5");
  // The checkpoint at step 7, kept for continuing first.h5 below (later runs replace it).
  if (world_rank() == 0) {
    std::filesystem::copy_file(dir + "/run.chk.h5", dir + "/step7.chk.h5",
                               std::filesystem::copy_options::overwrite_existing);
  }
  MPI_Barrier(PETSC_COMM_WORLD);

  frac::FpdeRunOptions cont;
  cont.output_file = dir + "/second.h5";
  cont.restart = dir + "/run.chk.h5";
  const auto second = frac::run_fpde_deck(PETSC_COMM_WORLD, deck, quiet, cont);
  EXPECT_EQ(second.first_step, 7);
  EXPECT_EQ(second.last_step, 12);

  // A stop signal after the first step: checkpoint, fields so far, Interrupted; the
  // continuation then ends like the others.
  frac::FpdeRunOptions sig;
  sig.output_file = dir + "/signalled.h5";
  if (world_rank() == world_size() - 1) core::request_stop(SIGUSR1);
  EXPECT_THROW(frac::run_fpde_deck(PETSC_COMM_WORLD, deck, quiet, sig), core::Interrupted);
  core::clear_stop_request();
  frac::FpdeRunOptions after;
  after.output_file = dir + "/after.h5";
  after.restart = dir + "/run.chk.h5";
  const auto resumed = frac::run_fpde_deck(PETSC_COMM_WORLD, deck, quiet, after);
  EXPECT_EQ(resumed.first_step, 1);
  io::H5Reader signalled(PETSC_COMM_WORLD, dir + "/signalled.h5");
  EXPECT_EQ(signalled.field_steps("u"), (std::vector<std::int64_t>{0}));

  io::H5Reader a(PETSC_COMM_WORLD, dir + "/full.h5");
  io::H5Reader b(PETSC_COMM_WORLD, dir + "/second.h5");
  EXPECT_EQ(b.field_steps("u"), (std::vector<std::int64_t>{7, 9, 12}));
  EXPECT_EQ(a.attribute_string("/", "history_method"), "soe");
  EXPECT_GT(a.attribute_int64("/", "soe_terms"), 10);
  DM da = nullptr;
  ASSERT_EQ(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR,
                         17, 21, PETSC_DECIDE, PETSC_DECIDE, 1, 0, nullptr, nullptr, &da),
            0);
  ASSERT_EQ(DMSetUp(da), 0);
  Vec x = nullptr;
  Vec y = nullptr;
  DMCreateGlobalVector(da, &x);
  DMCreateGlobalVector(da, &y);
  io::H5Reader c(PETSC_COMM_WORLD, dir + "/after.h5");
  for (std::int64_t step : {9, 12}) {
    a.read_level("u", step, da, x);
    b.read_level("u", step, da, y);
    PetscBool same = PETSC_FALSE;
    VecEqual(x, y, &same);
    EXPECT_TRUE(same) << "step " << step;
    c.read_level("u", step, da, y);
    VecEqual(x, y, &same);
    EXPECT_TRUE(same) << "step " << step << " after the signal";
  }

  // Resumed into the stopped run's own file, the run continues it: the levels before the
  // checkpoint's step stay, the rest is written again and appended, and the file holds the
  // uninterrupted run's levels (the stop's step 7, off the output schedule, is not kept).
  frac::FpdeRunOptions same;
  same.output_file = dir + "/first.h5";
  same.restart = dir + "/step7.chk.h5";
  frac::run_fpde_deck(PETSC_COMM_WORLD, deck, quiet, same);
  io::H5Reader d(PETSC_COMM_WORLD, dir + "/first.h5");
  EXPECT_EQ(d.field_steps("u"), (std::vector<std::int64_t>{0, 3, 6, 9, 12}));
  EXPECT_EQ(d.attribute_int64("/", "continued_at_step"), 7);
  for (std::int64_t step : {0, 3, 6, 9, 12}) {
    a.read_level("u", step, da, x);
    d.read_level("u", step, da, y);
    PetscBool equal = PETSC_FALSE;
    VecEqual(x, y, &equal);
    EXPECT_TRUE(equal) << "step " << step << " of the continued file";
  }
  VecDestroy(&x);
  VecDestroy(&y);
  DMDestroy(&da);
}

}  // namespace
