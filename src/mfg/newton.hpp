#pragma once
// Newton's method on the coupled discrete mean field game (iteration.method newton), after
// Achdou & Perez, "Iterative strategies for solving linearized discrete mean field games
// systems", Netw. Heterog. Media 7 (2012) 197-217, section 3: the linearised system is
// reduced to the value function and solved by GMRES preconditioned by the backward and forward
// sweeps.
//
// The discrete game (mfg/hjb.hpp, mfg/fokker_planck.hpp), J(U) = I/dt + L(U):
//   HJB  (U^n - U^{n+1})/dt - nu Lap U^n + H_h(U^n) = F(M^{n+1}) + f_u,  U^N = G + g M^N,
//   FP   J(U^n)^T M^{n+1} = M^n / dt + f_m,  M^0 = m0.
// For a value function U (levels 0..N) let M(U) be the Fokker-Planck solution with the
// drift of U (the forward sweep) and Psi(U) the HJB solution for the density M(U) (the
// nonlinear backward sweep); the game is U = Psi(U). Newton's method on R(U) = U - Psi(U):
//
//   (I - K) dU = Psi(U) - U,   K = dPsi/dU = A_u^{-1} B A_m^{-1} C,
//
// the Schur complement of the linearised forward-backward system preconditioned by the
// backward sweep (Achdou & Perez, section 3): a product K v is one linear forward sweep
//   dm^0 = 0,  J(U^n)^T dm^{n+1} = dm^n/dt - (dJ(U^n)[v^n])^T M^{n+1}   (n = 0..N-1)
// and one linear backward sweep
//   du^N = g dm^N,  J(U~^n) du^n = du^{n+1}/dt + F'(M^{n+1}) dm^{n+1}   (n = N-1..0),
// (F' of a nonlocal coupling is its convolution, F'(M) v = strength K * v: one gathered
// convolution per level and product, on the host),
// U~ = Psi(U), with K v = du. dJ(U)[v] is the derivative of J at U in the direction v (the
// second derivative of the upwind Hamiltonian; its transpose applied to the density is the
// symmetric Hessian of sum_k M_k H_h,k(U)); without exits dm has zero mass per level
// (L(U) 1 = 0 for every U). The unknown is U, not M: F'(M) = 1/M of the log coupling is applied to
// dm, which is small where M is, while the reduction in M would divide by the iterate's M and leave
// GMRES a near-singular operator where the start density's tails are tiny. Where the fixed point
// contracts fast K is small and GMRES needs few products; no damping is needed.
//
// The linear solves of a sweep: 1D (s = 2), the exact distributed tridiagonal solve
// (la::TridiagSolver); 2D and 3D, a KSP with options prefix "mfg_newton_sweep_" (default
// GMRES + block Jacobi / ILU(3), rtol 1e-8) on the assembled J_n or J_n^T. GMRES on K: a KSP with
// prefix "mfg_newton_" on a MATSHELL (default GMRES(20), no preconditioner beyond the
// sweeps, at most 200 iterations) over the N + 1 levels of U, so every
// -mfg_newton_ksp_* option applies (-mfg_newton_ksp_monitor).
//
// Memory: the Krylov basis holds up to restart + 4 vectors of N + 1 levels (GMRES allocates
// them as it needs them), the forward sweep's dm one more.
//
// Exits and obstacles: J(U^n) is the HJB step's Jacobian with level n's exit cost (the
// ghost 2 g - u folds -1 into the diagonal) and the obstacle points' rows I/dt; the Hessian
// product differentiates the same folded rows (an exit ghost moves by -du, an obstacle row
// not at all). The Fokker-Planck sweep's outflow is in M(U); K needs no more.
//
// Fractional diffusion (diffusion_order s < 2): the sweeps' operators are the local rows
// plus the nonlocal rest of nu A_s (mfg/fractional_diffusion.hpp: a MATSHELL with FFT
// products; symmetric, so the same shell over J^T's rows is J^T), solved by the KSP above
// with the HJB solver's fractional preconditioner (the local solve, then the circulant) in
// 1D as in 2D; nu A_s is linear, so the Hessian product is the local one.
//
// Congestion, H = c(x, m) |p|^2 / 2 with c = 1 / (c(x) (epsilon + m)^alpha) at m = M^{n+1}
// (as the coupling): the Fokker-Planck step's matrix depends on the density it computes,
// J(U^n; M^{n+1})^T M^{n+1} = M^n / dt, so M(U) solves each step in M^{n+1} (the solver's
// congestion_step: Newton's method in M^{n+1}, FokkerPlanckFdm::step_at_own_density, to the
// Fokker-Planck tolerance), and the products carry the density's derivatives: the forward
// sweep's matrix is J^T with the coefficient c + c'(M) M (the step differentiated in
// M^{n+1} too), and the backward sweep's right-hand side gains -c'(M^{n+1}) H_1(D U~^n)
// dm^{n+1} (H_1: the Hamiltonian with coefficient 1). Any alpha; above 1 the coefficient
// c + c'(M) M is negative where M > epsilon / (alpha - 1).
//
// Supports the finite-difference Fokker-Planck step, the quadratic, power and congestion
// Hamiltonians, every coupling, diffusion of any order in (1, 2], in 1D, 2D and
// 3D, with any sides (periodic, reflecting, exits) and obstacles (as far as the game itself
// allows them); the deck reader refuses the rest (io/deck_schema_mfg.cpp), the constructor
// throws Error for a Problem built by hand.
//
// Collectivity: everything is collective on the model's communicator.
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "fracmfg/mfg/model.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/petsc_handles.hpp"

