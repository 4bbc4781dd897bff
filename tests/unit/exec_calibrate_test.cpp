// exec::calibrate: the registry covers exactly the kernel names the solvers dispatch (checked
// by running the solvers with a selector, not by reading their source), the calibration on
// the host records samples for every kernel and the model file round-trips, and with
// injected timings (a fake clock) the fitted model predicts the CPU/GPU crossover.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "common/exec_configs.hpp"
#include "common/test_support.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/exec/calibrate.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/frac/fode_solver.hpp"
#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/frac/fpde_solver.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"

namespace fe = fracmfg::exec;
namespace ff = fracmfg::frac;

namespace {

using fracmfg::test::FakeClock;
using fracmfg::test::host_selector_config;
using fracmfg::test::TempDir;

fracmfg::core::Logger quiet() {
  return fracmfg::core::Logger(0, fracmfg::core::LogLevel::error, false);
}

std::vector<std::string> model_names(const fe::PerfModel& m) {
  std::vector<std::string> names;
  for (std::size_t k = 0; k < m.kernel_count(); ++k) {
    names.push_back(m.kernel_name(fe::KernelId{static_cast<std::uint32_t>(k)}));
  }
  return names;
}

}  // namespace

TEST(exec_calibrate_test, RegistryHoldsTheExportedKernelNamesOnce) {
  namespace kn = fe::kernel_names;
  const std::vector<std::string> names = fe::calibration_kernel_names();
  const std::vector<std::string> expected = {
      kn::tridiag_batched,       kn::kde_binned_1d,     kn::kde_binned_2d,   kn::history_fft,
      kn::mfg_particle_kde,      kn::mfg_particle_step, kn::mfg_hjb_rows,    kn::mfg_fp_rows,
      kn::mfg_nonlocal_coupling, kn::fpde_soe_history,  kn::fpde_l1_history, kn::fpde_riesz_product,
      kn::fpde_circulant_pc,     kn::fpde_circulant_2d};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (const fe::CalibratedKernel& k : fe::calibration_kernels()) {
    EXPECT_FALSE(k.summary.empty()) << k.name;
    EXPECT_GT(k.host_bytes_per_unit, 0.0) << k.name;
    // Every case describes itself with about the asked-for size and runs on the host.
    for (std::int64_t n : {std::int64_t{100}, std::int64_t{5000}}) {
      fe::CalibrationCase c = k.make_case(n);
      const double units = c.workload.units();
      EXPECT_GT(units, 0.5 * static_cast<double>(n)) << k.name << " n=" << n;
      EXPECT_LT(units, 2.0 * static_cast<double>(n)) << k.name << " n=" << n;
      EXPECT_GT(c.workload.bytes, 0.0) << k.name;
      EXPECT_GT(c.workload.transfer_bytes, 0.0) << k.name;
      ASSERT_TRUE(static_cast<bool>(c.host)) << k.name;
      EXPECT_TRUE(static_cast<bool>(c.cuda)) << k.name;
      EXPECT_NO_THROW(c.host()) << k.name;
    }
  }
}

