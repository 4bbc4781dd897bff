#include "fracmfg/mfg/solver.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
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
#include "fracmfg/io/checkpoint.hpp"
#include "fracmfg/mfg/coupling.hpp"
#include "fracmfg/mfg/hjb.hpp"
#include "la/dense_lu.hpp"
#include "mfg/forward.hpp"
#include "mfg/lane_sums.hpp"
#include "mfg/petsc_handles.hpp"
#include "mfg/solver_options.hpp"

namespace fracmfg::mfg {

namespace {

using detail::VecPtr;

constexpr double kNegativeTolerance = 1e-10;  // relative to max m: solver round-off
constexpr double kDivergenceFactor = 1e6;
// The changes of u and m are relative to max(RMS of the field, this): an absolute floor, so
// that a field at round-off level (u = 0 up to 1e-17 in a game whose data cancel exactly)
// gives round-off changes, not changes of order 1 between two round-off vectors.
constexpr double kChangeFloor = 1e-6;

std::string level_name(const char* field, int n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s/%06d", field, n);
  return buf;
}

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

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

// All time levels of U and M.
struct State {
  std::vector<VecPtr> u, m;
};

State make_state(DM dm, int levels) {
  State s;
  for (int n = 0; n < levels; ++n) {
    s.u.push_back(detail::global_vec(dm));
    s.m.push_back(detail::global_vec(dm));
  }
  return s;
}

void copy_state(const State& from, State& to) {
  for (std::size_t n = 0; n < from.u.size(); ++n) {
    FRACMFG_PETSC_CHECK(VecCopy(from.u[n].get(), to.u[n].get()));
    FRACMFG_PETSC_CHECK(VecCopy(from.m[n].get(), to.m[n].get()));
  }
}

// out = a - b, level by level.
void difference(const State& a, const State& b, State& out) {
  for (std::size_t n = 0; n < a.u.size(); ++n) {
    FRACMFG_PETSC_CHECK(VecWAXPY(out.u[n].get(), -1.0, b.u[n].get(), a.u[n].get()));
    FRACMFG_PETSC_CHECK(VecWAXPY(out.m[n].get(), -1.0, b.m[n].get(), a.m[n].get()));
  }
}

// Local (this rank's) dot product of two Vecs.
double local_dot(Vec a, Vec b) {
  detail::ReadArray x(a), y(b);
  PetscInt n = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(a, &n));
  double s = 0.0;
  for (PetscInt i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}

// Solves the small symmetric system (G + lambda I) x = b (LU with partial pivoting, LAPACK);
// false when it is singular or the solution is not finite.
bool solve_small(std::vector<double> g, std::vector<double> b, std::size_t n,
                 std::vector<double>& x) {
  double trace = 0.0;
  for (std::size_t i = 0; i < n; ++i) trace += g[i * n + i];
  for (std::size_t i = 0; i < n; ++i) g[i * n + i] += 1e-14 * trace;
  if (la::dense_lu_solve(n, g.data(), b.data()) >= 0) return false;
  x = std::move(b);
  return std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); });
}

}  // namespace

