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

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

struct SubComm {
  MPI_Comm comm = MPI_COMM_NULL;
  explicit SubComm(int k) {
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() < k ? 0 : MPI_UNDEFINED, world_rank(), &comm);
  }
  SubComm(const SubComm&) = delete;
  SubComm& operator=(const SubComm&) = delete;
  ~SubComm() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

/// The process-wide stop flag is clear before and after each use, whatever the test does.
struct ClearStopFlag {
  ClearStopFlag() { core::clear_stop_request(); }
  ~ClearStopFlag() { core::clear_stop_request(); }
  ClearStopFlag(const ClearStopFlag&) = delete;
  ClearStopFlag& operator=(const ClearStopFlag&) = delete;
};

core::Logger quiet() {
  return core::Logger(world_rank(), core::LogLevel::warn, false);
}

/// True on every rank when `mine` is true on every rank.
bool all_ranks(bool mine) {
  int v = mine ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return v != 0;
}

/// A DMDA Vec in natural order on rank 0 of its communicator (empty elsewhere).
std::vector<double> natural_on_zero(DM da, Vec v) {
  Vec nat = nullptr, seq = nullptr;
  VecScatter sc = nullptr;
  FRACMFG_PETSC_CHECK(DMDACreateNaturalVector(da, &nat));
  FRACMFG_PETSC_CHECK(DMDAGlobalToNaturalBegin(da, v, INSERT_VALUES, nat));
  FRACMFG_PETSC_CHECK(DMDAGlobalToNaturalEnd(da, v, INSERT_VALUES, nat));
  FRACMFG_PETSC_CHECK(VecScatterCreateToZero(nat, &sc, &seq));
  FRACMFG_PETSC_CHECK(VecScatterBegin(sc, nat, seq, INSERT_VALUES, SCATTER_FORWARD));
  FRACMFG_PETSC_CHECK(VecScatterEnd(sc, nat, seq, INSERT_VALUES, SCATTER_FORWARD));
  PetscInt n = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(seq, &n));
  const PetscScalar* a = nullptr;
  FRACMFG_PETSC_CHECK(VecGetArrayRead(seq, &a));
  std::vector<double> out(a, a + n);
  FRACMFG_PETSC_CHECK(VecRestoreArrayRead(seq, &a));
  FRACMFG_PETSC_CHECK(VecScatterDestroy(&sc));
  FRACMFG_PETSC_CHECK(VecDestroy(&seq));
  FRACMFG_PETSC_CHECK(VecDestroy(&nat));
  return out;
}

/// Every U^n and M^n, level by level (natural order, on rank 0).
struct Levels {
  std::vector<std::vector<double>> u, m;
};

Levels levels_of(const mfg::Solver& solver) {
  Levels l;
  for (int n = 0; n <= solver.steps(); ++n) {
    l.u.push_back(natural_on_zero(solver.model().dm(), solver.u(n)));
    l.m.push_back(natural_on_zero(solver.model().dm(), solver.m(n)));
  }
  return l;
}

/// max over levels of max|a^n - b^n| / max|a^n| (1 when the shapes differ).
double relative_difference(const std::vector<std::vector<double>>& a,
                           const std::vector<std::vector<double>>& b) {
  if (a.size() != b.size()) return 1.0;
  double worst = 0.0;
  for (std::size_t n = 0; n < a.size(); ++n) {
    if (a[n].size() != b[n].size()) return 1.0;
    double diff = 0.0, size = 0.0;
    for (std::size_t i = 0; i < a[n].size(); ++i) {
      diff = std::max(diff, std::abs(a[n][i] - b[n][i]));
      size = std::max(size, std::abs(a[n][i]));
    }
    worst = std::max(worst, size > 0.0 ? diff / size : diff);
  }
  return worst;
}

// Two games that converge in a few dozen iterations: Anderson mixing with fixed damping in
// 1D, fictitious play in 2D.
const char* const kAnderson1d =
    "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
    "  grid: {points: [41]}\n  time: {horizon: 0.5, steps: 16}\n  diffusion: 0.05\n"
    "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
    "  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n"
    "  iteration: {damping: 0.6, anderson: 2, tolerance: 1.0e-8, max_iterations: MAXIT}\n";
