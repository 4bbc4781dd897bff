#include "fracmfg/frac/fpde_history.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/kernel_workloads.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/frac/weights.hpp"
#include "fracmfg/kernels/l1_history.hpp"

namespace fracmfg::frac {

struct L1History::Impl {
  Method method;
  double alpha;
  FpdeTimeMesh mesh;
  std::size_t points;
  std::int64_t levels = 0;
  double gamma2 = 0.0;       ///< Gamma(2 - alpha)
  std::vector<double> hist;  ///< history of step levels + 1
  // direct
  std::vector<double> du;   ///< du^1..du^stored, du^k at (k - 1) * points (host copy)
  std::int64_t stored = 0;  ///< increments kept
  std::vector<double> b;    ///< uniform mesh: l1_weights(alpha, N)
  std::vector<double> w;    ///< the current step's direct weights a_{m,1..m-1}
  // soe
  std::optional<SoeApproximation> soe;
  std::vector<double> h;      ///< H_j, N_exp blocks of `points` values
  std::vector<double> coeff;  ///< w_j / Gamma(1 - alpha)
  std::vector<double> e, q;   ///< the current step's decays and injections
  // placement (set_selector): the state (du or h) lives on the host, or on the rank's
  // device while `device` is resident; the host copy is then stale.
  exec::Selector* selector = nullptr;
  exec::KernelId kernel;
  std::optional<kernels::L1HistoryDevice> device;

