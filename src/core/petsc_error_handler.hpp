#pragma once
// PETSc error handler that records PETSc's message for FRACMFG_PETSC_CHECK instead of
// printing a traceback (installed by core::Environment).
#include <petscsys.h>

namespace fracmfg::detail {
PetscErrorCode record_petsc_error(MPI_Comm comm, int line, const char* fun, const char* file,
                                  PetscErrorCode code, PetscErrorType type, const char* mess,
                                  void* ctx);
}  // namespace fracmfg::detail
