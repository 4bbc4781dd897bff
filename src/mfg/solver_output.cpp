#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/solver_impl.hpp"

// The results of the mfg fixed point: U and M as time series, the convergence history and
// the mass per level.

namespace fracmfg::mfg {

std::vector<double> Solver::Impl::gather(const std::vector<detail::VecPtr>& field, int n) {
  if (n < 0 || n > model->steps()) {
    throw Error("mfg: time level " + std::to_string(n) + " is outside 0.." +
                std::to_string(model->steps()));
  }
  if (!replicator) replicator = std::make_unique<detail::Replicator>(model->dm());
  std::vector<double> out;
  replicator->gather(field[static_cast<std::size_t>(n)].get(), out);
  return out;
}

std::vector<double> Solver::gather_u(int n) const {
  return impl_->gather(impl_->x.u, n);
}

std::vector<double> Solver::gather_m(int n) const {
  return impl_->gather(impl_->x.m, n);
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
  const detail::HistoryArrays a = detail::arrays_of(d.history);
  out.write_array("/convergence/u", a.change_u);
  out.write_array("/convergence/m", a.change_m);
  out.write_array("/convergence/damping", a.damping);
  out.write_array("/mfg/seconds", a.seconds);
  out.set_attribute_int64("/convergence", "iterations", iterations());
  // The method that ran last: iteration.method as resolved (auto: two_grid or fixed_point),
  // fixed_point after a fall-back (its iterations have /convergence/damping below 1).
  out.set_attribute_string("/convergence", "method", io::to_string(d.problem().iteration.method));
  out.set_attribute_int64("/convergence", "converged", d.converged ? 1 : 0);
  out.set_attribute_double("/convergence", "tolerance", d.problem().iteration.tolerance);
  std::vector<double> mass;
  for (int n = 0; n <= nt; ++n) mass.push_back(d.model->mass(d.x.m[n].get()));
  out.write_array("/mfg/mass", mass);
  out.write_array("/mfg/outflow", outflow());
  if (d.model->has_obstacle()) {
    // The obstacle mask in natural order (x fastest), as the fields' points.
    detail::VecPtr mask = detail::global_vec(dm);
    {
      detail::WriteArray values(mask.get());
      const std::vector<unsigned char>& wall = d.model->wall();
      for (std::size_t k = 0; k < wall.size(); ++k) values[static_cast<PetscInt>(k)] = wall[k];
    }
    std::vector<detail::VecPtr> one;
    one.push_back(std::move(mask));
    out.write_array("/mfg/obstacle", impl_->gather(one, 0));
  }
}

}  // namespace fracmfg::mfg
