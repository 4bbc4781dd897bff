#include "io/deck_validate.hpp"

#include <climits>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/text.hpp"
#include "fracmfg/core/expression.hpp"
#include "io/deck_schema_sections.hpp"

namespace fracmfg::io::detail {

// --- words -----------------------------------------------------------------------------

using ::fracmfg::detail::closest_match;

std::string join_words(const std::vector<std::string>& words, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) out += (i ? sep : "") + words[i];
  return out;
}

// --- Value -----------------------------------------------------------------------------

const Value* Value::child(std::string_view name) const {
  for (const auto& c : children) {
    if (c.field != nullptr && c.field->name() == name) return &c;
  }
  return nullptr;
}

Value* Value::child(std::string_view name) {
  return const_cast<Value*>(static_cast<const Value*>(this)->child(name));
}

const Value* Value::find(std::string_view dotted) const {
  const Value* v = this;
  while (v != nullptr && !dotted.empty()) {
    const auto dot = dotted.find('.');
    v = v->child(dotted.substr(0, dot));
    dotted = dot == std::string_view::npos ? std::string_view() : dotted.substr(dot + 1);
  }
  return v;
}

Value* Value::find(std::string_view dotted) {
  return const_cast<Value*>(static_cast<const Value*>(this)->find(dotted));
}

const Value& Value::at(std::string_view dotted) const {
  const Value* v = find(dotted);
  if (v == nullptr) {
    throw std::logic_error("deck: no value " + std::string(dotted) + " under '" + path + "'");
  }
  return *v;
}

// A list of d formulas of d + 1 variables costs O(total length) to check this way, where
// compiling each with all d + 1 variables costs O(d^2) or more.
std::vector<std::string> item_variables(const Field& f, const std::string& text, std::size_t d) {
  const std::string& family = f.indexed_variable();
  if (family.empty()) return f.variables_for(d);
  std::vector<std::string> out = f.variables();
  const auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  };
  std::vector<std::size_t> indices;
  bool bare = false;  // the family's bare name, the one member of a one-item list
  for (std::size_t i = 0; i < text.size();) {
    if (!name_char(text[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && name_char(text[end])) ++end;
    // A name family + k with 1 <= k <= d, written without leading zeros.
    const std::size_t length = end - i;
    if (d == 1 && length == family.size() && text.compare(i, length, family) == 0) bare = true;
    if (length > family.size() && length - family.size() <= 19 &&
        text.compare(i, family.size(), family) == 0 && text[i + family.size()] != '0') {
      std::size_t k = 0;
      bool number = true;
      for (std::size_t j = i + family.size(); j < end && number; ++j) {
        number = std::isdigit(static_cast<unsigned char>(text[j])) != 0;
        k = k * 10 + static_cast<std::size_t>(text[j] - '0');
      }
      if (number && k >= 1 && k <= d) indices.push_back(k);
    }
    i = end;
  }
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  for (const std::size_t k : indices) out.push_back(family + std::to_string(k));
  if (bare) out.push_back(family);
  return out;
}

namespace {

// --- text checks before YAML sees the text -------------------------------------------

// Columns count characters (UTF-8 code points), like yaml-cpp's marks.
Position position_at(const std::string& text, std::size_t offset) {
  Position p{1, 1};
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++p.line;
      p.column = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++p.column;
    }
  }
  return p;
}

// Length of the valid UTF-8 sequence starting at i, or 0 if it is not valid.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t n = 0;
  unsigned cp = 0;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1Fu;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0Fu;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07u;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3Fu);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  return n;
}

void check_encoding(const std::string& text, const std::string& file) {
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\0') {
      fail(file, position_at(text, i), "",
           "binary data (NUL byte) in the deck; a deck must be UTF-8 text");
    }
    const std::size_t n = utf8_length(text, i);
    if (n == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(text[i]));
      fail(file, position_at(text, i), "",
           std::string("invalid UTF-8 (byte ") + hex + "); a deck must be UTF-8 text");
    }
    i += n;
  }
}

