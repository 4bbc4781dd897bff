// CUDA backend of kernels::history (FFT path). No Kokkos headers here (Debian's Kokkos is a
// host-only g++ build); the per-item arithmetic is the host's, from kernels/history_item.hpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cufft.h>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_handles.hpp"
#include "kernels/cuda/history_cuda.hpp"
#include "kernels/cuda/resource_cache_cuda.hpp"
#include "kernels/history_item.hpp"

namespace fracmfg::kernels::cuda {

namespace {

constexpr unsigned threads_per_block = 256;

// The signal block on the device is dense: row s of the chunk at signal[s * components].
__global__ void pad_kernel(std::int64_t total, std::int64_t fft_length, std::int64_t rows,
                           std::int64_t components, const double* signal, double* padded) {
  for (std::int64_t e = global_thread(); e < total; e += grid_threads()) {
    detail::history_pad_item(e, fft_length, rows, components, signal, padded);
  }
}

__global__ void multiply_kernel(std::int64_t total, std::int64_t frequencies,
                                const double* spectrum, const double* weights, double* product) {
  for (std::int64_t e = global_thread(); e < total; e += grid_threads()) {
    detail::history_multiply_item(e, frequencies, spectrum, weights, product);
  }
}

__global__ void extract_kernel(std::int64_t total, std::int64_t components, std::int64_t fft_length,
                               std::int64_t rows, const double* convolution, double* result) {
  for (std::int64_t e = global_thread(); e < total; e += grid_threads()) {
    result[e] = detail::history_extract_item(e, components, fft_length, rows, convolution);
  }
}

// A batch of `batch` real transforms of length L, contiguous (the default layout).
FftPlanKey plan_key(int device, std::int64_t length, std::int64_t batch, cufftType type) {
  FftPlanKey k;
  k.device = device;
  k.rank = 1;
  k.dims[0] = length;
  k.batch = batch;
  k.type = type;
  return k;
}

}  // namespace

void history_fft(const HistoryBlock& b, const HistorySpectra& s, std::int64_t max_batch_doubles,
                 int device, ResourceCache* cache) {
  DeviceGuard guard(device);
  const std::int64_t c = b.components;
  const std::int64_t length = s.fft_length;
  const std::int64_t frequencies = length / 2 + 1;
  const std::int64_t m = b.signal_rows;
  const std::int64_t p = b.output_rows;
  const std::int64_t chunk = std::clamp<std::int64_t>(max_batch_doubles / length, 1, c);
  const auto sz = [](std::int64_t n) { return static_cast<std::size_t>(n); };

  auto d_signal = device_alloc<double>(sz(m * chunk), "cudaMalloc (signal)");
  auto d_padded = device_alloc<double>(sz(length * chunk), "cudaMalloc (padded signal)");
  auto d_conv = device_alloc<double>(sz(length * chunk), "cudaMalloc (convolution)");
  auto d_spectrum =
      device_alloc<cufftDoubleComplex>(sz(frequencies * chunk), "cudaMalloc (spectrum)");
  auto d_product =
      device_alloc<cufftDoubleComplex>(sz(frequencies * chunk), "cudaMalloc (product)");
  auto d_result = device_alloc<double>(sz(p * chunk), "cudaMalloc (result)");
  DeviceArray<double> d_weights[2];
  for (int r = 0; r < b.rules; ++r) {
    d_weights[r] = device_alloc<double>(sz(2 * frequencies), "cudaMalloc (weight spectrum)");
    copy_to_device(d_weights[r].get(), s.spectrum[r], sz(2 * frequencies),
                   "copy of the weight spectrum");
  }
  // Results of every rule for all components, added to the outputs at the end.
  std::vector<double> result(sz(b.rules * p * c));

  std::int64_t planned_batch = 0;
  std::unique_ptr<FftPlanRef> forward;
  std::unique_ptr<FftPlanRef> backward;
  for (std::int64_t c0 = 0; c0 < c; c0 += chunk) {
    const std::int64_t cc = std::min(chunk, c - c0);
    if (cc != planned_batch) {
      forward.reset();
      backward.reset();
      forward = std::make_unique<FftPlanRef>(cache, plan_key(device, length, cc, CUFFT_D2Z));
      backward = std::make_unique<FftPlanRef>(cache, plan_key(device, length, cc, CUFFT_Z2D));
      planned_batch = cc;
    }
    const std::size_t row_bytes = sz(cc) * sizeof(double);
    cuda_check(cudaMemcpy2D(d_signal.get(), row_bytes, b.signal + c0, sz(b.stride) * sizeof(double),
                            row_bytes, sz(m), cudaMemcpyHostToDevice),
               "copy of the signal block");
    pad_kernel<<<grid_blocks(cc * length, threads_per_block), threads_per_block>>>(
        cc * length, length, m, cc, d_signal.get(), d_padded.get());
    cuda_check(cudaGetLastError(), "pad kernel launch");
    cufft_check(cufftExecD2Z(forward->get(), d_padded.get(), d_spectrum.get()), "cufftExecD2Z");
    for (int r = 0; r < b.rules; ++r) {
      multiply_kernel<<<grid_blocks(cc * frequencies, threads_per_block), threads_per_block>>>(
          cc * frequencies, frequencies, reinterpret_cast<const double*>(d_spectrum.get()),
          d_weights[r].get(), reinterpret_cast<double*>(d_product.get()));
      cuda_check(cudaGetLastError(), "multiply kernel launch");
      cufft_check(cufftExecZ2D(backward->get(), d_product.get(), d_conv.get()), "cufftExecZ2D");
      extract_kernel<<<grid_blocks(p * cc, threads_per_block), threads_per_block>>>(
          p * cc, cc, length, m, d_conv.get(), d_result.get());
      cuda_sync_check("history convolution");
      // Row o of the chunk goes to result[r][o][c0 .. c0 + cc).
      cuda_check(cudaMemcpy2D(result.data() + sz(r * p * c + c0), sz(c) * sizeof(double),
                              d_result.get(), row_bytes, row_bytes, sz(p), cudaMemcpyDeviceToHost),
                 "copy of the history sums");
    }
  }
  for (int r = 0; r < b.rules; ++r) {
    const double* res = result.data() + sz(r * p * c);
    for (std::int64_t o = 0; o < p; ++o) {
      double* out = b.output[r] + o * b.stride;
      for (std::int64_t i = 0; i < c; ++i) out[i] += res[o * c + i];
    }
  }
}

}  // namespace fracmfg::kernels::cuda
