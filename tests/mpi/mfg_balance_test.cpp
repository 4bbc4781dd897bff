// mfg::Solver's grid load balance (Solver::set_balance, the deck's execution.balance): with
// an injected speed per rank the grid is re-split between outer iterations in proportion to
// the speeds, every level of U and M and the Anderson history move without loss (a balanced
// run agrees with a static one to round-off, through re-splits in both directions), a
// checkpoint written after a re-split restarts on one rank to the same result, and the
// split follows the speeds a GPU placement gives (some ranks with a device, some without).
// 1D, 2D and 3D, periodic and reflecting, local and nonlocal couplings, finite differences
// and particles.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscsys.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/mfg_configs.hpp"
#include "common/mpi_support.hpp"
#include "common/test_support.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/core/solve_control.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/placement.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"

namespace {

namespace mfg = fracmfg::mfg;
using fracmfg::test::relative_difference;
using fracmfg::test::SubComm;
using fracmfg::test::world_rank;
using fracmfg::test::world_size;

struct Case {
  const char* name;
  const char* deck;
};

const Case kCases[] = {
    {"periodic_1d_log_anderson",
     "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
     "  grid: {points: [61]}\n  time: {horizon: 0.5, steps: 20}\n  diffusion: 0.05\n"
     "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
     "  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n"
     "  iteration: {damping: 0.5, anderson: 2, tolerance: 1.0e-11, max_iterations: 200}\n"},
    {"reflecting_1d_nonlocal_congestion",
     "problem: mfg\nmfg:\n  domain: {length: [2.0], boundary: reflecting}\n"
     "  grid: {points: [47]}\n  time: {horizon: 0.5, steps: 16}\n  diffusion: 0.03\n"
     "  hamiltonian: {type: congestion, epsilon: 0.2, alpha: 1, control_cost: \"1 + 0.5*x\"}\n"
     "  coupling: {type: nonlocal, width: 0.2, strength: 2, potential: \"(x-1.5)^2\"}\n"
     "  initial_density: \"exp(-(x-0.6)^2/0.05)\"\n  terminal_cost: \"0.5*(x-1)^2\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-11, max_iterations: 300}\n"},
    {"reflecting_2d_log_anderson",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 0.8], boundary: reflecting}\n"
     "  grid: {points: [17, 13]}\n  time: {horizon: 0.5, steps: 8}\n  diffusion: 0.02\n"
     "  coupling: {type: log, potential: \"3*exp(-((x-0.5)^2+(y-0.4)^2)/0.02)\"}\n"
     "  initial_density: \"exp(-((x-0.2)^2+(y-0.4)^2)/0.02)\"\n"
     "  terminal_cost: \"(x-0.9)^2\"\n"
     "  iteration: {damping: 0.5, anderson: 2, tolerance: 1.0e-10, max_iterations: 200}\n"},
    {"periodic_2d_nonlocal_power",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: periodic}\n"
     "  grid: {points: [14, 15]}\n  time: {horizon: 0.4, steps: 8}\n  diffusion: 0.02\n"
     "  hamiltonian: {type: power, exponent: 1.5}\n"
     "  coupling: {type: nonlocal, width: 0.15, potential: \"cos(2*pi*x)*sin(2*pi*y)\"}\n"
     "  initial_density: \"1 + 0.8*sin(2*pi*x)\"\n"
     "  iteration: {damping: 0.3, tolerance: 1.0e-10, max_iterations: 300}\n"},
    {"reflecting_3d_log_power",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 0.8, 0.9], boundary: reflecting}\n"
     "  grid: {points: [10, 8, 9]}\n  time: {horizon: 0.4, steps: 6}\n  diffusion: 0.03\n"
     "  hamiltonian: {type: power, exponent: 1.8}\n"
     "  coupling: {type: log, potential: \"2*exp(-((x-0.5)^2+(y-0.4)^2+(z-0.45)^2)/0.03)\"}\n"
     "  initial_density: \"exp(-((x-0.2)^2+(y-0.4)^2+(z-0.3)^2)/0.03)\"\n"
     "  terminal_cost: \"(x-0.9)^2 + 0.5*(z-0.6)^2\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 200}\n"},
    {"periodic_1d_particles",
     "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
     "  grid: {points: [48]}\n  time: {horizon: 0.5, steps: 10}\n  diffusion: 0.05\n"
     "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
     "  initial_density: \"exp(-(x-0.3)^2/0.02)\"\n"
     "  fokker_planck: {method: particles, particles: 4000, seed: 3}\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-6, max_iterations: 12}\n"},
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