// The one step for line endings: CRLF becomes LF; a carriage return on its own is refused.
// yaml-cpp ends a comment at LF only, so "# note\r  key: value" would hide the key, and a
// file with CR line endings would read as one comment line.
std::string normalise_line_endings(const std::string& text, const std::string& file) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      out += text[i];
    } else if (i + 1 >= text.size() || text[i + 1] != '\n') {
      fail(file, position_at(text, i), "",
           "carriage return without a line feed; save the deck with LF (or CRLF) line endings");
    }
  }
  return out;
}

// YAML indents with spaces only; yaml-cpp's own message for a tab is obscure.
void check_indentation(const std::string& text, const std::string& file) {
  std::size_t line_start = 0;
  while (line_start < text.size()) {
    std::size_t end = text.find('\n', line_start);
    if (end == std::string::npos) end = text.size();
    const std::size_t first = text.find_first_not_of(" \t", line_start);
    const bool blank = first >= end || text[first] == '#';
    if (!blank) {
      // Only the indentation is searched: a search to the end of the text would make the
      // check quadratic in the number of lines.
      const auto indent_end = text.begin() + static_cast<std::ptrdiff_t>(first);
      const auto tab =
          std::find(text.begin() + static_cast<std::ptrdiff_t>(line_start), indent_end, '\t');
      if (tab != indent_end) {
        fail(file, position_at(text, static_cast<std::size_t>(tab - text.begin())), "",
             "tab character in indentation; YAML indents with spaces only");
      }
    }
    line_start = end + 1;
  }
}

Position mark_of(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.line < 0 || m.column < 0) return {};
  return {m.line + 1, m.column + 1};
}

std::string join_path(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

// A NUL in a scalar or key (the escape \0, \x00 or \u0000 in a double-quoted string; a raw
// NUL byte is refused with the deck's text) would cut the text wherever it is handed on as
// a C string (file names, formulas, PETSc options): "" when there is none.
std::string nul_message(const std::string& text) {
  const std::size_t at = text.find('\0');
  if (at == std::string::npos) return "";
  return "holds a NUL character (an escape such as \\0) at character " + std::to_string(at + 1) +
         ", which would cut the text there";
}

// A key as a message shows it: an unknown key may be a long run of junk.
std::string shown_key(const std::string& name) {
  return name.size() > 60 ? name.substr(0, 57) + "..." : name;
}

// A scalar's tag says how it was written: "?" plain, "!" quoted, anything else an explicit
// tag (!!str 100). Numbers and booleans must be written plainly.
const std::string kPlain = "?";

bool is_plain(const std::string& tag) {
  return tag == kPlain;
}

std::string got_text(const std::string& text, const std::string& tag) {
  std::string shown = text.size() > 60 ? text.substr(0, 57) + "..." : text;
  if (tag == "!") return "\"" + shown + "\" (a quoted string)";
  if (!is_plain(tag)) {
    const std::string standard = "tag:yaml.org,2002:";
    std::string short_tag = tag;
    if (short_tag.compare(0, standard.size(), standard) == 0) {
      short_tag = "!!" + short_tag.substr(standard.size());
    }
    if (short_tag.size() > 30) short_tag = short_tag.substr(0, 27) + "...";
    return short_tag + " " + shown + " (a tagged value)";
  }
  return shown;
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return got_text(node.Scalar(), node.Tag());
}

bool in_range(const Field& f, double v) {
  if (f.min() && (f.min()->inclusive ? v < f.min()->value : v <= f.min()->value)) return false;
  if (f.max() && (f.max()->inclusive ? v > f.max()->value : v >= f.max()->value)) return false;
  return true;
}

// --- scalar conversions: each returns "" on success or the message after "key: " -----

// Longest number text read: a double needs 17 significant digits, so anything much longer
// is a mistake, and a bound keeps the conversion cheap on any input.
constexpr std::size_t kMaxNumberChars = 100;

// A decimal number as written: [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?,
// read by one linear scan (no regex: std::regex recurses per character).
struct Decimal {
  bool negative = false;
  std::string digits;      // integer and fraction digits, without the point
  long long exponent = 0;  // value = digits * 10^exponent
};

std::optional<Decimal> parse_decimal(const std::string& text) {
  Decimal d;
  std::size_t i = 0;
  const std::size_t n = text.size();
  const auto is_digit = [&](std::size_t k) { return k < n && text[k] >= '0' && text[k] <= '9'; };
  if (i < n && (text[i] == '+' || text[i] == '-')) d.negative = text[i++] == '-';
  std::size_t integer_digits = 0;
  while (is_digit(i)) {
    d.digits += text[i++];
    ++integer_digits;
  }
  std::size_t fraction_digits = 0;
  if (i < n && text[i] == '.') {
    ++i;
    while (is_digit(i)) {
      d.digits += text[i++];
      ++fraction_digits;
    }
  }
  if (integer_digits + fraction_digits == 0) return std::nullopt;
  long long exponent = 0;
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < n && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
    if (!is_digit(i)) return std::nullopt;
    while (is_digit(i)) {
      exponent = std::min<long long>(exponent * 10 + (text[i++] - '0'), 1000000);
    }
    if (negative) exponent = -exponent;
  }
  if (i != n) return std::nullopt;
  d.exponent = exponent - static_cast<long long>(fraction_digits);
  return d;
}

