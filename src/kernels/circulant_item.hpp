#pragma once
// Per-item bodies of kernels::circulant_batched and kernels::circulant_2d, shared by the host loops
// (one line per iteration, items of the line in order) and the CUDA launches (one thread per item).
#include <cstdint>

#include "fracmfg/kernels/host_device.hpp"

namespace fracmfg::kernels::detail {

/// Item k of padded line b (L values): the line's value k, zero beyond m.
FRACMFG_HOST_DEVICE inline void circulant_pad_item(std::int64_t b, std::int64_t k,
                                                   std::int64_t fft_length, std::int64_t length,
                                                   const double* x, double* padded) {
  padded[b * fft_length + k] = k < length ? x[b * length + k] : 0.0;
}

/// Frequency k of line b's spectrum (L/2 + 1 complex numbers, re/im interleaved): times
/// the real eigenvalue of the frequency.
FRACMFG_HOST_DEVICE inline void circulant_multiply_item(std::int64_t b, std::int64_t k,
                                                        std::int64_t frequencies,
                                                        const double* eigenvalues,
                                                        double* spectrum) {
  const double lambda = eigenvalues[k];
  double* z = spectrum + 2 * (b * frequencies + k);
  z[0] *= lambda;
  z[1] *= lambda;
}

/// Value k of output line b: y += scale * the line's product value k.
FRACMFG_HOST_DEVICE inline void circulant_extract_item(std::int64_t b, std::int64_t k,
                                                       std::int64_t fft_length, std::int64_t length,
                                                       double scale, const double* product,
                                                       double* y) {
  y[b * length + k] += scale * product[b * fft_length + k];
}

/// Value k of a 2D product (the whole grid one line of values): y = shift x + scale times
/// the product value k (y overwritten; the shift term left out when it is 0, so that an
/// infinite x does not turn into NaN there).
FRACMFG_HOST_DEVICE inline void circulant_shift_store_item(std::int64_t k, double shift,
                                                           double scale, const double* x,
                                                           const double* product, double* y) {
  const double v = scale * product[k];
  y[k] = shift != 0.0 ? shift * x[k] + v : v;
}

}  // namespace fracmfg::kernels::detail
