// End-to-end timings of the MFG solver (finite differences): set-up, time per outer
// iteration and total time to convergence, on any number of ranks.
//
//   bench_mfg -problem crowd1d -points 51 -steps 51 -reps 20      # the 51 x 51 problem
//   bench_mfg -problem crowd1d -points 10000 -steps 1000 -tol 1e-6
//   mpiexec -n 2 bench_mfg -problem crowd2d -points 256 -steps 100 -tol 1e-5
//   mpiexec -n 2 bench_mfg -problem crowd3d -points 64 -steps 50 -tol 1e-5
//   perf/mfg_scaling.sh                                           # the whole table
//
// Options: -problem crowd1d | crowd2d | crowd3d, -coupling log | power | nonlocal (crowd1d),
// -points N (per axis), -steps N_t, -tol, -method fixed_point | newton | two_grid | auto | both |
// all | M1,M2,... (both: the fixed point and Newton alternately, rep by rep, one summary each;
// all: the three; a list: those),
// -coarse_points N (two_grid's coarse grid, default 0: automatic), -damping, -anderson p, -max_it,
// -coarse_levels L (grid sequencing, default -1: the method's; the solve time includes the coarse
// solves), -particles N (0: the finite-difference Fokker-Planck solver), -reps (solves timed; the
// minimum and median are printed), and any PETSc option of the solvers (-mfg_hjb_*, -mfg_fp_*).
// The problems are the games of inputs/crowd_1d.yaml (periodic, log coupling),
// inputs/crowd_2d.yaml and inputs/crowd_3d.yaml (reflecting, log coupling, obstacle potential)
// on the given grid.
#include <mpi.h>
#include <petscsys.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "crowd_games.hpp"
#include "fracmfg/core/environment.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/huge_pages.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"

