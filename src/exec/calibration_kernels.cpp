#include "fracmfg/exec/calibration_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/text.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/kernel_workloads.hpp"
#include "fracmfg/kernels/circulant.hpp"
#include "fracmfg/kernels/history.hpp"
#include "fracmfg/kernels/kde.hpp"
#include "fracmfg/kernels/l1_history.hpp"
#include "fracmfg/kernels/mfg_rows.hpp"
#include "fracmfg/kernels/particle_step.hpp"
#include "fracmfg/kernels/tridiag_batched.hpp"

namespace fracmfg::exec {

namespace {

using Resources = kernels::CudaResources;

std::vector<double> uniform(std::size_t count, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(count);
  for (double& x : v) x = u(rng);
  return v;
}

// --- tridiag_batched: m systems of 128 unknowns (lines of a 2D grid), diagonally dominant.
CalibrationCase tridiag_case(std::int64_t n) {
  struct Data {
    std::vector<double> sub, diag, super, rhs, work;
    kernels::TridiagBatch batch;
  };
  auto d = std::make_shared<Data>();
  const std::int64_t size = std::min<std::int64_t>(n, 128);
  const std::int64_t systems = std::max<std::int64_t>(1, (n + size / 2) / size);
  const auto count = static_cast<std::size_t>(systems * size);
  d->sub.assign(count, -1.0);
  d->super.assign(count, -1.0);
  d->diag.assign(count, 4.0);
  d->rhs = uniform(count, -1.0, 1.0, 11);
  d->work.assign(kernels::tridiag_workspace_size(systems, size, false), 0.0);
  kernels::TridiagBatch& b = d->batch;
  b.layout = kernels::TridiagLayout::strided;
  b.systems = systems;
  b.size = size;
  b.sub = d->sub.data();
  b.diag = d->diag.data();
  b.super = d->super.data();
  b.rhs = d->rhs.data();
  b.workspace = d->work.data();
  CalibrationCase c;
  c.workload = tridiag_batched_workload(KernelId{}, systems, size);
  // Each call solves in place; the right-hand side stays bounded (|x| <= |b| / 2).
  c.host = [d] { kernels::tridiag_batched_host(d->batch, kernels::TridiagOptions{}); };
  c.cuda = [d](int device, Resources* r) {
    kernels::TridiagOptions o;
    o.cuda_device = device;
    o.cuda_resources = r;
    kernels::tridiag_batched_cuda(d->batch, o);
  };
  return c;
}

// --- binned KDE on a grid, samples given as coordinates and weights.
struct KdeData {
  kernels::KdeGrid grid;
  std::vector<double> x, y, w, density;
  kernels::KdeSamples samples() const {
    kernels::KdeSamples s;
    s.count = static_cast<std::int64_t>(x.size());
    s.x = x.data();
    s.y = y.empty() ? nullptr : y.data();
    s.weight = w.empty() ? nullptr : w.data();
    return s;
  }
};

kernels::KdeAxis unit_axis(std::int64_t points, kernels::KdeBoundary boundary, double bandwidth) {
  kernels::KdeAxis a;
  a.spacing = 1.0 / static_cast<double>(points);
  a.origin = 0.5 * a.spacing;
  a.points = points;
  a.boundary = boundary;
  a.bandwidth = bandwidth > 0.0 ? bandwidth : 3.0 * a.spacing;
  return a;
}

CalibrationCase kde_case(const std::shared_ptr<KdeData>& d) {
  CalibrationCase c;
  c.workload = kde_binned_workload(KernelId{}, static_cast<std::int64_t>(d->x.size()));
  c.host = [d] {
    kernels::kde_binned_host(d->grid, d->samples(), d->density.data(), kernels::KdeOptions{});
  };
  c.cuda = [d](int device, Resources* r) {
    kernels::KdeOptions o;
    o.cuda_device = device;
    o.cuda_resources = r;
    kernels::kde_binned_cuda(d->grid, d->samples(), d->density.data(), o);
  };
  return c;
}

// n scattered samples on a periodic grid of n points.
CalibrationCase kde_1d_case(std::int64_t n) {
  auto d = std::make_shared<KdeData>();
  d->grid = kernels::kde_grid_1d(unit_axis(n, kernels::KdeBoundary::periodic, 0.0));
  d->x = uniform(static_cast<std::size_t>(n), 0.0, 1.0, 21);
  d->density.assign(static_cast<std::size_t>(n), 0.0);
  return kde_case(d);
}

std::int64_t side_of(std::int64_t n) {
  return std::max<std::int64_t>(2, std::llround(std::sqrt(static_cast<double>(n))));
}

// s^2 ~ n scattered samples on a reflecting s x s grid.
CalibrationCase kde_2d_case(std::int64_t n) {
  auto d = std::make_shared<KdeData>();
  const std::int64_t s = side_of(n);
  const auto count = static_cast<std::size_t>(s * s);
  const kernels::KdeAxis a = unit_axis(s, kernels::KdeBoundary::reflecting, 0.0);
  d->grid = kernels::kde_grid_2d(a, a);
  d->x = uniform(count, 0.0, 1.0, 31);
  d->y = uniform(count, 0.0, 1.0, 32);
  d->density.assign(count, 0.0);
  return kde_case(d);
}

// The MFG solvers' calls: the grid nodes of an s x s grid as samples weighted by the mass
// of each cell (binned particles, or the density times the cell volume).
CalibrationCase mfg_grid_case(std::int64_t n, kernels::KdeBoundary boundary, double bandwidth) {
  auto d = std::make_shared<KdeData>();
  const std::int64_t s = side_of(n);
  const auto count = static_cast<std::size_t>(s * s);
  const kernels::KdeAxis a = unit_axis(s, boundary, bandwidth);
  d->grid = kernels::kde_grid_2d(a, a);
  d->x.resize(count);
  d->y.resize(count);
  for (std::int64_t j = 0; j < s; ++j) {
    for (std::int64_t i = 0; i < s; ++i) {
      const auto k = static_cast<std::size_t>(j * s + i);
      d->x[k] = a.origin + static_cast<double>(i) * a.spacing;
      d->y[k] = a.origin + static_cast<double>(j) * a.spacing;
    }
  }
  d->w = uniform(count, 0.0, 2.0 / static_cast<double>(count), 41);
  d->density.assign(count, 0.0);
  return kde_case(d);
}

// --- the MFG particle step (kernels/particle_step.hpp), as mfg::ParticleFokkerPlanck runs
// it: n particles on a reflecting 1D grid of 200 points, moved with a fixed drift field and
// binned, the positions resident on the device across calls.
CalibrationCase particle_step_case(std::int64_t n) {
  struct Data {
    kernels::ParticleStep step;
    std::vector<double> cdf, inv_c, dx, x;
    std::vector<std::int64_t> bins;
    std::unique_ptr<kernels::ParticleDevice> device;
  };
  auto d = std::make_shared<Data>();
  kernels::ParticleStep& s = d->step;
  kernels::ParticleAxis& a = s.axis[0];
  a.points = 200;
  a.length = 1.0;
  a.spacing = 1.0 / 200.0;
  a.origin = 0.5 * a.spacing;
  a.periodic = false;
  const auto points = static_cast<std::size_t>(a.points);
  d->cdf.resize(points);
  for (std::size_t k = 0; k < points; ++k) d->cdf[k] = static_cast<double>(k + 1) / 200.0;
  d->inv_c.assign(points, 1.0);
  d->dx = uniform(static_cast<std::size_t>(kernels::particle_faces(a)), -1.0, 1.0, 91);
  d->dx.front() = d->dx.back() = 0.0;  // the walls
  d->x = uniform(static_cast<std::size_t>(n), 0.0, 1.0, 92);
  d->bins.assign(points, 0);
  s.dim = 1;
  s.seed = 5;
  s.count = n;
  s.move = true;
  s.step = 1;
  s.dt = 0.01;
  s.noise = std::sqrt(2.0 * 0.02 * s.dt);
  s.cdf = d->cdf.data();
  s.inv_c = d->inv_c.data();
  s.dx_face = d->dx.data();
  s.x = d->x.data();
  s.bins = d->bins.data();
  CalibrationCase c;
  c.workload = particle_step_workload(KernelId{}, 1, n, a.points, kernels::particle_x_faces(s),
                                      /*draw=*/false, /*move=*/true, /*resident=*/true);
  c.host = [d] { kernels::particle_step_host(d->step); };
  c.cuda = [d](int device, Resources*) {
    if (!d->device) {
      d->device =
          std::make_unique<kernels::ParticleDevice>(device, 1, d->step.axis[0], d->step.axis[1]);
    }
    if (!d->device->has_constants()) d->device->set_constants(d->cdf.data(), d->inv_c.data());
    if (!d->device->resident()) d->device->upload(d->x.data(), nullptr, d->step.count);
    d->device->run(d->step);
  };
  return c;
}

// --- history_fft: c components, squares of m = p = L/2 rows, two rules (predictor and
// corrector), as frac::FodeSolver's FFT squares; L up to 2^14, then more components.
// --- the MFG finite-difference rows (kernels/mfg_rows.hpp), as the solvers call them: the
// HJB residual and Jacobian rows of a periodic sqrt(n) x sqrt(n) grid read from its ghosted
// box (one rank's 2D block), and the 1D Fokker-Planck rows of n points with their ghosts.
CalibrationCase hjb_rows_case(std::int64_t n) {
  struct Data {
    std::vector<double> u, coef, u_next, rhs, r, rows;
    kernels::HjbRowsCall call;
    std::unique_ptr<kernels::MfgRowsDevice> device;
    int device_id = -1;
  };
  auto d = std::make_shared<Data>();
  const std::int64_t side = side_of(n);
  const std::int64_t points = side * side;
  kernels::HjbRowsCall& c = d->call;
  kernels::MfgBlock& b = c.block;
  b.dim = 2;
  for (int a = 0; a < 2; ++a) {
    b.points[a] = b.size[a] = side;
    b.ghost_start[a] = -1;
    b.ghost_size[a] = side + 2;
    b.inv_h[a] = static_cast<double>(side);
  }
  const auto values = static_cast<std::size_t>(kernels::mfg_block_values(b));
  const auto p = static_cast<std::size_t>(points);
  d->u = uniform(values, -1.0, 1.0, 101);
  d->coef = uniform(p, 0.5, 1.5, 102);
  d->u_next = uniform(p, -1.0, 1.0, 103);
  d->rhs = uniform(p, -1.0, 1.0, 104);
  d->r.assign(p, 0.0);
  d->rows.assign(p * static_cast<std::size_t>(kernels::mfg_row_width(2)), 0.0);
  c.inv_dt = 100.0;
  c.nu = 0.05;
  c.coef = d->coef.data();
  c.u = d->u.data();
  c.u_next = d->u_next.data();
  c.rhs = d->rhs.data();
  c.residual = d->r.data();
  c.rows = d->rows.data();
  CalibrationCase cc;
  cc.workload =
      mfg_hjb_rows_workload(KernelId{}, 2, points, kernels::mfg_block_values(b), true, true);
  cc.host = [d] { kernels::mfg_hjb_rows_host(d->call); };
  cc.cuda = [d](int device, Resources*) {
    if (!d->device || d->device_id != device) {
      d->device = std::make_unique<kernels::MfgRowsDevice>(device);
      d->device_id = device;
    }
    d->device->hjb(d->call);
  };
  return cc;
}

CalibrationCase fp_rows_case(std::int64_t n) {
  struct Data {
    std::vector<double> u, inv_c, sub, diag, super;
    kernels::FpRowsCall call;
    std::unique_ptr<kernels::MfgRowsDevice> device;
    int device_id = -1;
  };
  auto d = std::make_shared<Data>();
  const std::int64_t points = std::max<std::int64_t>(3, n);
  const auto p = static_cast<std::size_t>(points);
  kernels::FpRowsCall& c = d->call;
  c.block.dim = 1;
  c.block.points[0] = c.block.size[0] = points;
  c.block.owned_1d = true;
  c.block.mirror[0] = c.block.mirror[1] = true;
  c.block.inv_h[0] = static_cast<double>(points);
  d->u = uniform(p, -1.0, 1.0, 111);
  d->inv_c = uniform(p, 0.5, 1.5, 112);
  for (auto* v : {&d->sub, &d->diag, &d->super}) v->assign(p, 0.0);
  c.block.ghost_west = d->u.front();
  c.block.ghost_east = d->u.back();
  c.inv_c_west = d->inv_c.front();
  c.inv_c_east = d->inv_c.back();
  c.inv_dt = 100.0;
  c.nu = 0.05;
  c.u = d->u.data();
  c.inv_c = d->inv_c.data();
  c.sub = d->sub.data();
  c.diag = d->diag.data();
  c.super = d->super.data();
  CalibrationCase cc;
  cc.workload = mfg_fp_rows_workload(KernelId{}, points);
  cc.host = [d] { kernels::mfg_fp_rows_host(d->call); };
  cc.cuda = [d](int device, Resources*) {
    if (!d->device || d->device_id != device) {
      d->device = std::make_unique<kernels::MfgRowsDevice>(device);
      d->device_id = device;
    }
    d->device->fp(d->call);
  };
  return cc;
}

CalibrationCase history_case(std::int64_t n) {
  struct Data {
    std::int64_t c = 1, length = 2, m = 1;
    std::vector<double> signal, out[2], spectrum[2];
    kernels::HistoryWorkspace host_ws;
    std::unique_ptr<kernels::HistoryWorkspace> cuda_ws;
    int cuda_device = -1;
    Resources* cuda_resources = nullptr;

    kernels::HistoryBlock block() {
      kernels::HistoryBlock b;
      b.components = c;
      b.stride = c;
      b.signal_rows = m;
      b.output_rows = m;
      b.offset = m;
      b.rules = 2;
      b.signal = signal.data();
      b.output[0] = out[0].data();
      b.output[1] = out[1].data();
      return b;
    }
    kernels::HistorySpectra spectra() const {
      kernels::HistorySpectra s;
      s.fft_length = length;
      s.spectrum[0] = spectrum[0].data();
      s.spectrum[1] = spectrum[1].data();
      return s;
    }
  };
  auto d = std::make_shared<Data>();
  std::int64_t length = 2;
  while (length * 2 <= std::min<std::int64_t>(n, std::int64_t{1} << 14)) length *= 2;
  d->length = length;
  d->m = length / 2;
  d->c = std::max<std::int64_t>(1, (n + length / 2) / length);
  const auto rows = static_cast<std::size_t>(d->m * d->c);
  d->signal = uniform(rows, -1.0, 1.0, 51);
  const double orders[2] = {0.4, 1.4};
  for (int r = 0; r < 2; ++r) {
    d->out[r].assign(rows, 0.0);
    // Weights of a fractional rule: K(k) ~ k^(alpha - 1).
    std::vector<double> weights(static_cast<std::size_t>(length + 1), 0.0);
    for (std::int64_t k = 1; k <= length; ++k) {
      weights[static_cast<std::size_t>(k)] = std::pow(static_cast<double>(k), orders[r] - 1.0);
    }
    d->spectrum[r] = kernels::history_spectrum(weights.data(), length);
  }
  CalibrationCase c;
  // A square as frac/history_engine.cpp makes it: m = p = L/2 rows, two rules.
  c.workload = history_fft_workload(KernelId{}, d->c, length, d->m, d->m, 2);
  c.host = [d] { kernels::history_fft_host(d->block(), d->spectra(), d->host_ws); };
  c.cuda = [d](int device, Resources* r) {
    if (!d->cuda_ws || d->cuda_device != device || d->cuda_resources != r) {
      kernels::HistoryOptions o;
      o.cuda_device = device;
      o.cuda_resources = r;
      d->cuda_ws = std::make_unique<kernels::HistoryWorkspace>(o);
      d->cuda_device = device;
      d->cuda_resources = r;
    }
    kernels::history_fft_cuda(d->block(), d->spectra(), *d->cuda_ws);
  };
  return c;
}

// --- the time-fractional PDE history (kernels/l1_history.hpp), as frac::L1History runs it:
// the state resident on the device across calls.
// soe: 32 modes (a typical SOE size) of n / 32 points.
CalibrationCase soe_history_case(std::int64_t n) {
  struct Data {
    std::int64_t points = 1, terms = 32;
    std::vector<double> e, q, c, du, modes, history;
    std::unique_ptr<kernels::L1HistoryDevice> device;
    kernels::SoeHistoryStep step() {
      kernels::SoeHistoryStep s;
      s.points = points;
      s.terms = terms;
      s.decay = e.data();
      s.inject = q.data();
      s.weight = c.data();
      s.increment = du.data();
      s.modes = modes.data();
      s.history = history.data();
      return s;
    }
  };
  auto d = std::make_shared<Data>();
  d->points = std::max<std::int64_t>(1, (n + d->terms / 2) / d->terms);
  const auto t = static_cast<std::size_t>(d->terms);
  const auto p = static_cast<std::size_t>(d->points);
  d->e = uniform(t, 0.1, 0.99, 61);  // decays < 1: the modes stay bounded over calls
  d->q = uniform(t, 0.0, 1.0, 62);
  d->c = uniform(t, 0.0, 1.0, 63);
  d->du = uniform(p, -1.0, 1.0, 64);
  d->modes.assign(t * p, 0.0);
  d->history.assign(p, 0.0);
  CalibrationCase c;
  c.workload = soe_history_workload(KernelId{}, d->points, d->terms, /*resident=*/true);
  c.host = [d] { kernels::soe_history_host(d->step()); };
  c.cuda = [d](int device, Resources*) {
    if (!d->device) {
      d->device = std::make_unique<kernels::L1HistoryDevice>(kernels::L1Algorithm::soe, device,
                                                             d->points, d->terms);
    }
    if (!d->device->resident()) d->device->upload(d->modes.data(), d->terms);
    d->device->soe_step(d->step());
  };
  return c;
}

// direct: 64 past increments of n / 64 points (each call forms the history of the same
// step again).
CalibrationCase l1_direct_case(std::int64_t n) {
  struct Data {
    std::int64_t points = 1, levels = 64;
    std::vector<double> w, past, history;
    std::unique_ptr<kernels::L1HistoryDevice> device;
    kernels::L1DirectStep step() {
      kernels::L1DirectStep s;
      s.points = points;
      s.levels = levels;
      s.weights = w.data();
      s.past = past.data();
      s.history = history.data();
      return s;
    }
  };
  auto d = std::make_shared<Data>();
  d->points = std::max<std::int64_t>(1, (n + d->levels / 2) / d->levels);
  const auto p = static_cast<std::size_t>(d->points);
  d->w = uniform(static_cast<std::size_t>(d->levels), 0.0, 1.0, 71);
  d->past = uniform(p * static_cast<std::size_t>(d->levels), -1.0, 1.0, 72);
  d->history.assign(p, 0.0);
  CalibrationCase c;
  c.workload = l1_direct_workload(KernelId{}, d->points, d->levels, d->levels, /*resident=*/true);
  c.host = [d] { kernels::l1_direct_host(d->step()); };
  c.cuda = [d](int device, Resources*) {
    if (!d->device) {
      d->device = std::make_unique<kernels::L1HistoryDevice>(kernels::L1Algorithm::direct, device,
                                                             d->points, d->levels);
    }
    if (!d->device->resident()) d->device->upload(d->past.data(), d->levels - 1);
    d->device->truncate(d->levels - 1);
    d->device->direct_step(d->past.data() + (d->levels - 1) * d->points, d->step());
  };
  return c;
}

/// The circulant cases' device workspace, made again when the device or the resource cache
/// changes.
struct CirculantCudaWorkspace {
  kernels::CirculantWorkspace& get(int device, Resources* r) {
    if (!ws || device_ != device || resources_ != r) {
      kernels::CirculantOptions o;
      o.cuda_device = device;
      o.cuda_resources = r;
      ws = std::make_unique<kernels::CirculantWorkspace>(o);
      device_ = device;
      resources_ = r;
    }
    return *ws;
  }
  std::unique_ptr<kernels::CirculantWorkspace> ws;
  int device_ = -1;
  Resources* resources_ = nullptr;
};

// --- the space-fractional PDE solver's FFT products (kernels/circulant.hpp). `embedding`:
// Toeplitz products of lines of m = 1023 values (L = 2048) as the Riesz operator's shell
// matrix makes them; otherwise one circulant of about n values (the 1D preconditioner).
CalibrationCase circulant_case(std::int64_t n, bool embedding) {
  struct Data {
    kernels::CirculantBatch batch;
    std::vector<double> eig, x, y;
    kernels::CirculantWorkspace host_ws;
    CirculantCudaWorkspace cuda_ws;
  };
  auto d = std::make_shared<Data>();
  std::int64_t lines = 1, m = 1, len = 1;
  if (embedding) {
    len = std::min<std::int64_t>(2048, std::max<std::int64_t>(2, n));
    m = len / 2;
    lines = std::max<std::int64_t>(1, (n + len / 2) / len);
  } else {
    m = len = std::max<std::int64_t>(2, n);
  }
  d->eig = uniform(static_cast<std::size_t>(len / 2 + 1), 0.5 / static_cast<double>(len),
                   1.0 / static_cast<double>(len), 81);
  d->x = uniform(static_cast<std::size_t>(lines * m), -1.0, 1.0, 82);
  d->y.assign(static_cast<std::size_t>(lines * m), 0.0);
  kernels::CirculantBatch& b = d->batch;
  b.lines = lines;
  b.length = m;
  b.fft_length = len;
  b.eigenvalues = d->eig.data();
  b.x = d->x.data();
  b.y = d->y.data();
  b.scale = 1e-3;  // y grows slowly over repeated calls
  CalibrationCase c;
  c.workload = circulant_batched_workload(KernelId{}, lines, m, len);
  c.host = [d] { kernels::circulant_batched_host(d->batch, d->host_ws); };
  c.cuda = [d](int device, Resources* r) {
    kernels::circulant_batched_cuda(d->batch, d->cuda_ws.get(device, r));
  };
  return c;
}

// --- the 2D transforms of the Riesz operator (kernels::circulant_2d): the periodic operator
// sigma I + kappa A on a square grid of about n points.
CalibrationCase circulant_2d_case(std::int64_t n) {
  struct Data {
    kernels::Circulant2d product;
    std::vector<double> eig, x, y;
    kernels::CirculantWorkspace host_ws;
    CirculantCudaWorkspace cuda_ws;
  };
  auto d = std::make_shared<Data>();
  const auto side = std::max<std::int64_t>(
      2, static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(n)))));
  const std::int64_t frequencies = (side / 2 + 1) * side;
  const double inv = 1.0 / static_cast<double>(side * side);
  d->eig = uniform(static_cast<std::size_t>(frequencies), 0.5 * inv, inv, 83);
  d->x = uniform(static_cast<std::size_t>(side * side), -1.0, 1.0, 84);
  d->y.assign(static_cast<std::size_t>(side * side), 0.0);
  kernels::Circulant2d& p = d->product;
  p.nx = side;
  p.ny = side;
  p.eigenvalues = d->eig.data();
  p.x = d->x.data();
  p.y = d->y.data();
  p.shift = 1.0;
  p.scale = 1e-3;
  CalibrationCase c;
  c.workload = circulant_2d_workload(KernelId{}, side, side);
  c.host = [d] { kernels::circulant_2d_host(d->product, d->host_ws); };
  c.cuda = [d](int device, Resources* r) {
    kernels::circulant_2d_cuda(d->product, d->cuda_ws.get(device, r));
  };
  return c;
}

}  // namespace

