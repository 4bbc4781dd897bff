// The outer iteration of mfg::Solver by Newton's method (iteration.method newton; the
// linearised game is mfg/newton.hpp). The unknown is the value function U (levels 0..N);
// M(U) is the Fokker-Planck sweep with the drift of U, Psi(U) the HJB sweep at M(U). One
// outer iteration k:
//   1. the sweeps at U_k (cached from the line search of iteration k - 1) and the changes
//      change_u = max_n ||Psi(U_k)^n - U_k^n|| / max_n ||Psi(U_k)^n||, change_m of M(U_k)
//      against the previous M, the fixed point's measures; converged as the fixed point
//      (both <= tolerance, the HJB steps solved to 1e-3 tolerance), then U = Psi(U_k);
//   2. the Newton step dU: from the cold start the plain step Psi(U) - U, otherwise
//      (I - K) dU = Psi(U_k) - U_k by GMRES to the forcing term eta = min(1e-2,
//      max(change_u, 0.1 tolerance / change_u)) (inexact Newton);
//   3. a backtracking line search on the merit ||U - Psi(U)||_2: the trial U_k + lambda dU,
//      lambda = 1, 1/2, ..., is accepted when its merit is below (1 - 1e-4 lambda) times
//      U_k's or its change_u below the tolerance; its sweeps are the next iteration's step 1.
//      A trial whose sweeps fail (Newton, negative density) counts as rejected. When the full
//      step fails against a merit of U_k solved more loosely than the trials, U_k is evaluated
//      again at the trials' tolerance and the step compared with that. When no lambda is
//      accepted, the iteration takes the damped fixed-point step U + damping (Psi(U) - U)
//      (a warning).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "mfg/lane_sums.hpp"
#include "mfg/solver_impl.hpp"

namespace fracmfg::mfg {

namespace {

using detail::copy_levels;
using detail::fmt;
using detail::VecPtr;

// As the fixed point (solver.cpp): changes relative to max(RMS of the field, this).
constexpr double kChangeFloor = 1e-6;
constexpr double kDivergenceFactor = 1e6;
constexpr double kSufficientDecrease = 1e-4;
constexpr int kHalvings = 5;
// Consecutive outer iterations whose evaluation stayed inexact before Newton gives up.
constexpr int kInexactLimit = 5;

[[noreturn]] void numerical(const std::string& message) {
  throw core::CollectiveError(message, ExitCode::numerical, 0);
}

// The squared norms of fresh - ref and of fresh (local sums).
void accumulate(Vec fresh, Vec ref, double& change2, double& size2) {
  PetscInt n = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(fresh, &n));
  detail::ReadArray fa(fresh);
  detail::ReadArray fb(ref);
  const double* a = fa.get();
  const double* b = fb.get();
  const auto sums = detail::lane_sums<2>(n, [&](PetscInt i, double* acc) {
    const double diff = a[i] - b[i];
    acc[0] += diff * diff;
    acc[1] += a[i] * a[i];
  });
  change2 = sums[0];
  size2 = sums[1];
}

}  // namespace

void Solver::Impl::build_newton() {
  DM dm = model->dm();
  newton = std::make_unique<detail::NewtonWork>();
  newton->game = std::make_unique<detail::LinearizedGame>(*model);
  for (auto* f : {&newton->m_eval, &newton->u_eval, &newton->u_trial, &newton->m_trial,
                  &newton->ut_trial, &newton->du}) {
    for (int n = 0; n < levels; ++n) f->push_back(detail::global_vec(dm));
  }
}

