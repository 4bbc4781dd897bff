// kernels::tridiag_batched: the CUDA backend against the host backend (double, 1e-12), for
// both CUDA methods, both layouts, plain and cyclic. Skips with a message where the build
// has no CUDA or the machine no device; the failure modes that need no device are checked
// before skipping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/kernels/tridiag_batched.hpp"

namespace fk = fracmfg::kernels;
namespace fe = fracmfg::exec;

namespace {

struct Data {
  std::vector<double> sub, diag, super, rhs;
  fk::TridiagBatch view(fk::TridiagLayout layout, std::int64_t m, std::int64_t n) {
    fk::TridiagBatch b;
    b.layout = layout;
    b.systems = m;
    b.size = n;
    b.sub = sub.data();
    b.diag = diag.data();
    b.super = super.data();
    b.rhs = rhs.data();
    return b;
  }
};

// Diagonally dominant with random signs; the layout only permutes entries.
Data make_batch_data(std::int64_t m, std::int64_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::size_t total = static_cast<std::size_t>(m * n);
  Data d{std::vector<double>(total), std::vector<double>(total), std::vector<double>(total),
         std::vector<double>(total)};
  for (std::size_t i = 0; i < total; ++i) {
    d.sub[i] = u(rng);
    d.super[i] = u(rng);
    d.diag[i] = (u(rng) < 0 ? -1.0 : 1.0) * (std::fabs(d.sub[i]) + std::fabs(d.super[i]) + 0.5);
    d.rhs[i] = 10.0 * u(rng);
  }
  return d;
}

double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0.0;
  double den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(a[i] - b[i]));
    den = std::max(den, std::fabs(b[i]));
  }
  return den > 0.0 ? num / den : num;
}

// Returns the device to use, or -1 after checking the no-device behaviour (then skip).
int device_or_check_failure(std::string& why) {
  const fe::CudaStatus s = fe::probe_cuda();
  Data d = make_batch_data(2, 4, 1);
  const fk::TridiagBatch b = d.view(fk::TridiagLayout::strided, 2, 4);
  if (!s.compiled) {
    EXPECT_THROW(fk::tridiag_batched_cuda(b, {}), fracmfg::NotCompiled);
    why = "CUDA backend not compiled in this build";
    return -1;
  }
  if (s.devices.empty()) {
    // A CUDA failure is a plain fracmfg::Error naming CUDA, so a caller can fall back.
    try {
      fk::tridiag_batched_cuda(b, {});
      ADD_FAILURE() << "expected a CUDA error without a device";
    } catch (const fracmfg::NumericalError& e) {
      ADD_FAILURE() << "a missing device must not look like a numerical failure: " << e.what();
    } catch (const fracmfg::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("CUDA", 0), 0u) << e.what();
    }
    why = "no CUDA device on this machine (" + s.status + ")";
    return -1;
  }
  return s.devices.front().id;
}

}  // namespace

TEST(kernels_tridiag_test, CudaMatchesHostForAllMethodsAndLayouts) {
  std::string why;
  const int device = device_or_check_failure(why);
  if (device < 0) GTEST_SKIP() << why;
  unsigned seed = 10;
  for (const auto method : {fk::TridiagCudaMethod::thomas, fk::TridiagCudaMethod::cusparse}) {
    for (const auto layout : {fk::TridiagLayout::strided, fk::TridiagLayout::interleaved}) {
      for (const bool cyclic : {false, true}) {
        for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{1, 1},
                                   {3, 2},
                                   {1000, 3},
                                   {1000, 100},
                                   {100000, 64},
                                   {33, 1000}}) {
          SCOPED_TRACE("method " + std::to_string(static_cast<int>(method)) + " layout " +
                       std::to_string(static_cast<int>(layout)) + " cyclic " +
                       std::to_string(cyclic) + " m " + std::to_string(m) + " n " +
                       std::to_string(n));
          Data host = make_batch_data(m, n, seed++);
          Data dev = host;
          fk::TridiagOptions opt;
          opt.cyclic = cyclic;
          opt.cuda_method = method;
          opt.cuda_device = device;
          fk::tridiag_batched_host(host.view(layout, m, n), opt);
          fk::tridiag_batched_cuda(dev.view(layout, m, n), opt);
          EXPECT_LE(rel_diff(dev.rhs, host.rhs), 1e-12);
          // The matrices are left untouched (the device works on copies).
          EXPECT_EQ(dev.diag, host.diag);
          EXPECT_EQ(dev.sub, host.sub);
          EXPECT_EQ(dev.super, host.super);
        }
      }
    }
  }
}

TEST(kernels_tridiag_test, CudaReportsTheFailingSystem) {
  std::string why;
  const int device = device_or_check_failure(why);
  if (device < 0) GTEST_SKIP() << why;
  Data d = make_batch_data(50, 8, 3);
  for (int i = 0; i < 8; ++i) {  // system 17: a zero matrix
    d.sub[17 * 8 + i] = d.diag[17 * 8 + i] = d.super[17 * 8 + i] = 0.0;
  }
  for (const auto method : {fk::TridiagCudaMethod::thomas, fk::TridiagCudaMethod::cusparse}) {
    Data copy = d;
    fk::TridiagOptions opt;
    opt.cuda_method = method;
    opt.cuda_device = device;
    try {
      fk::tridiag_batched_cuda(copy.view(fk::TridiagLayout::strided, 50, 8), opt);
      ADD_FAILURE() << "expected a NumericalError";
    } catch (const fracmfg::NumericalError& e) {
      EXPECT_NE(std::string(e.what()).find("system 17"), std::string::npos) << e.what();
    }
  }
}
