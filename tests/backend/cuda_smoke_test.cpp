// The CUDA build's smoke test: a device query and a small kernel against the host result.
#include <gtest/gtest.h>

#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/cuda_devices.hpp"

namespace fe = fracmfg::exec;

TEST(cuda_smoke_test, ProbeNeverThrowsAndReportsWhy) {
  const fe::CudaStatus s = fe::probe_cuda();
  EXPECT_EQ(s.compiled, FRACMFG_HAVE_CUDA == 1);
  EXPECT_FALSE(s.status.empty());
  if (s.devices.empty()) {
    EXPECT_NE(s.status, "ok");
  } else {
    EXPECT_EQ(s.status, "ok");
  }
}

TEST(cuda_smoke_test, AxpyMatchesHost) {
  const fe::CudaStatus s = fe::probe_cuda();
  if (!s.compiled) {
    EXPECT_THROW(fe::cuda_axpy(0, 2.0, {1.0}, {1.0}), fracmfg::NotCompiled);
    GTEST_SKIP() << "CUDA backend not compiled in this build";
  }
  if (s.devices.empty()) GTEST_SKIP() << "no CUDA device on this machine (" << s.status << ")";
  std::vector<double> x(100000), y(100000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = 0.5 * static_cast<double>(i);
    y[i] = 1.0 / (1.0 + static_cast<double>(i));
  }
  const auto got = fe::cuda_axpy(s.devices.front().id, 3.0, x, y);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_DOUBLE_EQ(got[i], 3.0 * x[i] + y[i]) << i;
}
