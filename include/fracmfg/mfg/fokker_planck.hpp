#pragma once
// mfg::FokkerPlanckFdm: one implicit Euler step of the Fokker-Planck equation forward in
// time as the discrete adjoint of the linearised HJB operator (Achdou & Capuzzo-Dolcetta,
// SIAM J. Numer. Anal. 48 (2010), section 2, eq. (2.9)):
//
//   (m^{n+1} - m^n) / dt + L(u^n)^T m^{n+1} = f_m(t_{n+1}),
//
// where J(u) = I/dt + L(u) is the HJB Newton Jacobian (mfg/hjb.hpp): L(u) = -nu Lap_h plus
// the derivative of the upwind numerical Hamiltonian at u (for every Hamiltonian of
// mfg/hamiltonian.hpp; the congestion form at the density of set_density()). The matrix A =
// J(u^n)^T is assembled directly, row by row, from the Jacobian's rows on the neighbouring points
// (exchanged through the ghost layer), no MatTranspose.
//
// Properties (exact arithmetic): L(u) 1 = 0, so the column sums of A are 1/dt and
// sum_i m_i^{n+1} = sum_i m_i^n + dt sum_i f_m: the mass is conserved up to the linear
// solver's accuracy (to round-off with the default direct solver in 1D). A is the transpose
// of an M-matrix, so A^{-1} >= 0 and m^n >= 0 gives m^{n+1} >= 0 when f_m >= 0.
//
// PETSc options prefix "mfg_fp_" for the KSP. Defaults (before the options are read): as
// the HJB solver's linear solver (mfg::set_default_linear_solver) with rtol 1e-12 in 2D and 3D and
// the previous level as initial guess for iterative solvers. In 1D, when every -mfg_fp_
// option given is one of ksp_type, ksp_rtol, ksp_atol, ksp_max_it, pc_type,
// sub_pc_factor_levels and the result is still preonly + fracmfg_tridiag, step() computes
// the rows of A straight from u and solves with la::TridiagSolver::factor_solve, without the
// Mat and the KSP (direct() tells; the same solution to round-off). The KSP carries the
// model's DMDA (KSPSetDM, not active), so -mfg_fp_pc_type fracmfg_line (la/line_pc.hpp)
// works in 2D; its line solves go through the selector given to the constructor.
//
// Exits (mfg/grid.hpp): the HJB's exit ghost 2 g - u makes L(u) 1 = e >= 0 at the points
// next to an exit (zero elsewhere): the columns of A sum to 1/dt + e_k, and
// sum_i m_i^{n+1} + dt e.m^{n+1} = sum_i m_i^n + dt sum_i f_m: the mass dt e.m^{n+1} (times
// the cell volume) leaves through the exits in the step (outflow(); the step's balance is
// kept to round-off as without exits). set_time_level(n) names the level of u^n (its exit
// cost enters the linearisation). Obstacle points have the row I/dt and no neighbours, so
// m stays 0 there (Model sets m0 and f_m to 0 inside the obstacle); A is still the
// transpose of an M-matrix (m >= 0). The 1D fast path is off with exits or an obstacle.
//
// Fractional diffusion (model.diffusion_order() < 2): A = J_loc^T + nu (A_s - (-Lap_h)),
// still the transpose of the HJB Jacobian (A_s is symmetric), applied as a MATSHELL and
// solved by GMRES with the HJB solver's composite preconditioner, from the guess as in 2D;
// matrix() returns the assembled local part J_loc^T.
//
// Collectivity: everything is collective on the model's communicator.

#include <petscksp.h>
#include <petscmat.h>
#include <petscvec.h>

#include <memory>

#include "fracmfg/exec/selector.hpp"
#include "fracmfg/mfg/model.hpp"

namespace fracmfg::mfg {

class FokkerPlanckFdm {
 public:
  /// selector: where the line solves of a fracmfg_line PC run; null: the host. The model
  /// (and selector) must outlive the solver. Collective.
  explicit FokkerPlanckFdm(const Model& model, exec::Selector* selector = nullptr);
  ~FokkerPlanckFdm();
  FokkerPlanckFdm(const FokkerPlanckFdm&) = delete;
  FokkerPlanckFdm& operator=(const FokkerPlanckFdm&) = delete;

  /// The density at which a congestion Hamiltonian is linearised by the following steps
  /// (as HjbSolver::set_density: the same m as the HJB step at level n, so that A stays the
  /// transpose of that step's Jacobian). Required before a step with the congestion
  /// Hamiltonian; no effect for the others. Not collective.
  void set_density(Vec m);

  /// The time level n of u^n for the following steps (its exit cost g(t_n) enters A).
  /// Required before the first step when the grid has an exit side. Not collective.
  void set_time_level(int n);
  /// The mass that left through the exits in the last step (dt e.m^{n+1} times the cell
  /// volume; 0 without exits), the same on every rank.
  double outflow() const;

  /// m_next = A^{-1} (m / dt + source): the step from level n (density m) to n + 1 with the
  /// drift of u = u^n. source: f_m(t_{n+1}) at the owned points, or nullptr for none. m and
  /// m_next must be different Vecs. Throws core::CollectiveError (exit code numerical) on
  /// every rank when the linear solve fails. guess: the Krylov solver's start (2D; the
  /// default, nullptr, starts from m), e.g. the previous outer iteration's m^{n+1}; the
  /// stopping test is relative to the right-hand side either way.
  void step(Vec u, Vec m, const double* source, Vec m_next, Vec guess = nullptr);

  /// What step_at_own_density() did: Newton iterations, the last step's relative change of
  /// m (infinity norm), and whether it met the tolerance.
  struct DensityStep {
    int iterations = 0;
    double change = 0.0;
    bool converged = false;
  };
  /// The step whose drift is evaluated at the density it computes (the congestion
  /// Hamiltonian): J(u; m_next)^T m_next = m / dt + source, by Newton's method in m_next
  /// from guess (nullptr: m). Its Jacobian is J(u; c + c'(m_next) m_next)^T (the drift's
  /// coefficient replaced by d(m c(m))/dm, HamiltonianAtDensity::set_flux_derivative); each
  /// step is the longest of 1, 1/2, 1/4, ... that keeps m_next >= 0 and lowers the
  /// residual's 2-norm (Armijo). Stops when a step changes m_next by at most tol relative to
  /// its largest value, when the change settles below 1e-9 (the Krylov solves' accuracy, 2D),
  /// after max_iterations, or when no step lowers the residual (converged false). m_next
  /// holds the last iterate, scaled onto the mass balance as by step(); outflow() is its
  /// mass leaving. For the other Hamiltonians the first Newton step is step()'s solve.
  /// Collective.
  DensityStep step_at_own_density(Vec u, Vec m, const double* source, Vec m_next, Vec guess,
                                  double tol, int max_iterations);

  /// The Krylov solver's relative tolerance for the following steps (default 1e-12; values
  /// below it count as 1e-12). Ignored on the 1D direct path and when the options give
  /// -mfg_fp_ksp_rtol. Whatever the tolerance, step() scales m_next onto the exact discrete
  /// mass balance sum(m_next) = sum(m) + dt sum(f_m) (mass conserved to round-off), and a
  /// step solved to a tolerance loosened here whose m_next has a negative entry is finished
  /// to 1e-12 (with a given -mfg_fp_ksp_rtol the solver's density check reports it).
  void set_relative_tolerance(double rtol);

  /// Assembles A = J(u)^T and returns it (valid until the next call or step).
  Mat matrix(Vec u);
  KSP ksp() const;
  /// True when step() uses the 1D fast path instead of the KSP (see above).
  bool direct() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::mfg