std::string too_long(const std::string& expected, const std::string& text) {
  return expected + got_text(text, kPlain) + " (a number of " + std::to_string(text.size()) +
         " characters; at most " + std::to_string(kMaxNumberChars) + ")";
}

std::string to_integer(const Field& f, const std::string& text, const std::string& tag,
                       long long& out) {
  const std::string expected = "expected " + f.item_expectation() + ", got ";
  if (!is_plain(tag)) return expected + got_text(text, tag);
  if (text.size() > kMaxNumberChars) return too_long(expected, text);
  const std::optional<Decimal> d = parse_decimal(text);
  if (!d) return expected + got_text(text, kPlain);
  // 1e5 or 2.0 are whole numbers too, but only when written exactly: digits * 10^exponent
  // with no fraction left (0.99999999999999999999 is not 1).
  std::string digits = d->digits;
  long long exponent = d->exponent;
  while (!digits.empty() && digits.back() == '0' && exponent < 0) {
    digits.pop_back();
    ++exponent;
  }
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) {
    out = 0;
  } else {
    if (exponent < 0) return expected + text;
    if (static_cast<long long>(digits.size() - first) + exponent > 19) {
      return expected + text + " (too large)";
    }
    unsigned long long magnitude = 0;
    for (std::size_t k = first; k < digits.size(); ++k) {
      magnitude = magnitude * 10 + static_cast<unsigned>(digits[k] - '0');
    }
    for (long long k = 0; k < exponent; ++k) magnitude *= 10;  // at most 19 digits: no wrap
    if (magnitude > static_cast<unsigned long long>(LLONG_MAX)) {
      return expected + text + " (too large)";
    }
    out = d->negative ? -static_cast<long long>(magnitude) : static_cast<long long>(magnitude);
  }
  if (!in_range(f, static_cast<double>(out))) return expected + text;
  if (!f.is_wide() && (out > INT_MAX || out < INT_MIN)) {
    return expected + text + " (too large; at most " + std::to_string(INT_MAX) + ")";
  }
  return "";
}

std::string to_real(const Field& f, const std::string& text, const std::string& tag, double& out) {
  const std::string expected = "expected " + f.item_expectation() + ", got ";
  if (!is_plain(tag)) return expected + got_text(text, tag);
  if (text.size() > kMaxNumberChars) return too_long(expected, text);
  if (!parse_decimal(text)) return expected + got_text(text, kPlain);
  out = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(out)) return expected + text + " (beyond the range of double)";
  if (!in_range(f, out)) return expected + text;
  return "";
}

std::string to_boolean(const Field& f, const std::string& text, const std::string& tag, bool& out) {
  static const char* const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const char* const no[] = {"false", "False", "FALSE", "no", "No",
                                   "NO",    "off",   "Off",   "OFF"};
  if (is_plain(tag)) {
    for (const char* w : yes) {
      if (text == w) {
        out = true;
        return "";
      }
    }
    for (const char* w : no) {
      if (text == w) {
        out = false;
        return "";
      }
    }
  }
  return "expected " + f.expectation() + ", got " + got_text(text, tag);
}

