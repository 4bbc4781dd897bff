#include "fracmfg/mfg/solver.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/interrupt.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/core/progress.hpp"
#include "fracmfg/mfg/coupling.hpp"
#include "fracmfg/mfg/hjb.hpp"
#include "mfg/forward.hpp"
#include "mfg/lane_sums.hpp"
#include "mfg/petsc_handles.hpp"
#include "mfg/solver_impl.hpp"
#include "mfg/solver_options.hpp"

namespace fracmfg::mfg {

namespace {

using detail::copy_state;
using detail::fmt;

constexpr double kNegativeTolerance = 1e-10;  // relative to max m: solver round-off
constexpr double kDivergenceFactor = 1e6;
// The changes of u and m are relative to max(RMS of the field, this): an absolute floor, so
// that a field at round-off level (u = 0 up to 1e-17 in a game whose data cancel exactly)
// gives round-off changes, not changes of order 1 between two round-off vectors.
constexpr double kChangeFloor = 1e-6;

[[noreturn]] void numerical(const std::string& message) {
  throw core::CollectiveError(message, ExitCode::numerical, 0);
}

// Switches PETSc's -*_view option lookups off for a scope (also when it is left by an
// exception).
class ViewersOff {
 public:
  explicit ViewersOff(bool on) : on_(on) {
    if (on_) FRACMFG_PETSC_CHECK(PetscOptionsPushGetViewerOff(PETSC_TRUE));
  }
  ~ViewersOff() {
    if (on_) (void)PetscOptionsPopGetViewerOff();
  }
  ViewersOff(const ViewersOff&) = delete;
  ViewersOff& operator=(const ViewersOff&) = delete;

 private:
  bool on_;
};

}  // namespace

namespace {

// "periodic", "reflecting", or the sides when they differ ("x_min exit, x_max reflecting").
std::string boundary_text(const Grid& g, const io::MfgConfig::Domain& domain) {
  bool uniform = true;
  for (int s = 0; s < 2 * g.dim; ++s) uniform = uniform && domain.side(s) == domain.boundary;
  if (uniform) return io::to_string(domain.boundary);
  static const char* const names[] = {"x_min", "x_max", "y_min", "y_max", "z_min", "z_max"};
  std::string out;
  for (int s = 0; s < 2 * g.dim; ++s) {
    out += std::string(s > 0 ? ", " : "") + names[s] + " " + io::to_string(domain.side(s));
  }
  return out;
}

}  // namespace

double Solver::Impl::theta(int k) const {
  if (static_cast<std::size_t>(k) == cold_start && !warm) return 1.0;
  if (problem().iteration.schedule == io::MfgConfig::Iteration::Schedule::fictitious_play) {
    return 1.0 / (k + 1);
  }
  return problem().iteration.damping;
}

// min m and max m over all ranks, then the round-off clean-up.
void Solver::Impl::check_density(Vec m, int iteration, int level) {
  PetscInt n = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(m, &n));
  // min m and -max m, reduced with MPI_MIN; a NaN anywhere makes both NaN.
  double local[2] = {std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::infinity()};
  {
    detail::ReadArray a(m);
    bool nan = false;
    for (PetscInt i = 0; i < n; ++i) {
      const double v = a[i];
      nan = nan || std::isnan(v);
      local[0] = std::min(local[0], v);
      local[1] = std::min(local[1], -v);
    }
    if (nan) local[0] = local[1] = -std::numeric_limits<double>::infinity();
  }
  double global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MIN, comm);
  const double lo = global[0], hi = -global[1];
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    numerical("mfg iteration " + std::to_string(iteration) +
              ": m is not finite (NaN or Inf) at time level " + std::to_string(level) +
              " (t = " + fmt(model->time(level)) + ")");
  }
  if (lo >= 0.0) return;
  // m >= 0 is the scheme's promise for the Fokker-Planck equation without a source (its
  // matrices are transposes of M-matrices, also with Levy diffusion): below round-off it is
  // a failure. A source f_m makes no such promise (an iterate's u need not match the
  // source, which may then push m below 0 where the game's solution is positive), and
  // every use of m (couplings, congestion) reads max(m, 0): such an iterate is kept as is.
  if (model->has_fp_source()) return;
  if (lo < -kNegativeTolerance * std::max(hi, 0.0)) {
    numerical("mfg iteration " + std::to_string(iteration) + ": negative density m = " + fmt(lo) +
              " at time level " + std::to_string(level) + " (t = " + fmt(model->time(level)) +
              "; max m = " + fmt(hi) + ")");
  }
  detail::WriteArray a(m);
  for (PetscInt i = 0; i < n; ++i) a[i] = std::max(a[i], 0.0);
}

