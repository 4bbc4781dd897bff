#pragma once
// The cache behind kernels::CudaResources (nvcc only): cuFFT plans keyed by their shape and
// one cuSPARSE handle per device, created on first use (see fracmfg/kernels/cuda_resources.hpp
// for the contract). Lookups throw fracmfg::Error ("CUDA ...") when creation fails.

#include <cstddef>
#include <cstdint>
#include <cufft.h>
#include <cusparse.h>
#include <vector>

#include "fracmfg/kernels/cuda_resources.hpp"
#include "kernels/cuda/cuda_handles.hpp"

namespace fracmfg::kernels::cuda {

/// A cuFFT plan's shape: `rank` dimensions dims[0..rank) (slowest first), `batch`
/// contiguous transforms (the default data layout of cufftPlanMany with null embeds).
struct FftPlanKey {
  int device = 0;
  int rank = 1;
  std::int64_t dims[2] = {0, 0};
  std::int64_t batch = 1;
  cufftType type = CUFFT_D2Z;

  friend bool operator==(const FftPlanKey& a, const FftPlanKey& b) {
    return a.device == b.device && a.rank == b.rank && a.dims[0] == b.dims[0] &&
           a.dims[1] == b.dims[1] && a.batch == b.batch && a.type == b.type;
  }
};

/// Creates a plan of this shape on key.device, which must be current.
FftPlan create_fft_plan(const FftPlanKey& key);

/// A plan owned by a cache, or by this object when no cache is given (then destroyed with
/// it): the one way the kernels obtain plans.
class FftPlanRef {
 public:
  FftPlanRef(ResourceCache* cache, const FftPlanKey& key);
  FftPlanRef(const FftPlanRef&) = delete;
  FftPlanRef& operator=(const FftPlanRef&) = delete;
  cufftHandle get() const { return plan_; }

 private:
  FftPlan owned_;  ///< without a cache
  cufftHandle plan_ = 0;
};

/// The cuSPARSE handle of `device` (current), from the cache or owned like FftPlanRef.
class SparseHandleRef {
 public:
  SparseHandleRef(ResourceCache* cache, int device);
  SparseHandleRef(const SparseHandleRef&) = delete;
  SparseHandleRef& operator=(const SparseHandleRef&) = delete;
  cusparseHandle_t get() const { return handle_; }

 private:
  SparseHandle owned_;  ///< without a cache
  cusparseHandle_t handle_ = nullptr;
};

struct ResourceCache {
  struct Plan {
    FftPlanKey key;
    FftPlan plan;
    std::uint64_t last_use = 0;
  };

  explicit ResourceCache(std::size_t max) : max_plans(max < 2 ? 2 : max) {}
  ResourceCache(const ResourceCache&) = delete;
  ResourceCache& operator=(const ResourceCache&) = delete;
  ~ResourceCache() { clear(); }

  /// The plan of this shape (the device current), created on first use. Valid until the
  /// cache is cleared or the plan is evicted, which needs max_plans newer plan requests.
  cufftHandle plan(const FftPlanKey& key);
  /// The handle of `device` (current), created on first use.
  cusparseHandle_t sparse(int device);
  void clear() noexcept;

  std::size_t max_plans;
  std::uint64_t clock = 0;
  std::vector<Plan> plans;
  std::vector<SparseHandle> handles;
  CudaResourceCounts counts;
};

}  // namespace fracmfg::kernels::cuda
