// exec::cpu_share and the thread's scheduler statistics (exec/cpu_share.hpp).
#include <gtest/gtest.h>

#include <cmath>

#include "fracmfg/exec/cpu_share.hpp"

namespace fe = fracmfg::exec;

namespace {

TEST(CpuShare, IsTheRunningPartOfTheRunnableTime) {
  // 3 s on a CPU and 1 s waiting for one between the samples: a share of 3/4.
  const fe::SchedSample a{10.0, 5.0, true};
  const fe::SchedSample b{13.0, 6.0, true};
  EXPECT_DOUBLE_EQ(fe::cpu_share(a, b), 0.75);
  // Nothing to say: a full CPU.
  EXPECT_EQ(fe::cpu_share(a, a), 1.0);
  EXPECT_EQ(fe::cpu_share(fe::SchedSample{}, b), 1.0);
  EXPECT_EQ(fe::cpu_share(a, fe::SchedSample{}), 1.0);
}

TEST(CpuShare, ThisThreadsStatisticsGrowWithWork) {
  const fe::SchedSample a = fe::sched_sample();
  const double c0 = fe::thread_cpu_seconds();
  volatile double x = 0.0;
  while (fe::thread_cpu_seconds() - c0 < 0.05) x = x + std::sqrt(x + 1.0);
  const fe::SchedSample b = fe::sched_sample();
  EXPECT_GE(fe::thread_cpu_seconds() - c0, 0.05);
  if (a.valid && b.valid) {  // Linux with scheduler statistics
    EXPECT_GT(b.running - a.running, 0.04);
    const double share = fe::cpu_share(a, b);
    EXPECT_GT(share, 0.0);
    EXPECT_LE(share, 1.0);
  }
}

}  // namespace
