#pragma once
// RAII for FFTW arrays and plans: the one family for every FFTW user (the host kernels, the
// fractional convolution and the Riesz operator).
//
//   auto real = fftw_real_array(n);                  // fftw_alloc_real, freed on scope exit
//   auto spectrum = fftw_complex_array(n / 2 + 1);   // fftw_alloc_complex
//   FftwPlan plan = checked_fftw_plan(fftw_plan_dft_r2c_1d(...), "who: FFTW could not plan");
//   fftw_execute(plan.get());                        // fftw_destroy_plan on scope exit
//
// Arrays come from FFTW's allocator (SIMD-aligned, as the planner assumes); a request for
// zero values allocates one, so get() is never null. Allocation failure throws
// std::bad_alloc. Not thread-safe: FFTW's planner is not (execution is).

#include <fftw3.h>

#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

#include "fracmfg/core/error.hpp"

namespace fracmfg::kernels::detail {

struct FftwFree {
  void operator()(void* p) const noexcept { fftw_free(p); }
};

template <class T>
using FftwArray = std::unique_ptr<T[], FftwFree>;

inline FftwArray<double> fftw_real_array(std::size_t count) {
  double* p = fftw_alloc_real(count > 0 ? count : 1);
  if (p == nullptr) throw std::bad_alloc();
  return FftwArray<double>(p);
}

inline FftwArray<fftw_complex> fftw_complex_array(std::size_t count) {
  fftw_complex* p = fftw_alloc_complex(count > 0 ? count : 1);
  if (p == nullptr) throw std::bad_alloc();
  return FftwArray<fftw_complex>(p);
}

struct FftwPlanDestroy {
  void operator()(fftw_plan p) const noexcept { fftw_destroy_plan(p); }
};

using FftwPlan = std::unique_ptr<std::remove_pointer_t<fftw_plan>, FftwPlanDestroy>;

/// Takes ownership of `plan`; throws Error(message) when FFTW could not create it (null).
inline FftwPlan checked_fftw_plan(fftw_plan plan, const std::string& message) {
  if (plan == nullptr) throw Error(message);
  return FftwPlan(plan);
}

}  // namespace fracmfg::kernels::detail
