#include "fracmfg/mfg/fokker_planck.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/la/line_pc.hpp"
#include "fracmfg/la/tridiag_solver.hpp"
#include "fracmfg/mfg/hjb.hpp"
#include "la/solve_check.hpp"
#include "mfg/direct_1d.hpp"
#include "mfg/fractional_diffusion.hpp"
#include "mfg/petsc_handles.hpp"
#include "mfg/row_kernels.hpp"
#include "mfg/solver_options.hpp"
#include "mfg/stencil.hpp"

namespace fracmfg::mfg {

struct FokkerPlanckFdm::Impl {
  const Model& model;
  detail::HamiltonianAtDensity ham;
  // The rows (kernels mfg_fp_rows in 1D, mfg_hjb_rows for J(u) in 2D and 3D) where the
  // selector places them.
  detail::RowKernels rk;
  detail::DmPtr cdm;  // the Jacobian rows as a field with row_components(dim) components
  detail::VecPtr rows_global, rows_local, u_local, rhs;
  // step_at_own_density(): the residual, Newton's step, the trial point, a spare residual.
  detail::VecPtr resid, delta, trial, scratch;
  detail::MatPtr a;
  detail::KspPtr ksp;
  detail::GhostBox gb;
  std::unique_ptr<detail::RowIndices> indices;
  std::vector<double> values;
  bool nonzero_guess = false;
  // -mfg_fp_pc_lag: the preconditioner is built at the levels n % pc_lag == 0 (linear_solve()).
  // On the 2D crowd game the option's default 4 builds far fewer ILU(3) factorisations for a
  // few more applications and a solve no slower than at every level, where longer lags were
  // slower (docs/performance.md, "The Fokker-Planck preconditioner lag (`-mfg_fp_pc_lag`)").
  int pc_lag = 1;
  // Krylov tolerance: kDefaultRtol unless set_relative_tolerance() loosened it; fixed when
  // the options give -mfg_fp_ksp_rtol.
  static constexpr double kDefaultRtol = 1e-12;
  double rtol = kDefaultRtol;
  bool user_rtol = false;
  // Diffusion of order s < 2: the nonlocal rest of nu A_s (mfg/fractional_diffusion.hpp).
  std::unique_ptr<detail::FractionalDiffusion> frac;

  // 1D fast path (mfg/direct_1d.hpp): the rows of J^T straight into the tridiagonal solver.
  bool direct = false;
  bool levels_set = false;  // the default ILU level of block Jacobi is applied
  std::unique_ptr<la::TridiagSolver> tridiag;
  std::unique_ptr<detail::Halo1d> halo;
  std::pair<double, double> inv_c_ghosts;  // of model.inverse_control_cost()
  std::vector<double> sub, diag, super;
  std::vector<double> coef;  // the linearisation's coefficients (not the quadratic form)

  // Exits: the time level of the drift's u (the exit cost in its Jacobian), the exit rate
  // (L 1)_k of each point, and the mass that left in the last step.
  int level = -1;
  detail::VecPtr rate;
  double outflow = 0.0;

  detail::ExitFaces exits() const {
    if (!model.grid().has_exit()) return {};
    if (level < 0) {
      throw Error("mfg: FokkerPlanckFdm::set_time_level() is needed before a step with exits");
    }
    return detail::ExitFaces::of(model, level);
  }

  Impl(const Model& m, exec::Selector* selector) : model(m), ham(m), rk(selector) {}

  void solve(Vec b, Vec m_next) {
    KSP k = ksp.get();
    FRACMFG_PETSC_CHECK_SOLVE(KSPSolve(k, b, m_next));
    KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
    FRACMFG_PETSC_CHECK(KSPGetConvergedReason(k, &reason));
    if (reason < 0) {
      PetscInt its = 0;
      FRACMFG_PETSC_CHECK(KSPGetIterationNumber(k, &its));
      throw core::CollectiveError(
          std::string("Fokker-Planck step: the linear solve for m failed (") +
              KSPConvergedReasons[reason] + " after " + std::to_string(its) + " iterations)",
          ExitCode::numerical, 0);
    }
    la::require_solved(k, b, m_next, "Fokker-Planck step");
  }

