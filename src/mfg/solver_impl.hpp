#pragma once
// The private state of mfg::Solver, shared by its translation units: the fixed point
// (solver.cpp), grid sequencing (grid_sequencing.cpp), checkpoint and restart
// (solver_checkpoint.cpp) and output (solver_output.cpp); Anderson mixing is
// mfg/anderson.hpp.
#include <mpi.h>
#include <petscvec.h>

#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/progress.hpp"
#include "fracmfg/core/solve_control.hpp"
#include "fracmfg/exec/cpu_share.hpp"
#include "fracmfg/exec/rebalancer.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/mfg/coupling.hpp"
#include "fracmfg/mfg/hjb.hpp"
#include "fracmfg/mfg/model.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/anderson.hpp"
#include "mfg/forward.hpp"
#include "mfg/newton.hpp"
#include "mfg/petsc_handles.hpp"
#include "mfg/state.hpp"
#include "mfg/two_grid.hpp"

namespace fracmfg::mfg {

namespace detail {

/// v with 3 significant digits, for messages.
inline std::string fmt(double v) {
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

/// The convergence history as one array per quantity (checkpoints and results).
struct HistoryArrays {
  std::vector<double> change_u, change_m, damping, seconds, newton, anderson, newton_tolerance;
};

inline HistoryArrays arrays_of(const std::vector<IterationRecord>& h) {
  HistoryArrays a;
  for (const auto& r : h) {
    a.change_u.push_back(r.change_u);
    a.change_m.push_back(r.change_m);
    a.damping.push_back(r.damping);
    a.seconds.push_back(r.seconds);
    a.newton.push_back(static_cast<double>(r.newton_iterations));
    a.anderson.push_back(r.anderson ? 1.0 : 0.0);
    a.newton_tolerance.push_back(r.newton_tolerance);
  }
  return a;
}

}  // namespace detail

struct Solver::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  core::Logger log;
  exec::Selector* selector = nullptr;
  std::unique_ptr<Model> model;
  std::unique_ptr<HjbSolver> hjb;
  std::unique_ptr<Coupling> coupling;
  std::unique_ptr<detail::ForwardMethod> forward;
  int levels = 0;
  detail::State x;  // the current state (U, M)
  detail::VecPtr ut, ut_next, rhs, mt, mt_next;
  // The change a damped sweep made at the level it blended last (blend()'s diff): the shift
  // of the next level's start (initial_guess(), density_guess()).
  detail::VecPtr shift;
  std::vector<IterationRecord> history;
  // The mass that left through the exits in each step of the last forward sweep:
  // outflow[n] for the step to level n (outflow[0] = 0).
  std::vector<double> outflow;
  bool outflow_current = false;  // outflow is that of a sweep of the current run
  // The outflow of Fokker-Planck steps from the state's M^n with its U^n (a restored
  // state that needs no iteration). Collective.
  void outflow_of_state();
  double best_change = std::numeric_limits<double>::infinity();
  bool converged = false;
  // Each SNESSolve/KSPSolve looks up a dozen -*_view options in the database, a sizeable
  // share of a small time step; when no view or converged-reason option is set the lookups
  // are switched off during the sweeps (monitors are unaffected).
  bool skip_viewers = false;
  bool warm = false;  // start_from() set the state

  // Progress lines (report()): rate limit from FRACMFG_PROGRESS_SECONDS; the elapsed time
  // and the mean iteration time count the iterations run here (restored ones do not).
  std::optional<core::Progress> progress;

  detail::Anderson anderson;

  // Load balance of the grid (set_balance; solver_balance.cpp).
  core::BalanceOptions balance_options;
  std::unique_ptr<exec::Rebalancer> rebalancer;
  exec::SchedSample window_start;  // CPU share over the observation window
  double window_work = 0.0;        // model->work_seconds() at the window's start
  int resplits = 0;

  // iteration.method newton (solver_newton.cpp, mfg/newton.hpp); null for the fixed point.
  // (Also for iteration.method two_grid, without the linearised game and the line search's
  // trial: the evaluation's storage and tolerances.)
  std::unique_ptr<detail::NewtonWork> newton;
  // iteration.method two_grid (solver_two_grid.cpp, mfg/two_grid.hpp); null otherwise.
  std::unique_ptr<detail::CoarseCorrection> two_grid;

  // Fields replicated in natural order (gather_u, gather_m); made at the first call.
  std::unique_ptr<detail::Replicator> replicator;
  std::vector<double> gather(const std::vector<detail::VecPtr>& field, int n);

