#include "fracmfg/mfg/particles.hpp"

#include <mpi.h>
#include <petscdmda.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/kernel_workloads.hpp"
#include "fracmfg/exec/partition.hpp"
#include "fracmfg/exec/rebalancer.hpp"
#include "fracmfg/kernels/kde.hpp"
#include "fracmfg/kernels/particle_step.hpp"
#include "mfg/kde_dispatch.hpp"
#include "mfg/petsc_handles.hpp"

namespace fracmfg::mfg {

namespace {

constexpr std::int64_t kOne = std::int64_t{1} << 32;  // fixed-point mass of a particle

// Weighted quantile of a binned distribution on points x_j = origin + j h whose mass is
// spread uniformly over each cell [x_j - h/2, x_j + h/2].
double quantile(const std::vector<double>& mass, double origin, double h, double q) {
  double c = 0.0;
  for (std::size_t j = 0; j < mass.size(); ++j) {
    if (mass[j] > 0.0 && c + mass[j] >= q) {
      return origin + (static_cast<double>(j) - 0.5) * h + h * (q - c) / mass[j];
    }
    c += mass[j];
  }
  return origin + (static_cast<double>(mass.size()) - 0.5) * h;
}

// Silverman-type bandwidth of one axis from its marginal binned distribution (mass 1).
double rule_of_thumb(const std::vector<double>& mass, double origin, double h, double n, int dim) {
  double mean = 0.0;
  for (std::size_t j = 0; j < mass.size(); ++j) mean += mass[j] * (origin + j * h);
  double var = 0.0;
  for (std::size_t j = 0; j < mass.size(); ++j) {
    const double d = origin + j * h - mean;
    var += mass[j] * d * d;
  }
  var += h * h / 12.0;  // the spread inside the cells
  const double sigma = std::sqrt(var);
  const double iqr = quantile(mass, origin, h, 0.75) - quantile(mass, origin, h, 0.25);
  const double spread = iqr > 0.0 ? std::min(sigma, iqr / 1.34) : sigma;
  const double bw = dim == 1 ? 0.9 * spread * std::pow(n, -0.2) : spread * std::pow(n, -1.0 / 6);
  return std::max(bw, h);
}

}  // namespace

struct ParticleFokkerPlanck::Impl {
  const Model& model;
  exec::Selector* selector = nullptr;
  core::Logger log;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  Grid g;
  bool periodic = true;
  std::int64_t total = 0, first = 0, count = 0;
  std::uint64_t seed = 1;
  double fixed_bandwidth = 0.0;
  std::array<double, 2> last_bandwidth{0.0, 0.0};
  // The positions live where the last particle step ran: in px, py, or on the rank's
  // device while `device` is resident (px, py are then a stale or refreshed copy). A sweep's
  // positions are drawn by its first kernel call (draw_pending), where that call runs.
  std::vector<double> px, py;
  bool host_current = true;  ///< px, py hold the current positions
  bool draw_pending = false;
  std::optional<kernels::ParticleDevice> device;
  // replicated grid data (natural order)
  std::vector<double> inv_c, cdf, u_all, dx_face, dy_face;
  std::vector<std::int64_t> bins;
  std::vector<double> node_x, node_y, weights, dens;
  std::unique_ptr<detail::Replicator> replicator;
  std::unique_ptr<exec::Rebalancer> rebalancer;
  exec::KernelId kernel, step_kernel;
  double sweep_seconds = 0.0;
  bool swept = false;

  Impl(const Model& m, exec::Selector* s, core::Logger l)
      : model(m), selector(s), log(l), comm(m.comm()), g(m.grid()) {}

  // A global Vec of the model's DMDA, replicated in natural order.
  std::vector<double> replicate(Vec v) {
    std::vector<double> out;
    replicator->gather(v, out);
    return out;
  }