void Solver::Impl::hjb_rhs(int n, Vec m_next) {
  // rhs = F(x, m^{n+1}, t_n) + f_u(t_n)
  coupling->evaluate(m_next, rhs.get(), n);
  if (const double* src = model->hjb_source(n)) {
    detail::WriteArray b(rhs.get());
    const PetscInt count = model->box().count();
    for (PetscInt k = 0; k < count; ++k) b[k] += src[k];
  }
}

// Accumulates the squared norms of (new - old) and new; updates old <- (1-t) old + t new.
void Solver::Impl::blend(Vec fresh, Vec old, double t, double& change2, double& size2, Vec diff) {
  PetscInt n = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(old, &n));
  detail::ReadArray fa(fresh);
  detail::WriteArray fb(old);
  const double* a = fa.get();
  double* b = fb.get();
  std::optional<core::VecWriteArray> fd;
  if (diff != nullptr) fd.emplace(diff);
  double* d = fd ? fd->get() : nullptr;
  const auto sums = detail::lane_sums<2>(n, [&](PetscInt i, double* acc) {
    const double change = a[i] - b[i];
    acc[0] += change * change;
    acc[1] += a[i] * a[i];
    b[i] += t * change;
    if (d != nullptr) d[i] = change;
  });
  change2 = sums[0];
  size2 = sums[1];
}

// The HJB steps need not be solved far beyond the current fixed-point change: an error
// 1e-3 times that change does not alter the iteration, and the tolerance tightens as
// the iteration converges (to 1e-12 at the end). Convergence is only declared for an
// iteration solved to 1e-3 times the outer tolerance (iterate(), and the same test in Newton's
// and the two-grid iteration), so an iteration predicted to end the run (predicts_the_end())
// is solved to that accuracy at once.
double Solver::Impl::newton_tolerance() const {
  if (fresh()) return 1e-3;
  const double loose = std::clamp(1e-3 * change_of(history.size() - 1), 1e-12, 1e-3);
  if (!predicts_the_end()) return loose;
  return std::min(loose, std::max(1e-3 * problem().iteration.tolerance, 1e-12));
}

// The Fokker-Planck solves likewise (2D Krylov; FokkerPlanckFdm keeps the mass exact and
// m >= 0 at any tolerance): 1e-4 x the last change, between 1e-12 and 1e-6; 1e-4 x the outer
// tolerance in an iteration predicted to end the run.
double Solver::Impl::fp_tolerance() const {
  if (fresh()) return 1e-6;
  const double loose = std::clamp(1e-4 * change_of(history.size() - 1), 1e-12, 1e-6);
  if (!predicts_the_end()) return loose;
  return std::min(loose, std::max(1e-4 * problem().iteration.tolerance, 1e-12));
}

// The last two changes (since the last start) predict, at their ratio, a change below the
// outer tolerance for the next iteration. Without this the iteration whose change first falls
// below the tolerance, solved to 1e-3 times the change before it, could not end the run, and
// one more iteration would only certify it: the prediction saves that iteration on the fine
// level (and on a coarse level, where its changes cross its tolerance). A wrong prediction
// costs one iteration's solves at the tighter tolerance.
bool Solver::Impl::predicts_the_end() const {
  const std::size_t k = history.size();
  if (k < cold_start + 2) return false;
  const double before = change_of(k - 2), last = change_of(k - 1);
  return last < before && last * (last / before) <= problem().iteration.tolerance;
}

