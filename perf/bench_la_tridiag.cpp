// The exact distributed tridiagonal solver (PC fracmfg_tridiag with KSPPREONLY) against
// PETSc's sparse direct solvers MUMPS and SuperLU_dist (KSPPREONLY + PCLU) and, for
// reference, GMRES + Jacobi, on the same matrix: a 1D DMDA (dof 1, stencil width 1, even
// ownership), periodic or not. Prints one table on rank 0.
//
//   mpiexec -n 1 ./perf/bench_la_tridiag -n 1000000
//   mpiexec -n 2 ./perf/bench_la_tridiag -n 1000000 -periodic -problem diffusion
//   ./perf/bench_la_tridiag -n 100000 -methods fracmfg_tridiag,mumps -reps 20
//
// Options (PETSc options database):
//   -n <N>            unknowns (default 1000000)
//   -periodic         cyclic matrix (DM_BOUNDARY_PERIODIC)
//   -problem <p>      random: random rows, strictly diagonally dominant with random signs
//                     (default); diffusion: implicit diffusion step I/dt - nu d^2/dx^2 on
//                     [0, 1] with dt = 1e-3, nu = 0.05 (an M-matrix, as in the L1 scheme and
//                     the HJB Newton steps)
//   -reps <k>         timed solves per direct method (default 10)
//   -reps_iterative <k>  timed solves of gmres_jacobi (default 1; at most 2000 iterations
//                     each, rtol 1e-12: on the diffusion matrix it does not converge)
//   -methods <list>   comma-separated subset of fracmfg_tridiag, mumps, superlu_dist,
//                     gmres_jacobi (default: all)
//   -<method>_...     options for that method's KSP/PC (prefix "<method>_"), e.g.
//                     -gmres_jacobi_ksp_rtol 1e-8
// Times are wall-clock seconds, the maximum over ranks: "setup" is the first KSPSetUp
// (for LU: symbolic and numeric factorisation), "re-setup" the KSPSetUp after the matrix
// values changed (a Newton step: numeric factorisation only), "solve" the mean of -reps
// KSPSolve calls (see -reps). "error" is ||x - x_true|| / ||x_true|| with b = A x_true. The x/us
// columns are the ratios to fracmfg_tridiag's times.
#include <mpi.h>
#include <petscdmda.h>
#include <petscksp.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "fracmfg/core/environment.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/la/petsc_handles.hpp"
#include "fracmfg/la/tridiag_pc.hpp"

namespace la = fracmfg::la;

namespace {

double uniform(std::uint64_t seed, std::uint64_t index, std::uint64_t stream) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + index * 0xBF58476D1CE4E5B9ULL + stream;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

struct Options {
  PetscInt n = 1000000;
  PetscBool periodic = PETSC_FALSE;
  std::string problem = "random";
  PetscInt reps = 10;
  PetscInt reps_iterative = 1;
  std::vector<std::string> methods = {"fracmfg_tridiag", "mumps", "superlu_dist", "gmres_jacobi"};
};

Options read_options() {
  Options o;
  FRACMFG_PETSC_CHECK(PetscOptionsGetInt(nullptr, nullptr, "-n", &o.n, nullptr));
  FRACMFG_PETSC_CHECK(PetscOptionsGetBool(nullptr, nullptr, "-periodic", &o.periodic, nullptr));
  FRACMFG_PETSC_CHECK(PetscOptionsGetInt(nullptr, nullptr, "-reps", &o.reps, nullptr));
  FRACMFG_PETSC_CHECK(
      PetscOptionsGetInt(nullptr, nullptr, "-reps_iterative", &o.reps_iterative, nullptr));
  char text[256] = {0};
  PetscBool set = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(
      PetscOptionsGetString(nullptr, nullptr, "-problem", text, sizeof(text), &set));
  if (set) o.problem = text;
  if (o.problem != "random" && o.problem != "diffusion") {
    throw fracmfg::UsageError("-problem must be random or diffusion, got " + o.problem);
  }
  FRACMFG_PETSC_CHECK(
      PetscOptionsGetString(nullptr, nullptr, "-methods", text, sizeof(text), &set));
  if (set) {
    o.methods.clear();
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (!item.empty()) o.methods.push_back(item);
    }
  }
  if (o.n < 3 || o.reps < 1 || o.reps_iterative < 1) {
    throw fracmfg::UsageError("need -n >= 3, -reps >= 1 and -reps_iterative >= 1");
  }
  return o;
}

