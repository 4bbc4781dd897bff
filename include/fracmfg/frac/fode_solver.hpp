#pragma once
// frac::FodeSolver: systems of fractional ODEs with Caputo derivatives
//
//     D^{a_i} y_i(t) = f_i(t, y(t)),   0 < a_i < 2,   i = 1..d,   0 <= t <= T,
//     y_i(0) = y0_i,  and y_i'(0) = y1_i when a_i > 1,
//
// in their Volterra form y_i(t) = T_i(t) + 1/Gamma(a_i) int_0^t (t-s)^{a_i-1} f_i(s, y(s)) ds,
// T_i(t) = y0_i (+ t y1_i when a_i > 1), on the uniform grid t_n = n h, h = T/N, or on the
// graded mesh t_n = T (n/N)^r, r = FodeProblem::grading > 1 (frac/fpde_time_mesh.hpp).
//
// Methods (weights from frac/weights.hpp; components of equal order share them):
//   abm          the fractional Adams-Bashforth-Moulton predictor-corrector of Diethelm, Ford
//                & Freed (Nonlinear Dynamics 29 (2002) 3-22, eqs. (2.7)-(2.10)): rectangle
//                product-integration predictor, product-trapezoidal corrector, applied
//                `corrector_iterations` (mu) times (P(EC)^mu E). Error (Diethelm, Ford &
//                Freed, Numer. Algorithms 36 (2004) 31-52, Thm. 3.1, and Sec. 3 for mu > 1):
//                when D^a y = f(., y(.)) is in C^2[0, T], max_n |y(t_n) - y_n| =
//                O(h^{min(2, 1 + mu a)}) (for mu = 1: O(h^2) if a >= 1, O(h^{1+a}) if a < 1).
//   trapezoidal  the implicit product-integration trapezoidal rule (Garrappa's FDE_PI2_IM;
//                R. Garrappa, Mathematics 6(2):16 (2018), Sec. 3.3): the corrector solved
//                exactly by Newton's method; O(h^2) when D^a y is in C^2[0, T].
// Solutions that are not smooth at t = 0 (e.g. D^a y = -y, y = E_a(-t^a) = 1 - t^a/Gamma(1+a)
// + ...) converge more slowly; tests/unit/fode_convergence_test.cpp states and checks the
// observed orders for that case as well.
//
// Graded mesh (grading r > 1): steps concentrate near t = 0, where such a solution behaves
// like t^a. The same two methods use the product-integration weights of the non-uniform mesh
// (rectangle and trapezoid rules on each cell [t_j, t_{j+1}] against the exact kernel; the
// trapezoid weight of f_n, c0, then changes from step to step). The FFT history needs the
// Toeplitz structure of a uniform mesh, so a graded mesh sums the history directly: O(N^2)
// time per component (and O(N) memory), history `fft` is refused and `auto` means direct.
// (A hybrid, graded start and uniform tail with the FFT history, is not implemented.) The
// implicit method on a graded mesh takes `function` and `pointwise` right-hand sides only.
// tests/unit/fode_graded_test.cpp measures the orders on D^a y = -y for both meshes.
//
// History sums (kernels/history.hpp): `direct` sums every term, O(N^2) per component;
// `fft` uses the nested block FFT convolution of Hairer, Lubich & Schlichte (1985) as in
// Garrappa's FDE12, O(N log^2 N) time and O(N) memory per component; `automatic` runs the
// nested scheme but sums a square directly whenever that is estimated cheaper (so it equals
// `direct` for small N). The FFT squares of many components go through the exec::Selector
// as kernel "history_fft" (host FFTW or CUDA cuFFT). FFT and direct histories agree to
// round-off (about 1e-13 relative; tests/unit/fode_history_test.cpp asserts 1e-11 per step).
//
// Right-hand sides (FodeRhs), either
//   - function(t, y, f): the rank's components; f may couple only components of the same
//     rank (no communication; with one rank, any coupling), optional dense Jacobian of the
//     rank's block; or
//   - linear (a PETSc Mat A, y -> A y, any coupling) and/or pointwise (g_i(t, y_i)), the
//     form of a semi-discretised PDE; f = A y + g(t, y).
// Distribution: components are spread over the ranks of comm like a PETSc Vec (the Mat's
// row layout, or PETSC_DECIDE, or a given local size); every per-component input is given
// for the rank's components. Implicit method: Newton's method per step, with the update
// solved by a dense LU of I - diag(c0) J (function form; J from `jacobian` or by finite
// differences), elementwise (pointwise only) or by PETSc KSP with I - diag(c0) (A +
// diag g'(y)) (options prefix "fode_", e.g. -fode_ksp_type cg -fode_pc_type jacobi).
//
// Failure: a solution value that is not finite or exceeds divergence_threshold in magnitude,
// a right-hand side value that is not finite (at the initial value, at a step's solution or
// at a Newton iterate: named as f<i>, not as a singular matrix), a singular Newton matrix,
// or abm growth that the equation cannot have (a component of order <= 1 with y_i f_i <= 0
// at every step so far, which keeps the exact |y_i| <= |y_i(0)|, grown past 2 |y_i(0)|: the
// method beyond its stability limit, e.g. D^0.8 y = -10 y at h = 1/8; the message suggests
// trapezoidal or a smaller step), or an abm step whose result leaves its corrector's equation
// y = T + history + c0 f(t, y) with a defect above 0.1 of the component's size in the
// second half of the steps (very small orders with few steps, where c0 = h^a/Gamma(a+2)
// nears 1/|df/dy| and the corrector's passes stop contracting: D^0.001 y = -y at 100 steps
// gave y(1) = 0.68 for 0.4999; FodeStats::corrector_defect has the largest defect) stops
// solve() on every rank with core::CollectiveError
// (exit code numerical) naming the first failed step, its time and the component (y<i>,
// 1-based global index). The ranks agree on it (an allreduce) after every step with one rank or a
// Mat, else every 32 steps, before every observer call and at the last step (a failed rank
// carries on with meaningless values until then). Newton iterations that reach
// newton_max_iterations are counted and warned about once.
//
// The family's solve() contract (core/solve_control.hpp) less the checkpoints: a fode run is
// short (seconds) and its state is its whole history, so solve() writes none and does not
// poll stop requests (a signal keeps its default action; the runner's output file is then
// never left half-written, io::H5Writer commits atomically); progress and output go through
// the observer (frac::run_fode_deck writes a progress line from it).
//
// Collectivity: the constructor and solve() are collective on comm; function, jacobian and
// pointwise callables run on every rank for its own components (not collective); the
// observer runs on every rank at the same steps.

