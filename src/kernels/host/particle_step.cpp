// Host backend of kernels::particle_step: Kokkos loops over the particles running the bodies
// of kernels/particle_item.hpp (draw and move, then bin), the bins added atomically when the
// host space runs several threads. The input checks are shared with the cuda entry points.
#include "fracmfg/kernels/particle_step.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "fracmfg/core/error.hpp"
#include "kernels/host/kernel_checks.hpp"
#include "kernels/particle_item.hpp"

namespace fracmfg::kernels {

namespace {

using HostPolicy =
    Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::int64_t>>;
// Kokkos takes a loop's label as a const std::string&: made once, not per call.
const std::string kLabelParticleBinHost{"fracmfg::particle_bin_host"};
const std::string kLabelParticleMoveHost{"fracmfg::particle_move_host"};

void check_axis(const ParticleAxis& a, detail::Who who, const char* name) {
  const std::string axis = who + ": axis " + name + ": ";
  if (a.points < 1) throw Error(axis + "needs at least one grid point");
  if (!(std::isfinite(a.spacing) && a.spacing > 0.0)) {
    throw Error(axis + "spacing must be positive and finite");
  }
  if (!(std::isfinite(a.length) && a.length > 0.0) || !std::isfinite(a.origin)) {
    throw Error(axis + "length must be positive and finite, origin finite");
  }
}

// Two sweeps over the particles: draw and move, then bin. On the host the grid's drift data
// and the bins then take turns in cache (one fused sweep was slower in 2D with
// perf/bench_particle_step); the cuda launch fuses them.
template <class Kind, bool Atomic>
void step_particles(const ParticleStep& s) {
  ParticleStep c = s;
  if (Kind::draw || Kind::move) {
    c.bins = nullptr;
    Kokkos::parallel_for(kLabelParticleMoveHost, HostPolicy(0, s.count), [=](const std::int64_t p) {
      detail::particle_item<Kind::dim, Kind::draw, Kind::move>(c, p, c.x, c.y, c.x, c.y, nullptr,
                                                               nullptr);
    });
    c.bins = s.bins;
  }
  if (c.bins == nullptr) return;
  Kokkos::parallel_for(kLabelParticleBinHost, HostPolicy(0, s.count), [=](const std::int64_t p) {
    std::int64_t index[4];
    std::int64_t mass[4];
    const int n =
        detail::particle_bin<Kind::dim>(c, c.x[p], Kind::dim == 2 ? c.y[p] : 0.0, index, mass);
    for (int k = 0; k < n; ++k) {
      if constexpr (Atomic) {
        Kokkos::atomic_add(&c.bins[index[k]], mass[k]);
      } else {
        c.bins[index[k]] += mass[k];
      }
    }
  });
}

}  // namespace

std::int64_t particle_grid_points(const ParticleStep& s) {
  return s.dim == 2 ? s.axis[0].points * s.axis[1].points : s.axis[0].points;
}

std::int64_t particle_x_faces(const ParticleStep& s) {
  return particle_faces(s.axis[0]) * (s.dim == 2 ? s.axis[1].points : 1);
}

std::int64_t particle_y_faces(const ParticleStep& s) {
  return s.dim == 2 ? s.axis[0].points * particle_faces(s.axis[1]) : 0;
}

void check_particle_step(const ParticleStep& s, bool device, const char* caller) {
  const detail::Who who{caller};
  if (s.dim != 1 && s.dim != 2) throw Error(who + ": dim must be 1 or 2");
  check_axis(s.axis[0], who, "x");
  if (s.dim == 2) check_axis(s.axis[1], who, "y");
  if (s.count < 0) throw Error(who + ": negative particle count " + std::to_string(s.count));
  if (s.first < 0) throw Error(who + ": negative first id " + std::to_string(s.first));
  if (s.move && !(std::isfinite(s.dt) && std::isfinite(s.noise) && s.noise >= 0.0)) {
    throw Error(who + ": the time step and the noise must be finite (noise >= 0)");
  }
  if (s.count == 0) return;
  // The device path keeps its positions and the grid's constants itself.
  if (!device) {
    if (s.x == nullptr || (s.dim == 2 && s.y == nullptr)) throw Error(who + ": null positions");
    if (s.draw && s.cdf == nullptr) throw Error(who + ": a draw needs the cdf of m0");
    if (s.move && s.inv_c == nullptr) throw Error(who + ": a move needs 1/c");
  }
  if (s.move && (s.dx_face == nullptr || (s.dim == 2 && s.dy_face == nullptr))) {
    throw Error(who + ": a move needs the face differences of u");
  }
}

void particle_step_host(const ParticleStep& s) {
  constexpr const char* who = "particle_step_host";
  check_particle_step(s, false, who);
  if (s.bins != nullptr) {
    std::fill(s.bins, s.bins + particle_grid_points(s), std::int64_t{0});
  }
  if (s.count == 0) return;
  detail::require_kokkos(who);
  const bool atomic = Kokkos::DefaultHostExecutionSpace::concurrency() > 1;
  detail::particle_kind(s, [&](auto kind) {
    using Kind = decltype(kind);
    atomic ? step_particles<Kind, true>(s) : step_particles<Kind, false>(s);
  });
}

}  // namespace fracmfg::kernels
