// mfg_coupled: a mean field game solved by fracmfg inside a host code that owns MPI.
//
//   mpiexec -n 2 ./mfg_coupled        # any rank count; 1 works too
//
// The host code holds, on its own grid of 64 cells of [0, 1], a potential V (a valley at
// x = 0.7 on a tilted floor) and a crowd m0 (a bump at x = 0.25), as plain arrays. It hands
// them to fracmfg as samples (mfg::Field::samples: exact at the host's points, linear in
// between) and solves, on the first max(1, size - 1) ranks of MPI_COMM_WORLD, the game
//
//   -u_t - nu u_xx + |u_x|^2 / 2 = log m + V(x),        u(T) = G(x) = (x - 0.5)^2,
//    m_t - nu m_xx - (m u_x)_x = 0,                     m(0) = m0 / mass(m0),
//
// on [0, 1] with reflecting walls, T = 0.5, nu = 0.05, on a grid of 101 points (grid
// sequencing solves it on 50 and 25 points first, where the samples are interpolated as
// well). It reads u(t = 0) and m(T) back as arrays of the whole grid, sends u(t = 0) to the
// last rank (the rest of the host code, when there are several ranks), and checks that the
// fixed point converged, that the values are finite and that m(T) has mass 1 (the
// Fokker-Planck scheme conserves mass exactly). The exit code is non-zero on every rank when
// any check failed.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fracmfg/core/environment.hpp>
#include <fracmfg/core/error.hpp>
#include <fracmfg/mfg/problem.hpp>
#include <fracmfg/mfg/solver.hpp>
#include <vector>

namespace mfg = fracmfg::mfg;

namespace {

constexpr int kHostCells = 64;

// The host code's data: cell-centred values on its own grid of [0, 1].
struct HostData {
  std::vector<double> potential, density;
};

HostData host_data() {
  HostData h;
  for (int i = 0; i < kHostCells; ++i) {
    const double x = (i + 0.5) / kHostCells;
    h.potential.push_back(0.3 * x - 0.8 * std::exp(-(x - 0.7) * (x - 0.7) / 0.02));
    h.density.push_back(std::exp(-(x - 0.25) * (x - 0.25) / 0.01));
  }
  return h;
}

bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double a) { return std::isfinite(a); });
}

// Builds and solves the game on `comm`, checks it and leaves u(t = 0) of the whole grid in u0
// (on every rank of comm). Returns the number of failed checks (the same on every rank).
int solve_game(MPI_Comm comm, const HostData& host, fracmfg::core::Logger log,
               std::vector<double>& u0) {
  // 1. The problem, in C++. Numbers are the deck's defaults unless set here.
  mfg::Problem p;
  p.domain.length = {1.0};
  p.domain.boundary = fracmfg::io::MfgConfig::Domain::Boundary::reflecting;
  p.grid.points = {101};
  p.time.horizon = 0.5;
  p.time.steps = 40;
  p.diffusion = 0.05;
  p.coupling.type = mfg::Problem::Coupling::Type::log;
  // The host's arrays. Samples are placed like the solver's grid points (reflecting walls:
  // cell centres), so a host grid of N cells of [0, 1] is Field::samples({N}, values). The
  // names appear in messages (e.g. a negative density would be reported as host.density).
  p.coupling.potential = mfg::Field::samples({kHostCells}, host.potential).named("host.potential");
  p.initial_density = mfg::Field::samples({kHostCells}, host.density).named("host.density");
  p.terminal_cost = mfg::Field::function([](double x, double) { return (x - 0.5) * (x - 0.5); });
  p.iteration.damping = 0.6;
  p.iteration.anderson = 2;
  p.iteration.tolerance = 1e-8;
  p.iteration.coarse_levels = 2;

  // 2. Solve (collective on comm). No exec::Selector: node-local kernels run on the host.
  mfg::Solver solver(comm, p, nullptr, log);
  const mfg::SolveResult r = solver.solve();

  // 3. The results as arrays of the whole grid, natural order, on every rank of comm.
  u0 = solver.gather_u(0);
  const std::vector<double> mt = solver.gather_m(solver.steps());
  const mfg::Grid& g = solver.model().grid();
  double mass = 0.0;
  for (const double v : mt) mass += v * g.cell_volume();

  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const bool finite = all_finite(u0) && all_finite(mt);
  const bool mass_ok = std::fabs(mass - 1.0) <= 1e-10;
  const bool sizes_ok =
      static_cast<PetscInt>(u0.size()) == g.size() && static_cast<PetscInt>(mt.size()) == g.size();
  if (rank == 0) {
    std::printf(
        "mfg_coupled: %d solver rank(s): %s after %d iterations (change u %.2e, m %.2e) %s\n", size,
        r.converged ? "converged" : "not converged", r.iterations, r.change_u, r.change_m,
        r.converged ? "ok" : "FAILED");
    std::printf("mfg_coupled: u(t=0) and m(T) on %lld points, finite %s\n",
                static_cast<long long>(g.size()), finite && sizes_ok ? "ok" : "FAILED");
    std::printf("mfg_coupled: mass of m(T) = 1 %+.1e %s\n", mass - 1.0, mass_ok ? "ok" : "FAILED");
  }
  return (r.converged ? 0 : 1) + (finite && sizes_ok ? 0 : 1) + (mass_ok ? 0 : 1);
}

}  // namespace

