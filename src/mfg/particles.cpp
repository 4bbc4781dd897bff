#include "fracmfg/mfg/particles.hpp"

#include <mpi.h>
#include <petscdmda.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/exec/partition.hpp"
#include "fracmfg/exec/rebalancer.hpp"
#include "fracmfg/kernels/kde.hpp"
#include "mfg/kde_dispatch.hpp"
#include "mfg/particle_item.hpp"
#include "mfg/petsc_handles.hpp"

namespace fracmfg::mfg {

namespace {

constexpr std::int64_t kOne = std::int64_t{1} << 32;  // fixed-point mass of a particle

// Streams of the counter: noise of a step, and the draws of the initial positions.
constexpr std::uint32_t kStreamNoise = 0, kStreamStart = 1, kStreamStart2 = 2;

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
  std::vector<double> px, py;
  // replicated grid data (natural order)
  std::vector<double> inv_c, cdf, u_all, dx_face, dy_face;
  std::vector<std::int64_t> bins;
  std::vector<double> node_x, node_y, weights, dens;
  std::unique_ptr<detail::Replicator> replicator;
  std::unique_ptr<exec::Rebalancer> rebalancer;
  exec::KernelId kernel;
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

  detail::Lattice node_lattice(int axis) const {
    return {g.origin(axis), g.spacing(axis), g.points[axis], periodic};
  }
  // Faces between points (periodic: (k + 1/2) h, k < N) or including the walls (k h, k <= N).
  detail::Lattice face_lattice(int axis) const {
    const double h = g.spacing(axis);
    return periodic ? detail::Lattice{0.5 * h, h, g.points[axis], true}
                    : detail::Lattice{0.0, h, g.points[axis] + 1, false};
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

  void draw_start() {
    const std::int64_t nx = g.points[0];
    px.resize(static_cast<std::size_t>(count));
    py.resize(g.dim == 2 ? static_cast<std::size_t>(count) : 0);
    const double total_mass = cdf.back();
    for (std::int64_t p = 0; p < count; ++p) {
      const auto id = static_cast<std::uint64_t>(first + p);
      const detail::RandomWords r = detail::philox(seed, id, 0, kStreamStart);
      const double pick = detail::uniform53(r.w[0], r.w[1]) * total_mass;
      auto cell =
          static_cast<std::int64_t>(std::upper_bound(cdf.begin(), cdf.end(), pick) - cdf.begin());
      cell = std::min<std::int64_t>(cell, static_cast<std::int64_t>(cdf.size()) - 1);
      const std::int64_t i = cell % nx, j = cell / nx;
      const double ox = detail::uniform53(r.w[2], r.w[3]) - 0.5;
      px[static_cast<std::size_t>(p)] =
          detail::into_domain(g.coordinate(0, i) + ox * g.spacing(0), g.length[0], periodic);
      if (g.dim == 2) {
        const detail::RandomWords r2 = detail::philox(seed, id, 0, kStreamStart2);
        const double oy = detail::uniform53(r2.w[0], r2.w[1]) - 0.5;
        py[static_cast<std::size_t>(p)] =
            detail::into_domain(g.coordinate(1, j) + oy * g.spacing(1), g.length[1], periodic);
      }
    }
  }

  void move(int n) {
    const double dt = model.dt();
    const double noise = std::sqrt(2.0 * model.diffusion() * dt);
    const detail::Lattice nx_l = node_lattice(0), fx_l = face_lattice(0);
    const std::int64_t nxp = g.points[0];
    const std::int64_t fx = fx_l.count;
    if (g.dim == 1) {
      for (std::int64_t p = 0; p < count; ++p) {
        double& x = px[static_cast<std::size_t>(p)];
        const detail::Stencil2 f = detail::locate(fx_l, x);
        const detail::Stencil2 c = detail::locate(nx_l, x);
        const double du = (1.0 - f.frac) * dx_face[static_cast<std::size_t>(f.lo)] +
                          f.frac * dx_face[static_cast<std::size_t>(f.hi)];
        const double ic = (1.0 - c.frac) * inv_c[static_cast<std::size_t>(c.lo)] +
                          c.frac * inv_c[static_cast<std::size_t>(c.hi)];
        double z1 = 0.0, z2 = 0.0;
        detail::normals(detail::philox(seed, static_cast<std::uint64_t>(first + p),
                                       static_cast<std::uint32_t>(n + 1), kStreamNoise),
                        z1, z2);
        x = detail::into_domain(x - du * ic * dt + noise * z1, g.length[0], periodic);
      }
      return;
    }
    const detail::Lattice ny_l = node_lattice(1), fy_l = face_lattice(1);
    for (std::int64_t p = 0; p < count; ++p) {
      double& x = px[static_cast<std::size_t>(p)];
      double& y = py[static_cast<std::size_t>(p)];
      const detail::Stencil2 fx_s = detail::locate(fx_l, x), nx_s = detail::locate(nx_l, x);
      const detail::Stencil2 fy_s = detail::locate(fy_l, y), ny_s = detail::locate(ny_l, y);
      auto at = [](const std::vector<double>& a, std::int64_t row, std::int64_t stride,
                   std::int64_t col) { return a[static_cast<std::size_t>(row * stride + col)]; };
      // d/dx on x-faces (rows: grid points in y), d/dy on y-faces (columns: points in x).
      const double dux =
          (1.0 - ny_s.frac) * ((1.0 - fx_s.frac) * at(dx_face, ny_s.lo, fx, fx_s.lo) +
                               fx_s.frac * at(dx_face, ny_s.lo, fx, fx_s.hi)) +
          ny_s.frac * ((1.0 - fx_s.frac) * at(dx_face, ny_s.hi, fx, fx_s.lo) +
                       fx_s.frac * at(dx_face, ny_s.hi, fx, fx_s.hi));
      const double duy =
          (1.0 - fy_s.frac) * ((1.0 - nx_s.frac) * at(dy_face, fy_s.lo, nxp, nx_s.lo) +
                               nx_s.frac * at(dy_face, fy_s.lo, nxp, nx_s.hi)) +
          fy_s.frac * ((1.0 - nx_s.frac) * at(dy_face, fy_s.hi, nxp, nx_s.lo) +
                       nx_s.frac * at(dy_face, fy_s.hi, nxp, nx_s.hi));
      const double ic = (1.0 - ny_s.frac) * ((1.0 - nx_s.frac) * at(inv_c, ny_s.lo, nxp, nx_s.lo) +
                                             nx_s.frac * at(inv_c, ny_s.lo, nxp, nx_s.hi)) +
                        ny_s.frac * ((1.0 - nx_s.frac) * at(inv_c, ny_s.hi, nxp, nx_s.lo) +
                                     nx_s.frac * at(inv_c, ny_s.hi, nxp, nx_s.hi));
      double z1 = 0.0, z2 = 0.0;
      detail::normals(detail::philox(seed, static_cast<std::uint64_t>(first + p),
                                     static_cast<std::uint32_t>(n + 1), kStreamNoise),
                      z1, z2);
      x = detail::into_domain(x - dux * ic * dt + noise * z1, g.length[0], periodic);
      y = detail::into_domain(y - duy * ic * dt + noise * z2, g.length[1], periodic);
    }
  }

  void bin_particles() {
    std::fill(bins.begin(), bins.end(), 0);
    const std::int64_t nx = g.points[0];
    if (g.dim == 1) {
      for (std::int64_t p = 0; p < count; ++p) {
        const detail::Bin b = detail::bin(px[static_cast<std::size_t>(p)], g.origin(0),
                                          g.spacing(0), nx, periodic, kOne);
        bins[static_cast<std::size_t>(b.lo)] += b.lower;
        bins[static_cast<std::size_t>(b.hi)] += kOne - b.lower;
      }
    } else {
      const std::int64_t ny = g.points[1];
      for (std::int64_t p = 0; p < count; ++p) {
        // x first in 2^32 units, then each x part split in y: the four weights are >= 0 and
        // add up to exactly 2^32.
        const detail::Bin bx = detail::bin(px[static_cast<std::size_t>(p)], g.origin(0),
                                           g.spacing(0), nx, periodic, kOne);
        const detail::Bin by = detail::bin(py[static_cast<std::size_t>(p)], g.origin(1),
                                           g.spacing(1), ny, periodic, kOne);
        const double fy = static_cast<double>(by.lower) / static_cast<double>(kOne);
        const std::int64_t xl = bx.lower, xu = kOne - bx.lower;
        const std::int64_t ll = std::llround(static_cast<double>(xl) * fy);
        const std::int64_t ul = std::llround(static_cast<double>(xu) * fy);
        bins[static_cast<std::size_t>(by.lo * nx + bx.lo)] += ll;
        bins[static_cast<std::size_t>(by.hi * nx + bx.lo)] += xl - ll;
        bins[static_cast<std::size_t>(by.lo * nx + bx.hi)] += ul;
        bins[static_cast<std::size_t>(by.hi * nx + bx.hi)] += xu - ul;
      }
    }
    // Integer sums: exact, hence the same for any split of the particles over the ranks.
    MPI_Allreduce(MPI_IN_PLACE, bins.data(), static_cast<int>(bins.size()), MPI_INT64_T, MPI_SUM,
                  comm);
  }

  void estimate(Vec m) {
    bin_particles();
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
  if (selector != nullptr) d.kernel = selector->kernel("mfg_particle_kde");
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
  const double t0 = MPI_Wtime();
  d.draw_start();
  d.sweep_seconds += MPI_Wtime() - t0;
}

void ParticleFokkerPlanck::step(int n, Vec u, Vec m_next) {
  Impl& d = *impl_;
  d.replicator->gather(u, d.u_all);  // reuses u_all's storage
  d.differences();
  const double t0 = MPI_Wtime();
  d.move(n);
  d.sweep_seconds += MPI_Wtime() - t0;
  d.estimate(m_next);
}

void ParticleFokkerPlanck::density(Vec m) {
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
  return impl_->px;
}
const std::vector<double>& ParticleFokkerPlanck::y() const {
  return impl_->py;
}
std::array<double, 2> ParticleFokkerPlanck::bandwidth() const {
  return impl_->last_bandwidth;
}

}  // namespace fracmfg::mfg
