#include "mfg/fractional_diffusion.hpp"

#include <cstddef>
#include <sstream>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/frac/riesz_operator.hpp"
#include "fracmfg/la/tridiag_pc.hpp"
#include "mfg/petsc_handles.hpp"
#include "mfg/stencil.hpp"

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
  MatPtr shell, pmat, lap;     // lap: nu sum_axes (kappa - 1) (-D_hh)
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

  // y (owned) = nu A_s x + scale_lap nu (-Lap_h) x (the 3- or 5-point -Lap_h on the gathered
  // field, periodic); accumulate: y += instead.
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

FractionalDiffusion::FractionalDiffusion(const Model& model, exec::Selector* selector)
    : impl_(std::make_unique<Impl>(model)) {
  impl_->op.set_selector(selector);
}

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

void FractionalDiffusion::bind(Mat local) {
  Impl& d = *impl_;
  if (d.shell) throw Error("FractionalDiffusion::bind: called twice");
  d.local = local;
  const Model& model = d.model;
  const PetscInt n = model.box().count();
  Mat a = nullptr;
  FRACMFG_PETSC_CHECK(MatCreateShell(model.comm(), n, n, PETSC_DETERMINE, PETSC_DETERMINE, &d, &a));
  d.shell.reset(a);
  FRACMFG_PETSC_CHECK(
      MatShellSetOperation(a, MATOP_MULT, reinterpret_cast<void (*)(void)>(Impl::mult)));
  FRACMFG_PETSC_CHECK(MatShellSetOperation(a, MATOP_MULT_TRANSPOSE,
                                           reinterpret_cast<void (*)(void)>(Impl::mult_transpose)));
  // P and the Laplacian correction in the pattern of the solvers' matrices (RowIndices), so
  // that P = local + lap is a copy and an AXPY on the same nonzero pattern.
  const RowIndices indices(model, ghost_box(model.dm()));
  d.pmat = indices.create_matrix(model.comm());
  d.lap = indices.create_matrix(model.comm());
  const Grid& g = model.grid();
  const double s = model.diffusion_order();
  const double c1 = -frac::riesz_weights(s, 2)[1];  // |c_1|: the weights alternate in sign
  double w[2] = {0.0, 0.0};                         // nu (kappa - 1) / h^2 per axis
  for (int axis = 0; axis < g.dim; ++axis) {
    const double h = g.spacing(axis);
    w[axis] = model.diffusion() * (c1 * std::pow(h, 2.0 - s) - 1.0) / (h * h);
  }
  const int nc = row_components(g.dim);
  std::vector<double> rows(static_cast<std::size_t>(n * nc));
  for (PetscInt k = 0; k < n; ++k) {
    double* r = rows.data() + k * nc;
    r[kDiag] = 2.0 * (w[0] + w[1]);
    r[kWest] = r[kEast] = -w[0];
    if (g.dim == 2) r[kSouth] = r[kNorth] = -w[1];
  }
  FRACMFG_PETSC_CHECK(MatSetValuesCOO(d.lap.get(), rows.data(), INSERT_VALUES));
  FRACMFG_PETSC_CHECK(MatSetValuesCOO(d.pmat.get(), rows.data(), INSERT_VALUES));
}

Mat FractionalDiffusion::shell() const {
  return impl_->shell.get();
}

Mat FractionalDiffusion::preconditioning_matrix() const {
  return impl_->pmat.get();
}

void FractionalDiffusion::mark_changed() {
  Impl& d = *impl_;
  if (!d.shell) return;
  FRACMFG_PETSC_CHECK(MatCopy(d.local, d.pmat.get(), SAME_NONZERO_PATTERN));
  FRACMFG_PETSC_CHECK(MatAXPY(d.pmat.get(), 1.0, d.lap.get(), SAME_NONZERO_PATTERN));
  // An assembly marks the shell as changed, so solvers built on it are set up again.
  FRACMFG_PETSC_CHECK(MatAssemblyBegin(d.shell.get(), MAT_FINAL_ASSEMBLY));
  FRACMFG_PETSC_CHECK(MatAssemblyEnd(d.shell.get(), MAT_FINAL_ASSEMBLY));
}

void FractionalDiffusion::set_circulant_preconditioner(PC pc, double sigma) {
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

void set_fractional_linear_solver(KSP ksp, FractionalDiffusion& frac, int dim, double sigma,
                                  double rtol) {
  FRACMFG_PETSC_CHECK(KSPSetType(ksp, KSPGMRES));
  FRACMFG_PETSC_CHECK(KSPGMRESSetRestart(ksp, 60));
  FRACMFG_PETSC_CHECK(KSPSetTolerances(ksp, rtol, 1e-50, PETSC_DEFAULT, 10000));
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  // Multiplicative: the local solve first, then the circulant on its residual.
  la::register_petsc_types();
  FRACMFG_PETSC_CHECK(PCSetType(pc, PCCOMPOSITE));
  FRACMFG_PETSC_CHECK(PCCompositeSetType(pc, PC_COMPOSITE_MULTIPLICATIVE));
  // The residual between the two stages with the operator itself (the shell), not with P.
  FRACMFG_PETSC_CHECK(PCSetUseAmat(pc, PETSC_TRUE));
  FRACMFG_PETSC_CHECK(PCCompositeAddPCType(pc, dim == 1 ? la::tridiag_pc_type : PCBJACOBI));
  FRACMFG_PETSC_CHECK(PCCompositeAddPCType(pc, PCSHELL));
  PC circulant = nullptr;
  FRACMFG_PETSC_CHECK(PCCompositeGetPC(pc, 1, &circulant));
  frac.set_circulant_preconditioner(circulant, sigma);
}

}  // namespace fracmfg::mfg::detail
