#include "kernels/host/kernel_checks.hpp"

#include <Kokkos_Core.hpp>

#include <string>

#include "fracmfg/core/error.hpp"

namespace fracmfg::kernels::detail {

void require_kokkos(const char* caller) {
  if (!Kokkos::is_initialized()) {
    throw Error(std::string(caller) +
                ": Kokkos is not initialised (create a core::Environment first)");
  }
}

void throw_zero_pivot(const char* caller, std::int64_t system, std::int64_t row) {
  std::string msg = std::string(caller) + ": zero pivot in system " + std::to_string(system);
  if (row >= 0) msg += " (row " + std::to_string(row) + ")";
  throw NumericalError(msg + "; the matrix is singular or needs pivoting");
}

void throw_non_finite(const char* caller, std::int64_t system) {
  throw NumericalError(std::string(caller) + ": system " + std::to_string(system) +
                       " is singular or gave a non-finite solution");
}

}  // namespace fracmfg::kernels::detail