TEST(exec_calibrate_test, SolversDispatchOnlyRegisteredKernelNames) {
  // Run the solvers that go through a Selector (MFG with particles and a nonlocal coupling,
  // a fractional ODE with FFT history) and read back the names they registered.
  fe::Selector selector(fe::Hardware::probe(MPI_COMM_SELF), host_selector_config(), quiet());
  const fracmfg::io::MfgConfig mfg_config =
      fracmfg::io::Deck::from_string(
          "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
          "  grid: {points: [32]}\n  time: {horizon: 0.2, steps: 8}\n  diffusion: 0.1\n"
          "  coupling: {type: nonlocal, width: 0.1}\n"
          "  initial_density: \"1 + 0.5*sin(2*pi*x)\"\n"
          "  fokker_planck: {method: particles, particles: 2000, seed: 3}\n"
          "  iteration: {max_iterations: 1}\n",
          "names.yaml")
          .mfg();
  {
    fracmfg::mfg::Solver solver(MPI_COMM_SELF, fracmfg::mfg::problem_from_config(mfg_config),
                                &selector, quiet());
    solver.iterate();
  }
  {
    // The finite-difference Fokker-Planck step (its rows).
    fracmfg::io::MfgConfig fdm = mfg_config;
    fdm.fokker_planck = fracmfg::io::MfgConfig::FokkerPlanck{};
    fracmfg::mfg::Solver solver(MPI_COMM_SELF, fracmfg::mfg::problem_from_config(fdm), &selector,
                                quiet());
    solver.iterate();
  }
  ff::FodeProblem p;
  p.global_size = p.local_size = 50;
  p.order = {0.6};
  p.horizon = 1.0;
  p.steps = 300;
  p.initial = {1.0};
  p.initial_derivative = {0.0};
  ff::FodeRhs rhs;
  rhs.pointwise = [](double, PetscInt, std::size_t n, const double* y, double* g) {
    for (std::size_t k = 0; k < n; ++k) g[k] = -y[k];
  };
  ff::FodeOptions o;
  o.history = ff::FodeHistory::fft;
  o.block_size = 16;
  ff::FodeSolver fode(MPI_COMM_SELF, p, rhs, o, &selector);
  fode.solve();
  // The time-fractional PDE solver's history update, both methods.
  for (const char* method : {"soe", "direct"}) {
    const fracmfg::io::FpdeConfig fpde_config =
        fracmfg::io::Deck::from_string(
            std::string("problem: fpde\nfpde:\n  type: time_fractional\n  order: 0.5\n"
                        "  diffusivity: 1.0\n  initial: \"sin(pi*x)\"\n"
                        "  domain: {length: [1.0], boundary: dirichlet}\n"
                        "  grid: {points: [33]}\n  time: {horizon: 0.1, steps: 6}\n"
                        "  history: {method: ") +
                method + "}\n",
            "fpde_names.yaml")
            .fpde();
    ff::FpdeSolverOptions fo;
    fo.selector = &selector;
    ff::FpdeSolver fpde(MPI_COMM_SELF, ff::fpde_problem_from_config(fpde_config), fo);
    fpde.solve();
  }
  // ... and the space-fractional one's FFT products (shell matrix, circulant preconditioner),
  // in 1D (lines) and in 2D (the circulant inverse is one 2D transform pair).
  for (const char* domain : {"{length: [1.0], boundary: dirichlet}\n  grid: {points: [65]}\n",
                             "{length: [1.0, 1.0], boundary: dirichlet}\n"
                             "  grid: {points: [17, 13]}\n"}) {
    const fracmfg::io::FpdeConfig riesz_config =
        fracmfg::io::Deck::from_string(
            std::string("problem: fpde\nfpde:\n  type: space_fractional\n  order: 1.5\n"
                        "  diffusivity: 1.0\n  initial: \"sin(pi*x)\"\n  domain: ") +
                domain + "  time: {horizon: 0.1, steps: 4}\n",
            "fpde_riesz_names.yaml")
            .fpde();
    ff::FpdeSolverOptions fo;
    fo.selector = &selector;
    ff::FpdeSolver fpde(MPI_COMM_SELF, ff::fpde_problem_from_config(riesz_config), fo);
    fpde.solve();
  }

  const std::vector<std::string> registry = fe::calibration_kernel_names();
  const std::vector<std::string> used = model_names(selector.model());
  ASSERT_FALSE(used.empty());
  for (const std::string& name : used) {
    EXPECT_NE(std::find(registry.begin(), registry.end(), name), registry.end())
        << "solver kernel '" << name << "' is not in the calibration registry";
    const auto id = selector.model().find_kernel(name);
    ASSERT_TRUE(id.has_value());
    EXPECT_GT(selector.stats(*id, fe::Backend::cpu).calls, 0u) << name;
  }
  namespace kn = fe::kernel_names;
  for (const char* name :
       {kn::mfg_particle_kde, kn::mfg_particle_step, kn::mfg_hjb_rows, kn::mfg_fp_rows,
        kn::mfg_nonlocal_coupling, kn::history_fft, kn::fpde_soe_history, kn::fpde_l1_history,
        kn::fpde_riesz_product, kn::fpde_circulant_pc, kn::fpde_circulant_2d}) {
    EXPECT_NE(std::find(used.begin(), used.end(), name), used.end())
        << "the solvers no longer dispatch '" << name << "'";
  }
}

TEST(exec_calibrate_test, SizesAreLogSpacedWithBothEnds) {
  fe::CalibrationOptions o;
  o.min_size = 1e2;
  o.max_size = 1e7;
  o.per_decade = 2;
  const std::vector<std::int64_t> s = fe::calibration_sizes(o);
  ASSERT_EQ(s.size(), 11u);
  EXPECT_EQ(s.front(), 100);
  EXPECT_EQ(s[1], 316);
  EXPECT_EQ(s[2], 1000);
  EXPECT_EQ(s.back(), 10000000);
  o.max_size = 5e3;  // not on the grid: still the last size
  const std::vector<std::int64_t> t = fe::calibration_sizes(o);
  EXPECT_EQ(t.back(), 5000);
  EXPECT_EQ(t[t.size() - 2], 3162);
  o.min_size = 1e4;
  EXPECT_THROW(fe::calibration_sizes(o), fracmfg::UsageError);
  o.min_size = 0.0;
  EXPECT_THROW(fe::calibration_sizes(o), fracmfg::UsageError);
}