struct Solver::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  core::Logger log;
  exec::Selector* selector = nullptr;
  std::unique_ptr<Model> model;
  std::unique_ptr<HjbSolver> hjb;
  std::unique_ptr<Coupling> coupling;
  std::unique_ptr<detail::ForwardMethod> forward;
  int levels = 0;
  State x;  // the current state (U, M)
  VecPtr ut, ut_next, rhs, mt, mt_next;
  std::vector<IterationRecord> history;
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

  // Anderson: x_k before the plain iteration, f_{k-1} = g_{k-1} - x_{k-1}, g_{k-1}, and the
  // differences of the last `depth` iterations (oldest first).
  int depth = 0;
  bool have_prev = false;
  std::unique_ptr<State> x_before, f_prev, g_prev, f_cur;
  std::deque<State> d_f, d_g;
  std::vector<State> spare;

  const io::MfgConfig& cfg() const { return model->config(); }

  State take_state() {
    if (!spare.empty()) {
      State s = std::move(spare.back());
      spare.pop_back();
      return s;
    }
    return make_state(model->dm(), levels);
  }

  double theta(int k) const {
    if (k == 0 && !warm) return 1.0;
    if (cfg().iteration.schedule == io::MfgConfig::Iteration::Schedule::fictitious_play) {
      return 1.0 / (k + 1);
    }
    return cfg().iteration.damping;
  }

  // min m and max m over all ranks, then the round-off clean-up.
  void check_density(Vec m, int iteration, int level) {
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
    if (lo < -kNegativeTolerance * std::max(hi, 0.0)) {
      numerical("mfg iteration " + std::to_string(iteration) + ": negative density m = " + fmt(lo) +
                " at time level " + std::to_string(level) + " (t = " + fmt(model->time(level)) +
                "; max m = " + fmt(hi) + ")");
    }
    detail::WriteArray a(m);
    for (PetscInt i = 0; i < n; ++i) a[i] = std::max(a[i], 0.0);
  }

  void hjb_rhs(int n) {
    // rhs = F(x, M^{n+1}) + f_u(t_n)
    coupling->evaluate(x.m[static_cast<std::size_t>(n + 1)].get(), rhs.get());
    if (const double* src = model->hjb_source(n)) {
      detail::WriteArray b(rhs.get());
      const PetscInt count = model->box().count();
      for (PetscInt k = 0; k < count; ++k) b[k] += src[k];
    }
  }

  // Accumulates the squared norms of (new - old) and new; updates old <- (1-t) old + t new.
  static void blend(Vec fresh, Vec old, double t, double& change2, double& size2) {
    PetscInt n = 0;
    FRACMFG_PETSC_CHECK(VecGetLocalSize(old, &n));
    detail::ReadArray fa(fresh);
    detail::WriteArray fb(old);
    const double* a = fa.get();
    double* b = fb.get();
    const auto sums = detail::lane_sums<2>(n, [&](PetscInt i, double* acc) {
      const double diff = a[i] - b[i];
      acc[0] += diff * diff;
      acc[1] += a[i] * a[i];
      b[i] += t * diff;
    });
    change2 = sums[0];
    size2 = sums[1];
  }

  // The HJB steps need not be solved far beyond the current fixed-point change: an error
  // 1e-3 times that change does not alter the iteration, and the tolerance tightens as
  // the iteration converges (to 1e-12 at the end). Convergence is only declared for an
  // iteration solved to 1e-3 times the outer tolerance (see iterate()).
  double newton_tolerance() const {
    if (history.empty()) return 1e-3;
    const IterationRecord& last = history.back();
    const double change = std::max(last.change_u, last.change_m);
    return std::clamp(1e-3 * change, 1e-12, 1e-3);
  }

  // The Fokker-Planck solves likewise (2D Krylov; FokkerPlanckFdm keeps the mass exact and
  // m >= 0 at any tolerance): 1e-4 x the last change, between 1e-12 and 1e-6.
  double fp_tolerance() const {
    if (history.empty()) return 1e-6;
    const IterationRecord& last = history.back();
    return std::clamp(1e-4 * std::max(last.change_u, last.change_m), 1e-12, 1e-6);
  }

  // Newton's start for HJB level n: the current U^n, or, while the fixed point is far from
  // converged, u~^{n+1} (just computed) when its residual is smaller.
  Vec initial_guess(int k, int n) {
    if (k == 0) return warm ? x.u[n].get() : ut_next.get();
    if (history.back().change_u < 1e-2) return x.u[n].get();
    const double r_state = hjb->residual_norm(ut_next.get(), rhs.get(), x.u[n].get());
    const double r_next = hjb->residual_norm(ut_next.get(), rhs.get(), ut_next.get());
    return r_next < r_state ? ut_next.get() : x.u[n].get();
  }

  // The Krylov start of the Fokker-Planck solve for level n: M^n, the previous iteration's
  // density, once the iteration has settled (a change of m below 1e-2; before that the
  // solver's default, m~^{n-1}, is the better start).
  Vec density_guess(int n) {
    if (history.empty() || !(history.back().change_m < 1e-2)) return nullptr;
    return x.m[static_cast<std::size_t>(n)].get();
  }

  IterationRecord iterate() {
    const int k = static_cast<int>(history.size());
    const int it = k + 1;
    const double t = theta(k);
    const double t0 = MPI_Wtime();
    const int nt = model->steps();
    const long long newton0 = hjb->newton_iterations();
    if (depth > 0) copy_state(x, *x_before);
    const ViewersOff viewers_off(skip_viewers);
    const double newton_tol = newton_tolerance();

    // Per-level squared norms (local), reduced once at the end: [change, size] per level.
    std::vector<double> norms_u(2 * static_cast<std::size_t>(levels), 0.0);
    std::vector<double> norms_m(2 * static_cast<std::size_t>(levels), 0.0);

    // 1. HJB backward.
    Vec un = ut_next.get();
    FRACMFG_PETSC_CHECK(VecCopy(model->terminal_cost(), un));
    if (model->terminal_coupling() != 0.0) {
      FRACMFG_PETSC_CHECK(VecAXPY(un, model->terminal_coupling(), x.m[nt].get()));
    }
    blend(un, x.u[nt].get(), t, norms_u[2 * nt], norms_u[2 * nt + 1]);
    for (int n = nt - 1; n >= 0; --n) {
      hjb_rhs(n);
      Vec u_new = ut.get();
      FRACMFG_PETSC_CHECK(VecCopy(initial_guess(k, n), u_new));
      try {
        hjb->step(ut_next.get(), rhs.get(), u_new, "HJB step", newton_tol);
      } catch (const core::CollectiveError& e) {
        throw core::CollectiveError("mfg iteration " + std::to_string(it) + ", time level " +
                                        std::to_string(n) + " (t = " + fmt(model->time(n)) +
                                        "): " + e.what(),
                                    e.exit_code(), e.origin_rank());
      }
      blend(u_new, x.u[n].get(), t, norms_u[2 * n], norms_u[2 * n + 1]);
      std::swap(ut, ut_next);
    }

    // 2. Fokker-Planck forward with the updated U.
    forward->set_tolerance(fp_tolerance());
    forward->begin();
    FRACMFG_PETSC_CHECK(VecCopy(model->initial_density(), mt.get()));
    blend(mt.get(), x.m[0].get(), t, norms_m[0], norms_m[1]);
    for (int n = 0; n < nt; ++n) {
      try {
        forward->advance(n, x.u[n].get(), mt.get(), mt_next.get(), density_guess(n + 1));
      } catch (const core::CollectiveError& e) {
        throw core::CollectiveError("mfg iteration " + std::to_string(it) + ", time level " +
                                        std::to_string(n + 1) + " (t = " + fmt(model->time(n + 1)) +
                                        "): " + e.what(),
                                    e.exit_code(), e.origin_rank());
      }
      check_density(mt_next.get(), it, n + 1);
      blend(mt_next.get(), x.m[n + 1].get(), t, norms_m[2 * (n + 1)], norms_m[2 * (n + 1) + 1]);
      std::swap(mt, mt_next);
    }

    // Relative changes, the same on every rank.
    std::vector<double> all(norms_u);
    all.insert(all.end(), norms_m.begin(), norms_m.end());
    MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_DOUBLE, MPI_SUM,
                  comm);
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
    if (depth > 0) rec.anderson = anderson(it);

    rec.newton_iterations = hjb->newton_iterations() - newton0;
    double secs = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &secs, 1, MPI_DOUBLE, MPI_MAX, comm);
    rec.seconds = secs;
    rec.newton_tolerance = newton_tol;
    history.push_back(rec);
    const double tol = cfg().iteration.tolerance;
    // A change below the tolerance certifies convergence only if the HJB steps were solved
    // well below it (a loose solve may stop at its start and show no change at all).
    converged =
        rec.change_u <= tol && rec.change_m <= tol && newton_tol <= std::max(1e-3 * tol, 1e-12);
    report(rec);
    return rec;
  }

  // Progress: one line per outer iteration, at info level for the first iteration this
  // process runs, the last one (converged or max_iterations) and otherwise at most one per
  // FRACMFG_PROGRESS_SECONDS seconds; at debug level always. Only the logger's ranks write; no
  // communication (the decision may differ between ranks).
  void report(const IterationRecord& rec) {
    const int max_it = cfg().iteration.max_iterations;
    const bool last = converged || rec.iteration >= max_it;
    if (progress->steps() == 0) progress->start(rec.seconds);
    const core::LogLevel level = progress->step(last, rec.seconds);
    if (!progress->enabled(level)) return;
    std::ostringstream os;
    os << "mfg iteration " << rec.iteration << ": change u " << fmt(rec.change_u) << ", m "
       << fmt(rec.change_m) << ", damping " << fmt(rec.damping)
       << (rec.anderson ? " (Anderson)" : "") << ", Newton " << rec.newton_iterations << ", "
       << core::format_duration(rec.seconds) << "; elapsed "
       << core::format_duration(progress->elapsed()) << ", ";
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
  int iterations_left() const {
    const int k = static_cast<int>(history.size());
    const int max_left = cfg().iteration.max_iterations - k;
    const double tol = cfg().iteration.tolerance;
    std::vector<double> changes;
    changes.reserve(history.size());
    for (const IterationRecord& r : history) changes.push_back(std::max(r.change_u, r.change_m));
    const std::optional<int> left = core::iterations_to_tolerance(changes, tol, max_left);
    if (!left) return -1;
    // Below the tolerance but solved too loosely: one more, tighter iteration.
    if (*left == 0) return std::min(1, max_left);
    return *left;
  }

  // Type-II Anderson mixing on x = (U, M): x currently holds g_k, x_before holds x_k.
  bool anderson(int it) {
    difference(x, *x_before, *f_cur);  // f_k
    if (have_prev) {
      State df =
          d_f.size() == static_cast<std::size_t>(depth) ? std::move(d_f.front()) : take_state();
      State dg =
          d_g.size() == static_cast<std::size_t>(depth) ? std::move(d_g.front()) : take_state();
      if (d_f.size() == static_cast<std::size_t>(depth)) {
        d_f.pop_front();
        d_g.pop_front();
      }
      difference(*f_cur, *f_prev, df);
      difference(x, *g_prev, dg);
      d_f.push_back(std::move(df));
      d_g.push_back(std::move(dg));
    }
    std::swap(f_prev, f_cur);
    copy_state(x, *g_prev);
    have_prev = true;
    const std::size_t p = d_f.size();
    if (p == 0) return false;

    // Weighted Gram matrix of the residual differences and their products with f_k.
    std::vector<double> local(p * p + p + 2, 0.0);
    for (int n = 0; n < levels; ++n) {
      local[p * p + p] += local_dot(x.u[n].get(), x.u[n].get());
      local[p * p + p + 1] += local_dot(x.m[n].get(), x.m[n].get());
    }
    MPI_Allreduce(MPI_IN_PLACE, local.data() + p * p + p, 2, MPI_DOUBLE, MPI_SUM, comm);
    const double wu = local[p * p + p] > 0.0 ? 1.0 / local[p * p + p] : 1.0;
    const double wm = local[p * p + p + 1] > 0.0 ? 1.0 / local[p * p + p + 1] : 1.0;
    std::vector<double> gram(p * p + p, 0.0);
    for (int n = 0; n < levels; ++n) {
      for (std::size_t i = 0; i < p; ++i) {
        for (std::size_t j = 0; j <= i; ++j) {
          gram[i * p + j] += wu * local_dot(d_f[i].u[n].get(), d_f[j].u[n].get()) +
                             wm * local_dot(d_f[i].m[n].get(), d_f[j].m[n].get());
        }
        gram[p * p + i] += wu * local_dot(d_f[i].u[n].get(), f_prev->u[n].get()) +
                           wm * local_dot(d_f[i].m[n].get(), f_prev->m[n].get());
      }
    }
    MPI_Allreduce(MPI_IN_PLACE, gram.data(), static_cast<int>(gram.size()), MPI_DOUBLE, MPI_SUM,
                  comm);
    for (std::size_t i = 0; i < p; ++i) {
      for (std::size_t j = 0; j < i; ++j) gram[j * p + i] = gram[i * p + j];
    }
    std::vector<double> gamma;
    const std::vector<double> b(gram.begin() + static_cast<std::ptrdiff_t>(p * p), gram.end());
    gram.resize(p * p);
    if (!solve_small(gram, b, p, gamma)) {
      log.debug("mfg iteration ", it, ": Anderson system singular, history cleared");
      clear_history();
      return false;
    }
    // x_{k+1} = g_k - sum_j gamma_j dG_j
    for (int n = 0; n < levels; ++n) {
      for (std::size_t j = 0; j < p; ++j) {
        FRACMFG_PETSC_CHECK(VecAXPY(x.u[n].get(), -gamma[j], d_g[j].u[n].get()));
        FRACMFG_PETSC_CHECK(VecAXPY(x.m[n].get(), -gamma[j], d_g[j].m[n].get()));
      }
    }
    // A mixed density must stay >= 0; otherwise keep the plain step.
    double lo = std::numeric_limits<double>::infinity();
    for (int n = 0; n < levels; ++n) {
      PetscReal v = 0.0;
      FRACMFG_PETSC_CHECK(VecMin(x.m[n].get(), nullptr, &v));
      lo = std::min(lo, static_cast<double>(v));
    }
    if (!(lo >= 0.0)) {
      log.debug("mfg iteration ", it, ": Anderson mix has m < 0, plain step kept");
      copy_state(*g_prev, x);
      clear_history();
      return false;
    }
    return true;
  }

  void clear_history() {
    while (!d_f.empty()) {
      spare.push_back(std::move(d_f.back()));
      d_f.pop_back();
    }
    while (!d_g.empty()) {
      spare.push_back(std::move(d_g.back()));
      d_g.pop_back();
    }
  }
};

