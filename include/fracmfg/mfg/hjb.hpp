#pragma once
// mfg::HjbSolver: one implicit Euler step of the HJB equation backward in time,
//
//   (u^n - u^{n+1}) / dt - nu Lap_h u^n + H_h(x, D+u^n, D-u^n, m) = rhs^n,
//
// (rhs^n = F(x, m^{n+1}) + f_u(t_n, x) in the mean field game), with the centred Laplacian
// and the upwind numerical Hamiltonian of mfg/hamiltonian.hpp, solved by Newton's method
// through a PETSc SNES with the exact Jacobian J = I/dt + L(u) (tridiagonal in 1D,
// 5-point in 2D, 7-point in 3D; an M-matrix). Reflecting walls mirror the boundary value into
// the ghost (see mfg/grid.hpp); at an exit side the ghost is 2 g(t_n) - u, so that the value
// on the exit face is the exit cost g (set_time_level() names n); obstacle points are
// decoupled (u = 0 there: the row is u/dt) and their neighbours read them as walls. With exits
// or an obstacle the 1D fast path below is off (the SNES with the same tridiagonal solve).
//
// PETSc options prefix "mfg_hjb_": every -mfg_hjb_snes_* and -mfg_hjb_ksp_*/-mfg_hjb_pc_*
// option applies. Defaults set before the options are read: Newton with full steps
// (line search basic), rtol 1e-10, stol 1e-10, and in addition convergence once
// ||F||_2 <= tol (||u^{n+1}||_2 / dt + ||rhs||_2), tol a relative tolerance given per step
// (default 1e-12; an initial guess that already solves the step takes no Newton iteration,
// and since J^{-1} <= dt in the max norm, the error of u^n is then about tol times its size);
// linear solver: 1D, preonly with the exact distributed tridiagonal PC "fracmfg_tridiag"
// (la/tridiag_pc.hpp); 2D, GMRES + block Jacobi/ILU(3) with rtol 1e-4 (a Newton step only
// has to cut the residual by about 1e-3, see mfg::Solver); 3D, the same with ILU(1) blocks
// (docs/performance.md, "3D games"). In 2D, -mfg_hjb_pc_type
// fracmfg_line selects the alternating line relaxation of la/line_pc.hpp, whose line solves
// go through the solver's selector (the GPU path of the 2D Newton systems).
//
// 1D fast path: when every -mfg_hjb_ option given is one of snes_rtol, snes_atol, snes_stol,
// snes_max_it, snes_type, snes_linesearch_type, ksp_type, ksp_rtol, ksp_atol, ksp_max_it,
// pc_type, sub_pc_factor_levels (the 2D default), and the result is still newtonls + basic +
// preonly + fracmfg_tridiag, step() runs the same Newton iteration (same residual, Jacobian,
// tolerances and tests) without the SNES: the Jacobian rows go straight into
// la::TridiagSolver::factor_solve (direct() tells). Any other option (a monitor, a view,
// another solver) selects the SNES.
//
// Fractional diffusion (model.diffusion_order() < 2, mfg/fractional_diffusion.hpp in src):
// -nu Lap_h becomes nu A_s, the periodised fractional centred difference; the residual adds
// it by FFT, the SNES Jacobian is a MATSHELL (the assembled stencil plus the FFT product)
// with a sparse preconditioning matrix, the default linear solver GMRES (rtol 1e-4) with a
// multiplicative composite PC (the sparse part's local solve, then the circulant by FFT),
// and the 1D fast path is off. jacobian() returns the assembled local stencil.
//
// Collectivity: everything is collective on the model's communicator.

#include <petscmat.h>
#include <petscsnes.h>
#include <petscvec.h>

#include <memory>

#include "fracmfg/exec/selector.hpp"
#include "fracmfg/mfg/model.hpp"

namespace fracmfg::mfg {

class HjbSolver {
 public:
  /// Creates the SNES on model.dm(). selector: where the line solves of a fracmfg_line PC
  /// run (la::line_pc_set_selector); null: the host. The model (and selector) must outlive
  /// the solver. Collective.
  explicit HjbSolver(const Model& model, exec::Selector* selector = nullptr);
  ~HjbSolver();
  HjbSolver(const HjbSolver&) = delete;
  HjbSolver& operator=(const HjbSolver&) = delete;

  /// The density m (a global Vec of model.dm(), >= 0) at which a congestion Hamiltonian is
  /// evaluated by the following steps, residuals and Jacobians: the mfg solver gives
  /// m^{n+1} of the previous fixed-point iterate for level n. Required before a step with
  /// the congestion Hamiltonian; no effect for the others. Not collective.
  void set_density(Vec m);

  /// The time level n of the following steps, residuals and Jacobians: the exit cost is
  /// g(t_n). Required before the first of them when the grid has an exit side; no effect
  /// otherwise. Not collective.
  void set_time_level(int n);

  /// Solves one step: on entry u holds the initial guess, on return u^n. u_next is u^{n+1},
  /// rhs the right-hand side (global Vecs of model.dm()). Returns the Newton iterations.
  /// Throws core::CollectiveError (exit code numerical) on every rank when Newton fails
  /// (the message names the SNES reason); `where` is prefixed to that message. `tolerance`
  /// is the relative residual tolerance described in the header comment.
  int step(Vec u_next, Vec rhs, Vec u, const char* where = "HJB step", double tolerance = 1e-12);

  /// The residual of the step at u (for tests).
  void residual(Vec u_next, Vec rhs, Vec u, Vec r);
  /// ||residual||_2 of the step at u (e.g. to choose Newton's start).
  double residual_norm(Vec u_next, Vec rhs, Vec u);
  /// Assembles J(u) into the solver's matrix and returns it (for tests; valid until the
  /// next call or step).
  Mat jacobian(Vec u);

  SNES snes() const;
  /// True when step() uses the 1D fast path instead of the SNES (see above).
  bool direct() const;
  /// Total Newton iterations and steps since construction.
  long long newton_iterations() const;
  long long steps() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Sets the default linear solver of the mfg solvers on ksp: in 1D preonly with the
/// fracmfg_tridiag PC (registered here); in 2D and 3D GMRES with block Jacobi, relative
/// tolerance rtol (the HJB and Fokker-Planck solvers give the blocks ILU(3), in 3D ILU(1),
/// at their first set-up,
/// unless -<prefix>sub_pc_factor_levels is given; nothing is written into the options
/// database). Call after setting the KSP's options prefix. Not collective beyond the KSP's
/// calls.
void set_default_linear_solver(KSP ksp, int dim, double rtol);

}  // namespace fracmfg::mfg
