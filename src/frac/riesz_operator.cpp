#include "fracmfg/frac/riesz_operator.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <sstream>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/kernel_workloads.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/frac/convolution.hpp"
#include "fracmfg/kernels/circulant.hpp"
#include "kernels/fftw_handles.hpp"

namespace fracmfg::frac {

namespace {

constexpr double kPi = 3.14159265358979323846;

// FFTW arrays and plans (kernels/fftw_handles.hpp).
namespace fftw = kernels::detail;

constexpr const char* kNoPlan = "riesz operator: FFTW could not create a plan";

/// Real eigenvalues of the symmetric circulant with first column c.
std::vector<double> circulant_eigenvalues(const std::vector<double>& c) {
  const std::size_t m = c.size();
  fftw::FftwArray<double> in = fftw::fftw_real_array(m);
  fftw::FftwArray<fftw_complex> out = fftw::fftw_complex_array(m / 2 + 1);
  std::copy(c.begin(), c.end(), in.get());
  const fftw::FftwPlan p = fftw::checked_fftw_plan(
      fftw_plan_dft_r2c_1d(static_cast<int>(m), in.get(), out.get(), FFTW_ESTIMATE), kNoPlan);
  fftw_execute(p.get());
  std::vector<double> eig(m);
  for (std::size_t k = 0; k < m; ++k) eig[k] = out.get()[k <= m / 2 ? k : m - k][0];
  return eig;
}

/// The host workspace and, made on the first call the selector places on the device, the
/// device workspace of one kind of circulant product; runs a product where the rank's
/// selector places it (the host kernel without a selector).
class PlacedCirculant {
 public:
  /// host(ws) and cuda(ws) run the product with a workspace.
  template <class Host, class Cuda>
  void run(exec::Selector* selector, const exec::Workload& workload, Host&& host, Cuda&& cuda) {
    if (selector == nullptr) {
      host(host_);
      return;
    }
    selector->run(
        workload, [&] { host(host_); },
        [&] {
          if (!device_) {
            kernels::CirculantOptions o;
            o.cuda_device = selector->device().device;
            o.cuda_resources = selector->cuda_resources();
            device_ = std::make_unique<kernels::CirculantWorkspace>(o);
          }
          cuda(*device_);
        });
  }

 private:
  kernels::CirculantWorkspace host_;
  std::unique_ptr<kernels::CirculantWorkspace> device_;
};

/// Products of `lines` lines of m values with one symmetric circulant of length len
/// (kernels/circulant.hpp): the Toeplitz products through the circulant embedding
/// (len >= 2m - 1), and the 1D circulants themselves (len = m). Each call goes through the
/// rank's selector when one is set (host FFTW or device cuFFT), else the host kernel.
class CirculantLines {
 public:
  /// The embedding of the symmetric Toeplitz matrix of first column t.
  static CirculantLines toeplitz(const std::vector<double>& t, std::size_t lines) {
    const std::size_t m = t.size();
    const std::size_t len = next_fast_fft_size(2 * m - 1);
    // The embedding circulant [t_0..t_{m-1}, 0.., t_{m-1}..t_1]; its eigenvalues with the
    // 1/len of the inverse transform folded in.
    std::vector<double> c(len, 0.0);
    for (std::size_t k = 0; k < m; ++k) c[k] = t[k];
    for (std::size_t k = 1; k < m; ++k) c[len - k] = t[k];
    const std::vector<double> eig = circulant_eigenvalues(c);
    CirculantLines out(m, len, lines);
    for (std::size_t k = 0; k < out.eig_.size(); ++k)
      out.eig_[k] = eig[k] / static_cast<double>(len);
    return out;
  }
  /// A circulant of length m given by (the first m/2 + 1 of) its eigenvalues lambda_k / m.
  static CirculantLines circulant(std::size_t m, std::size_t lines) {
    return CirculantLines(m, m, lines);
  }

  std::vector<double>& eigenvalues() { return eig_; }

