#pragma once
// mfg::Solver: a mean field game (mfg::Problem, mfg/problem.hpp; sampled by mfg::Model,
// mfg/model.hpp) solved by a damped fixed point (or Newton's method, below) between the backward
// HJB equation (mfg::HjbSolver) and the forward Fokker-Planck equation (mfg::FokkerPlanckFdm, or
// particles: mfg::ParticleFokkerPlanck).
//
// From a deck:
//   mfg::Solver solver(comm, mfg::problem_from_config(deck.mfg()), &selector, env.log());
//   mfg::SolveResult r = solver.solve({"results/run.chk.h5", 20});          // collective
//   io::H5Writer out(comm, "results/run.h5", {"mfg", deck.text(), deck.resolved_yaml()});
//   solver.write(out, 10);
//   out.commit();
// From a host code (docs/examples/mfg_coupled): build an mfg::Problem whose fields are the
// host's arrays or functions, solve on the host's communicator, read the fields back as
// arrays with gather_u(n) / gather_m(n) (the whole grid on every rank) or as this rank's
// box of u(n) / m(n).
//
// State: all time levels U^n, M^n, n = 0..N_t, as global Vecs of model().dm() (2 (N_t + 1)
// vectors: 16 (N_t + 1) bytes per local grid point; Anderson acceleration of depth p keeps
// 2p + 4 more copies of the whole state). Start: U = 0, M^n = m0 at every level.
//
// Grid sequencing (L = mfg::coarse_levels(problem) > 0: iteration.coarse_levels, or at its
// default -1 the method's, 0 except for the two-grid iteration): before the first
// iteration, solve() solves the same game on L coarser grids, from the coarsest (points per
// axis and time steps divided by 2^L) to the finest (divided by 2), each to
// mfg::coarse_level_tolerance(problem) with the finite-difference Fokker-Planck equation (and
// the fine game's two-grid coarse grid) and started from the one below, and starts from
// the interpolation of the last (start_from): linear in time, linear / bilinear in space
// (periodic axes wrap, on reflecting axes the value beyond the outermost coarse cell
// centres is held), each M^n (n >= 1) rescaled to the mass of m0, M^0 = m0. Levels that
// would leave fewer than 4 points on an axis are skipped (logged). On the 2D crowd game
// (inputs/crowd_2d.yaml on 256^2 x 100) the fine iteration then takes far fewer iterations
// than from the cold start, for coarse solves that cost a few fine iterations
// (docs/performance.md, "Mean field games" and "The iteration method `auto`"). A coarse level
// that fails (diverges) is logged as a warning and the fine solve starts cold.
//
// One outer iteration k = 0, 1, ... with weight theta_k (iteration.schedule: fixed ->
// iteration.damping, fictitious_play -> 1/(k+1); theta_0 = 1 in both, so the first
// iteration replaces the arbitrary start; after a coarse start theta_0 = iteration.damping):
//   1. HJB backward: u~^{N} = G + g M^N; for n = N-1..0 solve the implicit step with
//      rhs = F(x, M^{n+1}) + f_u(t_n), Newton started from U^n (from u~^{n+1} when k = 0
//      from the cold start, or while the last change of u is above 1e-2 and u~^{n+1} has the
//      smaller residual), to the relative tolerance clamp(1e-3 x the last change, 1e-12, 1e-3)
//      (HjbSolver::step); after each level U^n <- (1 - theta) U^n + theta u~^n.
//   2. Fokker-Planck forward with the updated U: m~^0 = m0, m~^{n+1} = FP(U^n, m~^n)
//      (in 2D its Krylov solve starts from M^{n+1} once the last change of m is below 1e-2,
//      before that from m~^n); after each level M^{n+1} <- (1 - theta) M^{n+1} + theta m~^{n+1}.
//   3. Anderson (iteration.anderson = p > 0): the iteration is the map x_k -> g(x_k) on the
//      whole state x = (U, M); type-II Anderson mixing over the last p differences (Walker &
//      Ni, SIAM J. Numer. Anal. 49 (2011), eq. (2.1)), with the u and m parts weighted by the
//      inverse squared norms of g's parts. A mixed density with a negative entry is rejected
//      (the plain step is kept and the history cleared). The forward-backward coupling in
//      time makes the map far from normal, so the gain is modest (somewhat fewer iterations
//      on the example decks) and mostly in stability (larger damping).
// Newton's method (iteration.method newton; src/mfg/newton.hpp, src/mfg/solver_newton.cpp)
// instead of steps 1-3: U is the unknown of R(U) = U - Psi(U), Psi(U) the HJB sweep at the
// density M(U) of the Fokker-Planck sweep with the drift of U. One outer iteration: the
// sweeps at U_k (M = M(U_k), the changes as below with u~ = Psi(U_k) and M compared with
// the previous M; cached from the previous iteration's line search), the Newton step by
// GMRES on the linearised game (IterationRecord::krylov_iterations), a backtracking line
// search on ||U - Psi(U)||_2 (IterationRecord::damping holds the step length; after 6
// rejected steps the damped fixed-point step U + damping (Psi(U) - U), with a warning). The
// first iteration from the cold start takes the plain step Psi(U_0). Converged as below;
// then U = Psi(U_k), M = M(U_k). Refused (Error) for the particles and Anderson mixing;
// with the congestion Hamiltonian it stops (CollectiveError) after 5 iterations in a row
// whose Fokker-Planck steps did not all converge in m^{n+1}. newton_iterations
// counts the HJB Newton iterations of every sweep of the iteration, the line search's too.
// Convergence: the relative changes
//   change_u = max_n ||u~^n - U_k^n||_2 / max_n ||u~^n||_2   (likewise m; 0 when both are 0)
// i.e. the residual of the undamped map, discrete L2 per level, max over levels. The
// iteration stops when both are <= iteration.tolerance in an iteration whose HJB steps
// were solved to 1e-3 x iteration.tolerance (or 1e-12), or after iteration.max_iterations
// (counted from the start, including iterations restored from a checkpoint).
//
// Failures, each thrown as core::CollectiveError with exit code numerical on every rank
// (agreed by an allreduce or by collective PETSc results), the message naming the
// iteration and the field: a non-finite change ("u is not finite"), divergence (a change
// above 1e6 times the smallest seen and above 1), a negative density (m < -1e-10 max m
// after a Fokker-Planck step; entries in [-1e-10 max m, 0), solver round-off, are set to
// 0), a failed Newton or linear solve.
//
// Stopping on a signal: solve() asks core::stop_requested(comm) after every outer iteration
// (one allreduce of an int). When any rank has a stop request (a signal caught by a
// core::InterruptGuard, which the driver installs, or core::request_stop() called by the
// host), every rank writes the checkpoint to CheckpointOptions::file (also when `every` is
// 0; nothing when the file is empty) and throws core::Interrupted with the iteration count;
// restart() from that file and solve() again end with the uninterrupted result (to
// round-off, on any rank count). An iteration that converged or reached max_iterations
// ends the solve normally instead. Without a guard, signals keep their default actions.
//
// Progress: one line per outer iteration (change of u and m, damping, Newton iterations,
// seconds of the iteration, elapsed seconds, and an ETA from the contraction rate of
// max(change_u, change_m) over the last 5 iterations towards the tolerance and the mean
// iteration time; "ETA unknown" when the changes do not shrink). At info level only for the
// first iteration, the last one and at most one per FRACMFG_PROGRESS_SECONDS seconds
// (environment, default 10; 0: every iteration); every line at debug level.
//
// Collectivity: every member function except the accessors is collective on comm.