TEST(exec_calibrate_test, UnknownKernelNameIsAUsageErrorWithTheClosestName) {
  try {
    fe::select_kernels(fe::calibration_kernels(), {"histroy_fft"});
    FAIL() << "no error";
  } catch (const fracmfg::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'history_fft'"), std::string::npos)
        << e.what();
  }
  const auto two = fe::select_kernels(fe::calibration_kernels(), {"kde_binned_2d", "history_fft"});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].name, "kde_binned_2d");  // registry order
  EXPECT_EQ(two[1].name, "history_fft");
}

TEST(exec_calibrate_test, CpuCalibrationRecordsEveryKernelAndTheFileRoundTrips) {
  const TempDir dir("fracmfg-calib");
  fe::Selector selector(fe::Hardware::probe(MPI_COMM_SELF), host_selector_config(dir.path()),
                        quiet());
  fe::CalibrationOptions o;
  o.min_size = 1e2;
  o.max_size = 1e4;
  o.repeats = 2;
  o.cuda = true;  // no device here (or backend cpu): noted, not an error
  const auto kernels = fe::calibration_kernels();
  const fe::CalibrationReport r = fe::calibrate(selector, kernels, o);
  ASSERT_EQ(r.entries.size(), kernels.size());  // host only
  EXPECT_FALSE(r.notes.empty());                // why cuda was not calibrated
  std::vector<std::string> names;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const fe::CalibrationEntry& e = r.entries[k];
    names.push_back(kernels[k].name);
    EXPECT_EQ(e.kernel, kernels[k].name);
    EXPECT_EQ(e.backend, fe::Backend::cpu);
    EXPECT_EQ(e.sizes, 5) << e.kernel;  // 1e2, 316, 1e3, 3162, 1e4
    EXPECT_EQ(e.samples, 10u) << e.kernel;
    EXPECT_TRUE(e.notes.empty()) << e.kernel << ": " << e.notes.front();
    const auto id = selector.model().find_kernel(e.kernel);
    ASSERT_TRUE(id.has_value());
    EXPECT_EQ(selector.model().samples(*id, fe::Backend::cpu), 10u);
    EXPECT_TRUE(selector.model().fitted(*id, fe::Backend::cpu)) << e.kernel;
    EXPECT_GT(selector.model().predict(*id, fe::Backend::cpu, 1e4),
              selector.model().predict(*id, fe::Backend::cpu, 1e2))
        << e.kernel;
  }
  const std::string table = fe::format_calibration(selector.model(), names);
  for (const std::string& n : names) EXPECT_NE(table.find(n), std::string::npos) << table;
  EXPECT_NE(table.find("cpu only"), std::string::npos) << table;

  selector.model().save(dir.path());
  const std::string file = selector.model().path(dir.path());
  ASSERT_TRUE(std::filesystem::exists(file));
  fe::PerfModel back(selector.model().host_name(), selector.model().device_name());
  ASSERT_TRUE(back.load(dir.path()));
  for (const std::string& n : names) {
    const auto a = selector.model().find_kernel(n);
    const auto b = back.find_kernel(n);
    ASSERT_TRUE(b.has_value()) << n;
    EXPECT_EQ(back.samples(*b, fe::Backend::cpu), 10u);
    const fe::LinearCost& ca = selector.model().cost(*a, fe::Backend::cpu);
    const fe::LinearCost& cb = back.cost(*b, fe::Backend::cpu);
    EXPECT_NEAR(cb.latency, ca.latency, 1e-9 * std::max(1e-12, ca.latency)) << n;
    EXPECT_NEAR(cb.seconds_per_unit, ca.seconds_per_unit, 1e-9 * ca.seconds_per_unit) << n;
  }
  // A selector started on that directory begins with the calibrated model.
  fe::Selector later(fe::Hardware::probe(MPI_COMM_SELF), host_selector_config(dir.path()), quiet());
  const auto id = later.model().find_kernel(fracmfg::exec::kernel_names::history_fft);
  ASSERT_TRUE(id.has_value());
  EXPECT_TRUE(later.model().fitted(*id, fe::Backend::cpu));
}

