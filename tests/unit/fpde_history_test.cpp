// The L1 history of the Caputo derivative (frac/fpde_history.hpp): the direct sum against
// the reference L1 operator and exact values, the SOE history against the direct one at
// every step, and the checkpoint state.
#include "fracmfg/frac/fpde_history.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/fpde_time_mesh.hpp"
#include "fracmfg/frac/operators.hpp"

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

}  // namespace
