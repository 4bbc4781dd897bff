// exec::PerfModel: the online cost fit, crossover, and the persistence file (round trip,
// merging, corrupt/foreign files, concurrent writers).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "common/test_support.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/exec/perf_model.hpp"

namespace fe = fracmfg::exec;
using fracmfg::core::Logger;
using fracmfg::core::LogLevel;

namespace {

using fracmfg::test::CapturedLog;
using fracmfg::test::ScopedEnv;
using fracmfg::test::TempDir;

double host_time(double n) {
  return 1e-6 + n * 1e-9;
}
double cuda_time(double n) {
  return 2e-5 + n * 0.05e-9;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

fe::PerfModelOptions exact_options() {
  fe::PerfModelOptions o;
  o.forgetting = 1.0;
  return o;
}

}  // namespace

TEST(exec_perf_model, PriorHoldsUntilEnoughSamples) {
  fe::PerfModel m("h", "d");
  const fe::KernelId k = m.kernel("kde");
  EXPECT_FALSE(m.fitted(k, fe::Backend::cpu));
  EXPECT_DOUBLE_EQ(m.predict(k, fe::Backend::cpu, 1000.0), 1e-6 + 1000.0 * 1e-9);
  EXPECT_DOUBLE_EQ(m.predict(k, fe::Backend::cuda, 1000.0), 2e-5 + 1000.0 * 1e-10);
  m.add_sample(k, fe::Backend::cpu, 100.0, 5e-6);
  m.add_sample(k, fe::Backend::cpu, 1000.0, 9e-6);
  EXPECT_FALSE(m.fitted(k, fe::Backend::cpu));  // min_fit_samples = 3
  EXPECT_EQ(m.samples(k, fe::Backend::cpu), 2u);
  m.add_sample(k, fe::Backend::cpu, 10000.0, 5e-5);
  EXPECT_TRUE(m.fitted(k, fe::Backend::cpu));
  EXPECT_FALSE(m.fitted(k, fe::Backend::cuda));
  m.set_prior(k, fe::Backend::cuda, fe::LinearCost{3e-5, 2e-10});
  EXPECT_DOUBLE_EQ(m.predict(k, fe::Backend::cuda, 10.0), 3e-5 + 10.0 * 2e-10);
}

TEST(exec_perf_model, FitRecoversAnExactCostLine) {
  fe::PerfModel m("h", "d");
  const fe::KernelId k = m.kernel("tridiag_batched");
  for (double n = 10.0; n <= 1e7; n *= 3.0) m.add_sample(k, fe::Backend::cpu, n, host_time(n));
  const fe::LinearCost& c = m.cost(k, fe::Backend::cpu);
  EXPECT_NEAR(c.latency, 1e-6, 1e-12);
  EXPECT_NEAR(c.seconds_per_unit, 1e-9, 1e-15);
  EXPECT_NEAR(m.predict(k, fe::Backend::cpu, 5e5), host_time(5e5), 1e-9 * host_time(5e5));
}

TEST(exec_perf_model, NoisyFitKeepsRelativeAccuracyAtSmallSizes) {
  // 5% multiplicative noise: the 1/t^2 weighting keeps the latency (small n) accurate.
  fe::PerfModel m("h", "d", exact_options());
  const fe::KernelId k = m.kernel("noisy");
  unsigned state = 12345;
  auto noise = [&] {
    state = state * 1103515245u + 12345u;
    return 1.0 + 0.05 * (static_cast<double>((state >> 8) % 2001) / 1000.0 - 1.0);
  };
  for (int rep = 0; rep < 20; ++rep) {
    for (double n = 10.0; n <= 1e7; n *= 10.0) {
      m.add_sample(k, fe::Backend::cpu, n, host_time(n) * noise());
    }
  }
  EXPECT_NEAR(m.predict(k, fe::Backend::cpu, 10.0) / host_time(10.0), 1.0, 0.05);
  EXPECT_NEAR(m.predict(k, fe::Backend::cpu, 1e7) / host_time(1e7), 1.0, 0.05);
}

TEST(exec_perf_model, ForgettingFollowsAChangeOfSpeed) {
  fe::PerfModelOptions o;
  o.forgetting = 0.8;
  fe::PerfModel m("h", "d", o);
  const fe::KernelId k = m.kernel("k");
  for (int rep = 0; rep < 10; ++rep) {
    for (double n : {1e3, 1e5}) m.add_sample(k, fe::Backend::cpu, n, host_time(n));
  }
  for (int rep = 0; rep < 30; ++rep) {  // the machine became 4x slower per unit
    for (double n : {1e3, 1e5}) m.add_sample(k, fe::Backend::cpu, n, 1e-6 + n * 4e-9);
  }
  EXPECT_NEAR(m.cost(k, fe::Backend::cpu).seconds_per_unit, 4e-9, 4e-9 * 1e-3);

  fe::PerfModel keep("h", "d", exact_options());
  const fe::KernelId k2 = keep.kernel("k");
  for (int rep = 0; rep < 10; ++rep) {
    for (double n : {1e3, 1e5}) keep.add_sample(k2, fe::Backend::cpu, n, host_time(n));
  }
  for (int rep = 0; rep < 30; ++rep) {
    for (double n : {1e3, 1e5}) keep.add_sample(k2, fe::Backend::cpu, n, 1e-6 + n * 4e-9);
  }
  // Without forgetting the old samples still pull the slope down.
  EXPECT_LT(keep.cost(k2, fe::Backend::cpu).seconds_per_unit, 3.9e-9);
}

TEST(exec_perf_model, SameSizeSamplesKeepThePriorSlope) {
  fe::PerfModel m("h", "d");
  const fe::KernelId k = m.kernel("k");
  m.set_prior(k, fe::Backend::cpu, fe::LinearCost{0.0, 2e-9});
  for (int i = 0; i < 5; ++i) m.add_sample(k, fe::Backend::cpu, 1000.0, 5e-6);
  const fe::LinearCost& c = m.cost(k, fe::Backend::cpu);
  EXPECT_TRUE(m.fitted(k, fe::Backend::cpu));
  EXPECT_DOUBLE_EQ(c.seconds_per_unit, 2e-9);
  EXPECT_NEAR(c.latency, 3e-6, 1e-15);
  EXPECT_NEAR(m.predict(k, fe::Backend::cpu, 1000.0), 5e-6, 1e-15);
}

TEST(exec_perf_model, NegativeParametersAreClamped) {
  fe::PerfModel m("h", "d", exact_options());
  const fe::KernelId k = m.kernel("k");
  // Time falling with size (noise): slope 0, latency = weighted mean time.
  m.add_sample(k, fe::Backend::cpu, 100.0, 3e-6);
  m.add_sample(k, fe::Backend::cpu, 1000.0, 2e-6);
  m.add_sample(k, fe::Backend::cpu, 10000.0, 1e-6);
  EXPECT_EQ(m.cost(k, fe::Backend::cpu).seconds_per_unit, 0.0);
  EXPECT_GT(m.cost(k, fe::Backend::cpu).latency, 0.0);
  // A line through negative latency: latency 0, slope through the origin.
  m.add_sample(k, fe::Backend::cuda, 1000.0, 0.5e-6);
  m.add_sample(k, fe::Backend::cuda, 2000.0, 1.5e-6);
  m.add_sample(k, fe::Backend::cuda, 3000.0, 2.5e-6);
  EXPECT_EQ(m.cost(k, fe::Backend::cuda).latency, 0.0);
  EXPECT_GT(m.cost(k, fe::Backend::cuda).seconds_per_unit, 0.0);
}

TEST(exec_perf_model, CrossoverIsWhereTheLinesMeet) {
  fe::PerfModel m("h", "d");
  const fe::KernelId k = m.kernel("k");
  for (double n = 100.0; n <= 1e7; n *= 4.0) {
    m.add_sample(k, fe::Backend::cpu, n, host_time(n));
    m.add_sample(k, fe::Backend::cuda, n, cuda_time(n));
  }
  const auto x = m.crossover(k);
  ASSERT_TRUE(x.has_value());
  EXPECT_NEAR(*x, 19e-6 / 0.95e-9, 1.0);
  EXPECT_NEAR(m.predict(k, fe::Backend::cpu, *x), m.predict(k, fe::Backend::cuda, *x), 1e-15);
}

TEST(exec_perf_model, NoCrossoverWhenOneBackendDominates) {
  fe::PerfModel m("h", "d");
  const fe::KernelId k = m.kernel("k");
  m.set_prior(k, fe::Backend::cpu, fe::LinearCost{1e-6, 1e-10});
  m.set_prior(k, fe::Backend::cuda, fe::LinearCost{2e-5, 1e-9});
  EXPECT_FALSE(m.crossover(k).has_value());
  m.set_prior(k, fe::Backend::cuda, fe::LinearCost{2e-5, 1e-10});
  EXPECT_FALSE(m.crossover(k).has_value());  // parallel
  // cuda faster at small n, host at large n: still a crossover.
  m.set_prior(k, fe::Backend::cuda, fe::LinearCost{0.0, 2e-10});
  ASSERT_TRUE(m.crossover(k).has_value());
  EXPECT_NEAR(*m.crossover(k), 1e-6 / 1e-10, 1e-3);
}

TEST(exec_perf_model, LearningSwitchAndReset) {
  fe::PerfModel m("h", "d");
  const fe::KernelId k = m.kernel("k");
  m.set_learning(false);
  m.add_sample(k, fe::Backend::cpu, 10.0, 1e-6);
  EXPECT_EQ(m.samples(k, fe::Backend::cpu), 0u);
  m.set_learning(true);
  for (double n : {10.0, 100.0, 1000.0}) m.add_sample(k, fe::Backend::cpu, n, host_time(n));
  m.add_sample(k, fe::Backend::cpu, -1.0, 1e-6);  // ignored
  m.add_sample(k, fe::Backend::cpu, 1.0, std::nan(""));
  EXPECT_EQ(m.samples(k, fe::Backend::cpu), 3u);
  EXPECT_TRUE(m.fitted(k, fe::Backend::cpu));
  m.reset();
  EXPECT_EQ(m.samples(k, fe::Backend::cpu), 0u);
  EXPECT_FALSE(m.fitted(k, fe::Backend::cpu));
  EXPECT_EQ(m.kernel_count(), 1u);
}

TEST(exec_perf_model, KernelNamesAreInternedAndChecked) {
  fe::PerfModel m("h", "d");
  const fe::KernelId a = m.kernel("a");
  const fe::KernelId b = m.kernel("b");
  EXPECT_NE(a, b);
  EXPECT_EQ(m.kernel("a"), a);
  EXPECT_EQ(m.kernel_name(b), "b");
  EXPECT_EQ(m.find_kernel("b"), b);
  EXPECT_FALSE(m.find_kernel("c").has_value());
  EXPECT_THROW(m.kernel(""), fracmfg::Error);
  EXPECT_THROW(m.kernel("has space"), fracmfg::Error);
  EXPECT_THROW(m.kernel(std::string(65, 'x')), fracmfg::Error);
  EXPECT_THROW(m.predict(fe::KernelId{7}, fe::Backend::cpu, 1.0), fracmfg::Error);
  EXPECT_THROW(fe::PerfModel("h", "d",
                             [] {
                               fe::PerfModelOptions o;
                               o.forgetting = 0.0;
                               return o;
                             }()),
               fracmfg::Error);
}

TEST(exec_perf_model, FileNamesAreSanitisedAndTheDirectoryFollowsTheEnvironment) {
  EXPECT_EQ(fe::PerfModel::file_name("node 1/x", "NVIDIA A100-SXM4-40GB"),
            "node_1_x__NVIDIA_A100-SXM4-40GB.perf");
  EXPECT_EQ(fe::PerfModel::file_name("", ".."), "unknown__unknown.perf");
  {
    const ScopedEnv a("FRACMFG_PERF_DIR", "/tmp/perf-here");
    EXPECT_EQ(fe::PerfModel::default_directory(), "/tmp/perf-here");
  }
  {
    const ScopedEnv a("FRACMFG_PERF_DIR", nullptr);
    const ScopedEnv b("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(fe::PerfModel::default_directory(), "/xdg/fracmfg");
  }
  {
    const ScopedEnv a("FRACMFG_PERF_DIR", nullptr);
    const ScopedEnv b("XDG_CACHE_HOME", nullptr);
    const ScopedEnv c("HOME", "/home/someone");
    EXPECT_EQ(fe::PerfModel::default_directory(), "/home/someone/.cache/fracmfg");
  }
}

TEST(exec_perf_model, SavedModelLoadsBackInAnotherObject) {
  const TempDir dir("fracmfg-perf");
  fe::PerfModel a("node-1", "NVIDIA A100", exact_options());
  const fe::KernelId k = a.kernel("kde");
  for (double n = 100.0; n <= 1e6; n *= 10.0) {
    a.add_sample(k, fe::Backend::cpu, n, host_time(n));
    a.add_sample(k, fe::Backend::cuda, n, cuda_time(n));
  }
  a.save(dir.path() + "/sub");  // the directory is created
  ASSERT_TRUE(std::filesystem::exists(a.path(dir.path() + "/sub")));
  EXPECT_EQ(read_text(a.path(dir.path() + "/sub")).rfind("fracmfg-perf-model 1\n", 0), 0u);

  fe::PerfModel b("node-1", "NVIDIA A100", exact_options());
  ASSERT_TRUE(b.load(dir.path() + "/sub"));
  const auto kb = b.find_kernel("kde");
  ASSERT_TRUE(kb.has_value());
  for (fe::Backend be : {fe::Backend::cpu, fe::Backend::cuda}) {
    EXPECT_EQ(b.samples(*kb, be), a.samples(k, be));
    EXPECT_DOUBLE_EQ(b.sums(*kb, be).snt, a.sums(k, be).snt);
    EXPECT_DOUBLE_EQ(b.cost(*kb, be).latency, a.cost(k, be).latency);
    EXPECT_DOUBLE_EQ(b.cost(*kb, be).seconds_per_unit, a.cost(k, be).seconds_per_unit);
  }
  EXPECT_NEAR(*b.crossover(*kb), 20000.0, 1.0);
  // Nothing new learned: saving again leaves the file as it is.
  const std::string before = read_text(b.path(dir.path() + "/sub"));
  b.save(dir.path() + "/sub");
  EXPECT_EQ(read_text(b.path(dir.path() + "/sub")), before);
}

TEST(exec_perf_model, SaveMergesWithWhatOthersWrote) {
  const TempDir dir("fracmfg-perf");
  fe::PerfModel a("n", "cpu", exact_options());
  fe::PerfModel b("n", "cpu", exact_options());
  const fe::KernelId ka = a.kernel("k");
  const fe::KernelId kb = b.kernel("k");
  const fe::KernelId only_b = b.kernel("other");
  for (int i = 0; i < 10; ++i) a.add_sample(ka, fe::Backend::cpu, 100.0 * (i + 1), 1e-6);
  for (int i = 0; i < 5; ++i) b.add_sample(kb, fe::Backend::cpu, 50.0 * (i + 1), 2e-6);
  b.add_sample(only_b, fe::Backend::cuda, 10.0, 1e-5);
  const double w_total = a.sums(ka, fe::Backend::cpu).w + b.sums(kb, fe::Backend::cpu).w;
  a.save(dir.path());
  b.save(dir.path());
  EXPECT_EQ(b.samples(kb, fe::Backend::cpu), 15u);  // b adopted the merged sums
  EXPECT_NEAR(b.sums(kb, fe::Backend::cpu).w, w_total, 1e-9 * w_total);
  // a saved before b; reloading gives it b's contributions too.
  a.add_sample(ka, fe::Backend::cpu, 1.0, 1e-6);
  ASSERT_TRUE(a.load(dir.path()));
  EXPECT_EQ(a.samples(ka, fe::Backend::cpu), 16u);  // 15 in the file + 1 unsaved
  ASSERT_TRUE(a.find_kernel("other").has_value());
  EXPECT_EQ(a.samples(*a.find_kernel("other"), fe::Backend::cuda), 1u);
  a.save(dir.path());
  fe::PerfModel c("n", "cpu", exact_options());
  ASSERT_TRUE(c.load(dir.path()));
  EXPECT_EQ(c.samples(*c.find_kernel("k"), fe::Backend::cpu), 16u);
}

TEST(exec_perf_model, CorruptFileIsIgnoredWithAWarning) {
  const TempDir dir("fracmfg-perf");
  const CapturedLog log;
  fe::PerfModel m("n", "dev", fe::PerfModelOptions{}, log.log());
  const fe::KernelId k = m.kernel("k");
  const std::string file = m.path(dir.path());
  for (const std::string& bad :
       {std::string("\x01\x02garbage\n"), std::string(""),
        std::string("fracmfg-perf-model 1\nhost n\ndevice dev\nentry k cpu 3 1 2\n"),
        std::string("fracmfg-perf-model 1\nhost n\ndevice dev\nentry k gpu 3 1 2 3 4 5\n"),
        std::string("fracmfg-perf-model 1\nhost n\ndevice dev\nentry k cpu 3 1 2 nan 4 5\n"),
        std::string("fracmfg-perf-model 1\nhost n\ndevice dev\nentry k cpu 3 -1 2 3 4 5\n"),
        std::string("fracmfg-perf-model 1\nentry k cpu 3 1 2 3 4 5\n"),
        std::string("fracmfg-perf-model 1\nhost n\ndevice dev\nbogus line\n")}) {
    write_text(file, bad);
    EXPECT_FALSE(m.load(dir.path())) << bad;
    EXPECT_EQ(m.samples(k, fe::Backend::cpu), 0u) << bad;
  }
  EXPECT_NE(log.text().find("ignoring performance file " + file), std::string::npos) << log.text();
  // Saving replaces the corrupt file with a valid one.
  m.add_sample(k, fe::Backend::cpu, 10.0, 1e-6);
  m.save(dir.path());
  EXPECT_NE(log.text().find("replacing performance file"), std::string::npos);
  fe::PerfModel again("n", "dev");
  EXPECT_TRUE(again.load(dir.path()));
}

TEST(exec_perf_model, OtherVersionHostOrDeviceIsIgnored) {
  const TempDir dir("fracmfg-perf");
  const CapturedLog log;
  fe::PerfModel m("n", "dev", fe::PerfModelOptions{}, log.log());
  const std::string file = m.path(dir.path());
  write_text(file, "fracmfg-perf-model 2\nhost n\ndevice dev\nentry k cpu 3 1 2 3 4 5\n");
  EXPECT_FALSE(m.load(dir.path()));
  EXPECT_NE(log.text().find("format version 2, expected 1"), std::string::npos) << log.text();
  write_text(file, "fracmfg-perf-model 1\nhost elsewhere\ndevice dev\nentry k cpu 3 1 2 3 4 5\n");
  EXPECT_FALSE(m.load(dir.path()));
  EXPECT_NE(log.text().find("written on host 'elsewhere'"), std::string::npos) << log.text();
  write_text(file, "fracmfg-perf-model 1\nhost n\ndevice other\nentry k cpu 3 1 2 3 4 5\n");
  EXPECT_FALSE(m.load(dir.path()));
  EXPECT_FALSE(m.find_kernel("k").has_value());
  // A missing file is no warning.
  const std::string before = log.text();
  std::filesystem::remove(file);
  EXPECT_FALSE(m.load(dir.path()));
  EXPECT_EQ(log.text(), before);
}

TEST(exec_perf_model, EntriesWrittenAsHostByEarlierVersionsLoadAsCpu) {
  const TempDir dir("fracmfg-perf");
  fe::PerfModel m("n", "dev", exact_options());
  const std::string file = m.path(dir.path());
  write_text(file,
             "fracmfg-perf-model 1\nhost n\ndevice dev\nentry k host 3 1 2 3 4 5\n"
             "entry k cuda 2 1 2 3 4 5\n");
  ASSERT_TRUE(m.load(dir.path()));
  const std::optional<fe::KernelId> k = m.find_kernel("k");
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(m.samples(*k, fe::Backend::cpu), 3u);
  EXPECT_EQ(m.samples(*k, fe::Backend::cuda), 2u);
  // Saving writes the one word.
  m.add_sample(*k, fe::Backend::cpu, 10.0, 1e-6);
  m.save(dir.path());
  const std::string text = read_text(file);
  EXPECT_NE(text.find("\nentry k cpu 4 "), std::string::npos) << text;
  EXPECT_EQ(text.find("entry k host"), std::string::npos) << text;
  EXPECT_EQ(fe::to_string(fe::Backend::cpu), std::string("cpu"));
  EXPECT_EQ(fe::parse_backend("host"), fe::Backend::cpu);
  EXPECT_EQ(fe::parse_backend("cpu"), fe::Backend::cpu);
}

TEST(exec_perf_model, ARankWithoutDeviceReadsTheFileEarlierVersionsNamedHost) {
  const TempDir dir("fracmfg-perf");
  const std::string legacy = dir.path() + "/" + fe::PerfModel::file_name("n", "host");
  const std::string old_text =
      "fracmfg-perf-model 1\nhost n\ndevice host\nentry k host 3 1 2 3 4 5\n";
  write_text(legacy, old_text);
  fe::PerfModel m("n", "cpu", exact_options());
  EXPECT_EQ(m.path(dir.path()), dir.path() + "/n__cpu.perf");
  ASSERT_TRUE(m.load(dir.path()));
  const std::optional<fe::KernelId> k = m.find_kernel("k");
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(m.samples(*k, fe::Backend::cpu), 3u);
  // The next save writes the merged samples under the new name; the old file stays.
  m.add_sample(*k, fe::Backend::cpu, 10.0, 1e-6);
  m.save(dir.path());
  EXPECT_EQ(read_text(legacy), old_text);
  const std::string text = read_text(m.path(dir.path()));
  EXPECT_NE(text.find("\ndevice cpu\n"), std::string::npos) << text;
  fe::PerfModel again("n", "cpu", exact_options());
  ASSERT_TRUE(again.load(dir.path()));
  EXPECT_EQ(again.samples(*again.find_kernel("k"), fe::Backend::cpu), 4u);
  // A rank with a device never reads it.
  fe::PerfModel gpu("n", "dev", exact_options());
  EXPECT_FALSE(gpu.load(dir.path()));
}

TEST(exec_perf_model, ConcurrentWritersLoseNothing) {
  const TempDir dir("fracmfg-perf");
  constexpr int merges = 100;
  // Each child adds one sample to a shared kernel and one to its own kernel per merge.
  pid_t children[2];
  for (int c = 0; c < 2; ++c) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        fe::PerfModel m("node", "dev", exact_options(), Logger(0, LogLevel::error, false));
        const fe::KernelId shared = m.kernel("shared");
        const fe::KernelId own = m.kernel(c == 0 ? "first" : "second");
        for (int i = 0; i < merges; ++i) {
          m.add_sample(shared, fe::Backend::cpu, 1000.0, 1e-6);
          m.add_sample(own, fe::Backend::cuda, 10.0 * (i + 1), 2e-6);
          m.save(dir.path());
        }
      } catch (...) {
        status = 1;
      }
      ::_exit(status);  // no MPI, PETSc or Kokkos shutdown in the child
    }
    children[c] = pid;
  }
  for (pid_t pid : children) {
    int status = -1;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  fe::PerfModel m("node", "dev", exact_options());
  ASSERT_TRUE(m.load(dir.path()));
  const auto shared = m.find_kernel("shared");
  const auto first = m.find_kernel("first");
  const auto second = m.find_kernel("second");
  ASSERT_TRUE(shared && first && second);
  EXPECT_EQ(m.samples(*shared, fe::Backend::cpu), 2u * merges);
  EXPECT_EQ(m.samples(*first, fe::Backend::cuda), std::uint64_t{merges});
  EXPECT_EQ(m.samples(*second, fe::Backend::cuda), std::uint64_t{merges});
  const double w = 1.0 / (1e-6 * 1e-6);
  EXPECT_NEAR(m.sums(*shared, fe::Backend::cpu).w, 2 * merges * w, 1e-9 * 2 * merges * w);
  EXPECT_NEAR(m.sums(*shared, fe::Backend::cpu).sn, 2 * merges * w * 1000.0,
              1e-9 * 2 * merges * w * 1000.0);
  // No temporary files left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = e.path().filename().string();
    EXPECT_NE(name[0], '.') << name;
    ++files;
  }
  EXPECT_EQ(files, 2);  // the model and its lock file
}
