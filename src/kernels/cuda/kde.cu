// CUDA backend of kernels::kde. No Kokkos headers here (Debian's Kokkos is a host-only g++
// build); the per-sample and per-point arithmetic is the host's, from kernels/kde_item.hpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cufft.h>
#include <string>

#include "kernels/cuda/cuda_handles.hpp"
#include "kernels/cuda/kde_cuda.hpp"
#include "kernels/cuda/resource_cache_cuda.hpp"
#include "kernels/kde_item.hpp"

namespace fracmfg::kernels::cuda {

namespace {

constexpr unsigned threads_per_block = 256;

__global__ void bin_kernel(detail::KdeAxisPlan px, detail::KdeAxisPlan py, int dim,
                           std::int64_t count, const double* x, const double* y, const double* w,
                           double* work) {
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) {
    detail::kde_bin_sample(px, py, dim, x[i], dim == 2 ? y[i] : 0.0, w != nullptr ? w[i] : 1.0,
                           [&](std::int64_t q, double v) { atomicAdd(work + q, v); });
  }
}

// Reflecting x axis: columns [G, 2G) of every row mirror columns [0, G).
__global__ void mirror_x_kernel(std::int64_t rows, std::int64_t mx, std::int64_t g, double* work) {
  for (std::int64_t e = global_thread(); e < rows * g; e += grid_threads()) {
    const std::int64_t qy = e / g;
    const std::int64_t r = e % g;
    work[qy * mx + g + r] = work[qy * mx + g - 1 - r];
  }
}

// Reflecting y axis: rows [G, 2G) mirror rows [0, G).
__global__ void mirror_y_kernel(std::int64_t mx, std::int64_t g, double* work) {
  for (std::int64_t e = global_thread(); e < g * mx; e += grid_threads()) {
    const std::int64_t r = e / mx;
    const std::int64_t qx = e % mx;
    work[(g + r) * mx + qx] = work[(g - 1 - r) * mx + qx];
  }
}

__global__ void multiply_kernel(std::int64_t my, std::int64_t hx, const double* sx,
                                const double* sy, cufftDoubleComplex* spectrum) {
  for (std::int64_t e = global_thread(); e < my * hx; e += grid_threads()) {
    const double k = sx[e % hx] * sy[e / hx];
    spectrum[e].x *= k;
    spectrum[e].y *= k;
  }
}

__global__ void extract_kernel(std::int64_t gx, std::int64_t gy, std::int64_t mx,
                               std::int64_t offset_x, std::int64_t offset_y, const double* work,
                               double* density) {
  for (std::int64_t e = global_thread(); e < gx * gy; e += grid_threads()) {
    const std::int64_t jy = e / gx;
    const std::int64_t jx = e % gx;
    density[e] = work[(offset_y + jy) * mx + offset_x + jx];
  }
}

__global__ void exact_kernel(detail::KdeAxisPlan px, detail::KdeAxisPlan py, int dim,
                             std::int64_t count, const double* x, const double* y, const double* w,
                             double* density) {
  const std::int64_t gx = px.points;
  const std::int64_t total = dim == 2 ? gx * py.points : gx;
  for (std::int64_t j = global_thread(); j < total; j += grid_threads()) {
    density[j] = dim == 2 ? detail::kde_exact_point_2d(px, py, j % gx, j / gx, count, x, y, w)
                          : detail::kde_exact_point_1d(px, j, count, x, w);
  }
}

// The 1D or 2D real transform of the work array (dims slowest first).
FftPlanKey plan_key(int device, int dim, std::int64_t my, std::int64_t mx, cufftType type) {
  FftPlanKey k;
  k.device = device;
  k.rank = dim;
  k.dims[0] = dim == 2 ? my : mx;
  k.dims[1] = dim == 2 ? mx : 0;
  k.batch = 1;
  k.type = type;
  return k;
}

struct DeviceSamples {
  DeviceArray<double> x;
  DeviceArray<double> y;
  DeviceArray<double> w;
};

DeviceSamples upload_samples(const KdeSamples& s, int dim) {
  const std::size_t n = static_cast<std::size_t>(s.count);
  DeviceSamples d;
  d.x = device_alloc<double>(n, "cudaMalloc (sample x)");
  copy_to_device(d.x.get(), s.x, n, "copy of the samples");
  if (dim == 2) {
    d.y = device_alloc<double>(n, "cudaMalloc (sample y)");
    copy_to_device(d.y.get(), s.y, n, "copy of the samples");
  }
  if (s.weight != nullptr) {
    d.w = device_alloc<double>(n, "cudaMalloc (sample weights)");
    copy_to_device(d.w.get(), s.weight, n, "copy of the samples");
  }
  return d;
}

}  // namespace

