#include "io/deck_validate.hpp"

#include <climits>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "core/text.hpp"
#include "fracmfg/core/expression.hpp"
#include "io/deck_schema_sections.hpp"

namespace fracmfg::io::detail {

// --- words -----------------------------------------------------------------------------

std::size_t edit_distance(const std::string& a, const std::string& b) {
  return fracmfg::detail::edit_distance(a, b);
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    const std::size_t dist = edit_distance(word, c);
    if (dist < best_d) {
      best_d = dist;
      best = c;
    }
  }
  // A likely typo changes at most about a third of the word (at least one character).
  const std::size_t limit = std::max<std::size_t>(1, (std::max(word.size(), best.size()) + 1) / 3);
  return best_d <= limit ? best : std::string();
}

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

void check_text(const std::string& text, const std::string& file) {
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
  // YAML indents with spaces only; yaml-cpp's own message for a tab is obscure.
  std::size_t line_start = 0;
  while (line_start < text.size()) {
    std::size_t end = text.find('\n', line_start);
    if (end == std::string::npos) end = text.size();
    const std::size_t first = text.find_first_not_of(" \t", line_start);
    const bool blank = first >= end || text[first] == '#' || text[first] == '\r';
    if (!blank) {
      const std::size_t tab = text.find('\t', line_start);
      if (tab < first) {
        fail(file, position_at(text, tab), "",
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

bool is_quoted(const YAML::Node& node) {
  return node.Tag() == "!";
}

std::string got_text(const std::string& text, bool quoted) {
  std::string shown = text.size() > 60 ? text.substr(0, 57) + "..." : text;
  if (quoted) return "\"" + shown + "\" (a quoted string)";
  return shown;
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return got_text(node.Scalar(), is_quoted(node));
}

bool in_range(const Field& f, double v) {
  if (f.min() && (f.min()->inclusive ? v < f.min()->value : v <= f.min()->value)) return false;
  if (f.max() && (f.max()->inclusive ? v > f.max()->value : v >= f.max()->value)) return false;
  return true;
}

// --- scalar conversions: each returns "" on success or the message after "key: " -----

const std::regex& integer_syntax() {
  static const std::regex re(R"([+-]?[0-9]+)");
  return re;
}

const std::regex& real_syntax() {
  static const std::regex re(R"([+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)");
  return re;
}

std::string to_integer(const Field& f, const std::string& text, bool quoted, long long& out) {
  const std::string expected = "expected " + f.item_expectation() + ", got ";
  if (quoted) return expected + got_text(text, true);
  if (std::regex_match(text, integer_syntax())) {
    errno = 0;
    out = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) return expected + text + " (too large)";
  } else if (std::regex_match(text, real_syntax())) {
    // 1e5 or 2.0 are whole numbers too.
    const double v = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(v) || v != std::floor(v)) return expected + text;
    if (std::abs(v) > 9.0e18) return expected + text + " (too large)";
    out = static_cast<long long>(v);
  } else {
    return expected + got_text(text, false);
  }
  if (!in_range(f, static_cast<double>(out))) return expected + text;
  if (!f.is_wide() && (out > INT_MAX || out < INT_MIN)) {
    return expected + text + " (too large; at most " + std::to_string(INT_MAX) + ")";
  }
  return "";
}

std::string to_real(const Field& f, const std::string& text, bool quoted, double& out) {
  const std::string expected = "expected " + f.item_expectation() + ", got ";
  if (quoted || !std::regex_match(text, real_syntax())) return expected + got_text(text, quoted);
  out = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(out)) return expected + text + " (beyond the range of double)";
  if (!in_range(f, out)) return expected + text;
  return "";
}

std::string to_boolean(const Field& f, const std::string& text, bool quoted, bool& out) {
  static const char* const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const char* const no[] = {"false", "False", "FALSE", "no", "No",
                                   "NO",    "off",   "Off",   "OFF"};
  if (!quoted) {
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
  return "expected " + f.expectation() + ", got " + got_text(text, quoted);
}

std::string to_word(const Field& f, const std::string& text, bool quoted, std::string& out) {
  const auto& words = f.words();
  if (std::find(words.begin(), words.end(), text) != words.end()) {
    out = text;
    return "";
  }
  std::string message = "expected one of " + join_words(words) + "; got " + got_text(text, quoted);
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
      fail(file_, Position{1, 1}, "problem", missing_message(*root.child("problem")));
    }
    Value v = section(doc_, root, "", Position{1, 1}, true);
    fill_output_defaults(v, file_);
    check_output_section(v, file_);
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
    if (f.condition_path() == "problem") {
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
        const std::string child_path = join_path(path, name);
        const auto previous = seen.find(name);
        if (previous != seen.end()) {
          fail(file_, kpos, child_path,
               "duplicate key (first given on line " + std::to_string(previous->second.line) + ")");
        }
        seen.emplace(name, kpos);
        const Field* cf = f.child(name);
        if (cf == nullptr) fail(file_, kpos, child_path, unknown_key_message(f, path, name));
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
    const std::string message = scalar(f, node.Scalar(), is_quoted(node), v);
    if (!message.empty()) fail(file_, v.pos, path, message);
    return v;
  }

  static std::string scalar(const Field& f, const std::string& text, bool quoted, Value& v) {
    switch (f.kind()) {
      case FieldKind::integer: return to_integer(f, text, quoted, v.integer);
      case FieldKind::real: return to_real(f, text, quoted, v.real);
      case FieldKind::boolean: return to_boolean(f, text, quoted, v.boolean);
      case FieldKind::string: v.text = text; return "";
      case FieldKind::enumeration: return to_word(f, text, quoted, v.text);
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
      std::string message;
      const std::string& text = item.Scalar();
      switch (f.kind()) {
        case FieldKind::integer_list: {
          long long x = 0;
          message = to_integer(f, text, is_quoted(item), x);
          v.integers.push_back(x);
          break;
        }
        case FieldKind::real_list: {
          double x = 0.0;
          message = to_real(f, text, is_quoted(item), x);
          v.reals.push_back(x);
          break;
        }
        default: {
          std::string x;
          message = to_expression(text, variables, x);
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
    const std::string message = scalar(f, f.default_value(), false, v);
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

// Counts the documents of a YAML stream, without building nodes. yaml-cpp 0.7's LoadAll()
// never ends on a document that starts with a stray ',' (jbeder/yaml-cpp#1040): the parser
// reports an empty document at the same place again and again. Seeing a document start
// where the previous one started means the parser is stuck there.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
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
  DocumentStarts documents;
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

Value validate_deck(const std::string& text, const std::string& file) {
  check_text(text, file);
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
