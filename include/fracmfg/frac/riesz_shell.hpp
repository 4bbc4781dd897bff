#pragma once
// frac::RieszShell: the Riesz operator of riesz_operator.hpp on a distributed grid
// (FpdeGrid's DMDA) as a PETSc shell matrix and a circulant shell preconditioner, so that a
// KSP solves sigma u + kappa A u = b without ever assembling the dense A.
//
//   frac::RieszShell shell(grid, 1.6);                 // collective
//   shell.set_coefficients(1.0, dt * K);               // the matrix is I + dt K A
//   KSPSetOperators(ksp, shell.matrix(), shell.matrix());
//   shell.set_preconditioner(pc, frac::CirculantKind::strang);
//
// Distribution (the choice and its cost): every product gathers the whole vector on every
// rank (DMDA global -> natural ordering, then VecScatterCreateToAll), applies the operator
// there by FFT, O(N log N), and each rank keeps its own box. Communication is one
// all-gather of N values per product (N = N_x N_y), memory O(N) per rank, and the FFT work
// is repeated on every rank, so the product does not get faster with more ranks; the rest
// of a step (vector updates, dot products, the right-hand side) does. This is the right
// trade for N up to about 10^6 on a few ranks, where the FFT costs milliseconds and the
// gather moves no more data than the all-to-all transposes a distributed FFT (FFTW-MPI)
// needs for every transform, a forward and an inverse one per direction and product. For
// larger grids on many ranks, a distributed transform is the way to scale.
//
// Matrix rows: sigma x + kappa T x at the unknowns, x at Dirichlet boundary points (whose
// values the caller fixes in the right-hand side): symmetric positive definite for
// sigma > 0, kappa >= 0, so CG applies. MatMult, MatMultTranspose and MatGetDiagonal are
// provided. The preconditioner applies (sigma I + kappa C)^-1 with the current
// coefficients (see RieszOperator::apply_circulant_inverse).
//
// A weight w > 0 per point (set_weight; a variable diffusivity K(x) = K w(x) in
// u_t = -K(x) (-Laplace)^(s/2) u) divides sigma: the rows at the unknowns become
// sigma x / w + kappa T x, i.e. the step matrix I + kappa diag(w) T multiplied by diag(w)^-1
// row by row, which keeps it symmetric positive definite (CG still applies). The
// preconditioner is then W^(1/2) (sigma I + kappa w_ref C)^-1 W^(1/2): exact for a constant
// weight, and for a smooth one W^(1/2) T W^(1/2) stays close to w_ref T (the weight varies
// slowly against the operator's kernel), so the Krylov counts stay bounded as h -> 0.
// Collective: the constructor, apply() and the PETSc operations on matrix() and the PC.

#include <petscksp.h>
#include <petscmat.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "fracmfg/frac/fpde_grid.hpp"
#include "fracmfg/frac/riesz_operator.hpp"

namespace fracmfg::frac {

class RieszShell {
 public:
  /// order in (1, 2]; the grid must be Dirichlet or periodic (fracmfg::Error otherwise).
  /// Collective.
  RieszShell(const FpdeGrid& grid, double order);
  ~RieszShell();
  RieszShell(const RieszShell&) = delete;
  RieszShell& operator=(const RieszShell&) = delete;

  /// The MATSHELL (owned by this object).
  Mat matrix() const;
  /// Coefficients of the matrix and of the preconditioner; a change marks the matrix as
  /// modified (an assembly), so PCs built from it are set up again. Collective (the same
  /// values on every rank).
  void set_coefficients(double sigma, double kappa);
  double sigma() const;
  double kappa() const;
  /// The weights w_p > 0 of the owned points (DMDA order; replaced by 1 at Dirichlet
  /// boundary points) and the reference w_ref of the preconditioner, the same on every rank.
  /// Marks the matrix as changed. Collective.
  void set_weight(std::vector<double> weight, double reference);

  /// y = sigma x / w + kappa T x + kappa_exterior E(x) at the unknowns (w = 1 without a weight) and
  /// y = x at boundary points (the affine operator with the boundary values as exterior data).
  /// Collective.
  void apply(Vec x, Vec y, double sigma, double kappa, double kappa_exterior);

  /// Makes pc a PCSHELL applying the circulant inverse of `kind`. Collective.
  void set_preconditioner(PC pc, CirculantKind kind);

  RieszOperator& op();
  /// Products and preconditioner applications so far (this rank).
  std::int64_t products() const;
  std::int64_t preconditioner_applications() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::frac