Solver::Solver(MPI_Comm comm, const io::MfgConfig& config, exec::Selector* selector,
               core::Logger log)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.comm = comm;
  d.log = log;
  d.selector = selector;
  d.progress.emplace(log, core::progress_interval_from_environment(log));
  d.model = std::make_unique<Model>(comm, config);
  d.hjb = std::make_unique<HjbSolver>(*d.model);
  d.coupling = std::make_unique<Coupling>(*d.model, selector);
  d.forward = detail::make_forward_method(*d.model, selector, log);
  d.levels = d.model->steps() + 1;
  DM dm = d.model->dm();
  d.x = make_state(dm, d.levels);
  for (int n = 0; n < d.levels; ++n) {
    FRACMFG_PETSC_CHECK(VecSet(d.x.u[n].get(), 0.0));
    FRACMFG_PETSC_CHECK(VecCopy(d.model->initial_density(), d.x.m[n].get()));
  }
  d.ut = detail::global_vec(dm);
  d.ut_next = detail::global_vec(dm);
  d.rhs = detail::global_vec(dm);
  d.mt = detail::global_vec(dm);
  d.mt_next = detail::global_vec(dm);
  d.skip_viewers = !detail::sweep_views_option(comm);
  d.depth = config.iteration.anderson;
  if (d.depth > 0) {
    d.x_before = std::make_unique<State>(make_state(dm, d.levels));
    d.f_prev = std::make_unique<State>(make_state(dm, d.levels));
    d.g_prev = std::make_unique<State>(make_state(dm, d.levels));
    d.f_cur = std::make_unique<State>(make_state(dm, d.levels));
  }
  const Grid& g = d.model->grid();
  d.log.info("mfg: ", g.dim, "D grid ",
             g.dim == 2 ? std::to_string(g.points[0]) + " x " + std::to_string(g.points[1])
                        : std::to_string(g.points[0]),
             " (", io::to_string(config.domain.boundary), "), ", d.model->steps(),
             " time steps, Fokker-Planck ", io::to_string(config.fokker_planck.method),
             ", coupling ", io::to_string(config.coupling.type));
}

