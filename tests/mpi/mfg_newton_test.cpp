// Newton's method for the coupled MFG system (iteration.method newton, src/mfg/newton.hpp):
// the linearised game is the derivative of the sweeps (a product K v against central
// differences of Psi(U) = HJB(FP(U))), Newton converges to the fixed point's discrete
// solution (to the tolerance) in fewer outer iterations, gives the same fields on 1, 2 and 3
// ranks, resumes from a checkpoint, starts from a coarse grid and survives a re-split of the
// grid to the same solution, and a Problem it cannot solve is refused. 1D, 2D and 3D,
// periodic and reflecting, exits (time- and space-dependent costs) and obstacles, quadratic,
// power and congestion Hamiltonians, log, power and nonlocal couplings, diffusion of order 2 and
// below (Levy flights).
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscdmda.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "common/mfg_configs.hpp"
#include "common/mpi_support.hpp"
#include "common/scoped_options.hpp"
#include "common/test_support.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/core/solve_control.hpp"
#include "fracmfg/mfg/coupling.hpp"
#include "fracmfg/mfg/fokker_planck.hpp"
#include "fracmfg/mfg/hjb.hpp"
#include "fracmfg/mfg/model.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/newton.hpp"
#include "mfg/petsc_handles.hpp"

namespace {

namespace mfg = fracmfg::mfg;
namespace detail = fracmfg::mfg::detail;
using detail::VecPtr;

// order: diffusion_order (2: the Laplacian; below: Levy flights, periodic domains only).
std::string game_1d(const std::string& boundary, const std::string& hamiltonian,
                    const std::string& coupling, const std::string& iteration,
                    const std::string& order = "2") {
  return "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: " + boundary +
         "}\n  grid: {points: [41]}\n  time: {horizon: 0.5, steps: 16}\n  diffusion: 0.05\n"
         "  diffusion_order: " +
         order + "\n  hamiltonian: " + hamiltonian + "\n  coupling: " + coupling +
         "\n  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n"
         "  terminal_cost: \"0.3*cos(2*pi*x)\"\n  terminal_coupling: 0.2\n"
         "  iteration: " +
         iteration + "\n";
}

std::string game_2d(const std::string& boundary, const std::string& iteration,
                    const std::string& order = "2") {
  return "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: " + boundary +
         "}\n  grid: {points: [12, 11]}\n  time: {horizon: 0.5, steps: 6}\n  diffusion: 0.03\n"
         "  diffusion_order: " +
         order +
         "\n  coupling: {type: log, potential: \"(x-0.5)^2\"}\n"
         "  initial_density: \"exp(-((x-0.3)^2+(y-0.6)^2)/0.03)\"\n"
         "  terminal_cost: \"(y-0.2)^2\"\n"
         "  iteration: " +
         iteration + "\n";
}

std::string game_3d(const std::string& boundary, const std::string& iteration) {
  return "problem: mfg\nmfg:\n  domain: {length: [1.0, 0.9, 0.8], boundary: " + boundary +
         "}\n  grid: {points: [9, 8, 7]}\n  time: {horizon: 0.4, steps: 5}\n  diffusion: 0.03\n"
         "  hamiltonian: {type: power, exponent: 1.7}\n"
         "  coupling: {type: log, potential: \"(x-0.5)^2 + 0.5*(z-0.3)^2\"}\n"
         "  initial_density: \"exp(-((x-0.3)^2+(y-0.6)^2+(z-0.4)^2)/0.03)\"\n"
         "  terminal_cost: \"(y-0.2)^2\"\n"
         "  iteration: " +
         iteration + "\n";
}

// Exits and obstacles: a 1D corridor with a wall block at its left end and an exit on the
// right with a time-dependent cost; a 2D room with a pillar, an exit on x_max and one on
// y_min whose cost varies along the side (power Hamiltonian, q = 2.5: with q < 2 the Hessian
// of |p|^q is singular at p = 0, and there this room's central differences at 1e-6 are off
// by 5e-4 while at 1e-8 they agree to 3e-8); a 3D room with a column and exits on x_max
// and z_min.
std::string game_exit_1d(const std::string& iteration) {
  return "problem: mfg\nmfg:\n  domain:\n    length: [1.0]\n    boundary: reflecting\n"
         "    sides: {x_max: exit}\n    exit_cost: \"0.2*t\"\n    obstacle: \"x < 0.08\"\n"
         "  grid: {points: [41]}\n  time: {horizon: 0.5, steps: 16}\n  diffusion: 0.05\n"
         "  coupling: {type: log}\n  initial_density: \"exp(-(x-0.4)^2/0.01)\"\n"
         "  terminal_cost: \"0.3*cos(2*pi*x)\"\n  terminal_coupling: 0.2\n"
         "  iteration: " +
         iteration + "\n";
}

std::string game_room_2d(const std::string& iteration) {
  return "problem: mfg\nmfg:\n  domain:\n    length: [1.0, 0.8]\n    boundary: reflecting\n"
         "    sides: {x_max: exit, y_min: exit}\n    exit_cost: \"0.1*(1+t)*(x+y)\"\n"
         "    obstacle: \"0.02 - (x-0.5)^2 - (y-0.4)^2\"\n"
         "  grid: {points: [12, 10]}\n  time: {horizon: 0.5, steps: 6}\n  diffusion: 0.03\n"
         "  hamiltonian: {type: power, exponent: 2.5}\n"
         "  coupling: {type: power, exponent: 1, potential: \"(y-0.5)^2\"}\n"
         "  initial_density: \"exp(-((x-0.25)^2+(y-0.5)^2)/0.03)\"\n"
         "  terminal_cost: \"1\"\n"
         "  iteration: " +
         iteration + "\n";
}

std::string game_room_3d(const std::string& iteration) {
  return "problem: mfg\nmfg:\n  domain:\n    length: [1.0, 0.9, 0.8]\n    boundary: reflecting\n"
         "    sides: {x_max: exit, z_min: exit}\n    exit_cost: \"0.1*t + 0.2*y\"\n"
         "    obstacle: \"0.02 - (x-0.5)^2 - (y-0.45)^2\"\n"
         "  grid: {points: [9, 8, 7]}\n  time: {horizon: 0.4, steps: 5}\n  diffusion: 0.03\n"
         "  coupling: {type: log, potential: \"(x-0.5)^2\"}\n"
         "  initial_density: \"exp(-((x-0.25)^2+(y-0.45)^2+(z-0.5)^2)/0.03)\"\n"
         "  terminal_cost: \"1\"\n"
         "  iteration: " +
         iteration + "\n";
}

// The congestion Hamiltonian (its Fokker-Planck drift depends on the density it moves, and
// the linearised step's coefficient is c (1 - alpha m / (epsilon + m))): a 2D room with an
// exit on x_max and a pillar, and a 1D corridor with walls and a varying control cost.
std::string game_congestion_2d(const std::string& iteration) {
  return "problem: mfg\nmfg:\n  domain:\n    length: [1.0, 0.8]\n    boundary: reflecting\n"
         "    sides: {x_max: exit}\n    exit_cost: \"0.1*(1+t)\"\n"
         "    obstacle: \"0.02 - (x-0.5)^2 - (y-0.4)^2\"\n"
         "  grid: {points: [12, 10]}\n  time: {horizon: 0.5, steps: 6}\n  diffusion: 0.03\n"
         "  hamiltonian: {type: congestion, epsilon: 0.1, alpha: 1, control_cost: \"1 + y\"}\n"
         "  coupling: {type: log, potential: \"(y-0.5)^2\"}\n"
         "  initial_density: \"exp(-((x-0.25)^2+(y-0.5)^2)/0.03)\"\n"
         "  terminal_cost: \"1\"\n"
         "  iteration: " +
         iteration + "\n";
}

std::string game_congestion_1d(const std::string& iteration) {
  return game_1d("reflecting",
                 "{type: congestion, epsilon: 0.2, alpha: 1, control_cost: \"1 + 0.5*x\"}",
                 "{type: log}", iteration);
}

// epsilon 0.01 (the repeated step that Newton's method in m^{n+1} replaced took 30 rounds
// and more at 37 of this game's steps), and alpha 1.5 (the flux m (epsilon + m)^-alpha falls
// above m = 0.4).
std::string game_congestion_small_epsilon_1d(const std::string& iteration) {
  return game_1d("reflecting",
                 "{type: congestion, epsilon: 0.01, alpha: 1, control_cost: \"1 + 0.5*x\"}",
                 "{type: log}", iteration);
}

// Congestion with Levy flights (periodic, order 1.5): the step's operator is the fractional
// shell over the rows.
std::string game_congestion_levy_1d(const std::string& iteration) {
  return game_1d("periodic",
                 "{type: congestion, epsilon: 0.2, alpha: 1, control_cost: \"1 + 0.5*x\"}",
                 "{type: log}", iteration, "1.5");
}

std::string game_congestion_alpha_1_5_1d(const std::string& iteration) {
  return game_1d("reflecting",
                 "{type: congestion, epsilon: 0.2, alpha: 1.5, control_cost: \"1 + 0.5*x\"}",
                 "{type: log}", iteration);
}

// Fractional diffusion (Levy flights, periodic): 1D of order 1.5 with the power
// Hamiltonian, 2D of order 1.6.
std::string game_levy_1d(const std::string& iteration) {
  return game_1d("periodic", "{type: power, exponent: 2.5}", "{type: log}", iteration, "1.5");
}

std::string game_levy_2d(const std::string& iteration) {
  return game_2d("periodic", iteration, "1.6");
}

// The sweeps of the game at U: M = FP(U), Psi = HJB(M) (each HJB step solved to 1e-14; with
// the congestion Hamiltonian each Fokker-Planck step's drift at the density it computes, by
// Newton's method in m^{n+1} to 1e-14; StepAtOwnDensityIsTheRepeatedStepsLimit checks that
// against repeating the step).
struct Sweeps {
  const mfg::Model& model;
  mfg::HjbSolver hjb;
  mfg::FokkerPlanckFdm fp;
  mfg::Coupling coupling;
  VecPtr rhs;
  explicit Sweeps(const mfg::Model& m)
      : model(m), hjb(m), fp(m), coupling(m, nullptr), rhs(detail::global_vec(m.dm())) {}

