// frac::FpdeSolver's load balance (FpdeBalanceOptions): with an injected speed per rank the
// grid is re-split between steps in proportion to the speeds, the solution and the L1
// history move without loss (a balanced run agrees with a static one to round-off, through
// two re-splits), and a checkpoint written after a re-split restarts on another rank count.
// Cases: time_fractional with SOE and direct histories, 1D and 2D, and space_fractional.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscsys.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/fpde_cases.hpp"
#include "common/mpi_support.hpp"
#include "common/scoped_options.hpp"
#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/frac/fpde_run.hpp"
#include "fracmfg/frac/fpde_solver.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/io/h5_reader.hpp"
#include "fracmfg/io/h5_writer.hpp"

namespace {

using namespace fracmfg;
using frac::FpdeSolver;
using Boundary = io::FpdeConfig::Domain::Boundary;
using Type = io::FpdeConfig::Type;
using HistoryMethod = io::FpdeConfig::History::Method;
using fracmfg::test::world_rank;
using fracmfg::test::world_size;

using Named = fracmfg::test::NamedFpdeConfig;

io::FpdeConfig base(Type type, int dim, Boundary b, int points, int steps) {
  return fracmfg::test::fpde_base_config(type, dim, b, points, steps);
}

std::vector<Named> cases() {
  std::vector<Named> v;
  {
    auto c = base(Type::time_fractional, 1, Boundary::dirichlet, 61, 24);
    c.time.grading = 2.0;
    c.history.method = HistoryMethod::soe;
    v.push_back({"time 1D dirichlet soe graded", c});
  }
  {
    auto c = base(Type::time_fractional, 1, Boundary::periodic, 60, 20);
    c.history.method = HistoryMethod::direct;
    v.push_back({"time 1D periodic direct", c});
  }
  {
    auto c = base(Type::time_fractional, 1, Boundary::neumann, 50, 20);
    c.history.method = HistoryMethod::soe;
    c.source = {"u*(1-u)", {"x", "y", "t", "u"}};
    v.push_back({"time 1D neumann soe nonlinear", c});
  }
  {
    auto c = base(Type::time_fractional, 2, Boundary::neumann, 21, 16);
    c.time.grading = 1.5;
    c.history.method = HistoryMethod::soe;
    v.push_back({"time 2D neumann soe graded", c});
  }
  {
    auto c = base(Type::time_fractional, 2, Boundary::dirichlet, 19, 16);
    c.history.method = HistoryMethod::direct;
    v.push_back({"time 2D dirichlet direct", c});
  }
  v.push_back({"riesz 1D dirichlet", base(Type::space_fractional, 1, Boundary::dirichlet, 90, 16)});
  {
    auto c = base(Type::space_fractional, 1, Boundary::dirichlet, 70, 16);
    c.diffusivity_profile = {"1+0.5*sin(3*x)", {"x", "y"}};
    v.push_back({"riesz 1D dirichlet variable K", c});
  }
  {
    auto c = base(Type::time_fractional, 2, Boundary::dirichlet, 17, 12);
    c.diffusivity_profile = {"1+0.5*x*y", {"x", "y"}};
    v.push_back({"time 2D dirichlet variable K", c});
  }
  v.push_back({"riesz 2D periodic", base(Type::space_fractional, 2, Boundary::periodic, 20, 16)});
  return v;
}

/// Rank r runs (r + 1) times as fast as rank 0 before step 8 and the other way round from
/// step 8 on. Observations every 2 steps, patience 1, cool-down 3 observations: re-splits at
/// steps 2 and 10 (and later ones while the smoothed speeds catch up).
double two_phase_speed(int rank, std::int64_t step) {
  const int p = world_size();
  return step < 8 ? 1.0 + rank : 1.0 + (p - 1 - rank);
}

frac::FpdeSolverOptions balanced(double (*speed)(int, std::int64_t)) {
  frac::FpdeSolverOptions o;
  o.prefix = "bal_";
  o.balance.enabled = true;
  o.balance.interval = 2;
  o.balance.patience = 1;
  o.balance.speed = speed;
  return o;
}

frac::FpdeSolverOptions static_split() {
  frac::FpdeSolverOptions o;
  o.prefix = "bal_";
  return o;
}

/// max |a - b| and max |b| over the whole fields.
std::pair<double, double> difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0.0;
  double scale = 0.0;
  for (std::size_t p = 0; p < a.size(); ++p) {
    diff = std::max(diff, std::fabs(a[p] - b[p]));
    scale = std::max(scale, std::fabs(b[p]));
  }
  return {diff, scale};
}

