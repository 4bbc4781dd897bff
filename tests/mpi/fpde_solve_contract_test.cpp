// frac::FpdeSolver::solve keeps the family contract (core/solve_control.hpp): checkpoints
// every `every` steps, a stop request answered after the current step with a checkpoint and
// core::Interrupted, an early end (last < steps) leaving a checkpoint there, and restart()
// from any of them continuing to the uninterrupted result bit for bit on the same ranks.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscvec.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>

#include "fracmfg/core/interrupt.hpp"
#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/frac/fpde_solver.hpp"

namespace {

using namespace fracmfg;
using frac::FpdeProblem;
using frac::FpdeSolver;

constexpr double kPi = 3.14159265358979323846;

FpdeProblem problem() {
  FpdeProblem p;
  p.order = 0.6;
  p.grid.points = {41};
  p.time.steps = 24;
  p.initial = [](double x, double, double) { return std::sin(kPi * x); };
  p.source = [](double x, double, double t) { return (1.0 + t) * x * (1.0 - x); };
  return p;
}

std::string scratch(const std::string& name) {
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  int size = 1;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const auto dir =
      std::filesystem::temp_directory_path() / ("fracmfg_fpde_solve_np" + std::to_string(size));
  if (rank == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(PETSC_COMM_WORLD);
  return (dir / name).string();
}

double max_difference(const FpdeSolver& a, const FpdeSolver& b) {
  Vec d = nullptr;
  VecDuplicate(a.solution(), &d);
  VecWAXPY(d, -1.0, b.solution(), a.solution());
  PetscReal norm = 0.0;
  VecNorm(d, NORM_INFINITY, &norm);
  VecDestroy(&d);
  return norm;
}

TEST(FpdeSolveContract, CheckpointsStopsAndEarlyEnds) {
  FpdeSolver whole(PETSC_COMM_WORLD, problem());
  std::int64_t calls = 0;
  const frac::FpdeSolveResult all = whole.solve({}, -1, [&](const FpdeSolver&) { ++calls; });
  EXPECT_EQ(all.first_step, 0);
  EXPECT_EQ(all.last_step, 24);
  EXPECT_EQ(all.checkpoints, 0);
  EXPECT_EQ(calls, 24);
  EXPECT_TRUE(whole.done());

  // Every 5 steps, to step 12 (early end): checkpoints at 5 and 10 and one at 12.
  const std::string file = scratch("every.chk.h5");
  {
    FpdeSolver part(PETSC_COMM_WORLD, problem());
    const frac::FpdeSolveResult r = part.solve({file, 5}, 12);
    EXPECT_EQ(r.last_step, 12);
    EXPECT_EQ(r.checkpoints, 3);
    EXPECT_EQ(r.checkpoint, file);
  }
  {
    FpdeSolver resumed(PETSC_COMM_WORLD, problem());
    resumed.restart(file);
    EXPECT_EQ(resumed.step(), 12);
    const frac::FpdeSolveResult r = resumed.solve({file, 5});
    EXPECT_EQ(r.first_step, 12);
    EXPECT_EQ(r.last_step, 24);
    EXPECT_EQ(r.checkpoints, 2);  // steps 15 and 20
    EXPECT_EQ(max_difference(whole, resumed), 0.0);
  }

  // A stop request during step 7 (set on rank 0 only: every rank must stop together).
  const std::string stop_file = scratch("stop.chk.h5");
  {
    FpdeSolver stopped(PETSC_COMM_WORLD, problem());
    int rank = 0;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    std::int64_t at = -1;
    try {
      stopped.solve({stop_file, 0}, -1, [&](const FpdeSolver& s) {
        if (s.step() == 7 && rank == 0) core::request_stop(10);
      });
    } catch (const core::Interrupted& e) {
      at = e.step();
      EXPECT_EQ(e.checkpoint(), stop_file);
    }
    core::clear_stop_request();
    EXPECT_EQ(at, 7);
    EXPECT_EQ(stopped.step(), 7);
  }
  {
    FpdeSolver resumed(PETSC_COMM_WORLD, problem());
    resumed.restart(stop_file);
    EXPECT_EQ(resumed.step(), 7);
    resumed.solve();
    EXPECT_EQ(max_difference(whole, resumed), 0.0);
  }
}

}  // namespace