  void run(const std::vector<VecPtr>& u, std::vector<VecPtr>& mm, std::vector<VecPtr>& psi) {
    const int nt = model.steps();
    FRACMFG_PETSC_CHECK(VecCopy(model.initial_density(), mm[0].get()));
    const bool congestion =
        model.problem().hamiltonian.type == mfg::Problem::Hamiltonian::Type::congestion;
    for (int n = 0; n < nt; ++n) {
      fp.set_time_level(n);
      if (congestion) {
        const auto r = fp.step_at_own_density(u[n].get(), mm[n].get(), model.fp_source(n + 1),
                                              mm[n + 1].get(), nullptr, 1e-14, 50);
        EXPECT_TRUE(r.converged) << "step " << n << ": change " << r.change;
      } else {
        fp.step(u[n].get(), mm[n].get(), model.fp_source(n + 1), mm[n + 1].get());
      }
    }
    FRACMFG_PETSC_CHECK(VecCopy(model.terminal_cost(), psi[nt].get()));
    FRACMFG_PETSC_CHECK(VecAXPY(psi[nt].get(), model.terminal_coupling(), mm[nt].get()));
    for (int n = nt - 1; n >= 0; --n) {
      coupling.evaluate(mm[n + 1].get(), rhs.get(), n);
      FRACMFG_PETSC_CHECK(VecCopy(u[n].get(), psi[n].get()));
      hjb.set_time_level(n);
      hjb.set_density(mm[n + 1].get());
      hjb.step(psi[n + 1].get(), rhs.get(), psi[n].get(), "HJB step", 1e-14);
    }
  }
};

std::vector<VecPtr> levels_on(DM dm, int count) {
  std::vector<VecPtr> v;
  for (int n = 0; n < count; ++n) v.push_back(detail::global_vec(dm));
  return v;
}

// max over levels of ||K v - (Psi(U + e v) - Psi(U - e v)) / 2e|| relative to ||K v||, at
// the U of a few fixed-point iterations of the game.
double linearisation_error(const std::string& deck, double eps = 1e-6) {
  const auto cfg = fracmfg::test::mfg_config(deck, 4);
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                     fracmfg::test::quiet_logger());
  solver.solve();
  const mfg::Model& model = solver.model();
  const int levels = model.steps() + 1;
  DM dm = model.dm();
  Sweeps sweeps(model);
  std::vector<VecPtr> u = levels_on(dm, levels), m = levels_on(dm, levels),
                      psi = levels_on(dm, levels), v = levels_on(dm, levels);
  const PetscInt count = model.box().count();
  for (int n = 0; n < levels; ++n) {
    FRACMFG_PETSC_CHECK(VecCopy(solver.u(n), u[n].get()));
    detail::WriteArray a(v[n].get());
    const mfg::OwnedBox& b = model.box();
    const int dim = model.grid().dim;
    for (PetscInt k = 0; k < count; ++k) {
      const double x = model.x()[static_cast<std::size_t>(k % b.xm)];
      const double y = dim >= 2 ? model.y()[static_cast<std::size_t>((k / b.xm) % b.ym)] : 0.0;
      const double z = dim == 3 ? model.z()[static_cast<std::size_t>(k / (b.xm * b.ym))] : 0.0;
      a[k] = std::sin(2.0 * M_PI * x + 0.3 * n) * std::cos(M_PI * y) * (1.0 + 0.5 * z) + 0.2;
    }
  }
  sweeps.run(u, m, psi);
  detail::LinearizedGame game(model);
  game.linearise(&u, &psi, &m);
  const auto n = static_cast<std::size_t>(count);
  std::vector<double> x(n * static_cast<std::size_t>(levels)), y(x.size());
  for (int l = 0; l < levels; ++l) {
    detail::ReadArray a(v[l].get());
    std::copy(a.get(), a.get() + count, x.begin() + static_cast<std::ptrdiff_t>(l * n));
  }
  game.apply(x.data(), y.data());  // y = v - K v
  std::vector<VecPtr> up = levels_on(dm, levels), um = levels_on(dm, levels),
                      mp = levels_on(dm, levels), mm = levels_on(dm, levels),
                      pp = levels_on(dm, levels), pm = levels_on(dm, levels);
  for (int l = 0; l < levels; ++l) {
    FRACMFG_PETSC_CHECK(VecWAXPY(up[l].get(), eps, v[l].get(), u[l].get()));
    FRACMFG_PETSC_CHECK(VecWAXPY(um[l].get(), -eps, v[l].get(), u[l].get()));
  }
  sweeps.run(up, mp, pp);
  sweeps.run(um, mm, pm);
  double err = 0.0, size = 0.0;
  for (int l = 0; l < levels; ++l) {
    detail::ReadArray a(pp[l].get());
    detail::ReadArray b(pm[l].get());
    for (PetscInt k = 0; k < count; ++k) {
      const std::size_t i = static_cast<std::size_t>(l) * n + static_cast<std::size_t>(k);
      const double kv = x[i] - y[i];
      const double fd = (a[k] - b[k]) / (2.0 * eps);
      err = std::max(err, std::abs(kv - fd));
      size = std::max(size, std::abs(fd));
    }
  }
  double both[2] = {err, size};
  MPI_Allreduce(MPI_IN_PLACE, both, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  std::printf(
      "linearised game: max |K v - finite difference| = %.3e, max |finite difference| = "
      "%.3e\n",
      both[0], both[1]);
  return both[0] / both[1];
}

const char* kFixed =
    "{method: fixed_point, damping: 0.5, tolerance: 1.0e-9, max_iterations: MAXIT}";

TEST(MfgNewton, LinearisationIsTheDerivativeOfTheSweeps) {
  EXPECT_LT(linearisation_error(game_1d("periodic", "{type: quadratic}", "{type: log}", kFixed)),
            1e-5);
  EXPECT_LT(linearisation_error(game_1d("reflecting", "{type: power, exponent: 1.5}",
                                        "{type: power, exponent: 2}", kFixed)),
            1e-5);
  EXPECT_LT(linearisation_error(game_1d("reflecting", "{type: quadratic}",
                                        "{type: nonlocal, width: 0.1, strength: 2}", kFixed)),
            1e-5);
  EXPECT_LT(linearisation_error(game_2d("reflecting", kFixed)), 1e-5);
  EXPECT_LT(linearisation_error(game_2d("periodic", kFixed)), 1e-5);
  // q = 1.7 (game_3d): the Hessian of |p|^q is singular at p = 0 (see game_room_2d). On 2
  // ranks the central differences at 1e-6 of the U of this game's 4 fixed-point iterations
  // are off by 2e-4 and at 1e-8 agree to 1e-7, which is that kink (a one-sided gradient within
  // the difference step of 0 at some point; inferred from the two errors, not located).
  EXPECT_LT(linearisation_error(game_3d("reflecting", kFixed), 1e-8), 1e-5);
  EXPECT_LT(linearisation_error(game_3d("periodic", kFixed)), 1e-5);
  EXPECT_LT(linearisation_error(game_exit_1d(kFixed)), 1e-5);
  EXPECT_LT(linearisation_error(game_room_2d(kFixed)), 1e-5);
  EXPECT_LT(linearisation_error(game_room_3d(kFixed)), 1e-5);
  EXPECT_LT(linearisation_error(game_levy_1d(kFixed)), 1e-5);
  EXPECT_LT(linearisation_error(game_levy_2d(kFixed)), 1e-5);
  EXPECT_LT(linearisation_error(game_congestion_1d(kFixed)), 1e-5);
  EXPECT_LT(linearisation_error(game_congestion_2d(kFixed)), 1e-5);
  EXPECT_LT(linearisation_error(game_congestion_alpha_1_5_1d(kFixed)), 1e-5);
  EXPECT_LT(linearisation_error(game_congestion_levy_1d(kFixed)), 1e-5);
}

// The Fokker-Planck step at its own density by Newton's method in m^{n+1}
// (FokkerPlanckFdm::step_at_own_density) against the limit of repeating the step with the
// drift at the last result (the map whose fixed point it solves), at the U of a few
// fixed-point iterations, every level: the same density to 1e-10, m >= 0, the mass balance
// (1D, walls: the sum is the previous level's) to round-off, and a few Newton iterations
// where the repetition needs many (epsilon 0.01). 1D (the tridiagonal fast path, 1, 2, 3
// ranks) and the 2D room with an exit and a pillar (Krylov).
TEST(MfgNewton, StepAtOwnDensityIsTheRepeatedStepsLimit) {
  const fracmfg::test::ScopedOptions tight(fracmfg::test::Options{{"-mfg_fp_ksp_rtol", "1e-14"}});
  struct Case {
    const char* name;
    std::string deck;
    int max_newton;
  };
  const Case cases[] = {
      {"congestion_1d", game_congestion_1d(kFixed), 6},
      {"congestion_small_epsilon_1d", game_congestion_small_epsilon_1d(kFixed), 8},
      {"congestion_alpha_1_5_1d", game_congestion_alpha_1_5_1d(kFixed), 8},
      {"congestion_levy_1d_order_1_5", game_congestion_levy_1d(kFixed), 8},
      {"congestion_room_exit_obstacle_2d", game_congestion_2d(kFixed), 8}};
  for (const Case& c : cases) {
    const auto cfg = fracmfg::test::mfg_config(c.deck, 4);
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger());
    solver.solve();
    const mfg::Model& model = solver.model();
    DM dm = model.dm();
    mfg::FokkerPlanckFdm fp(model);
    VecPtr m = detail::global_vec(dm), newton = detail::global_vec(dm),
           repeated = detail::global_vec(dm), drift = detail::global_vec(dm);
    FRACMFG_PETSC_CHECK(VecCopy(model.initial_density(), m.get()));
    int most_newton = 0, most_rounds = 0;
    double worst = 0.0, worst_mass = 0.0, lowest = std::numeric_limits<double>::infinity();
    for (int n = 0; n < model.steps(); ++n) {
      Vec u = solver.u(n);
      fp.set_time_level(n);
      const auto r = fp.step_at_own_density(u, m.get(), model.fp_source(n + 1), newton.get(),
                                            nullptr, 1e-13, 50);
      EXPECT_TRUE(r.converged) << c.name << " step " << n << ": change " << r.change;
      most_newton = std::max(most_newton, r.iterations);
      FRACMFG_PETSC_CHECK(VecCopy(m.get(), drift.get()));
      int rounds = 0;
      for (PetscReal change = 1.0; change > 1e-14 && rounds < 2000; ++rounds) {
        fp.set_density(drift.get());
        fp.step(u, m.get(), model.fp_source(n + 1), repeated.get());
        PetscReal size = 0.0;
        FRACMFG_PETSC_CHECK(VecNorm(repeated.get(), NORM_INFINITY, &size));
        FRACMFG_PETSC_CHECK(VecAXPY(drift.get(), -1.0, repeated.get()));
        FRACMFG_PETSC_CHECK(VecNorm(drift.get(), NORM_INFINITY, &change));
        change /= size;
        FRACMFG_PETSC_CHECK(VecCopy(repeated.get(), drift.get()));
      }
      most_rounds = std::max(most_rounds, rounds);
      PetscReal size = 0.0, diff = 0.0, lo = 0.0;
      FRACMFG_PETSC_CHECK(VecNorm(repeated.get(), NORM_INFINITY, &size));
      FRACMFG_PETSC_CHECK(VecMin(newton.get(), nullptr, &lo));
      lowest = std::min(lowest, static_cast<double>(lo));
      if (!model.grid().has_exit()) {
        PetscScalar before = 0.0, after = 0.0;
        FRACMFG_PETSC_CHECK(VecSum(m.get(), &before));
        FRACMFG_PETSC_CHECK(VecSum(newton.get(), &after));
        worst_mass = std::max(worst_mass, std::abs(after - before) / before);
      }
      FRACMFG_PETSC_CHECK(VecAXPY(repeated.get(), -1.0, newton.get()));
      FRACMFG_PETSC_CHECK(VecNorm(repeated.get(), NORM_INFINITY, &diff));
      worst = std::max(worst, diff / size);
      FRACMFG_PETSC_CHECK(VecCopy(newton.get(), m.get()));
    }
    if (fracmfg::test::world_rank() == 0) {
      std::printf(
          "  %s: Newton at most %d iterations per step, repeated step %d rounds; max "
          "relative difference %.2e, mass %.2e, min m %.2e\n",
          c.name, most_newton, most_rounds, worst, worst_mass, lowest);
    }
    EXPECT_LT(worst, 1e-10) << c.name;
    EXPECT_LE(most_newton, c.max_newton) << c.name;
    EXPECT_LT(worst_mass, 1e-13) << c.name;
    EXPECT_GE(lowest, 0.0) << c.name;
  }
}