/// Rank r runs (r + 1) times as fast as rank 0 up to iteration 5 and the other way round
/// after it: with observations after every iteration, patience 1 and a cool-down of 3, the
/// grid is re-split after iteration 1 and again once the smoothed speeds have turned.
double two_phase_speed(int rank, std::int64_t iteration) {
  const int p = world_size();
  return iteration <= 5 ? 1.0 + rank : 1.0 + (p - 1 - rank);
}

fracmfg::core::BalanceOptions balanced(double (*speed)(int, std::int64_t)) {
  fracmfg::core::BalanceOptions o;
  o.enabled = true;
  o.interval = 1;
  o.patience = 1;
  o.speed = speed;
  return o;
}

struct RunFields {
  fracmfg::test::MfgLevels levels;
  int iterations = 0;
  int resplits = 0;
};

RunFields solve_on(MPI_Comm comm, const fracmfg::io::MfgConfig& cfg, bool balance) {
  mfg::Solver solver(comm, mfg::problem_from_config(cfg), nullptr, fracmfg::test::quiet_logger());
  if (balance) solver.set_balance(balanced(two_phase_speed));
  const auto r = solver.solve();
  RunFields out;
  out.iterations = r.iterations;
  out.resplits = solver.resplits();
  out.levels = fracmfg::test::levels_of(solver);
  return out;
}

bool particles(const Case& c) {
  return std::string(c.name).find("particles") != std::string::npos;
}

class MfgBalance : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    // Iterative 2D solves tightly, so that only round-off separates the splits.
    FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_hjb_ksp_rtol", "1e-13"));
    FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_fp_ksp_rtol", "1e-14"));
  }
};

TEST_P(MfgBalance, BalancedRunEqualsStaticRun) {
  const auto cfg = fracmfg::io::Deck::from_string(GetParam().deck, "balance.yaml").mfg();
  const RunFields balanced_run = solve_on(MPI_COMM_WORLD, cfg, true);
  const RunFields static_run = solve_on(MPI_COMM_WORLD, cfg, false);
  if (world_size() > 1) {
    // Re-split after iteration 1, and again when the speeds turn (when the run lasts).
    EXPECT_GE(balanced_run.resplits, 1);
    if (balanced_run.iterations >= 9) {
      EXPECT_GE(balanced_run.resplits, 2);
    }
  } else {
    EXPECT_EQ(balanced_run.resplits, 0);
  }
  EXPECT_EQ(static_run.resplits, 0);
  if (world_rank() != 0) return;
  const double du = relative_difference(balanced_run.levels.u, static_run.levels.u);
  const double dm = relative_difference(balanced_run.levels.m, static_run.levels.m);
  std::printf("  %s: %d vs %d iterations, %d re-splits, max relative difference u %.2e, m %.2e\n",
              GetParam().name, balanced_run.iterations, static_run.iterations,
              balanced_run.resplits, du, dm);
  EXPECT_EQ(balanced_run.iterations, static_run.iterations);
  EXPECT_LT(du, 1e-10);
  EXPECT_LT(dm, 1e-10);
}

// The row loops' CPU time (the balance's measure of a rank's speed) is counted only while a
// balance observes it: reading the thread CPU clock is a system call, and a game without the
// balance must not pay two per loop call. With the balance it is counted through re-splits
// (each re-split builds a new model).
TEST(MfgBalanceWork, GridWorkIsCountedOnlyWhileTheBalanceObservesIt) {
  const auto cfg = fracmfg::io::Deck::from_string(kCases[0].deck, "balance.yaml").mfg();
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger());
    solver.solve();
    EXPECT_FALSE(solver.model().work_accounting());
    EXPECT_EQ(solver.model().work_seconds(), 0.0);
  }
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                     fracmfg::test::quiet_logger());
  solver.set_balance(balanced(two_phase_speed));
  EXPECT_TRUE(solver.model().work_accounting());
  solver.solve();
  EXPECT_TRUE(solver.model().work_accounting());
  EXPECT_GT(solver.model().work_seconds(), 0.0);
  if (world_size() > 1) {
    EXPECT_GE(solver.resplits(), 1);
  }
  fracmfg::core::BalanceOptions off;
  solver.set_balance(off);
  EXPECT_FALSE(solver.model().work_accounting());
}

