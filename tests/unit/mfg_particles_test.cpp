// The particle Fokker-Planck method: densities have mass 1 and are >= 0; the same seed gives
// the same paths and another seed other ones; with a given value function the particle
// density agrees with the finite-difference (adjoint) Fokker-Planck solution within the
// statistical error, and that error falls like N^(-1/2) (fitted slope -0.5 within 0.15);
// the MFG fixed point with particles converges (common random numbers) close to the
// finite-difference game.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/kernels/kde.hpp"
#include "fracmfg/mfg/fokker_planck.hpp"
#include "fracmfg/mfg/model.hpp"
#include "fracmfg/mfg/particles.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/petsc_handles.hpp"

namespace {

namespace mfg = fracmfg::mfg;
namespace detail = fracmfg::mfg::detail;
using fracmfg::io::MfgConfig;

fracmfg::core::Logger quiet() {
  return fracmfg::core::Logger(0, fracmfg::core::LogLevel::warn, false);
}

constexpr double kBandwidth = 0.03;

// A 1D periodic transport-diffusion problem: m0 = 1 + 0.5 sin(2 pi x), nu = 0.05, T = 0.5.
MfgConfig transport(int points, int steps, long particles, long seed) {
  return fracmfg::io::Deck::from_string(
             "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
             "  grid: {points: [" +
                 std::to_string(points) +
                 "]}\n  time: {horizon: 0.5, steps: " + std::to_string(steps) +
                 "}\n  diffusion: 0.05\n  coupling: {type: log}\n"
                 "  initial_density: \"1 + 0.5*sin(2*pi*x)\"\n"
                 "  fokker_planck: {method: particles, particles: " +
                 std::to_string(particles) + ", bandwidth: " + std::to_string(kBandwidth) +
                 ", seed: " + std::to_string(seed) + "}\n",
             "particles.yaml")
      .mfg();
}

// The value function u(x) = 0.05 cos(2 pi x) at the model's points (drift 0.1 pi sin(2 pi x)).
void fill_u(const mfg::Model& model, Vec u) {
  detail::WriteArray a(u);
  for (std::size_t k = 0; k < model.x().size(); ++k) {
    a[static_cast<PetscInt>(k)] = 0.05 * std::cos(2 * M_PI * model.x()[k]);
  }
}

std::vector<double> values(Vec v) {
  detail::ReadArray a(v);
  PetscInt n = 0;
  VecGetLocalSize(v, &n);
  return std::vector<double>(a.get(), a.get() + n);
}

// The particle density at T.
std::vector<double> particle_density(int points, int steps, long particles, long seed) {
  const mfg::Model model(PETSC_COMM_WORLD,
                         mfg::problem_from_config(transport(points, steps, particles, seed)));
  mfg::ParticleFokkerPlanck pf(model, nullptr, quiet());
  auto u = detail::global_vec(model.dm());
  auto m = detail::global_vec(model.dm());
  fill_u(model, u.get());
  pf.begin();
  for (int n = 0; n < model.steps(); ++n) pf.step(n, u.get(), m.get());
  return values(m.get());
}

// The finite-difference density at T on a grid `refine` times finer, sampled at the coarse
// points and smoothed with the particles' kernel: the expectation of the particle estimate.
std::vector<double> smoothed_fdm_density(int points, int steps, int refine) {
  const mfg::Model model(
      PETSC_COMM_WORLD, mfg::problem_from_config(transport(points * refine, steps * refine, 1, 1)));
  mfg::FokkerPlanckFdm fp(model);
  auto u = detail::global_vec(model.dm());
  auto m = detail::copy_vec(model.initial_density());
  auto next = detail::global_vec(model.dm());
  fill_u(model, u.get());
  for (int n = 0; n < model.steps(); ++n) {
    fp.step(u.get(), m.get(), nullptr, next.get());
    VecCopy(next.get(), m.get());
  }
  const std::vector<double> fine = values(m.get());
  const double h = 1.0 / points;
  std::vector<double> xs(static_cast<std::size_t>(points)), w(xs.size()), out(xs.size());
  double total = 0.0;
  for (int j = 0; j < points; ++j) {
    xs[static_cast<std::size_t>(j)] = j * h;
    w[static_cast<std::size_t>(j)] = fine[static_cast<std::size_t>(j * refine)] * h;
    total += w[static_cast<std::size_t>(j)];
  }
  for (double& v : w) v /= total;
  namespace k = fracmfg::kernels;
  k::KdeAxis ax;
  ax.origin = 0.0;
  ax.spacing = h;
  ax.points = points;
  ax.boundary = k::KdeBoundary::periodic;
  ax.bandwidth = kBandwidth;
  k::KdeSamples s;
  s.count = points;
  s.x = xs.data();
  s.weight = w.data();
  k::kde_binned_host(k::kde_grid_1d(ax), s, out.data(), {});
  return out;
}

double l2(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s / static_cast<double>(a.size()));
}

