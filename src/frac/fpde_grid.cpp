#include "fracmfg/frac/fpde_grid.hpp"

#include <petscdmda.h>

#include <algorithm>
#include <sstream>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/exec/dmda_migration.hpp"
#include "la/dmda_setup.hpp"

namespace fracmfg::frac {

namespace {

using Boundary = io::FpdeConfig::Domain::Boundary;

/// The argument columns of an expression of (some of) x, y, t, u.
std::vector<core::Expression::Input> inputs_for(const core::Expression& expr, double t,
                                                const double* x, const double* y, const double* u) {
  std::vector<core::Expression::Input> in;
  for (const std::string& v : expr.variables()) {
    if (v == "x") {
      in.push_back(core::Expression::Input::array(x));
    } else if (v == "y") {
      in.push_back(y ? core::Expression::Input::array(y) : core::Expression::Input::constant(0.0));
    } else if (v == "t") {
      in.push_back(core::Expression::Input::constant(t));
    } else if (v == "u") {
      if (u == nullptr) {
        throw Error("fpde: the expression \"" + expr.text() + "\" uses u where u is not defined");
      }
      in.push_back(core::Expression::Input::array(u));
    } else {
      throw Error("fpde: the expression \"" + expr.text() + "\" has the variable \"" + v +
                  "\"; expected x, y, t or u");
    }
  }
  return in;
}

}  // namespace

FpdeGrid::FpdeGrid(MPI_Comm comm, const io::FpdeConfig& config)
    : FpdeGrid(comm, config.domain, config.grid) {}

FpdeGrid::FpdeGrid(MPI_Comm comm, const io::FpdeConfig::Domain& domain,
                   const io::FpdeConfig::Grid& grid)
    : comm_(comm), dim_(static_cast<int>(domain.length.size())), kind_(domain.boundary) {
  if (dim_ < 1 || dim_ > 2 || grid.points.size() != domain.length.size()) {
    throw Error("fpde: the domain needs one or two lengths and as many grid point counts");
  }
  const bool per = periodic();
  for (int d = 0; d < dim_; ++d) {
    const auto k = static_cast<std::size_t>(d);
    n_[k] = grid.points[k];
    if (n_[k] < 3) throw Error("fpde: at least 3 grid points per direction");
    h_[k] = domain.length[k] / static_cast<double>(per ? n_[k] : n_[k] - 1);
  }
  const DMBoundaryType bt = per ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;
  if (dim_ == 1) {
    FRACMFG_PETSC_CHECK(DMDACreate1d(comm, bt, n_[0], 1, 1, nullptr, dm_.out()));
  } else {
    FRACMFG_PETSC_CHECK(DMDACreate2d(comm, bt, bt, DMDA_STENCIL_STAR, n_[0], n_[1], PETSC_DECIDE,
                                     PETSC_DECIDE, 1, 1, nullptr, nullptr, dm_.out()));
  }
  la::set_up_dmda(dm_, std::vector<PetscInt>(n_.begin(), n_.begin() + dim_), "fpde");
  set_points();
}

FpdeGrid::FpdeGrid(const FpdeGrid& like, const std::vector<PetscInt>& lx,
                   const std::vector<PetscInt>& ly)
    : comm_(like.comm_),
      dim_(like.dim_),
      kind_(like.kind_),
      n_(like.n_),
      h_(like.h_),
      dm_(exec::create_dmda_like(like.dm_, lx, ly)) {
  set_points();
}

void FpdeGrid::set_points() {
  const bool per = periodic();
  PetscInt xs = 0, ys = 0, zs = 0, xm = 0, ym = 0, zm = 0;
  FRACMFG_PETSC_CHECK(DMDAGetCorners(dm_, &xs, &ys, &zs, &xm, &ym, &zm));
  start_ = {xs, dim_ == 2 ? ys : 0};
  width_ = {xm, dim_ == 2 ? ym : 1};
  const std::size_t count =
      static_cast<std::size_t>(width_[0]) * static_cast<std::size_t>(width_[1]);
  x_.resize(count);
  y_.resize(count);
  side_.assign(count, 0u);
  std::size_t p = 0;
  for (PetscInt j = start_[1]; j < start_[1] + width_[1]; ++j) {
    for (PetscInt i = start_[0]; i < start_[0] + width_[0]; ++i, ++p) {
      x_[p] = static_cast<double>(i) * h_[0];
      y_[p] = dim_ == 2 ? static_cast<double>(j) * h_[1] : 0.0;
      if (per) continue;
      unsigned s = 0;
      if (i == 0) s |= x_low;
      if (i == n_[0] - 1) s |= x_high;
      if (dim_ == 2 && j == 0) s |= y_low;
      if (dim_ == 2 && j == n_[1] - 1) s |= y_high;
      side_[p] = s;
    }
  }
}

io::UniformGrid FpdeGrid::geometry() const {
  io::UniformGrid g;
  g.spacing = {h_[0], dim_ == 2 ? h_[1] : 1.0, 1.0};
  return g;
}

void FpdeGrid::evaluate(const core::Expression& expr, double t, const double* u,
                        double* out) const {
  if (x_.empty()) return;
  expr.evaluate_bulk(x_.size(), inputs_for(expr, t, x_.data(), y_.data(), u), out);
}

void FpdeGrid::evaluate_at(const core::Expression& expr, double t, std::size_t n, const double* xs,
                           const double* ys, double* out) {
  if (n == 0) return;
  expr.evaluate_bulk(n, inputs_for(expr, t, xs, ys, nullptr), out);
}

void FpdeGrid::evaluate(const FpdeFunction& f, double t, double* out) const {
  evaluate_at(f, t, x_.size(), x_.data(), y_.data(), out);
}

void FpdeGrid::evaluate(const FpdeSourceFunction& f, double t, const double* u, double* out) const {
  if (!f) {
    std::fill(out, out + x_.size(), 0.0);
    return;
  }
  for (std::size_t p = 0; p < x_.size(); ++p) out[p] = f(x_[p], y_[p], t, u[p]);
}

void FpdeGrid::evaluate_at(const FpdeFunction& f, double t, std::size_t n, const double* xs,
                           const double* ys, double* out) {
  if (!f) {
    std::fill(out, out + n, 0.0);
    return;
  }
  for (std::size_t k = 0; k < n; ++k) out[k] = f(xs[k], ys[k], t);
}

std::vector<PetscInt> FpdeGrid::ownership(int direction) const {
  if (direction == 1 && dim_ == 1) return {1};
  const PetscInt* lx = nullptr;
  const PetscInt* ly = nullptr;
  PetscInt px = 0, py = 0;
  FRACMFG_PETSC_CHECK(DMDAGetInfo(dm_, nullptr, nullptr, nullptr, nullptr, &px, &py, nullptr,
                                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr));
  FRACMFG_PETSC_CHECK(DMDAGetOwnershipRanges(dm_, &lx, &ly, nullptr));
  if (direction == 0) return {lx, lx + px};
  return {ly, ly + py};
}

la::DmHandle FpdeGrid::create_companion(PetscInt dof) const {
  const PetscInt* lx = nullptr;
  const PetscInt* ly = nullptr;
  PetscInt px = 0, py = 0;
  FRACMFG_PETSC_CHECK(DMDAGetInfo(dm_, nullptr, nullptr, nullptr, nullptr, &px, &py, nullptr,
                                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr));
  FRACMFG_PETSC_CHECK(DMDAGetOwnershipRanges(dm_, &lx, &ly, nullptr));
  const DMBoundaryType bt = periodic() ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;
  la::DmHandle out;
  if (dim_ == 1) {
    FRACMFG_PETSC_CHECK(DMDACreate1d(comm_, bt, n_[0], dof, 0, lx, out.out()));
  } else {
    FRACMFG_PETSC_CHECK(DMDACreate2d(comm_, bt, bt, DMDA_STENCIL_STAR, n_[0], n_[1], px, py, dof, 0,
                                     lx, ly, out.out()));
  }
  FRACMFG_PETSC_CHECK(DMSetUp(out));
  return out;
}

}  // namespace fracmfg::frac
