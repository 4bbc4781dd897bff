#pragma once
// frac::run_fpde_deck: a `problem: fpde` deck run from start to end (what `fracmfg run` does
// for such a deck; drivers/run_fpde.cpp calls it).
//
//   1. every check once, before anything is built: the checkpoint to resume from
//      (FpdeRunOptions::restart, io::check_checkpoint and io::check_restart_keeps_outputs),
//      then the output and checkpoint paths and the free space they need
//      (fpde_output_bytes, io::H5Writer::check_output_paths);
//   2. the solver (frac::FpdeSolver) for fpde_problem_from_config(deck.fpde()); a restart
//      continues from the checkpoint (in the driver FRACMFG_RESTART=<file> or
//      -fpde_restart [<file>], fpde_run_options_from_petsc); a checkpoint of another
//      problem (order, grid, steps) is an IoError;
//   3. the output file (io::H5Writer, layout in io/h5_layout.hpp): the time series field
//      "u" with its grid geometry (XDMF sidecar), written at the first step of the run, every
//      output.every steps and at the last step; file attributes fpde_type, order,
//      history_method and soe_terms. A restarted run continues the results file of the
//      interrupted one (io::H5WriterOptions::continue_existing): its levels before the
//      checkpoint's step stay, the later ones are written again; without that file a new
//      one starts at the checkpoint's step;
//   4. the time loop with a progress line (step, t, linear iterations, ms per step, elapsed
//      seconds, ETA from the steps left) at info level for the first and the last step and at
//      most once per progress_interval seconds (every step at debug level), a checkpoint every
//      output.checkpoint_every steps (io::CheckpointWriter, output.checkpoint_file, with the
//      history state), and an early stop after stop_at steps (a checkpoint is written there: the
//      run can be continued); a stop signal (core/interrupt.hpp: SIGUSR1, SIGTERM, SIGINT) is
//      checked after every step, and leads to a checkpoint, the output file committed with the
//      fields so far and core::Interrupted (the driver's exit code 75);
//   5. commit (the file appears atomically) and a summary line.
//
// Collective on comm. Errors: the solver's (NumericalError on every rank), IoError and
// DeckError shared by every rank (core::collective), core::CollectiveError on every rank for
// a failed check (usage or io) and for a field or checkpoint that could not be written (io),
// core::Interrupted.

#include <mpi.h>

#include <cstdint>
#include <string>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/frac/fpde_solver.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/io/h5_writer.hpp"

namespace fracmfg::frac {

struct FpdeRunOptions {
  std::string output_file;  ///< overrides the deck's output.file when not empty
  std::string restart;      ///< checkpoint to continue from; empty: start at t = 0
  /// How restart was named ("FRACMFG_RESTART", "-fpde_restart"), for messages.
  std::string restart_origin;
  std::int64_t stop_at = -1;  ///< stop after this step (>= 0), writing a checkpoint
  /// Seconds between progress lines at info level (0: every step); negative: the
  /// environment's FRACMFG_PROGRESS_SECONDS, default 10.
  double progress_interval = -1.0;
  std::string prefix = "fpde_";  ///< options-database prefix of the solver
  /// The rank's selector, given to the solver (FpdeSolverOptions::selector); null: host.
  exec::Selector* selector = nullptr;
};

struct FpdeRunSummary {
  std::string file;              ///< the output file written
  std::string checkpoint;        ///< the last checkpoint written ("" if none)
  std::int64_t first_step = 0;   ///< the step the run started from
  std::int64_t last_step = 0;    ///< the step it ended at
  std::int64_t outputs = 0;      ///< fields written
  std::int64_t checkpoints = 0;  ///< checkpoints written
  FpdeStatistics stats;
};

/// The run options of the driver: the checkpoint named by FRACMFG_RESTART or
/// -<prefix>restart [<file>] (no file: the deck's output.checkpoint_file; io::restart_source,
/// both for different files is a usage error) and -<prefix>stop_at <step> (registered in the
/// options block "fracmfg fpde run options", so -help lists it). Collective on comm.
FpdeRunOptions fpde_run_options_from_petsc(MPI_Comm comm, const io::Deck& deck,
                                           const std::string& prefix = "fpde_");

/// The disk space a run needs, for the check before the solve (io::H5Writer::
/// check_output_paths). results: u (8 bytes per grid point) at step 0, every output.every
/// steps and the last step as one time series (io::series_bytes), the step index, plus
/// io::kH5DatasetOverhead per other dataset and io::kH5FileOverhead.
/// checkpoints (0 unless output.checkpoint_every > 0 or stop_at >= 0): twice one checkpoint
/// (the previous one stays until the new one replaces it), which holds u and, for the
/// time-fractional type, the L1 history state: 1 + the number of sum-of-exponentials terms
/// (frac::soe_approximation for the deck's order, time mesh and tolerance) or, with the
/// direct history, 1 + steps vectors of the grid. Not collective (a few microseconds; the SOE
/// nodes are computed as the solver would).
io::OutputBytes fpde_output_bytes(const io::FpdeConfig& config, const io::OutputConfig& output,
                                  std::int64_t stop_at = -1);

FpdeRunSummary run_fpde_deck(MPI_Comm comm, const io::Deck& deck, const core::Logger& log,
                             const FpdeRunOptions& options = {});

}  // namespace fracmfg::frac