Solver::~Solver() = default;

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
namespace {

// One time level of a field of a solver at a time, in natural (x fastest) order, on every
// rank; the last two levels asked for per field are kept (start_from walks the coarse time
// levels in order), so a rank holds at most four coarse fields. Collective.
class CoarseLevels {
 public:
  explicit CoarseLevels(const Solver& from) : from_(from), replicator_(from.model().dm()) {}

  const std::vector<double>& get(bool density, int level) {
    Cache& c = cache_[density ? 1 : 0];
    for (int k = 0; k < 2; ++k) {
      if (c.level[k] == level) {
        c.last = k;
        return c.data[k];
      }
    }
    // Replace the level not asked for last (the caller holds references to both).
    const int slot = 1 - c.last;
    c.last = slot;
    c.level[slot] = level;
    replicator_.gather(density ? from_.m(level) : from_.u(level), c.data[slot]);
    return c.data[slot];
  }

 private:
  struct Cache {
    int level[2] = {-1, -1};
    std::vector<double> data[2];
    int last = 1;
  };
  const Solver& from_;
  detail::Replicator replicator_;
  Cache cache_[2];
};

// Position of coordinate x on an axis of grid g: lower index and weight of the upper one.
struct Bracket {
  PetscInt lo = 0, hi = 0;
  double w = 0.0;
};
Bracket bracket(const Grid& g, int axis, double x) {
  const PetscInt n = g.points[axis];
  const double s = (x - g.origin(axis)) / g.spacing(axis);
  Bracket b;
  if (g.boundary == Boundary::periodic) {
    const double f = std::floor(s);
    b.w = s - f;
    b.lo = ((static_cast<PetscInt>(f) % n) + n) % n;
    b.hi = (b.lo + 1) % n;
    return b;
  }
  const double c = std::clamp(s, 0.0, static_cast<double>(n - 1));
  b.lo = std::min(static_cast<PetscInt>(std::floor(c)), n - 1);
  b.hi = std::min(b.lo + 1, n - 1);
  b.w = c - static_cast<double>(b.lo);
  return b;
}

}  // namespace

