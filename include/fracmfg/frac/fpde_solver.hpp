#pragma once
// frac::FpdeSolver: fractional diffusion on [0, Lx] (x [0, Ly]) over [0, T], on a PETSc DMDA.
// The problem (equation, grid, time mesh, data) is a frac::FpdeProblem (fpde_problem.hpp),
// built in code or from a deck (fpde_problem_from_config).
//
// time_fractional (0 < a < 1, Caputo):   D_t^a u = K Laplace u + f(x, y, t[, u])
//   L1 scheme in time on the (graded) mesh t_n = T (n/N)^r (fpde_history.hpp: history
//   summed directly or by sum-of-exponentials), second-order central differences in space;
//   implicit: each step solves (c_n I - K Laplace_h) u^n = f^n + c_n u^{n-1} - h^n,
//   c_n = tau_n^-a / Gamma(2 - a). Error O(N^-min(r a, 2 - a) + h^2) (Stynes, O'Riordan &
//   Gracia 2017; 2 - a for smooth solutions).
// space_fractional (1 < s <= 2, Riesz):   u_t = -K (-Laplace)^(s/2) u + f(x, y, t)
//   fractional centred differences in space (riesz_operator.hpp), O(h^2); theta scheme in
//   time (Crank-Nicolson by default, implicit Euler on request); each step solves
//   (I + theta tau K A) u^n = (I - (1 - theta) tau K A) u^{n-1} + tau (theta f^n +
//   (1 - theta) f^{n-1}) with a Krylov method on the FFT shell matrix (riesz_shell.hpp).
// Each type is a stepper of its own (src/frac/fpde_time_fractional.cpp,
// src/frac/fpde_space_fractional.cpp, behind src/frac/fpde_stepper.hpp); the solver keeps
// what they share: the grid, the time mesh, u, the statistics, checkpoints and error norms.
//
// Boundaries (grid: fpde_grid.hpp):
//   dirichlet: u = boundary_value(x, y, t) at the boundary points (for space_fractional
//     also outside the domain, by constant extension along grid lines);
//   neumann (time_fractional only): outward flux -K du/dn = boundary_value(x, y, t), by
//     the second-order ghost-point closure; boundary rows are scaled by 1/2 (1/4 at
//     corners) so the matrix stays symmetric, and sum_p w_p u_p (w the same weights) is
//     conserved when f = 0 and the flux is 0;
//   periodic: the DMDA wraps around.
//
// Linear algebra (all overridable through PETSc's options database with the prefix
// options.prefix, "fpde_" by default: -fpde_ksp_type, -fpde_pc_type, -fpde_ksp_rtol, ...):
//   time_fractional 1D: KSPPREONLY + the exact distributed tridiagonal PC "fracmfg_tridiag";
//   time_fractional 2D: CG + hypre BoomerAMG (algebraic multigrid; GAMG when PETSc has no
//     hypre, or with -fpde_pc_type gamg: faster setup here, but its parallel setup sums in
//     message-arrival order, so a restart on several ranks then reproduces the
//     uninterrupted run to round-off only). On a graded mesh c_n changes every step: the
//     preconditioner is rebuilt (on a new KSP) only when c_n has moved by a factor 2 from
//     the value it was built for (-fpde_pc_lag_ratio; 1: every step);
//   space_fractional:   CG + the circulant PC (Strang; -fpde_circulant tchan for T. Chan);
//   solver.preconditioner none: CG without preconditioner. Krylov tolerance rtol 1e-10.
//   A source that depends on u (FpdeProblem::nonlinear_source) makes each step nonlinear:
//   SNES (Newton with line search; -fpde_snes_*, rtol 1e-10, stol 1e-14). time_fractional:
//   the assembled Jacobian A - W diag(df/du); space_fractional: f(u) taken implicitly with
//   the theta weights, the Jacobian I + theta tau K A - theta tau diag(df/du) a shell matrix
//   (the FFT product plus the diagonal) with the circulant PC of the Riesz part. df/du is
//   FpdeProblem::nonlinear_source_derivative when set, else forward differences.
//   A diffusivity_profile makes K vary in space. time_fractional: the operator is
//   W div(K grad u) with K at the half points x_i -+ h/2 (mirrored at a Neumann side), so
//   the matrix stays symmetric. space_fractional: u_t = -K(x, y) (-Laplace)^(s/2) u + f,
//   K multiplying the Riesz operator row by row (diag(K) A); each step's rows are divided
//   by the profile, so the matrix diag(1/profile) + theta tau K A stays symmetric positive
//   definite (CG), and the circulant PC is scaled by profile^(1/2) on both sides around the
//   circulant of K sqrt(min profile max profile) (riesz_shell.hpp).
//   -fpde_time_scheme euler|crank_nicolson chooses the space_fractional time scheme.
// The solver's own options (-fpde_pc_lag_ratio, -fpde_time_scheme, -fpde_circulant) are
// registered in the options block "fracmfg fpde options", so -help lists them.
//
// Load balance (options.balance, the deck's execution.balance): every `interval` steps the
// ranks exchange the time of their own step work over those steps (advance() outside the
// KSP/SNES solves, which wait for the slowest rank; options.balance.speed injects it) and
// their owned points; time_fractional counts that work in CPU time divided by the share of a
// CPU the rank got over those steps (exec/cpu_share.hpp), so that ranks taking turns on one
// core show as slower even when each runs its own part at full speed, space_fractional in
// wall time; and exec::Rebalancer (exec/balance_policy.hpp: threshold, patience,
// cool-down, hysteresis) decides whether the DMDA's ownership ranges change, in proportion
// to the smoothed throughput (points/s) of each rank. 1D: contiguous ranges. 2D: PETSc's
// px x py process grid is kept and both axes are re-split (exec::partition_2d: column
// widths from the column totals of the rank speeds, row heights from the row totals; a
// tensor-product split follows speeds of the form a_i b_j exactly, others approximately).
// A re-split happens between steps: u and the scheme's state on the points (the L1
// history: SOE modes or past increments, and the coefficient of the lagged preconditioner)
// move to the new ranges exactly (exec::migrate, natural order), and the scheme's matrices,
// KSP/SNES and preconditioner are built again on the new DMDA, as after a restart. The
// results therefore agree with a static run to round-off (the parallel solves' sums
// depend on the split). Checkpoints hold natural-order fields and restart on any rank
// count and split; the balance state is not saved (a restart keeps the solver's split and
// measures again). dm(), solution(), ksp() and history() change at a re-split.
//
// Collectivity: the constructor, advance(), run_until(), write_checkpoint(), restart() and
// error_against() are collective on the communicator; accessors are local. The problem's
// functions are called on every rank at its own points. Errors: fracmfg::Error for
// unsupported settings; core::CollectiveError, the same on every rank, when a solve fails
// (exit code numerical; petsc under -fpde_ksp_error_if_not_converged) or the solution is not
// finite on some rank's points (numerical); PetscError, IoError (checkpoints).

