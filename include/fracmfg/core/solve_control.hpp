#pragma once
// The contract every solver family's solve() keeps (mfg::Solver::solve, frac::FpdeSolver::
// solve; frac::FodeSolver::solve writes no checkpoints, see fode_solver.hpp):
//
//   - it runs to its end (convergence or the last iteration for mfg, the last step asked for
//     for fpde) and reports progress at info level at most once per progress interval (the
//     environment's FRACMFG_PROGRESS_SECONDS in the runners), every line at debug level;
//   - it writes a checkpoint to CheckpointOptions::file every CheckpointOptions::every
//     iterations or steps (0: never), atomically (the previous one stays until the new one
//     replaces it);
//   - after every iteration or step it asks core::stop_requested(comm) (a signal caught by a
//     core::InterruptGuard, or core::request_stop()); on a request every rank writes the
//     checkpoint (when file is not empty) and throws core::Interrupted with the iteration or
//     step reached, which restart() continues to the uninterrupted result;
//   - a failure one rank sees is agreed and thrown on every rank (core::CollectiveError).
//
// The grid solvers (mfg::Solver, frac::FpdeSolver) also take BalanceOptions: re-splitting
// their grid over the ranks in proportion to each rank's measured speed (the deck's
// execution.balance; exec/balance_policy.hpp decides when and to what).
#include <cstdint>
#include <functional>
#include <string>

namespace fracmfg::core {

/// Checkpointing during solve(): every `every` iterations or steps (0: never) to `file`.
struct CheckpointOptions {
  std::string file;
  std::int64_t every = 0;
};

/// Re-splitting a grid over the ranks in proportion to their measured speed.
struct BalanceOptions {
  bool enabled = false;  ///< off: PETSc's even split throughout
  /// Steps (fpde) or outer iterations (mfg) per observation; 0: the family's default (fpde
  /// 10 steps, mfg 1 iteration). >= 0.
  int interval = 0;
  double threshold = 0.2;  ///< exec::RebalanceOptions::threshold
  int patience = 2;        ///< exec::RebalanceOptions::patience
  /// Injected speed (tests, models of other machines): when set, the time a rank reports
  /// for its work over an observation is (owned points) x interval / speed(rank, step)
  /// instead of the measured one (step: the fpde time step or the mfg outer iteration that
  /// ends the observation), so that a re-split can be forced and its outcome predicted.
  /// speed > 0.
  std::function<double(int rank, std::int64_t step)> speed;

  /// interval, or the family's default when it is 0.
  int interval_or(int family_default) const { return interval > 0 ? interval : family_default; }
};

}  // namespace fracmfg::core