void Solver::start_from(const Solver& coarse) {
  Impl& d = *impl_;
  if (!d.history.empty()) throw Error("mfg: start_from() needs a solver that has not iterated");
  const Grid& gf = d.model->grid();
  const Grid& gc = coarse.model().grid();
  if (gf.dim != gc.dim || gf.boundary != gc.boundary || gf.length != gc.length) {
    throw Error("mfg: start_from() needs the same domain");
  }
  CoarseLevels levels(coarse);
  const OwnedBox& box = d.model->box();
  const int ntc = coarse.steps(), ntf = d.model->steps();
  const double mass0 = d.model->mass(d.model->initial_density());
  for (int n = 0; n <= ntf; ++n) {
    const double s = static_cast<double>(n) * ntc / ntf;
    const int l0 = std::min(static_cast<int>(std::floor(s)), ntc);
    const int l1 = std::min(l0 + 1, ntc);
    const double wt = s - l0;
    for (int field = 0; field < 2; ++field) {
      Vec v = field == 0 ? d.x.u[static_cast<std::size_t>(n)].get()
                         : d.x.m[static_cast<std::size_t>(n)].get();
      if (field == 1 && n == 0) {
        FRACMFG_PETSC_CHECK(VecCopy(d.model->initial_density(), v));
        continue;
      }
      // Both coarse levels first (collective), then the local interpolation.
      const std::vector<double>& c0 = levels.get(field == 1, l0);
      const std::vector<double>& c1 = levels.get(field == 1, l1);
      detail::WriteArray a(v);
      for (PetscInt j = 0; j < box.ym; ++j) {
        const Bracket by = gf.dim == 2 ? bracket(gc, 1, gf.coordinate(1, box.ys + j)) : Bracket{};
        for (PetscInt i = 0; i < box.xm; ++i) {
          const Bracket bx = bracket(gc, 0, gf.coordinate(0, box.xs + i));
          const PetscInt nx = gc.points[0];
          auto at = [&](const std::vector<double>& f) {
            const double lo = (1 - bx.w) * f[static_cast<std::size_t>(by.lo * nx + bx.lo)] +
                              bx.w * f[static_cast<std::size_t>(by.lo * nx + bx.hi)];
            const double hi = (1 - bx.w) * f[static_cast<std::size_t>(by.hi * nx + bx.lo)] +
                              bx.w * f[static_cast<std::size_t>(by.hi * nx + bx.hi)];
            return (1 - by.w) * lo + by.w * hi;
          };
          a[j * box.xm + i] = (1 - wt) * at(c0) + wt * at(c1);
        }
      }
    }
    if (n == 0) continue;
    Vec m = d.x.m[static_cast<std::size_t>(n)].get();
    const double mass = d.model->mass(m);
    if (mass > 0.0) FRACMFG_PETSC_CHECK(VecScale(m, mass0 / mass));
  }
  d.warm = true;
}

