// CUDA backend of kernels::circulant_batched and kernels::circulant_2d. No Kokkos headers
// here (Debian's Kokkos is a host-only g++ build); the per-item arithmetic is the host's,
// from kernels/circulant_item.hpp.
#include <cuda_runtime.h>

#include <cstdint>
#include <cufft.h>

#include "kernels/circulant_item.hpp"
#include "kernels/cuda/circulant_cuda.hpp"
#include "kernels/cuda/cuda_handles.hpp"
#include "kernels/cuda/resource_cache_cuda.hpp"

namespace fracmfg::kernels::cuda {

namespace {

constexpr unsigned threads_per_block = 256;

__global__ void pad_kernel(std::int64_t total, std::int64_t fft_length, std::int64_t length,
                           const double* x, double* padded) {
  for (std::int64_t e = global_thread(); e < total; e += grid_threads()) {
    detail::circulant_pad_item(e / fft_length, e % fft_length, fft_length, length, x, padded);
  }
}

__global__ void multiply_kernel(std::int64_t total, std::int64_t frequencies,
                                const double* eigenvalues, double* spectrum) {
  for (std::int64_t e = global_thread(); e < total; e += grid_threads()) {
    detail::circulant_multiply_item(e / frequencies, e % frequencies, frequencies, eigenvalues,
                                    spectrum);
  }
}

__global__ void extract_kernel(std::int64_t total, std::int64_t fft_length, std::int64_t length,
                               double scale, const double* product, double* y) {
  for (std::int64_t e = global_thread(); e < total; e += grid_threads()) {
    detail::circulant_extract_item(e / length, e % length, fft_length, length, scale, product, y);
  }
}

__global__ void shift_store_kernel(std::int64_t values, double shift, double scale, const double* x,
                                   const double* product, double* y) {
  for (std::int64_t e = global_thread(); e < values; e += grid_threads()) {
    detail::circulant_shift_store_item(e, shift, scale, x, product, y);
  }
}

FftPlanKey plan_key(int device, std::int64_t length, std::int64_t batch, cufftType type) {
  FftPlanKey k;
  k.device = device;
  k.rank = 1;
  k.dims[0] = length;
  k.batch = batch;
  k.type = type;
  return k;
}

FftPlanKey plan_key_2d(int device, std::int64_t nx, std::int64_t ny, cufftType type) {
  FftPlanKey k;
  k.device = device;
  k.rank = 2;
  k.dims[0] = ny;
  k.dims[1] = nx;
  k.batch = 1;
  k.type = type;
  return k;
}

std::size_t sz(std::int64_t n) {
  return static_cast<std::size_t>(n);
}

}  // namespace

void circulant_batched(const CirculantBatch& b, int device, ResourceCache* cache) {
  DeviceGuard guard(device);
  const std::int64_t lines = b.lines;
  const std::int64_t m = b.length;
  const std::int64_t length = b.fft_length;
  const std::int64_t frequencies = length / 2 + 1;
  const FftPlanRef forward(cache, plan_key(device, length, lines, CUFFT_D2Z));
  const FftPlanRef backward(cache, plan_key(device, length, lines, CUFFT_Z2D));
  auto d_x = device_alloc<double>(sz(lines * m), "cudaMalloc (lines)");
  auto d_y = device_alloc<double>(sz(lines * m), "cudaMalloc (products)");
  auto d_padded = device_alloc<double>(sz(lines * length), "cudaMalloc (padded lines)");
  auto d_spectrum =
      device_alloc<cufftDoubleComplex>(sz(lines * frequencies), "cudaMalloc (spectra)");
  auto d_eigen = device_alloc<double>(sz(frequencies), "cudaMalloc (eigenvalues)");
  copy_to_device(d_x.get(), b.x, sz(lines * m), "copy of the lines");
  copy_to_device(d_y.get(), b.y, sz(lines * m), "copy of the products");
  copy_to_device(d_eigen.get(), b.eigenvalues, sz(frequencies), "copy of the eigenvalues");
  pad_kernel<<<grid_blocks(lines * length, threads_per_block), threads_per_block>>>(
      lines * length, length, m, d_x.get(), d_padded.get());
  cuda_check(cudaGetLastError(), "pad kernel launch");
  cufft_check(cufftExecD2Z(forward.get(), d_padded.get(), d_spectrum.get()), "cufftExecD2Z");
  multiply_kernel<<<grid_blocks(lines * frequencies, threads_per_block), threads_per_block>>>(
      lines * frequencies, frequencies, d_eigen.get(), reinterpret_cast<double*>(d_spectrum.get()));
  cuda_check(cudaGetLastError(), "multiply kernel launch");
  cufft_check(cufftExecZ2D(backward.get(), d_spectrum.get(), d_padded.get()), "cufftExecZ2D");
  extract_kernel<<<grid_blocks(lines * m, threads_per_block), threads_per_block>>>(
      lines * m, length, m, b.scale, d_padded.get(), d_y.get());
  cuda_sync_check("circulant product");
  copy_to_host(b.y, d_y.get(), sz(lines * m), "copy of the products");
}

void circulant_2d(const Circulant2d& p, int device, ResourceCache* cache) {
  DeviceGuard guard(device);
  const std::int64_t values = p.nx * p.ny;
  const std::int64_t frequencies = (p.nx / 2 + 1) * p.ny;
  const FftPlanRef forward(cache, plan_key_2d(device, p.nx, p.ny, CUFFT_D2Z));
  const FftPlanRef backward(cache, plan_key_2d(device, p.nx, p.ny, CUFFT_Z2D));
  auto d_x = device_alloc<double>(sz(values), "cudaMalloc (grid)");
  auto d_y = device_alloc<double>(sz(values), "cudaMalloc (products)");
  auto d_grid = device_alloc<double>(sz(values), "cudaMalloc (transform input)");
  auto d_spectrum = device_alloc<cufftDoubleComplex>(sz(frequencies), "cudaMalloc (spectrum)");
  auto d_eigen = device_alloc<double>(sz(frequencies), "cudaMalloc (eigenvalues)");
  copy_to_device(d_x.get(), p.x, sz(values), "copy of the grid");
  copy_to_device(d_eigen.get(), p.eigenvalues, sz(frequencies), "copy of the eigenvalues");
  // The grid is one unpadded line of nx ny values. cuFFT's D2Z may overwrite its input, so
  // it transforms a copy and x stays for the shift term.
  cuda_check(
      cudaMemcpy(d_grid.get(), d_x.get(), sz(values) * sizeof(double), cudaMemcpyDeviceToDevice),
      "copy of the grid on the device");
  cufft_check(cufftExecD2Z(forward.get(), d_grid.get(), d_spectrum.get()), "cufftExecD2Z");
  multiply_kernel<<<grid_blocks(frequencies, threads_per_block), threads_per_block>>>(
      frequencies, frequencies, d_eigen.get(), reinterpret_cast<double*>(d_spectrum.get()));
  cuda_check(cudaGetLastError(), "multiply kernel launch");
  cufft_check(cufftExecZ2D(backward.get(), d_spectrum.get(), d_grid.get()), "cufftExecZ2D");
  shift_store_kernel<<<grid_blocks(values, threads_per_block), threads_per_block>>>(
      values, p.shift, p.scale, d_x.get(), d_grid.get(), d_y.get());
  cuda_sync_check("2D circulant product");
  copy_to_host(p.y, d_y.get(), sz(values), "copy of the products");
}

}  // namespace fracmfg::kernels::cuda