void kde_binned(const detail::KdePlan& plan, const KdeSamples& samples, double* density,
                int sample_chunks, int device, ResourceCache* cache) {
  DeviceGuard guard(device);
  const std::int64_t mx = plan.x.work;
  const std::int64_t my = plan.y.work;
  const std::int64_t hx = mx / 2 + 1;
  const std::int64_t gx = plan.x.points;
  const std::int64_t gy = plan.y.points;
  const std::size_t grid_size = static_cast<std::size_t>(gx * gy);

  const FftPlanRef forward(cache, plan_key(device, plan.dim, my, mx, CUFFT_D2Z));
  const FftPlanRef backward(cache, plan_key(device, plan.dim, my, mx, CUFFT_Z2D));
  auto work = device_alloc<double>(static_cast<std::size_t>(plan.work_size()), "cudaMalloc (work)");
  auto spectrum = device_alloc<cufftDoubleComplex>(static_cast<std::size_t>(plan.spectrum_size()),
                                                   "cudaMalloc (spectrum)");
  auto sx = device_alloc<double>(plan.spectrum_x.size(), "cudaMalloc (kernel spectrum)");
  auto sy = device_alloc<double>(plan.spectrum_y.size(), "cudaMalloc (kernel spectrum)");
  auto out = device_alloc<double>(grid_size, "cudaMalloc (density)");
  copy_to_device(sx.get(), plan.spectrum_x.data(), plan.spectrum_x.size(), "copy of the spectrum");
  copy_to_device(sy.get(), plan.spectrum_y.data(), plan.spectrum_y.size(), "copy of the spectrum");
  cuda_check(cudaMemset(work.get(), 0, static_cast<std::size_t>(plan.work_size()) * sizeof(double)),
             "cudaMemset (work)");

  // The samples in pieces of at most `per_chunk`: binning adds into `work`, so the pieces
  // are independent; the device holds one piece at a time.
  const std::int64_t pieces = std::max(sample_chunks, 1);
  const std::int64_t per_chunk = std::max<std::int64_t>(1, (samples.count + pieces - 1) / pieces);
  for (std::int64_t first = 0; first < samples.count; first += per_chunk) {
    KdeSamples piece = samples;
    piece.count = std::min(per_chunk, samples.count - first);
    piece.x = samples.x + first;
    if (samples.y != nullptr) piece.y = samples.y + first;
    if (samples.weight != nullptr) piece.weight = samples.weight + first;
    const DeviceSamples d = upload_samples(piece, plan.dim);
    bin_kernel<<<grid_blocks(piece.count, threads_per_block), threads_per_block>>>(
        plan.x, plan.y, plan.dim, piece.count, d.x.get(), d.y.get(), d.w.get(), work.get());
    cuda_sync_check("binning kernel");
  }
  if (plan.x.mode == detail::kde_reflecting) {
    mirror_x_kernel<<<grid_blocks(my * gx, threads_per_block), threads_per_block>>>(my, mx, gx,
                                                                                    work.get());
    cuda_check(cudaGetLastError(), "mirror kernel launch");
  }
  if (plan.dim == 2 && plan.y.mode == detail::kde_reflecting) {
    mirror_y_kernel<<<grid_blocks(gy * mx, threads_per_block), threads_per_block>>>(mx, gy,
                                                                                    work.get());
    cuda_check(cudaGetLastError(), "mirror kernel launch");
  }
  cufft_check(cufftExecD2Z(forward.get(), work.get(), spectrum.get()), "cufftExecD2Z");
  multiply_kernel<<<grid_blocks(my * hx, threads_per_block), threads_per_block>>>(
      my, hx, sx.get(), sy.get(), spectrum.get());
  cuda_check(cudaGetLastError(), "multiply kernel launch");
  cufft_check(cufftExecZ2D(backward.get(), spectrum.get(), work.get()), "cufftExecZ2D");
  extract_kernel<<<grid_blocks(gx * gy, threads_per_block), threads_per_block>>>(
      gx, gy, mx, plan.x.offset, plan.y.offset, work.get(), out.get());
  cuda_sync_check("convolution");
  copy_to_host(density, out.get(), grid_size, "copy of the density");
}

void kde_exact(const detail::KdePlan& plan, const KdeSamples& samples, double* density,
               int device) {
  DeviceGuard guard(device);
  const std::int64_t total = plan.x.points * plan.y.points;
  auto out = device_alloc<double>(static_cast<std::size_t>(total), "cudaMalloc (density)");
  DeviceSamples d;
  if (samples.count > 0) d = upload_samples(samples, plan.dim);
  exact_kernel<<<grid_blocks(total, threads_per_block), threads_per_block>>>(
      plan.x, plan.y, plan.dim, samples.count, d.x.get(), d.y.get(), d.w.get(), out.get());
  cuda_sync_check("exact-sum kernel");
  copy_to_host(density, out.get(), static_cast<std::size_t>(total), "copy of the density");
}

}  // namespace fracmfg::kernels::cuda
