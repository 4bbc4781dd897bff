#include "fracmfg/core/progress.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

namespace fracmfg::core {

namespace {

// True when v, rounded to `decimals` decimals, is below `limit` (the choice of unit must be
// made on the rounded value, else 59.96 s would print as "60.0s").
bool below_when_rounded(double v, int decimals, double limit) {
  const double p = std::pow(10.0, decimals);
  return std::round(v * p) / p < limit;
}

std::string printf_string(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0.0) return "unknown";
  if (seconds == 0.0) return "0s";
  const double ms = seconds * 1e3;
  if (below_when_rounded(ms, 2, 10.0)) return printf_string("%.2fms", ms);
  if (below_when_rounded(ms, 1, 100.0)) return printf_string("%.1fms", ms);
  if (below_when_rounded(ms, 0, 1000.0)) return printf_string("%.0fms", ms);
  if (below_when_rounded(seconds, 2, 10.0)) return printf_string("%.2fs", seconds);
  if (below_when_rounded(seconds, 1, 60.0)) return printf_string("%.1fs", seconds);
  char buf[64];
  if (seconds < 3600.0 - 0.5) {
    const long long total = std::llround(seconds);
    std::snprintf(buf, sizeof buf, "%lldm%02llds", total / 60, total % 60);
  } else {
    const long long minutes = std::llround(seconds / 60.0);
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", minutes / 60, minutes % 60);
  }
  return buf;
}

std::optional<double> parse_seconds(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !std::isfinite(v) || v < 0.0) return std::nullopt;
  return v;
}

double progress_interval_from_environment(const Logger& log, double fallback) {
  const char* text = std::getenv("FRACMFG_PROGRESS_SECONDS");
  if (text == nullptr || *text == '\0') return fallback;
  if (auto v = parse_seconds(text)) return *v;
  log.warn("ignoring FRACMFG_PROGRESS_SECONDS=", text,
           " (expected a number of seconds >= 0); using ", fallback);
  return fallback;
}

std::optional<int> iterations_to_tolerance(const std::vector<double>& changes, double tolerance,
                                           int max_left, int window) {
  const int k = static_cast<int>(changes.size());
  if (k == 0) return std::nullopt;
  const double now = changes.back();
  if (now <= tolerance) return 0;
  const int w = std::min(window, k - 1);
  if (w < 1 || !(now > 0.0) || !std::isfinite(now)) return std::nullopt;
  const double before = changes[static_cast<std::size_t>(k - 1 - w)];
  if (!(before > now)) return std::nullopt;
  // c_k = c_{k-w} r^w: the mean rate over the window smooths out a single lucky step.
  const double rate = std::pow(now / before, 1.0 / w);
  if (!(rate > 0.0 && rate < 1.0)) return std::nullopt;
  const double left = std::ceil(std::log(tolerance / now) / std::log(rate));
  if (!std::isfinite(left)) return std::nullopt;
  return static_cast<int>(std::clamp(left, 1.0, static_cast<double>(std::max(max_left, 1))));
}

double Progress::steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Progress::Progress(Logger log, double interval_seconds, Clock clock)
    : log_(std::move(log)), interval_(std::max(0.0, interval_seconds)), clock_(std::move(clock)) {
  if (!clock_) clock_ = steady_seconds;
  start();
}

void Progress::start(double seconds_ago) {
  const double now = clock_();
  start_ = now - std::max(0.0, seconds_ago);
  previous_ = start_;
  last_line_ = start_;
  steps_ = 0;
  step_seconds_ = 0.0;
}

LogLevel Progress::step(bool last, double seconds) {
  const double now = clock_();
  step_seconds_ += seconds >= 0.0 ? seconds : now - previous_;
  previous_ = now;
  ++steps_;
  const bool due = steps_ == 1 || last || now - last_line_ >= interval_;
  if (!due) return LogLevel::debug;
  last_line_ = now;
  return LogLevel::info;
}

double Progress::elapsed() const {
  return clock_() - start_;
}

double Progress::mean_step_seconds() const {
  if (steps_ == 0) return std::numeric_limits<double>::quiet_NaN();
  return step_seconds_ / static_cast<double>(steps_);
}

double Progress::eta_steps(std::int64_t steps_left) const {
  return static_cast<double>(std::max<std::int64_t>(steps_left, 0)) * mean_step_seconds();
}

}  // namespace fracmfg::core