bool Solver::converged() const {
  return impl_->converged;
}

IterationRecord Solver::iterate() {
  return impl_->iterate();
}

namespace {

// The game of `fine` with the points per axis and the time steps divided by 2^level, solved
// to max(tolerance, 1e-3) with the finite-difference Fokker-Planck equation.
io::MfgConfig coarse_config(const io::MfgConfig& fine, int level) {
  io::MfgConfig c = fine;
  for (auto& p : c.grid.points) p >>= level;
  c.time.steps = std::max(1, fine.time.steps >> level);
  c.iteration.tolerance = std::max(fine.iteration.tolerance, 1e-3);
  c.iteration.coarse_levels = 0;
  c.fokker_planck.method = io::MfgConfig::FokkerPlanck::Method::fdm;
  return c;
}

// Coarse levels that keep at least 4 points per axis.
int usable_coarse_levels(const io::MfgConfig& fine) {
  int levels = 0;
  while (levels < fine.iteration.coarse_levels &&
         std::all_of(fine.grid.points.begin(), fine.grid.points.end(),
                     [&](int p) { return (p >> (levels + 1)) >= 4; })) {
    ++levels;
  }
  return levels;
}

}  // namespace

void Solver::start_coarse() {
  Impl& d = *impl_;
  const io::MfgConfig& fine = d.cfg();
  const int levels = usable_coarse_levels(fine);
  if (levels < fine.iteration.coarse_levels) {
    d.log.info("mfg: coarse start with ", levels, " of the ", fine.iteration.coarse_levels,
               " coarse levels asked for (a coarser grid would have fewer than 4 points per axis)");
  }
  if (levels == 0) return;
  // The coarse solvers' own lines only at debug level.
  core::Logger quiet = d.log;
  if (quiet.level() != core::LogLevel::debug) {
    quiet.set_level(std::min(quiet.level(), core::LogLevel::warn));
  }
  std::unique_ptr<Solver> previous;
  for (int level = levels; level >= 1; --level) {
    const io::MfgConfig c = coarse_config(fine, level);
    auto next = std::make_unique<Solver>(d.comm, c, d.selector, quiet);
    if (previous) next->start_from(*previous);
    const double t0 = MPI_Wtime();
    SolveResult r;
    try {
      r = next->solve();
    } catch (const core::Interrupted&) {
      // A stop request during a coarse solve: nothing of the fine solve to checkpoint yet
      // (a restart repeats the coarse start).
      d.log.info("mfg: stopped by a signal during the coarse start (level ", level, ")");
      throw core::Interrupted(0, "");
    } catch (const core::CollectiveError& e) {
      // Collective: every rank leaves here; the fine solve starts from the default state.
      d.log.warn("mfg: coarse start level ", level, " failed (", e.what(),
                 "); starting from u = 0, m(t) = m0");
      return;
    }
    const Grid& g = next->model().grid();
    d.log.info("mfg: coarse start level ", level, ": ",
               g.dim == 2 ? std::to_string(g.points[0]) + " x " + std::to_string(g.points[1])
                          : std::to_string(g.points[0]),
               " points, ", next->steps(), " steps, ", r.iterations, " iterations to ",
               fmt(c.iteration.tolerance), r.converged ? "" : " (not converged)", " in ",
               fmt(MPI_Wtime() - t0), " s");
    previous = std::move(next);
  }
  start_from(*previous);
}

