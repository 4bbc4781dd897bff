#pragma once
// Host-callable CUDA implementation of kernels::L1HistoryDevice (defined in l1_history.cu).
// Plain C++: the g++-compiled entry points include it.

#include <cstdint>

#include "fracmfg/kernels/l1_history.hpp"

namespace fracmfg::kernels::cuda {

/// Allocates the device arrays of one history: `capacity` vectors of `points` doubles (twice
/// for soe, whose modes are double-buffered), the increment and the history, and room for
/// `coefficients` doubles of per-step coefficients or weights.
L1HistoryDevice::State* l1_create(int device, std::int64_t points, std::int64_t capacity,
                                  bool double_buffer, std::int64_t coefficients);
void l1_destroy(L1HistoryDevice::State* state) noexcept;
void l1_upload(L1HistoryDevice::State* state, const double* host, std::int64_t vectors);
void l1_download(const L1HistoryDevice::State* state, double* host, std::int64_t vectors);
/// One soe step; the new modes become current only when the whole step succeeded.
void l1_soe_step(L1HistoryDevice::State* state, const SoeHistoryStep& step);
/// Stores `increment` as vector `slot`, then history = sum_{k <= slot} w_k past_k.
void l1_direct_step(L1HistoryDevice::State* state, const double* increment, std::int64_t slot,
                    const L1DirectStep& step);

}  // namespace fracmfg::kernels::cuda
