#pragma once
// Where a `fracmfg run` resumes from. Two ways to name the checkpoint, for every solver that
// writes one (mfg, fpde):
//
//   FRACMFG_RESTART=results/crowd_1d.chk.h5 mpiexec -n 2 fracmfg run inputs/crowd_1d.yaml
//   mpiexec -n 2 fracmfg run inputs/crowd_1d.yaml -- -mfg_restart results/crowd_1d.chk.h5
//
// The environment variable is what job scripts use (jobscripts/restart_chain.sbatch exports
// it to the follow-up job); the PETSc option keeps working. Both given and naming different
// files is a usage error naming both. The checkpoint is checked before anything is solved:
// a missing or unreadable file, or one that is not a fracmfg checkpoint, is an I/O error
// (exit code 5); a checkpoint of another problem type is a usage error (exit code 2); the
// solver's restart() then checks the grid and time steps against the deck (exit code 5).
// Solvers that do not checkpoint (fode) refuse FRACMFG_RESTART with a usage error instead of
// silently starting from the beginning.
//
// Every function here is collective on comm and throws core::CollectiveError on every rank,
// with one line of text (the driver prints it once).

#include <mpi.h>

#include <string>

#include "fracmfg/io/config.hpp"

namespace fracmfg::io {

/// The environment variable naming a checkpoint to resume from (empty or unset: none).
inline constexpr const char* kRestartVariable = "FRACMFG_RESTART";

/// A checkpoint to resume from, and how it was named (for messages).
struct RestartSource {
  std::string path;    ///< the checkpoint file; empty: start from the beginning
  std::string origin;  ///< "FRACMFG_RESTART" or the PETSc option, e.g. "-mfg_restart"
  bool empty() const { return path.empty(); }
};

/// The checkpoint named by FRACMFG_RESTART (rank 0's environment, when set and not empty)
/// or by the PETSc option `option` (e.g. "-mfg_restart"); the option given without a file
/// means `option_default` (a usage error when that is empty). Both given for different
/// files (compared as absolute, normalised paths): usage error. Collective.
RestartSource restart_source(MPI_Comm comm, const std::string& option,
                             const std::string& option_default = {});

/// Checks that source.path is a readable fracmfg checkpoint written by a run of `problem`
/// (the file's `problem` attribute): io error when it is missing, unreadable or not a
/// checkpoint, usage error when it belongs to another problem type. Does nothing for an
/// empty source. Collective.
void check_checkpoint(MPI_Comm comm, const RestartSource& source, const std::string& problem);

/// Usage error when source.path (a checkpoint, after check_checkpoint()) is the same file
/// (same_file) as the run's results file or their XDMF sidecar, which the run would
/// overwrite; resuming from output.checkpoint_file is the normal case and passes. Does
/// nothing for an empty source. Collective.
void check_restart_keeps_outputs(MPI_Comm comm, const RestartSource& source,
                                 const OutputConfig& output);

/// For a problem type whose runs cannot resume: usage error when FRACMFG_RESTART is set and
/// not empty, with `reason` (why there is nothing to resume from). Collective.
void refuse_restart(MPI_Comm comm, const std::string& problem, const std::string& reason);

}  // namespace fracmfg::io