// Newton's start for HJB level n, written into u: the previous iterate shifted by the change
// this sweep made one level later, U^n + (u~^{n+1} - U^{n+1}_old) (blend() left that change in
// `shift`). The change of a sweep varies slowly in time, so that start is closer than U^n or
// u~^{n+1} alone: on the 2D crowd game the fine level's iterations take markedly fewer HJB
// Newton systems from it. Undamped (t = 1: a cold start, or damping 1) the old U^{n+1} is not
// kept: the start is then u~^{n+1} from a cold start, else U^n, or u~^{n+1} where its
// residual is smaller while U moves by more than 1e-2.
void Solver::Impl::initial_guess(int k, int n, double t, Vec u) {
  const auto here = static_cast<std::size_t>(n);
  if (t < 1.0) {
    FRACMFG_PETSC_CHECK(VecWAXPY(u, 1.0, shift.get(), x.u[here].get()));
    return;
  }
  Vec pick = x.u[here].get();
  if (static_cast<std::size_t>(k) == cold_start) {
    if (!warm) pick = ut_next.get();
  } else if (!(history.back().change_u < 1e-2)) {
    const double r_state = hjb->residual_norm(ut_next.get(), rhs.get(), x.u[here].get());
    const double r_next = hjb->residual_norm(ut_next.get(), rhs.get(), ut_next.get());
    if (r_next < r_state) pick = ut_next.get();
  }
  FRACMFG_PETSC_CHECK(VecCopy(pick, u));
}

// The Krylov start of the Fokker-Planck solve for level n + 1, as initial_guess(): the
// previous iterate shifted by the change at level n, M^{n+1} + (m~^n - M^n_old), written into
// m_next and returned. Undamped, the solver's default (m~^n) from a fresh start and until the
// change of m falls below 1e-2, M^{n+1} after; nullptr where the forward method does not
// iterate.
Vec Solver::Impl::density_guess(int n, double t, Vec m_next) {
  if (!forward->uses_guess()) return nullptr;
  const auto next = static_cast<std::size_t>(n + 1);
  if (t < 1.0) {
    FRACMFG_PETSC_CHECK(VecWAXPY(m_next, 1.0, shift.get(), x.m[next].get()));
    return m_next;
  }
  if (fresh() || !(history.back().change_m < 1e-2)) return nullptr;
  return x.m[next].get();
}

void Solver::Impl::finish_record(IterationRecord& rec, double t0, long long newton0) const {
  rec.newton_iterations = hjb->newton_iterations() - newton0;
  double secs = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &secs, 1, MPI_DOUBLE, MPI_MAX, comm);
  rec.seconds = secs;
}

