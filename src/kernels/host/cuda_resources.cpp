// kernels::CudaResources: the public side of the CUDA plan/handle cache. The cache itself
// lives in the CUDA translation units; in a build without CUDA the object stays empty (the
// dispatch point of the cache: the only FRACMFG_HAVE_CUDA test on this side).
#include "fracmfg/kernels/cuda_resources.hpp"

#include <utility>

#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"

#if FRACMFG_HAVE_CUDA
#include "kernels/cuda/resource_cache.hpp"
#endif

namespace fracmfg::kernels {

void CudaResources::Deleter::operator()(cuda::ResourceCache* c) const noexcept {
#if FRACMFG_HAVE_CUDA
  cuda::destroy_cache(c);
#else
  (void)c;  // never created without CUDA
#endif
}

CudaResources::CudaResources(std::size_t max_plans) : max_plans_(max_plans < 2 ? 2 : max_plans) {}

CudaResources::~CudaResources() = default;

CudaResources::CudaResources(CudaResources&& other) noexcept
    : max_plans_(other.max_plans_), cache_(std::move(other.cache_)) {}

CudaResources& CudaResources::operator=(CudaResources&& other) noexcept {
  if (this != &other) {
    cache_ = std::move(other.cache_);
    max_plans_ = other.max_plans_;
  }
  return *this;
}

std::size_t CudaResources::plans() const {
#if FRACMFG_HAVE_CUDA
  if (cache_) return cuda::cache_plans(*cache_);
#endif
  return 0;
}

std::size_t CudaResources::handles() const {
#if FRACMFG_HAVE_CUDA
  if (cache_) return cuda::cache_handles(*cache_);
#endif
  return 0;
}

CudaResourceCounts CudaResources::counts() const {
#if FRACMFG_HAVE_CUDA
  if (cache_) return cuda::cache_counts(*cache_);
#endif
  return {};
}

void CudaResources::clear() noexcept {
#if FRACMFG_HAVE_CUDA
  if (cache_) cuda::clear_cache(*cache_);
#endif
}

cuda::ResourceCache& CudaResources::cache() {
#if FRACMFG_HAVE_CUDA
  if (!cache_) cache_.reset(cuda::create_cache(max_plans_));
  return *cache_;
#else
  throw NotCompiled("the CUDA backend (kernel resource cache)", {"cpu"});
#endif
}

}  // namespace fracmfg::kernels