  /// y[b*m + k] += scale * (C x_b)_k for x, y of lines x m values.
  void multiply_add(const double* x, double* y, double scale, exec::Selector* selector,
                    exec::KernelId kernel) {
    kernels::CirculantBatch b;
    b.lines = static_cast<std::int64_t>(lines_);
    b.length = static_cast<std::int64_t>(m_);
    b.fft_length = static_cast<std::int64_t>(len_);
    b.eigenvalues = eig_.data();
    b.x = x;
    b.y = y;
    b.scale = scale;
    placed_.run(
        selector, exec::circulant_batched_workload(kernel, b.lines, b.length, b.fft_length),
        [&](kernels::CirculantWorkspace& ws) { kernels::circulant_batched_host(b, ws); },
        [&](kernels::CirculantWorkspace& ws) { kernels::circulant_batched_cuda(b, ws); });
  }

 private:
  CirculantLines(std::size_t m, std::size_t len, std::size_t lines)
      : m_(m), len_(len), lines_(lines), eig_(len / 2 + 1, 0.0) {}

  std::size_t m_, len_, lines_;
  std::vector<double> eig_;
  PlacedCirculant placed_;
};

/// Products with shifted 2D symmetric circulants (block circulant with circulant blocks) on
/// an (ny, nx) array (kernels::circulant_2d): the 2D periodic operator and the 2D circulant
/// preconditioner's inverse, each with its own eigenvalues, sharing the workspaces. Each
/// call goes through the rank's selector when one is set (host FFTW or device cuFFT), else
/// the host kernel.
class CirculantGrid2d {
 public:
  CirculantGrid2d(std::size_t nx, std::size_t ny) : nx_(nx), ny_(ny) {}

  /// ny (nx/2 + 1) eigenvalues f(kx, ky) / (nx ny), row ky of the half spectrum.
  template <class F>
  void set_eigenvalues(std::vector<double>& eig, F&& f) const {
    const std::size_t half = nx_ / 2 + 1;
    const double inv = 1.0 / static_cast<double>(nx_ * ny_);
    eig.resize(half * ny_);
    for (std::size_t ky = 0; ky < ny_; ++ky) {
      for (std::size_t kx = 0; kx < half; ++kx) eig[ky * half + kx] = f(kx, ky) * inv;
    }
  }

  /// y = shift x + scale C x for the circulant C of eigenvalues `eig` (x, y: nx ny values).
  void apply(const std::vector<double>& eig, const double* x, double* y, double shift, double scale,
             exec::Selector* selector, exec::KernelId kernel) {
    kernels::Circulant2d p;
    p.nx = static_cast<std::int64_t>(nx_);
    p.ny = static_cast<std::int64_t>(ny_);
    p.eigenvalues = eig.data();
    p.x = x;
    p.y = y;
    p.shift = shift;
    p.scale = scale;
    placed_.run(
        selector, exec::circulant_2d_workload(kernel, p.nx, p.ny),
        [&](kernels::CirculantWorkspace& ws) { kernels::circulant_2d_host(p, ws); },
        [&](kernels::CirculantWorkspace& ws) { kernels::circulant_2d_cuda(p, ws); });
  }