#include <mpi.h>
#include <petscvec.h>

#include <memory>
#include <string>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/solve_control.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/io/config.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "fracmfg/mfg/model.hpp"

namespace fracmfg::mfg {

/// What one outer iteration did (identical on every rank).
struct IterationRecord {
  int iteration = 0;      ///< 1-based count of this iteration since the start
  double change_u = 0.0;  ///< relative change of u (see the header comment)
  double change_m = 0.0;  ///< relative change of m
  double damping = 1.0;   ///< theta used (newton: the step length of the line search)
  bool anderson = false;  ///< the new state is an Anderson mix
  long long newton_iterations = 0;
  double newton_tolerance = 0.0;    ///< relative tolerance of this iteration's HJB steps
  double seconds = 0.0;             ///< wall time of the iteration (max over ranks)
  long long krylov_iterations = 0;  ///< newton: GMRES iterations of the Newton step
};

struct SolveResult {
  bool converged = false;
  int iterations = 0;  ///< total, including restored ones
  double change_u = 0.0;
  double change_m = 0.0;
  double seconds = 0.0;  ///< wall time of this solve() call
  /// Not converged: what the last iterations' changes suggest (the contraction and the
  /// iterations still needed, or a damping above the game's largest stable damping, with
  /// the damping that rate implies); empty when converged.
  std::string advice;
};

/// Checkpointing during solve(): every `every` outer iterations (0: never) to `file`; the
/// same type for every family's solve() (core/solve_control.hpp).
using CheckpointOptions = core::CheckpointOptions;

class Solver {
 public:
  /// Builds the model, the HJB and Fokker-Planck solvers and the start state. selector is
  /// used by node-local kernels (nonlocal coupling, particle densities); it may be null
  /// (host). The logger should be the environment's (env.log()). Collective on comm.
  Solver(MPI_Comm comm, const Problem& problem, exec::Selector* selector, core::Logger log = {});
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  const Model& model() const;
  int steps() const;  ///< N_t
  /// U^n and M^n, n = 0..N_t: global Vecs of model().dm(), owned by the solver. This rank's
  /// values are its box of the grid (model().box(): local index (j - ys) xm + (i - xs) for
  /// point (i, j); VecGetArrayRead), at the points model().x(), model().y().
  Vec u(int n) const;
  Vec m(int n) const;
  /// U^n (gather_u) or M^n (gather_m), n = 0..N_t, on the whole grid, on every rank of comm:
  /// grid.size() values in natural order, x fastest (index j Nx + i for point (i, j); the
  /// coordinates are model().grid().coordinate(axis, i)), the same on every rank, for any
  /// rank count. M^n is a density (mass sum M^n * cell volume = 1 for n = 0). Throws Error
  /// when n is outside 0..N_t. Collective.
  std::vector<double> gather_u(int n) const;
  std::vector<double> gather_m(int n) const;