#include <mpi.h>
#include <petscdm.h>
#include <petscksp.h>
#include <petscvec.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fracmfg/core/expression.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/solve_control.hpp"
#include "fracmfg/frac/fpde_grid.hpp"
#include "fracmfg/frac/fpde_history.hpp"
#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/frac/fpde_time_mesh.hpp"

namespace fracmfg::frac {

/// Re-splitting the grid over the ranks in proportion to their measured speed (the deck's
/// execution.balance; see "Load balance" above). interval counts time steps (0: 10).
using FpdeBalanceOptions = core::BalanceOptions;

/// Settings of an FpdeSolver that are not part of the problem.
struct FpdeSolverOptions {
  /// Options-database prefix of the KSP/SNES/PC of the solver.
  std::string prefix = "fpde_";
  /// Progress lines at info level (pass the environment's logger; the default one writes
  /// warnings only).
  core::Logger log{0, core::LogLevel::warn, false};
  /// At most one progress line per this many seconds (and one at the last step); <= 0: every
  /// step.
  double progress_interval = 5.0;
  /// The rank's selector: the time-fractional history update (L1History::set_selector) runs
  /// where it places each step, host or device. null: on the host. Must outlive the solver.
  exec::Selector* selector = nullptr;
  /// Load balance of the grid over the ranks.
  FpdeBalanceOptions balance;
};

/// Counters of a run (this rank's; equal on every rank).
struct FpdeStatistics {
  std::int64_t steps = 0;              ///< steps taken by this object (not before a restart)
  std::int64_t linear_iterations = 0;  ///< Krylov iterations, all steps
  int last_linear_iterations = 0;      ///< Krylov iterations of the last step
  std::int64_t nonlinear_iterations = 0;
  double solve_seconds = 0.0;    ///< in KSPSolve / SNESSolve
  double history_seconds = 0.0;  ///< updating the L1 history
  double total_seconds = 0.0;    ///< in advance()
  /// The step work each rank measures for the load balance: advance()'s time outside the
  /// KSP/SNES solves (the solves wait for the slowest rank), this rank's own value.
  double work_seconds = 0.0;
  /// CPU time of this rank's thread in the solves (time_fractional; 0 otherwise).
  double solve_cpu_seconds = 0.0;
  std::int64_t resplits = 0;     ///< re-splits of the grid (load balance)
  double resplit_seconds = 0.0;  ///< moving the solution and the state to new splits
};

/// What one solve() call did.
struct FpdeSolveResult {
  std::int64_t first_step = 0;   ///< the step it started from
  std::int64_t last_step = 0;    ///< the step it ended at
  std::int64_t checkpoints = 0;  ///< checkpoints written
  std::string checkpoint;        ///< the last checkpoint written ("" if none)
};

/// Discrete error norms against an exact solution at the current time.
struct FpdeErrorNorms {
  double max = 0.0;  ///< max_p |u_p - exact_p|
  double l2 = 0.0;   ///< sqrt(prod_d h_d sum_p (u_p - exact_p)^2)
};

class FpdeSolver {
 public:
  /// Builds the grid, the time mesh, the history and the solvers, and sets u = initial (the
  /// solver keeps a copy of the problem). Collective. Throws fracmfg::Error for settings this
  /// solver does not support (space_fractional with neumann boundaries or a u-dependent
  /// source; the circulant preconditioner for time_fractional).
  FpdeSolver(MPI_Comm comm, const FpdeProblem& problem, FpdeSolverOptions options = {});
  ~FpdeSolver();
  FpdeSolver(const FpdeSolver&) = delete;
  FpdeSolver& operator=(const FpdeSolver&) = delete;

