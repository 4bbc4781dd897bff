// The cache of kernels::CudaResources: cuFFT plans and cuSPARSE handles reused between kernel
// calls. No Kokkos headers here (Debian's Kokkos is a host-only g++ build).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "fracmfg/core/error.hpp"
#include "kernels/cuda/resource_cache.hpp"
#include "kernels/cuda/resource_cache_cuda.hpp"

namespace fracmfg::kernels::cuda {

namespace {

// Makes `device` current while destroying its objects; restores the previous one. Errors
// are ignored: destruction must not throw, and a dead context has nothing left to free.
class QuietDeviceGuard {
 public:
  explicit QuietDeviceGuard(int device) {
    ok_ = cudaGetDevice(&previous_) == cudaSuccess && cudaSetDevice(device) == cudaSuccess;
    cudaGetLastError();
  }
  QuietDeviceGuard(const QuietDeviceGuard&) = delete;
  QuietDeviceGuard& operator=(const QuietDeviceGuard&) = delete;
  ~QuietDeviceGuard() {
    if (ok_) cudaSetDevice(previous_);
    cudaGetLastError();
  }

 private:
  int previous_ = 0;
  bool ok_ = false;
};

}  // namespace

void cufft_check(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS) {
    throw Error(std::string("CUDA cuFFT error in ") + what + ": cufftResult " +
                std::to_string(static_cast<int>(r)));
  }
}

void cusparse_check(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS) {
    throw Error(std::string("CUDA cuSPARSE error in ") + what + ": " + cusparseGetErrorString(s));
  }
}

cufftHandle create_fft_plan(const FftPlanKey& key) {
  if (key.rank < 1 || key.rank > 2) throw Error("CUDA cuFFT plan: rank must be 1 or 2");
  int dims[2] = {static_cast<int>(key.dims[0]), static_cast<int>(key.dims[1])};
  cufftHandle plan = 0;
  cufft_check(cufftPlanMany(&plan, key.rank, dims, nullptr, 1, 0, nullptr, 1, 0, key.type,
                            static_cast<int>(key.batch)),
              "cufftPlanMany");
  return plan;
}

// --- cache ---------------------------------------------------------------------------------

cufftHandle ResourceCache::plan(const FftPlanKey& key) {
  ++clock;
  for (Plan& p : plans) {
    if (p.key == key) {
      p.last_use = clock;
      ++counts.plan_reuses;
      return p.plan;
    }
  }
  const cufftHandle created = create_fft_plan(key);
  if (plans.size() >= max_plans) {
    auto oldest = std::min_element(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
      return a.last_use < b.last_use;
    });
    {
      const QuietDeviceGuard guard(oldest->key.device);
      cufftDestroy(oldest->plan);
    }
    plans.erase(oldest);
    ++counts.plans_evicted;
  }
  plans.push_back(Plan{key, created, clock});
  ++counts.plans_created;
  return created;
}

cusparseHandle_t ResourceCache::sparse(int device) {
  for (const Handle& h : handles) {
    if (h.device == device) {
      ++counts.handle_reuses;
      return h.handle;
    }
  }
  cusparseHandle_t h = nullptr;
  cusparse_check(cusparseCreate(&h), "cusparseCreate");
  handles.push_back(Handle{device, h});
  ++counts.handles_created;
  return h;
}

void ResourceCache::clear() noexcept {
  for (const Plan& p : plans) {
    const QuietDeviceGuard guard(p.key.device);
    cufftDestroy(p.plan);
  }
  plans.clear();
  for (const Handle& h : handles) {
    const QuietDeviceGuard guard(h.device);
    cusparseDestroy(h.handle);
  }
  handles.clear();
}

// --- references used by the kernels -----------------------------------------------------------

FftPlanRef::FftPlanRef(ResourceCache* cache, const FftPlanKey& key) {
  if (cache != nullptr) {
    plan_ = cache->plan(key);
  } else {
    plan_ = create_fft_plan(key);
    owned_ = true;
  }
}

FftPlanRef::~FftPlanRef() {
  if (owned_) cufftDestroy(plan_);
}

SparseHandleRef::SparseHandleRef(ResourceCache* cache, int device) {
  if (cache != nullptr) {
    handle_ = cache->sparse(device);
  } else {
    cusparse_check(cusparseCreate(&handle_), "cusparseCreate");
    owned_ = true;
  }
}

SparseHandleRef::~SparseHandleRef() {
  if (owned_ && handle_ != nullptr) cusparseDestroy(handle_);
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
