#pragma once
// Per-particle bodies of kernels::particle_step (the particle Fokker-Planck method,
// mfg/particles.hpp): counter-based random numbers, interpolation on point and face
// lattices, the draw from m0, the Euler-Maruyama step with reflection or wrapping, and
// fixed-point linear binning; shared by the host loop and the CUDA launch.
#include <Random123/philox.h>

#include <cmath>
#include <cstdint>

#include "fracmfg/kernels/host_device.hpp"
#include "fracmfg/kernels/particle_step.hpp"

namespace fracmfg::kernels::detail {

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

/// The mass of one particle in the bins (fixed point).
constexpr std::int64_t kParticleMass = std::int64_t{1} << 32;

/// Counter streams: the noise of a step, and the draws of the initial positions.
constexpr std::uint32_t kStreamNoise = 0, kStreamStart = 1, kStreamStart2 = 2;

/// The grid points of an axis as a lattice.
FRACMFG_HOST_DEVICE inline Lattice node_lattice(const ParticleAxis& a) {
  return {a.origin, a.spacing, a.points, a.periodic};
}

/// The faces between points (periodic: (k + 1/2) h, k < N) or including the walls (k h,
/// k <= N).
FRACMFG_HOST_DEVICE inline Lattice face_lattice(const ParticleAxis& a) {
  return a.periodic ? Lattice{0.5 * a.spacing, a.spacing, a.points, true}
                    : Lattice{0.0, a.spacing, a.points + 1, false};
}

/// The first index k < n with cdf[k] > v (std::upper_bound), n when there is none.
FRACMFG_HOST_DEVICE inline std::int64_t first_above(const double* cdf, std::int64_t n, double v) {
  std::int64_t lo = 0, len = n;
  while (len > 0) {
    const std::int64_t half = len / 2;
    if (!(v < cdf[lo + half])) {
      lo += half + 1;
      len -= half + 1;
    } else {
      len = half;
    }
  }
  return lo;
}

/// Particle id's position drawn from m0 (the cell by the cumulative mass, the position
/// uniform inside it).
template <int Dim>
FRACMFG_HOST_DEVICE inline void particle_draw(const ParticleStep& s, std::uint64_t id, double& x,
                                              double& y) {
  const ParticleAxis& ax = s.axis[0];
  const std::int64_t n = Dim == 2 ? ax.points * s.axis[1].points : ax.points;
  const RandomWords r = philox(s.seed, id, 0, kStreamStart);
  const double pick = uniform53(r.w[0], r.w[1]) * s.cdf[n - 1];
  std::int64_t cell = first_above(s.cdf, n, pick);
  cell = cell < n - 1 ? cell : n - 1;
  const std::int64_t i = cell % ax.points, j = cell / ax.points;
  const double ox = uniform53(r.w[2], r.w[3]) - 0.5;
  x = into_domain(ax.origin + static_cast<double>(i) * ax.spacing + ox * ax.spacing, ax.length,
                  ax.periodic);
  if (Dim == 2) {
    const ParticleAxis& ay = s.axis[1];
    const RandomWords r2 = philox(s.seed, id, 0, kStreamStart2);
    const double oy = uniform53(r2.w[0], r2.w[1]) - 0.5;
    y = into_domain(ay.origin + static_cast<double>(j) * ay.spacing + oy * ay.spacing, ay.length,
                    ay.periodic);
  }
}

/// One Euler-Maruyama step of particle id at (x, y): the drift -grad u / c interpolated
/// (bilinearly in 2D: d/dx on x faces, rows at the points in y; d/dy on y faces, columns at
/// the points in x), the noise from the step's counter.
template <int Dim>
FRACMFG_HOST_DEVICE inline void particle_move(const ParticleStep& s, std::uint64_t id, double& x,
                                              double& y) {
  const ParticleAxis& ax = s.axis[0];
  const Lattice nx_l = node_lattice(ax), fx_l = face_lattice(ax);
  double z1 = 0.0, z2 = 0.0;
  if (Dim != 2) {
    const Stencil2 f = locate(fx_l, x);
    const Stencil2 c = locate(nx_l, x);
    const double du = (1.0 - f.frac) * s.dx_face[f.lo] + f.frac * s.dx_face[f.hi];
    const double ic = (1.0 - c.frac) * s.inv_c[c.lo] + c.frac * s.inv_c[c.hi];
    normals(philox(s.seed, id, s.step, kStreamNoise), z1, z2);
    x = into_domain(x - du * ic * s.dt + s.noise * z1, ax.length, ax.periodic);
    return;
  }
  const ParticleAxis& ay = s.axis[1];
  const Lattice ny_l = node_lattice(ay), fy_l = face_lattice(ay);
  const std::int64_t fx = fx_l.count, nxp = ax.points;
  const Stencil2 fx_s = locate(fx_l, x), nx_s = locate(nx_l, x);
  const Stencil2 fy_s = locate(fy_l, y), ny_s = locate(ny_l, y);
  const double* dx = s.dx_face;
  const double* dy = s.dy_face;
  const double* ic_p = s.inv_c;
  const double dux = (1.0 - ny_s.frac) * ((1.0 - fx_s.frac) * dx[ny_s.lo * fx + fx_s.lo] +
                                          fx_s.frac * dx[ny_s.lo * fx + fx_s.hi]) +
                     ny_s.frac * ((1.0 - fx_s.frac) * dx[ny_s.hi * fx + fx_s.lo] +
                                  fx_s.frac * dx[ny_s.hi * fx + fx_s.hi]);
  const double duy = (1.0 - fy_s.frac) * ((1.0 - nx_s.frac) * dy[fy_s.lo * nxp + nx_s.lo] +
                                          nx_s.frac * dy[fy_s.lo * nxp + nx_s.hi]) +
                     fy_s.frac * ((1.0 - nx_s.frac) * dy[fy_s.hi * nxp + nx_s.lo] +
                                  nx_s.frac * dy[fy_s.hi * nxp + nx_s.hi]);
  const double ic = (1.0 - ny_s.frac) * ((1.0 - nx_s.frac) * ic_p[ny_s.lo * nxp + nx_s.lo] +
                                         nx_s.frac * ic_p[ny_s.lo * nxp + nx_s.hi]) +
                    ny_s.frac * ((1.0 - nx_s.frac) * ic_p[ny_s.hi * nxp + nx_s.lo] +
                                 nx_s.frac * ic_p[ny_s.hi * nxp + nx_s.hi]);
  normals(philox(s.seed, id, s.step, kStreamNoise), z1, z2);
  x = into_domain(x - dux * ic * s.dt + s.noise * z1, ax.length, ax.periodic);
  y = into_domain(y - duy * ic * s.dt + s.noise * z2, ay.length, ay.periodic);
}

/// The bins a particle at (x, y) adds to and its mass in each (units of 2^-32, >= 0,
/// summing to exactly 2^32): x first, then each x part split in y. Returns how many (2 or 4)
/// of index[], mass[] it set.
template <int Dim>
FRACMFG_HOST_DEVICE inline int particle_bin(const ParticleStep& s, double x, double y,
                                            std::int64_t* index, std::int64_t* mass) {
  const ParticleAxis& ax = s.axis[0];
  const Bin bx = bin(x, ax.origin, ax.spacing, ax.points, ax.periodic, kParticleMass);
  if (Dim != 2) {
    index[0] = bx.lo;
    mass[0] = bx.lower;
    index[1] = bx.hi;
    mass[1] = kParticleMass - bx.lower;
    return 2;
  }
  const ParticleAxis& ay = s.axis[1];
  const std::int64_t nx = ax.points;
  const Bin by = bin(y, ay.origin, ay.spacing, ay.points, ay.periodic, kParticleMass);
  const double fy = static_cast<double>(by.lower) / static_cast<double>(kParticleMass);
  const std::int64_t xl = bx.lower, xu = kParticleMass - bx.lower;
  const std::int64_t ll = llround(static_cast<double>(xl) * fy);
  const std::int64_t ul = llround(static_cast<double>(xu) * fy);
  index[0] = by.lo * nx + bx.lo;
  mass[0] = ll;
  index[1] = by.hi * nx + bx.lo;
  mass[1] = xl - ll;
  index[2] = by.lo * nx + bx.hi;
  mass[2] = ul;
  index[3] = by.hi * nx + bx.hi;
  mass[3] = xu - ul;
  return 4;
}

/// The whole call for particle p: draw, move, write back, and the bins it adds to. Dim,
/// Draw, Move are the call's s.dim, s.draw, s.move as template arguments, so that the loops
/// compile one lean body per kind of call (particle_kind picks it). Returns the number of
/// (index, mass) pairs set (0 when s.bins is null).
template <int Dim, bool Draw, bool Move>
FRACMFG_HOST_DEVICE inline int particle_item(const ParticleStep& s, std::int64_t p,
                                             const double* x_in, const double* y_in, double* x_out,
                                             double* y_out, std::int64_t* index,
                                             std::int64_t* mass) {
  const auto id = static_cast<std::uint64_t>(s.first + p);
  double x = 0.0, y = 0.0;
  if (Draw) {
    particle_draw<Dim>(s, id, x, y);
  } else {
    x = x_in[p];
    if (Dim == 2) y = y_in[p];
  }
  if (Move) particle_move<Dim>(s, id, x, y);
  if (Draw || Move) {
    x_out[p] = x;
    if (Dim == 2) y_out[p] = y;
  }
  return s.bins != nullptr ? particle_bin<Dim>(s, x, y, index, mass) : 0;
}

/// Calls f(Kind{}) with Kind the compile-time kind of the call s: Kind::dim, Kind::draw,
/// Kind::move (host code: the loop and the launch choose their instantiation with it).
template <int Dim, bool Draw, bool Move>
struct ParticleKind {
  static constexpr int dim = Dim;
  static constexpr bool draw = Draw;
  static constexpr bool move = Move;
};

template <int Dim, class F>
void particle_kind_of(const ParticleStep& s, F&& f) {
  if (s.draw) {
    s.move ? f(ParticleKind<Dim, true, true>{}) : f(ParticleKind<Dim, true, false>{});
  } else {
    s.move ? f(ParticleKind<Dim, false, true>{}) : f(ParticleKind<Dim, false, false>{});
  }
}

template <class F>
void particle_kind(const ParticleStep& s, F&& f) {
  if (s.dim == 2) {
    particle_kind_of<2>(s, f);
  } else {
    particle_kind_of<1>(s, f);
  }
}

}  // namespace fracmfg::kernels::detail