using Solved = fracmfg::test::SolvedGame;

Solved solve_on(MPI_Comm comm, const std::string& deck) {
  return fracmfg::test::solve_game(comm, deck);
}

struct Game {
  const char* name;
  std::string (*deck)(const std::string& iteration);
  // The fixed point's damping for the reference solution: 0.5 oscillates without end on the
  // Levy games (changes 0.2-0.3 after 80 iterations), 0.3 converges in about 80.
  const char* damping = "0.5";
};

const Game kGames[] = {
    {"periodic_1d_quadratic_log",
     [](const std::string& it) {
       return game_1d("periodic", "{type: quadratic}", "{type: log}", it);
     }},
    {"reflecting_1d_power_q2_5_power",
     [](const std::string& it) {
       return game_1d("reflecting", "{type: power, exponent: 2.5}",
                      "{type: power, exponent: 1, strength: 0.5}", it);
     }},
    {"periodic_1d_power_q3_log",
     [](const std::string& it) {
       return game_1d("periodic", "{type: power, exponent: 3}", "{type: log, strength: 0.5}", it);
     }},
    {"reflecting_1d_nonlocal",
     [](const std::string& it) {
       return game_1d("reflecting", "{type: quadratic}",
                      "{type: nonlocal, width: 0.1, strength: 2}", it);
     }},
    {"reflecting_2d_log", [](const std::string& it) { return game_2d("reflecting", it); }},
    {"periodic_2d_log", [](const std::string& it) { return game_2d("periodic", it); }},
    {"reflecting_3d_power_log", [](const std::string& it) { return game_3d("reflecting", it); }},
    {"exit_obstacle_1d", game_exit_1d},
    {"room_exits_obstacle_2d_power", game_room_2d},
    {"room_exits_obstacle_3d", game_room_3d},
    {"levy_1d_order_1_5_power", game_levy_1d, "0.3"},
    {"levy_2d_order_1_6", game_levy_2d, "0.3"},
    {"congestion_1d", game_congestion_1d},
    {"congestion_small_epsilon_1d", game_congestion_small_epsilon_1d},
    {"congestion_alpha_1_5_1d", game_congestion_alpha_1_5_1d},
    {"congestion_levy_1d_order_1_5", game_congestion_levy_1d, "0.3"},
    {"congestion_room_exit_obstacle_2d", game_congestion_2d},
};

