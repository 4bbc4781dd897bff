#pragma once
// One checking macro for PETSc calls: a non-zero PetscErrorCode becomes a fracmfg::PetscError
// carrying PETSc's message, the failing expression and its location.
//
//   FRACMFG_PETSC_CHECK(VecDuplicate(x, &y));
//
// Inside a PETSc callback (shell matrix, monitor, ...) exceptions must not escape: wrap the
// body with FRACMFG_PETSC_CALLBACK_BEGIN / FRACMFG_PETSC_CALLBACK_END, which turn any
// exception into a PETSc error code.

#include <petscsys.h>

#include "fracmfg/core/error.hpp"

namespace fracmfg::detail {
[[noreturn]] void throw_petsc_error(PetscErrorCode code, const char* expression, const char* file,
                                    int line);
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