TEST(MfgParticles, DensityHasMassOneAndIsNonnegative) {
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(transport(64, 10, 5000, 3)));
  mfg::ParticleFokkerPlanck pf(model, nullptr, quiet());
  auto u = detail::global_vec(model.dm());
  auto m = detail::global_vec(model.dm());
  fill_u(model, u.get());
  pf.begin();
  EXPECT_EQ(pf.total(), 5000);
  EXPECT_EQ(pf.count(), 5000);
  for (int n = 0; n < model.steps(); ++n) {
    pf.step(n, u.get(), m.get());
    EXPECT_NEAR(model.mass(m.get()), 1.0, 1e-12) << "level " << n + 1;
    PetscReal lo = 0.0;
    VecMin(m.get(), nullptr, &lo);
    EXPECT_GE(lo, 0.0);
  }
  for (double x : pf.x()) {
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
  }
  EXPECT_DOUBLE_EQ(pf.bandwidth()[0], kBandwidth);
}

TEST(MfgParticles, SameSeedGivesSamePathsAndAnotherSeedOtherOnes) {
  const auto a = particle_density(50, 8, 2000, 11);
  const auto b = particle_density(50, 8, 2000, 11);
  const auto c = particle_density(50, 8, 2000, 12);
  EXPECT_EQ(a, b);
  EXPECT_GT(l2(a, c), 1e-3);
}

TEST(MfgParticles, AgreeWithFiniteDifferencesWithinStatisticalErrorFallingLikeInverseSqrtN) {
  constexpr int points = 100, steps = 50, seeds = 5;
  const std::vector<double> ref = smoothed_fdm_density(points, steps, 4);
  std::vector<double> log_n, log_e;
  for (long n : {1000L, 4000L, 16000L, 64000L}) {
    std::vector<std::vector<double>> runs;
    for (long s = 1; s <= seeds; ++s) runs.push_back(particle_density(points, steps, n, 100 * s));
    std::vector<double> mean(ref.size(), 0.0);
    for (const auto& r : runs) {
      for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += r[i] / seeds;
    }
    double e2 = 0.0, spread2 = 0.0;
    for (const auto& r : runs) {
      e2 += l2(r, ref) * l2(r, ref) / seeds;
      spread2 += l2(r, mean) * l2(r, mean) / (seeds - 1);
    }
    const double rms = std::sqrt(e2), spread = std::sqrt(spread2), bias = l2(mean, ref);
    std::printf("  N = %6ld: rms error %.3e, seed spread %.3e, |mean - fdm| %.3e (stat. %.3e)\n", n,
                rms, spread, bias, spread / std::sqrt(seeds));
    // The particle mean agrees with the finite-difference density within its statistical
    // error (3 standard errors of a mean of `seeds` runs).
    EXPECT_LT(bias, 3.0 * spread / std::sqrt(seeds)) << "N = " << n;
    log_n.push_back(std::log(static_cast<double>(n)));
    log_e.push_back(std::log(rms));
  }
  // Least-squares slope of log(error) against log(N).
  double mx = 0.0, my = 0.0;
  for (std::size_t i = 0; i < log_n.size(); ++i) {
    mx += log_n[i] / log_n.size();
    my += log_e[i] / log_n.size();
  }
  double sxy = 0.0, sxx = 0.0;
  for (std::size_t i = 0; i < log_n.size(); ++i) {
    sxy += (log_n[i] - mx) * (log_e[i] - my);
    sxx += (log_n[i] - mx) * (log_n[i] - mx);
  }
  const double slope = sxy / sxx;
  std::printf("  fitted slope of the error in N: %.3f\n", slope);
  EXPECT_NEAR(slope, -0.5, 0.15);
}