  /// The mass that has left through the exits by t_n, n = 0..N_t (0 at n = 0; zeros
  /// without exits), from the last forward sweep: each Fokker-Planck step balances its
  /// mass to round-off, mass(M^n) + outflow()[n] = mass(m0) + the sources' mass, for the
  /// sweep's densities; the blended M of the state meets it to the iteration's tolerance.
  /// Before any iteration of this process (a restored state that has converged), the
  /// steps from the state's M^n with its U^n. The same on every rank. Collective.
  std::vector<double> outflow() const;

  /// Outer iterations done (restored ones included).
  int iterations() const;
  const std::vector<IterationRecord>& history() const;

  /// One outer iteration. Collective.
  IterationRecord iterate();
  /// Iterates until converged or iterations() reaches iteration.max_iterations; a
  /// checkpoint is written after every `checkpoint.every`-th iteration. Returns without
  /// iterating when the restored state has already converged. After each iteration a stop
  /// request (core::stop_requested) writes the checkpoint to `checkpoint.file` and throws
  /// core::Interrupted (step() = iterations()) on every rank. Collective.
  SolveResult solve(const CheckpointOptions& checkpoint = {});

  /// Writes every time level of U and M, the iteration count, the damping state, the
  /// Anderson history and the convergence history to a checkpoint (io::CheckpointWriter,
  /// problem "mfg"), committed atomically. Collective.
  void write_checkpoint(const std::string& path) const;
  /// Restores a checkpoint of the same problem (grid size and time steps must agree) written
  /// on any number of ranks; iterating on gives the uninterrupted run's result (to
  /// round-off). Throws core::CollectiveError (exit code io) when the checkpoint does not
  /// fit. Collective.
  void restart(const std::string& path);

  /// Writes U and M as the time-series fields "u" and "m" (/fields/u/<n>, /fields/m/<n>) at
  /// every time level n that is a multiple of `every` and at n = N_t, with the grid's origin
  /// and spacing; the convergence history as /convergence/u and /convergence/m (one entry
  /// per outer iteration) with attributes iterations, converged and tolerance on
  /// /convergence; the wall time per iteration as /mfg/seconds and
  /// the mass of M per level as /mfg/mass; the mass that has left through the exits by
  /// each time level (outflow()) as /mfg/outflow; with an obstacle, its mask (1 inside, 0
  /// outside; natural order, x fastest, as the fields' points) as /mfg/obstacle.
  /// Collective.
  void write(io::H5Writer& out, int every) const;

  /// Starts from another solver's state (typically the same game on a coarser grid and
  /// time grid, solved first): U and M interpolated (linear in time, bi/linear in space),
  /// each level of M rescaled to the mass of m0, M^0 = m0 (details in the header comment).
  /// `coarse` must be on the same communicator and domain (same lengths and boundary; any
  /// grid and time steps). Only before the first iteration (throws Error otherwise); the
  /// first iteration then uses the configured damping. The state is not kept apart: a stall
  /// under iteration.method auto afterwards (the damping halved) starts again from the
  /// problem's own coarse levels (iteration.coarse_levels, solved again) where it has any,
  /// else from u = 0, m(t) = m0. Collective.
  void start_from(const Solver& coarse);

  /// True when the last iteration met the tolerance.
  bool converged() const;

  /// Load balance of the grid (the deck's execution.balance): with options.enabled, after
  /// every options.interval-th outer iteration (0: every one) each rank's grid work since the
  /// last observation (Model::work_seconds(): the HJB and Fokker-Planck row loops, CPU time
  /// divided by the share of a CPU the rank got, exec/cpu_share.hpp; or the injected
  /// options.speed) goes to an exec::Rebalancer (threshold and patience from options,
  /// cool-down 3 observations, hysteresis 0.05, at least 2 points per range). On a re-split
  /// every level of U and M and the Anderson history move to the new ownership ranges
  /// (exec::migrate, values unchanged) and the model, the HJB and Fokker-Planck solvers and
  /// the coupling are built again on them; the iteration goes on as on the old split (the
  /// same result to round-off: only the distributed sums' order changes). model() and the
  /// Vecs of u() and m() change with a re-split. No observation follows the last
  /// iteration. Not available in 3D (Error). Not collective (the observations are).
  void set_balance(const core::BalanceOptions& options);
  /// Re-splits so far.
  int resplits() const;

 private:
  // Grid sequencing (iteration.coarse_levels): solves the coarse games and start_from()s the
  // finest of them. `again`: the restart after a stall under auto (the same coarse solves,
  // the state interpolated again, the damping and the history kept). Collective.
  void start_coarse(bool again = false);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::mfg