std::string to_word(const Field& f, const std::string& text, const std::string& tag,
                    std::string& out) {
  const auto& words = f.words();
  if (std::find(words.begin(), words.end(), text) != words.end()) {
    out = text;
    return "";
  }
  std::string message = "expected one of " + join_words(words) + "; got " + got_text(text, tag);
  const std::string guess = closest_match(text, words);
  if (!guess.empty()) message += " (did you mean " + guess + "?)";
  return message;
}

std::string to_expression(const std::string& text, const std::vector<std::string>& variables,
                          std::string& out) {
  try {
    core::Expression compiled(text, variables);
  } catch (const core::ExpressionError& e) {
    return e.what();
  }
  out = text;
  return "";
}

// --- the validator ---------------------------------------------------------------------

class Validator {
 public:
  Validator(std::string file, const YAML::Node& doc) : file_(std::move(file)), doc_(doc) {}

  Value run() {
    const Field& root = deck_schema();
    // `problem` first: it decides which problem section the deck must have.
    if (!find_key(doc_, "problem").first.IsDefined()) {
      // A misspelt key is the likely reason, and the more useful message.
      for (auto it = doc_.begin(); it != doc_.end(); ++it) {
        if (it->first.IsScalar() && root.child(it->first.Scalar()) == nullptr) {
          const std::string& name = it->first.Scalar();
          if (const std::string nul = nul_message(name); !nul.empty()) {
            fail(file_, mark_of(it->first), "", "a key " + nul);
          }
          fail(file_, mark_of(it->first), shown_key(name), unknown_key_message(root, "", name));
        }
      }
      fail(file_, Position{1, 1}, "problem", missing_message(*root.child("problem")));
    }
    Value v = section(doc_, root, "", Position{1, 1}, true);
    fill_output_defaults(v, file_);
    check_output_section(v, file_);
    check_petsc_section(v, file_);
    const std::string& problem = v.at("problem").text;
    if (problem == "mfg") check_mfg(v, file_);
    if (problem == "fode") check_fode(v, file_);
    if (problem == "fpde") check_fpde(v, file_);
    return v;
  }

 private:
  // The first entry `name` of a mapping: (key node, value node); undefined nodes if absent.
  static std::pair<YAML::Node, YAML::Node> find_key(const YAML::Node& map,
                                                    const std::string& name) {
    if (map.IsMap()) {
      for (auto it = map.begin(); it != map.end(); ++it) {
        if (it->first.IsScalar() && it->first.Scalar() == name) return {it->first, it->second};
      }
    }
    return {YAML::Node(YAML::NodeType::Undefined), YAML::Node(YAML::NodeType::Undefined)};
  }

  static const Field* schema_at(const std::string& dotted) {
    const Field* f = &deck_schema();
    std::size_t start = 0;
    while (f != nullptr && start <= dotted.size()) {
      const std::size_t dot = std::min(dotted.find('.', start), dotted.size());
      f = f->child(dotted.substr(start, dot - start));
      start = dot + 1;
    }
    return f;
  }

  // The word an only_when condition refers to, validated where it is written (so a bad
  // value is reported at its own position), or its default; nullopt when it is missing
  // and has no default (the missing key is reported later).
  std::optional<std::string> condition_word(const std::string& path) {
    auto cached = conditions_.find(path);
    if (cached != conditions_.end()) return cached->second;
    const Field* target = schema_at(path);
    if (target == nullptr || target->kind() != FieldKind::enumeration) {
      throw std::logic_error("schema: only_when refers to " + path + ", not a word field");
    }
    std::optional<std::string> word;
    YAML::Node node = doc_;
    YAML::Node key;
    std::size_t start = 0;
    bool found = true;
    while (start <= path.size()) {
      const std::size_t dot = std::min(path.find('.', start), path.size());
      auto kv = find_key(node, path.substr(start, dot - start));
      if (!kv.first.IsDefined()) {
        found = false;
        break;
      }
      // Node::operator= writes into the referenced node; reset() rebinds the handle.
      key.reset(kv.first);
      node.reset(kv.second);
      start = dot + 1;
    }
    if (found) {
      word = value(node, *target, path, mark_of(key)).text;
    } else if (target->has_default()) {
      word = target->default_value();
    }
    conditions_[path] = word;
    return word;
  }