SolveResult Solver::solve(const CheckpointOptions& checkpoint) {
  Impl& d = *impl_;
  SolveResult r;
  const double t0 = MPI_Wtime();
  if (d.history.empty() && !d.warm && d.cfg().iteration.coarse_levels > 0) start_coarse();
  const int max_it = d.cfg().iteration.max_iterations;
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
    d.log.warn("mfg: not converged after ", r.iterations, " iterations (change u ", fmt(r.change_u),
               ", m ", fmt(r.change_m), ")");
  }
  return r;
}

namespace {

struct HistoryArrays {
  std::vector<double> change_u, change_m, damping, seconds, newton, anderson, newton_tolerance;
};

HistoryArrays arrays_of(const std::vector<IterationRecord>& h) {
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

}  // namespace

void Solver::write_checkpoint(const std::string& path) const {
  const Impl& d = *impl_;
  DM dm = d.model->dm();
  int rank = 0;
  MPI_Comm_rank(d.comm, &rank);
  io::CheckpointWriter ck(d.comm, path, iterations(), 0.0, "mfg");
  auto add_state = [&](const std::string& prefix, const State& s) {
    for (int n = 0; n < d.levels; ++n) {
      ck.add_field(prefix + level_name("u", n), dm, s.u[n].get());
      ck.add_field(prefix + level_name("m", n), dm, s.m[n].get());
    }
  };
  add_state("", d.x);
  ck.add_scalar_int64("iteration", iterations());
  ck.add_scalar_int64("time_steps", d.model->steps());
  ck.add_scalar_string("schedule", io::to_string(d.cfg().iteration.schedule));
  ck.add_scalar_double("damping", d.cfg().iteration.damping);
  ck.add_scalar_double("next_damping", d.theta(iterations()));
  ck.add_scalar_double("best_change", d.best_change);
  ck.add_scalar_int64("converged", d.converged ? 1 : 0);
  const HistoryArrays a = arrays_of(d.history);
  auto add = [&](const char* name, const std::vector<double>& v) {
    ck.add_array(std::string("convergence/") + name, v.data(), rank == 0 ? v.size() : 0);
  };
  add("u", a.change_u);
  add("m", a.change_m);
  add("damping", a.damping);
  add("seconds", a.seconds);
  add("newton", a.newton);
  add("anderson", a.anderson);
  add("newton_tolerance", a.newton_tolerance);
  ck.add_scalar_int64("anderson_depth", d.depth);
  ck.add_scalar_int64("anderson_have_prev", d.have_prev ? 1 : 0);
  ck.add_scalar_int64("anderson_history", static_cast<std::int64_t>(d.d_f.size()));
  if (d.depth > 0 && d.have_prev) {
    add_state("anderson/f/", *d.f_prev);
    add_state("anderson/g/", *d.g_prev);
    for (std::size_t j = 0; j < d.d_f.size(); ++j) {
      add_state("anderson/df" + std::to_string(j) + "/", d.d_f[j]);
      add_state("anderson/dg" + std::to_string(j) + "/", d.d_g[j]);
    }
  }
  ck.commit();
  d.log.info("mfg: checkpoint of iteration ", iterations(), " written to ", path);
}

void Solver::restart(const std::string& path) {
  Impl& d = *impl_;
  DM dm = d.model->dm();
  std::optional<io::CheckpointReader> rk;
  core::collective(d.comm, [&] { rk.emplace(d.comm, path); });
  auto fail = [&](const std::string& why) {
    throw core::CollectiveError("mfg: cannot restart from '" + path + "': " + why, ExitCode::io, 0);
  };
  const auto problem_steps = rk->scalar_int64("time_steps");
  if (problem_steps != d.model->steps()) {
    fail("it has " + std::to_string(problem_steps) + " time steps, the deck " +
         std::to_string(d.model->steps()));
  }
  const io::FieldShape shape = rk->field_shape(level_name("u", 0));
  const Grid& g = d.model->grid();
  if (shape.dim != g.dim || shape.size[0] != g.points[0] ||
      (g.dim == 2 && shape.size[1] != g.points[1])) {
    fail("its grid is " + io::to_string(shape) + ", the deck's differs");
  }
  auto read_state = [&](const std::string& prefix, State& s) {
    for (int n = 0; n < d.levels; ++n) {
      rk->read_field(prefix + level_name("u", n), dm, s.u[n].get());
      rk->read_field(prefix + level_name("m", n), dm, s.m[n].get());
    }
  };
  read_state("", d.x);
  const auto iterations_done = rk->scalar_int64("iteration");
  auto read = [&](const char* name) {
    const std::string a = std::string("convergence/") + name;
    return rk->read_array(a, 0, rk->array_size(a));
  };
  const auto cu = read("u"), cm = read("m"), damping = read("damping"), seconds = read("seconds"),
             newton = read("newton"), anderson = read("anderson"),
             newton_tolerance = read("newton_tolerance");
  if (static_cast<std::int64_t>(cu.size()) != iterations_done) {
    fail("its convergence history has " + std::to_string(cu.size()) + " entries for " +
         std::to_string(iterations_done) + " iterations");
  }
  d.history.clear();
  for (std::size_t i = 0; i < cu.size(); ++i) {
    IterationRecord r;
    r.iteration = static_cast<int>(i) + 1;
    r.change_u = cu[i];
    r.change_m = cm[i];
    r.damping = damping[i];
    r.seconds = seconds[i];
    r.newton_iterations = static_cast<long long>(newton[i]);
    r.anderson = anderson[i] != 0.0;
    r.newton_tolerance = newton_tolerance[i];
    d.history.push_back(r);
  }
  d.best_change = rk->scalar_double("best_change");
  d.converged = rk->scalar_int64("converged") != 0;
  d.clear_history();
  d.have_prev = false;
  const auto depth = rk->scalar_int64("anderson_depth");
  if (d.depth > 0 && depth == d.depth && rk->scalar_int64("anderson_have_prev") != 0) {
    read_state("anderson/f/", *d.f_prev);
    read_state("anderson/g/", *d.g_prev);
    const auto count = rk->scalar_int64("anderson_history");
    for (std::int64_t j = 0; j < count; ++j) {
      State df = d.take_state(), dg = d.take_state();
      read_state("anderson/df" + std::to_string(j) + "/", df);
      read_state("anderson/dg" + std::to_string(j) + "/", dg);
      d.d_f.push_back(std::move(df));
      d.d_g.push_back(std::move(dg));
    }
    d.have_prev = true;
  } else if (d.depth > 0 && depth != d.depth) {
    d.log.warn("mfg: checkpoint has Anderson depth ", depth, ", the deck ", d.depth,
               "; the Anderson history starts afresh");
  }
  d.log.info("mfg: restarted from ", path, " at iteration ", iterations_done, " (written on ",
             rk->written_by_ranks(), " rank(s))");
}

void Solver::write(io::H5Writer& out, int every) const {
  const Impl& d = *impl_;
  const Grid& g = d.model->grid();
  io::FieldInfo info;
  for (int a = 0; a < g.dim; ++a) {
    info.grid.origin[a] = g.origin(a);
    info.grid.spacing[a] = g.spacing(a);
  }
  const int nt = d.model->steps();
  every = std::max(every, 1);
  info.expected_levels = nt / every + 1 + (nt % every != 0 ? 1 : 0);
  info.component_names = {"u"};
  out.define_field("u", info);
  info.component_names = {"m"};
  out.define_field("m", info);
  DM dm = d.model->dm();
  for (int n = 0; n <= nt; ++n) {
    if (n % every != 0 && n != nt) continue;
    out.write_field("u", dm, d.x.u[n].get(), n, d.model->time(n));
    out.write_field("m", dm, d.x.m[n].get(), n, d.model->time(n));
  }
  const HistoryArrays a = arrays_of(d.history);
  out.write_array("/convergence/u", a.change_u);
  out.write_array("/convergence/m", a.change_m);
  out.write_array("/mfg/seconds", a.seconds);
  out.set_attribute_int64("/convergence", "iterations", iterations());
  out.set_attribute_int64("/convergence", "converged", d.converged ? 1 : 0);
  out.set_attribute_double("/convergence", "tolerance", d.cfg().iteration.tolerance);
  std::vector<double> mass;
  for (int n = 0; n <= nt; ++n) mass.push_back(d.model->mass(d.x.m[n].get()));
  out.write_array("/mfg/mass", mass);
}

}  // namespace fracmfg::mfg
