#pragma once
// Graceful stop on a signal: a batch system's warning before the time limit (Slurm's
// `--signal=B:USR1@120`, or SIGTERM at the limit) asks the run to write a checkpoint and
// leave cleanly, so a follow-up job can resume it.
//
//   core::InterruptGuard guard;                  // installs handlers for SIGUSR1, SIGTERM, SIGINT
//   for (step...) {
//     ...
//     if (core::stop_requested(comm)) {          // collective: true on every rank if any rank
//       write_checkpoint();                      //   received a signal
//       throw core::Interrupted(step, file);     // driver exits with ExitCode::interrupted
//     }
//   }
//
// Who polls: the fpde time loop (after every step, frac/fpde_run.hpp) and the mfg fixed
// point (after every outer iteration, mfg::Solver::solve()). The driver installs the guard
// around them; a library user who installs none keeps the default signal actions, and a
// solve stops only when the host calls request_stop().
//
// The flag is the one process-wide state in fracmfg: a signal handler can set nothing else.

#include <mpi.h>

#include <cstdint>
#include <string>

#include "fracmfg/core/error.hpp"

namespace fracmfg::core {

/// Installs the handlers for the lifetime of the object (previous handlers restored after).
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct Saved;
  Saved* saved_;
};

/// The signal received by this process (0 if none). Not collective.
int signal_received();
/// Collective on comm: true on every rank when any rank received a signal.
bool stop_requested(MPI_Comm comm);
/// Clears the flag (tests).
void clear_stop_request();
/// Sets the flag as a signal would (tests, or a host code that wants a graceful stop).
void request_stop(int signal_number);

/// Thrown on every rank after a run has written its checkpoint in response to a stop
/// request; the driver turns it into ExitCode::interrupted.
class Interrupted : public Error {
 public:
  /// step: the last step (outer iteration for mfg) completed; checkpoint: the file written
  /// ("" when the run had no checkpoint file to write).
  Interrupted(std::int64_t step, const std::string& checkpoint)
      : Error("stopped by signal at step " + std::to_string(step) +
              (checkpoint.empty() ? std::string("; no checkpoint written")
                                  : "; checkpoint written to " + checkpoint)),
        step_(step),
        checkpoint_(checkpoint) {}
  std::int64_t step() const noexcept { return step_; }
  const std::string& checkpoint() const noexcept { return checkpoint_; }
  ExitCode exit_code() const noexcept override { return ExitCode::interrupted; }

 private:
  std::int64_t step_;
  std::string checkpoint_;
};

}  // namespace fracmfg::core
