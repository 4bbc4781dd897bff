#include "fracmfg/core/logger.hpp"

#include <cstdlib>
#include <string>

namespace fracmfg::core {

std::optional<LogLevel> parse_log_level(std::string_view text) {
  if (text == "error") return LogLevel::error;
  if (text == "warn" || text == "warning") return LogLevel::warn;
  if (text == "info") return LogLevel::info;
  if (text == "debug") return LogLevel::debug;
  return std::nullopt;
}

const char* to_string(LogLevel level) {
  switch (level) {
    case LogLevel::error: return "error";
    case LogLevel::warn: return "warn";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
  }
  return "?";
}

Logger::Logger(int rank, LogLevel level, bool all_ranks, Clock::time_point start, std::FILE* stream)
    : rank_(rank), level_(level), all_ranks_(all_ranks), start_(start), stream_(stream) {}

double Logger::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

void Logger::write(LogLevel level, std::string_view message) const {
  if (!enabled(level) || stream_ == nullptr) return;
  // One fprintf per line so lines from different ranks do not interleave mid-line.
  if (all_ranks_) {
    std::fprintf(stream_, "[fracmfg %9.3fs %-5s r%d] %.*s\n", elapsed(), to_string(level), rank_,
                 static_cast<int>(message.size()), message.data());
  } else {
    std::fprintf(stream_, "[fracmfg %9.3fs %-5s] %.*s\n", elapsed(), to_string(level),
                 static_cast<int>(message.size()), message.data());
  }
  std::fflush(stream_);
}

void Logger::apply_environment() {
  if (const char* lvl = std::getenv("FRACMFG_LOG_LEVEL"); lvl != nullptr && *lvl != '\0') {
    if (auto parsed = parse_log_level(lvl)) {
      level_ = *parsed;
    } else {
      warn("ignoring FRACMFG_LOG_LEVEL=", lvl, " (expected error, warn, info or debug)");
    }
  }
  if (const char* ranks = std::getenv("FRACMFG_LOG_RANKS"); ranks != nullptr && *ranks != '\0') {
    const std::string v(ranks);
    if (v == "all") {
      all_ranks_ = true;
    } else if (v == "0" || v == "root") {
      all_ranks_ = false;
    } else {
      warn("ignoring FRACMFG_LOG_RANKS=", v, " (expected all or 0)");
    }
  }
}

}  // namespace fracmfg::core