int main(int argc, char** argv) {
  // 1. The host code initialises MPI itself and gives fracmfg the first max(1, size - 1)
  //    ranks; the last rank (when there are several) goes on with the host's other work.
  MPI_Init(&argc, &argv);
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const int solvers = std::max(1, world_size - 1);
  const bool solver_rank = world_rank < solvers;
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, solver_rank ? 0 : 1, world_rank, &sub);
  const int host_rank = world_size - 1;

  // 2. The host's data, on every rank (Field samples are replicated; a host that holds them
  //    on one rank broadcasts them first).
  const HostData host = host_data();

  int failed = 0;
  std::vector<double> u0;
  if (solver_rank) {
    // 3. fracmfg on the sub-communicator. MPI is up, so the Environment starts only PETSc
    //    (with PETSC_COMM_WORLD = sub) and Kokkos, and finalises only those when it ends.
    fracmfg::core::EnvironmentOptions env_options;
    env_options.comm = sub;
    fracmfg::core::Environment env(&argc, &argv, env_options);
    try {
      failed = solve_game(sub, host, env.log(), u0);
    } catch (const fracmfg::Error& e) {
      // Solver errors are thrown on every rank of `sub` alike (e.g. a diverged iteration).
      std::fprintf(stderr, "mfg_coupled: rank %d: %s\n", world_rank, e.what());
      failed = 1;
    }
  }  // 4. The Environment ends here: Kokkos and PETSc are finalised, MPI is still ours.

  // 5. Coupling back: solver rank 0 sends u(t = 0) to the host rank (a no-op with one rank).
  if (world_size > 1) {
    if (world_rank == 0) {
      int n = failed == 0 ? static_cast<int>(u0.size()) : 0;
      MPI_Send(&n, 1, MPI_INT, host_rank, 0, MPI_COMM_WORLD);
      MPI_Send(u0.data(), n, MPI_DOUBLE, host_rank, 1, MPI_COMM_WORLD);
    } else if (world_rank == host_rank) {
      int n = 0;
      MPI_Recv(&n, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      std::vector<double> received(static_cast<std::size_t>(n));
      MPI_Recv(received.data(), n, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const bool ok = n > 0 && all_finite(received);
      const auto [lo, hi] = std::minmax_element(received.begin(), received.end());
      std::printf("mfg_coupled: host rank %d received u(t=0): %d values in [%.4f, %.4f] %s\n",
                  world_rank, n, n > 0 ? *lo : 0.0, n > 0 ? *hi : 0.0, ok ? "ok" : "FAILED");
      if (!ok) failed = 1;
    }
  }

  // Every rank leaves with the same code.
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (world_rank == 0) std::printf("mfg_coupled: %s\n", failed ? "FAILED" : "all checks passed");
  MPI_Comm_free(&sub);
  MPI_Finalize();
  return failed != 0 ? 1 : 0;
}