std::string fixed_tight(const char* damping) {
  return std::string("{method: fixed_point, damping: ") + damping +
         ", tolerance: 1.0e-10, max_iterations: MAXIT}";
}
const char* kNewtonTight = "{method: newton, tolerance: 1.0e-10, max_iterations: MAXIT}";

// Both methods solve the same discrete game: Newton's solution equals the fixed point's to
// the tolerance, in fewer outer iterations (each Newton iteration costs one evaluation of the
// sweeps and a few linearised sweeps). On one rank: SameUAndMOnAnyRankCount below shows
// that the job's ranks give rank 0's fields, so this comparison at 2 and 3 ranks would repeat
// it (and took 26 s of the 3-rank run).
TEST(MfgNewton, ConvergesToTheFixedPointSolutionInFewerIterations) {
  if (fracmfg::test::world_size() > 1) {
    GTEST_SKIP() << "compared on one rank; the rank counts agree by SameUAndMOnAnyRankCount";
  }
  const fracmfg::test::ScopedOptions tight({{"-mfg_hjb_ksp_rtol", "1e-13"},
                                            {"-mfg_fp_ksp_rtol", "1e-14"},
                                            {"-mfg_newton_sweep_ksp_rtol", "1e-12"}});
  for (const Game& g : kGames) {
    const Solved fixed = solve_on(MPI_COMM_WORLD, g.deck(fixed_tight(g.damping)));
    const Solved newton = solve_on(MPI_COMM_WORLD, g.deck(kNewtonTight));
    EXPECT_TRUE(fixed.converged) << g.name;
    EXPECT_TRUE(newton.converged) << g.name;
    const double du = fracmfg::test::relative_difference(fixed.levels.u, newton.levels.u);
    const double dm = fracmfg::test::relative_difference(fixed.levels.m, newton.levels.m);
    if (fracmfg::test::world_rank() == 0) {
      std::printf(
          "  %s: fixed point %d iterations, Newton %d; max relative difference u %.2e, "
          "m %.2e\n",
          g.name, fixed.iterations, newton.iterations, du, dm);
    }
    EXPECT_LT(du, 1e-8) << g.name;
    EXPECT_LT(dm, 1e-8) << g.name;
    EXPECT_LE(2 * newton.iterations, fixed.iterations) << g.name;
  }
}

