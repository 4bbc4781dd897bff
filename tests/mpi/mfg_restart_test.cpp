// Checkpoint/restart of the MFG fixed point: a checkpoint written on all ranks of the job
// restarts on every rank count from 1 to the job's size and, iterated on, reproduces the
// uninterrupted run (to round-off; bit for bit on the writing rank count is not required).
// The checkpoint carries every time level of u and m, the iteration count, the damping
// schedule's state, the Anderson history and the convergence history; solve() writes one
// every `checkpoint.every` iterations; a checkpoint of another problem is refused.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscdmda.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/mfg_configs.hpp"
#include "common/mpi_support.hpp"
#include "common/test_support.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/checkpoint.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mpi/h5_helpers/h5_test_util.hpp"

namespace {

namespace mfg = fracmfg::mfg;
using fracmfg::io::MfgConfig;
using fracmfg::test::quiet_logger;
using fracmfg::test::relative_difference;
using fracmfg::test::SubComm;
using fracmfg::test::world_rank;
using fracmfg::test::world_size;

struct Fields {
  std::vector<double> u, m;
  std::vector<double> change_u, change_m;
};

Fields fields_of(const mfg::Solver& solver) {
  const fracmfg::test::MfgLevels levels = fracmfg::test::levels_of(solver);
  Fields f;
  f.u = fracmfg::test::flatten(levels.u);
  f.m = fracmfg::test::flatten(levels.m);
  for (const auto& r : solver.history()) {
    f.change_u.push_back(r.change_u);
    f.change_m.push_back(r.change_m);
  }
  return f;
}

// Both games keep iterating (tolerance far below reach), so every checked iteration does
// work; one uses Anderson mixing with fixed damping, the other fictitious play.
const std::string kAnderson1d = fracmfg::test::periodic_1d_game(
    "{damping: 0.6, anderson: 2, tolerance: 1.0e-30, max_iterations: MAXIT}");
const std::string kFictitious2d = fracmfg::test::reflecting_2d_game(
    "{schedule: fictitious_play, tolerance: 1.0e-30, max_iterations: MAXIT}");

MfgConfig config(const char* deck, int max_iterations) {
  return fracmfg::test::mfg_config(deck, max_iterations, "restart.yaml");
}

class MfgRestart : public ::testing::TestWithParam<const char*> {
 protected:
  std::string dir() const {
    return fracmfg::test::scratch_dir(
        MPI_COMM_WORLD, fracmfg::test::per_rank_count(
                            "mfg_restart", GetParam() == kAnderson1d ? "anderson" : "fictitious"));
  }
};

TEST_P(MfgRestart, CheckpointRestartsOnEveryRankCountWithTheUninterruptedResult) {
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_hjb_ksp_rtol", "1e-13"));
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_fp_ksp_rtol", "1e-14"));
  constexpr int first = 5, second = 6;
  const std::string file = dir() + "/iterate.chk.h5";
  // Uninterrupted.
  Fields whole;
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(config(GetParam(), first + second)),
                       nullptr, quiet_logger());
    for (int k = 0; k < first + second; ++k) solver.iterate();
    whole = fields_of(solver);
  }
  // Interrupted after `first` iterations.
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(config(GetParam(), first + second)),
                       nullptr, quiet_logger());
    for (int k = 0; k < first; ++k) solver.iterate();
    solver.write_checkpoint(file);
  }
  for (int ranks = 1; ranks <= world_size(); ++ranks) {
    SubComm sub(ranks);
    if (sub.comm == MPI_COMM_NULL) continue;
    mfg::Solver solver(sub.comm, mfg::problem_from_config(config(GetParam(), first + second)),
                       nullptr, quiet_logger());
    solver.restart(file);
    EXPECT_EQ(solver.iterations(), first);
    for (int k = 0; k < second; ++k) solver.iterate();
    const Fields resumed = fields_of(solver);
    if (world_rank() != 0) continue;
    const double du = relative_difference(whole.u, resumed.u);
    const double dm = relative_difference(whole.m, resumed.m);
    std::printf("  restart on %d of %d rank(s): max relative difference u %.2e, m %.2e\n", ranks,
                world_size(), du, dm);
    EXPECT_LT(du, 1e-11) << ranks << " rank(s)";
    EXPECT_LT(dm, 1e-11) << ranks << " rank(s)";
    ASSERT_EQ(resumed.change_u.size(), whole.change_u.size());
    EXPECT_EQ(resumed.change_u[first - 1], whole.change_u[first - 1]) << "restored history";
    EXPECT_LT(relative_difference(whole.change_u, resumed.change_u), 1e-6);
  }
}

TEST_P(MfgRestart, SolveWritesCheckpointsThatResumeToTheSameResult) {
  const std::string file = dir() + "/solve.chk.h5";
  // 7 iterations with a checkpoint every 3: the checkpoint holds iteration 6.
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(config(GetParam(), 7)), nullptr,
                       quiet_logger());
    const mfg::SolveResult r = solver.solve({file, 3});
    EXPECT_FALSE(r.converged);
    EXPECT_EQ(r.iterations, 7);
  }
  {
    fracmfg::io::CheckpointReader reader(MPI_COMM_WORLD, file);
    EXPECT_EQ(reader.step(), 6);
    EXPECT_EQ(reader.scalar_int64("iteration"), 6);
  }
  Fields whole, resumed;
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(config(GetParam(), 10)), nullptr,
                       quiet_logger());
    EXPECT_EQ(solver.solve().iterations, 10);
    whole = fields_of(solver);
  }
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(config(GetParam(), 10)), nullptr,
                       quiet_logger());
    solver.restart(file);
    EXPECT_EQ(solver.solve().iterations, 10);
    resumed = fields_of(solver);
  }
  if (world_rank() == 0) {
    EXPECT_LT(relative_difference(whole.u, resumed.u), 1e-11);
    EXPECT_LT(relative_difference(whole.m, resumed.m), 1e-11);
  }
}

TEST_P(MfgRestart, CheckpointOfAnotherProblemIsRefusedOnEveryRank) {
  const std::string file = dir() + "/other.chk.h5";
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(config(GetParam(), 2)), nullptr,
                       quiet_logger());
    solver.iterate();
    solver.write_checkpoint(file);
  }
  MfgConfig other = config(GetParam(), 2);
  other.time.steps += 1;
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(other), nullptr, quiet_logger());
  try {
    solver.restart(file);
    ADD_FAILURE() << "restart accepted a checkpoint with other time steps";
  } catch (const fracmfg::core::CollectiveError& e) {
    EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::io);
    EXPECT_NE(std::string(e.what()).find("time steps"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, MfgRestart,
                         ::testing::Values(kAnderson1d.c_str(), kFictitious2d.c_str()),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           return std::string(p.param == kAnderson1d ? "Anderson1d"
                                                                     : "FictitiousPlay2d");
                         });

}  // namespace
