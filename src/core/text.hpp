#pragma once
// Word helpers for "did you mean" messages (deck keys, enumerations, backends, hardware
// descriptions).
#include <cstddef>
#include <string_view>

namespace fracmfg::detail {

/// Optimal string alignment distance: insertions, deletions, substitutions and adjacent
/// transpositions ("cdua" -> "cuda") cost 1 each.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace fracmfg::detail