std::pair<double, double> Solver::Impl::relative_changes(std::vector<double> norms_u,
                                                         std::vector<double> norms_m) const {
  std::vector<double> all(std::move(norms_u));
  all.insert(all.end(), norms_m.begin(), norms_m.end());
  MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_DOUBLE, MPI_SUM, comm);
  const double size_floor = static_cast<double>(model->grid().size()) * kChangeFloor * kChangeFloor;
  // Newton's merit: ||U - Psi(U)||_2 over all levels.
  double residual2 = 0.0;
  for (int n = 0; n < levels; ++n) residual2 += all[2 * n];
  newton->residual = std::sqrt(residual2);
  auto relative = [&](std::size_t offset) {
    double change = 0.0, size = 0.0;
    for (int n = 0; n < levels; ++n) {
      if (std::isnan(all[offset + 2 * n]) || std::isnan(all[offset + 2 * n + 1])) {
        return std::numeric_limits<double>::quiet_NaN();
      }
      change = std::max(change, all[offset + 2 * n]);
      size = std::max(size, all[offset + 2 * n + 1]);
    }
    if (change == 0.0) return 0.0;
    return std::sqrt(change) / std::sqrt(std::max(size, size_floor));
  };
  return {relative(0), relative(2 * static_cast<std::size_t>(levels))};
}

void Solver::Impl::evaluate(int it, const std::vector<VecPtr>& u_in,
                            const std::vector<VecPtr>& m_ref, std::vector<VecPtr>& m_out,
                            std::vector<VecPtr>& ut_out, double& change_u, double& change_m) {
  const int nt = model->steps();
  std::vector<double> norms_u(2 * static_cast<std::size_t>(levels), 0.0);
  std::vector<double> norms_m(2 * static_cast<std::size_t>(levels), 0.0);
  // 1. Fokker-Planck forward with the drift of u_in.
  forward->set_tolerance(newton->fp_tolerance);
  forward->begin();
  FRACMFG_PETSC_CHECK(VecCopy(model->initial_density(), m_out[0].get()));
  accumulate(m_out[0].get(), m_ref[0].get(), norms_m[0], norms_m[1]);
  const bool settled = !history.empty() && history.back().change_m < 1e-2;
  const bool congestion = problem().hamiltonian.type == Problem::Hamiltonian::Type::congestion;
  newton->congestion_newton = 0;
  for (int n = 0; n < nt; ++n) {
    const auto next = static_cast<std::size_t>(n + 1);
    try {
      if (congestion) {
        congestion_step(n, u_in[static_cast<std::size_t>(n)].get(),
                        m_out[static_cast<std::size_t>(n)].get(), m_out[next].get(),
                        settled ? m_ref[next].get() : nullptr);
      } else {
        forward->advance(n, u_in[static_cast<std::size_t>(n)].get(),
                         m_out[static_cast<std::size_t>(n)].get(), m_out[next].get(),
                         settled ? m_ref[next].get() : nullptr);
      }
    } catch (const core::CollectiveError& e) {
      throw core::CollectiveError("mfg iteration " + std::to_string(it) + ", time level " +
                                      std::to_string(n + 1) + " (t = " + fmt(model->time(n + 1)) +
                                      "): " + e.what(),
                                  e.exit_code(), e.origin_rank());
    }
    check_density(m_out[next].get(), it, n + 1);
    accumulate(m_out[next].get(), m_ref[next].get(), norms_m[2 * (n + 1)],
               norms_m[2 * (n + 1) + 1]);
  }
  if (congestion) {
    log.debug("mfg iteration ", it, ": congestion Fokker-Planck steps, ", newton->congestion_newton,
              " Newton iterations over ", nt, " steps", newton->inexact ? " (inexact)" : "");
  }
  // 2. HJB backward at that density.
  Vec un = ut_out[nt].get();
  FRACMFG_PETSC_CHECK(VecCopy(model->terminal_cost(), un));
  if (model->terminal_coupling() != 0.0) {
    FRACMFG_PETSC_CHECK(VecAXPY(un, model->terminal_coupling(), m_out[nt].get()));
  }
  accumulate(un, u_in[nt].get(), norms_u[2 * nt], norms_u[2 * nt + 1]);
  const bool cold = history.empty() && !warm;
  for (int n = nt - 1; n >= 0; --n) {
    const auto here = static_cast<std::size_t>(n);
    hjb_rhs(n, m_out[here + 1].get());
    Vec next = ut_out[here + 1].get();
    Vec u_new = ut_out[here].get();
    Vec guess = u_in[here].get();
    // Level n's exit cost (and the congestion Hamiltonian's density) for the residuals below
    // as for the step.
    hjb->set_time_level(n);
    hjb->set_density(m_out[here + 1].get());
    // Newton's start as the undamped fixed point's (initial_guess): u~^{n+1} from the cold
    // start, u_in after a coarse start, and while U moves by more than 1e-2 the one of the two
    // with the smaller residual. Not the damped sweep's shifted start u_in^n + (u~^{n+1} -
    // u_in^{n+1}): that start is often within the Newton tolerance already, the evaluation then
    // keeps its error, and the iterations that extrapolate from evaluations need more of them
    // (the 1D crowd game under `auto` takes more fine iterations). The Fokker-Planck solves
    // keep their start too: shifted in the same way, Newton's method on the 2D crowd game took
    // more iterations and several times as long.
    if (cold) {
      guess = next;
    } else if (!history.empty() && !(history.back().change_u < 1e-2)) {
      const double r_in = hjb->residual_norm(next, rhs.get(), guess);
      const double r_next = hjb->residual_norm(next, rhs.get(), next);
      if (r_next < r_in) guess = next;
    }
    FRACMFG_PETSC_CHECK(VecCopy(guess, u_new));
    try {
      hjb->step(next, rhs.get(), u_new, "HJB step", newton->tolerance);
    } catch (const core::CollectiveError& e) {
      throw core::CollectiveError("mfg iteration " + std::to_string(it) + ", time level " +
                                      std::to_string(n) + " (t = " + fmt(model->time(n)) +
                                      "): " + e.what(),
                                  e.exit_code(), e.origin_rank());
    }
    accumulate(u_new, u_in[here].get(), norms_u[2 * n], norms_u[2 * n + 1]);
  }
  std::tie(change_u, change_m) = relative_changes(std::move(norms_u), std::move(norms_m));
  for (const auto& [name, value] : {std::pair<const char*, double>{"u", change_u},
                                    std::pair<const char*, double>{"m", change_m}}) {
    if (!std::isfinite(value)) {
      numerical("mfg iteration " + std::to_string(it) + ": " + name +
                " is not finite (NaN or Inf)");
    }
  }
}

