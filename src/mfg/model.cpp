#include "fracmfg/mfg/model.hpp"

#include <array>
#include <cmath>
#include <sstream>
#include <string>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "mfg/petsc_handles.hpp"

namespace fracmfg::mfg {

namespace {

using detail::VecPtr;

struct Source {
  bool zero = true;
  bool timed = false;
  std::vector<double> data;  // one level (not timed) or N_t + 1 levels of the owned points
};

std::string format_point(const Grid& grid, double x, double y, double z) {
  std::ostringstream os;
  os.precision(6);
  os << "x = " << x;
  if (grid.dim >= 2) os << ", y = " << y;
  if (grid.dim == 3) os << ", z = " << z;
  return os.str();
}

// A field's name in messages: its own (a deck key), else the Problem member.
std::string name_of(const Field& field, const char* member) {
  return field.name_or(std::string("problem.") + member);
}

std::string format_value(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

}  // namespace

struct Model::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  Problem problem;
  Grid grid;
  exec::DmPtr dm;
  OwnedBox box;
  std::vector<double> x, y, z, inv_c;
  VecPtr potential, terminal, initial;
  Source hjb, fp, potential_levels;
  std::vector<double> potential0;                 // V at t = 0, owned points
  std::vector<unsigned char> wall, wall_ghosted;  // obstacle masks; empty: no obstacle
  // Exit cost per side (axis * 2 + end): N_t + 1 levels of the owned faces of that side.
  std::array<std::vector<double>, io::MfgConfig::Domain::kMaxSides> exit;
  std::array<std::size_t, io::MfgConfig::Domain::kMaxSides> exit_count{};
  mutable double work = 0.0;  // work_seconds()
  bool account_work = false;  // work_accounting()

  // The field's values at the owned points at time t.
  std::vector<double> sample(const Field& field, double t) const {
    std::vector<double> out(x.size());
    field.evaluate(grid, x.size(), x.data(), y.data(), z.data(), t, out.data());
    return out;
  }

  // Throws UsageError at the first owned point where ok(value) is false.
  template <class Ok>
  void require(const std::vector<double>& values, const std::string& name, const char* what, Ok ok,
               double t = -1.0) const {
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (!ok(values[k])) {
        std::string at = format_point(grid, x[k], y[k], z[k]);
        if (t >= 0.0) at += ", t = " + format_value(t);
        throw UsageError(name + ": must be " + what + " on the grid, but is " +
                         format_value(values[k]) + " at " + at);
      }
    }
  }

  VecPtr to_vec(const std::vector<double>& values) const {
    VecPtr v = detail::global_vec(dm.get());
    detail::WriteArray a(v.get());
    for (std::size_t k = 0; k < values.size(); ++k) a[static_cast<PetscInt>(k)] = values[k];
    return v;
  }

  Source sample_source(const Field& field, const std::string& name, int steps, double dt) const {
    Source s;
    if (field.is_zero()) return s;
    s.zero = false;
    s.timed = field.time_dependent();
    const int levels = s.timed ? steps + 1 : 1;
    s.data.reserve(static_cast<std::size_t>(levels) * x.size());
    for (int n = 0; n < levels; ++n) {
      const double t = dt * n;
      const auto values = sample(field, t);
      require(
          values, name, "finite", [](double v) { return std::isfinite(v); }, s.timed ? t : -1.0);
      s.data.insert(s.data.end(), values.begin(), values.end());
    }
    return s;
  }

  // The obstacle masks: owned points where O > 0, and the same on the ghosted box.
  void sample_obstacle(const Field& obstacle) {
    if (obstacle.is_zero()) return;
    const auto o = sample(obstacle, 0.0);
    require(o, name_of(obstacle, "obstacle"), "finite", [](double v) { return std::isfinite(v); });
    wall.resize(o.size());
    VecPtr g = detail::global_vec(dm.get());
    {
      detail::WriteArray a(g.get());
      for (std::size_t k = 0; k < o.size(); ++k) {
        wall[k] = o[k] > 0.0 ? 1 : 0;
        a[static_cast<PetscInt>(k)] = wall[k];
      }
    }
    VecPtr l = detail::local_vec(dm.get());
    FRACMFG_PETSC_CHECK(VecSet(l.get(), 0.0));
    FRACMFG_PETSC_CHECK(DMGlobalToLocalBegin(dm.get(), g.get(), INSERT_VALUES, l.get()));
    FRACMFG_PETSC_CHECK(DMGlobalToLocalEnd(dm.get(), g.get(), INSERT_VALUES, l.get()));
    PetscInt nl = 0;
    FRACMFG_PETSC_CHECK(VecGetLocalSize(l.get(), &nl));
    wall_ghosted.resize(static_cast<std::size_t>(nl));
    detail::ReadArray a(l.get());
    for (PetscInt k = 0; k < nl; ++k)
      wall_ghosted[static_cast<std::size_t>(k)] = a[k] > 0.5 ? 1 : 0;
  }

