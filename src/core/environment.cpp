#include "fracmfg/core/environment.hpp"

#include <Kokkos_Core.hpp>
#include <petscsys.h>

#include <cstdlib>
#include <string>

#include "core/petsc_error_handler.hpp"
#include "core/temporary_files.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"

namespace fracmfg::core {

namespace {
void check_mpi(int code, const char* what) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    throw Error(std::string(what) + " failed: " + std::string(text, static_cast<size_t>(len)));
  }
}
}  // namespace

Environment::Environment(int* argc, char*** argv, EnvironmentOptions options) {
  // 1. MPI, unless the host already did it. Funneled is enough: MPI calls come from the
  //    main thread only, Kokkos' host threads do not communicate.
  int mpi_up = 0;
  check_mpi(MPI_Initialized(&mpi_up), "MPI_Initialized");
  if (!mpi_up) {
    int provided = 0;
    check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    started_mpi_ = true;
  }
  comm_ = options.comm;
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  log_ = Logger(rank_, options.log_level, options.log_all_ranks);
  log_.apply_environment();

  // 2. PETSc on the same communicator; it parses argv (the options database).
  PetscBool petsc_up = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(PetscInitialized(&petsc_up));
  if (!petsc_up) {
    PETSC_COMM_WORLD = comm_;
    const PetscErrorCode ierr = PetscInitialize(
        argc, argv, nullptr, options.petsc_help.empty() ? nullptr : options.petsc_help.c_str());
    if (ierr != 0) throw PetscError(static_cast<int>(ierr), "PetscInitialize failed");
    started_petsc_ = true;
  }
  if (options.quiet_petsc_errors) {
    FRACMFG_PETSC_CHECK(PetscPushErrorHandler(&detail::record_petsc_error, nullptr));
  }

  // 3. Kokkos (host execution space), configured through KOKKOS_* environment variables.
  if (!Kokkos::is_initialized()) {
    Kokkos::InitArguments args;
    if (const char* n = std::getenv("KOKKOS_NUM_THREADS"); n != nullptr)
      args.num_threads = std::atoi(n);
    Kokkos::initialize(args);
    started_kokkos_ = true;
  }
  log_.debug("environment: ", size_, " rank(s); started MPI=", started_mpi_,
             " PETSc=", started_petsc_, " Kokkos=", started_kokkos_, " (", kokkos_host_space(),
             ", concurrency ", kokkos_host_concurrency(), ")");
}

Environment::~Environment() {
  if (started_kokkos_ && Kokkos::is_initialized()) Kokkos::finalize();
  PetscBool petsc_up = PETSC_FALSE;
  PetscInitialized(&petsc_up);
  if (petsc_up) PetscPopErrorHandler();
  if (started_petsc_) {
    PetscBool finalized = PETSC_FALSE;
    PetscFinalized(&finalized);
    if (!finalized) PetscFinalize();
  }
  if (started_mpi_) {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
  }
}

std::string Environment::kokkos_host_space() {
  return Kokkos::DefaultHostExecutionSpace::name();
}

int Environment::kokkos_host_concurrency() {
  return Kokkos::DefaultHostExecutionSpace::concurrency();
}

void Environment::abort(int exit_code) const {
  // The other ranks' temporary files go when the launcher sends them SIGTERM
  // (core/temporary_files.hpp); this rank's go now.
  detail::remove_temporary_files();
  MPI_Abort(comm_ == MPI_COMM_NULL ? MPI_COMM_WORLD : comm_, exit_code);
  std::_Exit(exit_code);  // not reached: MPI_Abort does not return
}

}  // namespace fracmfg::core
