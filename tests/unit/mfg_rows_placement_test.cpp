// The finite-difference rows of the mfg solvers through a Selector (kernels "mfg_hjb_rows"
// and "mfg_fp_rows"): on the host they give the fields of the selector-less path bit for bit
// (1D: the fast path's residual, rows and Fokker-Planck rows; 2D: the assembled Newton and
// Fokker-Planck matrices); placed on an injected GPU that this machine cannot run (no device,
// or no CUDA in the build) every attempt fails, the host redoes the call with nothing lost,
// and after failure_limit failures the kernels stay on the cpu. On a machine with a device the
// calls run there, to round-off of the host's.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"

namespace {

namespace mfg = fracmfg::mfg;
namespace fe = fracmfg::exec;

fracmfg::core::Logger quiet() {
  return fracmfg::core::Logger(0, fracmfg::core::LogLevel::error, false);
}

// A 1D periodic game with the power Hamiltonian, or a 2D reflecting one with congestion: two
// fixed-point iterations.
mfg::Problem problem(int dim) {
  const std::string body =
      dim == 1 ? "  domain: {length: [1.0], boundary: periodic}\n  grid: {points: [48]}\n"
                 "  hamiltonian: {type: power, exponent: 1.6}\n"
               : "  domain: {length: [1.0, 0.8], boundary: reflecting}\n"
                 "  grid: {points: [16, 12]}\n"
                 "  hamiltonian: {type: congestion, epsilon: 0.5, alpha: 0.5}\n";
  return mfg::problem_from_config(
      fracmfg::io::Deck::from_string(
          "problem: mfg\nmfg:\n" + body +
              "  time: {horizon: 0.3, steps: 6}\n  diffusion: 0.05\n  coupling: {type: log}\n"
              "  initial_density: \"1 + 0.5*sin(2*pi*x)\"\n"
              "  iteration: {max_iterations: 2}\n",
          "rows_placement.yaml")
          .mfg());
}

std::vector<std::vector<double>> fields(int dim, fe::Selector* selector) {
  mfg::Solver solver(PETSC_COMM_WORLD, problem(dim), selector, quiet());
  solver.iterate();
  solver.iterate();
  std::vector<std::vector<double>> out;
  for (int n = 0; n <= solver.steps(); ++n) {
    out.push_back(solver.gather_u(n));
    out.push_back(solver.gather_m(n));
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

// The kernels a dimension's solve dispatches: the HJB rows always, the Fokker-Planck rows on
// the 1D fast path (in 2D the Fokker-Planck matrix is assembled from the HJB rows).
std::vector<const char*> kernels_of(int dim) {
  if (dim == 1) return {fe::kernel_names::mfg_hjb_rows, fe::kernel_names::mfg_fp_rows};
  return {fe::kernel_names::mfg_hjb_rows};
}

}  // namespace

TEST(MfgRowsPlacement, ASelectorOnTheHostGivesTheSameResultBitForBit) {
  for (int dim : {1, 2}) {
    const auto plain = fields(dim, nullptr);
    fe::Selector selector(
        fe::Hardware::from_yaml("host_name: cpu-node\nhost_cores: 2\n", "cpu.yaml"),
        selector_config(fe::BackendChoice::automatic), quiet());
    const auto placed = fields(dim, &selector);
    EXPECT_EQ(placed, plain) << dim << "D";
    for (const char* name : kernels_of(dim)) {
      const auto kernel = selector.model().find_kernel(name);
      ASSERT_TRUE(kernel.has_value()) << name;
      EXPECT_GT(selector.stats(*kernel, fe::Backend::cpu).calls, 0u) << name;
      EXPECT_EQ(selector.stats(*kernel, fe::Backend::cuda).calls, 0u) << name;
    }
  }
}

TEST(MfgRowsPlacement, AFailingDevicePathFallsBackWithNothingLost) {
  const bool real_device = !fe::probe_cuda().devices.empty();
  for (int dim : {1, 2}) {
    const auto plain = fields(dim, nullptr);
    fe::Selector selector(injected_gpu_node(), selector_config(fe::BackendChoice::cuda), quiet());
    const auto placed = fields(dim, &selector);
    if (!real_device) {
      EXPECT_EQ(placed, plain) << dim << "D";
    } else {
      expect_close(placed, plain, 1e-9);
    }
    for (const char* name : kernels_of(dim)) {
      const auto kernel = selector.model().find_kernel(name);
      ASSERT_TRUE(kernel.has_value()) << name;
      if (!real_device) {
        EXPECT_EQ(selector.stats(*kernel, fe::Backend::cuda).failures, 3u) << name;
        EXPECT_TRUE(selector.cuda_disabled(*kernel)) << name;
        EXPECT_GT(selector.stats(*kernel, fe::Backend::cpu).calls, 3u) << name;
      } else {
        EXPECT_GT(selector.stats(*kernel, fe::Backend::cuda).calls, 0u) << name;
      }
    }
  }
}
