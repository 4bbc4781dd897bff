#pragma once
// core::Environment: RAII start-up and shut-down of MPI, PETSc and Kokkos, in that order
// (and the reverse at exit). It tolerates a host application that initialised MPI and/or
// PETSc (or Kokkos) itself: it then starts only what is missing and finalises only what it
// started.
//
//   int main(int argc, char** argv) {
//     fracmfg::core::Environment env(&argc, &argv);   // collective on MPI_COMM_WORLD
//     env.log().info("running on ", env.size(), " ranks");
//   }
//
// Kokkos settings travel through environment variables (KOKKOS_NUM_THREADS, ...), because
// PETSc owns the command line.

#include <mpi.h>

#include <string>

#include "fracmfg/core/logger.hpp"

namespace fracmfg::core {

struct EnvironmentOptions {
  /// Communicator the library works on; MPI_COMM_WORLD unless the host gives another one.
  MPI_Comm comm = MPI_COMM_WORLD;
  /// Initial log level; FRACMFG_LOG_LEVEL overrides it.
  LogLevel log_level = LogLevel::info;
  bool log_all_ranks = false;
  /// PETSc help text shown by -help.
  std::string petsc_help;
  /// Install PETSc's return-only error handler, so PETSc errors come back as codes (turned
  /// into exceptions) instead of tracebacks on stderr.
  bool quiet_petsc_errors = true;
};

class Environment {
 public:
  /// Collective on MPI_COMM_WORLD when MPI is not yet initialised, else on options.comm.
  Environment(int* argc, char*** argv, EnvironmentOptions options = {});
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  /// Collective: finalises, in reverse order, what this object started.
  ~Environment();

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  Logger& log() { return log_; }
  const Logger& log() const { return log_; }

  bool started_mpi() const { return started_mpi_; }
  bool started_petsc() const { return started_petsc_; }
  bool started_kokkos() const { return started_kokkos_; }

  /// Kokkos' default host execution space name and its concurrency.
  static std::string kokkos_host_space();
  static int kokkos_host_concurrency();

  /// Ends every rank of comm() at once (MPI_Abort); for errors seen by one rank only.
  [[noreturn]] void abort(int exit_code) const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  bool started_mpi_ = false;
  bool started_petsc_ = false;
  bool started_kokkos_ = false;
  Logger log_;
};

}  // namespace fracmfg::core
