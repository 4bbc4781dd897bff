#pragma once
// RAII for FFTW arrays and plans (host kernels).

#include <fftw3.h>

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

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

}  // namespace fracmfg::kernels::detail
