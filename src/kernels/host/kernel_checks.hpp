#pragma once
// Helpers shared by the node-local kernels' input-check layers (host and cuda entry points).

#include <cstdint>

namespace fracmfg::kernels::detail {

/// Throws fracmfg::Error when Kokkos is not initialised (a host kernel needs it).
void require_kokkos(const char* caller);

/// Throws NumericalError "<caller>: zero pivot in system <system> (row <row>)"; row < 0
/// omits the row.
[[noreturn]] void throw_zero_pivot(const char* caller, std::int64_t system, std::int64_t row);

/// Throws NumericalError "<caller>: system <system> is singular or gave a non-finite
/// solution".
[[noreturn]] void throw_non_finite(const char* caller, std::int64_t system);

}  // namespace fracmfg::kernels::detail
