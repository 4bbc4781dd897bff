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
//       throw core::Interrupted(step);           // driver exits with ExitCode::interrupted
//     }
//   }
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
  Interrupted(std::int64_t step, const std::string& checkpoint)
      : Error("stopped by signal at step " + std::to_string(step) + "; checkpoint written to " +
              checkpoint),
        step_(step) {}
  std::int64_t step() const noexcept { return step_; }
  ExitCode exit_code() const noexcept override { return ExitCode::interrupted; }

 private:
  std::int64_t step_;
};

}  // namespace fracmfg::core
