// Graceful stop of the MFG fixed point: a stop request on one rank (what a caught SIGUSR1
// does) makes solve() write its checkpoint after the current outer iteration and throw
// core::Interrupted on every rank; a solver restarted from that checkpoint, on any rank
// count, ends with the uninterrupted run's U, M and iteration count.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscdmda.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/mfg_configs.hpp"
#include "common/mpi_support.hpp"
#include "common/test_support.hpp"
#include "fracmfg/core/interrupt.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/checkpoint.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mpi/h5_helpers/h5_test_util.hpp"

namespace {

namespace core = fracmfg::core;
namespace mfg = fracmfg::mfg;
using fracmfg::io::MfgConfig;
using fracmfg::test::levels_of;
using fracmfg::test::MfgLevels;
using fracmfg::test::on_all_ranks;
using fracmfg::test::quiet_logger;
using fracmfg::test::relative_difference;
using fracmfg::test::SubComm;
using fracmfg::test::world_rank;
using fracmfg::test::world_size;

/// The process-wide stop flag is clear before and after each use, whatever the test does.
struct ClearStopFlag {
  ClearStopFlag() { core::clear_stop_request(); }
  ~ClearStopFlag() { core::clear_stop_request(); }
  ClearStopFlag(const ClearStopFlag&) = delete;
  ClearStopFlag& operator=(const ClearStopFlag&) = delete;
};

// Two games that converge in a few dozen iterations: Anderson mixing with fixed damping in
// 1D, fictitious play in 2D.
const std::string kAnderson1d = fracmfg::test::periodic_1d_game(
    "{damping: 0.6, anderson: 2, tolerance: 1.0e-8, max_iterations: MAXIT}");
const std::string kFictitious2d =
    fracmfg::test::reflecting_2d_game("{damping: 0.3, tolerance: 1.0e-6, max_iterations: MAXIT}");

MfgConfig config(const char* deck, int max_iterations) {
  return fracmfg::test::mfg_config(deck, max_iterations, "interrupt.yaml");
}

class MfgInterrupt : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_hjb_ksp_rtol", "1e-13"));
    FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_fp_ksp_rtol", "1e-14"));
  }
  std::string dir() const {
    return fracmfg::test::scratch_dir(
        MPI_COMM_WORLD, fracmfg::test::per_rank_count(
                            "mfg_interrupt", GetParam() == kAnderson1d ? "anderson" : "damped"));
  }
};

TEST_P(MfgInterrupt, StopOnOneRankCheckpointsAndResumesToTheUninterruptedResult) {
  constexpr int kMaxIterations = 300;
  constexpr int kStopAfter = 3;  // two iterations, then the request, then one more
  const std::string file = dir() + "/stop.chk.h5";
  const ClearStopFlag clear;
  core::InterruptGuard guard;

  // Uninterrupted, to convergence.
  MfgLevels whole;
  int whole_iterations = 0;
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(config(GetParam(), kMaxIterations)),
                       nullptr, quiet_logger());
    const mfg::SolveResult r = solver.solve();
    ASSERT_TRUE(r.converged) << "the test game must converge";
    ASSERT_GT(r.iterations, kStopAfter + 2) << "the test game converges too fast to stop it";
    whole_iterations = r.iterations;
    whole = levels_of(solver);
  }

  // Stopped: two iterations, then a stop request on the last rank only (a signal caught
  // there); solve() finishes the iteration it is in, checkpoints, throws on every rank.
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(config(GetParam(), kMaxIterations)),
                       nullptr, quiet_logger());
    solver.iterate();
    solver.iterate();
    if (world_rank() == world_size() - 1) core::request_stop(SIGUSR1);
    EXPECT_EQ(core::signal_received(), world_rank() == world_size() - 1 ? SIGUSR1 : 0);
    std::int64_t step = -1;
    std::string checkpoint;
    try {
      solver.solve({file, 0});
    } catch (const core::Interrupted& e) {
      step = e.step();
      checkpoint = e.checkpoint();
      EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::interrupted);
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    }
    EXPECT_TRUE(on_all_ranks(step == kStopAfter)) << "rank " << world_rank() << ": step " << step;
    EXPECT_EQ(checkpoint, file);
    EXPECT_EQ(solver.iterations(), kStopAfter);
  }
  core::clear_stop_request();
  if (world_rank() == 0) {
    EXPECT_TRUE(std::filesystem::exists(file)) << file;
  }
  {
    fracmfg::io::CheckpointReader reader(MPI_COMM_WORLD, file);
    EXPECT_EQ(reader.step(), kStopAfter);
    EXPECT_EQ(reader.scalar_int64("iteration"), kStopAfter);
    EXPECT_EQ(reader.written_by_ranks(), world_size());
  }

  // Resumed on every rank count up to the job's: the uninterrupted result.
  for (int ranks = 1; ranks <= world_size(); ++ranks) {
    SubComm sub(ranks);
    if (sub.comm == MPI_COMM_NULL) continue;
    mfg::Solver solver(sub.comm, mfg::problem_from_config(config(GetParam(), kMaxIterations)),
                       nullptr, quiet_logger());
    solver.restart(file);
    EXPECT_EQ(solver.iterations(), kStopAfter);
    const mfg::SolveResult r = solver.solve();
    EXPECT_TRUE(r.converged);
    EXPECT_EQ(r.iterations, whole_iterations) << ranks << " rank(s)";
    const MfgLevels resumed = levels_of(solver);
    if (world_rank() != 0) continue;
    const double du = relative_difference(whole.u, resumed.u);
    const double dm = relative_difference(whole.m, resumed.m);
    std::printf(
        "  resumed on %d of %d rank(s) after %d of %d iterations: max relative "
        "difference u %.2e, m %.2e\n",
        ranks, world_size(), kStopAfter, whole_iterations, du, dm);
    EXPECT_LE(du, 1e-12) << ranks << " rank(s)";
    EXPECT_LE(dm, 1e-12) << ranks << " rank(s)";
  }
}