  bool applies(const Field& f, std::string* actual = nullptr) {
    if (!f.has_condition()) return true;
    const auto word = condition_word(f.condition_path());
    if (!word) return true;
    if (actual != nullptr) *actual = *word;
    const auto& words = f.condition_words();
    return std::find(words.begin(), words.end(), *word) != words.end();
  }

  static std::string condition_words(const Field& f) {
    return join_words(f.condition_words(), " or ");
  }

  std::string not_applicable_message(const Field& f, const std::string& actual) const {
    // A problem's own section (mfg, fode, fpde); other keys get the general message.
    const auto& words = f.condition_words();
    if (f.condition_path() == "problem" &&
        std::find(words.begin(), words.end(), f.name()) != words.end()) {
      return "section does not match problem: " + actual + " (expected a " + actual + " section)";
    }
    return "only used when " + f.condition_path() + " is " + condition_words(f) + " (here it is " +
           actual + ")";
  }

  static std::string missing_message(const Field& f) {
    if (f.is_section()) {
      std::vector<std::string> keys;
      for (const auto& c : f.children()) {
        if (!c.has_condition() && c.is_required()) keys.push_back(c.name());
      }
      return "missing required section (with " + join_words(keys) + ")";
    }
    return "missing required key (" + f.expectation() + ")";
  }

  // Where a key with the given name sits below `f` (for "did you mean time.steps?").
  const Field* find_below(const Field& f, const std::string& name, std::string& relative) {
    for (const auto& c : f.children()) {
      if (!c.is_section() || !applies(c)) continue;
      if (const Field* hit = c.child(name)) {
        if (applies(*hit)) {
          relative = c.name() + "." + name;
          return hit;
        }
      }
      std::string deeper;
      if (find_below(c, name, deeper) != nullptr) {
        relative = c.name() + "." + deeper;
        return &c;
      }
    }
    return nullptr;
  }

  std::string unknown_key_message(const Field& f, const std::string& path,
                                  const std::string& name) {
    std::vector<std::string> keys;
    for (const auto& c : f.children()) keys.push_back(c.name());
    std::string message = "unknown key";
    std::string guess = closest_match(name, keys);
    if (guess.empty()) find_below(f, name, guess);
    if (!guess.empty()) message += " (did you mean " + guess + "?)";
    message += path.empty() ? "; valid top-level keys: " : "; valid keys in " + path + ": ";
    return message + join_words(keys);
  }