IterationRecord Solver::Impl::iterate() {
  if (two_grid && !automatic) {
    const ViewersOff viewers_off(skip_viewers);
    return two_grid_iterate();
  }
  if (two_grid) {
    // iteration.method auto: the fixed point takes over where the two-grid iteration fails
    // (a diverging change, a coarse solve that breaks down, a negative density) or is slow.
    std::optional<IterationRecord> rec;
    std::string why;
    try {
      const ViewersOff viewers_off(skip_viewers);
      rec = two_grid_iterate();
    } catch (const core::CollectiveError& e) {
      if (e.exit_code() != ExitCode::numerical) throw;
      why = e.what();
    }
    if (rec && !converged && two_grid_slow()) {
      why = "its change fell by less than " + fmt(kSlowRate) + " per iteration over the last " +
            std::to_string(kSlowWindow) + " iterations (smallest " + fmt(best_change) + ")";
    }
    if (rec && why.empty()) return *rec;
    fall_back_to_fixed_point(why);
    if (rec) return *rec;
  }
  if (newton) {
    const ViewersOff viewers_off(skip_viewers);
    return newton_iterate();
  }
  const int k = static_cast<int>(history.size());
  const int it = k + 1;
  const double t = theta(k);
  const double t0 = MPI_Wtime();
  const int nt = model->steps();
  const long long newton0 = hjb->newton_iterations();
  if (anderson.depth > 0) copy_state(x, *anderson.x_before);
  const ViewersOff viewers_off(skip_viewers);
  const double newton_tol = newton_tolerance();
  // Damped, each blend leaves its change for the next level's start (initial_guess(),
  // density_guess()).
  Vec shift_out = t < 1.0 ? shift.get() : nullptr;

  // Per-level squared norms (local), reduced once at the end: [change, size] per level.
  std::vector<double> norms_u(2 * static_cast<std::size_t>(levels), 0.0);
  std::vector<double> norms_m(2 * static_cast<std::size_t>(levels), 0.0);

  // 1. HJB backward.
  Vec un = ut_next.get();
  FRACMFG_PETSC_CHECK(VecCopy(model->terminal_cost(), un));
  if (model->terminal_coupling() != 0.0) {
    FRACMFG_PETSC_CHECK(VecAXPY(un, model->terminal_coupling(), x.m[nt].get()));
  }
  blend(un, x.u[nt].get(), t, norms_u[2 * nt], norms_u[2 * nt + 1], shift_out);
  for (int n = nt - 1; n >= 0; --n) {
    hjb_rhs(n, x.m[static_cast<std::size_t>(n + 1)].get());
    Vec u_new = ut.get();
    // A congestion Hamiltonian is evaluated at m^{n+1}, as the coupling.
    hjb->set_density(x.m[static_cast<std::size_t>(n + 1)].get());
    hjb->set_time_level(n);
    initial_guess(k, n, t, u_new);
    try {
      hjb->step(ut_next.get(), rhs.get(), u_new, "HJB step", newton_tol);
    } catch (const core::CollectiveError& e) {
      throw core::CollectiveError("mfg iteration " + std::to_string(it) + ", time level " +
                                      std::to_string(n) + " (t = " + fmt(model->time(n)) +
                                      "): " + e.what(),
                                  e.exit_code(), e.origin_rank());
    }
    blend(u_new, x.u[n].get(), t, norms_u[2 * n], norms_u[2 * n + 1], shift_out);
    std::swap(ut, ut_next);
  }

  // 2. Fokker-Planck forward with the updated U.
  forward->set_tolerance(fp_tolerance());
  forward->begin();
  FRACMFG_PETSC_CHECK(VecCopy(model->initial_density(), mt.get()));
  blend(mt.get(), x.m[0].get(), t, norms_m[0], norms_m[1], shift_out);
  for (int n = 0; n < nt; ++n) {
    // The HJB step's m^{n+1} (not yet blended), so that the step is that Jacobian's transpose.
    forward->set_density(x.m[static_cast<std::size_t>(n + 1)].get());
    try {
      forward->advance(n, x.u[n].get(), mt.get(), mt_next.get(),
                       density_guess(n, t, mt_next.get()));
    } catch (const core::CollectiveError& e) {
      throw core::CollectiveError("mfg iteration " + std::to_string(it) + ", time level " +
                                      std::to_string(n + 1) + " (t = " + fmt(model->time(n + 1)) +
                                      "): " + e.what(),
                                  e.exit_code(), e.origin_rank());
    }
    outflow[static_cast<std::size_t>(n + 1)] = forward->outflow();
    check_density(mt_next.get(), it, n + 1);
    blend(mt_next.get(), x.m[n + 1].get(), t, norms_m[2 * (n + 1)], norms_m[2 * (n + 1) + 1],
          shift_out);
    std::swap(mt, mt_next);
  }

  outflow_current = true;

  // Relative changes, the same on every rank.
  std::vector<double> all(norms_u);
  all.insert(all.end(), norms_m.begin(), norms_m.end());
  MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_DOUBLE, MPI_SUM, comm);
  PetscInt points = 0;
  FRACMFG_PETSC_CHECK(VecGetSize(x.u[0].get(), &points));
  const double size_floor = static_cast<double>(points) * kChangeFloor * kChangeFloor;
  auto relative = [&](std::size_t offset) {
    double change = 0.0, size = 0.0;
    for (int n = 0; n < levels; ++n) {
      change = std::max(change, all[offset + 2 * n]);
      size = std::max(size, all[offset + 2 * n + 1]);
      if (std::isnan(all[offset + 2 * n]) || std::isnan(all[offset + 2 * n + 1])) {
        return std::numeric_limits<double>::quiet_NaN();
      }
    }
    if (change == 0.0) return 0.0;
    return std::sqrt(change) / std::sqrt(std::max(size, size_floor));
  };
  IterationRecord rec;
  rec.iteration = it;
  rec.damping = t;
  rec.change_u = relative(0);
  rec.change_m = relative(2 * static_cast<std::size_t>(levels));
  for (const auto& [name, value] : {std::pair<const char*, double>{"u", rec.change_u},
                                    std::pair<const char*, double>{"m", rec.change_m}}) {
    if (!std::isfinite(value)) {
      numerical("mfg iteration " + std::to_string(it) + ": " + name +
                " is not finite (NaN or Inf)");
    }
  }
  const double change = std::max(rec.change_u, rec.change_m);
  if (change > 1.0 && change > kDivergenceFactor * best_change) {
    numerical("mfg iteration " + std::to_string(it) + ": the fixed point diverges (change of " +
              (rec.change_u >= rec.change_m ? "u" : "m") + " " + fmt(change) +
              ", smallest so far " + fmt(best_change) + ")");
  }
  best_change = std::min(best_change, change);

  // 3. Anderson mixing of the whole state.
  if (anderson.depth > 0) rec.anderson = anderson.mix(x, it);

  finish_record(rec, t0, newton0);
  rec.newton_tolerance = newton_tol;
  history.push_back(rec);
  const double tol = problem().iteration.tolerance;
  // A change below the tolerance certifies convergence only if the HJB steps were solved
  // well below it (a loose solve may stop at its start and show no change at all).
  converged =
      rec.change_u <= tol && rec.change_m <= tol && newton_tol <= std::max(1e-3 * tol, 1e-12);
  report(rec);
  if (!damping_warned && !converged) {
    if (const std::optional<DampingEstimate> e = stable_damping_estimate()) {
      damping_warned = true;
      log.warn("mfg iteration ", it, ": ", advice(e));
    }
  }
  if (adapts_damping() && !converged) adapt_the_damping(it);
  return rec;
}

