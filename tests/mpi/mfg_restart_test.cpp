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

fracmfg::core::Logger quiet() {
  return fracmfg::core::Logger(world_rank(), fracmfg::core::LogLevel::warn, false);
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
  VecScatterDestroy(&sc);
  VecDestroy(&seq);
  VecDestroy(&nat);
  return out;
}

struct Fields {
  std::vector<double> u, m;
  std::vector<double> change_u, change_m;
};

Fields fields_of(const mfg::Solver& solver) {
  Fields f;
  for (int n = 0; n <= solver.steps(); ++n) {
    const auto u = natural_on_zero(solver.model().dm(), solver.u(n));
    const auto m = natural_on_zero(solver.model().dm(), solver.m(n));
    f.u.insert(f.u.end(), u.begin(), u.end());
    f.m.insert(f.m.end(), m.begin(), m.end());
  }
  for (const auto& r : solver.history()) {
    f.change_u.push_back(r.change_u);
    f.change_m.push_back(r.change_m);
  }
  return f;
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0.0, size = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    size = std::max(size, std::abs(a[i]));
  }
  return a.size() == b.size() ? diff / size : 1.0;
}

// Both games keep iterating (tolerance far below reach), so every checked iteration does
// work; one uses Anderson mixing with fixed damping, the other fictitious play.
const char* const kAnderson1d =
    "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
    "  grid: {points: [41]}\n  time: {horizon: 0.5, steps: 16}\n  diffusion: 0.05\n"
    "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
    "  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n"
    "  iteration: {damping: 0.6, anderson: 2, tolerance: 1.0e-30, max_iterations: MAXIT}\n";
const char* const kFictitious2d =
    "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: reflecting}\n"
    "  grid: {points: [12, 11]}\n  time: {horizon: 0.5, steps: 6}\n  diffusion: 0.03\n"
    "  coupling: {type: power, exponent: 2, potential: \"(x-0.5)^2\"}\n"
    "  initial_density: \"exp(-((x-0.3)^2+(y-0.6)^2)/0.03)\"\n"
    "  terminal_cost: \"(y-0.2)^2\"\n"
    "  iteration: {schedule: fictitious_play, tolerance: 1.0e-30, max_iterations: MAXIT}\n";

MfgConfig config(const char* deck, int max_iterations) {
  std::string text = deck;
  text.replace(text.find("MAXIT"), 5, std::to_string(max_iterations));
  return fracmfg::io::Deck::from_string(text, "restart.yaml").mfg();
}

class MfgRestart : public ::testing::TestWithParam<const char*> {
 protected:
  std::string dir() const {
    const std::string deck = GetParam();
    return fracmfg::test::scratch_dir(MPI_COMM_WORLD,
                                      "mfg_restart_np" + std::to_string(world_size()) + "_" +
                                          (deck == kAnderson1d ? "anderson" : "fictitious"));
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
    mfg::Solver solver(MPI_COMM_WORLD, config(GetParam(), first + second), nullptr, quiet());
    for (int k = 0; k < first + second; ++k) solver.iterate();
    whole = fields_of(solver);
  }
  // Interrupted after `first` iterations.
  {
    mfg::Solver solver(MPI_COMM_WORLD, config(GetParam(), first + second), nullptr, quiet());
    for (int k = 0; k < first; ++k) solver.iterate();
    solver.write_checkpoint(file);
  }
  for (int ranks = 1; ranks <= world_size(); ++ranks) {
    SubComm sub(ranks);
    if (sub.comm == MPI_COMM_NULL) continue;
    mfg::Solver solver(sub.comm, config(GetParam(), first + second), nullptr, quiet());
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
    mfg::Solver solver(MPI_COMM_WORLD, config(GetParam(), 7), nullptr, quiet());
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
    mfg::Solver solver(MPI_COMM_WORLD, config(GetParam(), 10), nullptr, quiet());
    EXPECT_EQ(solver.solve().iterations, 10);
    whole = fields_of(solver);
  }
  {
    mfg::Solver solver(MPI_COMM_WORLD, config(GetParam(), 10), nullptr, quiet());
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
    mfg::Solver solver(MPI_COMM_WORLD, config(GetParam(), 2), nullptr, quiet());
    solver.iterate();
    solver.write_checkpoint(file);
  }
  MfgConfig other = config(GetParam(), 2);
  other.time.steps += 1;
  mfg::Solver solver(MPI_COMM_WORLD, other, nullptr, quiet());
  try {
    solver.restart(file);
    ADD_FAILURE() << "restart accepted a checkpoint with other time steps";
  } catch (const fracmfg::core::CollectiveError& e) {
    EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::io);
    EXPECT_NE(std::string(e.what()).find("time steps"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, MfgRestart, ::testing::Values(kAnderson1d, kFictitious2d),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           return std::string(p.param == kAnderson1d ? "Anderson1d"
                                                                     : "FictitiousPlay2d");
                         });

}  // namespace
