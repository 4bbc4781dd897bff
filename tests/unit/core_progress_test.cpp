// core::Progress with an injected clock: the first and the last line at info level and at
// most one info line per interval in between (every line at debug level), elapsed time and
// mean step time, the two ETA estimators (steps left x mean step time; contraction rate
// towards a tolerance, unknown when not contracting), the duration format and
// FRACMFG_PROGRESS_SECONDS.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/test_support.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/progress.hpp"

namespace core = fracmfg::core;
using core::LogLevel;
using core::Progress;
using fracmfg::test::CapturedLog;
using fracmfg::test::FakeClock;
using fracmfg::test::ScopedEnv;

namespace {

core::Logger silent() {
  core::Logger log(0, LogLevel::error, false);
  log.set_stream(nullptr);
  return log;
}

// Runs `steps` steps of `seconds` each (the last one marked last), writing each line at the
// level step() gives; returns the levels.
std::vector<LogLevel> run(Progress& p, FakeClock& clock, int steps, double seconds) {
  std::vector<LogLevel> levels;
  for (int k = 1; k <= steps; ++k) {
    clock.advance(seconds);
    const LogLevel level = p.step(k == steps);
    if (p.enabled(level)) p.write(level, "step " + std::to_string(k));
    levels.push_back(level);
  }
  return levels;
}

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(core_progress, FirstAndLastLinesAreInfoAndAtMostOnePerIntervalBetween) {
  FakeClock clock;
  Progress p(silent(), 10.0, clock.clock());
  const std::vector<LogLevel> levels = run(p, clock, 25, 1.0);
  // Info at step 1 (first), 11 and 21 (10 s after the previous info line) and 25 (last).
  for (int k = 1; k <= 25; ++k) {
    const bool info = k == 1 || k == 11 || k == 21 || k == 25;
    EXPECT_EQ(levels[static_cast<std::size_t>(k - 1)], info ? LogLevel::info : LogLevel::debug)
        << "step " << k;
  }
}

TEST(core_progress, InfoLoggerWritesTheRateLimitedLinesDebugLoggerWritesEvery) {
  FakeClock clock;
  const CapturedLog info(LogLevel::info);
  Progress pi(info.log(), 10.0, clock.clock());
  run(pi, clock, 25, 1.0);
  EXPECT_EQ(count_of(info.text(), "] step "), 4) << info.text();
  EXPECT_NE(info.text().find("] step 11\n"), std::string::npos) << info.text();

  const CapturedLog debug(LogLevel::debug);
  Progress pd(debug.log(), 10.0, clock.clock());
  run(pd, clock, 25, 1.0);
  EXPECT_EQ(count_of(debug.text(), "] step "), 25);
}

TEST(core_progress, SlowStepsAreEachAnInfoLine) {
  FakeClock clock;
  Progress p(silent(), 10.0, clock.clock());
  for (const LogLevel level : run(p, clock, 5, 12.0)) EXPECT_EQ(level, LogLevel::info);
}

TEST(core_progress, IntervalZeroMakesEveryLineInfo) {
  FakeClock clock;
  Progress p(silent(), 0.0, clock.clock());
  for (const LogLevel level : run(p, clock, 7, 1e-6)) EXPECT_EQ(level, LogLevel::info);
}

TEST(core_progress, StartMakesTheNextStepAFirstOne) {
  FakeClock clock;
  Progress p(silent(), 10.0, clock.clock());
  run(p, clock, 3, 1.0);
  clock.advance(1.0);
  EXPECT_EQ(p.step(false), LogLevel::debug);
  p.start();
  EXPECT_EQ(p.steps(), 0);
  clock.advance(1.0);
  EXPECT_EQ(p.step(false), LogLevel::info);
  EXPECT_EQ(p.steps(), 1);
}

TEST(core_progress, ElapsedAndMeanStepTimeFollowTheClock) {
  FakeClock clock;
  Progress p(silent(), 10.0, clock.clock());
  EXPECT_TRUE(std::isnan(p.mean_step_seconds()));
  EXPECT_TRUE(std::isnan(p.eta_steps(3)));
  clock.advance(2.0);
  p.step(false);
  clock.advance(4.0);
  p.step(false);
  EXPECT_DOUBLE_EQ(p.elapsed(), 6.0);
  EXPECT_DOUBLE_EQ(p.mean_step_seconds(), 3.0);
  clock.advance(1.5);
  EXPECT_DOUBLE_EQ(p.elapsed(), 7.5);  // time passes between steps too

  // Given durations (e.g. reduced over ranks) replace the clock's; start(s) counts the
  // elapsed time from s seconds ago.
  p.start(0.5);
  EXPECT_DOUBLE_EQ(p.elapsed(), 0.5);
  p.step(false, 0.5);
  clock.advance(9.0);
  p.step(false, 1.5);
  EXPECT_DOUBLE_EQ(p.mean_step_seconds(), 1.0);
  EXPECT_DOUBLE_EQ(p.elapsed(), 9.5);
}

TEST(core_progress, TimeLoopEtaIsStepsLeftTimesMeanStepTime) {
  FakeClock clock;
  Progress p(silent(), 10.0, clock.clock());
  run(p, clock, 4, 0.25);
  clock.advance(1.0);
  p.step(false);  // mean (4 x 0.25 + 1) / 5 = 0.4 s
  EXPECT_DOUBLE_EQ(p.mean_step_seconds(), 0.4);
  EXPECT_DOUBLE_EQ(p.eta_steps(10), 4.0);
  EXPECT_DOUBLE_EQ(p.eta_steps(0), 0.0);
  EXPECT_DOUBLE_EQ(p.eta_steps(-3), 0.0);
  EXPECT_EQ(core::format_duration(p.eta_steps(10)), "4.00s");
}

TEST(core_progress, FixedPointEtaFollowsTheContractionRate) {
  // c_k = 0.5^k: from c = 0.125 to 1e-3 takes ceil(log(0.008) / log(0.5)) = 7 iterations.
  const std::vector<double> halving{1.0, 0.5, 0.25, 0.125};
  EXPECT_EQ(core::iterations_to_tolerance(halving, 1e-3, 100), 7);
  // Capped by the iterations left (and at least 1).
  EXPECT_EQ(core::iterations_to_tolerance(halving, 1e-3, 4), 4);
  EXPECT_EQ(core::iterations_to_tolerance(halving, 1e-3, 0), 1);
  EXPECT_EQ(core::iterations_to_tolerance(halving, 0.124, 100), 1);
  // Already at the tolerance.
  EXPECT_EQ(core::iterations_to_tolerance(halving, 0.125, 100), 0);
  // The rate is the mean over the last `window` iterations: a slow start does not count.
  const std::vector<double> slow_then_tenfold{1.0, 0.99, 0.98, 0.97, 0.097, 0.0097, 0.00097};
  EXPECT_EQ(core::iterations_to_tolerance(slow_then_tenfold, 1e-7, 100, 3), 4);
  // ETA in seconds: iterations x mean iteration time.
  FakeClock clock;
  Progress p(silent(), 10.0, clock.clock());
  run(p, clock, 4, 2.0);
  const auto left = core::iterations_to_tolerance(halving, 1e-3, 100);
  ASSERT_TRUE(left.has_value());
  EXPECT_DOUBLE_EQ(p.eta_steps(*left), 14.0);
}

TEST(core_progress, FixedPointEtaIsUnknownWhenNotContracting) {
  const double tol = 1e-8;
  EXPECT_FALSE(core::iterations_to_tolerance({}, tol, 100).has_value());
  EXPECT_FALSE(core::iterations_to_tolerance({0.5}, tol, 100).has_value());            // one change
  EXPECT_FALSE(core::iterations_to_tolerance({0.5, 0.5}, tol, 100).has_value());       // stalled
  EXPECT_FALSE(core::iterations_to_tolerance({0.1, 0.2, 0.4}, tol, 100).has_value());  // growing
  // Oscillating: over the window the change grew.
  EXPECT_FALSE(core::iterations_to_tolerance({0.3, 0.1, 0.4}, tol, 100, 2).has_value());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(core::iterations_to_tolerance({1.0, nan}, tol, 100).has_value());
}

TEST(core_progress, DurationsAreShortAndRoundedWithinTheirUnit) {
  EXPECT_EQ(core::format_duration(0.0), "0s");
  EXPECT_EQ(core::format_duration(0.000834), "0.83ms");
  EXPECT_EQ(core::format_duration(0.009996), "10.0ms");
  EXPECT_EQ(core::format_duration(0.0123), "12.3ms");
  EXPECT_EQ(core::format_duration(0.834), "834ms");
  EXPECT_EQ(core::format_duration(0.9996), "1.00s");
  EXPECT_EQ(core::format_duration(4.567), "4.57s");
  EXPECT_EQ(core::format_duration(9.996), "10.0s");
  EXPECT_EQ(core::format_duration(12.34), "12.3s");
  EXPECT_EQ(core::format_duration(59.96), "1m00s");
  EXPECT_EQ(core::format_duration(185.0), "3m05s");
  EXPECT_EQ(core::format_duration(3599.4), "59m59s");
  EXPECT_EQ(core::format_duration(3599.6), "1h00m");
  EXPECT_EQ(core::format_duration(3720.0), "1h02m");
  EXPECT_EQ(core::format_duration(50 * 3600.0), "50h00m");
  EXPECT_EQ(core::format_duration(-1.0), "unknown");
  EXPECT_EQ(core::format_duration(std::numeric_limits<double>::quiet_NaN()), "unknown");
  EXPECT_EQ(core::format_duration(std::numeric_limits<double>::infinity()), "unknown");
}

TEST(core_progress, SecondsParseOnlyWholeNonNegativeNumbers) {
  EXPECT_EQ(core::parse_seconds("2.5"), 2.5);
  EXPECT_EQ(core::parse_seconds("0"), 0.0);
  EXPECT_EQ(core::parse_seconds("1e2"), 100.0);
  EXPECT_FALSE(core::parse_seconds("").has_value());
  EXPECT_FALSE(core::parse_seconds("-1").has_value());
  EXPECT_FALSE(core::parse_seconds("5s").has_value());
  EXPECT_FALSE(core::parse_seconds("ten").has_value());
  EXPECT_FALSE(core::parse_seconds("inf").has_value());
  EXPECT_FALSE(core::parse_seconds("nan").has_value());
}

TEST(core_progress, EnvironmentSetsTheIntervalAndABadValueWarnsAndUsesTheDefault) {
  {
    const ScopedEnv unset("FRACMFG_PROGRESS_SECONDS", nullptr);
    const CapturedLog log;
    EXPECT_EQ(core::progress_interval_from_environment(log.log()), 10.0);
    EXPECT_EQ(core::progress_interval_from_environment(log.log(), 3.0), 3.0);
    EXPECT_EQ(log.text(), "");
  }
  {
    const ScopedEnv empty("FRACMFG_PROGRESS_SECONDS", "");
    const CapturedLog log;
    EXPECT_EQ(core::progress_interval_from_environment(log.log()), 10.0);
    EXPECT_EQ(log.text(), "");
  }
  {
    const ScopedEnv set("FRACMFG_PROGRESS_SECONDS", "2.5");
    const CapturedLog log;
    EXPECT_EQ(core::progress_interval_from_environment(log.log()), 2.5);
    EXPECT_EQ(log.text(), "");
  }
  {
    const ScopedEnv zero("FRACMFG_PROGRESS_SECONDS", "0");
    const CapturedLog log;
    EXPECT_EQ(core::progress_interval_from_environment(log.log()), 0.0);
  }
  for (const char* bad : {"abc", "-3", "10s"}) {
    const ScopedEnv set("FRACMFG_PROGRESS_SECONDS", bad);
    const CapturedLog log;
    EXPECT_EQ(core::progress_interval_from_environment(log.log()), 10.0) << bad;
    const std::string text = log.text();
    EXPECT_NE(text.find("warn"), std::string::npos) << text;
    EXPECT_NE(text.find(std::string("FRACMFG_PROGRESS_SECONDS=") + bad), std::string::npos) << text;
  }
}
