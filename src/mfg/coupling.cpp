#include "fracmfg/mfg/coupling.hpp"

#include <petscdmda.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/kernels/kde.hpp"
#include "mfg/kde_dispatch.hpp"
#include "mfg/petsc_handles.hpp"

namespace fracmfg::mfg {

namespace {
constexpr double kLogFloor = 1e-300;
}

struct Coupling::Impl {
  const Model& model;
  exec::Selector* selector = nullptr;
  Problem::Coupling cfg;
  // nonlocal: m gathered in natural order on every rank, the grid points as samples
  std::unique_ptr<detail::Replicator> replicator;
  std::vector<double> sample_x, sample_y, weights, density;
  kernels::KdeGrid kde_grid;
  exec::KernelId kernel;

  Impl(const Model& m, exec::Selector* s) : model(m), selector(s), cfg(m.problem().coupling) {}

  void setup_nonlocal() {
    const Grid& g = model.grid();
    replicator = std::make_unique<detail::Replicator>(model.dm());
    const PetscInt total = g.size();
    sample_x.resize(static_cast<std::size_t>(total));
    sample_y.resize(static_cast<std::size_t>(total));
    for (PetscInt j = 0; j < g.points[1]; ++j) {
      for (PetscInt i = 0; i < g.points[0]; ++i) {
        const auto k = static_cast<std::size_t>(j * g.points[0] + i);
        sample_x[k] = g.coordinate(0, i);
        sample_y[k] = g.dim == 2 ? g.coordinate(1, j) : 0.0;
      }
    }
    weights.resize(sample_x.size());
    density.resize(sample_x.size());
    auto axis = [&](int a) {
      // Exits and walls alike: the kernel is reflected at the side (an approximation at exits).
      const auto boundary =
          g.periodic(a) ? kernels::KdeBoundary::periodic : kernels::KdeBoundary::reflecting;
      kernels::KdeAxis ax;
      ax.origin = g.origin(a);
      ax.spacing = g.spacing(a);
      ax.points = g.points[a];
      ax.boundary = boundary;
      ax.bandwidth = cfg.width;
      return ax;
    };
    kde_grid = g.dim == 2 ? kernels::kde_grid_2d(axis(0), axis(1)) : kernels::kde_grid_1d(axis(0));
    if (selector != nullptr) kernel = selector->kernel("mfg_nonlocal_coupling");
  }

  void convolve(Vec m) {
    Vec full = replicator->gather(m);
    const double vol = model.grid().cell_volume();
    {
      detail::ReadArray a(full);
      for (std::size_t k = 0; k < weights.size(); ++k)
        weights[k] = a[static_cast<PetscInt>(k)] * vol;
    }
    kernels::KdeSamples s;
    s.count = static_cast<std::int64_t>(sample_x.size());
    s.x = sample_x.data();
    s.y = model.grid().dim == 2 ? sample_y.data() : nullptr;
    s.weight = weights.data();
    detail::kde_on_rank(selector, kernel, kde_grid, s, density.data());
  }
};

Coupling::Coupling(const Model& model, exec::Selector* selector)
    : impl_(std::make_unique<Impl>(model, selector)) {
  if (impl_->cfg.type == io::MfgConfig::Coupling::Type::nonlocal) impl_->setup_nonlocal();
}

Coupling::~Coupling() = default;

void Coupling::evaluate(Vec m, Vec out, int n_level) {
  Impl& d = *impl_;
  using Type = io::MfgConfig::Coupling::Type;
  const double s = d.cfg.strength;
  const OwnedBox& b = d.model.box();
  if (d.cfg.type == Type::nonlocal) d.convolve(m);
  detail::ReadArray mm(m);
  const double* v = d.model.potential_values(n_level);
  detail::WriteArray o(out);
  const PetscInt n = b.count();
  if (s == 0.0) {
    for (PetscInt k = 0; k < n; ++k) o[k] = v[k];
    return;
  }
  switch (d.cfg.type) {
    case Type::log:
      for (PetscInt k = 0; k < n; ++k) o[k] = s * std::log(std::max(mm[k], kLogFloor)) + v[k];
      break;
    case Type::power: {
      const double e = d.cfg.exponent;
      if (e == 1.0) {
        for (PetscInt k = 0; k < n; ++k) o[k] = s * std::max(mm[k], 0.0) + v[k];
      } else {
        for (PetscInt k = 0; k < n; ++k) o[k] = s * std::pow(std::max(mm[k], 0.0), e) + v[k];
      }
      break;
    }
    case Type::nonlocal: {
      const PetscInt nx = d.model.grid().points[0];
      for (PetscInt j = 0; j < b.ym; ++j) {
        for (PetscInt i = 0; i < b.xm; ++i) {
          const PetscInt k = j * b.xm + i;
          o[k] = s * d.density[static_cast<std::size_t>((b.ys + j) * nx + b.xs + i)] + v[k];
        }
      }
      break;
    }
  }
}

}  // namespace fracmfg::mfg
