#pragma once
// Per-point bodies of kernels::l1_history, shared by the host loop and the CUDA launch.
#include <cstdint>

#include "fracmfg/kernels/host_device.hpp"

namespace fracmfg::kernels::detail {

/// The soe step of points [i0, i1): modes_out_j = e_j modes_in_j + q_j du and
/// history = sum_j c_j modes_out_j (summed in mode order). modes_in may equal modes_out.
FRACMFG_HOST_DEVICE inline void soe_history_range(std::int64_t i0, std::int64_t i1,
                                                  std::int64_t points, std::int64_t terms,
                                                  const double* decay, const double* inject,
                                                  const double* weight, const double* du,
                                                  const double* modes_in, double* modes_out,
                                                  double* history) {
  for (std::int64_t i = i0; i < i1; ++i) history[i] = 0.0;
  for (std::int64_t j = 0; j < terms; ++j) {
    const double* hin = modes_in + j * points;
    double* hout = modes_out + j * points;
    const double e = decay[j];
    const double q = inject[j];
    const double c = weight[j];
    for (std::int64_t i = i0; i < i1; ++i) {
      const double h = e * hin[i] + q * du[i];
      hout[i] = h;
      history[i] += c * h;
    }
  }
}

/// The direct step of points [i0, i1): history = sum_{k < levels} w_k past_k (in k order).
FRACMFG_HOST_DEVICE inline void l1_direct_range(std::int64_t i0, std::int64_t i1,
                                                std::int64_t points, std::int64_t levels,
                                                const double* weights, const double* past,
                                                double* history) {
  for (std::int64_t i = i0; i < i1; ++i) history[i] = 0.0;
  for (std::int64_t k = 0; k < levels; ++k) {
    const double* pk = past + k * points;
    const double w = weights[k];
    for (std::int64_t i = i0; i < i1; ++i) history[i] += w * pk[i];
  }
}

}  // namespace fracmfg::kernels::detail