  void init_direct() {
    direct = true;
    tridiag = std::make_unique<la::TridiagSolver>(model.comm());
    halo = std::make_unique<detail::Halo1d>(model);
    const PetscInt n = model.box().count();
    for (auto* v : {&sub, &diag, &super, &coef}) v->assign(static_cast<std::size_t>(n), 0.0);
    inv_c_ghosts = halo->exchange(model.inverse_control_cost().data());
  }

  // The rows of A = J(u)^T at the Hamiltonian's coefficients (1D fast path).
  void direct_rows(Vec u) {
    detail::ReadArray ul(u);
    const std::pair<double, double> ghosts = halo->exchange(ul.get());
    if (ham.general()) {
      // The coefficient depends on u (power) or m (congestion): its ghosts per step.
      detail::linear_coefficients_1d(model, ham.stencil(), ul.get(), ghosts, coef.data());
      detail::fp_rows_1d(model, ul.get(), ghosts, coef.data(), halo->exchange(coef.data()),
                         sub.data(), diag.data(), super.data(), &rk);
    } else {
      detail::fp_rows_1d(model, ul.get(), ghosts, model.inverse_control_cost().data(), inv_c_ghosts,
                         sub.data(), diag.data(), super.data(), &rk);
    }
  }

  // m_next = A^{-1} b with the rows of direct_rows() (which the factorisation overwrites).
  void direct_solve(const double* b, Vec m_next) {
    try {
      detail::WriteArray x(m_next);
      tridiag->factor_solve(model.box().count(), sub.data(), diag.data(), super.data(),
                            model.grid().boundary == Boundary::periodic, b, x.get());
    } catch (const NumericalError& e) {
      throw core::CollectiveError(
          std::string("Fokker-Planck step: the linear solve for m failed (") + e.what() + ")",
          ExitCode::numerical, 0);
    }
  }

  // A at the Hamiltonian's coefficients: the rows (1D fast path) or the matrix.
  void build(Vec u) {
    if (direct) {
      direct_rows(u);
    } else {
      assemble(u);
    }
  }

  // y = A x with the operator of the last build() (before any solve with it).
  void apply(Vec x, Vec y) {
    if (!direct) {
      FRACMFG_PETSC_CHECK(MatMult(frac ? frac->shell() : a.get(), x, y));
      return;
    }
    detail::ReadArray xa(x);
    const double* xx = xa.get();
    const std::pair<double, double> g = halo->exchange(xx);
    detail::WriteArray ya(y);
    const PetscInt n = model.box().count();
    for (PetscInt k = 0; k < n; ++k) {
      const auto i = static_cast<std::size_t>(k);
      const double west = k > 0 ? xx[k - 1] : g.first;
      const double east = k + 1 < n ? xx[k + 1] : g.second;
      // A wall's outer coefficient is 0 (its ghost may be anything finite).
      ya[k] = diag[i] * xx[k] + (sub[i] != 0.0 ? sub[i] * west : 0.0) +
              (super[i] != 0.0 ? super[i] * east : 0.0);
    }
  }