const char* const kFictitious2d =
    "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: reflecting}\n"
    "  grid: {points: [12, 11]}\n  time: {horizon: 0.5, steps: 6}\n  diffusion: 0.03\n"
    "  coupling: {type: power, exponent: 2, potential: \"(x-0.5)^2\"}\n"
    "  initial_density: \"exp(-((x-0.3)^2+(y-0.6)^2)/0.03)\"\n"
    "  terminal_cost: \"(y-0.2)^2\"\n"
    "  iteration: {damping: 0.3, tolerance: 1.0e-6, max_iterations: MAXIT}\n";

MfgConfig config(const char* deck, int max_iterations) {
  std::string text = deck;
  text.replace(text.find("MAXIT"), 5, std::to_string(max_iterations));
  return fracmfg::io::Deck::from_string(text, "interrupt.yaml").mfg();
}

class MfgInterrupt : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_hjb_ksp_rtol", "1e-13"));
    FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_fp_ksp_rtol", "1e-14"));
  }
  std::string dir() const {
    const std::string deck = GetParam();
    return fracmfg::test::scratch_dir(MPI_COMM_WORLD,
                                      "mfg_interrupt_np" + std::to_string(world_size()) + "_" +
                                          (deck == kAnderson1d ? "anderson" : "damped"));
  }
};

TEST_P(MfgInterrupt, StopOnOneRankCheckpointsAndResumesToTheUninterruptedResult) {
  constexpr int kMaxIterations = 300;
  constexpr int kStopAfter = 3;  // two iterations, then the request, then one more
  const std::string file = dir() + "/stop.chk.h5";
  const ClearStopFlag clear;
  core::InterruptGuard guard;

  // Uninterrupted, to convergence.
  Levels whole;
  int whole_iterations = 0;
  {
    mfg::Solver solver(MPI_COMM_WORLD, config(GetParam(), kMaxIterations), nullptr, quiet());
    const mfg::SolveResult r = solver.solve();
    ASSERT_TRUE(r.converged) << "the test game must converge";
    ASSERT_GT(r.iterations, kStopAfter + 2) << "the test game converges too fast to stop it";
    whole_iterations = r.iterations;
    whole = levels_of(solver);
  }

  // Stopped: two iterations, then a stop request on the last rank only (a signal caught
  // there); solve() finishes the iteration it is in, checkpoints, throws on every rank.
  {
    mfg::Solver solver(MPI_COMM_WORLD, config(GetParam(), kMaxIterations), nullptr, quiet());
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
    EXPECT_TRUE(all_ranks(step == kStopAfter)) << "rank " << world_rank() << ": step " << step;
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
    mfg::Solver solver(sub.comm, config(GetParam(), kMaxIterations), nullptr, quiet());
    solver.restart(file);
    EXPECT_EQ(solver.iterations(), kStopAfter);
    const mfg::SolveResult r = solver.solve();
    EXPECT_TRUE(r.converged);
    EXPECT_EQ(r.iterations, whole_iterations) << ranks << " rank(s)";
    const Levels resumed = levels_of(solver);
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
  mfg::Solver solver(MPI_COMM_WORLD, config(GetParam(), 300), nullptr, quiet());
  solver.iterate();
  solver.iterate();
  if (world_rank() == world_size() - 1) core::request_stop(SIGTERM);
  std::int64_t step = -1;
  try {
    solver.solve({file, 2});
  } catch (const core::Interrupted& e) {
    step = e.step();
  }
  EXPECT_TRUE(all_ranks(step == 3));
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
  mfg::Solver solver(MPI_COMM_WORLD, config(GetParam(), 3), nullptr, quiet());
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
  EXPECT_TRUE(all_ranks(!interrupted));
  EXPECT_EQ(r.iterations, 3);
  if (world_rank() == 0) {
    EXPECT_FALSE(std::filesystem::exists(file)) << file;
  }
}

TEST_P(MfgInterrupt, WithoutAStopRequestSolveIgnoresTheGuard) {
  const ClearStopFlag clear;
  core::InterruptGuard guard;
  mfg::Solver solver(MPI_COMM_WORLD, config(GetParam(), 4), nullptr, quiet());
  const mfg::SolveResult r = solver.solve({dir() + "/none.chk.h5", 0});
  EXPECT_EQ(r.iterations, 4);
}

INSTANTIATE_TEST_SUITE_P(Games, MfgInterrupt, ::testing::Values(kAnderson1d, kFictitious2d),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           return std::string(p.param == kAnderson1d ? "Anderson1d" : "Damped2d");
                         });

}  // namespace
