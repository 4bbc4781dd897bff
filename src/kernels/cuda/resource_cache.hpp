#pragma once
// Host-callable management of kernels::CudaResources' cache (defined in cuda_resources.cu).
// Plain C++: the g++-compiled kernels/host/cuda_resources.cpp includes it. The lookups the
// kernels use are in resource_cache_cuda.hpp (nvcc only).

#include <cstddef>

#include "fracmfg/kernels/cuda_resources.hpp"

namespace fracmfg::kernels::cuda {

/// A new, empty cache (no CUDA call).
ResourceCache* create_cache(std::size_t max_plans);
/// Destroys every plan and handle, then the cache. Never throws.
void destroy_cache(ResourceCache* cache) noexcept;
/// Destroys every plan and handle; the cache stays usable.
void clear_cache(ResourceCache& cache) noexcept;
std::size_t cache_plans(const ResourceCache& cache);
std::size_t cache_handles(const ResourceCache& cache);
CudaResourceCounts cache_counts(const ResourceCache& cache);

}  // namespace fracmfg::kernels::cuda