std::vector<double> gather(const FpdeSolver& s) {
  return fracmfg::test::natural_on_all(s.dm(), s.solution());
}

std::string scratch(const std::string& name) {
  const char* bin = std::getenv("FRACMFG_BINARY_DIR");
  const std::string dir =
      std::string(bin ? bin : ".") + "/fpde_balance_np" + std::to_string(world_size()) + "/" + name;
  if (world_rank() == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  return dir;
}

// Krylov solves (2D AMG, Riesz CG) run to rtol 1e-13, so that the iteration count's
// dependence on the split leaves only round-off; the 1D solves are exact.
const test::Options kTight = {{"-bal_ksp_rtol", "1e-13"}, {"-bal_snes_rtol", "1e-13"}};

TEST(FpdeBalance, BalancedRunsAgreeWithStaticRunsAcrossTwoResplits) {
  const test::ScopedOptions tight(kTight);
  for (const Named& c : cases()) {
    SCOPED_TRACE(c.name);
    const frac::FpdeProblem problem = frac::fpde_problem_from_config(c.config);
    FpdeSolver moving(PETSC_COMM_WORLD, problem, balanced(&two_phase_speed));
    FpdeSolver fixed(PETSC_COMM_WORLD, problem, static_split());
    const std::vector<PetscInt> even_x = fixed.ownership(0);
    const std::vector<PetscInt> even_y = fixed.ownership(1);
    moving.run_until(c.config.time.steps);
    fixed.run_until(c.config.time.steps);
    const auto [diff, scale] = difference(gather(moving), gather(fixed));
    if (world_rank() == 0) {
      std::printf("%-32s %d ranks: %lld re-splits, max |u_bal - u_static| = %.2e (max |u| %.2e)\n",
                  c.name, world_size(), static_cast<long long>(moving.statistics().resplits), diff,
                  scale);
    }
    EXPECT_LE(diff, 1e-11 * scale);
    if (world_size() > 1) {
      EXPECT_GE(moving.statistics().resplits, 2);
    } else {
      EXPECT_EQ(moving.statistics().resplits, 0);
    }
    EXPECT_EQ(fixed.statistics().resplits, 0);
    EXPECT_EQ(fixed.ownership(0), even_x);
    EXPECT_EQ(fixed.ownership(1), even_y);
    if (world_size() > 1) {
      EXPECT_TRUE(moving.ownership(0) != even_x || moving.ownership(1) != even_y);
    }
    EXPECT_EQ(moving.step(), c.config.time.steps);
  }
}

/// two_phase_speed on ranks 10^12 times faster: every observation's modelled step work, and
/// with it any saving a re-split could bring, is far below what a re-split of these grids
/// takes.
double fast_two_phase_speed(int rank, std::int64_t step) {
  return 1e12 * two_phase_speed(rank, step);
}

// The solver passes the steps left and the re-split's measured cost to the policy: the
// first re-split is made (no cost recorded yet), the second one, which two_phase_speed's
// runs make when the speeds turn (above), is refused as not worth its cost.
TEST(FpdeBalance, AResplitThatCannotPayForItselfIsNotMade) {
  const test::ScopedOptions tight(kTight);
  const std::vector<Named> all = cases();
  const Named& c = all.front();
  const frac::FpdeProblem problem = frac::fpde_problem_from_config(c.config);
  FpdeSolver moving(PETSC_COMM_WORLD, problem, balanced(&fast_two_phase_speed));
  FpdeSolver fixed(PETSC_COMM_WORLD, problem, static_split());
  moving.run_until(c.config.time.steps);
  fixed.run_until(c.config.time.steps);
  EXPECT_EQ(moving.statistics().resplits, world_size() > 1 ? 1 : 0) << c.name;
  const auto [diff, scale] = difference(gather(moving), gather(fixed));
  EXPECT_LE(diff, 1e-11 * scale) << c.name;
}

/// Rank 0 modelled k = 3 times as fast as the others.
double fast_rank_zero(int rank, std::int64_t /*step*/) {
  return rank == 0 ? 3.0 : 1.0;
}

TEST(FpdeBalance, SplitFollowsTheInjectedSpeeds) {
  for (int dim : {1, 2}) {
    SCOPED_TRACE(dim == 1 ? "1D" : "2D");
    auto c = base(Type::time_fractional, dim, Boundary::dirichlet, dim == 1 ? 301 : 31, 6);
    FpdeSolver s(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c), balanced(&fast_rank_zero));
    s.run_until(c.time.steps);
    const std::vector<PetscInt> lx = s.ownership(0);
    const std::vector<PetscInt> ly = s.ownership(1);
    const auto px = lx.size();
    const auto py = ly.size();
    ASSERT_EQ(px * py, static_cast<std::size_t>(world_size()));
    // Column i's speed is the sum of its ranks' (r = i + px j), row j's likewise; each
    // range is the grid line's points in proportion, to one point of rounding.
    std::vector<double> col(px, 0.0);
    std::vector<double> row(py, 0.0);
    for (std::size_t j = 0; j < py; ++j) {
      for (std::size_t i = 0; i < px; ++i) {
        const double v = fast_rank_zero(static_cast<int>(i + px * j), 0);
        col[i] += v;
        row[j] += v;
      }
    }
    auto check = [](const std::vector<PetscInt>& counts, const std::vector<double>& speed,
                    PetscInt n, const char* axis) {
      double total = 0.0;
      for (double v : speed) total += v;
      for (std::size_t k = 0; k < counts.size(); ++k) {
        const double ideal = static_cast<double>(n) * speed[k] / total;
        EXPECT_LE(std::fabs(static_cast<double>(counts[k]) - ideal), 1.0)
            << axis << " range " << k << ": " << counts[k] << " points, ideal " << ideal;
      }
    };
    check(lx, col, s.grid().points(0), "x");
    if (dim == 2) check(ly, row, s.grid().points(1), "y");
    if (world_rank() == 0) {
      std::printf("%dD, rank 0 three times as fast: x ranges", dim);
      for (PetscInt v : lx) std::printf(" %lld", static_cast<long long>(v));
      std::printf(", y ranges");
      for (PetscInt v : ly) std::printf(" %lld", static_cast<long long>(v));
      std::printf("\n");
    }
    EXPECT_EQ(s.statistics().resplits, world_size() > 1 ? 1 : 0);
  }
}

