// exec::Selector on injected hardware: every override path, availability, memory, the
// performance model with exploration and learning, fallback on cuda failures, reports.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include "common/test_support.hpp"
#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/kernel_workloads.hpp"
#include "fracmfg/exec/selector.hpp"

namespace fe = fracmfg::exec;
using fracmfg::core::Logger;
using fracmfg::core::LogLevel;
using fracmfg::test::CapturedLog;
using fracmfg::test::ScopedEnv;

// Counts every allocation of this program, to check that place() and run() make none.
namespace {
std::atomic<long> allocations{0};
}  // namespace

// AddressSanitizer owns operator new/delete (it checks their pairing), so the counting
// replacements exist only in builds without it.
#if defined(__SANITIZE_ADDRESS__)
#define FRACMFG_COUNT_ALLOCATIONS 0
#else
#define FRACMFG_COUNT_ALLOCATIONS 1
#endif

#if FRACMFG_COUNT_ALLOCATIONS
// GCC cannot see that these replacements pair malloc with free on both sides.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
#endif

namespace {

// A one-rank node with one A100 (free memory as given), CUDA compiled or not.
fe::Hardware gpu_node(double free_gb = 39.5, bool compiled = true, int node_rank = 0,
                      int node_size = 1) {
  return fe::Hardware::from_yaml(
      "host_name: gpu-node\nhost_cores: 8\nkokkos_host_concurrency: 8\ncuda_compiled: " +
          std::string(compiled ? "true" : "false") + "\nnode_rank: " + std::to_string(node_rank) +
          "\nnode_size: " + std::to_string(node_size) +
          "\ngpus:\n  - {name: NVIDIA A100-SXM4-40GB, cc: \"8.0\", multiprocessors: 108, "
          "memory_gb: 40, free_gb: " +
          std::to_string(free_gb) + "}\n",
      "gpu_node.yaml");
}

fe::Hardware cpu_node(bool compiled) {
  return fe::Hardware::from_yaml("host_name: cpu-node\nhost_cores: 4\ncuda_compiled: " +
                                     std::string(compiled ? "true" : "false") + "\n",
                                 "cpu_node.yaml");
}

// Deterministic: no environment, no files, no device activation.
fe::SelectorConfig test_config() {
  fe::SelectorConfig c;
  c.use_environment = false;
  c.persist = false;
  c.activate_device = false;
  return c;
}

fe::Workload workload(fe::KernelId k, double n) {
  fe::Workload w;
  w.kernel = k;
  w.elements = static_cast<std::int64_t>(n);
  w.bytes = 16.0 * n;
  w.transfer_bytes = 16.0 * n;
  w.flops = 2.0 * n;
  w.device_bytes = 16.0 * n;
  return w;
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The timings of the learning test: host 1 us + 1 ns/unit, cuda 20 us + 0.05 ns/unit.
double host_time(double n) {
  return 1e-6 + n * 1e-9;
}
double cuda_time(double n) {
  return 2e-5 + n * 0.05e-9;
}

}  // namespace

// --- explicit choice ------------------------------------------------------------------

TEST(exec_selector, BackendCpuRunsEverythingOnCpu) {
  fe::SelectorConfig c = test_config();
  c.backend = fe::BackendChoice::cpu;
  fe::Selector sel(gpu_node(), c);
  const fe::KernelId k = sel.kernel("k");
  const fe::Decision d = sel.place(workload(k, 1e9));
  EXPECT_EQ(d.backend, fe::Backend::cpu);
  EXPECT_EQ(d.reason, fe::Reason::forced_cpu);
  EXPECT_TRUE(sel.device().on_cpu());
  EXPECT_FALSE(sel.cuda_usable());
  EXPECT_EQ(sel.device_name(), "cpu");
}

TEST(exec_selector, BackendCudaRunsOnTheDeviceWhateverTheModelSays) {
  fe::SelectorConfig c = test_config();
  c.backend = fe::BackendChoice::cuda;
  fe::Selector sel(gpu_node(), c);
  const fe::KernelId k = sel.kernel("k");
  const fe::Decision d = sel.place(workload(k, 1));  // tiny: the model would say host
  EXPECT_EQ(d.backend, fe::Backend::cuda);
  EXPECT_EQ(d.reason, fe::Reason::forced_cuda);
  EXPECT_GT(d.predicted_cuda, d.predicted_cpu);
  EXPECT_EQ(fe::to_string(sel.device()), "cuda:0");
  EXPECT_EQ(sel.device_name(), "NVIDIA A100-SXM4-40GB");
}

TEST(exec_selector, DisabledGpuWinsOverEverything) {
  fe::SelectorConfig c = test_config();
  c.backend = fe::BackendChoice::cuda;
  c.gpu_disabled = true;
  fe::Selector sel(gpu_node(), c);
  const fe::KernelId k = sel.kernel("k");
  const fe::Decision d = sel.place(workload(k, 1e9));
  EXPECT_EQ(d.backend, fe::Backend::cpu);
  EXPECT_EQ(d.reason, fe::Reason::gpu_disabled);
  // Disabled GPUs make a cuda request harmless even in a build without CUDA.
  EXPECT_NO_THROW(fe::Selector(cpu_node(false), c));
}

TEST(exec_selector, EnvironmentOverridesTheConfiguredBackend) {
  fe::SelectorConfig c = test_config();
  c.use_environment = true;
  c.backend = fe::BackendChoice::automatic;
  {
    const ScopedEnv b("FRACMFG_BACKEND", "cpu");
    const ScopedEnv g("FRACMFG_DISABLE_GPU", nullptr);
    fe::Selector sel(gpu_node(), c);
    EXPECT_EQ(sel.config().backend, fe::BackendChoice::cpu);
    EXPECT_EQ(sel.place(workload(sel.kernel("k"), 1e9)).reason, fe::Reason::forced_cpu);
  }
  {
    const ScopedEnv b("FRACMFG_BACKEND", "cuda");
    const ScopedEnv g("FRACMFG_DISABLE_GPU", nullptr);
    c.backend = fe::BackendChoice::cpu;
    fe::Selector sel(gpu_node(), c);
    EXPECT_EQ(sel.place(workload(sel.kernel("k"), 1)).reason, fe::Reason::forced_cuda);
  }
  {
    const ScopedEnv b("FRACMFG_BACKEND", "auto");
    const ScopedEnv g("FRACMFG_DISABLE_GPU", "1");
    fe::Selector sel(gpu_node(), c);
    EXPECT_TRUE(sel.config().gpu_disabled);
    EXPECT_EQ(sel.place(workload(sel.kernel("k"), 1e9)).reason, fe::Reason::gpu_disabled);
  }
  {
    const ScopedEnv b("FRACMFG_BACKEND", nullptr);
    const ScopedEnv g("FRACMFG_DISABLE_GPU", "0");
    c.backend = fe::BackendChoice::automatic;
    c.gpu_disabled = true;  // the environment's explicit 0 wins over the configuration
    fe::Selector sel(gpu_node(), c);
    EXPECT_FALSE(sel.config().gpu_disabled);
  }
  {
    const CapturedLog log;
    const ScopedEnv b("FRACMFG_BACKEND", nullptr);
    const ScopedEnv g("FRACMFG_DISABLE_GPU", "maybe");
    c.gpu_disabled = false;
    fe::Selector sel(gpu_node(), c, log.log());
    EXPECT_FALSE(sel.config().gpu_disabled);
    EXPECT_NE(log.text().find("ignoring FRACMFG_DISABLE_GPU=maybe"), std::string::npos);
  }
  {
    const ScopedEnv d("FRACMFG_PERF_DIR", "/nonexistent/perf");
    fe::SelectorConfig p = c;
    p.persist = false;
    EXPECT_EQ(fe::Selector(gpu_node(), p).perf_directory(), "/nonexistent/perf");
  }
}

TEST(exec_selector, WrongBackendWordListsTheChoicesAndTheClosest) {
  {
    const ScopedEnv b("FRACMFG_BACKEND", "cdua");
    fe::SelectorConfig c = test_config();
    c.use_environment = true;
    try {
      fe::Selector sel(gpu_node(), c);
      FAIL() << "FRACMFG_BACKEND=cdua was accepted";
    } catch (const fracmfg::UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("FRACMFG_BACKEND"), std::string::npos) << what;
      EXPECT_NE(what.find("cpu, cuda or auto"), std::string::npos) << what;
      EXPECT_NE(what.find("did you mean 'cuda'"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(fe::closest_backend_choice("gpu"), "cuda");
  EXPECT_EQ(fe::closest_backend_choice("CPU"), "cpu");
  EXPECT_EQ(fe::closest_backend_choice("host"), "cpu");
  EXPECT_EQ(fe::closest_backend_choice("atuo"), "auto");
  EXPECT_EQ(fe::backend_choice_from_string("auto", "deck"), fe::BackendChoice::automatic);
  EXPECT_THROW(fe::backend_choice_from_string("Cuda", "deck"), fracmfg::UsageError);
  EXPECT_FALSE(fe::parse_backend_choice("").has_value());
  EXPECT_EQ(fe::available_backends(true), (std::vector<std::string>{"cpu", "cuda", "auto"}));
  EXPECT_EQ(fe::available_backends(false), (std::vector<std::string>{"cpu", "auto"}));
}

TEST(exec_selector, CudaInABuildWithoutCudaIsNotCompiled) {
  fe::SelectorConfig c = test_config();
  c.backend = fe::BackendChoice::cuda;
  try {
    fe::Selector sel(gpu_node(39.5, /*compiled=*/false), c);
    FAIL() << "cuda accepted without the CUDA backend";
  } catch (const fracmfg::NotCompiled& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("available: cpu auto"), std::string::npos) << what;
    EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::not_compiled);
  }
  // Through the environment too.
  const ScopedEnv b("FRACMFG_BACKEND", "cuda");
  const ScopedEnv g("FRACMFG_DISABLE_GPU", nullptr);
  c.backend = fe::BackendChoice::automatic;
  c.use_environment = true;
  EXPECT_THROW(fe::Selector(cpu_node(false), c), fracmfg::NotCompiled);
  // The probed hardware of this build: cuda is accepted exactly when compiled in.
  fe::Hardware here = cpu_node(FRACMFG_HAVE_CUDA == 1);
  if (FRACMFG_HAVE_CUDA) {
    EXPECT_NO_THROW(fe::Selector(here, c));
  } else {
    EXPECT_THROW(fe::Selector(here, c), fracmfg::NotCompiled);
  }
}

// --- availability ------------------------------------------------------------------------

TEST(exec_selector, AutoWithoutTheCudaBackendRunsOnCpu) {
  fe::Selector sel(gpu_node(39.5, false), test_config());
  const fe::Decision d = sel.place(workload(sel.kernel("k"), 1e9));
  EXPECT_EQ(d.backend, fe::Backend::cpu);
  EXPECT_EQ(d.reason, fe::Reason::not_compiled);
  EXPECT_TRUE(std::isnan(d.predicted_cuda));
  EXPECT_GT(d.predicted_cpu, 0.0);
}

TEST(exec_selector, NoDeviceMeansHost) {
  {
    fe::Selector sel(cpu_node(true), test_config());
    EXPECT_EQ(sel.place(workload(sel.kernel("k"), 1e9)).reason, fe::Reason::no_device);
    EXPECT_EQ(sel.device_budget(), 0.0);
  }
  {
    // Rank 2 of 3 on a node whose single GPU takes at most 2 ranks.
    fe::SelectorConfig c = test_config();
    c.max_ranks_per_gpu = 2;
    fe::Selector sel(gpu_node(39.5, true, 2, 3), c);
    EXPECT_TRUE(sel.device().on_cpu());
    EXPECT_EQ(sel.place(workload(sel.kernel("k"), 1e9)).reason, fe::Reason::no_device);
    fe::Selector first(gpu_node(39.5, true, 1, 3), c);
    EXPECT_EQ(first.device().device, 0);
    EXPECT_EQ(first.device().sharing, 2);
  }
  {
    // Backend cuda where the rank has no device: host, not an error, but with a warning
    // that says why.
    const CapturedLog log;
    fe::SelectorConfig c = test_config();
    c.backend = fe::BackendChoice::cuda;
    fe::Selector sel(cpu_node(true), c, log.log());
    EXPECT_EQ(sel.place(workload(sel.kernel("k"), 1e9)).backend, fe::Backend::cpu);
    EXPECT_EQ(count_of(log.text(),
                       "backend cuda was requested, but rank 0 of node cpu-node "
                       "runs on the cpu: no CUDA device is visible"),
              1)
        << log.text();
  }
  {
    // ... or beyond the ranks its node's devices take.
    const CapturedLog log;
    fe::SelectorConfig c = test_config();
    c.backend = fe::BackendChoice::cuda;
    c.max_ranks_per_gpu = 1;
    fe::Selector sel(gpu_node(39.5, true, 1, 2), c, log.log());
    EXPECT_TRUE(sel.device().on_cpu());
    EXPECT_NE(log.text().find("runs on the cpu: the node's 1 device(s) take at most 1 rank(s) "
                              "each (max_ranks_per_gpu) and this node runs 2"),
              std::string::npos)
        << log.text();
  }
  {
    // Automatic choice: no device is no news.
    const CapturedLog log;
    fe::Selector sel(cpu_node(true), test_config(), log.log());
    EXPECT_EQ(log.text().find("runs on the cpu"), std::string::npos) << log.text();
  }
}

// --- memory -----------------------------------------------------------------------------

TEST(exec_selector, WorkingSetBeyondTheDeviceBudgetRunsOnTheHost) {
  fe::SelectorConfig c = test_config();
  c.backend = fe::BackendChoice::cuda;
  c.memory_margin = 0.10;
  fe::Selector sel(gpu_node(/*free_gb=*/1.0), c);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  EXPECT_DOUBLE_EQ(sel.device_budget(), 0.9 * gib);
  const fe::KernelId k = sel.kernel("k");
  fe::Workload w = workload(k, 1000);
  w.device_bytes = 0.95 * gib;  // fits the device, not the margin
  fe::Decision d = sel.place(w);
  EXPECT_EQ(d.backend, fe::Backend::cpu);
  EXPECT_EQ(d.reason, fe::Reason::memory);
  w.device_bytes = 0.85 * gib;
  d = sel.place(w);
  EXPECT_EQ(d.backend, fe::Backend::cuda);
  EXPECT_EQ(d.chunks, 1);
  // A chunkable kernel stays on the device and is told how many pieces to make.
  w.device_bytes = 2.0 * gib;
  w.chunkable = true;
  d = sel.place(w);
  EXPECT_EQ(d.backend, fe::Backend::cuda);
  EXPECT_EQ(d.chunks, 3);
  EXPECT_NE(fe::describe(d).find("in 3 chunks"), std::string::npos);
}

TEST(exec_selector, AChunkableKernelIsRunInTheChunksTheDeviceBudgetAllows) {
  // An injected small device: 1 GiB free, 10 % margin -> 0.9 GiB budget.
  fe::SelectorConfig c = test_config();
  c.backend = fe::BackendChoice::cuda;
  c.memory_margin = 0.10;
  fe::Selector sel(gpu_node(/*free_gb=*/1.0), c);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  // A history square whose working set is about 2.5 budgets, described as the fode solver
  // describes it.
  const std::int64_t length = 1 << 16;
  const std::int64_t components = 1100;
  const fe::Workload w = fe::history_fft_workload(sel.kernel("history_fft"), components, length,
                                                  length / 2, length / 2, 2);
  ASSERT_TRUE(w.chunkable);
  ASSERT_GT(w.device_bytes, 2.0 * 0.9 * gib);
  ASSERT_LT(w.device_bytes, 3.0 * 0.9 * gib);
  // A cuda path that takes the decision sees the chunks and sizes its batches from them.
  int seen_chunks = 0;
  std::int64_t batch = 0;
  bool host_ran = false;
  const fe::RunResult r = sel.run(
      w, [&] { host_ran = true; },
      [&](const fe::Decision& d) {
        seen_chunks = d.chunks;
        batch = fe::chunk_size(components, d.chunks);
      });
  EXPECT_EQ(r.ran_on, fe::Backend::cuda);
  EXPECT_FALSE(host_ran);
  EXPECT_EQ(seen_chunks, 3);
  EXPECT_EQ(batch, 367);  // ceil(1100 / 3): one batch's share fits the budget
  EXPECT_LE(w.device_bytes * static_cast<double>(batch) / components, sel.device_budget());
  // The same call without the decision in its signature still runs (chunks unused).
  bool plain_ran = false;
  sel.run(
      w, [] {}, [&] { plain_ran = true; });
  EXPECT_TRUE(plain_ran);
  // Not chunkable: the same working set goes to the host.
  fe::Workload whole = w;
  whole.chunkable = false;
  EXPECT_EQ(sel.run(
                   whole, [] {}, [](const fe::Decision&) {})
                .ran_on,
            fe::Backend::cpu);
}

TEST(exec_selector, KernelWorkloadsDescribeTheirCallsConsistently) {
  const fe::KernelId k{3};
  // tridiag: systems x size units, nothing chunked.
  const fe::Workload t = fe::tridiag_batched_workload(k, 64, 128);
  EXPECT_EQ(t.kernel, k);
  EXPECT_DOUBLE_EQ(t.units(), 64.0 * 128.0);
  EXPECT_FALSE(t.chunkable);
  EXPECT_GT(t.device_bytes, t.transfer_bytes);
  // KDE: per-sample costs, chunkable by samples.
  const fe::Workload kd = fe::kde_binned_workload(k, 1000);
  EXPECT_DOUBLE_EQ(kd.units(), 1000.0);
  EXPECT_TRUE(kd.chunkable);
  EXPECT_DOUBLE_EQ(fe::kde_binned_workload(k, 2000).device_bytes, 2.0 * kd.device_bytes);
  // history: units are padded doubles; transfers are the signal, the outputs and the spectra
  // (not the padded arrays, which live on the device only).
  const fe::Workload h = fe::history_fft_workload(k, 10, 256, 128, 100, 2);
  EXPECT_DOUBLE_EQ(h.units(), 10.0 * 256.0);
  EXPECT_DOUBLE_EQ(h.transfer_bytes, 8.0 * (10.0 * (128.0 + 2.0 * 100.0) + 2.0 * 258.0));
  EXPECT_DOUBLE_EQ(h.device_bytes, 8.0 * 4.0 * 10.0 * 256.0);
  EXPECT_GT(h.flops, fe::history_fft_workload(k, 10, 256, 128, 100, 1).flops);
  // chunk sizes
  EXPECT_EQ(fe::chunk_size(10, 1), 10);
  EXPECT_EQ(fe::chunk_size(10, 3), 4);
  EXPECT_EQ(fe::chunk_size(10, 0), 10);
  EXPECT_EQ(fe::chunk_size(3, 5), 1);
  EXPECT_EQ(fe::chunk_size(0, 2), 1);
}

TEST(exec_selector, RanksSharingADeviceShareItsMemory) {
  fe::SelectorConfig c = test_config();
  c.memory_margin = 0.25;
  fe::Selector sel(gpu_node(40.0, true, 0, 4), c);
  EXPECT_EQ(sel.device().sharing, 4);
  EXPECT_DOUBLE_EQ(sel.device_budget(), 40.0 * 0.75 / 4 * 1024.0 * 1024.0 * 1024.0);
}

TEST(exec_selector, UnmeasuredFreeMemoryIsNotReadFromADeviceTheSelectorDidNotActivate) {
  // A probe reports free memory as not measured (reading it needs a CUDA context); a
  // selector that did not make the device current (here: described hardware, activation
  // off) budgets from the total memory instead of creating a context.
  fe::Hardware hw = gpu_node(39.5);
  hw.gpus[0].free_memory = 0;
  hw.gpus[0].free_memory_measured = false;
  EXPECT_NE(hw.describe().find("free memory not measured"), std::string::npos) << hw.describe();
  fe::SelectorConfig c = test_config();
  c.memory_margin = 0.5;
  fe::Selector sel(hw, c);
  ASSERT_TRUE(sel.cuda_usable());
  EXPECT_DOUBLE_EQ(sel.device_budget(), 0.5 * 40.0 * 1024.0 * 1024.0 * 1024.0);
  fe::Workload w = workload(sel.kernel("k"), 1000);
  w.device_bytes = 30.0 * 1024.0 * 1024.0 * 1024.0;
  EXPECT_EQ(sel.decide(w).reason, fe::Reason::memory);
}

// --- model and exploration ------------------------------------------------------------

TEST(exec_selector, ModelPicksTheFasterBackendBySize) {
  fe::SelectorConfig c = test_config();
  c.explore = false;
  fe::Selector sel(gpu_node(), c);
  const fe::KernelId k = sel.kernel("k");
  const fe::Decision small = sel.place(workload(k, 100));
  EXPECT_EQ(small.backend, fe::Backend::cpu);
  EXPECT_EQ(small.reason, fe::Reason::model);
  EXPECT_LT(small.predicted_cpu, small.predicted_cuda);
  fe::Workload big = workload(k, 1e8);
  big.transfer_bytes = 0.0;  // resident data
  const fe::Decision large = sel.place(big);
  EXPECT_EQ(large.backend, fe::Backend::cuda);
  EXPECT_EQ(large.reason, fe::Reason::model);
  EXPECT_NE(fe::describe(large).find("cuda (model:"), std::string::npos) << fe::describe(large);
  EXPECT_NE(std::string(large.text()).find("faster"), std::string::npos);
  // decide() agrees with place() and has no side effects.
  EXPECT_EQ(sel.decide(big).backend, fe::Backend::cuda);
}

TEST(exec_selector, ExplorationTriesTheOtherBackendUntilItHasSamples) {
  fe::SelectorConfig c = test_config();
  c.explore_min_samples = 3;
  c.explore_period = 2;
  c.exploration = 1.0 / 8;
  fe::Selector sel(gpu_node(), c);
  double clock = 0.0;
  sel.set_clock([&] { return clock; });
  const fe::KernelId k = sel.kernel("k");
  const double n = 100.0;  // host is far faster here
  int cuda_runs = 0;
  std::vector<int> cuda_calls;
  for (int call = 1; call <= 40; ++call) {
    const fe::RunResult r = sel.run(
        workload(k, n), [&] { clock += host_time(n); },
        [&] {
          clock += cuda_time(n);
          ++cuda_runs;
        });
    if (r.ran_on == fe::Backend::cuda) {
      EXPECT_EQ(r.decision.reason, fe::Reason::exploration);
      cuda_calls.push_back(call);
    }
  }
  // Every 2nd call until cuda has 3 samples, then one call in 8.
  EXPECT_EQ(cuda_calls, (std::vector<int>{2, 4, 6, 8, 16, 24, 32, 40}));
  EXPECT_EQ(sel.model().samples(k, fe::Backend::cuda), 8u);
  EXPECT_EQ(sel.stats(k, fe::Backend::cpu).calls, 32u);
  EXPECT_EQ(cuda_runs, 8);
}

TEST(exec_selector, WithoutLearningThereIsNoExplorationAndNoSample) {
  fe::SelectorConfig c = test_config();
  c.learn = false;
  fe::Selector sel(gpu_node(), c);
  const fe::KernelId k = sel.kernel("k");
  for (int i = 0; i < 50; ++i) {
    const fe::RunResult r = sel.run(
        workload(k, 100), [] {}, [] { FAIL() << "cuda was explored"; });
    EXPECT_EQ(r.decision.reason, fe::Reason::model);
  }
  EXPECT_EQ(sel.model().samples(k, fe::Backend::cpu), 0u);
  EXPECT_EQ(sel.stats(k, fe::Backend::cpu).calls, 50u);
}

TEST(exec_selector, LearnsTheCrossoverFromMeasuredTimes) {
  // Host 1 us + 1 ns/unit, cuda 20 us + 0.05 ns/unit: n* = 19 us / 0.95 ns = 20000.
  fe::SelectorConfig c = test_config();
  c.explore_min_samples = 4;
  c.explore_period = 3;
  c.exploration = 1.0 / 64;
  fe::Selector sel(gpu_node(), c);
  double clock = 0.0;
  sel.set_clock([&] { return clock; });
  const fe::KernelId k = sel.kernel("tridiag_batched");
  std::vector<double> sizes;
  for (int e = 0; e <= 20; ++e) sizes.push_back(std::round(100.0 * std::pow(10.0, 0.25 * e)));
  int calls = 0;
  for (int round = 0; round < 10; ++round) {
    for (double n : sizes) {
      sel.run(
          workload(k, n), [&] { clock += host_time(n); }, [&] { clock += cuda_time(n); });
      ++calls;
    }
  }
  EXPECT_LE(calls, 210);
  EXPECT_TRUE(sel.model().fitted(k, fe::Backend::cpu));
  EXPECT_TRUE(sel.model().fitted(k, fe::Backend::cuda));
  const auto nstar = sel.model().crossover(k);
  ASSERT_TRUE(nstar.has_value());
  EXPECT_NEAR(*nstar, 20000.0, 0.2 * 20000.0);
  for (double n : {100.0, 1000.0, 2000.0, 10000.0}) {
    const fe::Decision d = sel.decide(workload(k, n));
    EXPECT_EQ(d.backend, fe::Backend::cpu) << n;
    EXPECT_EQ(d.reason, fe::Reason::model);
    EXPECT_NEAR(d.predicted_cpu, host_time(n), 0.05 * host_time(n));
  }
  for (double n : {40000.0, 200000.0, 1e7}) {
    const fe::Decision d = sel.decide(workload(k, n));
    EXPECT_EQ(d.backend, fe::Backend::cuda) << n;
    EXPECT_NEAR(d.predicted_cuda, cuda_time(n), 0.05 * cuda_time(n));
  }
  // In the last round every non-exploring call went where it is fastest.
  for (double n : sizes) {
    const fe::RunResult r = sel.run(
        workload(k, n), [&] { clock += host_time(n); }, [&] { clock += cuda_time(n); });
    if (r.decision.reason == fe::Reason::model) {
      EXPECT_EQ(r.ran_on, host_time(n) < cuda_time(n) ? fe::Backend::cpu : fe::Backend::cuda) << n;
    }
  }
}

// --- run(): fallback and bookkeeping -------------------------------------------------------

TEST(exec_selector, FailingCudaPathFallsBackAndIsDroppedAfterTheLimit) {
  const CapturedLog log(LogLevel::warn);
  fe::SelectorConfig c = test_config();
  c.backend = fe::BackendChoice::cuda;
  c.failure_limit = 3;
  fe::Selector sel(gpu_node(), c, log.log());
  const fe::KernelId k = sel.kernel("kde");
  int cuda_attempts = 0;
  for (int i = 0; i < 10; ++i) {
    double result = 0.0;
    const fe::RunResult r = sel.run(
        workload(k, 1e6), [&] { result = 42.0 + i; },
        [&] {
          ++cuda_attempts;
          throw std::runtime_error("cudaErrorMemoryAllocation: out of memory");
        });
    EXPECT_EQ(result, 42.0 + i) << "the result was lost in call " << i;
    EXPECT_EQ(r.ran_on, fe::Backend::cpu);
    EXPECT_EQ(r.fell_back, i < 3);
    EXPECT_EQ(r.decision.reason, i < 3 ? fe::Reason::forced_cuda : fe::Reason::cuda_failed);
  }
  EXPECT_EQ(cuda_attempts, 3);
  EXPECT_TRUE(sel.cuda_disabled(k));
  EXPECT_EQ(sel.stats(k, fe::Backend::cuda).failures, 3u);
  EXPECT_EQ(sel.stats(k, fe::Backend::cuda).calls, 0u);
  EXPECT_EQ(sel.stats(k, fe::Backend::cpu).calls, 10u);
  const std::string text = log.text();
  EXPECT_EQ(count_of(text, "re-running it on cpu"), 1) << text;  // later ones: debug
  EXPECT_NE(text.find("out of memory"), std::string::npos);
  EXPECT_EQ(count_of(text, "runs on cpu only"), 1) << text;
  // Other kernels still use the device.
  const fe::KernelId other = sel.kernel("other");
  EXPECT_EQ(sel.place(workload(other, 1e6)).backend, fe::Backend::cuda);
}

TEST(exec_selector, ReturnedErrorsFallBackToo) {
  fe::SelectorConfig c = test_config();
  c.backend = fe::BackendChoice::cuda;
  c.failure_limit = 10;
  fe::Selector sel(gpu_node(), c, Logger(0, LogLevel::error, false));
  const fe::KernelId k = sel.kernel("k");
  int host_runs = 0;
  auto host = [&] { ++host_runs; };
  fe::RunResult r = sel.run(workload(k, 10), host, [] { return std::string("launch failed"); });
  EXPECT_TRUE(r.fell_back);
  r = sel.run(workload(k, 10), host, [] { return false; });
  EXPECT_TRUE(r.fell_back);
  r = sel.run(workload(k, 10), host, [] { throw 7; });  // not even an std::exception
  EXPECT_TRUE(r.fell_back);
  EXPECT_EQ(host_runs, 3);
  r = sel.run(workload(k, 10), host, [] { return std::string(); });
  EXPECT_FALSE(r.fell_back);
  EXPECT_EQ(r.ran_on, fe::Backend::cuda);
  r = sel.run(workload(k, 10), host, [] { return true; });
  EXPECT_EQ(r.ran_on, fe::Backend::cuda);
  EXPECT_EQ(host_runs, 3);
  EXPECT_EQ(sel.stats(k, fe::Backend::cuda).failures, 3u);
  EXPECT_EQ(sel.stats(k, fe::Backend::cuda).calls, 2u);
  EXPECT_FALSE(sel.cuda_disabled(k));
  // Host exceptions are not swallowed.
  EXPECT_THROW(
      sel.run(
          workload(k, 10), [] { throw fracmfg::NumericalError("nan"); }, [] { return false; }),
      fracmfg::NumericalError);
}

TEST(exec_selector, RunTimesCallsAndReportsThem) {
  fe::SelectorConfig c = test_config();
  c.explore = false;
  fe::Selector sel(gpu_node(), c);
  double clock = 0.0;
  sel.set_clock([&] { return clock; });
  const fe::KernelId a = sel.kernel("alpha");
  const fe::KernelId b = sel.kernel("beta_long_kernel_name");
  for (int i = 0; i < 4; ++i)
    sel.run(
        workload(a, 10), [&] { clock += 2e-6; }, [] {});
  fe::Workload big = workload(b, 1e8);
  big.transfer_bytes = 0.0;
  const fe::RunResult r = sel.run(
      big, [] {}, [&] { clock += 1e-3; });
  EXPECT_EQ(r.ran_on, fe::Backend::cuda);
  EXPECT_NEAR(r.seconds, 1e-3, 1e-15);
  EXPECT_EQ(sel.model().samples(a, fe::Backend::cpu), 4u);

  const auto rows = sel.report();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kernel, "alpha");
  EXPECT_EQ(rows[0].backend, fe::Backend::cpu);
  EXPECT_EQ(rows[0].calls, 4u);
  EXPECT_NEAR(rows[0].total_seconds, 8e-6, 1e-15);
  EXPECT_NEAR(rows[0].mean_seconds, 2e-6, 1e-15);
  EXPECT_EQ(rows[1].kernel, "beta_long_kernel_name");
  EXPECT_EQ(rows[1].backend, fe::Backend::cuda);
  const std::string table = fe::format_report(rows);
  EXPECT_NE(table.find("beta_long_kernel_name"), std::string::npos) << table;
  EXPECT_NE(table.find("mean [us]"), std::string::npos);
  EXPECT_NE(table.find("2.000"), std::string::npos) << table;  // alpha: 2 us mean

  // Aggregation sums the same (kernel, backend) over ranks.
  std::vector<fe::ReportRow> two = rows;
  for (auto row : rows) {
    row.rank = 1;
    two.push_back(row);
  }
  const auto agg = fe::aggregate_report(two);
  ASSERT_EQ(agg.size(), 2u);
  EXPECT_EQ(agg[0].rank, -1);
  EXPECT_EQ(agg[0].calls, 8u);
  EXPECT_NEAR(agg[0].mean_seconds, 2e-6, 1e-15);
  EXPECT_NE(fe::format_report(agg).find(" all "), std::string::npos);
}

TEST(exec_selector, KernelIdsAreRegisteredOnce) {
  fe::Selector sel(gpu_node(), test_config());
  const fe::KernelId a = sel.kernel("a");
  EXPECT_EQ(sel.kernel("a"), a);
  EXPECT_NE(sel.kernel("b"), a);
  EXPECT_THROW(sel.place(workload(fe::KernelId{99}, 10)), fracmfg::Error);
  // A kernel registered through the model is usable too.
  const fe::KernelId m = sel.model().kernel("via_model");
  EXPECT_NO_THROW(sel.place(workload(m, 10)));
}

TEST(exec_selector, ReasonsHaveNamesAndSentences) {
  fe::Decision d;
  for (auto r : {fe::Reason::gpu_disabled, fe::Reason::forced_cpu, fe::Reason::not_compiled,
                 fe::Reason::no_device, fe::Reason::cuda_failed, fe::Reason::memory,
                 fe::Reason::forced_cuda, fe::Reason::model, fe::Reason::exploration}) {
    d.reason = r;
    EXPECT_STRNE(fe::to_string(r), "?");
    EXPECT_GT(std::string(d.text()).size(), 10u);
    EXPECT_NE(fe::describe(d).find(fe::to_string(r)), std::string::npos);
  }
  EXPECT_STREQ(fe::to_string(fe::Reason::no_device), "no_device");
}

TEST(exec_selector, BadConfigurationIsAnError) {
  auto with = [](auto change) {
    fe::SelectorConfig c = test_config();
    change(c);
    return c;
  };
  EXPECT_THROW(fe::Selector(gpu_node(), with([](auto& c) { c.memory_margin = 1.0; })),
               fracmfg::Error);
  EXPECT_THROW(fe::Selector(gpu_node(), with([](auto& c) { c.failure_limit = 0; })),
               fracmfg::Error);
  EXPECT_THROW(fe::Selector(gpu_node(), with([](auto& c) { c.exploration = 2.0; })),
               fracmfg::Error);
  EXPECT_THROW(fe::Selector(gpu_node(), with([](auto& c) { c.explore_period = 0; })),
               fracmfg::Error);
  EXPECT_THROW(fe::Selector(gpu_node(), with([](auto& c) { c.prior.cuda_bandwidth = 0; })),
               fracmfg::Error);
}

TEST(exec_selector, LearnedModelIsKeptBetweenRuns) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("fracmfg-selector-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  fe::SelectorConfig c = test_config();
  c.persist = true;
  c.perf_dir = dir.string();
  {
    fe::Selector first(gpu_node(), c);
    double clock = 0.0;
    first.set_clock([&] { return clock; });
    const fe::KernelId k = first.kernel("k");
    for (int i = 0; i < 60; ++i) {
      const double n = 100.0 * (1 + i % 7) * (1 + i % 5) * 30;
      first.run(
          workload(k, n), [&] { clock += host_time(n); }, [&] { clock += cuda_time(n); });
    }
    EXPECT_TRUE(first.save_model());
  }
  fe::Selector second(gpu_node(), c);
  const auto k = second.model().find_kernel("k");
  ASSERT_TRUE(k.has_value());
  EXPECT_TRUE(second.model().fitted(*k, fe::Backend::cpu));
  EXPECT_GT(second.model().samples(*k, fe::Backend::cpu), 0u);
  EXPECT_EQ(second.kernel("k"), *k);
  EXPECT_EQ(second.stats(*k, fe::Backend::cpu).calls, 0u);
  // A rank on another device (here: the host) has its own file.
  fe::SelectorConfig cpu = c;
  cpu.backend = fe::BackendChoice::cpu;
  fe::Selector third(gpu_node(), cpu);
  EXPECT_FALSE(third.model().find_kernel("k").has_value());
  std::filesystem::remove_all(dir);
}

TEST(exec_selector, PlaceAndRunDoNotAllocate) {
  if (!FRACMFG_COUNT_ALLOCATIONS) {
    GTEST_SKIP() << "allocation counting is not available under AddressSanitizer";
  }
  fe::Selector sel(gpu_node(), test_config());
  const fe::KernelId k = sel.kernel("k");
  std::vector<fe::Workload> ws;
  for (double n = 10.0; n < 1e9; n *= 10.0) ws.push_back(workload(k, n));
  double sink = 0.0;
  for (const auto& w : ws) sel.place(w);  // first sight of the kernel sets its prior
  const long before = allocations.load();
  for (int i = 0; i < 2000; ++i) {
    const fe::Workload& w = ws[static_cast<std::size_t>(i) % ws.size()];
    const fe::Decision d = sel.place(w);
    sink += d.predicted_cpu;
    const fe::RunResult r = sel.run(
        w, [&] { sink += 1.0; }, [&] { sink += 2.0; });
    sink += r.seconds;
  }
  EXPECT_EQ(allocations.load() - before, 0);
  EXPECT_GT(sink, 0.0);
  // The counter does see the library's allocations: registering a kernel allocates.
  const long registered = allocations.load();
  sel.kernel("a_kernel_name_longer_than_the_small_string_buffer");
  EXPECT_GT(allocations.load(), registered);
  EXPECT_GT(sel.stats(k, fe::Backend::cuda).calls + sel.stats(k, fe::Backend::cpu).calls, 0u);
}
