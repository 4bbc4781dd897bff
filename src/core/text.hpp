#pragma once
// Word helpers for "did you mean" messages (deck keys, enumerations, backends, hardware
// descriptions).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fracmfg::detail {

/// Optimal string alignment distance: insertions, deletions, substitutions and adjacent
/// transpositions ("cdua" -> "cuda") cost 1 each.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The "did you mean" helper: the candidate closest to `word` by edit_distance, or "" when
/// none is close enough to be a likely typo. The one rule, for every message that suggests
/// a word (deck keys and enumerations, formula names, backends, hardware keys, kernels):
///  - the nearest candidate wins (the first of equally near ones, in the order given);
///  - it is suggested when d <= max(1, (max(|word|, |best|) + 1) / 3), i.e. a typo changes
///    at most about a third of the word ("pionts" -> "points", "cdua" -> "cuda"),
///  - and d < |word|, so the suggestion keeps part of the word ("z" -> "x" would be noise).
/// A candidate whose length differs from the word's by more than that limit (or by at least
/// the best distance so far) is skipped without computing the distance, so a huge word
/// against short candidates costs time linear in its length, not quadratic.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// "812 B", "1.5 kB", "12.3 MB", "4.0 GB" (decimal units, one decimal).
std::string format_bytes(std::uint64_t bytes);

/// A grid's extents as "400 x 300" ("" for none).
template <class Int>
std::string format_extents(const std::vector<Int>& extents) {
  std::string out;
  for (const Int n : extents) out += (out.empty() ? "" : " x ") + std::to_string(n);
  return out;
}

}  // namespace fracmfg::detail