  Impl(Method m, double a, FpdeTimeMesh tm, std::size_t n, double tolerance)
      : method(m), alpha(a), mesh(std::move(tm)), points(n), hist(n, 0.0) {
    gamma2 = std::exp(std::lgamma(2.0 - alpha));
    if (method == Method::direct) {
      if (mesh.uniform()) b = l1_weights(alpha, static_cast<std::size_t>(mesh.steps()));
      // Every increment is kept: the whole run's past at once, never copied as it grows.
      du.reserve(static_cast<std::size_t>(mesh.steps()) * points);
      return;
    }
    soe = soe_approximation(alpha, mesh.min_history_lag(), mesh.horizon(), tolerance);
    h.assign(soe->size() * points, 0.0);
    const double inv_gamma1 = 1.0 / std::exp(std::lgamma(1.0 - alpha));
    for (double wj : soe->weights) coeff.push_back(wj * inv_gamma1);
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

  std::int64_t np() const { return static_cast<std::int64_t>(points); }
  /// Vectors the device state is sized for: the modes, or every step's increment.
  std::int64_t capacity() const {
    return method == Method::soe ? static_cast<std::int64_t>(soe->size()) : mesh.steps();
  }
  /// Vectors of the state that lives on the device when resident.
  std::int64_t state_vectors() const {
    return method == Method::direct ? stored : static_cast<std::int64_t>(soe->size());
  }
  std::vector<double>& state() { return method == Method::direct ? du : h; }
  const std::vector<double>& state() const { return method == Method::direct ? du : h; }

  /// Brings a device-resident state home (a re-placement to the host, a checkpoint).
  void to_host() {
    if (!device || !device->resident()) return;
    if (method == Method::direct) du.resize(static_cast<std::size_t>(stored) * points);
    device->download(state().data());
    device->drop();
  }

  /// Runs one step's kernel: on the host without a selector, else where the rank's selector
  /// places it, moving the state when the placement changes.
  template <class HostStep, class DeviceStep>
  void dispatch(const exec::Workload& work, HostStep&& host_step, DeviceStep&& device_step) {
    if (selector == nullptr) {
      host_step();
      return;
    }
    selector->run(
        work,
        [&] {
          to_host();
          host_step();
        },
        [&] {
          if (!device) {
            device.emplace(
                method == Method::soe ? kernels::L1Algorithm::soe : kernels::L1Algorithm::direct,
                selector->device().device, np(), capacity());
          }
          if (!device->resident()) device->upload(state().data(), state_vectors());
          device_step();
        });
  }

  exec::Workload workload(std::int64_t vectors) const {
    const bool resident = device && device->resident();
    return method == Method::soe
               ? exec::soe_history_workload(kernel, np(), vectors, resident)
               : exec::l1_direct_workload(kernel, np(), vectors, capacity(), resident);
  }

  /// Keeps du on the host (the host path, or the last level, which forms no history).
  void append_on_host(const double* d) {
    to_host();
    du.resize(static_cast<std::size_t>(stored + 1) * points);
    std::copy(d, d + points, du.end() - static_cast<std::ptrdiff_t>(points));
    ++stored;
  }

  void push_direct(const double* d) {
    const std::int64_t count = stored + 1;  // increments after this one is kept
    const std::int64_t m = count + 1;       // the step whose history is formed
    w.resize(static_cast<std::size_t>(count));
    for (std::int64_t k = 1; k < m; ++k) w[static_cast<std::size_t>(k - 1)] = direct_weight(m, k);
    kernels::L1DirectStep step;
    step.points = np();
    step.levels = count;
    step.weights = w.data();
    step.history = hist.data();
    // While the past is on the device the host copy of du is stale (to_host() refreshes it).
    dispatch(
        workload(count),
        [&] {
          append_on_host(d);
          step.past = du.data();
          kernels::l1_direct_host(step);
        },
        [&] {
          device->direct_step(d, step);
          stored = count;
        });
  }

  void push_soe(const double* d, std::int64_t n) {
    const std::size_t terms = soe->size();
    const double tau_n = mesh.step(n);
    const double tau_next = mesh.step(n + 1);
    e.resize(terms);
    q.resize(terms);
    for (std::size_t j = 0; j < terms; ++j) {
      const double s = soe->nodes[j];
      e[j] = std::exp(-s * tau_next);
      q[j] = e[j] * (-std::expm1(-s * tau_n)) / (s * tau_n);
    }
    kernels::SoeHistoryStep step;
    step.points = np();
    step.terms = static_cast<std::int64_t>(terms);
    step.decay = e.data();
    step.inject = q.data();
    step.weight = coeff.data();
    step.increment = d;
    step.modes = h.data();
    step.history = hist.data();
    dispatch(
        workload(step.terms), [&] { kernels::soe_history_host(step); },
        [&] { device->soe_step(step); });
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
    if (m.method == Method::direct) m.append_on_host(du);
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

void L1History::set_selector(exec::Selector* selector) {
  Impl& m = *impl_;
  m.to_host();
  m.device.reset();
  m.selector = selector;
  if (selector != nullptr) {
    m.kernel = selector->kernel(m.method == Method::soe ? exec::kernel_names::fpde_soe_history
                                                        : exec::kernel_names::fpde_l1_history);
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
  return 1 + static_cast<std::size_t>(m.state_vectors());
}

void L1History::save_state(std::size_t k, double* out, std::size_t out_stride) const {
  if (k >= state_size()) throw Error("L1History::save_state: no such state vector");
  impl_->to_host();  // the state on the device comes home (and is placed again by the next step)
  const Impl& m = *impl_;
  const double* src = k == 0 ? m.hist.data() : m.state().data() + (k - 1) * m.points;
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
  if (m.device) m.device->drop();  // the host state below is the authoritative one
  m.levels = levels;
  read(0, m.hist.data());
  if (m.method == Method::direct) {
    m.stored = levels;
    m.du.assign(static_cast<std::size_t>(levels) * m.points, 0.0);
    for (std::int64_t k = 0; k < levels; ++k)
      read(static_cast<std::size_t>(k) + 1, m.du.data() + k * m.points);
  } else {
    for (std::size_t j = 0; j < m.soe->size(); ++j) read(j + 1, m.h.data() + j * m.points);
  }
}

}  // namespace fracmfg::frac
