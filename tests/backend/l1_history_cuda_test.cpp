// kernels::l1_history: the device path (state resident on the device) against the host
// kernels over many steps, for the sum-of-exponentials update and the direct L1 sum, with
// the state moved home and back in the middle of the run (a re-placement) and a failed
// step leaving the resident state intact. Skips with a message where the build has no CUDA
// or the machine no device; the failure modes that need no device are checked before.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/kernels/l1_history.hpp"

namespace fk = fracmfg::kernels;
namespace fe = fracmfg::exec;

namespace {

int device_or_check_failure(std::string& why) {
  const fe::CudaStatus status = fe::probe_cuda();
  std::vector<double> modes(8, 0.0);
  fk::L1HistoryDevice dev(fk::L1Algorithm::soe, 0, 4, 2);
  if (!status.compiled) {
    EXPECT_THROW(dev.upload(modes.data(), 2), fracmfg::NotCompiled);
    why = "CUDA backend not compiled in this build";
    return -1;
  }
  if (status.devices.empty()) {
    try {
      dev.upload(modes.data(), 2);
      ADD_FAILURE() << "expected a CUDA error without a device";
    } catch (const fracmfg::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("CUDA", 0), 0u) << e.what();
    }
    EXPECT_FALSE(dev.resident());  // a failed placement leaves the state on the host
    why = "no CUDA device on this machine (" + status.status + ")";
    return -1;
  }
  return status.devices.front().id;
}

double rel(double a, double b) {
  return std::fabs(a - b) / (1.0 + std::fabs(b));
}

}  // namespace

TEST(l1_history_cuda_test, SoeStepsOnTheDeviceMatchTheHost) {
  std::string why;
  const int device = device_or_check_failure(why);
  if (device < 0) GTEST_SKIP() << why;
  const std::int64_t points = 100003, terms = 37;
  std::vector<double> e(terms), q(terms), c(terms), du(points);
  for (std::int64_t j = 0; j < terms; ++j) {
    e[j] = std::exp(-0.3 * j);
    q[j] = 0.5 / (1.0 + j);
    c[j] = 1.0 / (1.0 + 0.5 * j);
  }
  std::vector<double> host_modes(terms * points, 0.0), dev_modes(terms * points, 0.0);
  std::vector<double> host_hist(points), dev_hist(points);
  fk::L1HistoryDevice dev(fk::L1Algorithm::soe, device, points, terms);
  dev.upload(dev_modes.data(), terms);
  for (int n = 1; n <= 40; ++n) {
    for (std::int64_t i = 0; i < points; ++i) du[i] = std::sin(0.001 * i + n) / n;
    fk::SoeHistoryStep s;
    s.points = points;
    s.terms = terms;
    s.decay = e.data();
    s.inject = q.data();
    s.weight = c.data();
    s.increment = du.data();
    s.modes = host_modes.data();
    s.history = host_hist.data();
    fk::soe_history_host(s);
    s.modes = nullptr;
    s.history = dev_hist.data();
    dev.soe_step(s);
    for (std::int64_t i = 0; i < points; ++i) ASSERT_LE(rel(dev_hist[i], host_hist[i]), 1e-13);
    if (n == 20) {
      // Home and back: what a re-placement to the host and to the device again does.
      dev.download(dev_modes.data());
      for (std::int64_t k = 0; k < terms * points; ++k) {
        ASSERT_LE(rel(dev_modes[k], host_modes[k]), 1e-13);
      }
      dev.drop();
      dev.upload(dev_modes.data(), terms);
    }
  }
  // A step that does not match the resident modes is refused and changes nothing.
  fk::SoeHistoryStep bad;
  bad.points = points;
  bad.terms = terms - 1;
  bad.decay = e.data();
  bad.inject = q.data();
  bad.weight = c.data();
  bad.increment = du.data();
  bad.history = dev_hist.data();
  EXPECT_THROW(dev.soe_step(bad), fracmfg::Error);
  dev.download(dev_modes.data());
  for (std::int64_t k = 0; k < terms * points; ++k) {
    ASSERT_LE(rel(dev_modes[k], host_modes[k]), 1e-13);
  }
}

TEST(l1_history_cuda_test, DirectStepsOnTheDeviceMatchTheHost) {
  std::string why;
  const int device = device_or_check_failure(why);
  if (device < 0) GTEST_SKIP() << why;
  const std::int64_t points = 50001, steps = 30;
  std::vector<double> past, w, du(points), host_hist(points), dev_hist(points);
  fk::L1HistoryDevice dev(fk::L1Algorithm::direct, device, points, steps);
  dev.upload(nullptr, 0);
  for (std::int64_t n = 1; n <= steps; ++n) {
    for (std::int64_t i = 0; i < points; ++i) du[i] = std::cos(0.002 * i * n) / n;
    past.insert(past.end(), du.begin(), du.end());
    w.push_back(1.0 / std::sqrt(static_cast<double>(n)));
    fk::L1DirectStep s;
    s.points = points;
    s.levels = n;
    s.weights = w.data();
    s.past = past.data();
    s.history = host_hist.data();
    fk::l1_direct_host(s);
    s.past = nullptr;
    s.history = dev_hist.data();
    dev.direct_step(du.data(), s);
    ASSERT_EQ(dev.vectors(), n);
    for (std::int64_t i = 0; i < points; ++i) ASSERT_LE(rel(dev_hist[i], host_hist[i]), 1e-13);
    if (n == 12) {
      std::vector<double> home(static_cast<std::size_t>(n * points));
      dev.download(home.data());
      EXPECT_EQ(home, past);  // the increments are stored, not computed: exact
      dev.drop();
      dev.upload(home.data(), n);
    }
  }
  // Full: one more step is refused.
  fk::L1DirectStep more;
  more.points = points;
  more.levels = steps + 1;
  more.weights = w.data();
  more.history = dev_hist.data();
  EXPECT_THROW(dev.direct_step(du.data(), more), fracmfg::Error);
  EXPECT_EQ(dev.vectors(), steps);
}