TEST(FpdeBalance, CheckpointAfterAResplitRestartsOnAnotherRankCount) {
  const test::ScopedOptions tight(kTight);
  const std::string dir = scratch("restart");
  // The restart runs on the first max(1, p - 1) ranks: another rank count for p > 1.
  const int p = world_size();
  const int q = std::max(1, p - 1);
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(PETSC_COMM_WORLD, world_rank() < q ? 0 : MPI_UNDEFINED, world_rank(), &sub);
  int k = 0;
  for (const Named& c : cases()) {
    SCOPED_TRACE(c.name);
    const frac::FpdeProblem problem = frac::fpde_problem_from_config(c.config);
    const std::int64_t steps = c.config.time.steps;
    const std::int64_t stop = 11;  // after both re-splits of two_phase_speed
    FpdeSolver full(PETSC_COMM_WORLD, problem, static_split());
    full.run_until(steps);
    const std::vector<double> expected = gather(full);
    const std::string path = dir + "/case" + std::to_string(k++) + ".chk.h5";
    {
      FpdeSolver first(PETSC_COMM_WORLD, problem, balanced(&two_phase_speed));
      first.run_until(stop);
      EXPECT_EQ(first.statistics().resplits, p > 1 ? 2 : 0);
      first.write_checkpoint(path);
    }
    if (sub != MPI_COMM_NULL) {
      FpdeSolver second(sub, problem, balanced(&fast_rank_zero));
      second.restart(path);
      EXPECT_EQ(second.step(), stop);
      second.run_until(steps);
      const std::vector<double> got = fracmfg::test::natural_on_all(second.dm(), second.solution());
      const auto [diff, scale] = difference(got, expected);
      if (fracmfg::test::rank_of(sub) == 0) {
        std::printf("%-32s %d -> %d ranks: max |u_restart - u| = %.2e (max |u| %.2e)\n", c.name, p,
                    q, diff, scale);
      }
      EXPECT_LE(diff, 1e-11 * scale);
    }
    MPI_Barrier(PETSC_COMM_WORLD);
  }
  if (sub != MPI_COMM_NULL) MPI_Comm_free(&sub);
}