// A checkpoint written after re-splits (by every rank of the job) restarts on one rank and
// ends where the uninterrupted static run ends.
TEST_P(MfgBalance, CheckpointAfterResplitRestartsOnOneRank) {
  if (particles(GetParam())) GTEST_SKIP() << "the particle restart is tested in mfg_particles";
  const auto cfg = fracmfg::io::Deck::from_string(GetParam().deck, "balance.yaml").mfg();
  const fracmfg::test::SharedTempDir dir("fracmfg-mfg-balance");
  const std::string file = dir.path() + "/restart.chk.h5";
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger());
    solver.set_balance(balanced(two_phase_speed));
    for (int k = 0; k < 7 && !solver.converged(); ++k) solver.iterate();
    if (world_size() > 1) {
      EXPECT_GE(solver.resplits(), 1);
    }
    solver.write_checkpoint(file);
  }
  const RunFields reference = solve_on(MPI_COMM_WORLD, cfg, false);
  SubComm one(1);
  if (one.comm != MPI_COMM_NULL) {
    mfg::Solver solver(one.comm, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger());
    solver.restart(file);
    const auto r = solver.solve();
    const fracmfg::test::MfgLevels levels = fracmfg::test::levels_of(solver);
    const double du = relative_difference(levels.u, reference.levels.u);
    const double dm = relative_difference(levels.m, reference.levels.m);
    std::printf("  %s: restart on 1 rank, %d vs %d iterations, difference u %.2e, m %.2e\n",
                GetParam().name, r.iterations, reference.iterations, du, dm);
    EXPECT_EQ(r.iterations, reference.iterations);
    EXPECT_LT(du, 1e-10);
    EXPECT_LT(dm, 1e-10);
  }
}

// A restart on as many ranks with the balance on continues on the split the checkpoint was
// written with (no re-split to wait for) and ends where the static run ends; with the
// balance off it keeps PETSc's even split.
TEST_P(MfgBalance, RestartWithTheBalanceContinuesOnTheWrittenSplit) {
  if (particles(GetParam())) GTEST_SKIP() << "the particle restart is tested in mfg_particles";
  const auto cfg = fracmfg::io::Deck::from_string(GetParam().deck, "balance.yaml").mfg();
  const fracmfg::test::SharedTempDir dir("fracmfg-mfg-balance-split");
  const std::string file = dir.path() + "/restart.chk.h5";
  PetscInt written = 0;
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger());
    solver.set_balance(balanced(two_phase_speed));
    // Re-split after iteration 1 (rank r r + 1 times as fast), held through the cool-down.
    for (int k = 0; k < 3 && !solver.converged(); ++k) solver.iterate();
    written = solver.model().box().count();
    solver.write_checkpoint(file);
  }
  PetscInt even = 0;
  {
    mfg::Solver plain(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                      fracmfg::test::quiet_logger());
    even = plain.model().box().count();
    plain.restart(file);
    EXPECT_EQ(plain.model().box().count(), even);
    EXPECT_EQ(plain.resplits(), 0);
  }
  const RunFields reference = solve_on(MPI_COMM_WORLD, cfg, false);
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                     fracmfg::test::quiet_logger());
  // Measured speeds (none injected), a threshold no observation reaches: no further re-split.
  fracmfg::core::BalanceOptions o;
  o.enabled = true;
  o.threshold = 1e6;
  solver.set_balance(o);
  solver.restart(file);
  EXPECT_EQ(solver.model().box().count(), written);
  int differs = written != even ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &differs, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(differs, world_size() > 1 ? 1 : 0);  // the written split is not PETSc's
  EXPECT_EQ(solver.resplits(), differs);
  const auto r = solver.solve();
  const fracmfg::test::MfgLevels levels = fracmfg::test::levels_of(solver);
  const double du = relative_difference(levels.u, reference.levels.u);
  const double dm = relative_difference(levels.m, reference.levels.m);
  if (world_rank() == 0) {
    std::printf("  %s: restart on the written split (%s), %d vs %d iterations, u %.2e, m %.2e\n",
                GetParam().name, differs ? "not even" : "even", r.iterations, reference.iterations,
                du, dm);
  }
  EXPECT_EQ(r.iterations, reference.iterations);
  EXPECT_LT(du, 1e-10);
  EXPECT_LT(dm, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Games, MfgBalance, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return std::string(p.param.name);
                         });

