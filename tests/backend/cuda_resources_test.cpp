// kernels::CudaResources: the per-rank cache of cuFFT plans and cuSPARSE handles. Without a
// device: an empty cache costs nothing, clears and moves safely, a failing call caches
// nothing, and the Selector owns one only where cuda is usable. With a device: plans and
// handles are created once per shape and reused, results equal the uncached calls', the
// least recently used plans are evicted beyond max_plans, clear() releases everything.
// Device tests skip with a message where the build has no CUDA or the machine no device.
#include "fracmfg/kernels/cuda_resources.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/kernels/history.hpp"
#include "fracmfg/kernels/kde.hpp"
#include "fracmfg/kernels/tridiag_batched.hpp"

namespace fk = fracmfg::kernels;
namespace fe = fracmfg::exec;

namespace {

struct KdeInput {
  fk::KdeGrid grid;
  std::vector<double> x;
  std::vector<double> density;
};

KdeInput kde_input(std::int64_t points, unsigned seed) {
  KdeInput in;
  fk::KdeAxis a;
  a.spacing = 1.0 / static_cast<double>(points);
  a.origin = 0.5 * a.spacing;
  a.points = points;
  a.boundary = fk::KdeBoundary::periodic;
  a.bandwidth = 3.0 * a.spacing;
  in.grid = fk::kde_grid_1d(a);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  in.x.resize(static_cast<std::size_t>(4 * points));
  for (double& v : in.x) v = u(rng);
  in.density.assign(static_cast<std::size_t>(points), 0.0);
  return in;
}

fk::KdeSamples samples_of(const KdeInput& in) {
  fk::KdeSamples s;
  s.count = static_cast<std::int64_t>(in.x.size());
  s.x = in.x.data();
  return s;
}

// The device to test on, or -1 with the reason in `why`.
int test_device(std::string& why) {
  const fe::CudaStatus s = fe::probe_cuda();
  if (!s.compiled) {
    why = "CUDA backend not compiled in this build";
    return -1;
  }
  if (s.devices.empty()) {
    why = "no CUDA device on this machine (" + s.status + ")";
    return -1;
  }
  return s.devices.front().id;
}

}  // namespace

TEST(cuda_resources_test, EmptyCacheCostsNothingAndClearsAndMovesSafely) {
  fk::CudaResources r(1);
  EXPECT_EQ(r.max_plans(), 2u);  // raised to one forward/backward pair
  EXPECT_EQ(r.plans(), 0u);
  EXPECT_EQ(r.handles(), 0u);
  EXPECT_EQ(r.counts().plans_created, 0);
  r.clear();
  fk::CudaResources moved(std::move(r));
  EXPECT_EQ(moved.plans(), 0u);
  fk::CudaResources assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.max_plans(), 2u);
#if FRACMFG_HAVE_CUDA
  EXPECT_NO_THROW(assigned.cache());  // host memory only: no CUDA call, no context
  EXPECT_EQ(assigned.plans(), 0u);
#else
  EXPECT_THROW(assigned.cache(), fracmfg::NotCompiled);
#endif
}

TEST(cuda_resources_test, FailingCallCachesNothing) {
  std::string why;
  if (test_device(why) >= 0) GTEST_SKIP() << "a device is present: failure path not testable";
  fk::CudaResources r;
  KdeInput in = kde_input(64, 1);
  fk::KdeOptions o;
  o.cuda_resources = &r;
  if (!fe::probe_cuda().compiled) {
    EXPECT_THROW(fk::kde_binned_cuda(in.grid, samples_of(in), in.density.data(), o),
                 fracmfg::NotCompiled);
  } else {
    try {
      fk::kde_binned_cuda(in.grid, samples_of(in), in.density.data(), o);
      ADD_FAILURE() << "expected a CUDA error without a device";
    } catch (const fracmfg::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("CUDA", 0), 0u) << e.what();
    }
  }
  EXPECT_EQ(r.plans(), 0u);
  EXPECT_EQ(r.counts().plans_created, 0);
  GTEST_SKIP() << why << " (checked the failure path only)";
}

TEST(cuda_resources_test, SelectorOwnsACacheOnlyWhereCudaIsUsable) {
  const fe::Hardware gpu = fe::Hardware::from_yaml(
      "host_name: n\ncuda_compiled: true\n"
      "gpus:\n  - {name: Described GPU, cc: \"8.0\", multiprocessors: 80, memory_gb: 16}\n",
      "gpu.yaml");
  fe::SelectorConfig c;
  c.use_environment = false;
  c.persist = false;
  c.activate_device = false;
  fe::Selector with(gpu, c);
  ASSERT_NE(with.cuda_resources(), nullptr);
  EXPECT_EQ(with.cuda_resources()->plans(), 0u);  // nothing created up front
  c.backend = fe::BackendChoice::cpu;
  fe::Selector without(gpu, c);
  EXPECT_EQ(without.cuda_resources(), nullptr);
}