void Solver::Impl::adapt_the_damping(int it) {
  // From a cold start its first change (of u from 0) is 1 by construction and says nothing
  // of the iteration: the 2D crowd game's change at 0.25 grows well above 1 before it
  // contracts, and against that first 1 its first contracting iterations looked stalled.
  const std::size_t from = cold_start + (warm ? 0 : 1);
  const double theta = problem_.iteration.damping;
  // A damping theta moves the fields theta of the way per iteration, so a window of the same
  // progress is 10 iterations at 0.5, 20 at 0.25, 40 at 0.125: the 256^2 x 100 crowd game's
  // cold start grows for longer than 10 iterations at 0.25 (stable there) before it
  // contracts.
  const auto window = static_cast<std::size_t>(std::lround(
      static_cast<double>(kStallWindow) * io::MfgConfig::Iteration::kDefaultDamping / theta));
  if (history.size() < from + 2 * window) return;
  const auto [before, last] = smallest_changes(from, window);
  if (last < kStallFall * before) return;
  if (0.5 * theta < kMinDamping) return;
  stalled_damping = std::min(stalled_damping, theta);
  problem_.iteration.damping = 0.5 * theta;
  // With grid sequencing the start is the coarse levels' again (solved again: the coarse
  // solvers are not kept), not u = 0: on the 2D crowd game the fine level takes far more
  // iterations from u = 0 than from the coarse start, whose levels cost a small part of the
  // solve (docs/performance.md, "The iteration method `auto`").
  coarse_restart_pending = coarse_levels(problem_) > 0;
  log.info("mfg iteration ", it, ": the change has not fallen below ", fmt(kStallFall), " x ",
           fmt(before), " in ", window, " iterations at damping ", fmt(theta),
           ": above this game's largest stable damping; iteration.method auto halves it to ",
           fmt(0.5 * theta), " and starts again from ",
           coarse_restart_pending ? "the coarse levels" : "u = 0, m(t) = m0");
  if (!coarse_restart_pending) restart_from_initial_state();
}

void Solver::Impl::restart_from_coarse_start() {
  best_change = std::numeric_limits<double>::infinity();
  converged = false;
  outflow_current = false;
  cold_start = history.size();
}

std::pair<double, double> Solver::Impl::smallest_changes(std::size_t from,
                                                         std::size_t window) const {
  const std::size_t k = history.size();
  double before = std::numeric_limits<double>::infinity(), last = before;
  for (std::size_t i = from; i < k; ++i) {
    double& smallest = i < k - window ? before : last;
    smallest = std::min(smallest, change_of(i));
  }
  return {before, last};
}

void Solver::Impl::restart_from_initial_state() {
  for (int n = 0; n < levels; ++n) {
    FRACMFG_PETSC_CHECK(VecSet(x.u[n].get(), 0.0));
    FRACMFG_PETSC_CHECK(VecCopy(model->initial_density(), x.m[n].get()));
  }
  best_change = std::numeric_limits<double>::infinity();
  converged = false;
  warm = false;
  outflow_current = false;
  cold_start = history.size();
}

