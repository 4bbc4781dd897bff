// An mfg::Problem built in C++ (callables, or values sampled on the grid as a host code holds
// them) is the same game as the deck that writes the same data as formulas; the solver gives
// its fields back as whole-grid arrays on every rank (gather_u, gather_m); the model's
// messages name the deck key for a deck's data and the Problem member otherwise. Run at 1, 2
// and 3 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/mfg_configs.hpp"
#include "common/mpi_support.hpp"
#include "common/test_support.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/mfg/problem.hpp"
#include "fracmfg/mfg/solver.hpp"

namespace {

namespace mfg = fracmfg::mfg;
using fracmfg::test::quiet_logger;

const char* const kIteration =
    "{damping: 0.6, anderson: 2, tolerance: 1.0e-10, max_iterations: 200}";

double potential(double x, double) {
  return 0.5 * std::cos(2 * M_PI * x);
}
double density(double x, double) {
  return std::exp(-(x - 0.3) * (x - 0.3) / 0.01);
}

// periodic_1d_game (tests/common/mfg_configs.hpp) with its data as C++ callables.
mfg::Problem callable_game() {
  mfg::Problem p = mfg::problem_from_config(
      fracmfg::test::mfg_config(fracmfg::test::periodic_1d_game(kIteration)));
  p.coupling.potential = mfg::Field::function(potential);
  p.initial_density = mfg::Field::function(density);
  return p;
}

struct Result {
  std::vector<double> u0, mt;  // u(t = 0), m(T), whole grid
  int iterations = 0;
};

Result solve(const mfg::Problem& p) {
  mfg::Solver solver(MPI_COMM_WORLD, p, nullptr, quiet_logger());
  const auto r = solver.solve();
  EXPECT_TRUE(r.converged);
  return {solver.gather_u(0), solver.gather_m(solver.steps()), r.iterations};
}

TEST(MfgProblem, CallablesGiveTheGameOfTheDeck) {
  const Result deck = solve(mfg::problem_from_config(
      fracmfg::test::mfg_config(fracmfg::test::periodic_1d_game(kIteration))));
  const Result code = solve(callable_game());
  EXPECT_EQ(code.iterations, deck.iterations);
  EXPECT_LT(fracmfg::test::relative_difference(code.u0, deck.u0), 1e-12);
  EXPECT_LT(fracmfg::test::relative_difference(code.mt, deck.mt), 1e-12);
}

TEST(MfgProblem, SamplesOnTheGridGiveTheGameOfTheirFunctions) {
  const mfg::Problem callables = callable_game();
  const mfg::Grid g = mfg::Grid::make(callables.domain, callables.grid);
  std::vector<double> v, m0;
  for (PetscInt i = 0; i < g.points[0]; ++i) {
    v.push_back(potential(g.coordinate(0, i), 0.0));
    m0.push_back(density(g.coordinate(0, i), 0.0));
  }
  mfg::Problem sampled = callables;
  sampled.coupling.potential = mfg::Field::samples({g.points[0]}, v);
  sampled.initial_density = mfg::Field::samples({g.points[0]}, m0);
  // Exact at the grid points: the same numbers, so the same result to the last bit.
  const Result a = solve(callables), b = solve(sampled);
  EXPECT_EQ(a.u0, b.u0);
  EXPECT_EQ(a.mt, b.mt);
}

// True on every rank when v is rank 0's v, value for value. Collective.
bool same_as_rank_zero(std::vector<double> v) {
  int size = static_cast<int>(v.size());
  MPI_Bcast(&size, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<double> zero(v);
  zero.resize(static_cast<std::size_t>(size));
  MPI_Bcast(zero.data(), size, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return fracmfg::test::on_all_ranks(zero == v);
}

TEST(MfgProblem, GatheredFieldsAreTheWholeGridOnEveryRank) {
  const mfg::Problem p = mfg::problem_from_config(fracmfg::test::mfg_config(
      fracmfg::test::reflecting_2d_game("{damping: 0.5, max_iterations: 5}")));
  mfg::Solver solver(MPI_COMM_WORLD, p, nullptr, quiet_logger());
  solver.solve();
  const auto levels = fracmfg::test::levels_of(solver);  // natural order on rank 0
  for (int n = 0; n <= solver.steps(); ++n) {
    const auto u = solver.gather_u(n), m = solver.gather_m(n);
    EXPECT_EQ(static_cast<PetscInt>(u.size()), solver.model().grid().size());
    EXPECT_TRUE(same_as_rank_zero(u));
    EXPECT_TRUE(same_as_rank_zero(m));
    if (fracmfg::test::world_rank() == 0) {
      EXPECT_EQ(u, levels.u[static_cast<std::size_t>(n)]);
      EXPECT_EQ(m, levels.m[static_cast<std::size_t>(n)]);
    }
  }
  EXPECT_THROW(solver.gather_u(solver.steps() + 1), fracmfg::Error);
}

std::string construction_error(const mfg::Problem& p) {
  try {
    mfg::Model model(MPI_COMM_WORLD, p);
  } catch (const fracmfg::core::CollectiveError& e) {
    EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::usage);
    return e.what();
  }
  return "no error";
}

TEST(MfgProblem, MessagesNameTheDeckKeyOrTheProblemMember) {
  mfg::Problem p = mfg::problem_from_config(
      fracmfg::test::mfg_config(fracmfg::test::periodic_1d_game("{max_iterations: 5}")));
  mfg::Problem zero_mass = p;
  zero_mass.initial_density = mfg::Field::constant(0.0);
  EXPECT_EQ(construction_error(zero_mass),
            "problem.initial_density: has no mass on the grid points (sum m0 * cell volume = 0)");
  zero_mass.initial_density = mfg::Field::constant(0.0).named("host.density");
  EXPECT_EQ(construction_error(zero_mass),
            "host.density: has no mass on the grid points (sum m0 * cell volume = 0)");
  mfg::Problem negative = p;
  negative.hamiltonian.control_cost =
      mfg::Field::function([](double x, double) { return x - 0.5; });
  EXPECT_EQ(construction_error(negative),
            "problem.hamiltonian.control_cost: must be finite and > 0 on the grid, but is -0.5 at "
            "x = 0");
}

}  // namespace
