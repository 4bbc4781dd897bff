#include "fracmfg/frac/fpde_history.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/weights.hpp"

namespace fracmfg::frac {

namespace {
/// Points per block of the SOE update: the block of du and of the history stays in cache
/// while all exponentials are swept.
constexpr std::size_t kBlock = 512;
}  // namespace

struct L1History::Impl {
  Method method;
  double alpha;
  FpdeTimeMesh mesh;
  std::size_t points;
  std::int64_t levels = 0;
  double gamma2 = 0.0;       ///< Gamma(2 - alpha)
  std::vector<double> hist;  ///< history of step levels + 1
  // direct
  std::vector<std::vector<double>> du;  ///< du^1..du^levels
  std::vector<double> b;                ///< uniform mesh: l1_weights(alpha, N)
  // soe
  std::optional<SoeApproximation> soe;
  std::vector<double> h;      ///< H_j, N_exp blocks of `points` values
  std::vector<double> coeff;  ///< w_j / Gamma(1 - alpha)

  Impl(Method m, double a, FpdeTimeMesh tm, std::size_t n, double tolerance)
      : method(m), alpha(a), mesh(std::move(tm)), points(n), hist(n, 0.0) {
    gamma2 = std::exp(std::lgamma(2.0 - alpha));
    if (method == Method::direct) {
      if (mesh.uniform()) b = l1_weights(alpha, static_cast<std::size_t>(mesh.steps()));
      return;
    }
    soe = soe_approximation(alpha, mesh.min_history_lag(), mesh.horizon(), tolerance);
    h.assign(soe->size() * points, 0.0);
    const double inv_gamma1 = 1.0 / std::exp(std::lgamma(1.0 - alpha));
    for (double w : soe->weights) coeff.push_back(w * inv_gamma1);
  }

  /// a_{m,k}: weight of du^k in the history of step m (1 <= k < m).
  double direct_weight(std::int64_t m, std::int64_t k) const {
    if (mesh.uniform()) {
      return l1_scale(alpha, mesh.step(1)) * b[static_cast<std::size_t>(m - k)];
    }
    const double p = 1.0 - alpha;
    const double small = mesh.time(m) - mesh.time(k);
    const double tau = mesh.step(k);
    // (t_m - t_{k-1})^p - (t_m - t_k)^p = small^p expm1(p log1p(tau / small)) without
    // cancellation; small >= tau_m > 0.
    return std::pow(small, p) * std::expm1(p * std::log1p(tau / small)) / (tau * gamma2);
  }

  void push_direct(const double* d) {
    du.emplace_back(d, d + points);
    const std::int64_t m = levels + 1;  // the step whose history is formed
    std::fill(hist.begin(), hist.end(), 0.0);
    for (std::int64_t k = 1; k < m; ++k) {
      const double w = direct_weight(m, k);
      const double* dk = du[static_cast<std::size_t>(k - 1)].data();
      for (std::size_t i = 0; i < points; ++i) hist[i] += w * dk[i];
    }
  }