// Progress: one line per outer iteration, at info level for the first iteration this
// process runs, the last one (converged or max_iterations) and otherwise at most one per
// FRACMFG_PROGRESS_SECONDS seconds; at debug level always. Only the logger's ranks write; no
// communication (the decision may differ between ranks).
void Solver::Impl::report(const IterationRecord& rec) {
  const int max_it = problem().iteration.max_iterations;
  const bool last = converged || rec.iteration >= max_it;
  if (progress->steps() == 0) progress->start(rec.seconds);
  const core::LogLevel level = progress->step(last, rec.seconds);
  if (!progress->enabled(level)) return;
  std::ostringstream os;
  os << "mfg iteration " << rec.iteration << ": change u " << fmt(rec.change_u) << ", m "
     << fmt(rec.change_m);
  if (two_grid) {
    os << ", coarse GMRES " << rec.krylov_iterations;
  } else {
    os << (newton ? ", step " : ", damping ") << fmt(rec.damping)
       << (rec.anderson ? " (Anderson)" : "");
    if (newton) os << ", GMRES " << rec.krylov_iterations;
  }
  os << ", Newton " << rec.newton_iterations << ", " << core::format_duration(rec.seconds)
     << "; elapsed " << core::format_duration(progress->elapsed()) << ", ";
  if (converged) {
    os << "converged";
  } else if (rec.iteration >= max_it) {
    os << "max_iterations reached";
  } else {
    const int left = iterations_left();
    if (left < 0) {
      os << "ETA unknown (not contracting)";
    } else {
      os << "ETA " << core::format_duration(progress->eta_steps(left)) << " (" << left
         << " iteration" << (left == 1 ? "" : "s")
         << (rec.iteration + left >= max_it ? " to max_iterations)" : ")");
    }
  }
  progress->write(level, os.str());
}

// Outer iterations still needed to bring max(change_u, change_m) to the tolerance, from
// the contraction rate of the last (up to 5) iterations (core::iterations_to_tolerance),
// capped by max_iterations. -1: not contracting (or too few iterations to tell).
int Solver::Impl::iterations_left() const {
  const int k = static_cast<int>(history.size());
  const int max_left = problem().iteration.max_iterations - k;
  const double tol = problem().iteration.tolerance;
  const std::optional<int> left = core::iterations_to_tolerance(changes(), tol, max_left);
  if (!left) return -1;
  // Below the tolerance but solved too loosely: one more, tighter iteration.
  if (*left == 0) return std::min(1, max_left);
  return *left;
}

std::optional<Solver::Impl::DampingEstimate> Solver::Impl::stable_damping_estimate() const {
  constexpr int kWindow = 5;
  const int k = static_cast<int>(history.size());
  if (newton || two_grid || k < kWindow + 3) return std::nullopt;
  const double theta = history.back().damping;
  double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
  for (int i = k - kWindow; i < k; ++i) {
    const IterationRecord& r = history[static_cast<std::size_t>(i)];
    const IterationRecord& p = history[static_cast<std::size_t>(i - 1)];
    if (r.anderson || r.damping != theta || p.damping != theta || !(change_of(i) < 0.1) ||
        !(change_of(i - 1) > 0.0)) {
      return std::nullopt;
    }
    const double q = change_of(i) / change_of(i - 1);
    lo = std::min(lo, q);
    hi = std::max(hi, q);
  }
  // A steady rate (the slowest mode has emerged) closer to 1 than to 1 - theta: the first
  // fine iterations after a coarse start may contract more slowly than 1 - theta for a while
  // (for many iterations on the 2D crowd game of 256^2 x 100, at a damping below its theta*),
  // so a rate just above 1 - theta is no evidence.
  const double rho = std::pow(change_of(k - 1) / change_of(k - 1 - kWindow), 1.0 / kWindow);
  const double s = 1.0 - theta;
  if (!(theta > 0.0 && theta < 1.0) || !(hi < 1.15 * lo) || !(rho > 0.5 * (1.0 + s) && rho < 1.0)) {
    return std::nullopt;
  }
  const double a_min = -(rho + s) * (rho + s) / (rho * theta * theta);
  return DampingEstimate{rho, detail::largest_stable_damping(a_min)};
}