  Value section(const YAML::Node& node, const Field& f, const std::string& path, Position key_pos,
                bool given) {
    Value v;
    v.field = &f;
    v.path = path;
    v.given = given;
    v.key_pos = key_pos;
    v.pos = given && node.IsDefined() && !node.IsNull() ? mark_of(node) : key_pos;
    if (given && node.IsDefined() && !node.IsNull() && !node.IsMap()) {
      fail(file_, v.pos, path, "expected " + f.expectation() + ", got " + describe(node));
    }
    std::map<std::string, Position> seen;
    if (given && node.IsMap()) {
      for (auto it = node.begin(); it != node.end(); ++it) {
        const Position kpos = mark_of(it->first);
        if (!it->first.IsScalar()) {
          fail(file_, kpos, path, "keys must be plain words, got " + describe(it->first));
        }
        const std::string name = it->first.Scalar();
        if (const std::string nul = nul_message(name); !nul.empty()) {
          fail(file_, kpos, path, "a key " + nul);
        }
        const std::string child_path = join_path(path, name);
        const auto previous = seen.find(name);
        if (previous != seen.end()) {
          fail(file_, kpos, join_path(path, shown_key(name)),
               "duplicate key (first given on line " + std::to_string(previous->second.line) + ")");
        }
        seen.emplace(name, kpos);
        const Field* cf = f.child(name);
        if (cf == nullptr) {
          fail(file_, kpos, join_path(path, shown_key(name)), unknown_key_message(f, path, name));
        }
        std::string actual;
        if (!applies(*cf, &actual)) {
          fail(file_, kpos, child_path, not_applicable_message(*cf, actual));
        }
        v.children.push_back(value(it->second, *cf, child_path, kpos));
      }
    }
    for (const auto& c : f.children()) {
      if (seen.count(c.name()) > 0 || !applies(c)) continue;
      const std::string child_path = join_path(path, c.name());
      if (c.is_required()) {
        std::string message = missing_message(c);
        Position where = key_pos;
        if (c.has_condition()) {
          // Point at the value that makes this key necessary.
          message += " (needed because " + c.condition_path() + " is " +
                     condition_word(c.condition_path()).value_or("?") + ")";
          if (c.condition_path() == "problem") where = mark_of(find_key(doc_, "problem").second);
        }
        fail(file_, where, child_path, message);
      }
      if (c.is_section()) {
        v.children.push_back(section(YAML::Node(), c, child_path, key_pos, false));
      } else if (c.has_default()) {
        v.children.push_back(default_value(c, child_path, key_pos));
      }
    }
    // Schema order, so the resolved deck reads like the reference.
    const auto rank = [&f](const Value& x) {
      const auto& cs = f.children();
      for (std::size_t i = 0; i < cs.size(); ++i) {
        if (&cs[i] == x.field) return i;
      }
      return cs.size();
    };
    std::stable_sort(v.children.begin(), v.children.end(),
                     [&](const Value& a, const Value& b) { return rank(a) < rank(b); });
    return v;
  }

  Value value(const YAML::Node& node, const Field& f, const std::string& path, Position key_pos) {
    if (f.is_section()) return section(node, f, path, key_pos, true);
    Value v;
    v.field = &f;
    v.path = path;
    v.given = true;
    v.key_pos = key_pos;
    v.pos = node.IsNull() ? key_pos : mark_of(node);
    if (f.is_list()) {
      list(node, f, v);
      return v;
    }
    if (!node.IsScalar()) {
      fail(file_, v.pos, path, "expected " + f.expectation() + ", got " + describe(node));
    }
    if (const std::string nul = nul_message(node.Scalar()); !nul.empty()) {
      fail(file_, v.pos, path, "the value " + nul);
    }
    const std::string message = scalar(f, node.Scalar(), node.Tag(), v);
    if (!message.empty()) fail(file_, v.pos, path, message);
    return v;
  }

  static std::string scalar(const Field& f, const std::string& text, const std::string& tag,
                            Value& v) {
    switch (f.kind()) {
      case FieldKind::integer: return to_integer(f, text, tag, v.integer);
      case FieldKind::real: return to_real(f, text, tag, v.real);
      case FieldKind::boolean: return to_boolean(f, text, tag, v.boolean);
      case FieldKind::string: v.text = text; return "";
      case FieldKind::enumeration: return to_word(f, text, tag, v.text);
      case FieldKind::expression: return to_expression(text, f.variables(), v.text);
      default: throw std::logic_error("deck: scalar() on a list or section");
    }
  }

