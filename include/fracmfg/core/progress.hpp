#pragma once
// core::Progress: rate-limited progress lines for long loops (an mfg fixed-point iteration,
// an fpde time loop), with the elapsed time and an estimate of the time left.
//
// Rate limit: step() decides the level of each step's line. The first step after start(),
// the last step and any step at least `interval` seconds after the previous info line are
// at info level; the others at debug level (so with FRACMFG_LOG_LEVEL=debug every step has
// a line). Interval 0: every line at info level.
//
// Interval: progress_interval_from_environment() reads FRACMFG_PROGRESS_SECONDS (seconds,
// a number >= 0; default 10). A value that is not such a number is ignored with a warning
// (the default is used): the variable only affects diagnostics, and a typo should not end a
// batch job that may have queued for hours.
//
// Estimates (ETA):
//   - time loops: eta_steps(steps left) = steps left x mean step time so far;
//   - fixed-point iterations: iterations_to_tolerance() from the observed contraction rate
//     of the changes towards the tolerance, then eta_steps(); nullopt ("unknown") when the
//     changes do not contract.
//
// Durations in lines: format_duration() ("1h02m", "3m05s", "12.3s", "4.57s", "834ms",
// "0.83ms").
//
// Not collective: no communication. Each rank decides by its own clock; only the logger's
// ranks write. The clock is injectable (tests); the default is std::chrono::steady_clock.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fracmfg/core/logger.hpp"

namespace fracmfg::core {

/// Default seconds between info-level progress lines.
inline constexpr double kDefaultProgressSeconds = 10.0;

/// `seconds` as text: "0s"; below 1 s in milliseconds with two, one or no decimals
/// ("0.83ms", "12.3ms", "834ms"); below 10 s with two decimals ("4.57s"); below 1 min with one
/// ("12.3s"); below 1 h as minutes and seconds ("3m05s"); else hours and minutes ("1h02m",
/// "50h00m"). Negative or not finite: "unknown".
std::string format_duration(double seconds);

/// A number of seconds >= 0 (finite, the whole text); nullopt otherwise.
std::optional<double> parse_seconds(std::string_view text);

/// FRACMFG_PROGRESS_SECONDS from the environment; `fallback` when unset or empty, and when
/// not a number >= 0 (then with a warning through `log`).
double progress_interval_from_environment(const Logger& log,
                                          double fallback = kDefaultProgressSeconds);

/// Iterations a linearly contracting fixed-point iteration still needs to bring its change
/// to `tolerance`. `changes` holds one change per iteration, oldest first. With the rate
/// r = (c_k / c_{k-w})^(1/w) over the last w = min(window, k) iterations,
/// left = ceil(log(tolerance / c_k) / log r), clamped to [1, max(max_left, 1)].
/// 0 when the last change is already <= tolerance. nullopt when it cannot tell: fewer than
/// two changes, or the changes do not contract (c_k >= c_{k-w}, c_k = 0, not finite).
std::optional<int> iterations_to_tolerance(const std::vector<double>& changes, double tolerance,
                                           int max_left, int window = 5);

class Progress {
 public:
  /// Monotonic wall time in seconds (any origin).
  using Clock = std::function<double()>;
  /// std::chrono::steady_clock in seconds.
  static double steady_seconds();

  /// `interval_seconds` >= 0 (0: every line at info level). Starts the clock.
  explicit Progress(Logger log, double interval_seconds = kDefaultProgressSeconds,
                    Clock clock = steady_seconds);

  /// (Re)starts: elapsed time from `seconds_ago` seconds before now, no steps recorded, and
  /// the next step() is a first one (info level).
  void start(double seconds_ago = 0.0);

  /// Records one finished step and returns the level of its line (see the header comment).
  /// `seconds`: the step's duration (e.g. a time reduced over ranks); negative: the time
  /// since the previous step (or the start), by the clock. Call write() only when
  /// enabled(level) to skip formatting lines nobody reads.
  LogLevel step(bool last, double seconds = -1.0);

  bool enabled(LogLevel level) const { return log_.enabled(level); }
  void write(LogLevel level, std::string_view line) const { log_.write(level, line); }

  /// Steps recorded since start().
  std::int64_t steps() const { return steps_; }
  /// Seconds since start().
  double elapsed() const;
  /// Mean duration of the steps recorded since start(); NaN before the first.
  double mean_step_seconds() const;
  /// Seconds for `steps_left` more steps at the mean step time; NaN before the first step.
  double eta_steps(std::int64_t steps_left) const;
  double interval() const { return interval_; }

 private:
  Logger log_;
  double interval_;
  Clock clock_;
  double start_ = 0.0;
  double previous_ = 0.0;   // clock at the previous step (or the start)
  double last_line_ = 0.0;  // clock at the last info-level line
  std::int64_t steps_ = 0;
  double step_seconds_ = 0.0;  // sum of the recorded steps' durations
};

}  // namespace fracmfg::core