namespace {

std::string option_string(const char* name, const char* fallback) {
  char buf[256] = "";
  PetscBool set = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(PetscOptionsGetString(nullptr, nullptr, name, buf, sizeof buf, &set));
  return set ? std::string(buf) : std::string(fallback);
}

PetscInt option_int(const char* name, PetscInt fallback) {
  PetscInt v = fallback;
  FRACMFG_PETSC_CHECK(PetscOptionsGetInt(nullptr, nullptr, name, &v, nullptr));
  return v;
}

double option_real(const char* name, double fallback) {
  PetscReal v = fallback;
  FRACMFG_PETSC_CHECK(PetscOptionsGetReal(nullptr, nullptr, name, &v, nullptr));
  return v;
}

std::string real(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string deck(const std::string& problem, const std::string& coupling, PetscInt points,
                 PetscInt steps, double tol, double damping, PetscInt anderson, PetscInt max_it,
                 PetscInt particles, PetscInt coarse, const std::string& method,
                 PetscInt coarse_points) {
  const std::string n = std::to_string(points);
  const std::string fp =
      particles > 0
          ? "  fokker_planck: {method: particles, particles: " + std::to_string(particles) + "}\n"
          : std::string();
  const std::string iteration =
      fp + "  iteration: {method: " + method + ", damping: " + real(damping) +
      ", anderson: " + std::to_string(anderson) + ", tolerance: " + real(tol) +
      ", max_iterations: " + std::to_string(max_it) + ", coarse_levels: " + std::to_string(coarse) +
      (method == "two_grid" || method == "auto"
           ? ", coarse_points: " + std::to_string(coarse_points)
           : "") +
      "}\n";
  return "problem: mfg\nmfg:\n" +
         fracmfg::perf::crowd_game(problem, static_cast<long>(points), static_cast<long>(steps),
                                   coupling) +
         iteration;
}

int run(fracmfg::core::Environment& env) {
  const std::string problem = option_string("-problem", "crowd1d");
  const PetscInt points = option_int("-points", problem == "crowd3d"   ? 64
                                                : problem == "crowd2d" ? 256
                                                                       : 51);
  const PetscInt steps = option_int("-steps", problem == "crowd3d"   ? 50
                                              : problem == "crowd2d" ? 100
                                                                     : 51);
  const double tol = option_real("-tol", 1e-8);
  const double damping = option_real("-damping", 0.5);
  const PetscInt anderson = option_int("-anderson", 0);
  const PetscInt max_it = option_int("-max_it", 500);
  const PetscInt reps = option_int("-reps", 1);
  const std::string method = option_string("-method", "fixed_point");
  // -method both: the fixed point and Newton's method alternately, rep by rep, in one
  // process (the same load for both), one summary per method; all: the three; a
  // comma-separated list (fixed_point,auto): those.
  std::vector<std::string> methods;
  if (method == "both") {
    methods = {"fixed_point", "newton"};
  } else if (method == "all") {
    methods = {"fixed_point", "newton", "two_grid"};
  } else {
    std::istringstream list(method);
    for (std::string m; std::getline(list, m, ',');) {
      if (!m.empty()) methods.push_back(m);
    }
  }
  struct Stats {
    std::vector<double> setup, total, per_iteration, cpu_total;
    int iterations = 0;
    long long krylov = 0;
    bool converged = false;
  };
  std::vector<Stats> all(methods.size());
  for (PetscInt r = 0; r < reps; ++r) {
    for (std::size_t which = 0; which < methods.size(); ++which) {
      const auto cfg =
          fracmfg::io::Deck::from_string(
              deck(problem, option_string("-coupling", "log"), points, steps, tol, damping,
                   anderson, max_it, option_int("-particles", 0), option_int("-coarse_levels", -1),
                   methods[which], option_int("-coarse_points", 0)),
              "bench.yaml")
              .mfg();
      Stats& st = all[which];
      MPI_Barrier(env.comm());
      const double t0 = MPI_Wtime();
      fracmfg::mfg::Solver solver(env.comm(), fracmfg::mfg::problem_from_config(cfg), nullptr,
                                  env.log());
      MPI_Barrier(env.comm());
      const double t1 = MPI_Wtime();
      const std::clock_t c1 = std::clock();
      const auto result = solver.solve();
      const double t2 = MPI_Wtime();
      double cpu = static_cast<double>(std::clock() - c1) / CLOCKS_PER_SEC;
      MPI_Allreduce(MPI_IN_PLACE, &cpu, 1, MPI_DOUBLE, MPI_MAX, env.comm());
      st.cpu_total.push_back(cpu);
      st.setup.push_back(t1 - t0);
      st.total.push_back(t2 - t1);
      st.iterations = result.iterations;
      st.converged = result.converged;
      st.krylov = 0;
      for (const auto& rec : solver.history()) st.krylov += rec.krylov_iterations;
      st.per_iteration.push_back((t2 - t1) / std::max(1, result.iterations));
    }
  }
  auto stats = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return std::make_pair(v.front(), v[v.size() / 2]);
  };
  for (std::size_t which = 0; which < methods.size(); ++which) {
    const Stats& st = all[which];
    const auto [setup_min, setup_med] = stats(st.setup);
    const auto [total_min, total_med] = stats(st.total);
    const auto [iter_min, iter_med] = stats(st.per_iteration);
    const auto [cpu_min, cpu_med] = stats(st.cpu_total);
    if (env.rank() == 0) {
      const std::string p = std::to_string(points) + " x ";
      const std::string extent = problem == "crowd3d" ? p + p : problem == "crowd2d" ? p : "";
      std::printf(
          "mfg %s %s%ld x %ld steps, %d rank(s), tol %.0e, %s, damping %.2f, anderson %ld: %s "
          "after %d iterations (GMRES %lld)\n"
          "  set-up %.4f s (median %.4f), solve %.4f s (median %.4f), per iteration %.5f s "
          "(median %.5f), %ld rep(s)\n"
          "  solve CPU time (max over ranks) %.4f s (median %.4f)\n",
          problem.c_str(), extent.c_str(), static_cast<long>(points), static_cast<long>(steps),
          env.size(), tol, methods[which].c_str(), damping, static_cast<long>(anderson),
          st.converged ? "converged" : "NOT converged", st.iterations, st.krylov, setup_min,
          setup_med, total_min, total_med, iter_min, iter_med, static_cast<long>(reps), cpu_min,
          cpu_med);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // As the fracmfg command: large allocations in huge pages (FRACMFG_HUGE_PAGES=0: not).
  fracmfg::core::request_huge_pages(argv);
  fracmfg::core::EnvironmentOptions opts;
  opts.log_level = fracmfg::core::LogLevel::warn;
  return fracmfg::core::guarded_main(
      argc, argv, [](fracmfg::core::Environment& env) { return run(env); }, opts);
}