  // x = A^{-1} b with the operator of the last build(); guess: the Krylov start (or x's
  // content when null).
  void linear_solve(Vec b, Vec x, Vec guess) {
    if (direct) {
      detail::ReadArray bb(b);
      direct_solve(bb.get(), x);
      return;
    }
    KSP k = ksp.get();
    if (frac) frac->mark_changed();
    FRACMFG_PETSC_CHECK(KSPSetOperators(k, frac ? frac->shell() : a.get(),
                                        frac ? frac->preconditioning_matrix() : a.get()));
    detail::default_sub_factor_levels(k, detail::default_factor_levels(model.grid().dim),
                                      &levels_set);
    if (nonzero_guess && guess != nullptr) FRACMFG_PETSC_CHECK(VecCopy(guess, x));
    if (!frac) {
      // The preconditioner of the sweep's level lag * floor(n / lag) (-mfg_fp_pc_lag): a rule
      // of the level alone, so that a sweep does the same whatever came before it (restarts
      // reproduce the uninterrupted run). Levels not set (-1) build their own. Not with
      // fractional diffusion (block Jacobi composed with the circulant stage): the lag was
      // measured on second-order diffusion only, and there every level builds its own.
      const bool reuse = level > 0 && level % pc_lag != 0;
      FRACMFG_PETSC_CHECK(KSPSetReusePreconditioner(k, reuse ? PETSC_TRUE : PETSC_FALSE));
    }
    solve(b, x);
  }

  // b = m / dt + source (rhs).
  void set_rhs(Vec m, const double* source) {
    const double inv_dt = 1.0 / model.dt();
    detail::ReadArray mm(m);
    detail::WriteArray b(rhs.get());
    const PetscInt n = model.box().count();
    for (PetscInt k = 0; k < n; ++k) b[k] = mm[k] * inv_dt + (source ? source[k] : 0.0);
  }

  // The exact solution keeps the discrete mass balance sum(m_next) = dt sum(m / dt + f_m)
  // (the columns of A sum to 1 / dt); an iterative solve keeps it only to its tolerance, so
  // m_next is scaled onto it: mass conserved to round-off at any Krylov tolerance. With
  // exits the columns sum to 1/dt + e_k (e = L 1, the exit rate of the last build()): the
  // balance is sum(m_next) + dt e.m_next = dt sum(m / dt + f_m), dt e.m_next the mass that
  // leaves. Sets outflow.
  void mass_balance(Vec m_next) {
    PetscScalar want = 0.0, have = 0.0, leaving = 0.0;
    FRACMFG_PETSC_CHECK(VecSum(rhs.get(), &want));
    FRACMFG_PETSC_CHECK(VecSum(m_next, &have));
    if (rate) FRACMFG_PETSC_CHECK(VecDot(rate.get(), m_next, &leaving));
    want *= model.dt();
    have += model.dt() * leaving;
    double scale = 1.0;
    if (have > 0.0 && want > 0.0 && std::isfinite(want / have)) {
      scale = want / have;
      FRACMFG_PETSC_CHECK(VecScale(m_next, scale));
    }
    outflow = model.dt() * leaving * scale * model.grid().cell_volume();
  }