std::vector<CalibratedKernel> calibration_kernels() {
  namespace kn = kernel_names;
  std::vector<CalibratedKernel> k;
  k.push_back({kn::tridiag_batched,
               "batches of tridiagonal systems of 128 unknowns (n = systems x 128), Thomas", 56.0,
               tridiag_case});
  k.push_back({kn::kde_binned_1d, "binned KDE of n samples on a periodic grid of n points", 72.0,
               kde_1d_case});
  k.push_back({kn::kde_binned_2d,
               "binned KDE of n samples on a reflecting sqrt(n) x sqrt(n) grid (mirrored FFT)",
               120.0, kde_2d_case});
  k.push_back({kn::history_fft,
               "fractional history square by FFT, 2 rules, n = components x L (L <= 2^14)", 48.0,
               history_case});
  k.push_back(
      {kn::mfg_particle_kde,
       "MFG particle density: sqrt(n) x sqrt(n) periodic grid nodes as weighted samples, "
       "h = 3 dx",
       72.0, [](std::int64_t n) { return mfg_grid_case(n, kernels::KdeBoundary::periodic, 0.0); }});
  k.push_back({kn::mfg_particle_step,
               "MFG particle step: n particles moved (Euler-Maruyama, Philox noise, "
               "interpolated drift) and binned on a reflecting grid of 200 points (positions "
               "resident)",
               16.0, particle_step_case});
  k.push_back({kn::mfg_hjb_rows,
               "MFG HJB residual and Jacobian rows of a periodic sqrt(n) x sqrt(n) grid (ghosted "
               "box in, residual and 5-point rows out)",
               88.0, hjb_rows_case});
  k.push_back({kn::mfg_fp_rows,
               "MFG 1D Fokker-Planck rows of n points on a reflecting grid (u and 1/c in, three "
               "rows out)",
               40.0, fp_rows_case});
  k.push_back({kn::mfg_nonlocal_coupling,
               "MFG nonlocal coupling: Gaussian convolution (width 0.05) of the density on a "
               "reflecting sqrt(n) x sqrt(n) grid",
               120.0, [](std::int64_t n) {
                 return mfg_grid_case(n, kernels::KdeBoundary::reflecting, 0.05);
               }});
  k.push_back({kn::fpde_soe_history,
               "time-fractional PDE history, sum of exponentials: 32 modes of n/32 points "
               "advanced and summed (modes resident)",
               24.0, soe_history_case});
  k.push_back({kn::fpde_l1_history,
               "time-fractional PDE history, direct L1 sum over 64 past increments of n/64 "
               "points (past resident)",
               16.0, l1_direct_case});
  k.push_back({kn::fpde_riesz_product,
               "space-fractional PDE: Toeplitz products of lines of 1023 values by FFT "
               "(L = 2048, n = lines x L)",
               56.0, [](std::int64_t n) { return circulant_case(n, true); }});
  k.push_back({kn::fpde_circulant_pc,
               "space-fractional PDE: one circulant of n values inverted by FFT (the 1D "
               "preconditioner)",
               56.0, [](std::int64_t n) { return circulant_case(n, false); }});
  k.push_back({kn::fpde_circulant_2d,
               "space-fractional operator on a sqrt(n) x sqrt(n) periodic grid: one real 2D "
               "transform pair (the 2D periodic operator and circulant inverses)",
               48.0, circulant_2d_case});
  return k;
}

std::vector<std::string> calibration_kernel_names() {
  std::vector<std::string> names;
  for (const CalibratedKernel& k : calibration_kernels()) names.push_back(k.name);
  return names;
}

std::vector<CalibratedKernel> select_kernels(std::vector<CalibratedKernel> all,
                                             const std::vector<std::string>& names) {
  if (names.empty()) return all;
  for (const std::string& n : names) {
    const bool known =
        std::any_of(all.begin(), all.end(), [&](const CalibratedKernel& k) { return k.name == n; });
    if (known) continue;
    std::string list;
    std::vector<std::string> names_known;
    for (const CalibratedKernel& k : all) {
      list += (list.empty() ? "" : ", ") + k.name;
      names_known.push_back(k.name);
    }
    std::string message = "unknown kernel '" + n + "' (expected one of " + list + ")";
    const std::string best = ::fracmfg::detail::closest_match(n, names_known);
    if (!best.empty()) message += "; did you mean '" + best + "'?";
    throw UsageError(message);
  }
  std::vector<CalibratedKernel> out;
  for (CalibratedKernel& k : all) {
    if (std::find(names.begin(), names.end(), k.name) != names.end()) out.push_back(std::move(k));
  }
  return out;
}

}  // namespace fracmfg::exec