// A restart on as many ranks with the balance on continues on the split the checkpoint was
// written with and ends where the static run ends; with the balance off it keeps PETSc's
// even split.
TEST(FpdeBalance, RestartWithTheBalanceContinuesOnTheWrittenSplit) {
  const test::ScopedOptions tight(kTight);
  const std::string dir = scratch("restart_split");
  const int p = world_size();
  int k = 0;
  for (const Named& c : cases()) {
    SCOPED_TRACE(c.name);
    const frac::FpdeProblem problem = frac::fpde_problem_from_config(c.config);
    const std::int64_t steps = c.config.time.steps;
    const std::int64_t stop = 5;  // after the first re-split of two_phase_speed (step 2)
    FpdeSolver full(PETSC_COMM_WORLD, problem, static_split());
    full.run_until(steps);
    const std::vector<double> expected = gather(full);
    const std::string path = dir + "/case" + std::to_string(k++) + ".chk.h5";
    std::vector<PetscInt> written[2];
    {
      FpdeSolver first(PETSC_COMM_WORLD, problem, balanced(&two_phase_speed));
      first.run_until(stop);
      EXPECT_EQ(first.statistics().resplits, p > 1 ? 1 : 0);
      written[0] = first.grid().ownership(0);
      if (first.grid().dimension() == 2) written[1] = first.grid().ownership(1);
      first.write_checkpoint(path);
    }
    {
      FpdeSolver plain(PETSC_COMM_WORLD, problem, static_split());
      const std::vector<PetscInt> even_x = plain.grid().ownership(0);
      const std::vector<PetscInt> even_y =
          plain.grid().dimension() == 2 ? plain.grid().ownership(1) : std::vector<PetscInt>{};
      // At more than one rank the written split is not PETSc's, so the restart below moves.
      if (p > 1) {
        EXPECT_TRUE(written[0] != even_x || written[1] != even_y);
      }
      plain.restart(path);
      EXPECT_EQ(plain.grid().ownership(0), even_x);
    }
    frac::FpdeSolverOptions o = static_split();
    o.balance.enabled = true;
    o.balance.threshold = 1e6;  // measured speeds, no further re-split
    FpdeSolver second(PETSC_COMM_WORLD, problem, o);
    second.restart(path);
    EXPECT_EQ(second.step(), stop);
    EXPECT_EQ(second.statistics().resplits, p > 1 ? 1 : 0);
    EXPECT_EQ(second.grid().ownership(0), written[0]);
    if (second.grid().dimension() == 2) {
      EXPECT_EQ(second.grid().ownership(1), written[1]);
    }
    second.run_until(steps);
    const auto [diff, scale] = difference(gather(second), expected);
    if (world_rank() == 0) {
      std::printf(
          "%-32s restart on the written split (%d ranks, %d re-split): %.2e (max |u| %.2e)\n",
          c.name, p, static_cast<int>(second.statistics().resplits), diff, scale);
    }
    EXPECT_LE(diff, 1e-11 * scale);
  }
}