std::string Solver::Impl::advice(const std::optional<DampingEstimate>& estimate) const {
  const int k = static_cast<int>(history.size());
  if (converged) return {};
  const double theta = problem().iteration.damping;
  const bool damped =
      !newton && !two_grid &&
      problem().iteration.schedule != io::MfgConfig::Iteration::Schedule::fictitious_play;
  const std::string guide = " (docs/user_guide.md, \"Choosing the damping\")";
  std::ostringstream os;
  if (const std::optional<DampingEstimate>& e = estimate) {
    // Two digits, rounded down, 5 % inside the estimate.
    const double suggest = std::floor(95.0 * e->largest) / 100.0;
    os << "the change falls by " << fmt(e->rate)
       << " per iteration, slower than 1 - damping = " << fmt(1.0 - history.back().damping)
       << ": the damping " << fmt(history.back().damping)
       << " is above this game's largest stable damping, which that rate puts at "
       << fmt(e->largest) << "; mfg.iteration.damping " << fmt(suggest)
       << " would contract at about " << fmt(1.0 - suggest) << " per iteration" << guide;
    return os.str();
  }
  if (k < 3) {
    os << "too few iterations to judge the contraction; raise mfg.iteration.max_iterations";
    return os.str();
  }
  const int w = std::min(10, k - 1);
  const double before = change_of(k - 1 - w), now = change_of(k - 1);
  // Contracting: at most 0.99 per iteration (a 2-cycle's changes may creep down by 0.998).
  const double rho = now > 0.0 && std::isfinite(now) ? std::pow(now / before, 1.0 / w) : 1.0;
  if (rho < 0.99) {
    const int left = core::iterations_to_tolerance(changes(), problem().iteration.tolerance,
                                                   std::numeric_limits<int>::max(), w)
                         .value_or(1);
    os << "the change fell by " << fmt(rho) << " per iteration over the last " << w
       << " iterations; about " << std::max(left, 1)
       << " more would reach the tolerance: raise mfg.iteration.max_iterations";
    if (damped && theta < 0.5 && std::abs(rho - (1.0 - theta)) < 0.05) {
      os << " (the damped fixed point contracts at 1 - damping = " << fmt(1.0 - theta)
         << "; a larger damping contracts faster, up to the game's largest stable damping" << guide
         << ")";
    }
    return os.str();
  }
  os << "the change did not fall appreciably over the last " << w << " iterations (" << fmt(before)
     << " to " << fmt(now) << ")";
  if (damped) {
    os << ": the fixed point stalls or oscillates when its damping is above the game's largest "
          "stable damping; try mfg.iteration.damping "
       << fmt(theta / 2.0) << " or mfg.iteration.anderson" << guide;
  }
  return os.str();
}

Solver::Solver(MPI_Comm comm, const Problem& game, exec::Selector* selector, core::Logger log)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.comm = comm;
  d.log = log;
  d.selector = selector;
  d.progress.emplace(log, core::progress_interval_from_environment(log));
  using Method = io::MfgConfig::Iteration::Method;
  d.automatic = game.iteration.method == Method::automatic;
  d.problem_ = game;
  // The copy holds what the deck's defaults resolve to (read downstream: the coarse start,
  // the coarse levels' defaults, a re-split's work spaces, the checkpoint).
  d.problem_.iteration.coarse_levels = coarse_levels(game);
  d.problem_.iteration.method = resolved_method(game);
  const Problem& problem = d.problem_;
  d.model = std::make_unique<Model>(comm, problem);
  d.build_operators();
  d.levels = d.model->steps() + 1;
  d.outflow.assign(static_cast<std::size_t>(d.levels), 0.0);
  DM dm = d.model->dm();
  d.x = detail::make_state(dm, d.levels);
  for (int n = 0; n < d.levels; ++n) {
    FRACMFG_PETSC_CHECK(VecSet(d.x.u[n].get(), 0.0));
    FRACMFG_PETSC_CHECK(VecCopy(d.model->initial_density(), d.x.m[n].get()));
  }
  d.skip_viewers = !detail::sweep_views_option(comm);
  d.anderson.setup(comm, log, dm, d.levels, problem.iteration.anderson);
  if (problem.iteration.method != Method::fixed_point && problem.iteration.anderson > 0) {
    throw Error(
        "mfg: Anderson mixing (iteration.anderson) belongs to the fixed point, not to "
        "iteration method " +
        std::string(io::to_string(problem.iteration.method)));
  }
  if (problem.iteration.method == Method::newton) d.build_newton();
  if (problem.iteration.method == Method::two_grid) d.build_two_grid();
  d.tunable_damping = fixed_point_settings_at_defaults(game.iteration);
  const Grid& g = d.model->grid();
  d.log.info("mfg: ", g.dim, "D grid ", g.points_text(), " (", boundary_text(g, problem.domain),
             d.model->has_obstacle() ? ", obstacle" : "", "), ", d.model->steps(),
             " time steps, Fokker-Planck ", io::to_string(problem.fokker_planck.method),
             ", coupling ", io::to_string(problem.coupling.type), ", ", d.automatic ? "auto: " : "",
             io::to_string(problem.iteration.method));
}

