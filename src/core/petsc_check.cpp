#include "fracmfg/core/petsc_check.hpp"

#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include "core/petsc_error_handler.hpp"
#include "fracmfg/core/guarded_main.hpp"

namespace fracmfg::detail {

namespace {
// The message of the error PETSc raised first on this thread (set by the handler that
// core::Environment installs); consumed by throw_petsc_error.
thread_local std::string last_petsc_message;
void (*out_of_memory_handler)(const char*) = nullptr;
}  // namespace

void set_petsc_out_of_memory_handler(void (*handler)(const char* detail)) {
  out_of_memory_handler = handler;
}

PetscErrorCode record_petsc_error(MPI_Comm /*comm*/, int line, const char* fun, const char* file,
                                  PetscErrorCode code, PetscErrorType type, const char* mess,
                                  void* /*ctx*/) {
  // A failed allocation is PETSC_ERR_MEM, or any error raised by PETSc's allocators
  // themselves: PETSc 3.18's PetscMallocAlign reports it with its caller's line as the code
  // and its caller's name as the message.
  const bool allocator = fun != nullptr && (std::strcmp(fun, "PetscMallocAlign") == 0 ||
                                            std::strcmp(fun, "PetscReallocAlign") == 0 ||
                                            std::strcmp(fun, "PetscMallocA") == 0);
  if ((code == PETSC_ERR_MEM || allocator) && type == PETSC_ERROR_INITIAL &&
      out_of_memory_handler != nullptr) {
    char detail[256];
    std::snprintf(detail, sizeof(detail), "in %s", mess != nullptr && *mess != '\0' ? mess : "?");
    out_of_memory_handler(detail);
  }
  if (type == PETSC_ERROR_INITIAL) {
    std::ostringstream os;
    os << (mess != nullptr && *mess != '\0' ? mess : "(no message)");
    if (fun != nullptr) os << " [in " << fun << " at " << (file ? file : "?") << ':' << line << ']';
    last_petsc_message = os.str();
  }
  return code;
}

namespace {
std::string petsc_error_message(PetscErrorCode code, const char* expression, const char* file,
                                int line) {
  const char* generic = nullptr;
  PetscErrorMessage(code, &generic, nullptr);
  std::ostringstream os;
  os << "PETSc error " << code;
  if (generic != nullptr) os << " (" << generic << ")";
  if (!last_petsc_message.empty()) os << ": " << last_petsc_message;
  os << " from " << expression << " at " << file << ':' << line;
  last_petsc_message.clear();
  return os.str();
}
}  // namespace

void throw_petsc_error(PetscErrorCode code, const char* expression, const char* file, int line) {
  throw PetscError(static_cast<int>(code), petsc_error_message(code, expression, file, line));
}

void throw_petsc_solve_error(PetscErrorCode code, const char* expression, const char* file,
                             int line) {
  std::string message = petsc_error_message(code, expression, file, line);
  // The converged reason is the same on every rank, so is this error: agreed already.
  if (code == PETSC_ERR_NOT_CONVERGED) {
    throw core::CollectiveError(message, ExitCode::petsc, 0);
  }
  throw PetscError(static_cast<int>(code), message);
}

PetscErrorCode petsc_callback_error(const char* what, const char* file, int line) noexcept {
  // PETSC_ERR_LIB: "error in external library"; the message survives in last_petsc_message
  // because PetscError() calls the installed handler with PETSC_ERROR_INITIAL.
  return ::PetscError(PETSC_COMM_SELF, line, "fracmfg callback", file, PETSC_ERR_LIB,
                      PETSC_ERROR_INITIAL, "%s", what);
}

}  // namespace fracmfg::detail
