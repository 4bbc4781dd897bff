#pragma once
// Levelled logging with elapsed wall time. A Logger is a small value: copy it into the
// objects that log (no global logger). By default only rank 0 writes; `all_ranks` makes
// every rank write, each line tagged with its rank.
//
// Line format:  [fracmfg    1.234s info ] message            (rank 0 only)
//               [fracmfg    1.234s info  r2] message         (all ranks)

#include <chrono>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace fracmfg::core {

enum class LogLevel : int { error = 0, warn = 1, info = 2, debug = 3 };

/// "error" | "warn" | "info" | "debug" -> level; nullopt for anything else.
std::optional<LogLevel> parse_log_level(std::string_view text);
const char* to_string(LogLevel level);

class Logger {
 public:
  using Clock = std::chrono::steady_clock;

  Logger() = default;
  Logger(int rank, LogLevel level, bool all_ranks, Clock::time_point start = Clock::now(),
         std::FILE* stream = stderr);

  LogLevel level() const { return level_; }
  void set_level(LogLevel level) { level_ = level; }
  bool all_ranks() const { return all_ranks_; }
  void set_all_ranks(bool all) { all_ranks_ = all; }
  int rank() const { return rank_; }
  void set_stream(std::FILE* stream) { stream_ = stream; }

  /// Seconds since the logger's start time (the environment's start-up).
  double elapsed() const;
  /// True when a message at `level` would be written by this rank.
  bool enabled(LogLevel level) const {
    return static_cast<int>(level) <= static_cast<int>(level_) && (all_ranks_ || rank_ == 0);
  }
  /// Writes one line if enabled (not collective).
  void write(LogLevel level, std::string_view message) const;

  template <class... Args>
  void error(const Args&... args) const {
    log(LogLevel::error, args...);
  }
  template <class... Args>
  void warn(const Args&... args) const {
    log(LogLevel::warn, args...);
  }
  template <class... Args>
  void info(const Args&... args) const {
    log(LogLevel::info, args...);
  }
  template <class... Args>
  void debug(const Args&... args) const {
    log(LogLevel::debug, args...);
  }

  /// Applies FRACMFG_LOG_LEVEL (error|warn|info|debug) and FRACMFG_LOG_RANKS (all|0) from
  /// the environment; they override the deck. Unknown values are ignored with a warning.
  void apply_environment();

 private:
  template <class... Args>
  void log(LogLevel level, const Args&... args) const {
    if (!enabled(level)) return;
    std::ostringstream os;
    (os << ... << args);
    write(level, os.str());
  }

  int rank_ = 0;
  LogLevel level_ = LogLevel::info;
  bool all_ranks_ = false;
  Clock::time_point start_ = Clock::now();
  std::FILE* stream_ = stderr;
};

}  // namespace fracmfg::core