  void list(const YAML::Node& node, const Field& f, Value& v) {
    std::vector<YAML::Node> items;
    if (node.IsSequence()) {
      for (const auto& item : node) items.push_back(item);
    } else if (node.IsScalar() && f.min_length() <= 1) {
      items.push_back(node);  // a single item may be written without brackets
    } else {
      fail(file_, v.pos, v.path, "expected " + f.expectation() + ", got " + describe(node));
    }
    const std::size_t n = items.size();
    if (n < f.min_length() || (f.max_length() > 0 && n > f.max_length())) {
      fail(file_, v.pos, v.path,
           "expected " + f.expectation() + ", got " + std::to_string(n) +
               (n == 1 ? " item" : " items"));
    }
    const auto variables = f.variables_for(n);
    for (std::size_t i = 0; i < n; ++i) {
      const YAML::Node& item = items[i];
      const Position ipos = item.IsNull() ? v.pos : mark_of(item);
      const std::string ipath = item_path(v.path, i);
      if (!item.IsScalar()) {
        fail(file_, ipos, ipath, "expected " + f.item_expectation() + ", got " + describe(item));
      }
      const std::string& text = item.Scalar();
      std::string message = nul_message(text);
      if (!message.empty()) fail(file_, ipos, ipath, "the item " + message);
      switch (f.kind()) {
        case FieldKind::integer_list: {
          long long x = 0;
          message = to_integer(f, text, item.Tag(), x);
          v.integers.push_back(x);
          break;
        }
        case FieldKind::real_list: {
          double x = 0.0;
          message = to_real(f, text, item.Tag(), x);
          v.reals.push_back(x);
          break;
        }
        default: {
          std::string x;
          message = to_expression(text, item_variables(f, text, n), x);
          // On an error, compile with every variable: the message lists them all.
          if (!message.empty()) message = to_expression(text, variables, x);
          v.texts.push_back(x);
        }
      }
      if (!message.empty()) fail(file_, ipos, ipath, message);
      v.item_pos.push_back(ipos);
    }
  }

  static Value default_value(const Field& f, const std::string& path, Position at) {
    Value v;
    v.field = &f;
    v.path = path;
    v.given = false;
    v.key_pos = at;
    v.pos = at;
    if (f.is_list()) throw std::logic_error("schema: list defaults are not supported: " + path);
    const std::string message = scalar(f, f.default_value(), kPlain, v);
    if (!message.empty()) {
      throw std::logic_error("schema: bad default for " + path + ": " + message);
    }
    return v;
  }

  std::string file_;
  YAML::Node doc_;
  std::map<std::string, std::optional<std::string>> conditions_;
};

}  // namespace

namespace {

// Limits checked on the event stream, before yaml-cpp builds a node: the cost of a node
// tree grows with the number of items (about 600 bytes each), and yaml-cpp's own recursion
// limit only says "bad file".
constexpr std::size_t kMaxNesting = 32;        // mappings and lists inside each other
constexpr std::size_t kMaxListItems = 100000;  // items of a list the schema does not bound
// Nodes (keys, values, list items) of a document: the largest deck, a fode system of 100000
// components, has about 400000.
constexpr std::size_t kMaxNodes = 500000;
constexpr std::size_t kListSlack = 1000;  // beyond a bounded list's maximum

Position position_of(const YAML::Mark& m);

// Walks the events of a YAML stream without building nodes: counts the documents, and
// refuses deep nesting and lists longer than their key allows (the schema's maximum length,
// else kMaxListItems) as soon as the parser reaches them. yaml-cpp 0.7's LoadAll() never
// ends on a document that starts with a stray ',' (jbeder/yaml-cpp#1040): the parser reports
// an empty document at the same place again and again. Seeing a document start where the
// previous one started means the parser is stuck there.
class Outline : public YAML::EventHandler {
 public:
  explicit Outline(std::string file) : file_(std::move(file)) {}

  std::vector<YAML::Mark> starts;

