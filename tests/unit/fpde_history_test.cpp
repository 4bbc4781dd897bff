// The L1 history of the Caputo derivative (frac/fpde_history.hpp): the direct sum against
// the reference L1 operator and exact values, the SOE history against the direct one at
// every step, and the checkpoint state.
#include "fracmfg/frac/fpde_history.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/frac/fpde_time_mesh.hpp"
#include "fracmfg/frac/operators.hpp"
#include "fracmfg/kernels/l1_history.hpp"

namespace {

using namespace fracmfg::frac;
using Method = L1History::Method;

TEST(FpdeTimeMesh, GradedLevelsAndStepsAreConsistent) {
  const FpdeTimeMesh mesh(2.0, 50, 3.0);
  EXPECT_EQ(mesh.time(0), 0.0);
  EXPECT_EQ(mesh.time(50), 2.0);
  double sum = 0.0;
  for (int n = 1; n <= 50; ++n) {
    EXPECT_NEAR(mesh.step(n), mesh.time(n) - mesh.time(n - 1), 1e-15 * 2.0);
    EXPECT_NEAR(mesh.time(n), 2.0 * std::pow(n / 50.0, 3.0), 1e-15 * 2.0);
    sum += mesh.step(n);
  }
  EXPECT_NEAR(sum, 2.0, 1e-14);
  EXPECT_EQ(mesh.min_history_lag(), mesh.step(2));
  const FpdeTimeMesh uniform(1.0, 7);
  for (int n = 1; n <= 7; ++n) EXPECT_EQ(uniform.step(n), 1.0 / 7.0);
  EXPECT_THROW(FpdeTimeMesh(1.0, 0), fracmfg::Error);
  EXPECT_THROW(FpdeTimeMesh(1.0, 10, 0.5), fracmfg::Error);
}

/// c_n du^n + h^n at every step for the samples u(t_n) of one point.
std::vector<double> l1_derivative(Method method, double alpha, const FpdeTimeMesh& mesh,
                                  double (*u)(double), double tol = 1e-12) {
  L1History hist(method, alpha, mesh, 1, tol);
  std::vector<double> out(static_cast<std::size_t>(mesh.steps()) + 1, 0.0);
  for (std::int64_t n = 1; n <= mesh.steps(); ++n) {
    const double du = u(mesh.time(n)) - u(mesh.time(n - 1));
    out[static_cast<std::size_t>(n)] = hist.diagonal(n) * du + hist.history()[0];
    hist.push(&du);
  }
  return out;
}

TEST(L1History, DirectSumOnAUniformMeshEqualsTheL1Operator) {
  const double alpha = 0.4;
  const int steps = 64;
  const FpdeTimeMesh mesh(1.0, steps);
  auto u = [](double t) { return std::sin(3.0 * t) + t * t; };
  std::vector<double> samples;
  for (int n = 0; n <= steps; ++n) samples.push_back(u(mesh.time(n)));
  const auto ref = caputo_derivative_l1(samples, 1.0 / steps, alpha, ConvolutionMethod::direct);
  const auto got = l1_derivative(Method::direct, alpha, mesh,
                                 [](double t) { return std::sin(3.0 * t) + t * t; });
  for (int n = 1; n <= steps; ++n) EXPECT_NEAR(got[n], ref[n], 1e-13 * (1.0 + std::fabs(ref[n])));
}

TEST(L1History, IsExactForLinearFunctionsOnGradedMeshes) {
  // D^a t = t^{1-a} / Gamma(2-a), and the L1 interpolant of t is t itself.
  for (Method method : {Method::direct, Method::soe}) {
    const double alpha = 0.7;
    const FpdeTimeMesh mesh(1.5, 80, 2.5);
    const auto got = l1_derivative(
        method, alpha, mesh, [](double t) { return t; }, 1e-12);
    for (int n = 1; n <= 80; ++n) {
      const double exact = std::pow(mesh.time(n), 1.0 - alpha) / std::tgamma(2.0 - alpha);
      EXPECT_NEAR(got[n], exact, 1e-11 * exact) << "n " << n;
    }
  }
}

TEST(L1History, SchemeConvergesAtOrderTwoMinusAlphaForSmoothFunctions) {
  // u = t^3: D^a u = 6 t^{3-a} / Gamma(4-a); error at t = 1 is O(tau^{2-a}).
  const double alpha = 0.3;
  double previous = 0.0;
  for (int steps : {40, 80, 160, 320}) {
    const FpdeTimeMesh mesh(1.0, steps);
    const auto got = l1_derivative(Method::direct, alpha, mesh, [](double t) { return t * t * t; });
    const double err = std::fabs(got[steps] - 6.0 / std::tgamma(4.0 - alpha));
    if (previous > 0.0) {
      EXPECT_NEAR(std::log2(previous / err), 2.0 - alpha, 0.15);
    }
    previous = err;
  }
}

/// Runs direct and SOE histories side by side on vector data and checks, at every step,
/// |h_soe - h_direct| <= tol * |h|, |h| being the direct history of |du|.
void compare_soe_with_direct(const FpdeTimeMesh& mesh, double alpha, double tol) {
  const std::size_t points = 7;
  L1History direct(Method::direct, alpha, mesh, points);
  L1History fast(Method::soe, alpha, mesh, points, tol);
  L1History bound(Method::direct, alpha, mesh, points);
  ASSERT_NE(fast.soe(), nullptr);
  EXPECT_EQ(direct.soe(), nullptr);
  std::vector<double> du(points);
  std::vector<double> adu(points);
  double worst = 0.0;
  for (std::int64_t n = 1; n <= mesh.steps(); ++n) {
    const double t = mesh.time(n);
    const double t0 = mesh.time(n - 1);
    for (std::size_t i = 0; i < points; ++i) {
      // Smooth, oscillating and singular-at-zero components.
      auto u = [i](double s) {
        return std::cos((1.0 + i) * 4.0 * s) + std::pow(s, 0.3 + 0.1 * i) * (i % 2 ? -1 : 1);
      };
      du[i] = u(t) - u(t0);
      adu[i] = std::fabs(du[i]);
    }
    for (std::size_t i = 0; i < points; ++i) {
      const double diff = std::fabs(fast.history()[i] - direct.history()[i]);
      const double scale = bound.history()[i];
      EXPECT_LE(diff, tol * scale + 1e-14 * scale) << "step " << n << " point " << i;
      if (scale > 0) worst = std::max(worst, diff / scale);
    }
    direct.push(du.data());
    fast.push(du.data());
    bound.push(adu.data());
  }
  EXPECT_LE(worst, tol);
}

TEST(L1History, SoeHistoryMatchesTheDirectHistoryToTheToleranceAtEveryStep) {
  compare_soe_with_direct(FpdeTimeMesh(1.0, 300), 0.5, 1e-8);
  compare_soe_with_direct(FpdeTimeMesh(1.0, 300), 0.2, 1e-11);
  compare_soe_with_direct(FpdeTimeMesh(2.0, 200, 3.0), 0.8, 1e-9);
}

TEST(L1History, MemoryOfSoeIsIndependentOfTheStepCount) {
  const FpdeTimeMesh mesh(1.0, 500);
  L1History direct(Method::direct, 0.5, mesh, 10);
  L1History fast(Method::soe, 0.5, mesh, 10, 1e-8);
  std::vector<double> du(10, 1e-3);
  for (int n = 1; n <= 400; ++n) {
    direct.push(du.data());
    fast.push(du.data());
  }
  EXPECT_EQ(direct.stored_vectors(), 401u);
  EXPECT_EQ(fast.stored_vectors(), 1 + fast.soe()->size());
  EXPECT_EQ(fast.stored_bytes(), fast.stored_vectors() * 10 * sizeof(double));
}

TEST(L1History, RestoredStateContinuesBitIdentically) {
  for (Method method : {Method::direct, Method::soe}) {
    const FpdeTimeMesh mesh(1.0, 40, 2.0);
    const std::size_t points = 5;
    L1History a(method, 0.6, mesh, points, 1e-10);
    std::vector<double> du(points);
    auto fill = [&](int n) {
      for (std::size_t i = 0; i < points; ++i) du[i] = std::sin(0.37 * n + i) / (1.0 + n);
    };
    for (int n = 1; n <= 17; ++n) {
      fill(n);
      a.push(du.data());
    }
    // Interleaved layout, as in a multi-component checkpoint field.
    const std::size_t vectors = a.state_size();
    std::vector<double> state(vectors * points);
    for (std::size_t k = 0; k < vectors; ++k) a.save_state(k, state.data() + k, vectors);
    L1History b(method, 0.6, mesh, points, 1e-10);
    EXPECT_THROW(b.load_state(17, vectors + 1, state.data(), vectors + 1, 1), fracmfg::Error);
    b.load_state(17, vectors, state.data(), vectors, 1);
    EXPECT_EQ(b.levels(), 17);
    for (int n = 18; n <= 40; ++n) {
      for (std::size_t i = 0; i < points; ++i) ASSERT_EQ(a.history()[i], b.history()[i]);
      fill(n);
      a.push(du.data());
      b.push(du.data());
    }
    EXPECT_THROW(a.push(du.data()), fracmfg::Error);
  }
}

// --- the kernels and their placement --------------------------------------------------

namespace fk = fracmfg::kernels;
namespace fe = fracmfg::exec;

TEST(L1HistoryKernels, HostKernelsMatchPlainLoops) {
  const std::int64_t points = 1300;  // more than two blocks, a partial last one
  const std::int64_t terms = 7;
  std::vector<double> e(terms), q(terms), c(terms), du(points), modes(terms * points);
  for (std::int64_t j = 0; j < terms; ++j) {
    e[j] = 0.9 - 0.1 * j;
    q[j] = 0.3 + 0.05 * j;
    c[j] = 1.0 / (1.0 + j);
  }
  for (std::int64_t i = 0; i < points; ++i) du[i] = std::sin(0.01 * i);
  for (std::int64_t k = 0; k < terms * points; ++k) modes[k] = std::cos(0.003 * k);
  std::vector<double> ref_modes = modes, ref(points, 0.0), out(points, -1.0);
  for (std::int64_t i = 0; i < points; ++i) {
    for (std::int64_t j = 0; j < terms; ++j) {
      double& h = ref_modes[j * points + i];
      h = e[j] * h + q[j] * du[i];
      ref[i] += c[j] * h;
    }
  }
  fk::SoeHistoryStep s;
  s.points = points;
  s.terms = terms;
  s.decay = e.data();
  s.inject = q.data();
  s.weight = c.data();
  s.increment = du.data();
  s.modes = modes.data();
  s.history = out.data();
  fk::soe_history_host(s);
  for (std::int64_t i = 0; i < points; ++i) ASSERT_EQ(out[i], ref[i]) << i;
  EXPECT_EQ(modes, ref_modes);

  const std::int64_t levels = 9;
  std::vector<double> w(levels), past(levels * points);
  for (std::int64_t k = 0; k < levels; ++k) w[k] = 1.0 / (2.0 + k);
  for (std::int64_t k = 0; k < levels * points; ++k) past[k] = std::sin(0.011 * k);
  std::vector<double> direct_ref(points, 0.0);
  for (std::int64_t i = 0; i < points; ++i) {
    for (std::int64_t k = 0; k < levels; ++k) direct_ref[i] += w[k] * past[k * points + i];
  }
  fk::L1DirectStep d;
  d.points = points;
  d.levels = levels;
  d.weights = w.data();
  d.past = past.data();
  d.history = out.data();
  fk::l1_direct_host(d);
  for (std::int64_t i = 0; i < points; ++i) ASSERT_EQ(out[i], direct_ref[i]) << i;

  // Bad calls are named.
  s.decay = nullptr;
  EXPECT_THROW(fk::soe_history_host(s), fracmfg::Error);
  d.points = -1;
  EXPECT_THROW(fk::l1_direct_host(d), fracmfg::Error);
  // A device state is used only as it was placed.
  fk::L1HistoryDevice dev(fk::L1Algorithm::soe, 0, points, terms);
  EXPECT_FALSE(dev.resident());
  s.decay = e.data();
  EXPECT_THROW(dev.soe_step(s), fracmfg::Error);  // nothing uploaded
  EXPECT_THROW(dev.download(out.data()), fracmfg::Error);
  EXPECT_THROW(dev.truncate(0), fracmfg::Error);
  EXPECT_THROW(fk::L1HistoryDevice(fk::L1Algorithm::direct, 0, -1, 3), fracmfg::Error);
}

namespace {

fe::SelectorConfig selector_config(fe::BackendChoice backend) {
  fe::SelectorConfig c;
  c.use_environment = false;
  c.persist = false;
  c.activate_device = false;
  c.backend = backend;
  return c;
}

// One GPU as seen by a probe that found it (injected): the selector places calls on it.
fe::Hardware injected_gpu_node() {
  return fe::Hardware::from_yaml(
      "host_name: gpu-node\nhost_cores: 8\ncuda_compiled: true\nnode_rank: 0\nnode_size: 1\n"
      "gpus:\n  - {name: Injected GPU, cc: \"8.0\", multiprocessors: 108, memory_gb: 40, "
      "free_gb: 39}\n",
      "gpu_node.yaml");
}

// Pushes the same increments through a plain history and one placed by `selector`, and
// compares the histories after every push (bit for bit on the host; to round-off where a
// real device ran some steps), and their checkpoint states half-way.
void compare_with_selector(Method method, fe::Selector& selector, double tolerance) {
  const FpdeTimeMesh mesh(1.0, 60, 1.5);
  const std::size_t points = 700;
  L1History plain(method, 0.4, mesh, points, 1e-10);
  L1History placed(method, 0.4, mesh, points, 1e-10);
  placed.set_selector(&selector);
  std::vector<double> du(points);
  for (int n = 1; n <= 60; ++n) {
    for (std::size_t i = 0; i < points; ++i) du[i] = std::sin(0.1 * n + 0.01 * i) / n;
    plain.push(du.data());
    placed.push(du.data());
    for (std::size_t i = 0; i < points; ++i) {
      ASSERT_NEAR(placed.history()[i], plain.history()[i],
                  tolerance * (1.0 + std::fabs(plain.history()[i])))
          << "step " << n << " point " << i;
    }
    if (n == 30) {
      ASSERT_EQ(placed.state_size(), plain.state_size());
      std::vector<double> a(points), b(points);
      for (std::size_t k = 0; k < plain.state_size(); ++k) {
        plain.save_state(k, a.data());
        placed.save_state(k, b.data());
        for (std::size_t i = 0; i < points; ++i) {
          ASSERT_NEAR(b[i], a[i], tolerance * (1.0 + std::fabs(a[i]))) << "vector " << k;
        }
      }
    }
  }
}

}  // namespace

TEST(L1History, ASelectorOnTheHostGivesTheSameHistoryBitForBit) {
  for (Method method : {Method::soe, Method::direct}) {
    fe::Selector selector(
        fe::Hardware::from_yaml("host_name: cpu-node\nhost_cores: 2\n", "cpu.yaml"),
        selector_config(fe::BackendChoice::automatic));
    compare_with_selector(method, selector, 0.0);
    const auto kernel =
        selector.model().find_kernel(method == Method::soe ? fe::kernel_names::fpde_soe_history
                                                           : fe::kernel_names::fpde_l1_history);
    ASSERT_TRUE(kernel.has_value());
    // Every push but the last (which forms no history) is one call.
    EXPECT_EQ(selector.stats(*kernel, fe::Backend::cpu).calls, 59u);
  }
}

TEST(L1History, AFailingDevicePathFallsBackWithoutLosingTheState) {
  // The selector places every step on the injected GPU; where this machine cannot run it
  // (no device, or no CUDA in the build) each attempt fails before touching the state and the
  // host redoes the step, until the kernel is given up on this rank. On a machine with a
  // device the steps run there, with the state resident, to round-off of the host's.
  const bool real_device = !fe::probe_cuda().devices.empty();
  for (Method method : {Method::soe, Method::direct}) {
    fe::Selector selector(injected_gpu_node(), selector_config(fe::BackendChoice::cuda),
                          fracmfg::core::Logger(0, fracmfg::core::LogLevel::error, false));
    compare_with_selector(method, selector, real_device ? 1e-12 : 0.0);
    const auto kernel =
        selector.model().find_kernel(method == Method::soe ? fe::kernel_names::fpde_soe_history
                                                           : fe::kernel_names::fpde_l1_history);
    ASSERT_TRUE(kernel.has_value());
    if (!real_device) {
      EXPECT_EQ(selector.stats(*kernel, fe::Backend::cuda).failures, 3u);
      EXPECT_TRUE(selector.cuda_disabled(*kernel));
      EXPECT_EQ(selector.stats(*kernel, fe::Backend::cpu).calls, 59u);
    } else {
      EXPECT_EQ(selector.stats(*kernel, fe::Backend::cuda).calls, 59u);
    }
  }
}

}  // namespace