  // The exit cost at the owned faces of every exit side, at every time level: the owned
  // points next to the side, in the order of ExitFaces::face_offset (the owned box with the
  // side's axis left out, x fastest), each at its face's centre.
  void sample_exits(const Field& cost, int steps, double step) {
    const PetscInt first[3] = {box.xs, box.ys, box.zs};
    const PetscInt owned[3] = {box.xm, box.ym, box.zm};
    for (int s = 0; s < 2 * grid.dim; ++s) {
      const int axis = s / 2, end = s % 2;
      if (grid.side(axis, end) != Boundary::exit) continue;
      const PetscInt edge = end == 0 ? 0 : grid.points[axis] - 1;
      if (edge < first[axis] || edge >= first[axis] + owned[axis]) continue;
      const double face = end == 0 ? 0.0 : grid.length[axis];
      std::vector<double> f[3];
      for (PetscInt l = 0; l < box.zm; ++l) {
        for (PetscInt j = 0; j < box.ym; ++j) {
          for (PetscInt i = 0; i < box.xm; ++i) {
            const PetscInt at[3] = {i, j, l};
            if (at[axis] != edge - first[axis]) continue;
            const auto k = static_cast<std::size_t>((l * box.ym + j) * box.xm + i);
            const double point[3] = {x[k], y[k], z[k]};
            for (int a = 0; a < 3; ++a) f[a].push_back(a == axis ? face : point[a]);
          }
        }
      }
      auto& out = exit[static_cast<std::size_t>(s)];
      const std::size_t count = f[0].size();
      exit_count[static_cast<std::size_t>(s)] = count;
      out.assign(count * static_cast<std::size_t>(steps + 1), 0.0);
      for (int n = 0; n <= steps; ++n) {
        double* level_values = out.data() + static_cast<std::size_t>(n) * count;
        cost.evaluate(grid, count, f[0].data(), f[1].data(), f[2].data(), step * n, level_values);
        for (std::size_t t = 0; t < count; ++t) {
          if (!std::isfinite(level_values[t])) {
            throw UsageError(
                name_of(cost, "exit_cost") + ": must be finite on the exit faces, but is " +
                format_value(level_values[t]) + " at " +
                format_point(grid, f[0][t], f[1][t], f[2][t]) + ", t = " + format_value(step * n));
          }
        }
      }
    }
  }

  const double* level(const Source& s, int n) const {
    if (s.zero) return nullptr;
    return s.timed ? s.data.data() + static_cast<std::size_t>(n) * x.size() : s.data.data();
  }
};

Model::Model(MPI_Comm comm, const Problem& problem, const std::vector<PetscInt>& lx,
             const std::vector<PetscInt>& ly, const std::vector<PetscInt>& lz)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.comm = comm;
  d.problem = problem;
  d.grid = Grid::make(problem.domain, problem.grid);
  if (problem.time.steps < 1 || !(problem.time.horizon > 0.0)) {
    throw Error("mfg: time.horizon must be > 0 and time.steps >= 1");
  }
  check_problem(problem);
  d.dm = create_dmda(comm, d.grid, lx, ly, lz);
  d.box = owned_box(d.dm.get());
  const auto n = static_cast<std::size_t>(d.box.count());
  d.x.resize(n);
  d.y.resize(n);
  d.z.resize(n);
  for (PetscInt l = 0; l < d.box.zm; ++l) {
    for (PetscInt j = 0; j < d.box.ym; ++j) {
      for (PetscInt i = 0; i < d.box.xm; ++i) {
        const auto k = static_cast<std::size_t>((l * d.box.ym + j) * d.box.xm + i);
        d.x[k] = d.grid.coordinate(0, d.box.xs + i);
        d.y[k] = d.grid.dim >= 2 ? d.grid.coordinate(1, d.box.ys + j) : 0.0;
        d.z[k] = d.grid.dim == 3 ? d.grid.coordinate(2, d.box.zs + l) : 0.0;
      }
    }
  }

  // Sample and check every field; a violation on any rank is reported by every rank.
  std::vector<double> c, v, g, m0;
  core::collective(comm, [&] {
    c = d.sample(problem.hamiltonian.control_cost, 0.0);
    d.require(c, name_of(problem.hamiltonian.control_cost, "hamiltonian.control_cost"),
              "finite and > 0", [](double s) { return std::isfinite(s) && s > 0.0; });
    v = d.sample(problem.coupling.potential, 0.0);
    d.require(v, name_of(problem.coupling.potential, "coupling.potential"), "finite",
              [](double s) { return std::isfinite(s); });
    if (problem.coupling.potential.time_dependent()) {
      d.potential_levels = d.sample_source(
          problem.coupling.potential, name_of(problem.coupling.potential, "coupling.potential"),
          problem.time.steps, dt());
    }
    g = d.sample(problem.terminal_cost, 0.0);
    d.require(g, name_of(problem.terminal_cost, "terminal_cost"), "finite",
              [](double s) { return std::isfinite(s); });
    m0 = d.sample(problem.initial_density, 0.0);
    d.require(m0, name_of(problem.initial_density, "initial_density"), "finite and >= 0",
              [](double s) { return std::isfinite(s) && s >= 0.0; });
    d.hjb = d.sample_source(problem.sources.hjb, name_of(problem.sources.hjb, "sources.hjb"),
                            problem.time.steps, dt());
    d.fp = d.sample_source(problem.sources.fp, name_of(problem.sources.fp, "sources.fp"),
                           problem.time.steps, dt());
    d.sample_obstacle(problem.obstacle);
    d.sample_exits(problem.exit_cost, problem.time.steps, dt());
  });
  if (!d.wall.empty()) {
    // No agents inside the obstacle: m0 and the Fokker-Planck source vanish there.
    for (std::size_t k = 0; k < n; ++k) {
      if (d.wall[k] == 0) continue;
      m0[k] = 0.0;
      if (!d.fp.zero) {
        const int levels = d.fp.timed ? problem.time.steps + 1 : 1;
        for (int l = 0; l < levels; ++l) d.fp.data[static_cast<std::size_t>(l) * n + k] = 0.0;
      }
    }
  }
  d.inv_c.resize(n);
  for (std::size_t k = 0; k < n; ++k) d.inv_c[k] = 1.0 / c[k];
  d.potential = d.to_vec(v);
  d.potential0 = v;
  d.terminal = d.to_vec(g);
  d.initial = d.to_vec(m0);
  const double total = mass(d.initial.get());
  if (!(total > 0.0) || !std::isfinite(total)) {
    throw core::CollectiveError(
        name_of(problem.initial_density, "initial_density") +
            ": has no mass on the grid points (sum m0 * cell volume = " + format_value(total) + ")",
        ExitCode::usage, 0);
  }
  FRACMFG_PETSC_CHECK(VecScale(d.initial.get(), 1.0 / total));
}

