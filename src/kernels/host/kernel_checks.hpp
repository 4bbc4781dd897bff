#pragma once
// Helpers shared by the node-local kernels' input-check layers (host and cuda entry points).

#include <cstdint>
#include <string>

namespace fracmfg::kernels::detail {

/// A kernel's name in its input checks' messages: a std::string is built only when a
/// message is (`who + ": ..."`), not on every call of the kernel.
struct Who {
  const char* name;
};
inline std::string operator+(Who who, const std::string& text) {
  return std::string(who.name) + text;
}
inline std::string operator+(Who who, const char* text) {
  return std::string(who.name) + text;
}

/// Throws fracmfg::Error when Kokkos is not initialised (a host kernel needs it).
void require_kokkos(const char* caller);

/// Throws NumericalError "<caller>: zero pivot in system <system> (row <row>)"; row < 0
/// omits the row.
[[noreturn]] void throw_zero_pivot(const char* caller, std::int64_t system, std::int64_t row);

/// Throws NumericalError "<caller>: system <system> is singular or gave a non-finite
/// solution".
[[noreturn]] void throw_non_finite(const char* caller, std::int64_t system);

}  // namespace fracmfg::kernels::detail