// The same fields on every rank count: the job's ranks against rank 0 alone (the test runs
// at 1, 2 and 3 ranks).
TEST(MfgNewton, SameUAndMOnAnyRankCount) {
  const fracmfg::test::ScopedOptions tight({{"-mfg_hjb_ksp_rtol", "1e-13"},
                                            {"-mfg_fp_ksp_rtol", "1e-14"},
                                            {"-mfg_newton_sweep_ksp_rtol", "1e-13"}});
  const fracmfg::test::SubComm one(1);
  for (const Game& g : kGames) {
    const std::string deck = g.deck(kNewtonTight);
    const Solved all = solve_on(MPI_COMM_WORLD, deck);
    if (one.comm == MPI_COMM_NULL) continue;
    const Solved single = solve_on(one.comm, deck);
    const double du = fracmfg::test::relative_difference(single.levels.u, all.levels.u);
    const double dm = fracmfg::test::relative_difference(single.levels.m, all.levels.m);
    std::printf("  %s: %d vs %d iterations, max relative difference u %.2e, m %.2e\n", g.name,
                all.iterations, single.iterations, du, dm);
    EXPECT_EQ(all.iterations, single.iterations) << g.name;
    EXPECT_LT(du, 1e-10) << g.name;
    EXPECT_LT(dm, 1e-10) << g.name;
  }
}

