#pragma once
// mfg::ParticleFokkerPlanck: the Fokker-Planck equation by interacting-free particles and a
// kernel density estimate (deck `fokker_planck: {method: particles}`).
//
// N particles (fokker_planck.particles, over all ranks) follow the optimal dynamics
//
//   X_{n+1} = X_n - grad u^n(X_n) / c(X_n) dt + sqrt(2 nu dt) xi_n     (Euler-Maruyama),
//
// xi_n standard normal per axis, reflected at reflecting walls (x -> -x, x -> 2L - x) or
// wrapped on periodic axes. grad u^n at X is the linear (bilinear in 2D) interpolation of
// the one-sided differences (u_{i+1} - u_i)/h located on the cell faces (0 on reflecting
// walls: the Neumann condition); 1/c is interpolated linearly between the grid points.
// X_0 is drawn from the model's m0 taken as constant on each cell (the cell by the
// cumulative distribution, the position uniformly inside it).
//
// Random numbers: Philox4x32-10 (Random123), key = the seed, counter = (particle id, step,
// stream), so particle i has the same path whatever the rank count and the density is
// bit-for-bit the same on any number of ranks (below). The same seed gives the same noise
// in every sweep of the fixed point (common random numbers: the particle fixed point map is
// deterministic and converges).
//
// Density on the grid: each rank bins its particles onto the grid points by linear
// (cloud-in-cell) weights in fixed point (2^32 per particle, split exactly among the two or
// four points around it; the reflecting walls fold the weight beyond the outer points
// back, periodic axes wrap),
// the int64 bins are summed over ranks (exact, so independent of the rank count), and the
// binned mass is smoothed with a Gaussian kernel by kernels::kde_binned_host (or its cuda
// twin) through the rank's exec::Selector (kernel "mfg_particle_kde"); the result has mass
// 1 (sum m * cell volume). Bandwidth: fokker_planck.bandwidth, or with 0 Silverman's rule on
// the binned distribution, h = 0.9 min(sigma, IQR / 1.34) N^(-1/5) in 1D and
// h_axis = min(sigma_axis, IQR_axis / 1.34) N^(-1/6) per axis in 2D; never below the grid
// spacing.
//
// Where the particles live: the draw, the move and the binning are one kernel,
// kernels::particle_step, run through the selector as "mfg_particle_step" (on the host
// without a selector). The positions stay on the backend that ran the last call: on the
// device, each step sends the face differences of u over and brings the bins back, nothing
// else; a call placed on the other backend moves them first, and x(), y() refresh the host
// copy. The results do not depend on the backend beyond round-off (the random numbers are
// functions of the particle id and step).
//
// Distribution: particle ids are split over the ranks in contiguous blocks, equal at the
// start; between sweeps an exec::Rebalancer re-splits them in proportion to each rank's
// measured particle throughput (time of the particle calls; no data moves: a sweep draws its
// particles afresh, where its first call runs).
//
// A nonzero Fokker-Planck source (sources.fp) cannot be represented by particles; the
// constructor refuses it.
//
// Collectivity: constructor, begin(), step() and density() are collective.

#include <petscvec.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/mfg/model.hpp"

namespace fracmfg::mfg {

class ParticleFokkerPlanck {
 public:
  /// selector may be null (host KDE). Throws core::CollectiveError (exit code usage) when
  /// the model has a Fokker-Planck source. The model (and selector) must outlive this.
  ParticleFokkerPlanck(const Model& model, exec::Selector* selector, core::Logger log = {});
  ~ParticleFokkerPlanck();
  ParticleFokkerPlanck(const ParticleFokkerPlanck&) = delete;
  ParticleFokkerPlanck& operator=(const ParticleFokkerPlanck&) = delete;

  /// Starts a sweep at t = 0: (re-splits the ids if the rebalancer asks for it, then)
  /// draws this rank's particles from m0 (at the next particle call, where it runs).
  void begin();
  /// Moves the particles from level n to n + 1 with the drift of u = u^n (a global Vec of
  /// model().dm()) and writes their density into m_next.
  void step(int n, Vec u, Vec m_next);
  /// Writes the density of the current particles into m.
  void density(Vec m);

  std::int64_t total() const;  ///< N over all ranks
  std::int64_t first() const;  ///< id of this rank's first particle
  std::int64_t count() const;  ///< particles on this rank
  /// Positions of this rank's particles (y empty in 1D); brings a copy from the device
  /// when they live there. Valid until the next call.
  const std::vector<double>& x() const;
  const std::vector<double>& y() const;
  /// Bandwidth per axis of the last density.
  std::array<double, 2> bandwidth() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::mfg
