#pragma once
// PETSc error handler that records PETSc's message for FRACMFG_PETSC_CHECK instead of
// printing a traceback (installed by core::Environment).
#include <petscsys.h>

namespace fracmfg::detail {
PetscErrorCode record_petsc_error(MPI_Comm comm, int line, const char* fun, const char* file,
                                  PetscErrorCode code, PetscErrorType type, const char* mess,
                                  void* ctx);

/// While set, record_petsc_error calls `handler` with PETSc's message when PETSc reports
/// that an allocation failed (PETSC_ERR_MEM); core::guarded_main sets it to end the job.
void set_petsc_out_of_memory_handler(void (*handler)(const char* detail));
}  // namespace fracmfg::detail
