// frac::FodeSolver timings on one core: the nested FFT history against the direct sum.
//
//   ./perf/bench_fode                       # the tables below (Release build)
//   ./perf/bench_fode --max-log2 20 --direct-max 10000   # shorter
//   ./perf/bench_fode --block 128           # another base block (default 64)
//   ./perf/bench_fode --graded-max-log2 13  # table 4 up to N = 2^13 (default 15)
//
// Problem: Diethelm-Ford-Freed's scalar nonlinear equation (tests/unit/fode_convergence_test)
// with a = 0.5 on [0, 1], right-hand side a C++ callable, method ABM (mu = 1) unless stated.
// Table 1: N = 2^12 .. 2^max steps, history auto (FFT squares, direct ones where cheaper):
//   N, setup seconds (weights, spectra), solve seconds, of which history, and
//   solve / (N log2(N)^2): flat when the cost grows like N log^2 N.
// Table 2: N = 10^4 and 10^5 (up to --direct-max) with the direct O(N^2) history and the
//   nested one in the same run, and the speed-up; the final values must agree.
// Table 3: d = 1000 independent components (pointwise right-hand side), N = 2^14: the
//   history kernels batched over components.
// Table 4: what a graded mesh costs: D^a y = -y, y = E_a(-t^a) (a = 0.5, a t^a singularity
//   at 0), implicit trapezoidal, N = 2^10 .. 2^max: grading r = 2 = 1/a (the history summed
//   directly, O(N^2), with the non-uniform weights computed at every step) against the
//   uniform mesh with the nested FFT history in the same run; seconds and max_n |y(t_n) -
//   y_n| of each; then the uniform mesh alone at N = 2^18 and 2^20 (up to --max-log2).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fracmfg/core/environment.hpp"
#include "fracmfg/frac/fode_solver.hpp"
#include "fracmfg/frac/mittag_leffler.hpp"

namespace ff = fracmfg::frac;

