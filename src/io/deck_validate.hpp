#pragma once
// Private to the deck reader: text checks, YAML parsing and validation against the schema.

#include <string>

#include "io/deck_value.hpp"

namespace fracmfg::io::detail {

/// Parses and validates a deck: every problem is a DeckError naming `file` as given, the
/// 1-based line and column and the dotted key. Returns the value tree (schema order,
/// defaults filled in, cross-field checks done).
Value validate_deck(const std::string& text, const std::string& file);

/// The variables of item `text` of an expression list of `length` items: for a list with an
/// indexed family (y1..yd), the fixed variables and the members of the family the text names
/// (in index order) and, in a one-item list, the family's bare name (y, the same as y1) when
/// the text names it; else all of the field's variables. Cost: linear in the text's length.
std::vector<std::string> item_variables(const Field& f, const std::string& text,
                                        std::size_t length);

/// "a, b, c"
std::string join_words(const std::vector<std::string>& words, const std::string& sep = ", ");

}  // namespace fracmfg::io::detail