// Interrupted after 3 iterations, checkpointed and restarted (on this job's ranks), Newton
// ends at the uninterrupted solution: the restart re-evaluates the sweeps that the line
// search had cached, to the HJB tolerance of a fresh iteration, so the two agree to the
// tolerance rather than to round-off.
TEST(MfgNewton, RestartFromACheckpointEndsAtTheSameSolution) {
  const fracmfg::test::SharedTempDir dir("fracmfg-newton");
  ASSERT_TRUE(fracmfg::test::on_all_ranks(!dir.path().empty()));
  const std::string deck = kGames[0].deck(kNewtonTight);
  const Solved whole = solve_on(MPI_COMM_WORLD, deck);
  const auto cfg = fracmfg::test::mfg_config(deck, 400);
  const std::string file = dir.path() + "/newton.chk.h5";
  mfg::SolveResult r;
  const auto second = fracmfg::test::restarted_after(cfg, 3, file, r);
  EXPECT_TRUE(r.converged);
  const fracmfg::test::MfgLevels resumed = fracmfg::test::levels_of(*second);
  const double du = fracmfg::test::relative_difference(whole.levels.u, resumed.u);
  const double dm = fracmfg::test::relative_difference(whole.levels.m, resumed.m);
  if (fracmfg::test::world_rank() == 0) {
    std::printf(
        "  restart: %d iterations against %d uninterrupted; max relative difference u "
        "%.2e, m %.2e\n",
        r.iterations, whole.iterations, du, dm);
  }
  EXPECT_LT(du, 1e-8);
  EXPECT_LT(dm, 1e-8);
}