  // One-sided differences of u on the faces of each axis (0 on reflecting walls).
  void differences() {
    const std::int64_t nx = g.points[0], ny = g.dim == 2 ? g.points[1] : 1;
    const double ihx = 1.0 / g.spacing(0);
    const std::int64_t fx = periodic ? nx : nx + 1;
    dx_face.assign(static_cast<std::size_t>(fx * ny), 0.0);
    for (std::int64_t j = 0; j < ny; ++j) {
      const double* row = u_all.data() + j * nx;
      double* out = dx_face.data() + j * fx;
      if (periodic) {
        for (std::int64_t i = 0; i < nx; ++i) out[i] = (row[(i + 1) % nx] - row[i]) * ihx;
      } else {
        for (std::int64_t i = 1; i < nx; ++i) out[i] = (row[i] - row[i - 1]) * ihx;
      }
    }
    if (g.dim != 2) return;
    const double ihy = 1.0 / g.spacing(1);
    const std::int64_t fy = periodic ? ny : ny + 1;
    dy_face.assign(static_cast<std::size_t>(nx * fy), 0.0);  // [face j][i]
    if (periodic) {
      for (std::int64_t j = 0; j < ny; ++j) {
        for (std::int64_t i = 0; i < nx; ++i) {
          dy_face[static_cast<std::size_t>(j * nx + i)] =
              (u_all[static_cast<std::size_t>(((j + 1) % ny) * nx + i)] -
               u_all[static_cast<std::size_t>(j * nx + i)]) *
              ihy;
        }
      }
    } else {
      for (std::int64_t j = 1; j < ny; ++j) {
        for (std::int64_t i = 0; i < nx; ++i) {
          dy_face[static_cast<std::size_t>(j * nx + i)] =
              (u_all[static_cast<std::size_t>(j * nx + i)] -
               u_all[static_cast<std::size_t>((j - 1) * nx + i)]) *
              ihy;
        }
      }
    }
  }

  kernels::ParticleAxis particle_axis(int a) const {
    kernels::ParticleAxis ax;
    ax.origin = g.origin(a);
    ax.spacing = g.spacing(a);
    ax.length = g.length[static_cast<std::size_t>(a)];
    ax.points = g.points[static_cast<std::size_t>(a)];
    ax.periodic = periodic;
    return ax;
  }

  /// The kernel call of this rank's particles: a pending draw, a move with u^n when `move`
  /// (noise counter n + 1), and the binning into `bins`.
  kernels::ParticleStep particle_call(bool move, int n) {
    kernels::ParticleStep s;
    s.dim = g.dim;
    s.axis[0] = particle_axis(0);
    if (g.dim == 2) s.axis[1] = particle_axis(1);
    s.seed = seed;
    s.first = first;
    s.count = count;
    s.draw = draw_pending;
    s.move = move;
    s.step = static_cast<std::uint32_t>(n + 1);
    s.dt = model.dt();
    s.noise = std::sqrt(2.0 * model.diffusion() * s.dt);
    s.cdf = cdf.data();
    s.inv_c = inv_c.data();
    s.dx_face = move ? dx_face.data() : nullptr;
    s.dy_face = move && g.dim == 2 ? dy_face.data() : nullptr;
    s.bins = bins.data();
    return s;
  }

  /// Brings device-resident positions home (a call placed on the host); `keep`: the device
  /// copy stays authoritative (a refresh for a reader of x(), y()).
  void to_host(bool keep) {
    if (!device || !device->resident()) return;
    if (!host_current) {
      px.resize(static_cast<std::size_t>(device->count()));
      py.resize(g.dim == 2 ? px.size() : 0);
      device->download(px.data(), py.data());
      host_current = true;
    }
    if (!keep) device->drop();
  }

  /// The particle step on the host: the positions in px, py.
  void host_call(kernels::ParticleStep& s) {
    if (s.draw) {
      if (device) device->drop();  // the old positions are replaced
    } else {
      to_host(false);
    }
    px.resize(static_cast<std::size_t>(count));
    py.resize(g.dim == 2 ? px.size() : 0);
    s.x = px.data();
    s.y = g.dim == 2 ? py.data() : nullptr;
    kernels::particle_step_host(s);
    host_current = true;
  }

  /// Runs one particle call where the rank's selector places it (the host without one),
  /// moving the positions when the placement changes; bins holds this rank's mass after.
  void run_particles(bool move, int n) {
    kernels::ParticleStep s = particle_call(move, n);
    if (selector == nullptr) {
      host_call(s);
    } else {
      const bool resident = device && device->resident();
      const auto faces = kernels::particle_x_faces(s) + kernels::particle_y_faces(s);
      const exec::Workload w = exec::particle_step_workload(step_kernel, g.dim, count, g.size(),
                                                            faces, s.draw, move, resident);
      selector->run(
          w, [&] { host_call(s); },
          [&] {
            if (!device) device.emplace(selector->device().device, g.dim, s.axis[0], s.axis[1]);
            if (!device->has_constants()) device->set_constants(cdf.data(), inv_c.data());
            if (!s.draw && !device->resident()) device->upload(px.data(), py.data(), count);
            device->run(s);
            if (s.draw || move) host_current = false;  // a binning alone moves nothing
          });
    }
    draw_pending = false;
  }