Solver::~Solver() = default;

void Solver::Impl::outflow_of_state() {
  forward->begin();
  for (int n = 0; n < model->steps(); ++n) {
    forward->set_density(x.m[static_cast<std::size_t>(n + 1)].get());
    forward->advance(n, x.u[n].get(), x.m[n].get(), mt_next.get(), nullptr);
    outflow[static_cast<std::size_t>(n + 1)] = forward->outflow();
  }
  outflow_current = true;
}

std::vector<double> Solver::outflow() const {
  if (!impl_->outflow_current && impl_->model->grid().has_exit()) impl_->outflow_of_state();
  std::vector<double> left(impl_->outflow.size(), 0.0);
  for (std::size_t n = 1; n < left.size(); ++n) left[n] = left[n - 1] + impl_->outflow[n];
  return left;
}

const Model& Solver::model() const {
  return *impl_->model;
}
int Solver::steps() const {
  return impl_->model->steps();
}
Vec Solver::u(int n) const {
  return impl_->x.u.at(static_cast<std::size_t>(n)).get();
}
Vec Solver::m(int n) const {
  return impl_->x.m.at(static_cast<std::size_t>(n)).get();
}
int Solver::iterations() const {
  return static_cast<int>(impl_->history.size());
}
const std::vector<IterationRecord>& Solver::history() const {
  return impl_->history;
}

bool Solver::converged() const {
  return impl_->converged;
}

IterationRecord Solver::iterate() {
  const IterationRecord rec = impl_->iterate();
  impl_->balance(rec.iteration);
  if (impl_->coarse_restart_pending) {
    impl_->coarse_restart_pending = false;
    start_coarse(true);
  }
  return rec;
}

SolveResult Solver::solve(const CheckpointOptions& checkpoint) {
  Impl& d = *impl_;
  SolveResult r;
  const double t0 = MPI_Wtime();
  if (d.history.empty() && !d.warm && coarse_levels(d.problem()) > 0) start_coarse();
  const int max_it = d.problem().iteration.max_iterations;
  while (!d.converged && iterations() < max_it) {
    const IterationRecord rec = iterate();
    const bool written =
        checkpoint.every > 0 && !checkpoint.file.empty() && rec.iteration % checkpoint.every == 0;
    if (written) write_checkpoint(checkpoint.file);
    // A stop request (core/interrupt.hpp) on any rank: checkpoint and leave, unless this
    // iteration ended the solve anyway. One allreduce of an int per outer iteration.
    if (!d.converged && iterations() < max_it && core::stop_requested(d.comm)) {
      if (!written && !checkpoint.file.empty()) write_checkpoint(checkpoint.file);
      const double secs = MPI_Wtime() - t0;
      d.log.info("mfg: stopped by a signal after iteration ", rec.iteration, " (", fmt(secs), " s)",
                 checkpoint.file.empty() ? std::string("; no checkpoint file given")
                                         : "; resume from " + checkpoint.file);
      throw core::Interrupted(rec.iteration, checkpoint.file);
    }
  }
  r.converged = d.converged;
  r.iterations = iterations();
  if (!d.history.empty()) {
    r.change_u = d.history.back().change_u;
    r.change_m = d.history.back().change_m;
  }
  r.seconds = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &r.seconds, 1, MPI_DOUBLE, MPI_MAX, d.comm);
  if (r.converged) {
    d.log.info("mfg: converged after ", r.iterations, " iterations (", fmt(r.seconds), " s)");
  } else {
    r.advice = d.advice(d.stable_damping_estimate());
    d.log.warn("mfg: not converged after ", r.iterations, " iterations (change u ", fmt(r.change_u),
               ", m ", fmt(r.change_m), "): ", r.advice);
  }
  return r;
}

}  // namespace fracmfg::mfg