  void OnDocumentStart(const YAML::Mark& mark) override {
    starts.push_back(mark);
    stack_.clear();
    nodes_ = 0;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
    count(mark);
    node_done(nullptr);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    count(mark);
    node_done(nullptr);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string& value) override {
    count(mark);
    node_done(&value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    open(mark, false);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    open(mark, true);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    bool is_map = false;
    const Field* field = nullptr;  // the schema field of this node, if known
    std::string path;
    YAML::Mark mark;
    bool expect_key = true;              // maps: the next node is a key
    const Field* value_field = nullptr;  // maps: the field of the key just read
    std::string value_path;
    std::size_t items = 0;  // lists
  };

  void count(const YAML::Mark& mark) {
    if (++nodes_ > kMaxNodes) {
      fail(file_, position_of(mark), "",
           "too many values (more than " + std::to_string(kMaxNodes) +
               " keys, values and list items in one deck)");
    }
  }

  void open(const YAML::Mark& mark, bool is_map) {
    count(mark);
    Frame frame;
    frame.is_map = is_map;
    frame.mark = mark;
    if (stack_.empty()) {
      frame.field = &deck_schema();
    } else if (stack_.back().is_map && !stack_.back().expect_key) {
      frame.field = stack_.back().value_field;
      frame.path = stack_.back().value_path;
    } else if (!stack_.back().is_map) {
      frame.path = item_path(stack_.back().path, stack_.back().items);
    }
    if (stack_.size() >= kMaxNesting) {
      fail(file_, position_of(mark), frame.path,
           "nested too deeply (at most " + std::to_string(kMaxNesting) +
               " levels of mappings and lists)");
    }
    stack_.push_back(std::move(frame));
  }

  void close() {
    if (stack_.empty()) return;
    stack_.pop_back();
    node_done(nullptr);
  }

  // A node ended inside the innermost mapping or list; `key` is its text if it is a scalar.
  void node_done(const std::string* key) {
    if (stack_.empty()) return;
    Frame& top = stack_.back();
    if (top.is_map) {
      if (top.expect_key) {
        const bool known = key != nullptr && top.field != nullptr && top.field->is_section();
        top.value_field = known ? top.field->child(*key) : nullptr;
        top.value_path = key != nullptr ? join_path(top.path, shown_key(*key)) : top.path;
      }
      top.expect_key = !top.expect_key;
      return;
    }
    ++top.items;
    const Field* f = top.field;
    if (f != nullptr && f->is_list() && f->max_length() > 0) {
      // A few items too many are left to the validator, which reports the count and keeps
      // the order of errors; far too many are refused here.
      const std::size_t limit = f->max_length() + kListSlack;
      if (top.items > limit) {
        fail(
            file_, position_of(top.mark), top.path,
            "expected " + f->expectation() + ", got more than " + std::to_string(limit) + " items");
      }
    } else if (top.items > kMaxListItems) {
      fail(file_, position_of(top.mark), top.path,
           "list too long (more than " + std::to_string(kMaxListItems) + " items)");
    }
  }

  std::string file_;
  std::vector<Frame> stack_;
  std::size_t nodes_ = 0;
};

Position position_of(const YAML::Mark& m) {
  if (m.line < 0 || m.column < 0) return {};
  return {m.line + 1, m.column + 1};
}

[[noreturn]] void syntax_error(const std::string& file, const YAML::Exception& e) {
  fail(file, position_of(e.mark), "", "YAML syntax error: " + e.msg);
}

// Parses the one document of a deck; more than one is an error.
YAML::Node parse_one_document(const std::string& text, const std::string& file) {
  Outline documents(file);
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    while (documents.starts.size() < 3 && parser.HandleNextDocument(documents)) {
      const auto& s = documents.starts;
      if (s.size() >= 2 && s[s.size() - 1].pos == s[s.size() - 2].pos) {
        const auto offset = static_cast<std::size_t>(std::max(0, s.back().pos));
        const std::string what = offset < text.size() ? std::string(1, text[offset]) : "end";
        fail(file, position_of(s.back()), "", "YAML syntax error: unexpected '" + what + "'");
      }
    }
  } catch (const YAML::Exception& e) {
    syntax_error(file, e);
  }
  if (documents.starts.size() > 1) {
    fail(file, position_of(documents.starts[1]), "",
         "the file holds more than one YAML document; a deck is one");
  }
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    syntax_error(file, e);
  }
}

}  // namespace

Value validate_deck(const std::string& deck_text, const std::string& file) {
  check_encoding(deck_text, file);
  const std::string text = normalise_line_endings(deck_text, file);
  check_indentation(text, file);
  const YAML::Node doc = parse_one_document(text, file);
  if (!doc.IsDefined() || doc.IsNull()) {
    fail(file, Position{1, 1}, "", "deck is empty (expected at least problem: mfg, fode or fpde)");
  }
  if (!doc.IsMap()) {
    fail(file, mark_of(doc), "",
         "expected a mapping of top-level keys (problem: ...), got " + describe(doc));
  }
  return Validator(file, doc).run();
}

}  // namespace fracmfg::io::detail
