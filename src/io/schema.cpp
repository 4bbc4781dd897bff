#include "fracmfg/io/schema.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "fracmfg/core/expression.hpp"

namespace fracmfg::io {

// --- Field: builders -------------------------------------------------------------------

Field::Field(FieldKind kind, std::string name, std::string doc)
    : kind_(kind), name_(std::move(name)), doc_(std::move(doc)) {}

Field& Field::required() {
  required_ = true;
  return *this;
}

Field& Field::def(const char* value) {
  return def(std::string(value));
}

Field& Field::def(const std::string& value) {
  default_ = value;
  return *this;
}

Field& Field::def(int value) {
  return def(std::to_string(value));
}
Field& Field::def(double value) {
  return def(format_yaml_real(value));
}
Field& Field::def(bool value) {
  return def(std::string(value ? "true" : "false"));
}

Field& Field::optional(std::string note) {
  optional_note_ = std::move(note);
  return *this;
}

Field& Field::at_least(double v) {
  min_ = Bound{v, true};
  return *this;
}

Field& Field::greater_than(double v) {
  min_ = Bound{v, false};
  return *this;
}

Field& Field::at_most(double v) {
  max_ = Bound{v, true};
  return *this;
}

Field& Field::less_than(double v) {
  max_ = Bound{v, false};
  return *this;
}

Field& Field::wide() {
  wide_ = true;
  return *this;
}

Field& Field::set_words(std::vector<std::string> words) {
  words_ = std::move(words);
  return *this;
}

Field& Field::set_length(std::size_t min_length, std::size_t max_length) {
  min_length_ = min_length;
  max_length_ = max_length;
  return *this;
}

Field& Field::set_variables(std::vector<std::string> variables, std::string indexed) {
  variables_ = std::move(variables);
  indexed_variable_ = std::move(indexed);
  return *this;
}

Field& Field::only_when(std::string path, std::vector<std::string> words) {
  condition_path_ = std::move(path);
  condition_words_ = std::move(words);
  return *this;
}

Field& Field::add(Field child) {
  if (!is_section()) throw std::logic_error("schema: add() on non-section field " + name_);
  children_.push_back(std::move(child));
  return *this;
}

// --- Field: introspection --------------------------------------------------------------

bool Field::is_list() const {
  return kind_ == FieldKind::integer_list || kind_ == FieldKind::real_list ||
         kind_ == FieldKind::expression_list;
}

bool Field::is_required() const {
  if (required_) return true;
  if (!is_section()) return false;
  for (const auto& c : children_) {
    if (!c.has_condition() && c.is_required()) return true;
  }
  return false;
}

const std::string& Field::default_value() const {
  if (!default_) throw std::logic_error("schema: field " + name_ + " has no default");
  return *default_;
}

const Field* Field::child(const std::string& name) const {
  for (const auto& c : children_) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

std::vector<std::string> Field::variables_for(std::size_t length) const {
  std::vector<std::string> vars = variables_;
  if (!indexed_variable_.empty()) {
    for (std::size_t i = 1; i <= length; ++i) vars.push_back(indexed_variable_ + std::to_string(i));
    // One member: the family's bare name is that member too (y for y1).
    if (length == 1) vars.push_back(indexed_variable_);
  }
  return vars;
}

// --- text ------------------------------------------------------------------------------

std::string format_real(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  // The fewest significant digits that read back exactly ...
  char buf[64];
  int digits = 1;
  for (; digits < 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  const int exponent = std::atoi(std::strchr(buf, 'e') + 1);
  // ... written plainly for moderate magnitudes ("0.05", "100000"), else as "1e-8".
  if (exponent >= -5 && exponent < 16) {
    std::snprintf(buf, sizeof buf, "%.*f", std::max(0, digits - 1 - exponent), v);
    return buf;
  }
  std::string s(buf);
  const auto e = s.find('e');
  std::string mantissa = s.substr(0, e);
  return mantissa + "e" + std::to_string(exponent);
}

std::string format_yaml_real(double v) {
  std::string s = format_real(v);
  if (s.find_first_of(".n") == std::string::npos) {
    const auto e = s.find('e');
    if (e == std::string::npos) {
      s += ".0";
    } else {
      s.insert(e, ".0");
    }
  }
  return s;
}

namespace {

std::string join(const std::vector<std::string>& words, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) out += (i ? sep : "") + words[i];
  return out;
}

std::string number_text(double v, bool integer) {
  if (integer && std::abs(v) < 9.0e15) return std::to_string(static_cast<long long>(v));
  return format_real(v);
}

// The range of a number as "in (0, 1]", ">= 3", "> 0" or "" (no range).
std::string range_text(const std::optional<Bound>& lo, const std::optional<Bound>& hi,
                       bool integer) {
  if (lo && hi) {
    return std::string("in ") + (lo->inclusive ? "[" : "(") + number_text(lo->value, integer) +
           ", " + number_text(hi->value, integer) + (hi->inclusive ? "]" : ")");
  }
  if (lo) return std::string(lo->inclusive ? ">= " : "> ") + number_text(lo->value, integer);
  if (hi) return std::string(hi->inclusive ? "<= " : "< ") + number_text(hi->value, integer);
  return "";
}

// "an integer >= 3" / "integers >= 3", "a positive integer" / "positive integers", ...
std::string number_expectation(const Field& f, bool integer, bool plural) {
  const auto& lo = f.min();
  const auto& hi = f.max();
  if (integer && lo && !hi && lo->inclusive && (lo->value == 1.0 || lo->value == 0.0)) {
    const char* adjective = lo->value == 1.0 ? "positive" : "non-negative";
    return plural ? std::string(adjective) + " integers"
                  : std::string("a ") + adjective + " integer";
  }
  std::string noun =
      integer ? (plural ? "integers" : "an integer") : (plural ? "real numbers" : "a real number");
  const std::string range = range_text(lo, hi, integer);
  return range.empty() ? noun : noun + " " + range;
}

std::string variables_text(const Field& f) {
  std::vector<std::string> names = f.variables();
  if (!f.indexed_variable().empty()) {
    names.push_back(f.indexed_variable() + "1.." + f.indexed_variable() + "d (" +
                    f.indexed_variable() + " for " + f.indexed_variable() + "1 when d = 1)");
  }
  return join(names, ", ");
}

std::string length_text(const Field& f) {
  const std::size_t lo = f.min_length(), hi = f.max_length();
  if (hi == 0) return std::to_string(lo) + " or more";
  if (lo == hi) return std::to_string(lo);
  if (hi == lo + 1) return std::to_string(lo) + " or " + std::to_string(hi);
  return std::to_string(lo) + " to " + std::to_string(hi);
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

std::string code(const std::string& s) {
  return "`" + s + "`";
}

}  // namespace

std::string Field::item_expectation() const {
  switch (kind_) {
    case FieldKind::integer_list: return number_expectation(*this, true, false);
    case FieldKind::real_list: return number_expectation(*this, false, false);
    case FieldKind::expression_list: return "an expression of " + variables_text(*this);
    default: return expectation();
  }
}

std::string Field::expectation() const {
  switch (kind_) {
    case FieldKind::section: return "a section (a mapping of keys to values)";
    case FieldKind::integer: return number_expectation(*this, true, false);
    case FieldKind::real: return number_expectation(*this, false, false);
    case FieldKind::boolean: return "true or false";
    case FieldKind::string: return "a string";
    case FieldKind::enumeration: return "one of " + join(words_, ", ");
    case FieldKind::expression:
      return variables_.empty() ? "a constant expression"
                                : "an expression of " + variables_text(*this);
    case FieldKind::integer_list:
      return "a list of " + length_text(*this) + " " + number_expectation(*this, true, true);
    case FieldKind::real_list:
      return "a list of " + length_text(*this) + " " + number_expectation(*this, false, true);
    case FieldKind::expression_list:
      return "a list of " + length_text(*this) + " expressions of " + variables_text(*this);
  }
  return "";
}

std::string Field::type_text() const {
  switch (kind_) {
    case FieldKind::section: return "section";
    case FieldKind::integer: return "integer";
    case FieldKind::real: return "real";
    case FieldKind::boolean: return "boolean";
    case FieldKind::string: return "string";
    case FieldKind::enumeration: return "word";
    case FieldKind::expression: return "expression of " + variables_text(*this);
    case FieldKind::integer_list: return "list of " + length_text(*this) + " integers";
    case FieldKind::real_list: return "list of " + length_text(*this) + " reals";
    case FieldKind::expression_list:
      return "list of " + length_text(*this) + " expressions of " + variables_text(*this);
  }
  return "";
}

std::string Field::range_markdown() const {
  switch (kind_) {
    case FieldKind::integer:
    case FieldKind::integer_list: return range_text(min_, max_, true);
    case FieldKind::real:
    case FieldKind::real_list: return range_text(min_, max_, false);
    case FieldKind::boolean: return "`true` \\| `false`";
    case FieldKind::enumeration: {
      std::vector<std::string> quoted;
      for (const auto& w : words_) quoted.push_back(code(w));
      return join(quoted, " \\| ");
    }
    default: return "";
  }
}

std::string Field::default_markdown() const {
  if (is_section()) return "";
  if (required_) return "**required**";
  if (default_) return default_->empty() ? "`\"\"`" : code(*default_);
  return md_escape(optional_note_);
}

// --- builders --------------------------------------------------------------------------

namespace schema {

Field section(std::string name, std::string doc, std::vector<Field> children) {
  Field f(FieldKind::section, std::move(name), std::move(doc));
  for (auto& c : children) f.add(std::move(c));
  return f;
}

Field integer(std::string name, std::string doc) {
  return Field(FieldKind::integer, std::move(name), std::move(doc));
}

Field real(std::string name, std::string doc) {
  return Field(FieldKind::real, std::move(name), std::move(doc));
}

Field boolean(std::string name, std::string doc) {
  return Field(FieldKind::boolean, std::move(name), std::move(doc));
}

Field text(std::string name, std::string doc) {
  return Field(FieldKind::string, std::move(name), std::move(doc));
}

Field choice(std::string name, std::vector<std::string> words, std::string doc) {
  Field f(FieldKind::enumeration, std::move(name), std::move(doc));
  f.set_words(std::move(words));
  return f;
}

Field expression(std::string name, std::vector<std::string> variables, std::string doc) {
  Field f(FieldKind::expression, std::move(name), std::move(doc));
  f.set_variables(std::move(variables));
  return f;
}

Field integers(std::string name, std::size_t min_length, std::size_t max_length, std::string doc) {
  Field f(FieldKind::integer_list, std::move(name), std::move(doc));
  f.set_length(min_length, max_length);
  return f;
}

Field reals(std::string name, std::size_t min_length, std::size_t max_length, std::string doc) {
  Field f(FieldKind::real_list, std::move(name), std::move(doc));
  f.set_length(min_length, max_length);
  return f;
}

Field expressions(std::string name, std::vector<std::string> variables, std::string indexed,
                  std::size_t min_length, std::size_t max_length, std::string doc) {
  Field f(FieldKind::expression_list, std::move(name), std::move(doc));
  f.set_variables(std::move(variables), std::move(indexed));
  f.set_length(min_length, max_length);
  return f;
}

}  // namespace schema

// --- the reference ---------------------------------------------------------------------

namespace {

std::string condition_text(const Field& f, bool sentence) {
  std::vector<std::string> words;
  for (const auto& w : f.condition_words()) words.push_back(code(w));
  return std::string(sentence ? "Only" : "only") + " when " + code(f.condition_path()) + " is " +
         join(words, " or ") + (sentence ? "." : "");
}

void section_markdown(std::ostringstream& os, const Field& section, const std::string& path) {
  os << "\n## " << (path.empty() ? std::string("Top level") : code(path)) << "\n\n";
  os << md_escape(section.doc());
  if (section.has_condition()) os << " " << condition_text(section, true);
  if (!path.empty()) {
    const auto& cs = section.children();
    const bool defaults = std::all_of(
        cs.begin(), cs.end(), [](const Field& c) { return c.is_section() || c.has_default(); });
    os << (section.is_required() ? " Required."
           : defaults            ? " Optional; every key has a default."
                                 : " Optional.");
  }
  os << "\n\n";
  os << "| key | type | range / values | default | description |\n";
  os << "|---|---|---|---|---|\n";
  for (const auto& f : section.children()) {
    std::string description = md_escape(f.doc());
    if (f.has_condition()) description += " (" + condition_text(f, false) + ")";
    if (f.is_section()) {
      description += " See " + code(path.empty() ? f.name() : path + "." + f.name()) + ".";
    }
    os << "| " << code(f.name()) << " | " << md_escape(f.type_text()) << " | " << f.range_markdown()
       << " | " << f.default_markdown() << " | " << description << " |\n";
  }
  for (const auto& f : section.children()) {
    if (f.is_section()) section_markdown(os, f, path.empty() ? f.name() : path + "." + f.name());
  }
}

}  // namespace

std::string deck_reference_markdown() {
  std::ostringstream os;
  os << "# Input deck reference\n\n"
     << "<!-- Generated from the deck schema (src/io/deck_schema*.cpp); do not edit.\n"
     << "     Regenerate with: fracmfg validate --reference > docs/deck_reference.md -->\n\n"
     << "A deck is a YAML file. Keys are grouped in sections; the `problem` key names the\n"
     << "one problem section (`mfg`, `fode` or `fpde`) the deck must contain. Every key\n"
     << "below is checked when the deck is read: unknown or misspelled keys, duplicate\n"
     << "keys, wrong types, values out of range and expressions that do not compile are\n"
     << "errors reported as `file:line:column: dotted.key: message`. Keys that are not\n"
     << "given take the default shown; `fracmfg validate --resolved <deck>` prints the\n"
     << "deck with every default filled in.\n\n"
     << "Conventions:\n\n"
     << "- Ranges: `[a, b]` includes both ends, `(a, b]` excludes `a`; `>= a`, `> a`.\n"
     << "- A list with one item may be written without brackets (`order: 0.5`).\n"
     << "- Numbers must not be quoted; `1e-8`, `1.0e-8` and `0.00000001` are the same.\n"
     << "- Expressions are formulas in double quotes, e.g. `\"exp(-(x-0.3)^2/0.005)\"`.\n"
     << "  Variables: `x` in [0, Lx] and `y` in [0, Ly] (position; `y` only in 2D domains),\n"
     << "  `t` in [0, T] (time), `y1`..`yd` (components of a fractional ODE system; `y` is\n"
     << "  `y1` when there is one unknown).\n"
     << "  Operators `+ - * / ^` (power), comparisons, `&&`, `||`, `c ? a : b`; constants\n"
     << "  `pi`, `e`; functions:\n ";
  // Wrapped like the prose above, so the Markdown source reads well too.
  std::size_t column = 1;
  const auto functions = core::Expression::function_names();
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const std::string item = " " + code(functions[i]) + (i + 1 < functions.size() ? "," : ".");
    if (column + item.size() > 88) {
      os << "\n ";
      column = 1;
    }
    os << item;
    column += item.size();
  }
  os << "\n";
  section_markdown(os, deck_schema(), "");
  return os.str();
}

}  // namespace fracmfg::io
