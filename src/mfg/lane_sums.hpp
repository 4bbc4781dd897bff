#pragma once
// Sums over the points of a loop kept in four interleaved partial sums: a single
// accumulator makes a long loop over the points wait on the latency of one add chain, a
// visible share of a 1D mfg iteration across the fixed-point and Newton bookkeeping loops.
#include <petscsys.h>

#include <array>

namespace fracmfg::mfg::detail {

/// Calls f(i, acc) for i = 0 .. n-1, acc pointing to K accumulators of lane i % 4 (the tail
/// uses lane 0); returns the K sums over the lanes. f may also write per-point results.
template <int K, class F>
std::array<double, K> lane_sums(PetscInt n, F&& f) {
  double lanes[4][K] = {};
  PetscInt i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int l = 0; l < 4; ++l) f(i + l, lanes[l]);
  }
  for (; i < n; ++i) f(i, lanes[0]);
  std::array<double, K> out{};
  for (int k = 0; k < K; ++k) out[k] = (lanes[0][k] + lanes[1][k]) + (lanes[2][k] + lanes[3][k]);
  return out;
}

}  // namespace fracmfg::mfg::detail
