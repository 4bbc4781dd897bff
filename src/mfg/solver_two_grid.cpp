// The outer iteration of mfg::Solver by the two-grid iteration (iteration.method two_grid;
// the coarse correction is mfg/two_grid.hpp). One outer iteration k:
//   1. the sweeps at U_k: M(U_k), Psi(U_k), and the fixed point's changes (change_u of
//      Psi(U_k) against U_k, change_m of M(U_k) against the previous M); converged as the
//      fixed point (both <= tolerance, the HJB steps solved to 1e-3 x the tolerance), then
//      U = Psi(U_k);
//   2. U_{k+1} = Psi(U_k) + P z, z the coarse correction; from the cold start the first
//      iteration takes U_1 = Psi(U_0) (U_0 = 0 is far from the solution, as for Newton).
// The HJB and Fokker-Planck tolerances follow the last change as in the fixed point, and are
// the final ones (1e-3 and 1e-4 x the tolerance) where the last two changes predict one below
// the tolerance.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "mfg/solver_impl.hpp"

namespace fracmfg::mfg {

namespace {

using detail::copy_levels;
using detail::fmt;

constexpr double kDivergenceFactor = 1e6;
// The coarse system's GMRES tolerance: the correction's own error is then 1e-2 of its size,
// well below the iteration's contraction per iteration on the 1D games it runs.
constexpr double kCoarseRtol = 1e-2;

}  // namespace

void Solver::Impl::build_two_grid() {
  DM dm = model->dm();
  newton = std::make_unique<detail::NewtonWork>();
  for (auto* f : {&newton->m_eval, &newton->u_eval, &newton->u_trial}) {
    for (int n = 0; n < levels; ++n) f->push_back(detail::global_vec(dm));
  }
  two_grid = std::make_unique<detail::CoarseCorrection>(*model, coarse_points(problem()));
}

IterationRecord Solver::Impl::two_grid_iterate() {
  detail::NewtonWork& w = *newton;
  const int k = static_cast<int>(history.size());
  const int it = k + 1;
  const double t0 = MPI_Wtime();
  const long long newton0 = hjb->newton_iterations();
  const double tol = problem().iteration.tolerance;
  IterationRecord rec;
  rec.iteration = it;
  rec.damping = 1.0;

  double change_u = 0.0, change_m = 0.0;
  w.tolerance = newton_tolerance();
  w.fp_tolerance = fp_tolerance();
  evaluate(it, x.u, x.m, w.m_eval, w.u_eval, change_u, change_m);
  rec.change_u = change_u;
  rec.change_m = change_m;
  rec.newton_tolerance = w.tolerance;
  const double change = std::max(change_u, change_m);
  if (change > 1.0 && change > kDivergenceFactor * best_change) {
    throw core::CollectiveError(
        "mfg iteration " + std::to_string(it) + ": the two-grid iteration diverges (change of " +
            (change_u >= change_m ? "u" : "m") + " " + fmt(change) + ", smallest so far " +
            fmt(best_change) + "); try mfg.iteration.method: fixed_point",
        ExitCode::numerical, 0);
  }
  best_change = std::min(best_change, change);
  copy_levels(w.m_eval, x.m);
  converged = change_u <= tol && change_m <= tol && w.tolerance <= std::max(1e-3 * tol, 1e-12);
  if (converged || (k == 0 && !warm)) {
    copy_levels(w.u_eval, x.u);
  } else {
    try {
      rec.krylov_iterations = two_grid->correct(x.u, w.u_eval, w.m_eval, w.u_trial, kCoarseRtol);
    } catch (const core::CollectiveError& e) {
      // A coarse grid too coarse for the game can make the coarse GMRES break down
      // (docs/performance.md, "The two-grid iteration").
      throw core::CollectiveError("mfg iteration " + std::to_string(it) +
                                      ": the two-grid correction failed (" + e.what() +
                                      "); raise mfg.iteration.coarse_points (now " +
                                      std::to_string(coarse_points(problem())) +
                                      ") or use mfg.iteration.method: fixed_point",
                                  e.exit_code(), e.origin_rank());
    }
    copy_levels(w.u_trial, x.u);
  }
  finish_record(rec, t0, newton0);
  history.push_back(rec);
  report(rec);
  return rec;
}

void Solver::Impl::use_fixed_point() {
  problem_.iteration.method = io::MfgConfig::Iteration::Method::fixed_point;
  two_grid.reset();
  newton.reset();
}

void Solver::Impl::fall_back_to_fixed_point(const std::string& why) {
  log.warn("mfg: the two-grid iteration (iteration.method auto) ends after iteration ",
           history.size(), ": ", why, "; the damped fixed point (damping ",
           fmt(problem().iteration.damping), ") continues from u = 0, m(t) = m0");
  use_fixed_point();
  restart_from_initial_state();
}

bool Solver::Impl::two_grid_slow() const {
  const std::size_t w = kSlowWindow;
  if (history.size() < 2 * w) return false;
  const auto [before, last] = smallest_changes(0, w);
  return !(last < std::pow(kSlowRate, static_cast<double>(w)) * before);
}

}  // namespace fracmfg::mfg