// The Fokker-Planck step of M(U) with the congestion Hamiltonian: its drift depends on the
// density it computes (J(U^n; m^{n+1})^T m^{n+1} = m^n / dt), which the fixed point lags by
// one outer iteration; here it is solved by Newton's method in m^{n+1}
// (FokkerPlanckFdm::step_at_own_density: the Jacobian is the step's matrix with the drift's
// coefficient c + c'(m) m, steps shortened to keep m >= 0 and lower the residual), from
// guess (or m^n), to the Fokker-Planck tolerance: a few iterations per step on the test
// games, far fewer than the rounds of repeating the step with the drift at the last density.
// With alpha > 1 a step need not have a solution at a U far from the game's solution. A step
// that does not converge in kMaxNewton iterations (or finds no decrease) makes the
// evaluation inexact: Newton goes on with it, only an exact evaluation can end the
// iteration, and newton_iterate stops after kInexactLimit inexact evaluations in a row.
void Solver::Impl::congestion_step(int n, Vec u, Vec m, Vec m_next, Vec guess) {
  constexpr int kMaxNewton = 30;
  const double tol = std::max(newton->fp_tolerance, 1e-13);
  const FokkerPlanckFdm::DensityStep r =
      forward->advance_at_own_density(n, u, m, m_next, guess, tol, kMaxNewton);
  newton->congestion_newton += r.iterations;
  if (!std::isfinite(r.change)) {
    numerical("the congestion Fokker-Planck step failed (relative change of m " + fmt(r.change) +
              " after " + std::to_string(r.iterations) +
              " Newton iterations); use mfg.iteration.method: fixed_point");
  }
  if (!r.converged) {
    log.debug("mfg: congestion Fokker-Planck step ", n, " -> ", n + 1, ": relative change of m ",
              fmt(r.change), " after ", r.iterations,
              " Newton iterations; the evaluation is inexact");
    newton->inexact = true;
  }
}

