// The space_fractional scheme of frac::FpdeSolver: fractional centred differences for the
// Riesz operator (riesz_operator.hpp, O(h^2)) with the theta scheme in time; each step
// solves (I + theta tau K A) u^n = (I - (1 - theta) tau K A) u^{n-1} + tau (theta f^n +
// (1 - theta) f^{n-1}) by CG on the FFT shell matrix (riesz_shell.hpp), preconditioned by a
// circulant (Strang or T. Chan).
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "frac/fpde_stepper.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/frac/riesz_shell.hpp"
#include "fracmfg/la/petsc_handles.hpp"
#include "fracmfg/la/tridiag_pc.hpp"

// PETSc's option macros (PetscOptionsBegin, PetscCall) call PetscError() unqualified; inside
// namespace fracmfg that would name the exception class, so the options blocks live outside.
namespace {

/// The project's options of this scheme, registered so that -help lists them:
/// -<prefix>time_scheme and -<prefix>circulant (their values are checked by the caller).
/// Returns a PETSc error code (no exceptions inside the options block).
PetscErrorCode read_options(MPI_Comm comm, const char* prefix, char* scheme, size_t scheme_size,
                            char* circulant, size_t circulant_size) {
  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, prefix, "fracmfg fpde options", nullptr);
  PetscCall(PetscOptionsString("-time_scheme",
                               "space_fractional: the time scheme, crank_nicolson (second order) "
                               "or euler (implicit, first order)",
                               "FpdeSolver", "crank_nicolson", scheme, scheme_size, nullptr));
  PetscCall(PetscOptionsString("-circulant",
                               "space_fractional: the circulant preconditioner, strang (G. "
                               "Strang) or tchan (T. Chan)",
                               "FpdeSolver", "strang", circulant, circulant_size, nullptr));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

}  // namespace

namespace fracmfg::frac {

namespace {

using Clock = std::chrono::steady_clock;
using Boundary = FpdeProblem::Boundary;
using Preconditioner = FpdeProblem::Solver::Preconditioner;
using WriteArray = la::VecArray;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

class SpaceFractionalStepper final : public FpdeStepper {
 public:
  explicit SpaceFractionalStepper(const FpdeStepContext& context) : FpdeStepper(context) {
    const FpdeProblem& problem = ctx_.problem;
    if (problem.nonlinear()) {
      throw Error("fpde: a source depending on u is supported for type time_fractional only");
    }
    const std::size_t np = ctx_.grid.local_size();
    FRACMFG_PETSC_CHECK(VecDuplicate(ctx_.u, rhs_.out()));
    f_now_.resize(np);
    f_prev_.resize(np);
    riesz_ = std::make_unique<RieszShell>(ctx_.grid, problem.order);
    char scheme_text[256] = "crank_nicolson";
    char kind_text[256] = "strang";
    FRACMFG_PETSC_CHECK(read_options(ctx_.comm, ctx_.options.prefix.c_str(), scheme_text,
                                     sizeof scheme_text, kind_text, sizeof kind_text));
    const std::string scheme = scheme_text;
    if (scheme == "crank_nicolson" || scheme == "cn") {
      theta_ = 0.5;
    } else if (scheme == "euler" || scheme == "implicit_euler") {
      theta_ = 1.0;
    } else {
      throw Error("fpde: -" + ctx_.options.prefix + "time_scheme " + scheme +
                  ": expected euler or crank_nicolson");
    }
    const std::string kind = kind_text;
    if (kind == "strang") {
      circulant_ = CirculantKind::strang;
    } else if (kind == "tchan" || kind == "t_chan") {
      circulant_ = CirculantKind::tchan;
    } else {
      throw Error("fpde: -" + ctx_.options.prefix + "circulant " + kind +
                  ": expected strang or tchan");
    }
    FRACMFG_PETSC_CHECK(VecDuplicate(ctx_.u, z_.out()));
    if (ctx_.grid.boundary_kind() == Boundary::dirichlet) {
      const auto& side = ctx_.grid.boundary();
      for (std::size_t p = 0; p < side.size(); ++p) {
        if (side[p] == 0) continue;
        bnd_points_.push_back(p);
        bnd_x_.push_back(ctx_.grid.x()[p]);
        bnd_y_.push_back(ctx_.grid.y()[p]);
      }
      bnd_g_.resize(bnd_points_.size());
    }
    ksp_ = la::create_ksp(ctx_.comm);
    FRACMFG_PETSC_CHECK(KSPSetOptionsPrefix(ksp_, ctx_.options.prefix.c_str()));
    FRACMFG_PETSC_CHECK(KSPSetType(ksp_, KSPCG));
    FRACMFG_PETSC_CHECK(KSPSetTolerances(ksp_, 1e-10, 1e-50, PETSC_DEFAULT, 10000));
    PC pc = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetPC(ksp_, &pc));
    if (problem.solver.preconditioner == Preconditioner::none) {
      FRACMFG_PETSC_CHECK(PCSetType(pc, PCNONE));
    } else {
      riesz_->set_preconditioner(pc, circulant_);
    }
    FRACMFG_PETSC_CHECK(KSPSetOperators(ksp_, riesz_->matrix(), riesz_->matrix()));
    FRACMFG_PETSC_CHECK(KSPSetFromOptions(ksp_));
    set_initial_guess(ksp_);
  }

