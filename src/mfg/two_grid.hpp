#pragma once
// The two-grid iteration of the coupled game (iteration.method two_grid; solver_two_grid.cpp).
//
// The game is the fixed-point problem U = Psi(U) (mfg/newton.hpp: M(U) the Fokker-Planck sweep
// with the drift of U, Psi(U) the HJB sweep at M(U)). Newton's step from U would be
//   U + (I - K)^{-1} r = Psi(U) + (I - K)^{-1} K r,   r = Psi(U) - U,  K = dPsi/dU,
// and K is what makes the undamped iteration U <- Psi(U) diverge: on the 1D crowd game its
// eigenvalues are real, in [a_min, 0] with a_min below -1, and the large ones belong to a few
// hundred smooth modes whose values do not change when the grid is refined
// (docs/performance.md, "The two-grid iteration"). The two-grid step replaces (I - K)^{-1} K
// by its value on a coarse grid with the same time levels:
//   U <- Psi(U) + P z,   (I - K_c) w = R r,   z = w - R r  (= (I - K_c)^{-1} K_c R r),
// K_c the linearised game on the coarse grid at the restricted U, Psi(U), M(U) (R: linear
// interpolation of the fine fields at the coarse points; P: linear interpolation back), solved
// by the coarse LinearizedGame's GMRES. The fine grid costs one evaluation of the sweeps per
// iteration (no fine products, no line search); the rough modes, on which K is small, converge
// as in the undamped iteration, the smooth ones by the coarse correction. This is the
// two-grid idea of Atkinson and Brakhage for equations of the second kind u = f + K u, applied
// to the nonlinear map Psi.
//
// Transfers: every rank adds the contributions of the fine points it owns to a replicated
// coarse array (restriction) and reads the coarse correction from a replicated array
// (prolongation); one MPI_Allreduce of (levels x coarse points) values each way. The coarse
// grid has min(points, coarse_points) points per axis.
//
// Supports what LinearizedGame supports (mfg/newton.hpp). Collective on the model's
// communicator.
#include <memory>
#include <vector>

#include "fracmfg/mfg/model.hpp"
#include "mfg/newton.hpp"
#include "mfg/petsc_handles.hpp"

namespace fracmfg::mfg::detail {

class CoarseCorrection {
 public:
  /// The coarse game of `fine` with min(points, coarse_points) points per axis and the same
  /// time levels. Throws Error where LinearizedGame does. Collective.
  CoarseCorrection(const Model& fine, int coarse_points);
  ~CoarseCorrection();
  CoarseCorrection(const CoarseCorrection&) = delete;
  CoarseCorrection& operator=(const CoarseCorrection&) = delete;

  /// u_next = Psi(U) + P z for the sweeps' u = U, ut = Psi(U), m = M(U) (levels 0..N of the
  /// fine model; u_next may not alias them), the coarse system solved to the relative
  /// tolerance rtol. Returns the coarse GMRES iterations. Collective.
  int correct(const std::vector<VecPtr>& u, const std::vector<VecPtr>& ut,
              const std::vector<VecPtr>& m, std::vector<VecPtr>& u_next, double rtol);

  const Model& coarse_model() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::mfg::detail
