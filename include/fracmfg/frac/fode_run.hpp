#pragma once
// frac::run_fode_deck: a `problem: fode` deck run from start to end (what `fracmfg run` does
// for such a deck; drivers/run_fode.cpp calls it).
//
//   1. the solver inputs from deck.fode() (frac/fode_deck.hpp: every component on rank 0);
//   2. the output file checked (path, and free space for fode_output_bytes) and created
//      (frac/fode_output.hpp) before the solve;
//   3. the solve, with a progress line (step, time, ETA) at info level about every
//      `progress_interval` seconds, writing the solution every output.every steps and at
//      the last step;
//   4. commit (the file appears atomically) and a summary.
//
// Collective on comm. Errors: the solver's (CollectiveError for a diverged solution), and
// I/O errors shared by every rank (core::collective), among them a write that fails during
// the run (disk full: the temporary file is removed, nothing appears under the final name).

#include <mpi.h>

#include <cstdint>
#include <string>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/frac/fode_solver.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/io/h5_writer.hpp"

namespace fracmfg::exec {
class Selector;
}

namespace fracmfg::frac {

struct FodeRunSummary {
  std::string file;          ///< the output file written
  std::int64_t outputs = 0;  ///< steps written
  FodeStats stats;           ///< rank 0's counters
};

/// The disk space a run needs, for the check before the solve (step 2 above): y (8 bytes per
/// component) at step 0, every output.every steps and the last step as one time series
/// (io::series_bytes), the step index, /order, plus io::kH5DatasetOverhead per other dataset
/// and io::kH5FileOverhead. fode runs write no
/// checkpoint (checkpoints = 0). Pure function.
io::OutputBytes fode_output_bytes(const io::FodeConfig& config, const io::OutputConfig& output);

/// `selector` may be null (host kernels). `output_file` overrides the deck's output.file
/// when not empty.
FodeRunSummary run_fode_deck(MPI_Comm comm, const io::Deck& deck, exec::Selector* selector,
                             const core::Logger& log, const std::string& output_file = {},
                             double progress_interval = 3.0);

}  // namespace fracmfg::frac