  // The game as solved: the constructor's problem with its iteration method resolved
  // (mfg::resolved_method); a fall-back of `auto` to the fixed point changes the method.
  Problem problem_;
  bool automatic = false;  // iteration.method auto: the two-grid iteration may fall back
  const Problem& problem() const { return problem_; }
  // Under iteration.method auto, the end of the two-grid iteration: the damped fixed point
  // continues from the initial state (u = 0, m(t) = m0), the iterations run so far counted,
  // with the reason in a warning. Collective.
  void fall_back_to_fixed_point(const std::string& why);
  // The method becomes the fixed point (the two-grid work space released), the state kept.
  void use_fixed_point();
  // u = 0, m(t) = m0 on every level, as a cold start (the history kept): the iterations from
  // there on are those of a fresh solve (cold_start). Not collective.
  void restart_from_initial_state();
  // The iteration (history index) whose state was the initial one: 0, or where a restart
  // from the initial state happened; that iteration is a cold start (damping 1, the first
  // iteration's HJB and Fokker-Planck tolerances and starts).
  std::size_t cold_start = 0;
  bool fresh() const { return history.size() == cold_start; }
  // Whether the two-grid iteration is slower than the fixed point it stands in for: after at
  // least 2 x kSlowWindow iterations, its smallest change over the last kSlowWindow fell by
  // less than kSlowRate per iteration against the smallest before them. The fixed point at
  // the default damping contracts at 0.5 per iteration below the game's largest stable
  // damping; at 0.7 the two-grid iteration would need more iterations from a change of 1e-2
  // to 1e-8 (39) than the fixed point needs from its start (27 at 0.5 from a change of 1).
  // On the 160-point periodic game the test catches the coarse grids too coarse to help (a
  // slow fall, or none) and lets the others run; the game with an exit, which contracts at
  // 0.5 after its first few iterations, is not caught.
  static constexpr int kSlowWindow = 5;
  static constexpr double kSlowRate = 0.7;
  bool two_grid_slow() const;

  // The HJB and Fokker-Planck solvers, the coupling and the scratch vectors on `model`
  // (construction, and again after a re-split). Collective.
  void build_operators();
  // After outer iteration `it`: the ranks' work into the balance policy every
  // balance_options.interval iterations, and a re-split when it asks for one. Collective.
  void balance(int it);
  // Moves the state (every level of U and M, the Anderson history) to the ownership ranges
  // lx (ly, lz) and builds the model and operators again on them. Collective.
  void resplit(const std::vector<PetscInt>& lx, const std::vector<PetscInt>& ly,
               const std::vector<PetscInt>& lz);

  // The fixed point (solver.cpp).
  double theta(int k) const;
  void check_density(Vec m, int iteration, int level);
  // rhs = F(x, m_next, t_n) + f_u(t_n): the right-hand side of HJB level n for the density
  // m_next at level n + 1 (the fixed point's M^{n+1}, Newton's evaluated density).
  void hjb_rhs(int n, Vec m_next);
  // old += t (fresh - old), with the squared norms of fresh - old and of fresh; fresh - old
  // (before the blend) into diff when diff is not null.
  static void blend(Vec fresh, Vec old, double t, double& change2, double& size2,
                    Vec diff = nullptr);
  // The inner tolerances of the next iteration (HJB Newton, Fokker-Planck Krylov), from the
  // last change; tight where predicts_the_end() (solver.cpp).
  double newton_tolerance() const;
  double fp_tolerance() const;
  bool predicts_the_end() const;
  void initial_guess(int k, int n, double t, Vec u);
  Vec density_guess(int n, double t, Vec m_next);
  IterationRecord iterate();
  // The end of every method's outer iteration: the HJB Newton iterations since newton0 and
  // the iteration's time since t0 (max over the ranks) into rec. Collective.
  void finish_record(IterationRecord& rec, double t0, long long newton0) const;
  // Newton's method (solver_newton.cpp): one outer iteration, and the evaluation of the
  // sweeps M(U), Psi(U) at u_in with the changes against u_in and the reference m_ref.
  IterationRecord newton_iterate();
  // The Newton work space and linearised game on `model` (construction, and again after a
  // re-split, when the cached evaluation is dropped). Collective.
  void build_newton();
  // The two-grid iteration (solver_two_grid.cpp): one outer iteration, and its work space
  // (the evaluation's storage in `newton`, the coarse game in `two_grid`). Collective.
  IterationRecord two_grid_iterate();
  void build_two_grid();
  void evaluate(int it, const std::vector<detail::VecPtr>& u_in,
                const std::vector<detail::VecPtr>& m_ref, std::vector<detail::VecPtr>& m_out,
                std::vector<detail::VecPtr>& ut_out, double& change_u, double& change_m);
  void congestion_step(int n, Vec u, Vec m, Vec m_next, Vec guess);
  std::pair<double, double> relative_changes(std::vector<double> norms_u,
                                             std::vector<double> norms_m) const;
  void report(const IterationRecord& rec);
  int iterations_left() const;
  // The damped fixed point contracts at exactly 1 - theta on every mode while theta is below
  // the game's largest stable damping theta* = 2 / (1 + sqrt(1 - a_min)) (a_min the most
  // negative eigenvalue of the linearised game; docs/performance.md, "The damped fixed
  // point's rate and its largest damping"); above it the slowest mode contracts at a rate
  // rho > 1 - theta, from which a_min = -(rho + 1 - theta)^2 / (rho theta^2). theta* from the
  // last iterations when they show that (a steady rate closer to 1 than to 1 - theta,
  // changes below 0.1, constant damping, no Anderson mixing); nullopt otherwise.
  struct DampingEstimate {
    double rate = 0.0;     // rho, the mean factor per iteration over the window
    double largest = 0.0;  // theta*
  };
  std::optional<DampingEstimate> stable_damping_estimate() const;
  // The one-line diagnosis of an unconverged solve (SolveResult::advice), given the
  // iteration's stable_damping_estimate().
  std::string advice(const std::optional<DampingEstimate>& estimate) const;
  // max(change_u, change_m) of history[i], and of every iteration, oldest first.
  double change_of(std::size_t i) const {
    return std::max(history[i].change_u, history[i].change_m);
  }
  double change_of(int i) const { return change_of(static_cast<std::size_t>(i)); }
  std::vector<double> changes() const {
    std::vector<double> c(history.size());
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = change_of(i);
    return c;
  }
  // The smallest change of iterations [from, k - window) and of the last `window` ones
  // (k = history.size() >= from + window): how far an iteration has got in its last window.
  std::pair<double, double> smallest_changes(std::size_t from, std::size_t window) const;
  bool damping_warned = false;  // the estimate above was logged (once per solver)