// The speeds of a node whose ranks are placed on its GPUs (exec::place_node): p - 1 devices,
// at most one rank per device, so the last rank has none. A rank with a device is modelled
// as kGpuFactor times a core, scaled by the device's capability relative to the first one;
// the first device is twice the second, which is what "unequal GPUs" means here.
constexpr double kGpuFactor = 4.0;

std::vector<double> placed_speeds() {
  const int p = world_size();
  std::string yaml = "host_name: n\ncuda_compiled: true\n";
  if (p > 1) yaml += "gpus:\n";
  for (int g = 0; g < p - 1; ++g) {
    const int mp = g == 0 ? 108 : 54;
    yaml +=
        "  - {name: g, cc: \"8.0\", multiprocessors: " + std::to_string(mp) + ", memory_gb: 16}\n";
  }
  const fracmfg::exec::Hardware hw = fracmfg::exec::Hardware::from_yaml(yaml, "node.yaml");
  const std::vector<fracmfg::exec::DeviceSlot> slots = fracmfg::exec::place_node(hw, p, 1);
  std::vector<double> speeds;
  for (const auto& s : slots) {
    if (s.on_cpu()) {
      speeds.push_back(1.0);
    } else {
      const double relative = fracmfg::exec::device_score(hw.gpus[s.gpu_index]) /
                              fracmfg::exec::device_score(hw.gpus[0]);
      speeds.push_back(kGpuFactor * relative / s.sharing);
    }
  }
  return speeds;
}

double placed_speed(int rank, std::int64_t) {
  static const std::vector<double> speeds = placed_speeds();
  return speeds.at(static_cast<std::size_t>(rank));
}

// After the first observation the owned points follow the placed speeds: in 1D each rank's
// count is its proportional share up to rounding; in 2D and 3D (a tensor-product split) up
// to one grid line (plane) across the split axis.
void expect_split_follows_speeds(const char* deck, PetscInt line) {
  const auto cfg = fracmfg::io::Deck::from_string(deck, "placed.yaml").mfg();
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                     fracmfg::test::quiet_logger());
  fracmfg::core::BalanceOptions o = balanced(placed_speed);
  solver.set_balance(o);
  solver.iterate();
  const std::vector<double> speeds = placed_speeds();
  double total_speed = 0.0;
  for (double s : speeds) total_speed += s;
  PetscInt total = 0;
  const PetscInt mine = solver.model().box().count();
  MPI_Allreduce(&mine, &total, 1, MPIU_INT, MPI_SUM, MPI_COMM_WORLD);
  const double share =
      static_cast<double>(total) * speeds[static_cast<std::size_t>(world_rank())] / total_speed;
  std::printf("  rank %d: speed %.2f, %lld of %lld points (proportional share %.1f)\n",
              world_rank(), speeds[static_cast<std::size_t>(world_rank())],
              static_cast<long long>(mine), static_cast<long long>(total), share);
  EXPECT_LE(std::fabs(static_cast<double>(mine) - share), static_cast<double>(line));
  EXPECT_EQ(solver.resplits(), world_size() > 1 ? 1 : 0);
}

TEST(MfgBalanceSplit, FollowsGpuPlacementIn1d) {
  expect_split_follows_speeds(
      "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
      "  grid: {points: [301]}\n  time: {horizon: 0.2, steps: 4}\n  diffusion: 0.05\n"
      "  coupling: {type: log}\n  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n"
      "  iteration: {max_iterations: 5}\n",
      1);
}

TEST(MfgBalanceSplit, FollowsGpuPlacementIn2d) {
  expect_split_follows_speeds(
      "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: reflecting}\n"
      "  grid: {points: [30, 30]}\n  time: {horizon: 0.2, steps: 3}\n  diffusion: 0.05\n"
      "  coupling: {type: log}\n  initial_density: \"exp(-((x-0.3)^2+y^2)/0.05)\"\n"
      "  iteration: {max_iterations: 5}\n",
      30);
}

TEST(MfgBalanceSplit, FollowsGpuPlacementIn3d) {
  expect_split_follows_speeds(
      "problem: mfg\nmfg:\n  domain: {length: [2.0, 0.5, 0.5], boundary: reflecting}\n"
      "  grid: {points: [24, 6, 6]}\n  time: {horizon: 0.2, steps: 3}\n  diffusion: 0.05\n"
      "  coupling: {type: log}\n  initial_density: \"exp(-((x-0.6)^2+y^2+z^2)/0.05)\"\n"
      "  iteration: {max_iterations: 5}\n",
      36);
}

}  // namespace