  void advance(std::int64_t n) override {
    const std::int64_t m = n + 1;
    const double tau = ctx_.mesh.step(m);
    const double k = ctx_.problem.diffusivity;
    const double kappa = theta_ * tau * k;
    if (kappa != kappa_built_) {
      riesz_->set_coefficients(1.0, kappa);
      FRACMFG_PETSC_CHECK(KSPSetOperators(ksp_, riesz_->matrix(), riesz_->matrix()));
      kappa_built_ = kappa;
    }
    // z: u^{n} at the unknowns, (1 - theta) g^n + theta g^{n+1} at the boundary points.
    FRACMFG_PETSC_CHECK(VecCopy(ctx_.u, z_));
    const double t_new = ctx_.mesh.time(m);
    if (!bnd_points_.empty()) {
      FpdeGrid::evaluate_at(ctx_.problem.boundary_value, t_new, bnd_points_.size(), bnd_x_.data(),
                            bnd_y_.data(), bnd_g_.data());
      WriteArray za(z_);
      for (std::size_t b = 0; b < bnd_points_.size(); ++b) {
        double& v = za.get()[bnd_points_[b]];
        v = (1.0 - theta_) * v + theta_ * bnd_g_[b];
      }
    }
    // rhs = z - (1 - theta) tau K T z_int - tau K E(z_b), then the sources and the boundary
    // values.
    riesz_->apply(z_, rhs_, 1.0, -(1.0 - theta_) * tau * k, -tau * k);
    if (f_prev_step_ != n) {
      evaluate_source(n, f_prev_);
      f_prev_step_ = n;
    }
    evaluate_source(m, f_now_);
    {
      WriteArray b(rhs_);
      const auto& side = ctx_.grid.boundary();
      for (std::size_t p = 0; p < side.size(); ++p) {
        if (side[p] != 0) continue;
        b.get()[p] += tau * (theta_ * f_now_[p] + (1.0 - theta_) * f_prev_[p]);
      }
      for (std::size_t q = 0; q < bnd_points_.size(); ++q) b.get()[bnd_points_[q]] = bnd_g_[q];
    }
    const auto t0 = Clock::now();
    FRACMFG_PETSC_CHECK_SOLVE(KSPSolve(ksp_, rhs_, ctx_.u));
    ctx_.stats.solve_seconds += seconds_since(t0);
    check_linear_solve(ksp_, m);
    std::swap(f_prev_, f_now_);
    f_prev_step_ = m;
  }

  /// The state is u alone (the source values are evaluated again).
  void write_state(io::CheckpointWriter& /*checkpoint*/) const override {}

  void read_state(io::CheckpointReader& /*checkpoint*/,
                  const std::function<void(const std::string&)>& /*mismatch*/) override {
    f_prev_step_ = -1;
    kappa_built_ = std::numeric_limits<double>::quiet_NaN();
  }

  KSP ksp() const override { return ksp_; }

 private:
  std::unique_ptr<RieszShell> riesz_;
  double theta_ = 0.5;
  CirculantKind circulant_ = CirculantKind::strang;
  double kappa_built_ = std::numeric_limits<double>::quiet_NaN();
  la::VecHandle rhs_, z_;
  la::KspHandle ksp_;
  std::vector<double> f_now_, f_prev_;   ///< source values at the owned points
  std::int64_t f_prev_step_ = -1;        ///< the level f_prev_ belongs to
  std::vector<std::size_t> bnd_points_;  ///< owned Dirichlet boundary points
  std::vector<double> bnd_x_, bnd_y_, bnd_g_;
};

}  // namespace

std::unique_ptr<FpdeStepper> make_space_fractional_stepper(const FpdeStepContext& context) {
  return std::make_unique<SpaceFractionalStepper>(context);
}

}  // namespace fracmfg::frac