TEST(FpdeBalance, FieldsWrittenAcrossResplitsMatchTheStaticRun) {
  // Every step to one results file: the writer buffers levels for a chunk, and a re-split
  // changes the boxes they came from.
  const test::ScopedOptions tight(kTight);
  const std::string dir = scratch("output");
  for (const Named& c : cases()) {
    if (c.config.type != Type::time_fractional || c.config.dimension() != 1) continue;
    SCOPED_TRACE(c.name);
    const frac::FpdeProblem problem = frac::fpde_problem_from_config(c.config);
    auto write_run = [&](const frac::FpdeSolverOptions& o, const std::string& file) {
      FpdeSolver s(PETSC_COMM_WORLD, problem, o);
      io::H5Writer out(PETSC_COMM_WORLD, file);
      io::FieldInfo info;
      info.expected_levels = c.config.time.steps + 1;
      out.define_field("u", info);
      out.write_field("u", s.dm(), s.solution(), 0, 0.0);
      s.run_until(c.config.time.steps, [&](const FpdeSolver& x) {
        out.write_field("u", x.dm(), x.solution(), x.step(), x.time());
      });
      out.commit();
      return s.statistics().resplits;
    };
    EXPECT_EQ(write_run(static_split(), dir + "/static.h5"), 0);
    const std::int64_t resplits = write_run(balanced(&two_phase_speed), dir + "/balanced.h5");
    if (world_size() > 1) {
      EXPECT_GE(resplits, 2);
    }
    io::H5Reader a(PETSC_COMM_WORLD, dir + "/static.h5");
    io::H5Reader b(PETSC_COMM_WORLD, dir + "/balanced.h5");
    ASSERT_EQ(a.field_steps("u"), b.field_steps("u"));
    double worst = 0.0;
    for (std::uint64_t level = 0; level < a.field_steps("u").size(); ++level) {
      const auto [diff, scale] =
          difference(b.read_level_values("u", level), a.read_level_values("u", level));
      EXPECT_LE(diff, 1e-11 * scale) << "level " << level;
      worst = std::max(worst, scale > 0.0 ? diff / scale : diff);
    }
    if (world_rank() == 0) {
      std::printf("%-32s %d ranks: written levels, largest scaled difference %.2e\n", c.name,
                  world_size(), worst);
    }
  }
}

TEST(FpdeBalance, DeckKeysReachTheSolver) {
  const std::string dir = scratch("deck");
  const std::string deck_text =
      "problem: fpde\n"
      "fpde:\n"
      "  type: time_fractional\n"
      "  order: 0.5\n"
      "  diffusivity: 1.0\n"
      "  initial: \"sin(pi*x)\"\n"
      "  domain: {length: [1.0], boundary: dirichlet}\n"
      "  grid: {points: [41]}\n"
      "  time: {horizon: 1.0, steps: 12}\n"
      "execution:\n"
      "  balance: {grid: true, interval: 3, threshold: 0.0, patience: 1}\n"
      "output: {file: " +
      dir + "/run.h5}\n";
  const io::Deck deck = io::Deck::from_string(deck_text, "deck.yaml");
  const io::ExecutionConfig::Balance b = deck.execution().balance;
  EXPECT_TRUE(b.grid);
  EXPECT_EQ(b.interval, 3);
  EXPECT_EQ(b.threshold, 0.0);
  EXPECT_EQ(b.patience, 1);
  const io::Deck plain = io::Deck::from_string(
      "problem: fpde\nfpde: {type: time_fractional, order: 0.5, diffusivity: 1.0, initial: \"x\", "
      "domain: "
      "{length: [1.0], boundary: dirichlet}, grid: {points: [9]}, time: {horizon: 1.0, steps: "
      "2}}\n",
      "plain.yaml");
  EXPECT_FALSE(plain.execution().balance.grid);
  EXPECT_EQ(plain.execution().balance.interval, 0);  // the solver's default
  // The run completes with the measured (not injected) speeds; whether it re-splits depends
  // on the machine's timing, the result does not.
  const auto summary = frac::run_fpde_deck(PETSC_COMM_WORLD, deck, test::quiet_logger());
  EXPECT_EQ(summary.last_step, 12);
  EXPECT_GE(summary.stats.work_seconds, 0.0);
  if (world_size() == 1) {
    EXPECT_EQ(summary.stats.resplits, 0);
  }
}

}  // namespace