TEST_P(MfgInterrupt, StopWithPeriodicCheckpointsKeepsTheLatestState) {
  // Checkpoints every 2 iterations; the stop comes after iteration 3, so the file must hold
  // iteration 3 (written for the stop), not 2.
  const std::string file = dir() + "/periodic.chk.h5";
  const ClearStopFlag clear;
  core::InterruptGuard guard;
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(config(GetParam(), 300)), nullptr,
                     quiet_logger());
  solver.iterate();
  solver.iterate();
  if (world_rank() == world_size() - 1) core::request_stop(SIGTERM);
  std::int64_t step = -1;
  try {
    solver.solve({file, 2});
  } catch (const core::Interrupted& e) {
    step = e.step();
  }
  EXPECT_TRUE(on_all_ranks(step == 3));
  core::clear_stop_request();
  fracmfg::io::CheckpointReader reader(MPI_COMM_WORLD, file);
  EXPECT_EQ(reader.scalar_int64("iteration"), 3);
}

TEST_P(MfgInterrupt, StopInTheLastIterationEndsTheSolveNormally) {
  // max_iterations 3: the iteration after the request is the last one, so the solve ends
  // as it would have (no checkpoint to resume from is needed).
  const std::string file = dir() + "/last.chk.h5";
  const ClearStopFlag clear;
  core::InterruptGuard guard;
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(config(GetParam(), 3)), nullptr,
                     quiet_logger());
  solver.iterate();
  solver.iterate();
  if (world_rank() == world_size() - 1) core::request_stop(SIGUSR1);
  bool interrupted = false;
  mfg::SolveResult r;
  try {
    r = solver.solve({file, 0});
  } catch (const core::Interrupted&) {
    interrupted = true;
  }
  EXPECT_TRUE(on_all_ranks(!interrupted));
  EXPECT_EQ(r.iterations, 3);
  if (world_rank() == 0) {
    EXPECT_FALSE(std::filesystem::exists(file)) << file;
  }
}

TEST_P(MfgInterrupt, WithoutAStopRequestSolveIgnoresTheGuard) {
  const ClearStopFlag clear;
  core::InterruptGuard guard;
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(config(GetParam(), 4)), nullptr,
                     quiet_logger());
  const mfg::SolveResult r = solver.solve({dir() + "/none.chk.h5", 0});
  EXPECT_EQ(r.iterations, 4);
}

INSTANTIATE_TEST_SUITE_P(Games, MfgInterrupt,
                         ::testing::Values(kAnderson1d.c_str(), kFictitious2d.c_str()),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           return std::string(p.param == kAnderson1d ? "Anderson1d" : "Damped2d");
                         });

}  // namespace