TEST(MfgParticles, FixedPointWithParticlesConvergesNearTheFiniteDifferenceGame) {
  auto deck = [](const std::string& fp) {
    return fracmfg::io::Deck::from_string(
               "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: reflecting}\n"
               "  grid: {points: [60]}\n  time: {horizon: 0.5, steps: 25}\n  diffusion: 0.04\n"
               "  coupling: {type: power, exponent: 1, potential: \"0.5*(x-0.6)^2\"}\n"
               "  initial_density: \"exp(-(x-0.3)^2/0.02)\"\n  terminal_cost: \"(x-0.7)^2\"\n"
               "  fokker_planck: " +
                   fp + "\n  iteration: {damping: 0.5, tolerance: 1.0e-9, max_iterations: 200}\n",
               "game.yaml")
        .mfg();
  };
  mfg::Solver fdm(PETSC_COMM_WORLD, mfg::problem_from_config(deck("{method: fdm}")), nullptr,
                  quiet());
  mfg::Solver particles(PETSC_COMM_WORLD,
                        mfg::problem_from_config(deck(
                            "{method: particles, particles: 20000, bandwidth: 0.03, seed: 5}")),
                        nullptr, quiet());
  ASSERT_TRUE(fdm.solve().converged);
  ASSERT_TRUE(particles.solve().converged);
  double du = 0.0, dm = 0.0, su = 0.0, sm = 0.0;
  for (int n = 0; n <= fdm.steps(); ++n) {
    const auto uf = values(fdm.u(n)), up = values(particles.u(n));
    const auto mf = values(fdm.m(n)), mp = values(particles.m(n));
    for (std::size_t i = 0; i < uf.size(); ++i) {
      du = std::max(du, std::abs(uf[i] - up[i]));
      dm = std::max(dm, std::abs(mf[i] - mp[i]));
      su = std::max(su, std::abs(uf[i]));
      sm = std::max(sm, std::abs(mf[i]));
    }
  }
  std::printf("  particles vs fdm: max difference u %.3e (of %.3f), m %.3e (of %.3f)\n", du, su, dm,
              sm);
  // Kernel smoothing (h = 0.03) and sampling error bound the difference of m; u depends on
  // m only through the running cost and is much closer.
  EXPECT_LT(du / su, 0.02);
  EXPECT_LT(dm / sm, 0.15);
}

TEST(MfgParticles, FokkerPlanckSourceIsRefused) {
  MfgConfig cfg = transport(20, 4, 100, 1);
  cfg.sources.fp = {"0.1*sin(2*pi*x)", {"x", "y", "t"}};
  const mfg::Model model(PETSC_COMM_WORLD, mfg::problem_from_config(cfg));
  try {
    mfg::ParticleFokkerPlanck pf(model, nullptr, quiet());
    ADD_FAILURE() << "a Fokker-Planck source was accepted";
  } catch (const fracmfg::core::CollectiveError& e) {
    EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("mfg.sources.fp"), std::string::npos);
  }
}

}  // namespace