  const FpdeProblem& problem() const;
  MPI_Comm comm() const;
  const FpdeGrid& grid() const;
  const FpdeTimeMesh& mesh() const;
  DM dm() const;
  /// u at time(): a global vector of dm(), owned by the solver (do not modify).
  Vec solution() const;
  /// Points owned by each rank in x (and y), PETSc's lx (and ly): the current split.
  std::vector<PetscInt> ownership(int direction) const;

  std::int64_t step() const;   ///< current level n (0: initial data)
  std::int64_t steps() const;  ///< N
  double time() const;         ///< t_n
  bool done() const { return step() >= steps(); }

  /// One step, t_n -> t_{n+1}. Collective.
  void advance();
  /// Steps until step() == last (clamped to steps()); after_step(*this) after each step.
  /// Collective.
  void run_until(std::int64_t last, const std::function<void(const FpdeSolver&)>& after_step = {});

  /// The family's solve() (core/solve_control.hpp): steps to `last` (negative: the last
  /// step; clamped to steps()), calling after_step(*this) after each step (to write
  /// output), with a progress line (step, t, linear iterations, ms per step, elapsed, ETA to
  /// `last`) at info level at most once per options.progress_interval, a checkpoint every
  /// checkpoint.every steps, and after each step before `last` a stop request
  /// (core::stop_requested) answered with a checkpoint and core::Interrupted(step). Ending
  /// before the last step (last < steps()) leaves a checkpoint there, unless a regular one
  /// was just written, so that the run can be continued. No checkpoint is written when
  /// checkpoint.file is empty. Collective.
  FpdeSolveResult solve(const core::CheckpointOptions& checkpoint = {}, std::int64_t last = -1,
                        const std::function<void(const FpdeSolver&)>& after_step = {});

  /// Writes u, the step, the time and the history state (time_fractional) to a checkpoint
  /// (io::CheckpointWriter; atomically replaces `path`). Collective.
  void write_checkpoint(const std::string& path) const;
  /// Continues from a checkpoint of a solver with the same configuration (any rank count):
  /// the following steps are bit-identical to the uninterrupted run on the same ranks.
  /// Throws IoError for a missing or foreign file, Error for a checkpoint of another
  /// problem (type, order, grid or history method differ). Collective.
  void restart(const std::string& path);

  /// Max and L2 norms of u - exact(x, y, t) at the current time. Collective.
  FpdeErrorNorms error_against(const FpdeFunction& exact) const;
  /// The same for a formula of (some of) x, y, t.
  FpdeErrorNorms error_against(const core::Expression& exact) const;
  /// The same against the problem's exact solution (fracmfg::Error when it has none).
  FpdeErrorNorms error_against() const;

  const FpdeStatistics& statistics() const;
  /// The L1 history (time_fractional; nullptr for space_fractional).
  const L1History* history() const;
  /// The linear solver (inside the SNES for a nonlinear source). Owned by the solver.
  KSP ksp() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::frac
