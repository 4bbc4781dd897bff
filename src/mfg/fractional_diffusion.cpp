#include "mfg/fractional_diffusion.hpp"

#include <cstddef>
#include <sstream>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/frac/riesz_operator.hpp"
#include "mfg/petsc_handles.hpp"

namespace fracmfg::mfg::detail {

namespace {

frac::RieszOperator make_operator(const Model& model) {
  const Grid& g = model.grid();
  const double s = model.diffusion_order();
  if (g.boundary != Boundary::periodic || !(s > 1.0 && s <= 2.0)) {
    std::ostringstream os;
    os << "mfg: fractional diffusion needs a periodic domain and an order in (1, 2], got order "
       << s;
    throw Error(os.str());
  }
  return frac::RieszOperator(
      s, g.dim, {static_cast<std::size_t>(g.points[0]), static_cast<std::size_t>(g.points[1])},
      {g.spacing(0), g.dim == 2 ? g.spacing(1) : 1.0}, true);
}

}  // namespace

struct FractionalDiffusion::Impl {
  const Model& model;
  frac::RieszOperator op;
  Replicator replicator;
  std::vector<double> result;  // the whole grid, natural order
  MatPtr shell;
  Mat local = nullptr;
  double sigma = 1.0;  // of the preconditioner
  long long products = 0;
  long long pc_applications = 0;

  explicit Impl(const Model& m)
      : model(m), op(make_operator(m)), replicator(m.dm()), result(op.size()) {}

  // Calls f(k, p) for each owned point: k its owned index, p its natural (whole-grid) index.
  template <class F>
  void for_owned(F&& f) const {
    const OwnedBox& b = model.box();
    const auto nx = static_cast<std::size_t>(model.grid().points[0]);
    for (PetscInt j = 0; j < b.ym; ++j) {
      for (PetscInt i = 0; i < b.xm; ++i) {
        f(j * b.xm + i,
          static_cast<std::size_t>(b.ys + j) * nx + static_cast<std::size_t>(b.xs + i));
      }
    }
  }

  // y (owned) = scale_op * nu A_s x + scale_lap * nu (-Lap_h) x; accumulate: y += instead.
  void product(Vec x, Vec y, double scale_lap, bool accumulate) {
    const Grid& g = model.grid();
    const double nu = model.diffusion();
    Vec all = replicator.gather(x);
    ReadArray xa(all);
    const double* xs = xa.get();
    op.apply(xs, result.data(), 0.0, nu, 0.0);
    WriteArray ya(y);
    double* out = ya.get();
    const PetscInt nx = g.points[0], ny = g.points[1];
    const double cx = scale_lap * nu / (g.spacing(0) * g.spacing(0));
    const double cy = g.dim == 2 ? scale_lap * nu / (g.spacing(1) * g.spacing(1)) : 0.0;
    const auto unx = static_cast<std::size_t>(nx);
    for_owned([&](PetscInt k, std::size_t p) {
      double v = result[p];
      if (scale_lap != 0.0) {
        const std::size_t i = p % unx, j = p / unx;
        const std::size_t w = i == 0 ? p + unx - 1 : p - 1;
        const std::size_t e = i + 1 == unx ? p + 1 - unx : p + 1;
        v += cx * (2.0 * xs[p] - xs[w] - xs[e]);
        if (g.dim == 2) {
          const auto uny = static_cast<std::size_t>(ny);
          const std::size_t s = j == 0 ? p + (uny - 1) * unx : p - unx;
          const std::size_t n = j + 1 == uny ? p - (uny - 1) * unx : p + unx;
          v += cy * (2.0 * xs[p] - xs[s] - xs[n]);
        }
      }
      out[k] = accumulate ? out[k] + v : v;
    });
    ++products;
  }

  void inverse(Vec x, Vec y, double s) {
    Vec all = replicator.gather(x);
    {
      ReadArray xa(all);
      op.apply_circulant_inverse(frac::CirculantKind::strang, xa.get(), result.data(), s,
                                 model.diffusion());
    }
    WriteArray ya(y);
    double* out = ya.get();
    for_owned([&](PetscInt k, std::size_t p) { out[k] = result[p]; });
    ++pc_applications;
  }

  static PetscErrorCode mult(Mat a, Vec x, Vec y) {
    FRACMFG_PETSC_CALLBACK_BEGIN
    void* ctx = nullptr;
    FRACMFG_PETSC_CHECK(MatShellGetContext(a, &ctx));
    auto* d = static_cast<Impl*>(ctx);
    FRACMFG_PETSC_CHECK(MatMult(d->local, x, y));
    d->product(x, y, -1.0, true);
    FRACMFG_PETSC_CALLBACK_END
  }