TEST(cuda_resources_test, KdePlansAreCreatedOnceAndReused) {
  std::string why;
  const int device = test_device(why);
  if (device < 0) GTEST_SKIP() << why;
  fk::CudaResources r;
  KdeInput in = kde_input(1000, 2);
  fk::KdeOptions uncached;
  uncached.cuda_device = device;
  fk::kde_binned_cuda(in.grid, samples_of(in), in.density.data(), uncached);
  const std::vector<double> reference = in.density;
  fk::KdeOptions cached = uncached;
  cached.cuda_resources = &r;
  for (int call = 0; call < 3; ++call) {
    std::fill(in.density.begin(), in.density.end(), 0.0);
    fk::kde_binned_cuda(in.grid, samples_of(in), in.density.data(), cached);
    for (std::size_t j = 0; j < reference.size(); ++j) {
      ASSERT_NEAR(in.density[j], reference[j], 1e-12 * (1.0 + std::fabs(reference[j])));
    }
  }
  EXPECT_EQ(r.counts().plans_created, 2);  // forward and backward
  EXPECT_EQ(r.counts().plan_reuses, 4);
  EXPECT_EQ(r.plans(), 2u);
  KdeInput other = kde_input(1500, 3);
  fk::kde_binned_cuda(other.grid, samples_of(other), other.density.data(), cached);
  EXPECT_EQ(r.counts().plans_created, 4);
  r.clear();
  EXPECT_EQ(r.plans(), 0u);
}

TEST(cuda_resources_test, LeastRecentlyUsedPlansAreEvictedBeyondTheLimit) {
  std::string why;
  const int device = test_device(why);
  if (device < 0) GTEST_SKIP() << why;
  fk::CudaResources r(2);
  fk::KdeOptions o;
  o.cuda_device = device;
  o.cuda_resources = &r;
  for (std::int64_t points : {400, 500, 400}) {
    KdeInput in = kde_input(points, 4);
    std::vector<double> host(in.density.size());
    fk::kde_binned_host(in.grid, samples_of(in), host.data(), fk::KdeOptions{});
    fk::kde_binned_cuda(in.grid, samples_of(in), in.density.data(), o);
    for (std::size_t j = 0; j < host.size(); ++j) {
      ASSERT_NEAR(in.density[j], host[j], 1e-10 * (1.0 + std::fabs(host[j])));
    }
    EXPECT_LE(r.plans(), 2u);
  }
  EXPECT_EQ(r.counts().plans_created, 6);
  EXPECT_EQ(r.counts().plans_evicted, 4);
}

TEST(cuda_resources_test, HistoryWorkspaceKeepsItsPlansBetweenCalls) {
  std::string why;
  const int device = test_device(why);
  if (device < 0) GTEST_SKIP() << why;
  const std::int64_t c = 8, m = 64, length = 128;
  std::vector<double> weights(static_cast<std::size_t>(length + 1), 0.0);
  for (std::int64_t k = 1; k <= length; ++k) {
    weights[static_cast<std::size_t>(k)] = std::pow(static_cast<double>(k), -0.5);
  }
  const std::vector<double> spectrum = fk::history_spectrum(weights.data(), length);
  std::vector<double> signal(static_cast<std::size_t>(m * c), 1.0);
  std::vector<double> out(static_cast<std::size_t>(m * c), 0.0);
  fk::HistoryBlock b;
  b.components = c;
  b.stride = c;
  b.signal_rows = m;
  b.output_rows = m;
  b.offset = m;
  b.signal = signal.data();
  b.output[0] = out.data();
  fk::HistorySpectra s;
  s.fft_length = length;
  s.spectrum[0] = spectrum.data();
  fk::HistoryOptions o;
  o.cuda_device = device;
  fk::HistoryWorkspace ws(o);
  fk::history_fft_cuda(b, s, ws);
  fk::history_fft_cuda(b, s, ws);
  EXPECT_EQ(ws.cuda_resources().counts().plans_created, 2);
  EXPECT_EQ(ws.cuda_resources().counts().plan_reuses, 2);
  // With the options' cache, that one is used instead of the workspace's.
  fk::CudaResources shared;
  o.cuda_resources = &shared;
  fk::HistoryWorkspace ws2(o);
  fk::history_fft_cuda(b, s, ws2);
  EXPECT_EQ(&ws2.cuda_resources(), &shared);
  EXPECT_EQ(shared.counts().plans_created, 2);
}

TEST(cuda_resources_test, CusparseHandleIsCreatedOncePerDevice) {
  std::string why;
  const int device = test_device(why);
  if (device < 0) GTEST_SKIP() << why;
  const std::int64_t m = 100, n = 50;
  const auto count = static_cast<std::size_t>(m * n);
  std::vector<double> sub(count, -1.0), diag(count, 4.0), super(count, -1.0);
  std::vector<double> rhs_host(count), rhs_cuda(count);
  for (std::size_t i = 0; i < count; ++i) rhs_host[i] = std::sin(0.1 * static_cast<double>(i));
  fk::CudaResources r;
  fk::TridiagOptions o;
  o.cuda_device = device;
  o.cuda_method = fk::TridiagCudaMethod::cusparse;
  o.cuda_resources = &r;
  fk::TridiagBatch b;
  b.systems = m;
  b.size = n;
  b.sub = sub.data();
  b.diag = diag.data();
  b.super = super.data();
  const std::vector<double> rhs0 = rhs_host;
  for (int call = 0; call < 2; ++call) {
    rhs_host = rhs0;
    rhs_cuda = rhs0;
    b.rhs = rhs_host.data();
    fk::tridiag_batched_host(b, fk::TridiagOptions{});
    b.rhs = rhs_cuda.data();
    fk::tridiag_batched_cuda(b, o);
    for (std::size_t i = 0; i < count; ++i) ASSERT_NEAR(rhs_cuda[i], rhs_host[i], 1e-12);
  }
  EXPECT_EQ(r.counts().handles_created, 1);
  EXPECT_EQ(r.counts().handle_reuses, 1);
  EXPECT_EQ(r.handles(), 1u);
}