namespace {

struct Timing {
  double setup = 0.0;
  double solve = 0.0;
  double history = 0.0;
  double y_end = 0.0;
  std::int64_t fft_squares = 0;
};

double now() {
  return MPI_Wtime();
}

std::int64_t block_size = 64;

Timing run_scalar(std::int64_t n, ff::FodeHistory history, ff::FodeMethod method) {
  const double a = 0.5;
  const double c1 = 40320.0 / std::tgamma(9 - a);
  const double c2 = 3.0 * std::tgamma(5 + a / 2) / std::tgamma(5 - a / 2);
  const double c3 = 2.25 * std::tgamma(a + 1);
  ff::FodeRhs rhs;
  rhs.function = [=](double t, const double* y, double* f) {
    const double s = 1.5 * std::pow(t, a / 2) - std::pow(t, 4);
    f[0] = c1 * std::pow(t, 8 - a) - c2 * std::pow(t, 4 - a / 2) + c3 + s * s * s -
           std::pow(y[0], 1.5);
  };
  rhs.jacobian = [](double, const double* y, double* j) { j[0] = -1.5 * std::sqrt(y[0]); };
  ff::FodeProblem p;
  p.global_size = 1;
  p.local_size = 1;
  p.order = {a};
  p.horizon = 1.0;
  p.steps = n;
  p.initial = {0.0};
  ff::FodeOptions o;
  o.history = history;
  o.method = method;
  o.block_size = block_size;
  Timing t;
  const double t0 = now();
  ff::FodeSolver solver(MPI_COMM_SELF, p, rhs, o);
  t.setup = now() - t0;
  const ff::FodeStats s = solver.solve();
  t.solve = s.seconds;
  t.history = s.history_seconds;
  t.y_end = solver.solution()[0];
  t.fft_squares = s.fft_squares;
  return t;
}

Timing run_batch(PetscInt d, std::int64_t n) {
  ff::FodeRhs rhs;
  rhs.pointwise = [](double t, PetscInt first, std::size_t count, const double* y, double* g) {
    for (std::size_t k = 0; k < count; ++k) {
      g[k] = -(1.0 + 1e-3 * static_cast<double>(first + static_cast<PetscInt>(k))) * y[k] +
             std::cos(t);
    }
  };
  ff::FodeProblem p;
  p.global_size = d;
  p.local_size = d;
  p.order = {0.7};
  p.steps = n;
  p.initial = {1.0};
  ff::FodeOptions o;
  o.block_size = block_size;
  Timing t;
  const double t0 = now();
  ff::FodeSolver solver(MPI_COMM_SELF, p, rhs, o);
  t.setup = now() - t0;
  const ff::FodeStats s = solver.solve();
  t.solve = s.seconds;
  t.history = s.history_seconds;
  t.y_end = solver.solution()[0];
  return t;
}

struct Relaxation {
  double seconds = 0.0;  ///< setup + solve
  double history = 0.0;
  double max_error = 0.0;
};

/// D^a y = -y, y(0) = 1 on [0, 1], a = 0.5: the run's seconds and its max_n error.
Relaxation run_relaxation(std::int64_t n, double grading) {
  const double a = 0.5;
  ff::FodeRhs rhs;
  rhs.function = [](double, const double* y, double* f) { f[0] = -y[0]; };
  rhs.jacobian = [](double, const double*, double* j) { j[0] = -1.0; };
  ff::FodeProblem p;
  p.global_size = 1;
  p.local_size = 1;
  p.order = {a};
  p.horizon = 1.0;
  p.steps = n;
  p.grading = grading;
  p.initial = {1.0};
  ff::FodeOptions o;
  o.method = ff::FodeMethod::trapezoidal;
  o.history = grading > 1.0 ? ff::FodeHistory::direct : ff::FodeHistory::automatic;
  o.block_size = block_size;
  Relaxation r;
  const double t0 = now();
  ff::FodeSolver solver(MPI_COMM_SELF, p, rhs, o);
  std::vector<double> times;  // kept during the run, compared after it (outside the timing)
  std::vector<double> values;
  times.reserve(static_cast<std::size_t>(n) + 1);
  values.reserve(static_cast<std::size_t>(n) + 1);
  const ff::FodeStats s = solver.solve([&](const ff::FodeStepView& v) {
    times.push_back(v.time);
    values.push_back(v.y[0]);
  });
  r.seconds = now() - t0;
  r.history = s.history_seconds;
  for (std::size_t k = 0; k < times.size(); ++k) {
    const double e = std::fabs(values[k] - ff::mittag_leffler(-std::pow(times[k], a), a));
    if (e > r.max_error) r.max_error = e;
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int max_log2 = 22;
  int graded_max_log2 = 15;
  std::int64_t direct_max = 100000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--max-log2") == 0) max_log2 = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--direct-max") == 0) direct_max = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--block") == 0) block_size = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--graded-max-log2") == 0) graded_max_log2 = std::atoi(argv[i + 1]);
  }
  int no_args = 1;
  char* no_argv_storage[] = {argv[0], nullptr};
  char** no_argv = no_argv_storage;
  fracmfg::core::EnvironmentOptions opts;
  opts.log_level = fracmfg::core::LogLevel::warn;
  fracmfg::core::Environment env(&no_args, &no_argv, opts);

  std::printf(
      "Table 1: scalar DFF equation (a = 0.5), ABM, history auto, base block %lld, "
      "one core\n",
      static_cast<long long>(block_size));
  std::printf("%10s %10s %10s %10s %14s %12s\n", "N", "setup [s]", "solve [s]", "history",
              "solve/(N lg^2N)", "us/step");
  for (int k = 12; k <= max_log2; ++k) {
    const std::int64_t n = std::int64_t{1} << k;
    const Timing t = run_scalar(n, ff::FodeHistory::automatic, ff::FodeMethod::abm);
    const double lg = std::log2(static_cast<double>(n));
    std::printf("%10lld %10.3f %10.3f %10.3f %14.3e %12.3f\n", static_cast<long long>(n), t.setup,
                t.solve, t.history, t.solve / (static_cast<double>(n) * lg * lg),
                1e6 * t.solve / static_cast<double>(n));
    std::fflush(stdout);
  }
  {
    const std::int64_t n = std::int64_t{1} << 20;
    const Timing t = run_scalar(n, ff::FodeHistory::automatic, ff::FodeMethod::trapezoidal);
    std::printf(
        "trapezoidal (Newton, Jacobian given), N = 2^20: setup %.3f s, solve %.3f s "
        "(history %.3f s)\n",
        t.setup, t.solve, t.history);
  }

  std::printf("\nTable 2: direct O(N^2) against nested FFT history, same run, ABM\n");
  std::printf("%10s %12s %12s %10s %12s\n", "N", "direct [s]", "nested [s]", "speed-up",
              "|y_d - y_f|");
  for (const std::int64_t n : {std::int64_t{10000}, std::int64_t{100000}}) {
    if (n > direct_max) {
      std::printf("%10lld  (skipped: --direct-max %lld)\n", static_cast<long long>(n),
                  static_cast<long long>(direct_max));
      continue;
    }
    const Timing d = run_scalar(n, ff::FodeHistory::direct, ff::FodeMethod::abm);
    const Timing f = run_scalar(n, ff::FodeHistory::automatic, ff::FodeMethod::abm);
    const double td = d.setup + d.solve;
    const double tf = f.setup + f.solve;
    std::printf("%10lld %12.3f %12.3f %10.1f %12.2e\n", static_cast<long long>(n), td, tf, td / tf,
                std::fabs(d.y_end - f.y_end));
    std::fflush(stdout);
  }

  std::printf("\nTable 3: d independent components (pointwise f), ABM, N = 2^14\n");
  std::printf("%10s %10s %10s %10s %16s\n", "d", "setup [s]", "solve [s]", "history",
              "ns/(d N lg^2 N)");
  for (const PetscInt d : {PetscInt{1}, PetscInt{100}, PetscInt{1000}}) {
    const std::int64_t n = std::int64_t{1} << 14;
    const Timing t = run_batch(d, n);
    const double lg = std::log2(static_cast<double>(n));
    std::printf("%10d %10.3f %10.3f %10.3f %16.3f\n", static_cast<int>(d), t.setup, t.solve,
                t.history, 1e9 * t.solve / (static_cast<double>(d) * n * lg * lg));
    std::fflush(stdout);
  }

  std::printf(
      "\nTable 4: D^0.5 y = -y, trapezoidal: graded r = 2 (direct history) against uniform "
      "(nested FFT history), same run\n");
  std::printf("%10s %12s %14s %12s %14s %14s\n", "N", "graded [s]", "graded error", "uniform [s]",
              "uniform error", "graded/N^2 [ns]");
  for (int k = 10; k <= graded_max_log2; ++k) {
    const std::int64_t n = std::int64_t{1} << k;
    const Relaxation g = run_relaxation(n, 2.0);
    const Relaxation u = run_relaxation(n, 1.0);
    std::printf("%10lld %12.3f %14.3e %12.3f %14.3e %14.3f\n", static_cast<long long>(n), g.seconds,
                g.max_error, u.seconds, u.max_error,
                1e9 * g.seconds / (static_cast<double>(n) * static_cast<double>(n)));
    std::fflush(stdout);
  }
  for (const int k : {18, 20}) {
    if (k > max_log2) continue;
    const Relaxation u = run_relaxation(std::int64_t{1} << k, 1.0);
    std::printf("uniform alone, N = 2^%d: %.3f s, max error %.3e\n", k, u.seconds, u.max_error);
  }
  return 0;
}