#include <mpi.h>
#include <petscmat.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fracmfg/core/logger.hpp"

namespace fracmfg::exec {
class Selector;
}

namespace fracmfg::frac {

enum class FodeMethod { abm, trapezoidal };
enum class FodeHistory { automatic, direct, fft };

const char* to_string(FodeMethod method);    ///< "abm" | "trapezoidal"
const char* to_string(FodeHistory history);  ///< "auto" | "direct" | "fft"

/// The rank's share of `global_size` components under PETSC_DECIDE (PetscSplitOwnership).
/// Collective on comm.
PetscInt fode_local_size(MPI_Comm comm, PetscInt global_size);

/// The equation's data. Per-component vectors hold either one value (for every component) or
/// one per component of this rank, in the rank's order.
struct FodeProblem {
  /// d; PETSC_DECIDE: taken from the Mat of a linear right-hand side, or the sum of the local
  /// sizes.
  PetscInt global_size = PETSC_DECIDE;
  /// This rank's components; PETSC_DECIDE: the Mat's rows, or PetscSplitOwnership.
  PetscInt local_size = PETSC_DECIDE;
  std::vector<double> order = {0.5};  ///< a_i in (0, 2)
  double horizon = 1.0;               ///< T > 0
  std::int64_t steps = 100;           ///< N >= 1
  /// r >= 1 of t_n = T (n/N)^r; 1: uniform. r > 1 sums the history directly (O(N^2)).
  double grading = 1.0;
  std::vector<double> initial = {0.0};     ///< y(0)
  std::vector<double> initial_derivative;  ///< y'(0): required iff some order > 1
};

/// f(t, y) = function(t, y)  or  f(t, y) = A y + g(t, y)  (see the header comment).
struct FodeRhs {
  /// f[k] = f_{first+k}(t, y) for the rank's components (k < local size); y and f are the
  /// rank's components. May not be combined with linear or pointwise.
  std::function<void(double t, const double* y, double* f)> function;
  /// Optional Jacobian of `function` on the rank's block, dense row-major:
  /// jac[k * n + l] = d f_k / d y_l, n the local size. Without it the implicit method uses
  /// forward differences (n + 1 evaluations of `function` per Newton iteration).
  std::function<void(double t, const double* y, double* jac)> jacobian;
  /// Linear part y -> A y: a square Mat of global size d whose row and column layout is the
  /// solver's. The solver takes a reference (PetscObjectReference) and releases it when
  /// destroyed; the values must not change while it exists.
  Mat linear = nullptr;
  /// Pointwise part: g[k] = g_{first+k}(t, y[k]) for k < count, where first is the global
  /// index of y[0]. Called on the rank's components.
  std::function<void(double t, PetscInt first, std::size_t count, const double* y, double* g)>
      pointwise;
  /// Optional d g_i / d y_i, same calling convention; forward differences without it.
  std::function<void(double t, PetscInt first, std::size_t count, const double* y, double* dg)>
      pointwise_derivative;
};

struct FodeOptions {
  FodeMethod method = FodeMethod::abm;
  int corrector_iterations = 1;  ///< mu >= 1 (abm)
  FodeHistory history = FodeHistory::automatic;
  /// Base block of the nested history (steps summed directly near the diagonal), >= 2; a
  /// power of two keeps the FFT lengths (2^k times it) fast.
  std::int64_t block_size = 64;
  double newton_tolerance = 1.0e-12;  ///< stop when ||dy||_inf <= tol (1 + ||y||_inf)
  int newton_max_iterations = 20;
  /// |y_i| above this counts as divergence.
  double divergence_threshold = 1.0e100;
  /// abm: refuse growth the equation cannot have (see "Failure" above). The test compares
  /// |y_i| with its initial value, so systems whose components start at 0 and carry only
  /// round-off for a while (frac/multi_term_solver.hpp) turn it off.
  bool growth_check = true;
  /// Options prefix of the KSP of the implicit method with a Mat.
  std::string options_prefix = "fode_";
  /// Seconds between progress lines (step, time, ETA) at info level; 0: none.
  double progress_interval = 0.0;
};

/// What an observer sees after step n (y is the rank's components, natural order).
struct FodeStepView {
  std::int64_t step = 0;
  double time = 0.0;
  const double* y = nullptr;
  std::size_t local_size = 0;
};

/// Counters of one solve() on this rank.
struct FodeStats {
  std::int64_t steps = 0;            ///< N
  std::int64_t rhs_evaluations = 0;  ///< calls of f (each over the rank's components)
  std::int64_t jacobian_evaluations = 0;
  std::int64_t newton_iterations = 0;     ///< total over all steps (implicit method)
  std::int64_t newton_not_converged = 0;  ///< steps that reached newton_max_iterations
  std::int64_t linear_iterations = 0;     ///< KSP iterations (implicit method with a Mat)
  std::int64_t fft_squares = 0;           ///< history squares done by FFT (per group)
  std::int64_t direct_squares = 0;        ///< history squares summed directly (per group)
  double seconds = 0.0;                   ///< wall time of solve()
  double history_seconds = 0.0;           ///< of which in the history sums
  /// abm: the largest defect of the corrector's equation at a step's result, relative to
  /// the component's size (max over the second half of the steps, all components and
  /// ranks; see "Failure").
  double corrector_defect = 0.0;
};

class FodeSolver {
 public:
  using Observer = std::function<void(const FodeStepView&)>;