  void assemble(Vec u) {
    DM dm = model.dm();
    FRACMFG_PETSC_CHECK(DMGlobalToLocalBegin(dm, u, INSERT_VALUES, u_local.get()));
    FRACMFG_PETSC_CHECK(DMGlobalToLocalEnd(dm, u, INSERT_VALUES, u_local.get()));
    {
      detail::ReadArray ul(u_local.get());
      detail::WriteArray rg(rows_global.get());
      if (rate) {
        detail::WriteArray e(rate.get());
        detail::hjb_rows(model, ham.stencil(), gb, ul.get(), rg.get(), exits(), e.get(), &rk);
      } else {
        detail::hjb_rows(model, ham.stencil(), gb, ul.get(), rg.get(), {}, nullptr, &rk);
      }
    }
    // Row q of A = J^T holds J(q, q) and J(p, q) for the neighbours p of q: the coefficient
    // that row p puts on q, i.e. the opposite-side entry of p's row.
    FRACMFG_PETSC_CHECK(
        DMGlobalToLocalBegin(cdm.get(), rows_global.get(), INSERT_VALUES, rows_local.get()));
    FRACMFG_PETSC_CHECK(
        DMGlobalToLocalEnd(cdm.get(), rows_global.get(), INSERT_VALUES, rows_local.get()));
    const int nc = detail::row_components(model.grid().dim);
    Mat mat = a.get();
    detail::ReadArray rl(rows_local.get());
    const double* rows = rl.get();
    const PetscInt n = indices->count();
    for (PetscInt k = 0; k < n; ++k) {
      const detail::Neighbours& nb = indices->neighbours(k);
      // The layout of the COO pattern: self, west, east(, south, north(, down, up)); a folded
      // (mirrored) neighbour's value is ignored.
      double* v = values.data() + k * nc;
      v[detail::kDiag] = rows[nb.self * nc + detail::kDiag];
      v[detail::kWest] = rows[nb.west * nc + detail::kEast];
      v[detail::kEast] = rows[nb.east * nc + detail::kWest];
      if (nc >= 5) {
        v[detail::kSouth] = rows[nb.south * nc + detail::kNorth];
        v[detail::kNorth] = rows[nb.north * nc + detail::kSouth];
      }
      if (nc == 7) {
        v[detail::kDown] = rows[nb.down * nc + detail::kUp];
        v[detail::kUp] = rows[nb.up * nc + detail::kDown];
      }
    }
    FRACMFG_PETSC_CHECK(MatSetValuesCOO(mat, values.data(), INSERT_VALUES));
  }
};

FokkerPlanckFdm::FokkerPlanckFdm(const Model& model, exec::Selector* selector)
    : impl_(std::make_unique<Impl>(model, selector)) {
  Impl& d = *impl_;
  DM dm = model.dm();
  d.gb = detail::ghost_box(dm);
  d.indices = std::make_unique<detail::RowIndices>(model, d.gb);
  d.cdm = create_dmda_components(dm, detail::row_components(model.grid().dim));
  d.rows_global = detail::global_vec(d.cdm.get());
  d.rows_local = detail::local_vec(d.cdm.get());
  d.u_local = detail::local_vec(dm);
  d.rhs = detail::global_vec(dm);
  d.a = d.indices->create_matrix(model.comm());
  if (model.diffusion_order() < 2.0) {
    d.frac = std::make_unique<detail::FractionalDiffusion>(model, selector);
    d.frac->bind(d.a.get());
  }
  d.values.resize(
      static_cast<std::size_t>(model.box().count() * detail::row_components(model.grid().dim)));
  KSP k = nullptr;
  FRACMFG_PETSC_CHECK(KSPCreate(model.comm(), &k));
  d.ksp.reset(k);
  FRACMFG_PETSC_CHECK(KSPSetOptionsPrefix(k, "mfg_fp_"));
  // The grid for PCs that read it (fracmfg_line); the operators stay the assembled matrix.
  FRACMFG_PETSC_CHECK(KSPSetDM(k, dm));
  FRACMFG_PETSC_CHECK(KSPSetDMActive(k, PETSC_FALSE));
  set_default_linear_solver(k, model.grid().dim, Impl::kDefaultRtol);
  if (d.frac) {
    detail::set_fractional_linear_solver(k, *d.frac, model.grid().dim, 1.0 / model.dt(),
                                         Impl::kDefaultRtol);
  }
  {
    PetscBool given = PETSC_FALSE;
    FRACMFG_PETSC_CHECK(PetscOptionsHasName(nullptr, "mfg_fp_", "-ksp_rtol", &given));
    d.user_rtol = given == PETSC_TRUE;
  }
  if (model.grid().dim >= 2 || d.frac) {
    FRACMFG_PETSC_CHECK(KSPSetInitialGuessNonzero(k, PETSC_TRUE));
  }
  FRACMFG_PETSC_CHECK(KSPSetFromOptions(k));
  // preonly takes no initial guess (PETSc refuses one): it applies the preconditioner once.
  if (la::is_preonly(k)) FRACMFG_PETSC_CHECK(KSPSetInitialGuessNonzero(k, PETSC_FALSE));
  if (model.grid().dim >= 2) d.pc_lag = detail::fp_pc_lag_option(model.comm());
  PetscBool guess = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(KSPGetInitialGuessNonzero(k, &guess));
  d.nonzero_guess = guess == PETSC_TRUE;
  {
    PC pc = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetPC(k, &pc));
    la::line_pc_set_selector(pc, selector);
  }
  // The 1D fast path (-mfg_fp_direct, default true) when the solver types are its own.
  if (model.grid().has_exit()) d.rate = detail::global_vec(dm);
  // Exits and obstacles: the assembled matrix (the 1D fast path walks only walls).
  const bool plain_1d = model.grid().dim == 1 && !model.grid().has_exit() && !model.has_obstacle();
  if (plain_1d && !d.frac && detail::direct_option(model.comm(), "mfg_fp_") &&
      detail::is_preonly_tridiag(k)) {
    d.init_direct();
  }
}