  /// The current positions in px, py (a pending draw done on the host).
  void sync_host() {
    if (draw_pending) {
      kernels::ParticleStep s = particle_call(false, 0);
      s.bins = nullptr;
      host_call(s);
      draw_pending = false;
      return;
    }
    to_host(true);
  }

  /// Sums this rank's bins over the ranks.
  void reduce_bins() {
    // Integer sums: exact, hence the same for any split of the particles over the ranks.
    MPI_Allreduce(MPI_IN_PLACE, bins.data(), static_cast<int>(bins.size()), MPI_INT64_T, MPI_SUM,
                  comm);
  }

  /// The density of the binned particles (this rank's bins) into m.
  void estimate(Vec m) {
    reduce_bins();
    const double scale = 1.0 / (static_cast<double>(total) * static_cast<double>(kOne));
    for (std::size_t k = 0; k < bins.size(); ++k) weights[k] = static_cast<double>(bins[k]) * scale;
    // Bandwidth per axis.
    std::array<double, 2> h{fixed_bandwidth, fixed_bandwidth};
    if (fixed_bandwidth <= 0.0) {
      const std::int64_t nx = g.points[0], ny = g.dim == 2 ? g.points[1] : 1;
      std::vector<double> mx(static_cast<std::size_t>(nx), 0.0),
          my(static_cast<std::size_t>(ny), 0.0);
      for (std::int64_t j = 0; j < ny; ++j) {
        for (std::int64_t i = 0; i < nx; ++i) {
          mx[static_cast<std::size_t>(i)] += weights[static_cast<std::size_t>(j * nx + i)];
          my[static_cast<std::size_t>(j)] += weights[static_cast<std::size_t>(j * nx + i)];
        }
      }
      const auto n = static_cast<double>(total);
      h[0] = rule_of_thumb(mx, g.origin(0), g.spacing(0), n, g.dim);
      if (g.dim == 2) h[1] = rule_of_thumb(my, g.origin(1), g.spacing(1), n, g.dim);
    }
    if (g.dim == 1) h[1] = 0.0;
    last_bandwidth = h;
    auto axis = [&](int a) {
      kernels::KdeAxis ax;
      ax.origin = g.origin(a);
      ax.spacing = g.spacing(a);
      ax.points = g.points[a];
      ax.boundary = periodic ? kernels::KdeBoundary::periodic : kernels::KdeBoundary::reflecting;
      ax.bandwidth = std::max(h[static_cast<std::size_t>(a)], ax.spacing);
      return ax;
    };
    const kernels::KdeGrid grid =
        g.dim == 2 ? kernels::kde_grid_2d(axis(0), axis(1)) : kernels::kde_grid_1d(axis(0));
    kernels::KdeSamples s;
    s.count = static_cast<std::int64_t>(node_x.size());
    s.x = node_x.data();
    s.y = g.dim == 2 ? node_y.data() : nullptr;
    s.weight = weights.data();
    detail::kde_on_rank(selector, kernel, grid, s, dens.data());
    const OwnedBox& b = model.box();
    detail::WriteArray out(m);
    for (PetscInt j = 0; j < b.ym; ++j) {
      for (PetscInt i = 0; i < b.xm; ++i) {
        out[j * b.xm + i] = dens[static_cast<std::size_t>((b.ys + j) * g.points[0] + b.xs + i)];
      }
    }
  }