TEST(exec_calibrate_test, InjectedTimingsGiveTheCrossoverWithinTwentyPercent) {
  // A described GPU node (nothing is probed or activated); a fake clock advanced by the
  // kernel's calls: host 2 us + 10 ns per unit, cuda 50 us + 0.1 ns per unit, each with a
  // deterministic +-5% perturbation. True crossover n* = 48 us / 9.9 ns = 4848.
  const fe::Hardware hw = fe::Hardware::from_yaml(
      "host_name: fake-node\nhost_cores: 4\ncuda_compiled: true\n"
      "gpus:\n  - {name: Fake GPU, cc: \"8.0\", multiprocessors: 80, memory_gb: 16}\n",
      "fake.yaml");
  fe::SelectorConfig config;
  config.use_environment = false;
  config.persist = false;
  config.activate_device = false;
  fe::Selector selector(hw, config, quiet());
  ASSERT_TRUE(selector.cuda_usable());
  FakeClock clock(0.0);
  std::uint64_t calls = 0;
  selector.set_clock(clock.clock());
  auto jitter = [&] { return 1.0 + 0.05 * std::sin(1.7 * static_cast<double>(++calls)); };
  fe::CalibratedKernel fake;
  fake.name = "fake_kernel";
  fake.summary = "injected timings";
  fake.host_bytes_per_unit = 8.0;
  fake.make_case = [&](std::int64_t n) {
    fe::CalibrationCase c;
    c.workload.elements = n;
    c.workload.bytes = 8.0 * static_cast<double>(n);
    const double units = static_cast<double>(n);
    c.host = [&, units] { clock.advance((2e-6 + 1e-8 * units) * jitter()); };
    c.cuda = [&, units](int, fracmfg::kernels::CudaResources* resources) {
      EXPECT_EQ(resources, selector.cuda_resources());
      clock.advance((5e-5 + 1e-10 * units) * jitter());
    };
    return c;
  };
  fe::CalibrationOptions o;
  o.min_size = 1e2;
  o.max_size = 1e6;
  o.repeats = 4;
  const fe::CalibrationReport r = fe::calibrate(selector, {fake}, o);
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[0].backend, fe::Backend::cpu);
  EXPECT_EQ(r.entries[1].backend, fe::Backend::cuda);
  for (const fe::CalibrationEntry& e : r.entries) {
    EXPECT_EQ(e.sizes, 9) << fe::to_string(e.backend);
    EXPECT_TRUE(e.notes.empty()) << e.notes.front();
  }
  const auto id = selector.model().find_kernel("fake_kernel");
  ASSERT_TRUE(id.has_value());
  const auto n = selector.model().crossover(*id);
  ASSERT_TRUE(n.has_value());
  const double truth = (5e-5 - 2e-6) / (1e-8 - 1e-10);
  EXPECT_NEAR(*n, truth, 0.2 * truth);
  // The selector now places by the calibrated model.
  fe::Workload small;
  small.kernel = *id;
  small.elements = 500;
  fe::Workload large = small;
  large.elements = 50000;
  EXPECT_EQ(selector.decide(small).backend, fe::Backend::cpu);
  EXPECT_EQ(selector.decide(large).backend, fe::Backend::cuda);
  const std::string table = fe::format_calibration(selector.model(), {"fake_kernel"});
  EXPECT_NE(table.find("cuda"), std::string::npos) << table;
  EXPECT_EQ(table.find("cpu only"), std::string::npos) << table;
}

TEST(exec_calibrate_test, TimeCapSkipsLargeSizesWithANote) {
  fe::Selector selector(fe::Hardware::probe(MPI_COMM_SELF), host_selector_config(), quiet());
  FakeClock clock(0.0);
  selector.set_clock(clock.clock());
  fe::CalibratedKernel slow;
  slow.name = "slow_kernel";
  slow.summary = "1 ms per 1000 units";
  slow.host_bytes_per_unit = 8.0;
  slow.make_case = [&](std::int64_t n) {
    fe::CalibrationCase c;
    c.workload.elements = n;
    const double units = static_cast<double>(n);
    c.host = [&, units] { clock.advance(1e-6 * units); };
    return c;
  };
  fe::CalibrationOptions o;
  o.min_size = 1e2;
  o.max_size = 1e7;
  o.max_seconds_per_kernel = 1.0;
  const fe::CalibrationReport r = fe::calibrate(selector, {slow}, o);
  ASSERT_EQ(r.entries.size(), 1u);
  const fe::CalibrationEntry& e = r.entries[0];
  EXPECT_LE(e.seconds, 1.0);
  EXPECT_GE(e.sizes, 2);
  EXPECT_LT(e.max_units, 1e6);
  ASSERT_FALSE(e.notes.empty());
  EXPECT_NE(e.notes.front().find("time cap"), std::string::npos) << e.notes.front();
  // A size whose inputs do not fit the host memory limit is skipped, not attempted.
  o.host_memory_limit = 8.0 * 5e3;
  o.max_seconds_per_kernel = 100.0;
  const fe::CalibrationReport m = fe::calibrate(selector, {slow}, o);
  EXPECT_EQ(m.entries[0].max_units, 3162.0);
  ASSERT_FALSE(m.entries[0].notes.empty());
  EXPECT_NE(m.entries[0].notes.front().find("host memory"), std::string::npos);
}
