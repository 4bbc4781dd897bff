#pragma once
// mfg::run_mfg_deck: a `problem: mfg` deck run from start to end (what `fracmfg run` does for
// such a deck; drivers/run_mfg.cpp calls it).
//
//   1. the output paths and the free space for the results and checkpoints
//      (mfg::mfg_output_bytes) checked, and the checkpoint to resume from
//      (MfgRunOptions::restart, checked by io::check_checkpoint and
//      io::check_restart_keeps_outputs), before anything is built;
//   2. the solver (mfg::Solver: model, HJB, Fokker-Planck) of the deck's game
//      (mfg::problem_from_config(deck.mfg())), restored from the checkpoint;
//   3. the fixed point to convergence (mfg::Solver::solve): checkpoints every
//      output.checkpoint_every iterations; a stop signal (core/interrupt.hpp: SIGUSR1,
//      SIGTERM, SIGINT) writes a checkpoint to output.checkpoint_file after the current
//      iteration and ends the run with core::Interrupted (the driver's exit code 75);
//   4. the results (mfg::Solver::write: u and m every output.every levels and the last one),
//      committed atomically;
//   5. no convergence within iteration.max_iterations: core::CollectiveError with exit code
//      numerical, after the results are written (they show how far it got).
//
// Collective on comm. Errors: core::CollectiveError on every rank with one message (usage,
// I/O, numerical), core::Interrupted.

#include <mpi.h>

#include <string>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"

namespace fracmfg::exec {
class Selector;
}

namespace fracmfg::mfg {

struct MfgRunOptions {
  std::string output_file;  ///< overrides the deck's output.file when not empty
  /// Checkpoint to continue from; empty: start cold. mfg_run_options_from_petsc() fills it
  /// from FRACMFG_RESTART or -<prefix>restart.
  std::string restart;
  /// How restart was named ("FRACMFG_RESTART", "-mfg_restart"), for messages.
  std::string restart_origin;
};

struct MfgRunSummary {
  std::string file;         ///< the results file written
  SolveResult result;       ///< the fixed point's verdict
  int first_iteration = 0;  ///< iterations restored from the checkpoint
  /// The mass that left through the exits by each time level (Solver::outflow(); zeros
  /// without exits), also logged ("mass that left through the exits by t = T").
  std::vector<double> outflow;
};

/// The run options of the driver: the checkpoint named by FRACMFG_RESTART or -mfg_restart
/// <file> (io::restart_source; both for different files is a usage error). Collective.
MfgRunOptions mfg_run_options_from_petsc(MPI_Comm comm, const io::Deck& deck);

/// Runs the deck (steps above). `selector` may be null (host kernels). Collective.
MfgRunSummary run_mfg_deck(MPI_Comm comm, const io::Deck& deck, exec::Selector* selector,
                           const core::Logger& log, const MfgRunOptions& options = {});

}  // namespace fracmfg::mfg
