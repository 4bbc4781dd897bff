#pragma once
// Private to the deck reader: the validated deck as a tree of values that mirrors the
// schema, with every default filled in and the position of each value in the file.

#include <string>
#include <string_view>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/io/schema.hpp"

namespace fracmfg::io::detail {

/// 1-based line and column in the deck; 0 when unknown.
struct Position {
  int line = 0;
  int column = 0;
};

struct Value {
  const Field* field = nullptr;
  std::string path;    ///< full dotted key, e.g. "mfg.grid.points"
  bool given = false;  ///< written in the deck (false: default)
  Position key_pos;    ///< the key; for defaults, the enclosing section's key
  Position pos;        ///< the value; for defaults, as key_pos

  long long integer = 0;
  double real = 0.0;
  bool boolean = false;
  std::string text;  ///< string, enumeration word or expression

  std::vector<long long> integers;
  std::vector<double> reals;
  std::vector<std::string> texts;  ///< expression list
  std::vector<Position> item_pos;  ///< one per list item

  std::vector<Value> children;  ///< sections: in schema order

  const Value* child(std::string_view name) const;
  Value* child(std::string_view name);
  /// Descendant at a dotted path relative to this value, or nullptr.
  const Value* find(std::string_view dotted) const;
  Value* find(std::string_view dotted);
  /// As find(), but a missing value is a schema bug (std::logic_error).
  const Value& at(std::string_view dotted) const;
  /// Position of list item i (the list's position when unknown).
  Position item(std::size_t i) const { return i < item_pos.size() ? item_pos[i] : pos; }
};

/// Throws the DeckError "file:line:column: path: message".
[[noreturn]] inline void fail(const std::string& file, Position pos, const std::string& path,
                              const std::string& message) {
  throw DeckError(file, pos.line, pos.column, path, message);
}

/// "path[i]"
inline std::string item_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

}  // namespace fracmfg::io::detail
