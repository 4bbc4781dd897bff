#pragma once
// One checking macro for PETSc calls: a non-zero PetscErrorCode becomes a fracmfg::PetscError
// carrying PETSc's message, the failing expression and its location.
//
//   FRACMFG_PETSC_CHECK(VecDuplicate(x, &y));
//
// A collective solve (KSPSolve, SNESSolve) is checked with FRACMFG_PETSC_CHECK_SOLVE: a solver
// that did not converge under -ksp_error_if_not_converged or -snes_error_if_not_converged
// fails on every rank together (PETSc raises PETSC_ERR_NOT_CONVERGED from the converged
// reason, which is collective), so that error is thrown as core::CollectiveError with exit
// code petsc on every rank and reported once; any other error as FRACMFG_PETSC_CHECK.
//
// Inside a PETSc callback (shell matrix, monitor, ...) exceptions must not escape: wrap the
// body with FRACMFG_PETSC_CALLBACK_BEGIN / FRACMFG_PETSC_CALLBACK_END, which turn any
// exception into a PETSc error code.

#include <petscsys.h>

#include "fracmfg/core/error.hpp"

namespace fracmfg::detail {
[[noreturn]] void throw_petsc_error(PetscErrorCode code, const char* expression, const char* file,
                                    int line);
/// As throw_petsc_error, but PETSC_ERR_NOT_CONVERGED (raised on every rank of a collective
/// solve) is thrown as core::CollectiveError.
[[noreturn]] void throw_petsc_solve_error(PetscErrorCode code, const char* expression,
                                          const char* file, int line);
/// Records the message of an exception caught in a PETSc callback and returns the code
/// to hand back to PETSc.
PetscErrorCode petsc_callback_error(const char* what, const char* file, int line) noexcept;
}  // namespace fracmfg::detail

#define FRACMFG_PETSC_CHECK(expr)                                                           \
  do {                                                                                      \
    const PetscErrorCode fracmfg_petsc_ierr_ = (expr);                                      \
    if (fracmfg_petsc_ierr_ != 0) {                                                         \
      ::fracmfg::detail::throw_petsc_error(fracmfg_petsc_ierr_, #expr, __FILE__, __LINE__); \
    }                                                                                       \
  } while (0)

#define FRACMFG_PETSC_CHECK_SOLVE(expr)                                                           \
  do {                                                                                            \
    const PetscErrorCode fracmfg_petsc_ierr_ = (expr);                                            \
    if (fracmfg_petsc_ierr_ != 0) {                                                               \
      ::fracmfg::detail::throw_petsc_solve_error(fracmfg_petsc_ierr_, #expr, __FILE__, __LINE__); \
    }                                                                                             \
  } while (0)

#define FRACMFG_PETSC_CALLBACK_BEGIN try {
#define FRACMFG_PETSC_CALLBACK_END                                                            \
  }                                                                                           \
  catch (const std::exception& fracmfg_cb_e_) {                                               \
    return ::fracmfg::detail::petsc_callback_error(fracmfg_cb_e_.what(), __FILE__, __LINE__); \
  }                                                                                           \
  catch (...) {                                                                               \
    return ::fracmfg::detail::petsc_callback_error("unknown exception", __FILE__, __LINE__);  \
  }                                                                                           \
  return 0;