 private:
  std::size_t nx_, ny_;
  PlacedCirculant placed_;
};

}  // namespace

const char* to_string(CirculantKind kind) {
  return kind == CirculantKind::strang ? "strang" : "tchan";
}

std::vector<double> riesz_weights(double order, std::size_t n) {
  if (!(order > 0.0 && order <= 2.0)) {
    std::ostringstream os;
    os << "riesz_weights: the order must be in (0, 2], got " << order;
    throw Error(os.str());
  }
  std::vector<double> g(n);
  if (n == 0) return g;
  const double half = 0.5 * order;
  g[0] = std::exp(std::lgamma(order + 1.0) - 2.0 * std::lgamma(half + 1.0));
  for (std::size_t k = 0; k + 1 < n; ++k) {
    const double kk = static_cast<double>(k);
    g[k + 1] = g[k] * (kk - half) / (kk + half + 1.0);
  }
  return g;
}

struct RieszOperator::Impl {
  double order;
  int dim;
  bool periodic;
  std::size_t nx, ny;    // full grid
  std::size_t mx, my;    // unknowns per direction
  std::size_t ix0, iy0;  // first unknown index per direction
  double hx, hy;
  double sx, sy;             // h^-s
  std::vector<double> g;     // weights up to max(nx, ny)
  std::vector<double> tail;  // tail[m] = S(m) = sum_{k >= m} g_k, m >= 1
  // placement of the FFT products (set_selector)
  exec::Selector* selector = nullptr;
  exec::KernelId product_kernel, pc_kernel, grid2d_kernel;
  // Dirichlet
  std::unique_ptr<CirculantLines> tx, ty;
  // 1D: the periodic operator, and the circulant preconditioner's inverse (both len = m)
  std::unique_ptr<CirculantLines> line1d;     // 1D periodic: the operator
  std::unique_ptr<CirculantLines> inverse1d;  // 1D: the circulant inverse
  // 2D: the periodic operator's and the circulant inverse's eigenvalues on the (my, mx)
  // unknowns, and the compact input and output of the Dirichlet inverse
  std::unique_ptr<CirculantGrid2d> grid2d;
  std::vector<double> operator2d, inverse2d;
  std::vector<double> work_in, work_out;
  bool inverse_valid = false;  // inverse1d's (inverse2d's) eigenvalues are those of:
  CirculantKind inverse_kind = CirculantKind::strang;
  double inverse_sigma = 0.0, inverse_kappa = 0.0;
  std::vector<double> work_x, work_y, work_t, work_r;
  // periodic: the operator's symbol per direction
  std::vector<double> lam_x, lam_y;
  // circulant eigenvalues per kind and direction (Dirichlet)
  std::vector<double> mu[2][2];

  std::size_t index(std::size_t i, std::size_t j) const { return j * nx + i; }

