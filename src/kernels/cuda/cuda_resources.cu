// The cache of kernels::CudaResources: cuFFT plans and cuSPARSE handles reused between kernel
// calls. No Kokkos headers here (Debian's Kokkos is a host-only g++ build).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <utility>

#include "fracmfg/core/error.hpp"
#include "kernels/cuda/resource_cache.hpp"
#include "kernels/cuda/resource_cache_cuda.hpp"

namespace fracmfg::kernels::cuda {

FftPlan create_fft_plan(const FftPlanKey& key) {
  if (key.rank < 1 || key.rank > 2) throw Error("CUDA cuFFT plan: rank must be 1 or 2");
  int dims[2] = {static_cast<int>(key.dims[0]), static_cast<int>(key.dims[1])};
  cufftHandle plan = 0;
  cufft_check(cufftPlanMany(&plan, key.rank, dims, nullptr, 1, 0, nullptr, 1, 0, key.type,
                            static_cast<int>(key.batch)),
              "cufftPlanMany");
  return FftPlan(plan, key.device);
}

// --- cache ---------------------------------------------------------------------------------

cufftHandle ResourceCache::plan(const FftPlanKey& key) {
  ++clock;
  for (Plan& p : plans) {
    if (p.key == key) {
      p.last_use = clock;
      ++counts.plan_reuses;
      return p.plan.get();
    }
  }
  FftPlan created = create_fft_plan(key);
  if (plans.size() >= max_plans) {
    auto oldest = std::min_element(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
      return a.last_use < b.last_use;
    });
    plans.erase(oldest);  // destroys its plan
    ++counts.plans_evicted;
  }
  const cufftHandle plan = created.get();
  plans.push_back(Plan{key, std::move(created), clock});
  ++counts.plans_created;
  return plan;
}

cusparseHandle_t ResourceCache::sparse(int device) {
  for (const SparseHandle& h : handles) {
    if (h.device() == device) {
      ++counts.handle_reuses;
      return h.get();
    }
  }
  handles.push_back(create_sparse_handle(device));
  ++counts.handles_created;
  return handles.back().get();
}

void ResourceCache::clear() noexcept {
  plans.clear();  // each handle is destroyed with its device current
  handles.clear();
}

// --- references used by the kernels -----------------------------------------------------------

FftPlanRef::FftPlanRef(ResourceCache* cache, const FftPlanKey& key) {
  if (cache != nullptr) {
    plan_ = cache->plan(key);
  } else {
    owned_ = create_fft_plan(key);
    plan_ = owned_.get();
  }
}

SparseHandleRef::SparseHandleRef(ResourceCache* cache, int device) {
  if (cache != nullptr) {
    handle_ = cache->sparse(device);
  } else {
    owned_ = create_sparse_handle(device);
    handle_ = owned_.get();
  }
}

// --- host-callable management ---------------------------------------------------------------

ResourceCache* create_cache(std::size_t max_plans) {
  return new ResourceCache(max_plans);
}

void destroy_cache(ResourceCache* cache) noexcept {
  delete cache;
}

void clear_cache(ResourceCache& cache) noexcept {
  cache.clear();
}

std::size_t cache_plans(const ResourceCache& cache) {
  return cache.plans.size();
}

std::size_t cache_handles(const ResourceCache& cache) {
  return cache.handles.size();
}

CudaResourceCounts cache_counts(const ResourceCache& cache) {
  return cache.counts;
}

}  // namespace fracmfg::kernels::cuda