IterationRecord Solver::Impl::newton_iterate() {
  detail::NewtonWork& w = *newton;
  const int k = static_cast<int>(history.size());
  const int it = k + 1;
  const double t0 = MPI_Wtime();
  const long long newton0 = hjb->newton_iterations();
  const double tol = problem().iteration.tolerance;
  IterationRecord rec;
  rec.iteration = it;

  // 1. The sweeps at U_k.
  double change_u = 0.0, change_m = 0.0;
  if (w.cached) {
    change_u = w.cached_change_u;
    change_m = w.cached_change_m;
    w.residual = w.cached_residual;
  } else {
    w.tolerance = newton_tolerance();
    w.fp_tolerance = fp_tolerance();
    w.inexact = false;
    evaluate(it, x.u, x.m, w.m_eval, w.u_eval, change_u, change_m);
    w.evaluation_tolerance = w.tolerance;
  }
  w.cached = false;
  rec.change_u = change_u;
  rec.change_m = change_m;
  rec.newton_tolerance = w.evaluation_tolerance;
  const double change = std::max(change_u, change_m);
  if (change > 1.0 && change > kDivergenceFactor * best_change) {
    numerical("mfg iteration " + std::to_string(it) + ": Newton's method diverges (change of " +
              (change_u >= change_m ? "u" : "m") + " " + fmt(change) + ", smallest so far " +
              fmt(best_change) + "); try mfg.iteration.method: fixed_point");
  }
  best_change = std::min(best_change, change);
  // Evaluations that stay inexact: some congestion steps have no solution in m^{n+1} near
  // the iterates (measured with alpha > 1 and a small epsilon); Newton cannot go on.
  w.inexact_run = w.inexact ? w.inexact_run + 1 : 0;
  if (w.inexact_run >= kInexactLimit) {
    const Problem::Hamiltonian& hp = problem().hamiltonian;
    std::string why;
    if (hp.alpha > 1.0) {
      why = " (with alpha " + fmt(hp.alpha) +
            " > 1 the flux m (epsilon + m)^-alpha falls for m > epsilon / (alpha - 1) = " +
            fmt(hp.epsilon / (hp.alpha - 1.0)) + ", where an implicit step need not have one)";
    }
    numerical("mfg iteration " + std::to_string(it) +
              ": Newton's method: the congestion Fokker-Planck steps of M(U) found no solution "
              "in m^{n+1} at the last " +
              std::to_string(kInexactLimit) + " iterates" + why +
              "; use mfg.iteration.method: fixed_point");
  }
  copy_levels(w.m_eval, x.m);
  // An inexact evaluation (a congestion step stopped before its tolerance) cannot end it.
  converged = change_u <= tol && change_m <= tol &&
              w.evaluation_tolerance <= std::max(1e-3 * tol, 1e-12) && !w.inexact;

  if (converged) {
    copy_levels(w.u_eval, x.u);
    rec.damping = 1.0;
  } else {
    // 2. The Newton step. From the cold start (U = 0, far from the solution) the plain step
    // dU = Psi(U) - U, as the fixed point's first iteration; otherwise GMRES to the forcing
    // term eta = min(1e-2, max(change_u, 0.1 tolerance / change_u)): superlinear while far,
    // and no tighter than the last step needs to end 10 times below the tolerance.
    const bool plain = k == 0 && !warm;
    if (plain) {
      for (int n = 0; n < levels; ++n) {
        const auto l = static_cast<std::size_t>(n);
        FRACMFG_PETSC_CHECK(VecWAXPY(w.du[l].get(), -1.0, x.u[l].get(), w.u_eval[l].get()));
      }
    } else {
      w.game->linearise(&x.u, &w.u_eval, &x.m);
      const double eta =
          change_u > 0.0 ? std::min(1e-2, std::max(change_u, 0.1 * tol / change_u)) : 1e-2;
      rec.krylov_iterations = w.game->solve(w.du, eta);
    }
    // 3. The line search (not for a plain step); the trial's sweeps are solved as tightly
    // as a quadratic step from this change needs.
    w.tolerance = std::clamp(1e-3 * change * change, std::max(1e-3 * tol, 1e-12), 1e-3);
    w.fp_tolerance = std::clamp(1e-4 * change * change, 1e-12, 1e-6);
    double residual = w.residual;
    double lambda = 1.0;
    bool accepted = false;
    bool baseline_refreshed = false;
    for (int trial = 0; trial <= kHalvings && !accepted; ++trial, lambda *= 0.5) {
      for (int n = 0; n < levels; ++n) {
        const auto l = static_cast<std::size_t>(n);
        FRACMFG_PETSC_CHECK(VecWAXPY(w.u_trial[l].get(), lambda, w.du[l].get(), x.u[l].get()));
      }
      double cu = 0.0, cm = 0.0;
      try {
        w.inexact = false;
        evaluate(it, w.u_trial, x.m, w.m_trial, w.ut_trial, cu, cm);
      } catch (const core::CollectiveError& e) {
        if (e.exit_code() != ExitCode::numerical) throw;
        log.debug("mfg iteration ", it, ": Newton trial step ", fmt(lambda), " rejected (",
                  e.what(), ")");
        continue;
      }
      const double merit = newton->residual;
      const bool trial_inexact = w.inexact;
      log.debug("mfg iteration ", it, ": Newton trial step ", fmt(lambda), ", ||U - Psi(U)|| ",
                fmt(merit), " (from ", fmt(residual), ")");
      bool decrease = merit <= (1.0 - kSufficientDecrease * lambda) * residual;
      if (!plain && !decrease && cu > tol && trial == 0 && !baseline_refreshed &&
          w.evaluation_tolerance > w.tolerance) {
        // U_k's merit came from sweeps solved more loosely than the trial's, and a loose HJB
        // sweep can stop near its start and understate ||U - Psi(U)||: on a 1D game with an
        // exit (tolerance 1e-9) the merit 1.75e-7 at 3e-6 was 4.6e-7 at 1e-11, so every step
        // length failed and two iterations fell back to the damped fixed point. U_k is
        // evaluated again at the trial's tolerance (into the evaluation the fallback uses)
        // and the full step is compared with that.
        baseline_refreshed = true;
        double cu0 = 0.0, cm0 = 0.0;
        w.inexact = false;
        try {
          evaluate(it, x.u, x.m, w.m_eval, w.u_eval, cu0, cm0);
          w.evaluation_tolerance = w.tolerance;
          log.debug("mfg iteration ", it, ": ||U - Psi(U)|| at U with the trial's tolerance ",
                    fmt(newton->residual), " (was ", fmt(residual), ")");
          residual = newton->residual;
          decrease = merit <= (1.0 - kSufficientDecrease * lambda) * residual;
        } catch (const core::CollectiveError& e) {
          // The sweeps at U were solved before, more loosely: their evaluation stays.
          if (e.exit_code() != ExitCode::numerical) throw;
          log.debug("mfg iteration ", it, ": U evaluated again failed (", e.what(), ")");
        }
      }
      if (plain || decrease || cu <= tol) {
        accepted = true;
        rec.damping = lambda;
        copy_levels(w.u_trial, x.u);
        std::swap(w.m_eval, w.m_trial);
        std::swap(w.u_eval, w.ut_trial);
        w.cached = true;
        w.cached_change_u = cu;
        w.cached_change_m = cm;
        w.cached_residual = merit;
        w.evaluation_tolerance = w.tolerance;
        w.inexact = trial_inexact;
      }
    }
    if (!accepted) {
      const double theta = problem().iteration.damping;
      log.warn("mfg iteration ", it, ": Newton's line search found no decrease of the change of ",
               "u in ", kHalvings + 1, " steps; damped fixed-point step (damping ", fmt(theta),
               ")");
      for (int n = 0; n < levels; ++n) {
        const auto l = static_cast<std::size_t>(n);
        FRACMFG_PETSC_CHECK(VecAXPBY(x.u[l].get(), theta, 1.0 - theta, w.u_eval[l].get()));
      }
      rec.damping = theta;
    }
  }
  // Every HJB Newton iteration of this outer iteration, the line search's included.
  finish_record(rec, t0, newton0);
  history.push_back(rec);
  report(rec);
  return rec;
}

}  // namespace fracmfg::mfg
