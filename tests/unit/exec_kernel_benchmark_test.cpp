// exec/kernel_benchmark.hpp: the performance model scripts/gpu-check writes from its
// timings is the Selector's own file: written from synthetic timings (cpu 1 us + 10 ns/unit,
// cuda 50 us + 0.1 ns/unit, crossover 4949.5), it loads into a PerfModel and into a
// Selector of the same host and device, which decide cpu below the crossover and cuda above.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "common/test_support.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/kernel_benchmark.hpp"
#include "fracmfg/exec/perf_model.hpp"
#include "fracmfg/exec/selector.hpp"

namespace fe = fracmfg::exec;

namespace {

constexpr const char* gpu = "NVIDIA H100 80GB HBM3";
constexpr const char* kernel = "kde_binned_1d";

double cpu_time(double n) {
  return 1e-6 + 1e-8 * n;
}
double cuda_time(double n) {
  return 5e-5 + 1e-10 * n;
}
const double crossover = (5e-5 - 1e-6) / (1e-8 - 1e-10);

std::vector<fe::KernelTiming> synthetic_timings() {
  std::vector<fe::KernelTiming> t;
  for (double n : {1e2, 1e3, 1e4, 1e5, 1e6}) {
    t.push_back({kernel, fe::Backend::cpu, n, {cpu_time(n), cpu_time(n), cpu_time(n)}, {}});
    t.push_back({kernel, fe::Backend::cuda, n, {cuda_time(n), cuda_time(n), cuda_time(n)}, {}});
  }
  t.push_back({"tridiag_batched", fe::Backend::cuda, 1e3, {}, "CUDA error: out of memory"});
  return t;
}

}  // namespace

TEST(exec_kernel_benchmark, MedianIgnoresOrderAndFailures) {
  EXPECT_DOUBLE_EQ(fe::median_seconds({kernel, fe::Backend::cpu, 1.0, {3.0, 1.0, 2.0}, {}}), 2.0);
  EXPECT_DOUBLE_EQ(fe::median_seconds({kernel, fe::Backend::cpu, 1.0, {4.0, 1.0}, {}}), 2.5);
  EXPECT_TRUE(std::isnan(fe::median_seconds({kernel, fe::Backend::cuda, 1.0, {1.0}, "failed"})));
  EXPECT_TRUE(std::isnan(fe::median_seconds({kernel, fe::Backend::cuda, 1.0, {}, {}})));
}

TEST(exec_kernel_benchmark, ModelFileFromTimingsLoadsWithTheCrossover) {
  const fracmfg::test::TempDir tmp("kernel-benchmark");
  const std::string& dir = tmp.path();
  fe::PerfModel written("gpu-host", gpu);
  fe::record_timings(written, synthetic_timings());
  written.save(dir);
  ASSERT_TRUE(std::filesystem::exists(dir + "/gpu-host__NVIDIA_H100_80GB_HBM3.perf"));

  fe::PerfModel loaded("gpu-host", gpu);
  ASSERT_TRUE(loaded.load(dir));
  const auto id = loaded.find_kernel(kernel);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(loaded.samples(*id, fe::Backend::cpu), 15u);
  EXPECT_EQ(loaded.samples(*id, fe::Backend::cuda), 15u);
  ASSERT_TRUE(loaded.crossover(*id).has_value());
  EXPECT_NEAR(*loaded.crossover(*id), crossover, 1e-6 * crossover);
  EXPECT_EQ(fe::model_choice(loaded, *id, 1e3), fe::Backend::cpu);
  EXPECT_EQ(fe::model_choice(loaded, *id, 1e5), fe::Backend::cuda);
  // The failed cuda call left no sample.
  EXPECT_FALSE(loaded.find_kernel("tridiag_batched").has_value());
}

TEST(exec_kernel_benchmark, SelectorOfTheSameHostAndDeviceDecidesWithTheFile) {
  const fracmfg::test::TempDir tmp("kernel-benchmark");
  const std::string& dir = tmp.path();
  fe::PerfModel written("gpu-host", gpu);
  fe::record_timings(written, synthetic_timings());
  written.save(dir);

  const fe::Hardware hw = fe::Hardware::from_yaml(
      std::string("host_name: gpu-host\nhost_cores: 16\ncuda_compiled: true\ngpus:\n  - {name: ") +
          gpu + ", cc: \"9.0\", multiprocessors: 132, memory_gb: 80, free_gb: 79}\n",
      "gpu_host.yaml");
  fe::SelectorConfig c;
  c.use_environment = false;
  c.activate_device = false;
  c.learn = false;
  c.persist = true;
  c.perf_dir = dir;
  fe::Selector sel(hw, c);
  ASSERT_EQ(sel.device_name(), gpu);
  const fe::KernelId id = sel.kernel(kernel);
  fe::Workload w;
  w.kernel = id;
  w.elements = 1000;
  const fe::Decision small = sel.decide(w);
  EXPECT_EQ(small.backend, fe::Backend::cpu);
  EXPECT_EQ(small.reason, fe::Reason::model);
  EXPECT_NEAR(small.predicted_cpu, cpu_time(1e3), 1e-9);
  w.elements = 100000;
  const fe::Decision large = sel.decide(w);
  EXPECT_EQ(large.backend, fe::Backend::cuda);
  EXPECT_EQ(large.reason, fe::Reason::model);
  EXPECT_NEAR(large.predicted_cuda, cuda_time(1e5), 1e-9);
}

TEST(exec_kernel_benchmark, ReportNamesCrossoverSpeedUpsDecisionsAndFallbacks) {
  const std::vector<fe::KernelTiming> t = synthetic_timings();
  fe::PerfModel model("gpu-host", gpu);
  fe::record_timings(model, t);
  fe::BenchmarkContext ctx;
  ctx.host_name = "gpu-host";
  ctx.device_name = gpu;
  ctx.cuda_status = "runtime 13000";
  ctx.model_file = "perf/gpu-host__NVIDIA_H100_80GB_HBM3.perf";
  const std::string md = fe::format_benchmark_report(model, t, ctx);
  EXPECT_NE(md.find("# fracmfg GPU check"), std::string::npos) << md;
  EXPECT_NE(md.find("| kde_binned_1d |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 4.95e+03 |"), std::string::npos) << md;  // the crossover
  // n = 1e6: cpu 10.001 ms, cuda 150 us -> 66.67x, measured and decided cuda.
  EXPECT_NE(md.find("| 1e+06 | 10.001 ms | 150.0 us | 66.67x | cuda | cuda |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| 100 | 2.0 us | 50.0 us | 0.04x | cpu | cpu |"), std::string::npos) << md;
  EXPECT_NE(md.find("failed (the selector would fall back to cpu): tridiag_batched on cuda"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find(ctx.model_file), std::string::npos) << md;
}