// Row i of the matrix: sub, diag, super, scaled by `factor` (to change the values between the
// first setup and the re-setup).
void row_values(const Options& o, PetscInt i, double factor, double v[3]) {
  if (o.problem == "diffusion") {
    const double h = 1.0 / static_cast<double>(o.n);
    const double k = 0.05 / (h * h);
    v[0] = -k * factor;
    v[1] = (1.0 / 1e-3 + 2.0 * k) * factor;
    v[2] = -k * factor;
    if (!o.periodic && i == 0) v[1] -= k * factor;  // reflecting ends
    if (!o.periodic && i == o.n - 1) v[1] -= k * factor;
    return;
  }
  const auto u = static_cast<std::uint64_t>(i);
  v[0] = uniform(7, u, 1);
  v[2] = uniform(7, u, 2);
  const double sign = uniform(7, u, 4) < 0.0 ? -1.0 : 1.0;
  v[1] = sign * (std::fabs(v[0]) + std::fabs(v[2]) + 0.25 + std::fabs(uniform(7, u, 3)));
  for (int k = 0; k < 3; ++k) v[k] *= factor;
}

void fill(Mat A, const Options& o, double factor) {
  PetscInt rstart = 0;
  PetscInt rend = 0;
  FRACMFG_PETSC_CHECK(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; ++i) {
    double v[3];
    row_values(o, i, factor, v);
    PetscInt cols[3];
    double vals[3];
    int k = 0;
    if (i > 0 || o.periodic) {
      cols[k] = (i - 1 + o.n) % o.n;
      vals[k++] = v[0];
    }
    cols[k] = i;
    vals[k++] = v[1];
    if (i + 1 < o.n || o.periodic) {
      cols[k] = (i + 1) % o.n;
      vals[k++] = v[2];
    }
    FRACMFG_PETSC_CHECK(MatSetValues(A, 1, &i, k, cols, vals, INSERT_VALUES));
  }
  FRACMFG_PETSC_CHECK(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  FRACMFG_PETSC_CHECK(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
}

double max_over_ranks(double t) {
  double m = 0.0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return m;
}

struct Result {
  std::string method;
  bool ok = false;
  std::string note;
  double setup = 0, resetup = 0, solve = 0, error = 0;
  PetscInt iterations = 0;
};

void configure(KSP ksp, const std::string& method) {
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  if (method == "fracmfg_tridiag") {
    FRACMFG_PETSC_CHECK(KSPSetType(ksp, KSPPREONLY));
    FRACMFG_PETSC_CHECK(PCSetType(pc, la::tridiag_pc_type));
  } else if (method == "mumps" || method == "superlu_dist") {
    FRACMFG_PETSC_CHECK(KSPSetType(ksp, KSPPREONLY));
    FRACMFG_PETSC_CHECK(PCSetType(pc, PCLU));
    FRACMFG_PETSC_CHECK(
        PCFactorSetMatSolverType(pc, method == "mumps" ? MATSOLVERMUMPS : MATSOLVERSUPERLU_DIST));
  } else if (method == "gmres_jacobi") {
    FRACMFG_PETSC_CHECK(KSPSetType(ksp, KSPGMRES));
    FRACMFG_PETSC_CHECK(PCSetType(pc, PCJACOBI));
    FRACMFG_PETSC_CHECK(KSPSetTolerances(ksp, 1e-12, 1e-300, PETSC_DEFAULT, 2000));
  } else {
    throw fracmfg::UsageError("unknown method " + method +
                              " (fracmfg_tridiag, mumps, superlu_dist, gmres_jacobi)");
  }
  FRACMFG_PETSC_CHECK(KSPSetOptionsPrefix(ksp, (method + "_").c_str()));
  FRACMFG_PETSC_CHECK(KSPSetFromOptions(ksp));
}

Result run(const Options& o, DM da, const std::string& method) {
  Result r;
  r.method = method;
  la::MatHandle A;
  FRACMFG_PETSC_CHECK(DMCreateMatrix(da, A.out()));
  fill(A, o, 1.0);
  la::VecHandle x_true;
  la::VecHandle b;
  la::VecHandle x;
  FRACMFG_PETSC_CHECK(MatCreateVecs(A, x_true.out(), b.out()));
  FRACMFG_PETSC_CHECK(VecDuplicate(x_true, x.out()));
  FRACMFG_PETSC_CHECK(VecSetRandom(x_true, nullptr));

  la::KspHandle ksp = la::create_ksp(PETSC_COMM_WORLD);
  FRACMFG_PETSC_CHECK(KSPSetOperators(ksp, A, A));
  configure(ksp, method);

  MPI_Barrier(PETSC_COMM_WORLD);
  double t0 = MPI_Wtime();
  FRACMFG_PETSC_CHECK(KSPSetUp(ksp));
  r.setup = max_over_ranks(MPI_Wtime() - t0);

  // New values, same pattern (a Newton step), then the timed solves.
  fill(A, o, 1.5);
  FRACMFG_PETSC_CHECK(MatMult(A, x_true, b));
  // KSPSetUp returns early for a set-up KSP; PCSetUp sees the new matrix state and sets up
  // again, as KSPSolve would.
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  MPI_Barrier(PETSC_COMM_WORLD);
  t0 = MPI_Wtime();
  FRACMFG_PETSC_CHECK(PCSetUp(pc));
  r.resetup = max_over_ranks(MPI_Wtime() - t0);

  // Direct solves: a warm-up (first touch of work space), then -reps timed ones. The
  // iterative reference is timed over -reps_iterative solves without warm-up.
  const bool iterative = method == "gmres_jacobi";
  const PetscInt reps = iterative ? o.reps_iterative : o.reps;
  if (!iterative) FRACMFG_PETSC_CHECK(KSPSolve(ksp, b, x));
  MPI_Barrier(PETSC_COMM_WORLD);
  t0 = MPI_Wtime();
  for (PetscInt k = 0; k < reps; ++k) FRACMFG_PETSC_CHECK(KSPSolve(ksp, b, x));
  r.solve = max_over_ranks(MPI_Wtime() - t0) / static_cast<double>(reps);
  FRACMFG_PETSC_CHECK(KSPGetIterationNumber(ksp, &r.iterations));
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  FRACMFG_PETSC_CHECK(KSPGetConvergedReason(ksp, &reason));
  if (reason < 0) r.note = std::string("diverged: ") + KSPConvergedReasons[reason];

  PetscReal ref = 0;
  PetscReal err = 0;
  FRACMFG_PETSC_CHECK(VecNorm(x_true, NORM_2, &ref));
  FRACMFG_PETSC_CHECK(VecAXPY(x, -1.0, x_true));
  FRACMFG_PETSC_CHECK(VecNorm(x, NORM_2, &err));
  r.error = err / ref;
  r.ok = true;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  fracmfg::core::EnvironmentOptions opts;
  opts.log_level = fracmfg::core::LogLevel::warn;
  fracmfg::core::Environment env(&argc, &argv, opts);
  try {
    const Options o = read_options();
    la::DmHandle da;
    FRACMFG_PETSC_CHECK(DMDACreate1d(PETSC_COMM_WORLD,
                                     o.periodic ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE, o.n, 1,
                                     1, nullptr, da.out()));
    FRACMFG_PETSC_CHECK(DMSetUp(da));

    std::vector<Result> results;
    for (const std::string& m : o.methods) {
      try {
        results.push_back(run(o, da, m));
      } catch (const fracmfg::PetscError& e) {
        Result r;
        r.method = m;
        r.note = e.what();
        results.push_back(r);
      }
    }

    if (env.rank() == 0) {
      std::printf("# N = %ld, %d rank(s), %s, problem %s, %ld timed solves\n",
                  static_cast<long>(o.n), env.size(), o.periodic ? "periodic" : "non-periodic",
                  o.problem.c_str(), static_cast<long>(o.reps));
      std::printf("%-16s %11s %11s %11s %6s %9s %10s %10s %10s\n", "method", "setup[s]",
                  "resetup[s]", "solve[s]", "its", "error", "setup/us", "resetup/us", "solve/us");
      const Result* ours = nullptr;
      for (const Result& r : results) {
        if (r.method == "fracmfg_tridiag" && r.ok) ours = &r;
      }
      for (const Result& r : results) {
        if (!r.ok) {
          std::printf("%-16s failed: %s\n", r.method.c_str(), r.note.c_str());
          continue;
        }
        std::printf("%-16s %11.4e %11.4e %11.4e %6ld %9.2e", r.method.c_str(), r.setup, r.resetup,
                    r.solve, static_cast<long>(r.iterations), r.error);
        if (ours != nullptr) {
          std::printf(" %10.3g %10.3g %10.3g", r.setup / ours->setup, r.resetup / ours->resetup,
                      r.solve / ours->solve);
        }
        std::printf("%s%s\n", r.note.empty() ? "" : "  ", r.note.c_str());
      }
    }
  } catch (const fracmfg::Error& e) {
    if (env.rank() == 0) std::fprintf(stderr, "bench_la_tridiag: %s\n", e.what());
    return 1;
  }
  return 0;
}