  // iteration.method auto on the fixed point with its settings at their defaults (damping
  // 0.5, schedule fixed, no Anderson; also after a two-grid fall-back): the damping adapts.
  // Where the iteration stalls, the smallest change of the last window not below kStallFall x
  // the smallest of those before (at one damping, so at least two windows from cold_start; a
  // window is kStallWindow iterations at 0.5 and grows as 1 / damping), the damping is halved
  // (not below kMinDamping) and the iteration starts again from the initial state (from the
  // state it wandered in, a halved damping took longer than from the start on the games
  // measured). Above the game's largest stable damping theta* the iteration does not diverge
  // as its linearisation would but wanders at changes that do not fall (the 2D crowd game at
  // 0.5, above its theta*, and 1D games with an obstacle and a stronger coupling:
  // docs/performance.md, "The iteration method `auto`"); a converging iteration falls by
  // 0.75^20 = 0.003 per window at damping 0.25, 0.875^40 = 0.005 at 0.125, well below the 0.9
  // asked. Whether the damping adapts: auto, the fixed point running, and the fixed point's
  // settings at their defaults in the deck (tunable_damping; a two-grid fall-back implies
  // them). The current damping applies from cold_start on (every change of it restarts).
  bool tunable_damping = false;
  bool adapts_damping() const {
    return automatic && tunable_damping &&
           problem_.iteration.method == io::MfgConfig::Iteration::Method::fixed_point;
  }
  // The smallest damping at which this solve (or a coarser level of its grid sequence)
  // stalled; a damping from the linearised game's spectrum stays below it.
  double stalled_damping = std::numeric_limits<double>::infinity();
  // Grid sequencing under auto (start_coarse): the damping of this level, `level` halvings
  // coarser than the fine grid, from a_min measured on the coarser levels
  // (detail::sequenced_damping), where the damping adapts; logged. Not collective.
  void damp_from_spectrum(const std::vector<std::pair<int, double>>& measured, int level,
                          double margin);
  // The state interpolated from a solved coarser game (Solver::start_from without its
  // checks and damping hand-over); sets warm. Collective.
  void interpolate_from(const Solver& coarse);
  // After a stall with grid sequencing (coarse_levels > 0): Solver::iterate() runs the coarse
  // start again (Solver::start_coarse(true)), which calls restart_from_coarse_start() (or
  // restart_from_initial_state() where the coarse start fails).
  bool coarse_restart_pending = false;
  void restart_from_coarse_start();
  static constexpr std::size_t kStallWindow = 10;
  static constexpr double kStallFall = 0.9;
  static constexpr double kMinDamping = 0.05;
  // After fixed-point iteration `it`: the adaptation above. Not collective (the history is
  // the same on every rank).
  void adapt_the_damping(int it);
};

}  // namespace fracmfg::mfg