  const std::vector<double>& circulant(CirculantKind kind, int d) {
    std::vector<double>& mu_kd = mu[kind == CirculantKind::strang ? 0 : 1][d];
    if (!mu_kd.empty()) return mu_kd;
    const std::size_t m = d == 0 ? mx : my;
    std::vector<double> c(m);
    for (std::size_t k = 0; k < m; ++k) {
      if (kind == CirculantKind::strang) {
        c[k] = k <= m / 2 ? g[k] : g[m - k];
      } else {
        c[k] =
            (static_cast<double>(m - k) * g[k] + static_cast<double>(k) * g[k == 0 ? 0 : m - k]) /
            static_cast<double>(m);
      }
    }
    mu_kd = circulant_eigenvalues(c);
    const double scale = d == 0 ? sx : sy;
    for (double& v : mu_kd) v *= scale;
    return mu_kd;
  }
};

RieszOperator::RieszOperator(double order, int dim, std::array<std::size_t, 2> points,
                             std::array<double, 2> spacing, bool periodic) {
  if (!(order > 1.0 && order <= 2.0) || dim < 1 || dim > 2 || points[0] < 3 ||
      (dim == 2 && points[1] < 3) || !(spacing[0] > 0.0) || (dim == 2 && !(spacing[1] > 0.0))) {
    std::ostringstream os;
    os << "RieszOperator: need 1 < order <= 2, dim 1 or 2, >= 3 points and spacing > 0 per "
          "direction (order "
       << order << ")";
    throw Error(os.str());
  }
  impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  m.order = order;
  m.dim = dim;
  m.periodic = periodic;
  m.nx = points[0];
  m.ny = dim == 2 ? points[1] : 1;
  m.hx = spacing[0];
  m.hy = dim == 2 ? spacing[1] : 1.0;
  m.sx = std::pow(m.hx, -order);
  m.sy = dim == 2 ? std::pow(m.hy, -order) : 0.0;
  m.ix0 = periodic ? 0 : 1;
  m.iy0 = (periodic || dim == 1) ? 0 : 1;
  m.mx = periodic ? m.nx : m.nx - 2;
  m.my = (periodic || dim == 1) ? m.ny : m.ny - 2;
  m.g = riesz_weights(order, std::max(m.nx, m.ny) + 1);
  m.tail.assign(m.g.size() + 1, 0.0);
  m.tail[1] = -0.5 * m.g[0];
  for (std::size_t k = 1; k + 1 < m.tail.size(); ++k) m.tail[k + 1] = m.tail[k] - m.g[k];
  if (periodic) {
    auto symbol = [&](std::size_t n, double scale) {
      std::vector<double> lam(n);
      for (std::size_t k = 0; k < n; ++k) {
        const double sn =
            std::fabs(2.0 * std::sin(kPi * static_cast<double>(k) / static_cast<double>(n)));
        lam[k] = scale * std::pow(sn, order);
      }
      return lam;
    };
    m.lam_x = symbol(m.mx, m.sx);
    m.lam_y = dim == 2 ? symbol(m.my, m.sy) : std::vector<double>(1, 0.0);
  } else {
    m.tx = std::make_unique<CirculantLines>(
        CirculantLines::toeplitz(std::vector<double>(m.g.begin(), m.g.begin() + m.mx), m.my));
    if (dim == 2) {
      m.ty = std::make_unique<CirculantLines>(
          CirculantLines::toeplitz(std::vector<double>(m.g.begin(), m.g.begin() + m.my), m.mx));
    }
    m.work_x.resize(m.mx * m.my);
    m.work_r.resize(m.mx * m.my);
    if (dim == 2) {
      m.work_t.resize(m.mx * m.my);
      m.work_y.resize(m.mx * m.my);
    }
  }
  if (dim == 2) {
    m.grid2d = std::make_unique<CirculantGrid2d>(m.mx, m.my);
    if (periodic) {
      m.grid2d->set_eigenvalues(
          m.operator2d, [&](std::size_t kx, std::size_t ky) { return m.lam_x[kx] + m.lam_y[ky]; });
    }
    if (!periodic) {
      m.work_in.resize(m.mx * m.my);
      m.work_out.resize(m.mx * m.my);
    }
  }
  if (dim == 1) {
    if (periodic) {
      m.line1d = std::make_unique<CirculantLines>(CirculantLines::circulant(m.mx, 1));
      std::vector<double>& eig = m.line1d->eigenvalues();
      for (std::size_t k = 0; k < eig.size(); ++k) eig[k] = m.lam_x[k] / static_cast<double>(m.mx);
    }
    m.inverse1d = std::make_unique<CirculantLines>(CirculantLines::circulant(m.mx, 1));
  }
}

RieszOperator::~RieszOperator() = default;
RieszOperator::RieszOperator(RieszOperator&&) noexcept = default;
RieszOperator& RieszOperator::operator=(RieszOperator&&) noexcept = default;

double RieszOperator::order() const {
  return impl_->order;
}
int RieszOperator::dimension() const {
  return impl_->dim;
}
bool RieszOperator::periodic() const {
  return impl_->periodic;
}
std::size_t RieszOperator::size() const {
  return impl_->nx * impl_->ny;
}
std::size_t RieszOperator::interior_size() const {
  return impl_->mx * impl_->my;
}
bool RieszOperator::is_interior(std::size_t i, std::size_t j) const {
  const Impl& m = *impl_;
  return i >= m.ix0 && i < m.ix0 + m.mx && j >= m.iy0 && j < m.iy0 + m.my;
}

void RieszOperator::set_selector(exec::Selector* selector) {
  Impl& m = *impl_;
  m.selector = selector;
  if (selector != nullptr) {
    m.product_kernel = selector->kernel(exec::kernel_names::fpde_riesz_product);
    m.pc_kernel = selector->kernel(exec::kernel_names::fpde_circulant_pc);
    m.grid2d_kernel = selector->kernel(exec::kernel_names::fpde_circulant_2d);
  }
}

void RieszOperator::apply(const double* x, double* y, double sigma, double kappa,
                          double kappa_exterior) {
  Impl& m = *impl_;
  if (m.periodic && m.dim == 1) {
    // y = sigma x + kappa C x, C the periodic operator (line1d: eigenvalues lam_x / m).
    for (std::size_t p = 0; p < m.mx; ++p) y[p] = sigma * x[p];
    m.line1d->multiply_add(x, y, kappa, m.selector, m.product_kernel);
    return;
  }
  if (m.periodic) {
    // y = sigma x + kappa C x, C the 2D periodic operator (eigenvalues lam_x + lam_y).
    m.grid2d->apply(m.operator2d, x, y, sigma, kappa, m.selector, m.grid2d_kernel);
    return;
  }
  // Unknowns into a compact (my, mx) array.
  for (std::size_t j = 0; j < m.my; ++j) {
    for (std::size_t i = 0; i < m.mx; ++i)
      m.work_x[j * m.mx + i] = x[m.index(i + m.ix0, j + m.iy0)];
  }
  for (std::size_t p = 0; p < m.work_r.size(); ++p) m.work_r[p] = sigma * m.work_x[p];
  m.tx->multiply_add(m.work_x.data(), m.work_r.data(), kappa * m.sx, m.selector, m.product_kernel);
  if (m.dim == 2) {
    for (std::size_t j = 0; j < m.my; ++j) {
      for (std::size_t i = 0; i < m.mx; ++i) m.work_t[i * m.my + j] = m.work_x[j * m.mx + i];
    }
    std::fill(m.work_y.begin(), m.work_y.end(), 0.0);
    m.ty->multiply_add(m.work_t.data(), m.work_y.data(), kappa * m.sy, m.selector,
                       m.product_kernel);
    for (std::size_t j = 0; j < m.my; ++j) {
      for (std::size_t i = 0; i < m.mx; ++i) m.work_r[j * m.mx + i] += m.work_y[i * m.my + j];
    }
  }
  // Boundary points: identity; unknowns: the result plus the exterior contribution.
  std::copy(x, x + m.nx * m.ny, y);
  for (std::size_t j = 0; j < m.my; ++j) {
    const std::size_t gj = j + m.iy0;
    for (std::size_t i = 0; i < m.mx; ++i) {
      const std::size_t gi = i + m.ix0;
      double v = m.work_r[j * m.mx + i];
      if (kappa_exterior != 0.0) {
        double e = m.sx * (x[m.index(0, gj)] * m.tail[gi] +
                           x[m.index(m.nx - 1, gj)] * m.tail[m.nx - 1 - gi]);
        if (m.dim == 2) {
          e += m.sy *
               (x[m.index(gi, 0)] * m.tail[gj] + x[m.index(gi, m.ny - 1)] * m.tail[m.ny - 1 - gj]);
        }
        v += kappa_exterior * e;
      }
      y[m.index(gi, gj)] = v;
    }
  }
}

void RieszOperator::apply_circulant_inverse(CirculantKind kind, const double* x, double* y,
                                            double sigma, double kappa) {
  Impl& m = *impl_;
  if (m.dim == 1) {
    // 1D: one circulant of length m (the exact periodic operator, or the Dirichlet
    // preconditioner), inverted eigenvalue by eigenvalue.
    // The inverted eigenvalues, recomputed only when the coefficients change (a solve
    // applies the same preconditioner many times).
    if (!(m.inverse_valid && m.inverse_kind == kind && m.inverse_sigma == sigma &&
          m.inverse_kappa == kappa)) {
      const std::vector<double>& mu = m.periodic ? m.lam_x : m.circulant(kind, 0);
      std::vector<double>& eig = m.inverse1d->eigenvalues();
      for (std::size_t k = 0; k < eig.size(); ++k) {
        const double d = sigma + kappa * mu[k];
        eig[k] = 1.0 / (d < sigma ? sigma : d) / static_cast<double>(m.mx);
      }
      m.inverse_valid = true;
      m.inverse_kind = kind;
      m.inverse_sigma = sigma;
      m.inverse_kappa = kappa;
    }
    if (!m.periodic) {
      y[0] = x[0];
      y[m.nx - 1] = x[m.nx - 1];
    }
    double* yi = y + m.ix0;
    std::fill(yi, yi + m.mx, 0.0);
    m.inverse1d->multiply_add(x + m.ix0, yi, 1.0, m.selector, m.pc_kernel);
    return;
  }
  // 2D: the eigenvalues of (sigma I + kappa (C_x (+) C_y))^-1 on the (my, mx) unknowns,
  // recomputed only when the coefficients change, then one 2D circulant product.
  if (!(m.inverse_valid && m.inverse_kind == kind && m.inverse_sigma == sigma &&
        m.inverse_kappa == kappa)) {
    const std::vector<double>& mux = m.periodic ? m.lam_x : m.circulant(kind, 0);
    const std::vector<double>& muy = m.periodic ? m.lam_y : m.circulant(kind, 1);
    m.grid2d->set_eigenvalues(m.inverse2d, [&](std::size_t kx, std::size_t ky) {
      const double d = sigma + kappa * (mux[kx] + muy[ky]);
      return 1.0 / (d < sigma ? sigma : d);
    });
    m.inverse_valid = true;
    m.inverse_kind = kind;
    m.inverse_sigma = sigma;
    m.inverse_kappa = kappa;
  }
  if (m.periodic) {
    // Every point is an unknown: the grid itself is the (my, mx) array.
    m.grid2d->apply(m.inverse2d, x, y, 0.0, 1.0, m.selector, m.grid2d_kernel);
    return;
  }
  std::copy(x, x + m.nx * m.ny, y);
  for (std::size_t j = 0; j < m.my; ++j) {
    for (std::size_t i = 0; i < m.mx; ++i)
      m.work_in[j * m.mx + i] = x[m.index(i + m.ix0, j + m.iy0)];
  }
  m.grid2d->apply(m.inverse2d, m.work_in.data(), m.work_out.data(), 0.0, 1.0, m.selector,
                  m.grid2d_kernel);
  for (std::size_t j = 0; j < m.my; ++j) {
    for (std::size_t i = 0; i < m.mx; ++i)
      y[m.index(i + m.ix0, j + m.iy0)] = m.work_out[j * m.mx + i];
  }
}

std::vector<double> RieszOperator::dense() const {
  const Impl& m = *impl_;
  const std::size_t n = m.mx * m.my;
  std::vector<double> a(n * n, 0.0);
  // One direction's matrix entries: Toeplitz (Dirichlet) or the periodised circulant.
  auto entry = [&](std::size_t len, const std::vector<double>& lam, double scale, std::size_t i,
                   std::size_t k) {
    const std::size_t d = i > k ? i - k : k - i;
    if (!m.periodic) return scale * m.g[d];
    double s = 0.0;
    for (std::size_t q = 0; q < len; ++q) {
      s += lam[q] *
           std::cos(2.0 * kPi * static_cast<double>(q * d % len) / static_cast<double>(len));
    }
    return s / static_cast<double>(len);
  };
  for (std::size_t j = 0; j < m.my; ++j) {
    for (std::size_t i = 0; i < m.mx; ++i) {
      const std::size_t row = j * m.mx + i;
      for (std::size_t k = 0; k < m.mx; ++k)
        a[row * n + j * m.mx + k] += entry(m.mx, m.lam_x, m.sx, i, k);
      if (m.dim == 2) {
        for (std::size_t l = 0; l < m.my; ++l)
          a[row * n + l * m.mx + i] += entry(m.my, m.lam_y, m.sy, j, l);
      }
    }
  }
  return a;
}

}  // namespace fracmfg::frac
