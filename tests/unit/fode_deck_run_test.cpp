// `fracmfg run` on the fode -ci decks (frac::run_fode_deck, what drivers/run_fode.cpp calls):
// systems, and with fode.terms one multi-term equation. The HDF5 file holds the solution at
// every output.every-th step and the last one, on the component grid, and its values match the
// exact solutions within the discretisation error the convergence tests measure.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscsys.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/frac/fode_run.hpp"
#include "fracmfg/frac/mittag_leffler.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/io/h5_layout.hpp"
#include "fracmfg/io/h5_reader.hpp"

namespace ff = fracmfg::frac;
namespace fs = std::filesystem;

namespace {

std::string source_dir() {
  const char* d = std::getenv("FRACMFG_SOURCE_DIR");
  return d != nullptr ? d : ".";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Output in a fresh directory of the test's own (rank 0 names it, every rank uses it).
std::string output_path(const std::string& name) {
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  std::string dir;
  if (rank == 0) {
    dir = (fs::path(testing::TempDir()) / ("fode_deck_run_" + std::to_string(::getpid()))).string();
    fs::create_directories(dir);
  }
  unsigned long long n = dir.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, PETSC_COMM_WORLD);
  dir.resize(static_cast<std::size_t>(n));
  MPI_Bcast(dir.data(), static_cast<int>(n), MPI_CHAR, 0, PETSC_COMM_WORLD);
  return (fs::path(dir) / (name + ".h5")).string();
}

/// Runs inputs/<deck>.yaml and checks the file against exact(i, t) for every component i
/// at every written step: |y_i - exact| <= bound; returns the largest error.
double run_and_compare(const std::string& deck_name, std::int64_t expected_steps,
                       std::int64_t every, const std::function<double(std::size_t, double)>& exact,
                       double bound) {
  const std::string deck_file = source_dir() + "/inputs/" + deck_name + ".yaml";
  const auto deck = fracmfg::io::Deck::load(PETSC_COMM_WORLD, deck_file);
  const std::string out = output_path(deck_name);
  fracmfg::core::Logger quiet(0, fracmfg::core::LogLevel::warn, false);
  const ff::FodeRunSummary summary =
      ff::run_fode_deck(PETSC_COMM_WORLD, deck, nullptr, quiet, out, 0.0);
  EXPECT_EQ(summary.file, out);
  EXPECT_EQ(summary.stats.steps, expected_steps);

  auto in = std::make_unique<fracmfg::io::H5Reader>(PETSC_COMM_WORLD, out);
  EXPECT_EQ(in->attribute_string("/", "problem"), "fode");
  EXPECT_EQ(in->attribute_string("/", "deck"), read_text(deck_file));
  EXPECT_EQ(in->attribute_string("/", "resolved_deck"), deck.resolved_yaml());
  EXPECT_EQ(in->attribute_string("/fields/y", "kind"), "components");
  EXPECT_EQ(in->attribute_int64("/", "fode_steps"), expected_steps);
  const std::vector<std::int64_t> steps = in->field_steps("y");
  const std::vector<double> times = in->field_times("y");
  std::vector<std::int64_t> want;
  for (std::int64_t n = 0; n <= expected_steps; n += every) want.push_back(n);
  if (want.back() != expected_steps) want.push_back(expected_steps);
  EXPECT_EQ(steps, want);
  EXPECT_EQ(in->read_array("/time"), times);
  EXPECT_EQ(summary.outputs, static_cast<std::int64_t>(want.size()));
  const auto config = deck.fode();
  EXPECT_EQ(in->read_array("/order").size(), config.dimension());

  double worst = 0.0;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::vector<double> y = in->read_level_values("y", k);
    EXPECT_EQ(y.size(), config.dimension());
    EXPECT_DOUBLE_EQ(times[k], config.horizon * static_cast<double>(steps[k]) /
                                   static_cast<double>(expected_steps));
    for (std::size_t i = 0; i < y.size(); ++i) {
      const double e = std::fabs(y[i] - exact(i, times[k]));
      worst = std::max(worst, e);
      EXPECT_LE(e, bound) << deck_name << ": y" << i + 1 << " at t = " << times[k];
    }
  }
  std::printf("%s: largest error %.3e (bound %.1e)\n", deck_name.c_str(), worst, bound);
  in.reset();  // closes the file (collective)
  MPI_Barrier(PETSC_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank == 0) fs::remove_all(fs::path(out).parent_path());
  return worst;
}

}  // namespace

TEST(fode_deck_run_test, RelaxationCiDeckWritesTheMittagLefflerSolution) {
  // ABM, h = 0.01: the convergence tests measure max errors of about 0.06 h^1.6 (a = 0.8)
  // and 0.02 h^2 (a = 1.6) on [0, 1], i.e. 4e-5 and 2e-6 here.
  const double err = run_and_compare(
      "fode_relaxation-ci", 200, 10,
      [](std::size_t i, double t) {
        const double a = i == 0 ? 0.8 : 1.6;
        return ff::mittag_leffler(-std::pow(t, a), a);
      },
      1e-4);
  EXPECT_GT(err, 1e-7);  // a real discretisation error, not a copy of the exact solution
}

TEST(fode_deck_run_test, NonlinearCiDeckWritesTheDiethelmFordFreedSolution) {
  // ABM a = 0.5, h = 0.005: error about 1.4 h^1.5 = 5e-4 (convergence test constants).
  run_and_compare(
      "fode_nonlinear-ci", 200, 20,
      [](std::size_t, double t) {
        return std::pow(t, 8) - 3.0 * std::pow(t, 4.25) + 2.25 * std::sqrt(t);
      },
      1e-3);
}

TEST(fode_deck_run_test, RotationCiDeckWritesTheComplexMittagLefflerSolution) {
  // Implicit trapezoidal, a = 0.7, h = 0.005; y1 + i y2 = E_0.7(-i t^0.7).
  run_and_compare(
      "fode_rotation-ci", 400, 20,
      [](std::size_t i, double t) {
        const std::complex<double> z =
            ff::mittag_leffler(std::complex<double>(0.0, -std::pow(t, 0.7)), 0.7);
        return i == 0 ? z.real() : z.imag();
      },
      1e-4);
}

TEST(fode_deck_run_test, BagleyTorvikCiDeckWritesTheExactLinearSolution) {
  // fode.terms: y'' + D^{3/2} y + y = 1 + t, y = 1 + t, reproduced to round-off by the
  // implicit method; the file holds y alone (one component, /order the highest order 2).
  run_and_compare(
      "fode_bagley_torvik-ci", 200, 10, [](std::size_t, double t) { return 1.0 + t; }, 1e-12);
}
