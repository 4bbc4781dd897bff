#pragma once
// mfg::detail::FractionalDiffusion: the diffusion nu (-Lap)^(s/2) of a mean field game of
// order s in (1, 2) (agents moving by Levy flights; Cirant & Goffi, arXiv:1809.03034; Ersland
// & Jakobsen, arXiv:2105.00073) on a periodic grid, for the HJB and Fokker-Planck solvers.
//
// The discrete operator A_s is the fractional centred difference (Ortigueira 2006; Celik &
// Duman, J. Comput. Phys. 231 (2012), eq. (2.3)) with its weights g_k periodised over the
// grid: per axis the symmetric circulant with eigenvalues h^-s |2 sin(pi k / N)|^s
// (frac/riesz_operator.hpp), positive diagonal, negative off-diagonals, zero row sums, O(h^2)
// consistent, and exactly the 3-point -Lap_h at s = 2. In 2D it is the tensor sum
// A_s = h_x^-s T_x (+) h_y^-s T_y, the generator of Levy flights with independent
// s-stable components along the axes (on cos(2 pi k x) cos(2 pi l y) it gives
// (2 pi)^s (|k|^s + |l|^s), not the isotropic (2 pi)^s (k^2 + l^2)^(s/2)).
//
// The solvers keep their local stencil, which carries nu (-Lap_h) (3- or 5-point), and add
// the rest, nu (A_s - (-Lap_h)), through this object: the residual and the Jacobian are
// those of nu A_s, while the assembled matrices stay the sparse upwind M-matrices of the
// stencil; the preconditioning matrix P of bind() swaps their -Lap_h for the
// nearest-neighbour part of A_s (any PETSc preconditioner may use it). A_s - (-Lap_h)
// is symmetric with zero row sums, so the Fokker-Planck matrix stays the transpose of the
// HJB Jacobian, its columns sum to 1/dt (mass) and, A_s being an M-matrix like -Lap_h, it
// stays the transpose of an M-matrix (m >= 0).
//
// Distribution: every product gathers the whole field on every rank (DMDA global ->
// natural, VecScatterCreateToAll: one all-gather of N values), applies the circulant there
// by real FFTs, O(N log N), and each rank keeps its own box; see docs/design.md.
//
// Collective: the constructor, add_nonlocal(), apply(), apply_inverse(), and the PETSc
// operations on shell() and on a PC given to set_circulant_preconditioner().
#include <petscksp.h>
#include <petscmat.h>
#include <petscvec.h>

#include <memory>

#include "fracmfg/exec/selector.hpp"
#include "fracmfg/mfg/model.hpp"

namespace fracmfg::mfg::detail {

class FractionalDiffusion {
 public:
  /// For model.diffusion_order() in (1, 2] on a periodic grid (fracmfg::Error otherwise).
  /// The FFT products go through `selector` (frac::RieszOperator::set_selector: host or
  /// device, the 1D products; the 2D transforms stay on the host); null: the host.
  explicit FractionalDiffusion(const Model& model, exec::Selector* selector = nullptr);
  ~FractionalDiffusion();
  FractionalDiffusion(const FractionalDiffusion&) = delete;
  FractionalDiffusion& operator=(const FractionalDiffusion&) = delete;

  /// y += nu (A_s - (-Lap_h)) x (global Vecs of model.dm(); x and y must differ).
  void add_nonlocal(Vec x, Vec y);
  /// y = nu A_s x.
  void apply(Vec x, Vec y);
  /// y = (sigma I + nu A_s)^-1 x, sigma > 0, by FFT (exact: the operator is circulant).
  void apply_inverse(Vec x, Vec y, double sigma);

  /// Binds the solver's assembled local matrix `local` (the HJB Jacobian J_loc = I/dt + U +
  /// nu (-Lap_h) or its transpose; the pattern of mfg/stencil.hpp's RowIndices): makes
  ///  - shell(): the MATSHELL y = J_loc x + nu (A_s - (-Lap_h)) x, the operator of the step
  ///    (its transpose: J_loc^T x + ..., the rest being symmetric);
  ///  - preconditioning_matrix(): P = J_loc + nu sum_axes (kappa - 1) (-D_hh), kappa =
  ///    |c_1| h^(2 - s) with c_1 the first off-diagonal weight of A_s (h^-s c_1): the upwind
  ///    part with the nearest-neighbour part of A_s, its far tail folded into the diagonal
  ///    (zero row sums), so P is an M-matrix and P = J_loc at s = 2.
  /// local must outlive this object. Call once.
  void bind(Mat local);
  Mat shell() const;
  Mat preconditioning_matrix() const;
  /// After local's values changed: P is refreshed and the shell marked as changed.
  void mark_changed();

  /// Makes pc a PCSHELL applying (sigma I + nu A_s)^-1.
  void set_circulant_preconditioner(PC pc, double sigma);

  /// Products (add_nonlocal, apply) and preconditioner applications on this rank.
  long long products() const;
  long long preconditioner_applications() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The default linear solver of an mfg solver with fractional diffusion: GMRES (restart 60)
/// to rtol, preconditioned by the multiplicative composite of (1) the preconditioning
/// matrix P solved by the local solver of the s = 2 game (1D: the exact tridiagonal solve
/// fracmfg_tridiag; 2D: block Jacobi/ILU) and (2) the circulant (sigma I + nu A_s)^-1 by FFT:
/// P carries the drift, the circulant the smooth part of the fractional diffusion, so the
/// Krylov counts stay bounded in the drift-dominated and in the diffusion-dominated regime
/// (docs/performance.md, "Fractional (Levy) diffusion in a mean field game"). Call after
/// setting the KSP's options prefix and before *SetFromOptions (so -<prefix>pc_type etc.
/// override it) and after bind().
void set_fractional_linear_solver(KSP ksp, FractionalDiffusion& frac, int dim, double sigma,
                                  double rtol);

}  // namespace fracmfg::mfg::detail
