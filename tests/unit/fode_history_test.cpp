// History sums of frac::FodeSolver: the kernels (kernels/history.hpp), the nested block
// engine (src/frac/history_engine.hpp) and the solver's FFT and direct histories agree.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "frac/history_engine.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/fode_solver.hpp"
#include "fracmfg/frac/weights.hpp"
#include "fracmfg/kernels/history.hpp"

namespace ff = fracmfg::frac;
namespace fk = fracmfg::kernels;
namespace fd = fracmfg::frac::detail;

namespace {

std::vector<double> random_vector(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

/// Product-integration weights K(k) = h^a/Gamma(a+2) ((k+1)^{a+1} - 2k^{a+1} + (k-1)^{a+1}),
/// k = 0..n-1: growing for a > 1, decaying for a < 1.
std::vector<double> trapezoid(double a, std::size_t n) {
  return ff::rl_trapezoid_weights(a, 0.01, n);
}

}  // namespace

TEST(fode_history_test, FftSquareMatchesDirectSumForStridedBatches) {
  // c = 5 components in rows of stride 7 (two columns of other data must stay untouched),
  // m = 37 signal rows, p = 37 and p = 11 output rows, two rules, L = 2m and a non-power.
  const std::int64_t c = 5, stride = 7, m = 37;
  for (const std::int64_t p : {std::int64_t{37}, std::int64_t{11}}) {
    for (const std::int64_t length : {2 * m, m + p - 1 + 3}) {
      const auto f = random_vector(static_cast<std::size_t>(m * stride), 1);
      const auto k0 = trapezoid(0.4, static_cast<std::size_t>(length + 1));
      const auto k1 = trapezoid(1.6, static_cast<std::size_t>(length + 1));
      std::vector<double> direct[2], fft[2];
      for (int r = 0; r < 2; ++r) {
        direct[r] = random_vector(static_cast<std::size_t>(p * stride), 7 + r);
        fft[r] = direct[r];
      }
      fk::HistoryBlock b;
      b.components = c;
      b.stride = stride;
      b.signal_rows = m;
      b.output_rows = p;
      b.offset = m;
      b.rules = 2;
      b.signal = f.data();
      b.output[0] = direct[0].data();
      b.output[1] = direct[1].data();
      fk::HistoryWeights w;
      w.weights[0] = k0.data();
      w.weights[1] = k1.data();
      w.count = length + 1;
      fk::history_direct_host(b, w);

      const auto s0 = fk::history_spectrum(k0.data(), length);
      const auto s1 = fk::history_spectrum(k1.data(), length);
      fk::HistorySpectra s;
      s.fft_length = length;
      s.spectrum[0] = s0.data();
      s.spectrum[1] = s1.data();
      b.output[0] = fft[0].data();
      b.output[1] = fft[1].data();
      fk::HistoryOptions small;
      small.max_batch_doubles = 2 * length;  // chunks of two components
      fk::HistoryWorkspace ws(small);
      fk::history_fft_host(b, s, ws);
      EXPECT_EQ(ws.plans_created(), 2);  // batches of 2 and the last one of 1

      for (int r = 0; r < 2; ++r) {
        const auto& k = r == 0 ? k0 : k1;
        for (std::int64_t o = 0; o < p; ++o) {
          for (std::int64_t i = 0; i < stride; ++i) {
            const auto e = static_cast<std::size_t>(o * stride + i);
            if (i >= c) {
              EXPECT_EQ(fft[r][e], direct[r][e]) << "column outside the block was modified";
              continue;
            }
            // Scale of the terms of this output.
            double scale = 1.0;
            for (std::int64_t sr = 0; sr < m; ++sr) {
              scale += std::fabs(k[static_cast<std::size_t>(m + o - sr)] *
                                 f[static_cast<std::size_t>(sr * stride + i)]);
            }
            EXPECT_NEAR(fft[r][e], direct[r][e], 1e-14 * scale)
                << "rule " << r << " row " << o << " component " << i << " L " << length;
          }
        }
      }
    }
  }
}

TEST(fode_history_test, KernelsRejectInconsistentBlocks) {
  std::vector<double> f(10), out(10), k(20);
  fk::HistoryBlock b;
  b.components = 1;
  b.stride = 1;
  b.signal_rows = 4;
  b.output_rows = 4;
  b.offset = 3;  // not adjacent
  b.signal = f.data();
  b.output[0] = out.data();
  const auto s = fk::history_spectrum(k.data(), 8);
  fk::HistorySpectra sp;
  sp.fft_length = 8;
  sp.spectrum[0] = s.data();
  fk::HistoryWorkspace ws;
  EXPECT_THROW(fk::history_fft_host(b, sp, ws), fracmfg::Error);
  b.offset = 4;
  sp.fft_length = 6;  // below m + p - 1 = 7
  EXPECT_THROW(fk::history_fft_host(b, sp, ws), fracmfg::Error);
  b.stride = 0;  // smaller than the components
  sp.fft_length = 8;
  EXPECT_THROW(fk::history_fft_host(b, sp, ws), fracmfg::Error);
  b.stride = 1;
  fk::HistoryWeights w;
  w.weights[0] = k.data();
  w.count = 7;  // the block reads K(7)
  EXPECT_THROW(fk::history_direct_host(b, w), fracmfg::Error);
}

TEST(fode_history_test, NestedEngineEqualsNaiveSumEveryStepInEveryMode) {
  // A recurrence whose values depend on the sums, so that a wrong or late contribution shows:
  // F[n][i] = sin(0.37 n + i) + 0.5 H_0[n][i] - 0.25 H_1[n][i], with two groups of weights.
  const std::int64_t points = 777, c = 3;
  const std::int64_t block = 8;
  for (const fd::HistoryMode mode :
       {fd::HistoryMode::direct, fd::HistoryMode::fft, fd::HistoryMode::automatic}) {
    const std::int64_t count = fd::HistoryEngine::weight_count(points, mode);
    std::vector<fd::HistoryGroup> groups(2);
    groups[0].begin = 0;
    groups[0].end = 2;
    groups[1].begin = 2;
    groups[1].end = 3;
    const double orders[2] = {0.3, 1.7};
    for (int g = 0; g < 2; ++g) {
      groups[static_cast<std::size_t>(g)].weights[0] =
          ff::rl_rectangle_weights(orders[g], 1e-2, static_cast<std::size_t>(count));
      groups[static_cast<std::size_t>(g)].weights[1] =
          trapezoid(orders[g], static_cast<std::size_t>(count));
    }
    const auto kernel = [&](int g, int r, std::int64_t k) {
      return groups[static_cast<std::size_t>(g)].weights[r][static_cast<std::size_t>(k)];
    };
    fd::HistoryEngine engine(points, c, 2, mode, block, groups, nullptr);
    std::vector<double> naive(static_cast<std::size_t>(points * c));
    double worst = 0.0;
    std::int64_t next = 0;
    engine.run([&](std::int64_t n) {
      ASSERT_EQ(n, next++);
      for (std::int64_t i = 0; i < c; ++i) {
        const int g = i < 2 ? 0 : 1;
        double h[2] = {0.0, 0.0}, scale = 1e-300;
        for (std::int64_t j = 0; j < n; ++j) {
          for (int r = 0; r < 2; ++r) {
            h[r] += kernel(g, r, n - j) * naive[static_cast<std::size_t>(j * c + i)];
            scale += std::fabs(kernel(g, r, n - j) * naive[static_cast<std::size_t>(j * c + i)]);
          }
        }
        for (int r = 0; r < 2; ++r) {
          worst = std::max(worst, std::fabs(engine.history(r, n)[i] - h[r]) / scale);
        }
        const double value = std::sin(0.37 * static_cast<double>(n) + static_cast<double>(i)) +
                             0.5 * h[0] - 0.25 * h[1];
        naive[static_cast<std::size_t>(n * c + i)] = value;
        engine.f_row(n)[i] = value;
      }
    });
    EXPECT_EQ(next, points);
    EXPECT_LE(worst, 1e-13) << "mode " << static_cast<int>(mode);
    if (mode == fd::HistoryMode::fft) {
      EXPECT_GT(engine.counters().fft_squares, 0);
      EXPECT_EQ(engine.counters().direct_squares, 0);
    }
    if (mode == fd::HistoryMode::direct) {
      EXPECT_EQ(engine.counters().fft_squares, 0);
    }
  }
}

namespace {

struct Trajectory {
  std::vector<double> y;  // every step, every component
};

Trajectory solve(ff::FodeMethod method, ff::FodeHistory history, std::vector<double> orders,
                 std::int64_t steps, std::int64_t block = 16) {
  const std::size_t d = orders.size();
  ff::FodeProblem p;
  p.global_size = static_cast<PetscInt>(d);
  p.local_size = static_cast<PetscInt>(d);
  p.order = orders;
  p.horizon = 2.0;
  p.steps = steps;
  p.initial.assign(d, 0.0);
  for (std::size_t i = 0; i < d; ++i) p.initial[i] = 0.5 + 0.1 * static_cast<double>(i);
  p.initial_derivative.assign(d, 0.25);
  ff::FodeRhs rhs;
  // A coupled nonlinear system: f_i = -y_i + 0.3 sin(y_{i+1}) + cos(t) / (1 + i).
  rhs.function = [d](double t, const double* y, double* f) {
    for (std::size_t i = 0; i < d; ++i) {
      f[i] = -y[i] + 0.3 * std::sin(y[(i + 1) % d]) + std::cos(t) / (1.0 + static_cast<double>(i));
    }
  };
  ff::FodeOptions o;
  o.method = method;
  o.history = history;
  o.block_size = block;
  ff::FodeSolver solver(MPI_COMM_SELF, p, rhs, o);
  Trajectory tr;
  solver.solve([&](const ff::FodeStepView& v) { tr.y.insert(tr.y.end(), v.y, v.y + d); });
  return tr;
}

}  // namespace

TEST(fode_history_test, FftAndDirectHistoriesAgreeEveryStepToRelative1e11) {
  for (const ff::FodeMethod method : {ff::FodeMethod::abm, ff::FodeMethod::trapezoidal}) {
    // Every order of the convergence tests, as one system of groups (two share 0.8).
    const std::vector<double> orders = {0.3, 0.5, 0.8, 1.5, 0.8};
    const Trajectory direct = solve(method, ff::FodeHistory::direct, orders, 1500);
    const Trajectory fft = solve(method, ff::FodeHistory::fft, orders, 1500);
    const Trajectory automatic = solve(method, ff::FodeHistory::automatic, orders, 1500);
    ASSERT_EQ(direct.y.size(), fft.y.size());
    double worst_fft = 0.0, worst_auto = 0.0;
    for (std::size_t k = 0; k < direct.y.size(); ++k) {
      const double scale = std::max(std::fabs(direct.y[k]), 1e-300);
      worst_fft = std::max(worst_fft, std::fabs(fft.y[k] - direct.y[k]) / scale);
      worst_auto = std::max(worst_auto, std::fabs(automatic.y[k] - direct.y[k]) / scale);
    }
    EXPECT_LE(worst_fft, 1e-11) << ff::to_string(method);
    EXPECT_LE(worst_auto, 1e-11) << ff::to_string(method);
    std::printf("%s: max relative difference fft %.2e, auto %.2e\n", ff::to_string(method),
                worst_fft, worst_auto);
  }
}

TEST(fode_history_test, FftAndDirectHistoriesAgreeOnTheTestProblemsEveryStep) {
  // The problems of fode_convergence_test: D^a y = -y, y(0) = 1, and Diethelm-Ford-Freed's
  // nonlinear equation, for a in {0.3, 0.5, 0.8, 1.5}, both methods, N = 2000 (base block 16,
  // FFT squares up to 1024 steps).
  for (const bool nonlinear : {false, true}) {
    for (const double a : {0.3, 0.5, 0.8, 1.5}) {
      const double c1 = 40320.0 / std::tgamma(9 - a);
      const double c2 = 3.0 * std::tgamma(5 + a / 2) / std::tgamma(5 - a / 2);
      const double c3 = 2.25 * std::tgamma(a + 1);
      ff::FodeRhs rhs;
      if (nonlinear) {
        rhs.function = [=](double t, const double* y, double* f) {
          const double s = 1.5 * std::pow(t, a / 2) - std::pow(t, 4);
          f[0] = c1 * std::pow(t, 8 - a) - c2 * std::pow(t, 4 - a / 2) + c3 + s * s * s -
                 std::pow(y[0], 1.5);
        };
      } else {
        rhs.function = [](double, const double* y, double* f) { f[0] = -y[0]; };
      }
      ff::FodeProblem p;
      p.global_size = p.local_size = 1;
      p.order = {a};
      p.horizon = nonlinear ? 0.8 : 1.0;
      p.steps = 2000;
      p.initial = {nonlinear ? 0.0 : 1.0};
      if (a > 1) p.initial_derivative = {0.0};
      for (const ff::FodeMethod method : {ff::FodeMethod::abm, ff::FodeMethod::trapezoidal}) {
        std::vector<double> y[2];
        for (int k = 0; k < 2; ++k) {
          ff::FodeOptions o;
          o.method = method;
          o.history = k == 0 ? ff::FodeHistory::direct : ff::FodeHistory::fft;
          o.block_size = 16;
          ff::FodeSolver s(MPI_COMM_SELF, p, rhs, o);
          s.solve([&](const ff::FodeStepView& v) { y[k].push_back(v.y[0]); });
        }
        ASSERT_EQ(y[0].size(), 2001u);
        double worst = 0.0;
        for (std::size_t n = 1; n < y[0].size(); ++n) {
          worst = std::max(worst, std::fabs(y[1][n] - y[0][n]) / std::fabs(y[0][n]));
        }
        EXPECT_LE(worst, 1e-11) << (nonlinear ? "nonlinear" : "relaxation") << " a = " << a << " "
                                << ff::to_string(method);
      }
    }
  }
}