  void push_soe(const double* d, std::int64_t n) {
    const std::size_t terms = soe->size();
    const double tau_n = mesh.step(n);
    const double tau_next = mesh.step(n + 1);
    std::vector<double> e(terms);
    std::vector<double> q(terms);
    for (std::size_t j = 0; j < terms; ++j) {
      const double s = soe->nodes[j];
      e[j] = std::exp(-s * tau_next);
      q[j] = e[j] * (-std::expm1(-s * tau_n)) / (s * tau_n);
    }
    for (std::size_t i0 = 0; i0 < points; i0 += kBlock) {
      const std::size_t i1 = std::min(points, i0 + kBlock);
      double* out = hist.data();
      for (std::size_t i = i0; i < i1; ++i) out[i] = 0.0;
      for (std::size_t j = 0; j < terms; ++j) {
        double* hj = h.data() + j * points;
        const double ej = e[j];
        const double qj = q[j];
        const double cj = coeff[j];
        for (std::size_t i = i0; i < i1; ++i) {
          hj[i] = ej * hj[i] + qj * d[i];
          out[i] += cj * hj[i];
        }
      }
    }
  }
};

L1History::L1History(Method method, double alpha, FpdeTimeMesh mesh, std::size_t points,
                     double tolerance) {
  if (!(alpha > 0.0 && alpha < 1.0)) {
    std::ostringstream os;
    os << "L1History: the order must be in (0, 1), got " << alpha;
    throw Error(os.str());
  }
  impl_ = std::make_unique<Impl>(method, alpha, std::move(mesh), points, tolerance);
}

L1History::~L1History() = default;
L1History::L1History(L1History&&) noexcept = default;
L1History& L1History::operator=(L1History&&) noexcept = default;

L1History::Method L1History::method() const {
  return impl_->method;
}
double L1History::alpha() const {
  return impl_->alpha;
}
const FpdeTimeMesh& L1History::mesh() const {
  return impl_->mesh;
}
std::size_t L1History::points() const {
  return impl_->points;
}
std::int64_t L1History::levels() const {
  return impl_->levels;
}

double L1History::diagonal(std::int64_t n) const {
  return std::pow(impl_->mesh.step(n), -impl_->alpha) / impl_->gamma2;
}

const std::vector<double>& L1History::history() const {
  return impl_->hist;
}

void L1History::push(const double* du) {
  Impl& m = *impl_;
  const std::int64_t n = m.levels + 1;
  if (n > m.mesh.steps()) {
    throw Error("L1History::push: more increments than time steps");
  }
  if (n == m.mesh.steps()) {
    // The last level: no further step needs a history; keep the increment for the record.
    if (m.method == Method::direct) m.du.emplace_back(du, du + m.points);
    m.levels = n;
    return;
  }
  m.levels = n;
  if (m.method == Method::direct) {
    m.push_direct(du);
  } else {
    m.push_soe(du, n);
  }
}

const SoeApproximation* L1History::soe() const {
  return impl_->soe ? &*impl_->soe : nullptr;
}

std::size_t L1History::stored_vectors() const {
  return state_size();
}

std::size_t L1History::state_size() const {
  const Impl& m = *impl_;
  return 1 + (m.method == Method::direct ? m.du.size() : m.soe->size());
}

void L1History::save_state(std::size_t k, double* out, std::size_t out_stride) const {
  const Impl& m = *impl_;
  if (k >= state_size()) throw Error("L1History::save_state: no such state vector");
  const double* src = k == 0                       ? m.hist.data()
                      : m.method == Method::direct ? m.du[k - 1].data()
                                                   : m.h.data() + (k - 1) * m.points;
  for (std::size_t i = 0; i < m.points; ++i) out[i * out_stride] = src[i];
}

void L1History::load_state(std::int64_t levels, std::size_t vectors, const double* state,
                           std::size_t point_stride, std::size_t vector_stride) {
  Impl& m = *impl_;
  const std::size_t expected =
      1 + (m.method == Method::direct ? static_cast<std::size_t>(std::max<std::int64_t>(levels, 0))
                                      : m.soe->size());
  if (levels < 0 || levels > m.mesh.steps() || vectors != expected) {
    std::ostringstream os;
    os << "L1History::load_state: " << vectors << " state vectors for " << levels
       << " levels, expected " << expected;
    throw Error(os.str());
  }
  auto read = [&](std::size_t k, double* dst) {
    for (std::size_t i = 0; i < m.points; ++i) dst[i] = state[i * point_stride + k * vector_stride];
  };
  m.levels = levels;
  read(0, m.hist.data());
  if (m.method == Method::direct) {
    m.du.assign(static_cast<std::size_t>(levels), std::vector<double>(m.points));
    for (std::size_t k = 0; k < m.du.size(); ++k) read(k + 1, m.du[k].data());
  } else {
    for (std::size_t j = 0; j < m.soe->size(); ++j) read(j + 1, m.h.data() + j * m.points);
  }
}

}  // namespace fracmfg::frac