FokkerPlanckFdm::~FokkerPlanckFdm() = default;

void FokkerPlanckFdm::set_density(Vec m) {
  impl_->ham.set_density(m);
}

void FokkerPlanckFdm::step(Vec u, Vec m, const double* source, Vec m_next, Vec guess) {
  Impl& d = *impl_;
  d.build(u);
  d.set_rhs(m, source);
  if (d.direct) {
    detail::ReadArray b(d.rhs.get());
    d.direct_solve(b.get(), m_next);
    d.outflow = 0.0;  // no exits on the fast path
    return;
  }
  d.linear_solve(d.rhs.get(), m_next, guess != nullptr ? guess : m);
  if (d.rtol > Impl::kDefaultRtol) {
    // A loose solve may leave small negative entries where the density is tiny; m must stay
    // a density, so such a step is finished to the default tolerance (from where it is).
    PetscReal lo = 0.0;
    FRACMFG_PETSC_CHECK(VecMin(m_next, nullptr, &lo));
    if (lo < 0.0) {
      KSP k = d.ksp.get();
      const PetscBool had_guess = d.nonzero_guess ? PETSC_TRUE : PETSC_FALSE;
      FRACMFG_PETSC_CHECK(
          KSPSetInitialGuessNonzero(k, la::is_preonly(k) ? PETSC_FALSE : PETSC_TRUE));
      FRACMFG_PETSC_CHECK(
          KSPSetTolerances(k, Impl::kDefaultRtol, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
      d.solve(d.rhs.get(), m_next);
      FRACMFG_PETSC_CHECK(KSPSetTolerances(k, d.rtol, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
      FRACMFG_PETSC_CHECK(KSPSetInitialGuessNonzero(k, had_guess));
    }
  }
  d.mass_balance(m_next);
}

FokkerPlanckFdm::DensityStep FokkerPlanckFdm::step_at_own_density(Vec u, Vec m,
                                                                  const double* source, Vec m_next,
                                                                  Vec guess, double tol,
                                                                  int max_iterations) {
  Impl& d = *impl_;
  DensityStep out;
  d.set_rhs(m, source);
  if (!d.resid) {
    d.resid = detail::copy_vec(d.rhs.get());
    d.delta = detail::copy_vec(d.rhs.get());
    d.trial = detail::copy_vec(d.rhs.get());
    d.scratch = detail::copy_vec(d.rhs.get());
  }
  Vec x = m_next, g = d.resid.get(), delta = d.delta.get(), trial = d.trial.get();
  const PetscInt owned = d.model.box().count();
  FRACMFG_PETSC_CHECK(VecCopy(guess != nullptr ? guess : m, x));
  // G(y) = A(u; y) y - b, A's drift at the density y; its 2-norm. The operator is left
  // built at y: built_at_x says whether it is the one at x.
  bool built_at_x = false;
  auto residual = [&](Vec y, Vec r) {
    d.ham.set_density(y);
    d.build(u);
    d.apply(y, r);
    FRACMFG_PETSC_CHECK(VecAXPY(r, -1.0, d.rhs.get()));
    PetscReal v = 0.0;
    FRACMFG_PETSC_CHECK(VecNorm(r, NORM_2, &v));
    return static_cast<double>(v);
  };
  // The residual's round-off level (b ~ m / dt): below it the density cannot improve.
  PetscReal bnorm = 0.0;
  FRACMFG_PETSC_CHECK(VecNorm(d.rhs.get(), NORM_2, &bnorm));
  const double floor = 1e-13 * static_cast<double>(bnorm);
  double gnorm = residual(x, g);
  built_at_x = true;
  if (gnorm <= floor) out.converged = true;
  double last_change = std::numeric_limits<double>::infinity();
  for (int it = 1; it <= max_iterations && !out.converged; ++it) {
    // Newton's step: A(u; c + c'(x) x) delta = G(x), the Jacobian of y -> A(u; y) y at x.
    d.ham.set_flux_derivative(x);
    d.build(u);
    built_at_x = false;
    FRACMFG_PETSC_CHECK(VecZeroEntries(delta));
    d.linear_solve(g, delta, nullptr);
    // Backtracking: the longest step of 1, 1/2, 1/4, ... whose point, with its negative
    // entries set to 0 (the density's bound; where m is round-off small any step may cross
    // it), lowers the residual (Armijo, 1e-4).
    double lambda = 1.0, gtrial = 0.0;
    bool accepted = false;
    for (int cut = 0; cut < 30; ++cut, lambda *= 0.5) {
      FRACMFG_PETSC_CHECK(VecWAXPY(trial, -lambda, delta, x));
      {
        detail::WriteArray t(trial);
        for (PetscInt k = 0; k < owned; ++k) t[k] = std::max(t[k], 0.0);
      }
      gtrial = residual(trial, d.scratch.get());
      if (gtrial <= (1.0 - 1e-4 * lambda) * gnorm) {
        accepted = true;
        break;
      }
    }
    if (!accepted) break;
    // The step taken (the bound may have shortened it).
    PetscReal step = 0.0, size = 0.0;
    FRACMFG_PETSC_CHECK(VecWAXPY(delta, -1.0, trial, x));
    FRACMFG_PETSC_CHECK(VecNorm(delta, NORM_INFINITY, &step));
    FRACMFG_PETSC_CHECK(VecCopy(trial, x));
    built_at_x = true;  // by the trial's residual
    FRACMFG_PETSC_CHECK(VecNorm(x, NORM_INFINITY, &size));
    std::swap(d.resid, d.scratch);
    g = d.resid.get();
    gnorm = gtrial;
    out.iterations = it;
    out.change = size > 0.0 ? step / size : step;
    if (!std::isfinite(out.change)) break;
    // Converged (the step, or the residual at round-off), or settled at the linear solves'
    // accuracy (2D Krylov) below 1e-9.
    if (out.change <= tol || gnorm <= floor ||
        (out.change < 1e-9 && out.change >= 0.5 * last_change)) {
      out.converged = true;
      break;
    }
    last_change = out.change;
  }
  // The operator at the final density (its exit rates), then the exact mass balance.
  if (!built_at_x) {
    d.ham.set_density(x);
    d.build(u);
  }
  d.mass_balance(x);
  return out;
}

void FokkerPlanckFdm::set_time_level(int n) {
  impl_->level = n;
}

double FokkerPlanckFdm::outflow() const {
  return impl_->outflow;
}

void FokkerPlanckFdm::set_relative_tolerance(double rtol) {
  Impl& d = *impl_;
  if (d.direct || d.user_rtol) return;
  const double r = std::max(rtol, Impl::kDefaultRtol);
  if (r == d.rtol) return;
  d.rtol = r;
  FRACMFG_PETSC_CHECK(
      KSPSetTolerances(d.ksp.get(), r, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
}

Mat FokkerPlanckFdm::matrix(Vec u) {
  impl_->assemble(u);
  return impl_->a.get();
}

KSP FokkerPlanckFdm::ksp() const {
  return impl_->ksp.get();
}

bool FokkerPlanckFdm::direct() const {
  return impl_->direct;
}

}  // namespace fracmfg::mfg
