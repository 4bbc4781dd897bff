#include "core/text.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace fracmfg::detail {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

namespace {

// The largest distance at which `c` is a likely typo of `word` (closest_match's rule).
std::size_t typo_limit(std::string_view word, std::string_view c) {
  return std::max<std::size_t>(1, (std::max(word.size(), c.size()) + 1) / 3);
}

}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const std::string& c : candidates) {
    // The distance is at least the difference in length: a candidate too far off to be
    // accepted is skipped without the quadratic comparison (a 10 MB word).
    const std::size_t gap =
        word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
    if (gap >= best_d || gap > typo_limit(word, c)) continue;
    const std::size_t dist = edit_distance(word, c);
    if (dist < best_d) {
      best_d = dist;
      best = &c;
    }
  }
  if (best == nullptr || best_d > typo_limit(word, *best) || best_d >= word.size()) return {};
  return *best;
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1000) return std::to_string(bytes) + " B";
  static const char* const units[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
  double value = static_cast<double>(bytes) / 1000.0;
  std::size_t u = 0;
  while (value >= 999.95 && u + 1 < sizeof(units) / sizeof(units[0])) {
    value /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", value, units[u]);
  return buf;
}

}  // namespace fracmfg::detail