// Grid sequencing (iteration.coarse_levels) with Newton on every level: the same solution as
// the cold start, in no more fine iterations.
TEST(MfgNewton, CoarseStartGivesTheColdStartSolution) {
  const Solved cold = solve_on(MPI_COMM_WORLD, kGames[4].deck(kNewtonTight));
  const Solved coarse = solve_on(
      MPI_COMM_WORLD,
      kGames[4].deck(
          "{method: newton, tolerance: 1.0e-10, max_iterations: MAXIT, coarse_levels: 1}"));
  EXPECT_TRUE(coarse.converged);
  const double du = fracmfg::test::relative_difference(cold.levels.u, coarse.levels.u);
  const double dm = fracmfg::test::relative_difference(cold.levels.m, coarse.levels.m);
  if (fracmfg::test::world_rank() == 0) {
    std::printf(
        "  coarse start: %d fine iterations against %d cold; max relative difference u "
        "%.2e, m %.2e\n",
        coarse.iterations, cold.iterations, du, dm);
  }
  EXPECT_LE(coarse.iterations, cold.iterations);
  EXPECT_LT(du, 1e-8);
  EXPECT_LT(dm, 1e-8);
}

// A Problem built by hand (no deck reader) with what Newton does not linearise is refused
// with the reason.
// With alpha > 1 and a small epsilon the flux m (epsilon + m)^-alpha falls above m =
// epsilon / (alpha - 1) and the implicit step need not have a solution at Newton's iterates:
// after 5 outer iterations whose evaluation stayed inexact Newton stops with a message that
// names the fixed point (which converges on this game), instead of iterating to
// max_iterations.
TEST(MfgNewton, StopsWhenTheCongestionStepsHaveNoSolution) {
  const std::string deck = game_1d(
      "reflecting", "{type: congestion, epsilon: 0.01, alpha: 1.5, control_cost: \"1 + 0.5*x\"}",
      "{type: log}", kNewtonTight);
  const auto cfg = fracmfg::test::mfg_config(deck, 200);
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                     fracmfg::test::quiet_logger());
  try {
    solver.solve();
    ADD_FAILURE() << "no error";
  } catch (const fracmfg::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("found no solution in m^{n+1} at the last 5 iterates"), std::string::npos)
        << what;
    EXPECT_NE(what.find("epsilon / (alpha - 1) = 0.02"), std::string::npos) << what;
    EXPECT_NE(what.find("use mfg.iteration.method: fixed_point"), std::string::npos) << what;
    EXPECT_LE(static_cast<int>(solver.history().size()), 10);
  }
  const Solved fixed =
      solve_on(MPI_COMM_WORLD, game_1d("reflecting",
                                       "{type: congestion, epsilon: 0.01, alpha: 1.5, "
                                       "control_cost: \"1 + 0.5*x\"}",
                                       "{type: log}", fixed_tight("0.5")));
  EXPECT_TRUE(fixed.converged);
}

