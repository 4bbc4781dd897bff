#pragma once
// frac::FpdeStepper (private): one time-stepping scheme behind frac::FpdeSolver. The solver
// owns the problem, the grid, the time mesh, the solution vector and the statistics, and
// frames every step (counting, the finiteness check, progress lines) and every checkpoint (u,
// step, time, the problem's identity); a stepper owns the scheme's matrices, solvers and
// state and takes u^n to u^{n+1}.
//
//   fpde_time_fractional.cpp   the L1 scheme, linear (KSP) or with a source depending on u
//                              (SNES, Newton)
//   fpde_space_fractional.cpp  the Riesz operator with the theta scheme (KSP on the FFT shell,
//                              or SNES with a shell Jacobian for a source depending on u)
//
// A new scheme is a new file beside these two: a class derived from FpdeStepper, a factory
// function declared below, and a case in FpdeSolver's constructor (fpde_solver.cpp).

#include <mpi.h>
#include <petscksp.h>
#include <petscvec.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fracmfg/frac/fpde_grid.hpp"
#include "fracmfg/frac/fpde_history.hpp"
#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/frac/fpde_solver.hpp"
#include "fracmfg/frac/fpde_time_mesh.hpp"
#include "fracmfg/io/checkpoint.hpp"

namespace fracmfg::frac {

/// The clock of the fpde statistics (solve and step seconds).
using Clock = std::chrono::steady_clock;

/// Seconds since t0 on Clock.
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// What a stepper shares with its solver. Everything is owned by the solver, which outlives
/// the stepper.
struct FpdeStepContext {
  MPI_Comm comm;
  const FpdeProblem& problem;
  const FpdeSolverOptions& options;
  const FpdeGrid& grid;
  const FpdeTimeMesh& mesh;
  Vec u;  ///< the solution, a global vector of grid.dm()
  FpdeStatistics& stats;
};

/// A scheme's state beyond u, for a re-split of the grid (FpdeSolver's load balance) and a
/// checkpoint: `dof` values per owned point, which move with their points, and values that
/// do not depend on the split. Point-major (values[p * dof + k], a checkpoint's field of dof
/// components) or vector-major (values[k * points + p]: dof vectors of the grid, which a
/// re-split moves one by one with the grid's own scatter).
struct FpdeStepperState {
  enum class Layout { point_major, vector_major };
  std::size_t dof = 0;
  Layout layout = Layout::point_major;
  std::vector<double> values;
  std::int64_t levels = 0;     ///< the L1 history's increments recorded
  std::vector<double> global;  ///< split-independent scalars
};

class FpdeStepper {
 public:
  explicit FpdeStepper(const FpdeStepContext& context) : ctx_(context) {}
  virtual ~FpdeStepper() = default;
  FpdeStepper(const FpdeStepper&) = delete;
  FpdeStepper& operator=(const FpdeStepper&) = delete;

  /// u^n -> u^{n+1} in ctx.u, n the current level; adds to the solve and history times and
  /// the iteration counts of the statistics. Collective.
  virtual void advance(std::int64_t n) = 0;
  /// Adds the scheme's state (beyond u, the step and the time) to a checkpoint. Collective.
  virtual void write_state(io::CheckpointWriter& checkpoint) const = 0;
  /// Restores that state after the solver has read u; `mismatch(what)` throws for a
  /// checkpoint of another problem. Collective.
  virtual void read_state(io::CheckpointReader& checkpoint,
                          const std::function<void(const std::string&)>& mismatch) = 0;
  /// The state to carry over to a stepper built on another split of the grid; the default
  /// is none, for a scheme whose state is u alone (a stepper built afresh continues the
  /// run, as after read_state). Not collective.
  virtual FpdeStepperState export_state(FpdeStepperState::Layout /*layout*/) const { return {}; }
  /// Takes over an exported state (either layout) whose per-point values were moved to this
  /// stepper's owned points (state.values has grid.local_size() * state.dof entries).
  /// Collective.
  virtual void import_state(const FpdeStepperState& /*state*/) {}
  /// Whether advance() adds the CPU time of its solves to stats.solve_cpu_seconds (the load
  /// balance then counts the rest of a step in CPU time, else in wall time).
  virtual bool times_solve_cpu() const { return false; }
  /// The linear solver (inside the SNES for a nonlinear source).
  virtual KSP ksp() const = 0;
  /// The L1 history (nullptr for schemes without one).
  virtual const L1History* history() const { return nullptr; }

 protected:
  /// Values of the source f(x, y, t) at the owned points at level m (evaluated once when the
  /// problem says it does not depend on time).
  void evaluate_source(std::int64_t m, std::vector<double>& out);
  void record_linear(PetscInt iterations);
  /// The converged reason of a linear solve at level m: a failure is thrown (agreed: the
  /// reason is the same on every rank).
  /// After KSPSolve(ksp, b, x) of step m: a failed solve, or one whose KSP did not check its
  /// result and left a residual too large (la::require_solved), stops the run.
  void check_linear_solve(KSP ksp, Vec b, Vec x, std::int64_t m);
  /// A KSP's or SNES's converged reason is the same on every rank, so every rank gets here
  /// together: the failure is agreed already and thrown as such.
  [[noreturn]] static void solve_failed(const std::string& message);
  /// A Krylov method starts from u^{n-1}; PREONLY must start from zero.
  static void set_initial_guess(KSP ksp);

  FpdeStepContext ctx_;

 private:
  bool source_cached_ = false;
  std::vector<double> f_static_;  ///< the source when it does not depend on time
};

std::unique_ptr<FpdeStepper> make_time_fractional_stepper(const FpdeStepContext& context);
std::unique_ptr<FpdeStepper> make_space_fractional_stepper(const FpdeStepContext& context);

}  // namespace fracmfg::frac