  /// Checks the inputs (fracmfg::Error naming the problem, on every rank alike for global
  /// inputs), computes the weights. `selector` (may be null: host kernels) and `log` are used
  /// by solve(); the selector must outlive the solver. Collective on comm.
  FodeSolver(MPI_Comm comm, FodeProblem problem, FodeRhs rhs, FodeOptions options = {},
             exec::Selector* selector = nullptr, core::Logger log = {});
  ~FodeSolver();
  FodeSolver(FodeSolver&&) noexcept;
  FodeSolver& operator=(FodeSolver&&) noexcept;
  FodeSolver(const FodeSolver&) = delete;
  FodeSolver& operator=(const FodeSolver&) = delete;

  /// Steps n = 0..N. `observer` (optional) runs after step n when n % observe_every == 0 and
  /// after step N, on every rank, inside core::collective() (an exception on one rank becomes
  /// a CollectiveError on all). May be called again (starts over). Collective.
  FodeStats solve(const Observer& observer = {}, std::int64_t observe_every = 1);

  MPI_Comm comm() const;
  PetscInt global_size() const;
  PetscInt local_size() const;
  /// Global index of the rank's first component.
  PetscInt first() const;
  /// Local sizes of every rank (rank order).
  const std::vector<PetscInt>& local_sizes() const;
  /// h = T/N (on a graded mesh the nominal step; the levels are in FodeStepView::time).
  double step_size() const;
  std::int64_t steps() const;
  double horizon() const;
  /// r of t_n = T (n/N)^r (1: uniform).
  double grading() const;
  /// Order of local component k.
  double order(std::size_t k) const;
  const FodeOptions& options() const;
  /// The base block in use (the whole range for the direct history).
  std::int64_t block_size() const;
  /// The rank's components at the last step computed (y(0) before solve()).
  const std::vector<double>& solution() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::frac