// The line search's merit at U_k comes from sweeps solved to the tolerance of the iteration
// before, the trials' from tighter ones; a loose HJB sweep can stop near its start and
// understate ||U - Psi(U)|| (on this game 1.75e-7 against 4.6e-7), and then every step length
// failed and two iterations fell back to the damped fixed point (11 iterations). Where the
// full step fails against a looser merit, U_k is evaluated again at the trials' tolerance:
// every iteration takes the full Newton step, 10 iterations.
TEST(MfgNewton, TheLineSearchComparesMeritsOfTheSameAccuracy) {
  const std::string deck = fracmfg::test::exit_power_1d_game(
      "{method: newton, coarse_levels: 0, tolerance: 1.0e-9, max_iterations: MAXIT}");
  const auto cfg = fracmfg::test::mfg_config(deck, 100);
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                     fracmfg::test::quiet_logger());
  const auto r = solver.solve();
  ASSERT_TRUE(r.converged);
  const auto& h = solver.history();
  for (const auto& rec : h) EXPECT_EQ(rec.damping, 1.0) << "iteration " << rec.iteration;
  EXPECT_LE(h.size(), 10U);
}

// Re-splitting the grid between outer iterations (Solver::set_balance; here rank r is made to
// look r + 1 times as fast) moves U and M and builds Newton's work space again on the new
// grid, dropping the cached sweeps: the same solution, to the tolerance.
double faster_by_rank(int rank, std::int64_t) {
  return 1.0 + rank;
}

TEST(MfgNewton, ReSplitGridEndsAtTheSameSolution) {
  for (const Game& g : {kGames[0], kGames[4]}) {
    const std::string deck = g.deck(kNewtonTight);
    const Solved plain = solve_on(MPI_COMM_WORLD, deck);
    const auto cfg = fracmfg::test::mfg_config(deck, 400);
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger());
    fracmfg::core::BalanceOptions o;
    o.enabled = true;
    o.interval = 1;
    o.patience = 1;
    o.speed = faster_by_rank;
    solver.set_balance(o);
    const auto r = solver.solve();
    EXPECT_TRUE(r.converged) << g.name;
    EXPECT_EQ(solver.resplits() > 0, fracmfg::test::world_size() > 1) << g.name;
    const fracmfg::test::MfgLevels moved = fracmfg::test::levels_of(solver);
    const double du = fracmfg::test::relative_difference(plain.levels.u, moved.u);
    const double dm = fracmfg::test::relative_difference(plain.levels.m, moved.m);
    if (fracmfg::test::world_rank() == 0) {
      std::printf(
          "  %s re-split %d times: %d iterations against %d; max relative difference u "
          "%.2e, m %.2e\n",
          g.name, solver.resplits(), r.iterations, plain.iterations, du, dm);
    }
    EXPECT_LT(du, 1e-8) << g.name;
    EXPECT_LT(dm, 1e-8) << g.name;
  }
}

}  // namespace