namespace fracmfg::mfg::detail {

class LinearizedGame {
 public:
  /// Throws Error when the problem is outside what is supported (see above). Collective.
  explicit LinearizedGame(const Model& model);
  ~LinearizedGame();
  LinearizedGame(const LinearizedGame&) = delete;
  LinearizedGame& operator=(const LinearizedGame&) = delete;

  /// The point of the linearisation: u = U, ut = Psi(U), m = M(U) (levels 0..N each). The
  /// vectors must stay unchanged until solve() returns. Not collective.
  void linearise(const std::vector<VecPtr>* u, const std::vector<VecPtr>* ut,
                 const std::vector<VecPtr>* m);
  /// Solves (I - K) du = ut - u to the relative tolerance rtol (levels 0..N of du) and
  /// returns the GMRES iterations. GMRES stopped by its iteration limit still gives du (a
  /// direction for the line search). Throws core::CollectiveError (exit code numerical) when
  /// GMRES breaks down or a sweep's linear solve fails. Collective.
  int solve(std::vector<VecPtr>& du, double rtol);

  /// y = (I - K) x for x, y of N + 1 levels (a local box each; for tests). Collective.
  void apply(const double* x, double* y);

  /// 2D and 3D: the sweeps' relative tolerance (unless -mfg_newton_sweep_ksp_rtol is given)
  /// and ILU fill (unless -mfg_newton_sweep_sub_pc_factor_levels is given) instead of 1e-8
  /// and ILU(3), for an estimate of K's spectrum that needs a few digits (the power iteration
  /// of grid sequencing under auto). Before the first apply(). Not collective.
  void set_sweep_accuracy(double rtol, int factor_levels);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The storage of the outer Newton iteration (mfg::Solver): the evaluation of the sweeps at
/// the current U, cached from the line search of the previous iteration, and the trial point
/// of the line search.
struct NewtonWork {
  std::unique_ptr<LinearizedGame> game;
  std::vector<VecPtr> m_eval, u_eval;              // M(U), Psi(U) at the current U
  std::vector<VecPtr> u_trial, m_trial, ut_trial;  // the trial U, M(U), Psi(U)
  std::vector<VecPtr> du;
  long long congestion_newton = 0;  // congestion: the Fokker-Planck steps' Newton iterations
  bool inexact = false;             // congestion: a step of the last evaluation stopped early
  int inexact_run = 0;  // congestion: consecutive outer iterations with inexact evaluations
  bool cached = false;  // m_eval, u_eval belong to the current state's U
  double cached_change_u = 0.0, cached_change_m = 0.0, cached_residual = 0.0;
  double residual = 0.0;  // ||U - Psi(U)||_2 of the last evaluation (the line search's merit)
  // The HJB and Fokker-Planck tolerances of the next evaluation, and the HJB tolerance the
  // current evaluation was solved to (the convergence test needs 1e-3 x the outer one).
  double tolerance = 1e-3, fp_tolerance = 1e-6, evaluation_tolerance = 1e-3;
};

/// Copies of the solver's U^n and M^n (n = 0..N) in u and m (replaced), for
/// LinearizedGame::linearise(&u, &u, &m) at a solution of the game (U = Psi(U), M = M(U)):
/// the linearised game's spectrum in perf/bench_mfg_spectrum and the tests. Collective.
void copy_solution(const Solver& solver, std::vector<VecPtr>& u, std::vector<VecPtr>& m);

/// The power iteration on the linearised game K (y = x - (I - K) x through
/// LinearizedGame::apply) for its eigenvalue of largest modulus: the most negative one,
/// a_min, on the crowd games, which sets the damped fixed point's largest stable damping
/// theta* = 2 / (1 + sqrt(1 - a_min)) (docs/performance.md, "The damped fixed point's rate
/// and its largest damping"). The start's entries are a hash of the point's index in natural
/// order over the levels (pseudo-random in [-1, 1): every mode present), so the iteration is
/// the same on any split of the grid; the norms are global.
struct PowerStep {
  int step = 0;
  double norm = 0.0;      ///< |K x| for the current unit vector x: |lambda| as it converges
  double rayleigh = 0.0;  ///< x . K x: lambda (with its sign) as it converges
};
/// `steps` steps on `game` (linearised on `model`); `monitor` after each step when given.
/// Returns the last step. Collective.
PowerStep power_iteration(LinearizedGame& game, const Model& model, int steps,
                          const std::function<void(const PowerStep&)>& monitor = {});

/// The damped fixed point's largest stable damping theta* = 2 / (1 + sqrt(1 - a_min)) for a
/// linearised game with a real spectrum in [a_min, 0] (a_min <= 0).
double largest_stable_damping(double a_min);

/// Under iteration.method auto with grid sequencing: the damping for the grid `level`
/// halvings coarser than the fine one (0: the fine grid), from a_min measured at solved
/// coarser levels (`measured`: (level, a_min) pairs, coarsest first, at least one).
/// a_min falls by about the same amount per halving of h and dt (the 2D crowd game's grids:
/// docs/performance.md, "The damped fixed point's rate and its largest damping"), so it is
/// extrapolated linearly in the level from the last two measurements (held at the last one
/// where it would rise, or with a single measurement), and the damping is `margin` x theta*
/// of the extrapolation (-mfg_auto_damping_margin, default 0.9), at most the default damping
/// 0.5 and `margin` x `stalled` (the smallest damping that stalled on a coarser level;
/// infinity when none), rounded down to 3 decimals (the same on any rank count), at least
/// `floor`.
struct SequencedDamping {
  double a_min = 0.0;    ///< the extrapolated (or held) a_min of the level
  double damping = 0.0;  ///< the damping for it
};
SequencedDamping sequenced_damping(const std::vector<std::pair<int, double>>& measured, int level,
                                   double margin, double stalled, double floor);

}  // namespace fracmfg::mfg::detail