Model::~Model() = default;

MPI_Comm Model::comm() const {
  return impl_->comm;
}
const Problem& Model::problem() const {
  return impl_->problem;
}
const Grid& Model::grid() const {
  return impl_->grid;
}
DM Model::dm() const {
  return impl_->dm.get();
}
const OwnedBox& Model::box() const {
  return impl_->box;
}
int Model::steps() const {
  return impl_->problem.time.steps;
}
double Model::dt() const {
  return impl_->problem.time.horizon / impl_->problem.time.steps;
}
double Model::diffusion() const {
  return impl_->problem.diffusion;
}
double Model::diffusion_order() const {
  return impl_->problem.diffusion_order;
}
const std::vector<double>& Model::x() const {
  return impl_->x;
}
const std::vector<double>& Model::y() const {
  return impl_->y;
}
const std::vector<double>& Model::z() const {
  return impl_->z;
}
const std::vector<double>& Model::inverse_control_cost() const {
  return impl_->inv_c;
}
Vec Model::potential() const {
  return impl_->potential.get();
}
Vec Model::terminal_cost() const {
  return impl_->terminal.get();
}
Vec Model::initial_density() const {
  return impl_->initial.get();
}
double Model::terminal_coupling() const {
  return impl_->problem.terminal_coupling;
}
const double* Model::hjb_source(int n) const {
  return impl_->level(impl_->hjb, n);
}
const double* Model::fp_source(int n) const {
  return impl_->level(impl_->fp, n);
}
bool Model::has_fp_source() const {
  return !impl_->fp.zero;
}
const double* Model::potential_values(int n) const {
  if (impl_->potential_levels.zero) return impl_->potential0.data();  // not time dependent
  return impl_->level(impl_->potential_levels, n);
}
bool Model::has_obstacle() const {
  return !impl_->wall.empty();
}
const std::vector<unsigned char>& Model::wall() const {
  return impl_->wall;
}
const std::vector<unsigned char>& Model::wall_ghosted() const {
  return impl_->wall_ghosted;
}
const double* Model::exit_cost(int side, int n) const {
  const auto s = static_cast<std::size_t>(side);
  if (s >= impl_->exit.size() || impl_->exit[s].empty()) return nullptr;
  return impl_->exit[s].data() + static_cast<std::size_t>(n) * impl_->exit_count[s];
}

double Model::work_seconds() const {
  return impl_->work;
}
void Model::add_work(double seconds) const {
  impl_->work += seconds;
}
bool Model::work_accounting() const {
  return impl_->account_work;
}
void Model::set_work_accounting(bool on) {
  impl_->account_work = on;
}

double Model::mass(Vec v) const {
  PetscScalar s = 0.0;
  FRACMFG_PETSC_CHECK(VecSum(v, &s));
  return s * impl_->grid.cell_volume();
}

}  // namespace fracmfg::mfg