  static PetscErrorCode mult_transpose(Mat a, Vec x, Vec y) {
    FRACMFG_PETSC_CALLBACK_BEGIN
    void* ctx = nullptr;
    FRACMFG_PETSC_CHECK(MatShellGetContext(a, &ctx));
    auto* d = static_cast<Impl*>(ctx);
    FRACMFG_PETSC_CHECK(MatMultTranspose(d->local, x, y));
    d->product(x, y, -1.0, true);  // A_s - (-Lap_h) is symmetric
    FRACMFG_PETSC_CALLBACK_END
  }

  static PetscErrorCode pc_apply(PC pc, Vec x, Vec y) {
    FRACMFG_PETSC_CALLBACK_BEGIN
    void* ctx = nullptr;
    FRACMFG_PETSC_CHECK(PCShellGetContext(pc, &ctx));
    auto* d = static_cast<Impl*>(ctx);
    d->inverse(x, y, d->sigma);
    FRACMFG_PETSC_CALLBACK_END
  }
};

FractionalDiffusion::FractionalDiffusion(const Model& model)
    : impl_(std::make_unique<Impl>(model)) {}

FractionalDiffusion::~FractionalDiffusion() = default;

void FractionalDiffusion::add_nonlocal(Vec x, Vec y) {
  impl_->product(x, y, -1.0, true);
}

void FractionalDiffusion::apply(Vec x, Vec y) {
  impl_->product(x, y, 0.0, false);
}

void FractionalDiffusion::apply_inverse(Vec x, Vec y, double sigma) {
  impl_->inverse(x, y, sigma);
}

Mat FractionalDiffusion::shell(Mat local) {
  Impl& d = *impl_;
  if (d.shell) {
    if (local != d.local) throw Error("FractionalDiffusion::shell: bound to another matrix");
    return d.shell.get();
  }
  d.local = local;
  const PetscInt n = d.model.box().count();
  Mat a = nullptr;
  FRACMFG_PETSC_CHECK(
      MatCreateShell(d.model.comm(), n, n, PETSC_DETERMINE, PETSC_DETERMINE, &d, &a));
  d.shell.reset(a);
  FRACMFG_PETSC_CHECK(
      MatShellSetOperation(a, MATOP_MULT, reinterpret_cast<void (*)(void)>(Impl::mult)));
  FRACMFG_PETSC_CHECK(MatShellSetOperation(a, MATOP_MULT_TRANSPOSE,
                                           reinterpret_cast<void (*)(void)>(Impl::mult_transpose)));
  return a;
}

void FractionalDiffusion::mark_changed() {
  if (!impl_->shell) return;
  // An assembly marks the shell as changed, so solvers built on it are set up again.
  FRACMFG_PETSC_CHECK(MatAssemblyBegin(impl_->shell.get(), MAT_FINAL_ASSEMBLY));
  FRACMFG_PETSC_CHECK(MatAssemblyEnd(impl_->shell.get(), MAT_FINAL_ASSEMBLY));
}

void FractionalDiffusion::set_preconditioner(PC pc, double sigma) {
  impl_->sigma = sigma;
  FRACMFG_PETSC_CHECK(PCSetType(pc, PCSHELL));
  FRACMFG_PETSC_CHECK(PCShellSetContext(pc, impl_.get()));
  FRACMFG_PETSC_CHECK(PCShellSetApply(pc, Impl::pc_apply));
  FRACMFG_PETSC_CHECK(
      PCShellSetName(pc, "fractional diffusion circulant (I/dt + nu A_s)^-1 by FFT"));
}

long long FractionalDiffusion::products() const {
  return impl_->products;
}
long long FractionalDiffusion::preconditioner_applications() const {
  return impl_->pc_applications;
}

void set_fractional_linear_solver(KSP ksp, FractionalDiffusion& frac, double sigma, double rtol) {
  FRACMFG_PETSC_CHECK(KSPSetType(ksp, KSPGMRES));
  FRACMFG_PETSC_CHECK(KSPGMRESSetRestart(ksp, 60));
  FRACMFG_PETSC_CHECK(KSPSetTolerances(ksp, rtol, 1e-50, PETSC_DEFAULT, 10000));
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  frac.set_preconditioner(pc, sigma);
}

}  // namespace fracmfg::mfg::detail
