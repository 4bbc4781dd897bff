#pragma once
// The error policy of fracmfg programs in one place.
//
// guarded_main() starts the Environment, runs `body` and turns any exception into a clear
// one-line message and an exit code (fracmfg::ExitCode):
//  - an error that every rank saw together (thrown from inside core::collective(), e.g. a
//    bad deck) is printed once, by rank 0, and all ranks exit normally with its code;
//  - an error raised on some ranks only is printed by the rank that saw it, tagged with
//    its rank, and MPI_Abort ends every rank of the job at once, so no rank is left
//    waiting in a collective call.
//
//  - an allocation that fails (operator new, or PETSc's malloc: PETSC_ERR_MEM) on any rank
//    ends the job at once from the point of failure, with one line naming the rank: the
//    other ranks may be waiting in a collective call that the failing rank would never
//    reach, and unwinding could not reach an agreement either. collective() does the same
//    with a std::bad_alloc its function throws (also outside guarded_main).
//
//  - core::Interrupted (a run that wrote its checkpoint after a stop signal, thrown on every
//    rank) is reported once and exits with ExitCode::interrupted (75), so a job script can
//    resubmit itself. Solvers that can checkpoint on a signal install core::InterruptGuard
//    around their time loop; elsewhere signals keep their default action (Ctrl-C stops).
//
// collective(comm, fn) runs fn on every rank and agrees on the outcome: if any rank throws,
// every rank throws the same error (the one from the lowest failing rank). Use it around
// steps that every rank performs, like reading a deck or creating an output file.

#include <mpi.h>

#include <functional>

#include "fracmfg/core/environment.hpp"
#include "fracmfg/core/error.hpp"

namespace fracmfg::core {

/// Thrown on every rank by collective() when some rank failed; carries the original
/// message and exit code.
class CollectiveError : public Error {
 public:
  CollectiveError(const std::string& message, ExitCode code, int origin_rank)
      : Error(message), code_(code), origin_rank_(origin_rank) {}
  ExitCode exit_code() const noexcept override { return code_; }
  int origin_rank() const noexcept { return origin_rank_; }

 private:
  ExitCode code_;
  int origin_rank_;
};

/// Prints "fracmfg: error on rank R: out of memory: <detail>" and ends every rank of comm
/// (MPI_Abort; std::_Exit when MPI is not running). Allocates nothing. Not collective.
[[noreturn]] void abort_out_of_memory(MPI_Comm comm, const char* detail) noexcept;

/// Collective on comm.
void collective(MPI_Comm comm, const std::function<void()>& fn);

/// Runs body inside an Environment with the error policy above; returns the exit code.
int guarded_main(int argc, char** argv, const std::function<int(Environment&)>& body,
                 EnvironmentOptions options = {});

}  // namespace fracmfg::core
