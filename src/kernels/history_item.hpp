#pragma once
// Bodies of kernels::history (fracmfg/kernels/history.hpp), shared by the host (Kokkos)
// loops and the CUDA kernels: each function is one work item.
//
// FFT path, per batch of c components with padded length L and H = L/2 + 1 frequencies
// (the CUDA threads take single elements, the host's items tiles of W components, which keep
// the transposes between the rows of F and the per-component transforms cache-friendly; both
// evaluate the same *_value functions):
//   pad       padded[i L + s] = f[s][i] for s < m, else 0
//   multiply  product[e] = spectrum[e] * weights[e mod H]
//   extract   out[o][i] += the convolution entry m - 1 + o of component i
// Direct path: history_direct_pack, one pack of W consecutive components.

#include <cstdint>

#include "fracmfg/kernels/host_device.hpp"

namespace fracmfg::kernels::detail {

/// Entry s of component i of the signal block (rows s < m at signal[s * stride + i]) padded
/// with zeros to the FFT length.
FRACMFG_HOST_DEVICE inline double history_pad_value(std::int64_t i, std::int64_t s,
                                                    std::int64_t signal_rows, std::int64_t stride,
                                                    const double* signal) {
  return s < signal_rows ? signal[s * stride + i] : 0.0;
}

/// Element e = i L + s of the padded batch (the CUDA thread's item).
FRACMFG_HOST_DEVICE inline void history_pad_item(std::int64_t e, std::int64_t fft_length,
                                                 std::int64_t signal_rows, std::int64_t stride,
                                                 const double* signal, double* padded) {
  const std::int64_t i = e / fft_length;
  const std::int64_t s = e - i * fft_length;
  padded[e] = history_pad_value(i, s, signal_rows, stride, signal);
}

/// Components i0 .. i0 + count - 1 (count <= W) padded at once (the host's item: each row
/// of the signal is read as one contiguous run of `count` values).
template <int W>
FRACMFG_HOST_DEVICE inline void history_pad_tile(std::int64_t i0, int count,
                                                 std::int64_t fft_length, std::int64_t signal_rows,
                                                 std::int64_t stride, const double* signal,
                                                 double* padded) {
  for (std::int64_t s = 0; s < fft_length; ++s) {
    for (int l = 0; l < count && l < W; ++l) {
      padded[(i0 + l) * fft_length + s] = history_pad_value(i0 + l, s, signal_rows, stride, signal);
    }
  }
}

/// Complex product of entry e (frequency k) of a batch of spectra, values interleaved re, im,
/// with the weights' spectrum at frequency k.
FRACMFG_HOST_DEVICE inline void history_multiply_value(std::int64_t e, std::int64_t k,
                                                       const double* spectrum,
                                                       const double* weights, double* product) {
  const double a = spectrum[2 * e];
  const double b = spectrum[2 * e + 1];
  const double c = weights[2 * k];
  const double d = weights[2 * k + 1];
  product[2 * e] = a * c - b * d;
  product[2 * e + 1] = a * d + b * c;
}

/// Entry e of a batch of spectra with H = `frequencies` per component (the CUDA thread's item).
FRACMFG_HOST_DEVICE inline void history_multiply_item(std::int64_t e, std::int64_t frequencies,
                                                      const double* spectrum, const double* weights,
                                                      double* product) {
  history_multiply_value(e, e % frequencies, spectrum, weights, product);
}

/// Entry m - 1 + o of component i's circular convolution (stored at convolution[i L + ...]):
/// the history sum for output row o.
FRACMFG_HOST_DEVICE inline double history_extract_value(std::int64_t i, std::int64_t o,
                                                        std::int64_t fft_length,
                                                        std::int64_t signal_rows,
                                                        const double* convolution) {
  return convolution[i * fft_length + signal_rows - 1 + o];
}

/// Output row o = e / c, component i = e mod c of a batch of c components (the CUDA thread's
/// item).
FRACMFG_HOST_DEVICE inline double history_extract_item(std::int64_t e, std::int64_t components,
                                                       std::int64_t fft_length,
                                                       std::int64_t signal_rows,
                                                       const double* convolution) {
  const std::int64_t o = e / components;
  const std::int64_t i = e - o * components;
  return history_extract_value(i, o, fft_length, signal_rows, convolution);
}

/// Adds the sums of components i0 .. i0 + count - 1 (count <= W) to p output rows (row o at
/// out + o * stride, component i at column i) (the host's item: one contiguous run of
/// `count` values per row).
template <int W>
FRACMFG_HOST_DEVICE inline void history_extract_tile(std::int64_t i0, int count,
                                                     std::int64_t output_rows, std::int64_t stride,
                                                     std::int64_t fft_length,
                                                     std::int64_t signal_rows,
                                                     const double* convolution, double* out) {
  for (std::int64_t o = 0; o < output_rows; ++o) {
    for (int l = 0; l < count && l < W; ++l) {
      out[o * stride + i0 + l] +=
          history_extract_value(i0 + l, o, fft_length, signal_rows, convolution);
    }
  }
}

/// Direct sums for W consecutive components (lane l is component i0 + l) and `rules` rules:
///   out_r[o * stride + i0 + l] += sum_{s < min(m, offset + o)} K_r[offset + o - s] f[s][i0 + l]
/// Lanes are innermost so that the W independent sums vectorise; per lane the terms are added
/// in the order s = 0, 1, ... whatever W is.
template <int W>
FRACMFG_HOST_DEVICE inline void history_direct_pack(std::int64_t i0, std::int64_t stride,
                                                    std::int64_t signal_rows,
                                                    std::int64_t output_rows, std::int64_t offset,
                                                    int rules, const double* signal,
                                                    const double* k0, const double* k1,
                                                    double* out0, double* out1) {
  for (std::int64_t o = 0; o < output_rows; ++o) {
    const std::int64_t top = offset + o < signal_rows ? offset + o : signal_rows;
    double acc0[W];
    double acc1[W];
    for (int l = 0; l < W; ++l) {
      acc0[l] = 0.0;
      acc1[l] = 0.0;
    }
    const double* k0o = k0 + offset + o;
    if (rules == 2) {
      const double* k1o = k1 + offset + o;
      for (std::int64_t s = 0; s < top; ++s) {
        const double w0 = k0o[-s];
        const double w1 = k1o[-s];
        const double* f = signal + s * stride + i0;
        for (int l = 0; l < W; ++l) {
          acc0[l] += w0 * f[l];
          acc1[l] += w1 * f[l];
        }
      }
    } else {
      for (std::int64_t s = 0; s < top; ++s) {
        const double w0 = k0o[-s];
        const double* f = signal + s * stride + i0;
        for (int l = 0; l < W; ++l) acc0[l] += w0 * f[l];
      }
    }
    double* o0 = out0 + o * stride + i0;
    for (int l = 0; l < W; ++l) o0[l] += acc0[l];
    if (rules == 2) {
      double* o1 = out1 + o * stride + i0;
      for (int l = 0; l < W; ++l) o1[l] += acc1[l];
    }
  }
}

}  // namespace fracmfg::kernels::detail
