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
#include <cstdint>
#include <string>

namespace fracmfg::core {

/// Checkpointing during solve(): every `every` iterations or steps (0: never) to `file`.
struct CheckpointOptions {
  std::string file;
  std::int64_t every = 0;
};

}  // namespace fracmfg::core
