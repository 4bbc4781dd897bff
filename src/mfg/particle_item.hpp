#pragma once
// Per-particle bodies of the particle Fokker-Planck method (mfg/particles.hpp): counter-based
// random numbers, interpolation on point and face lattices, the Euler-Maruyama step with
// reflection or wrapping, and fixed-point linear binning. Written once per work item with
// FRACMFG_HOST_DEVICE, as the kernels' bodies are.
#include <Random123/philox.h>

#include <cmath>
#include <cstdint>

#include "fracmfg/kernels/host_device.hpp"

namespace fracmfg::mfg::detail {

/// Four 32-bit random words for (seed, particle id, step, stream).
struct RandomWords {
  std::uint32_t w[4];
};

FRACMFG_HOST_DEVICE inline RandomWords philox(std::uint64_t seed, std::uint64_t id,
                                              std::uint32_t step, std::uint32_t stream) {
  using Rng = r123::Philox4x32;
  Rng rng;
  Rng::ctr_type ctr = {
      {static_cast<std::uint32_t>(id), static_cast<std::uint32_t>(id >> 32), step, stream}};
  Rng::key_type key = {{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
  const Rng::ctr_type r = rng(ctr, key);
  return {{r.v[0], r.v[1], r.v[2], r.v[3]}};
}

/// A uniform double in [0, 1) with 53 random bits from two words.
FRACMFG_HOST_DEVICE inline double uniform53(std::uint32_t a, std::uint32_t b) {
  return (static_cast<double>(a >> 5) * 67108864.0 + static_cast<double>(b >> 6)) *
         (1.0 / 9007199254740992.0);
}

/// Two independent standard normals (Box-Muller) from four words.
FRACMFG_HOST_DEVICE inline void normals(const RandomWords& r, double& n1, double& n2) {
  const double u1 = 1.0 - uniform53(r.w[0], r.w[1]);  // (0, 1]
  const double u2 = uniform53(r.w[2], r.w[3]);
  const double radius = sqrt(-2.0 * log(u1));
  const double angle = 6.283185307179586476925286766559 * u2;
  n1 = radius * cos(angle);
  n2 = radius * sin(angle);
}

/// Points q_k = first + k * spacing, k = 0..count-1, either periodic (q_count is q_0 again)
/// or clamped (constant beyond the ends).
struct Lattice {
  double first = 0.0;
  double spacing = 1.0;
  std::int64_t count = 1;
  bool periodic = false;
};

/// Linear interpolation position: value = (1 - frac) v[lo] + frac v[hi].
struct Stencil2 {
  std::int64_t lo, hi;
  double frac;
};

FRACMFG_HOST_DEVICE inline Stencil2 locate(const Lattice& l, double p) {
  double s = (p - l.first) / l.spacing;
  if (l.periodic) {
    const double fl = floor(s);
    std::int64_t lo = static_cast<std::int64_t>(fl) % l.count;
    if (lo < 0) lo += l.count;
    return {lo, lo + 1 == l.count ? 0 : lo + 1, s - fl};
  }
  if (l.count == 1) return {0, 0, 0.0};
  const double top = static_cast<double>(l.count - 1);
  s = s < 0.0 ? 0.0 : (s > top ? top : s);
  std::int64_t lo = static_cast<std::int64_t>(floor(s));
  if (lo > l.count - 2) lo = l.count - 2;
  return {lo, lo + 1, s - static_cast<double>(lo)};
}

/// One axis of the domain [0, L]: periodic (wrap) or reflecting (mirror at 0 and L).
FRACMFG_HOST_DEVICE inline double into_domain(double x, double length, bool periodic) {
  if (periodic) {
    x -= length * floor(x / length);
    return x >= length ? x - length : x;
  }
  // A step longer than the domain reflects several times.
  for (int k = 0; k < 64 && (x < 0.0 || x > length); ++k) {
    if (x < 0.0) x = -x;
    if (x > length) x = 2.0 * length - x;
  }
  return x < 0.0 ? 0.0 : (x > length ? length : x);
}

/// Linear binning of a coordinate onto grid points x_j = origin + j h, j = 0..n-1:
/// the two points around p and the weight of the lower one in units of `one` (the upper
/// gets one - lower). Periodic axes wrap; reflecting axes fold the points beyond the ends
/// back onto the end points.
struct Bin {
  std::int64_t lo, hi;
  std::int64_t lower;
};

FRACMFG_HOST_DEVICE inline Bin bin(double p, double origin, double h, std::int64_t n, bool periodic,
                                   std::int64_t one) {
  const double s = (p - origin) / h;
  const double fl = floor(s);
  std::int64_t lo = static_cast<std::int64_t>(fl);
  const double frac = s - fl;
  std::int64_t hi = lo + 1;
  if (periodic) {
    lo %= n;
    if (lo < 0) lo += n;
    hi = lo + 1 == n ? 0 : lo + 1;
  } else {
    lo = lo < 0 ? 0 : (lo > n - 1 ? n - 1 : lo);
    hi = hi < 0 ? 0 : (hi > n - 1 ? n - 1 : hi);
  }
  std::int64_t lower = static_cast<std::int64_t>(llround((1.0 - frac) * static_cast<double>(one)));
  lower = lower < 0 ? 0 : (lower > one ? one : lower);
  return {lo, hi, lower};
}

}  // namespace fracmfg::mfg::detail
