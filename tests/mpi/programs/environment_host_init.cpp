// core::Environment inside a host application. One process per mode, because MPI can be
// initialised only once per process:
//   own          fracmfg starts and stops MPI, PETSc and Kokkos
//   host-mpi     the host initialised MPI; fracmfg starts PETSc and Kokkos and leaves MPI up
//   host-petsc   the host initialised MPI and PETSc; fracmfg starts only Kokkos
// Prints "PASS <mode>" on success, exits non-zero with a message on the first failed check.
#include <Kokkos_Core.hpp>
#include <mpi.h>
#include <petscvec.h>
#include <petscviewer.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "fracmfg/core/environment.hpp"
#include "fracmfg/core/petsc_check.hpp"

namespace {
int failures = 0;
void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}
bool mpi_initialized() {
  int f = 0;
  MPI_Initialized(&f);
  return f != 0;
}
bool mpi_finalized() {
  int f = 0;
  MPI_Finalized(&f);
  return f != 0;
}
bool petsc_initialized() {
  PetscBool f = PETSC_FALSE;
  PetscInitialized(&f);
  return f == PETSC_TRUE;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "own";
  namespace core = fracmfg::core;
  if (mode == "own") {
    {
      core::Environment env(&argc, &argv);
      check(env.started_mpi() && env.started_petsc() && env.started_kokkos(), "started all three");
      check(mpi_initialized() && petsc_initialized() && Kokkos::is_initialized(), "all up");
      // PETSc works, and a PETSc error becomes a fracmfg::PetscError with PETSc's message.
      bool threw = false;
      try {
        FRACMFG_PETSC_CHECK(PetscOptionsInsertFile(PETSC_COMM_SELF, nullptr,
                                                   "/nonexistent/dir/x.opts", PETSC_TRUE));
      } catch (const fracmfg::PetscError& e) {
        const std::string what = e.what();
        std::printf("caught: %s\n", what.c_str());
        threw = what.find("PetscOptionsInsertFile") != std::string::npos &&
                what.find("/nonexistent/dir/x.opts") != std::string::npos;
      }
      check(threw, "PETSc error turned into PetscError naming the call");
    }
    check(mpi_finalized(), "MPI finalised by the environment that started it");
  } else if (mode == "host-mpi") {
    MPI_Init(&argc, &argv);
    {
      core::Environment env(&argc, &argv);
      check(!env.started_mpi() && env.started_petsc() && env.started_kokkos(),
            "started PETSc+Kokkos only");
    }
    check(mpi_initialized() && !mpi_finalized(), "host's MPI left running");
    check(!Kokkos::is_initialized(), "Kokkos finalised");
    int sum = 0, one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);  // MPI still usable
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check(sum == size, "MPI usable after the environment ended");
    MPI_Finalize();
  } else if (mode == "host-petsc") {
    MPI_Init(&argc, &argv);
    PetscInitialize(&argc, &argv, nullptr, nullptr);
    {
      core::Environment env(&argc, &argv);
      check(!env.started_mpi() && !env.started_petsc() && env.started_kokkos(),
            "started Kokkos only");
    }
    check(petsc_initialized(), "host's PETSc left running");
    Vec v = nullptr;  // PETSc still usable, and its default error handling restored
    check(VecCreateSeq(PETSC_COMM_SELF, 4, &v) == 0 && VecDestroy(&v) == 0, "PETSc usable after");
    PetscFinalize();
    MPI_Finalize();
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  if (failures == 0) {
    int rank = 0;
    if (!mpi_finalized()) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::printf("PASS %s\n", mode.c_str());
  }
  return failures == 0 ? 0 : 1;
}
