#pragma once
// Host-callable CUDA implementation of kernels::history_fft_cuda (defined in history.cu).
// Plain C++: the g++-compiled dispatch includes it.

#include <cstdint>

#include "fracmfg/kernels/cuda_resources.hpp"
#include "fracmfg/kernels/history.hpp"

namespace fracmfg::kernels::cuda {

/// FFT path of a checked, non-empty call on `device`, in chunks of at most
/// max_batch_doubles / L components: cuFFT D2Z/Z2D batched transforms, the pad/multiply/extract
/// items of kernels/history_item.hpp. The outputs are updated on the host after every device
/// call succeeded. Throws fracmfg::Error ("CUDA ...") on failure, leaving the outputs untouched.
/// cuFFT plans come from `cache` (the workspace's or the options' CudaResources), or are
/// created per call when it is null.
void history_fft(const HistoryBlock& block, const HistorySpectra& spectra,
                 std::int64_t max_batch_doubles, int device, ResourceCache* cache);

}  // namespace fracmfg::kernels::cuda
