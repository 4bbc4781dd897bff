// Particles on several ranks: the ids are split into contiguous blocks covering all N;
// the same seed gives bit-for-bit the same density on 1, 2 and 3 ranks (counter-based random
// numbers per particle, exact integer reduction of the binned mass), in 1D and 2D; the
// particle MFG fixed point gives the same u and m on any rank count (to round-off).
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
#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/particles.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/petsc_handles.hpp"

namespace {

namespace mfg = fracmfg::mfg;
namespace detail = fracmfg::mfg::detail;
using fracmfg::test::natural_on_zero;
using fracmfg::test::quiet_logger;
using fracmfg::test::relative_difference;
using fracmfg::test::SubComm;

const char* const k1d =
    "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: reflecting}\n"
    "  grid: {points: [40]}\n  time: {horizon: 0.5, steps: 10}\n  diffusion: 0.03\n"
    "  hamiltonian: {control_cost: \"1 + 0.5*x\"}\n"
    "  coupling: {type: power, potential: \"(x-0.6)^2\"}\n"
    "  initial_density: \"exp(-(x-0.3)^2/0.02)\"\n  terminal_cost: \"(x-0.8)^2\"\n"
    "  fokker_planck: {method: particles, particles: 4001, seed: 42}\n"
    "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 100}\n";
const char* const k2d =
    "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: periodic}\n"
    "  grid: {points: [16, 14]}\n  time: {horizon: 0.3, steps: 6}\n  diffusion: 0.02\n"
    "  coupling: {type: power, exponent: 2, potential: \"cos(2*pi*x)*cos(2*pi*y)\"}\n"
    "  initial_density: \"1 + 0.9*sin(2*pi*x)*cos(2*pi*y)\"\n"
    "  fokker_planck: {method: particles, particles: 5003, bandwidth: 0.08, seed: 9}\n"
    "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 100}\n";

// Densities of one sweep with u(x, y) = 0.3 sin(2 pi x) + 0.2 cos(2 pi y), natural order
// on rank 0, one vector per level.
std::vector<std::vector<double>> sweep(MPI_Comm comm, const char* deck, std::int64_t& covered) {
  const auto cfg = fracmfg::io::Deck::from_string(deck, "particles.yaml").mfg();
  const mfg::Model model(comm, mfg::problem_from_config(cfg));
  mfg::ParticleFokkerPlanck pf(model, nullptr, quiet_logger());
  auto u = detail::global_vec(model.dm());
  auto m = detail::global_vec(model.dm());
  {
    detail::WriteArray a(u.get());
    for (std::size_t k = 0; k < model.x().size(); ++k) {
      a[static_cast<PetscInt>(k)] =
          0.3 * std::sin(2 * M_PI * model.x()[k]) + 0.2 * std::cos(2 * M_PI * model.y()[k]);
    }
  }
  // The blocks of ids are contiguous and cover 0..N-1.
  long long mine[2] = {pf.first(), pf.count()}, sum = 0, next = 0;
  MPI_Allreduce(&mine[1], &sum, 1, MPI_LONG_LONG, MPI_SUM, comm);
  MPI_Exscan(&mine[1], &next, 1, MPI_LONG_LONG, MPI_SUM, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  EXPECT_EQ(sum, pf.total());
  EXPECT_EQ(mine[0], rank == 0 ? 0 : next);
  covered = sum;
  std::vector<std::vector<double>> out;
  pf.begin();
  for (int n = 0; n < model.steps(); ++n) {
    pf.step(n, u.get(), m.get());
    out.push_back(natural_on_zero(model.dm(), m.get()));
  }
  return out;
}

class MfgParticlesRanks : public ::testing::TestWithParam<const char*> {};

TEST_P(MfgParticlesRanks, SameSeedGivesBitIdenticalDensitiesOnAnyRankCount) {
  std::int64_t n_all = 0, n_one = 0;
  const auto all = sweep(MPI_COMM_WORLD, GetParam(), n_all);
  SubComm one(1);
  if (one.comm == MPI_COMM_NULL) return;
  const auto single = sweep(one.comm, GetParam(), n_one);
  EXPECT_EQ(n_all, n_one);
  ASSERT_EQ(all.size(), single.size());
  for (std::size_t n = 0; n < all.size(); ++n) {
    EXPECT_EQ(all[n], single[n]) << "level " << n + 1;
  }
}

TEST_P(MfgParticlesRanks, ParticleGameGivesTheSameResultOnAnyRankCount) {
  const auto cfg = fracmfg::io::Deck::from_string(GetParam(), "particles.yaml").mfg();
  auto solve = [&](MPI_Comm comm) {
    mfg::Solver solver(comm, mfg::problem_from_config(cfg), nullptr, quiet_logger());
    EXPECT_TRUE(solver.solve().converged);
    const fracmfg::test::MfgLevels levels = fracmfg::test::levels_of(solver);
    return std::make_pair(fracmfg::test::flatten(levels.u), fracmfg::test::flatten(levels.m));
  };
  const auto all = solve(MPI_COMM_WORLD);
  SubComm one(1);
  if (one.comm == MPI_COMM_NULL) return;
  const auto single = solve(one.comm);
  const double du = relative_difference(single.first, all.first),
               dm = relative_difference(single.second, all.second);
  std::printf("  particle game: max relative difference u %.2e, m %.2e\n", du, dm);
  EXPECT_LT(du, 1e-9);
  EXPECT_LT(dm, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Grids, MfgParticlesRanks, ::testing::Values(k1d, k2d),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           return std::string(p.param == k1d ? "Reflecting1d" : "Periodic2d");
                         });

}  // namespace
