#pragma once
// kernels::CudaResources: the cuFFT plans and the cuSPARSE handle the CUDA paths of the
// node-local kernels reuse between calls, on one rank.
//
//   kernels::CudaResources& r = *selector.cuda_resources();   // the rank's cache (or own one)
//   kernels::KdeOptions o;  o.cuda_device = selector.device().device;  o.cuda_resources = &r;
//   kernels::kde_binned_cuda(grid, samples, density, o);      // plans created on first use
//   kernels::kde_binned_cuda(grid, samples, density, o);      // same sizes: plans reused
//
// Why: creating a cuFFT plan costs from tens of microseconds to milliseconds (and device
// memory for its work area), a cuSPARSE handle about as much; a solver calls the same kernel
// with the same sizes thousands of times. Without a cache (options' cuda_resources null)
// every call creates and destroys its own, as a one-off call should.
//
// What is cached (created on first use, keyed by everything that defines the object):
//   cuFFT plans     by (device, rank 1|2, dimensions, batch, type D2Z|Z2D); at most
//                   max_plans (default 32) are kept, the least recently used is destroyed
//                   first, so a solver whose sizes shrink (the last history squares) does
//                   not hoard device memory;
//   cuSPARSE handle one per device.
// Nothing is created by the constructor, so a CudaResources costs nothing on a rank that
// never calls a CUDA path, and exists in builds without CUDA (always empty there).
//
// Lifetime: every plan and handle is destroyed by clear() or the destructor, which must run
// before the CUDA runtime shuts down (process exit) - i.e. the object must not be a global
// or static. The owners are: exec::Selector (one per rank, for the rank's device; it lives
// in the driver's scope inside core::Environment) and kernels::HistoryWorkspace (its own,
// used when HistoryOptions::cuda_resources is null). Destruction makes each object's device
// current while destroying it and restores the previous device.
//
// Not thread-safe: one host thread at a time (like the Selector). Move-only.

#include <cstddef>
#include <cstdint>
#include <memory>

namespace fracmfg::kernels {

namespace cuda {
/// The cache proper, defined by the CUDA translation units (src/kernels/cuda).
struct ResourceCache;
}  // namespace cuda

/// What a CudaResources has done so far (for tests and reports).
struct CudaResourceCounts {
  std::int64_t plans_created = 0;    ///< cuFFT plans created
  std::int64_t plan_reuses = 0;      ///< plan requests answered from the cache
  std::int64_t plans_evicted = 0;    ///< plans destroyed to stay within max_plans
  std::int64_t handles_created = 0;  ///< cuSPARSE handles created
  std::int64_t handle_reuses = 0;    ///< handle requests answered from the cache
};

class CudaResources {
 public:
  /// max_plans >= 2 (a forward/backward pair); smaller values are raised to 2.
  explicit CudaResources(std::size_t max_plans = 32);
  ~CudaResources();
  CudaResources(CudaResources&& other) noexcept;
  CudaResources& operator=(CudaResources&& other) noexcept;
  CudaResources(const CudaResources&) = delete;
  CudaResources& operator=(const CudaResources&) = delete;

  std::size_t max_plans() const { return max_plans_; }
  /// Plans and handles alive now.
  std::size_t plans() const;
  std::size_t handles() const;
  CudaResourceCounts counts() const;
  /// Destroys every plan and handle now (the counters stay).
  void clear() noexcept;

  /// The cache for the CUDA translation units, created on first call (nvcc code only; the
  /// pointer is opaque elsewhere). Throws NotCompiled in a build without CUDA.
  cuda::ResourceCache& cache();

 private:
  struct Deleter {
    void operator()(cuda::ResourceCache* c) const noexcept;
  };
  std::size_t max_plans_;
  std::unique_ptr<cuda::ResourceCache, Deleter> cache_;
};

}  // namespace fracmfg::kernels
