// The particle step of mfg::ParticleFokkerPlanck through a Selector (kernel
// "mfg_particle_step"): on the host it gives the densities and positions of the selector-less
// path bit for bit; placed on an injected GPU that this machine cannot run (no device, or no
// CUDA in the build) every attempt fails, the host redoes the call with nothing lost, and after
// failure_limit failures the kernel stays on the cpu. On a machine with a device the calls run
// there, the positions resident across steps and sweeps, to round-off of the host's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/model.hpp"
#include "fracmfg/mfg/particles.hpp"
#include "mfg/petsc_handles.hpp"

namespace {

namespace mfg = fracmfg::mfg;
namespace detail = fracmfg::mfg::detail;
namespace fe = fracmfg::exec;

fracmfg::core::Logger quiet() {
  return fracmfg::core::Logger(0, fracmfg::core::LogLevel::error, false);
}

// A 1D periodic or a 2D reflecting game's particles, 6 steps.
mfg::Problem problem(int dim) {
  const std::string domain =
      dim == 1 ? "  domain: {length: [1.0], boundary: periodic}\n  grid: {points: [40]}\n"
               : "  domain: {length: [1.0, 0.8], boundary: reflecting}\n"
                 "  grid: {points: [20, 16]}\n";
  return mfg::problem_from_config(
      fracmfg::io::Deck::from_string(
          "problem: mfg\nmfg:\n" + domain +
              "  time: {horizon: 0.3, steps: 6}\n  diffusion: 0.05\n  coupling: {type: log}\n"
              "  initial_density: \"1 + 0.5*sin(2*pi*x)\"\n"
              "  fokker_planck: {method: particles, particles: 3000, bandwidth: 0, seed: 9}\n",
          "placement.yaml")
          .mfg());
}

std::vector<double> values(Vec v) {
  detail::ReadArray a(v);
  PetscInt n = 0;
  VecGetLocalSize(v, &n);
  return std::vector<double>(a.get(), a.get() + n);
}

// Two sweeps (the second redraws the particles) with a value function that changes per
// level; every density, and the positions read in the middle of the second sweep and at
// its end.
std::vector<std::vector<double>> sweeps(int dim, fe::Selector* selector) {
  const mfg::Model model(PETSC_COMM_WORLD, problem(dim));
  mfg::ParticleFokkerPlanck pf(model, selector, quiet());
  auto u = detail::global_vec(model.dm());
  auto m = detail::global_vec(model.dm());
  std::vector<std::vector<double>> out;
  for (int sweep = 0; sweep < 2; ++sweep) {
    pf.begin();
    pf.density(m.get());
    out.push_back(values(m.get()));
    for (int n = 0; n < model.steps(); ++n) {
      {
        detail::WriteArray a(u.get());
        for (std::size_t k = 0; k < model.x().size(); ++k) {
          const double y = dim == 2 ? model.y()[k] : 0.0;
          a[static_cast<PetscInt>(k)] =
              0.05 * (1 + sweep) * std::cos(2 * M_PI * model.x()[k] + 0.3 * n) + 0.1 * y * y;
        }
      }
      pf.step(n, u.get(), m.get());
      out.push_back(values(m.get()));
      if (sweep == 1 && n == 2) out.push_back(pf.x());  // the host copy refreshed mid-sweep
    }
    out.push_back(pf.x());
    if (dim == 2) out.push_back(pf.y());
  }
  return out;
}

fe::SelectorConfig selector_config(fe::BackendChoice backend) {
  fe::SelectorConfig c;
  c.use_environment = false;
  c.persist = false;
  c.activate_device = false;
  c.backend = backend;
  return c;
}

fe::Hardware injected_gpu_node() {
  return fe::Hardware::from_yaml(
      "host_name: gpu-node\nhost_cores: 8\ncuda_compiled: true\nnode_rank: 0\nnode_size: 1\n"
      "gpus:\n  - {name: Injected GPU, cc: \"8.0\", multiprocessors: 108, memory_gb: 40, "
      "free_gb: 39}\n",
      "gpu_node.yaml");
}

void expect_close(const std::vector<std::vector<double>>& a,
                  const std::vector<std::vector<double>>& b, double tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].size(), b[k].size()) << "record " << k;
    for (std::size_t i = 0; i < a[k].size(); ++i) {
      ASSERT_NEAR(a[k][i], b[k][i], tolerance * (1.0 + std::fabs(b[k][i])))
          << "record " << k << " entry " << i;
    }
  }
}

// Per sweep: the density() call and one call per step.
constexpr std::uint64_t kCalls = 2 * (1 + 6);

}  // namespace

TEST(MfgParticlesPlacement, ASelectorOnTheHostGivesTheSameResultBitForBit) {
  for (int dim : {1, 2}) {
    const auto plain = sweeps(dim, nullptr);
    fe::Selector selector(
        fe::Hardware::from_yaml("host_name: cpu-node\nhost_cores: 2\n", "cpu.yaml"),
        selector_config(fe::BackendChoice::automatic), quiet());
    const auto placed = sweeps(dim, &selector);
    EXPECT_EQ(placed, plain) << dim << "D";
    const auto kernel = selector.model().find_kernel(fe::kernel_names::mfg_particle_step);
    ASSERT_TRUE(kernel.has_value());
    EXPECT_EQ(selector.stats(*kernel, fe::Backend::cpu).calls, kCalls);
  }
}

TEST(MfgParticlesPlacement, AFailingDevicePathFallsBackWithNothingLost) {
  const bool real_device = !fe::probe_cuda().devices.empty();
  for (int dim : {1, 2}) {
    const auto plain = sweeps(dim, nullptr);
    fe::Selector selector(injected_gpu_node(), selector_config(fe::BackendChoice::cuda), quiet());
    const auto placed = sweeps(dim, &selector);
    const auto kernel = selector.model().find_kernel(fe::kernel_names::mfg_particle_step);
    ASSERT_TRUE(kernel.has_value());
    if (!real_device) {
      EXPECT_EQ(placed, plain) << dim << "D";
      EXPECT_EQ(selector.stats(*kernel, fe::Backend::cuda).failures, 3u);
      EXPECT_TRUE(selector.cuda_disabled(*kernel));
      EXPECT_EQ(selector.stats(*kernel, fe::Backend::cpu).calls, kCalls);
    } else {
      // Positions to round-off (device libm, contracted multiply-adds); densities as close.
      expect_close(placed, plain, 1e-9);
      EXPECT_EQ(selector.stats(*kernel, fe::Backend::cuda).calls, kCalls);
    }
  }
}
