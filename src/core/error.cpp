#include "fracmfg/core/error.hpp"

#include <sstream>

namespace fracmfg {

namespace {
std::string deck_what(const std::string& file, int line, int column, const std::string& key,
                      const std::string& message) {
  std::ostringstream os;
  os << file;
  if (line > 0) {
    os << ':' << line;
    if (column > 0) os << ':' << column;
  }
  os << ": ";
  if (!key.empty()) os << key << ": ";
  os << message;
  return os.str();
}

std::string not_compiled_what(const std::string& feature,
                              const std::vector<std::string>& available) {
  std::ostringstream os;
  os << feature << " is not available in this build of fracmfg";
  if (!available.empty()) {
    os << " (available:";
    for (const auto& a : available) os << ' ' << a;
    os << ')';
  }
  return os.str();
}
}  // namespace

DeckError::DeckError(std::string file, int line, int column, std::string key, std::string message)
    : Error(deck_what(file, line, column, key, message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      key_(std::move(key)),
      message_(std::move(message)) {}

NotCompiled::NotCompiled(const std::string& feature, const std::vector<std::string>& available)
    : Error(not_compiled_what(feature, available)) {}

}  // namespace fracmfg