  void split(const std::vector<std::int64_t>& counts) {
    first = 0;
    for (int r = 0; r < rank; ++r) first += counts[static_cast<std::size_t>(r)];
    count = counts[static_cast<std::size_t>(rank)];
  }
};

ParticleFokkerPlanck::ParticleFokkerPlanck(const Model& model, exec::Selector* selector,
                                           core::Logger log)
    : impl_(std::make_unique<Impl>(model, selector, log)) {
  Impl& d = *impl_;
  if (model.fp_source(0) != nullptr) {
    throw core::CollectiveError(
        model.problem().sources.fp.name_or("problem.sources.fp") +
            ": a Fokker-Planck source is not supported with fokker_planck.method particles "
            "(particles carry a fixed mass); use method fdm",
        ExitCode::usage, 0);
  }
  MPI_Comm_rank(d.comm, &d.rank);
  MPI_Comm_size(d.comm, &d.size);
  d.periodic = d.g.boundary == Boundary::periodic;
  const auto& fp = model.problem().fokker_planck;
  d.total = fp.particles;
  d.seed = static_cast<std::uint64_t>(fp.seed);
  d.fixed_bandwidth = fp.bandwidth;
  d.split(exec::apportion(std::vector<double>(static_cast<std::size_t>(d.size), 1.0), d.total, 0));
  exec::RebalanceOptions ro;
  ro.min_per_rank = 0;
  d.rebalancer = std::make_unique<exec::Rebalancer>(d.comm, ro, log);

  d.replicator = std::make_unique<detail::Replicator>(model.dm());

  // 1/c and the cumulative distribution of m0, replicated.
  detail::VecPtr ic = detail::global_vec(model.dm());
  {
    detail::WriteArray a(ic.get());
    const auto& v = model.inverse_control_cost();
    for (std::size_t k = 0; k < v.size(); ++k) a[static_cast<PetscInt>(k)] = v[k];
  }
  d.inv_c = d.replicate(ic.get());
  d.cdf = d.replicate(model.initial_density());
  for (std::size_t k = 1; k < d.cdf.size(); ++k) d.cdf[k] += d.cdf[k - 1];

  const std::size_t n = static_cast<std::size_t>(d.g.size());
  d.bins.assign(n, 0);
  d.weights.assign(n, 0.0);
  d.dens.assign(n, 0.0);
  d.node_x.resize(n);
  d.node_y.resize(n);
  for (PetscInt j = 0; j < d.g.points[1]; ++j) {
    for (PetscInt i = 0; i < d.g.points[0]; ++i) {
      const auto k = static_cast<std::size_t>(j * d.g.points[0] + i);
      d.node_x[k] = d.g.coordinate(0, i);
      d.node_y[k] = d.g.dim == 2 ? d.g.coordinate(1, j) : 0.0;
    }
  }
  if (selector != nullptr) {
    d.kernel = selector->kernel(exec::kernel_names::mfg_particle_kde);
    d.step_kernel = selector->kernel(exec::kernel_names::mfg_particle_step);
  }
}

ParticleFokkerPlanck::~ParticleFokkerPlanck() = default;

void ParticleFokkerPlanck::begin() {
  Impl& d = *impl_;
  if (d.swept) {
    const exec::RebalanceDecision& r =
        d.rebalancer->observe(d.sweep_seconds, static_cast<PetscInt>(d.count));
    if (r.resplit) {
      d.split(std::vector<std::int64_t>(r.counts.begin(), r.counts.end()));
      d.log.info("mfg particles: re-split over the ranks, this rank now moves ", d.count);
    }
  }
  d.sweep_seconds = 0.0;
  d.swept = true;
  d.draw_pending = true;  // drawn by the next particle call, where it runs
}

void ParticleFokkerPlanck::step(int n, Vec u, Vec m_next) {
  Impl& d = *impl_;
  d.replicator->gather(u, d.u_all);  // reuses u_all's storage
  d.differences();
  const double t0 = MPI_Wtime();
  d.run_particles(true, n);
  d.sweep_seconds += MPI_Wtime() - t0;
  d.estimate(m_next);
}

void ParticleFokkerPlanck::density(Vec m) {
  impl_->run_particles(false, 0);
  impl_->estimate(m);
}

std::int64_t ParticleFokkerPlanck::total() const {
  return impl_->total;
}
std::int64_t ParticleFokkerPlanck::first() const {
  return impl_->first;
}
std::int64_t ParticleFokkerPlanck::count() const {
  return impl_->count;
}
const std::vector<double>& ParticleFokkerPlanck::x() const {
  impl_->sync_host();
  return impl_->px;
}
const std::vector<double>& ParticleFokkerPlanck::y() const {
  impl_->sync_host();
  return impl_->py;
}
std::array<double, 2> ParticleFokkerPlanck::bandwidth() const {
  return impl_->last_bandwidth;
}

}  // namespace fracmfg::mfg
