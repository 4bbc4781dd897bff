#include "fracmfg/core/expression.hpp"

#include <muParser.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

#include "core/text.hpp"

namespace fracmfg::core {

ExpressionError::ExpressionError(std::string expression, int position, const std::string& message)
    : Error(message), expression_(std::move(expression)), position_(position) {}

namespace {

double fn_floor(double v) {
  return std::floor(v);
}
double fn_ceil(double v) {
  return std::ceil(v);
}
double fn_erf(double v) {
  return std::erf(v);
}
double fn_erfc(double v) {
  return std::erfc(v);
}
double fn_fmod(double a, double b) {
  return std::fmod(a, b);
}
double fn_pow(double a, double b) {
  return std::pow(a, b);
}
double fn_gamma(double v) {
  return std::tgamma(v);
}

constexpr double kPi = 3.14159265358979323846;
constexpr double kE = 2.71828182845904523536;

bool is_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

using ::fracmfg::detail::closest_match;

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// "t, y1, y2, y3, y4, ..., y6000 (6001 variables)": a message stays short for a large system.
std::string join_abbreviated(const std::vector<std::string>& words) {
  constexpr std::size_t shown = 5;
  if (words.size() <= 2 * shown) return join(words);
  std::vector<std::string> head(words.begin(), words.begin() + shown);
  return join(head) + ", ..., " + words.back() + " (" + std::to_string(words.size()) +
         " variables)";
}

// muparser's messages end with "found at position N." (0-based); the position is reported
// separately (1-based), so drop it from the text. One linear scan: a regex with \s*
// backtracks over a long run of blanks (muparser quotes the token, which may be a
// formula's trailing blanks).
std::string reason_of(const std::string& msg) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  const std::string phrase = "at position ";
  std::string r;
  std::size_t i = 0;  // msg[0, i) is dealt with
  for (std::size_t at = msg.find(phrase); at != std::string::npos; at = msg.find(phrase, at + 1)) {
    std::size_t end = at + phrase.size();
    if (end < msg.size() && msg[end] == '-') ++end;
    const std::size_t number = end;
    while (end < msg.size() && digit(msg[end])) ++end;
    if (end == number) continue;
    // The blanks before the phrase, and "found" with its blanks, go with it.
    std::size_t start = at;
    while (start > i && space(msg[start - 1])) --start;
    if (start < at && start >= i + 5 && msg.compare(start - 5, 5, "found") == 0) {
      start -= 5;
      while (start > i && space(msg[start - 1])) --start;
    }
    r.append(msg, i, start - i);
    i = end;
    at = end - 1;
  }
  r.append(msg, i, std::string::npos);
  while (!r.empty() && (r.back() == '.' || r.back() == '!' || r.back() == ' ')) r.pop_back();
  if (!r.empty()) r[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(r[0])));
  return r;
}

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

}  // namespace

struct Expression::Impl {
  std::string text;
  std::vector<std::string> variables;
  std::vector<double> values;  // never resized after construction: the parser points into it
  std::vector<bool> used;
  mu::Parser parser;
  bool constant = false;
  double constant_value = 0.0;

  Impl(std::string t, std::vector<std::string> vars)
      : text(std::move(t)),
        variables(std::move(vars)),
        values(variables.size(), 0.0),
        used(variables.size(), false) {
    compile();
  }

  std::vector<std::string> all_function_names() const {
    std::vector<std::string> names;
    for (const auto& kv : parser.GetFunDef()) names.push_back(kv.first);
    return names;
  }

  [[noreturn]] void fail(int position, const std::string& message) const {
    throw ExpressionError(text, position, message);
  }

  void check_variables() {
    const auto names = all_function_names();
    const std::unordered_set<std::string> functions(names.begin(), names.end());
    std::unordered_set<std::string> seen;
    for (std::size_t k = 0; k < variables.size(); ++k) {
      const auto& v = variables[k];
      auto bad = [&](const std::string& why) {
        throw ExpressionError(
            text, 0, "invalid variable name " + quoted(v) + " for " + quoted(text) + ": " + why);
      };
      if (!is_name(v)) bad("names are letters, digits and _, starting with a letter or _");
      if (v == "pi" || v == "e" || v == "_pi" || v == "_e") bad("it is a constant");
      if (functions.count(v) > 0) bad("it is a function");
      if (!seen.insert(v).second) bad("declared twice");
    }
  }

  // muparser accepts "x = 3" (assignment to a variable); a deck formula must not change its
  // own inputs, so a lone '=' is an error.
  void reject_assignment() const {
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '=') continue;
      const char prev = i > 0 ? text[i - 1] : '\0';
      const char next = i + 1 < text.size() ? text[i + 1] : '\0';
      if (next == '=') {
        ++i;  // "=="
        continue;
      }
      if (prev == '<' || prev == '>' || prev == '!') continue;
      fail(static_cast<int>(i) + 1, "syntax error at position " + std::to_string(i + 1) + " in " +
                                        quoted(text) +
                                        ": assignment \"=\" is not allowed (use == to compare)");
    }
  }

  [[noreturn]] void translate(const mu::Parser::exception_type& e) const {
    // 1-based; muparser may point past the end for "unexpected end": clamp to just after it.
    const int pos = e.GetPos() >= 0
                        ? std::min(static_cast<int>(e.GetPos()), static_cast<int>(text.size())) + 1
                        : 0;
    const std::string token = e.GetToken();
    const std::string at =
        (pos > 0 ? " at position " + std::to_string(pos) : std::string()) + " in " + quoted(text);
    if (e.GetCode() == mu::ecUNEXPECTED_EOF && text.find_first_not_of(" \t") == std::string::npos) {
      fail(0, "expression is empty");
    }
    if (e.GetCode() == mu::ecEMPTY_EXPRESSION) fail(0, "expression is empty");
    if (e.GetCode() == mu::ecUNASSIGNABLE_TOKEN && is_name(token)) {
      // An identifier muparser does not know: a function if "(" follows, else a variable.
      std::size_t after = static_cast<std::size_t>(std::max(0, e.GetPos())) + token.size();
      while (after < text.size() && std::isspace(static_cast<unsigned char>(text[after]))) ++after;
      const bool is_call = after < text.size() && text[after] == '(';
      std::vector<std::string> candidates;
      std::string message;
      if (is_call) {
        candidates = all_function_names();
        message = "unknown function " + quoted(token) + at;
      } else {
        candidates = variables;
        candidates.push_back("pi");
        candidates.push_back("e");
        message = "unknown variable " + quoted(token) + at + ": declared variables: " +
                  (variables.empty() ? std::string("none") : join_abbreviated(variables));
      }
      const std::string guess = closest_match(token, candidates);
      if (!guess.empty()) message += " (did you mean " + quoted(guess) + "?)";
      fail(pos, message);
    }
    fail(pos, "syntax error" + at + ": " + reason_of(e.GetMsg()));
  }

  void compile() {
    check_variables();
    reject_assignment();
    try {
      // muparser's defaults are '.' and ','. SetDecSep() must not be called: it rewrites a
      // static locale shared by all parsers, a data race when threads compile formulas.
      parser.DefineConst("pi", kPi);
      parser.DefineConst("e", kE);
      parser.DefineFun("floor", fn_floor);
      parser.DefineFun("ceil", fn_ceil);
      parser.DefineFun("erf", fn_erf);
      parser.DefineFun("erfc", fn_erfc);
      parser.DefineFun("fmod", fn_fmod);
      parser.DefineFun("pow", fn_pow);
      parser.DefineFun("gamma", fn_gamma);
      for (std::size_t k = 0; k < variables.size(); ++k) {
        parser.DefineVar(variables[k], &values[k]);
      }
      parser.SetExpr(text);
      // SetExpr only stores the text; the first Eval parses it and reports syntax errors.
      const double v = parser.Eval();
      if (parser.GetNumResults() != 1) {
        fail(0, "expression " + quoted(text) + " gives " + std::to_string(parser.GetNumResults()) +
                    " comma-separated values; expected one");
      }
      const auto used_map = parser.GetUsedVar();
      bool any = false;
      for (std::size_t k = 0; k < variables.size(); ++k) {
        used[k] = used_map.count(variables[k]) > 0;
        any = any || used[k];
      }
      constant = !any;
      constant_value = v;
    } catch (const mu::Parser::exception_type& e) {
      translate(e);
    }
  }

  double eval() {
    try {
      return parser.Eval();
    } catch (const mu::Parser::exception_type& e) {
      translate(e);
    }
  }
};

Expression::Expression() : impl_(std::make_unique<Impl>("0", std::vector<std::string>{})) {}

Expression::Expression(std::string text, std::vector<std::string> variables)
    : impl_(std::make_unique<Impl>(std::move(text), std::move(variables))) {}

Expression::Expression(const Expression& other)
    : impl_(std::make_unique<Impl>(other.impl_->text, other.impl_->variables)) {}

Expression& Expression::operator=(const Expression& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(other.impl_->text, other.impl_->variables);
  return *this;
}

Expression::Expression(Expression&& other) noexcept : impl_(std::move(other.impl_)) {}

Expression& Expression::operator=(Expression&& other) noexcept {
  std::swap(impl_, other.impl_);
  return *this;
}

Expression::~Expression() = default;

const std::string& Expression::text() const {
  return impl_->text;
}
const std::vector<std::string>& Expression::variables() const {
  return impl_->variables;
}

bool Expression::uses(std::string_view variable) const {
  for (std::size_t k = 0; k < impl_->variables.size(); ++k) {
    if (impl_->variables[k] == variable) return impl_->used[k];
  }
  return false;
}

bool Expression::is_constant() const {
  return impl_->constant;
}

double Expression::evaluate(const double* values) const {
  if (impl_->constant) return impl_->constant_value;
  std::copy(values, values + impl_->values.size(), impl_->values.begin());
  return impl_->eval();
}

double Expression::operator()(std::initializer_list<double> values) const {
  if (values.size() != arity()) {
    throw std::invalid_argument("expression " + quoted(text()) + " takes " +
                                std::to_string(arity()) + " values, got " +
                                std::to_string(values.size()));
  }
  return evaluate(values.begin());
}

double Expression::operator()(const std::vector<double>& values) const {
  if (values.size() != arity()) {
    throw std::invalid_argument("expression " + quoted(text()) + " takes " +
                                std::to_string(arity()) + " values, got " +
                                std::to_string(values.size()));
  }
  return evaluate(values.data());
}

void Expression::evaluate_bulk(std::size_t n, const std::vector<Input>& inputs, double* out) const {
  if (inputs.size() != arity()) {
    throw std::invalid_argument("expression " + quoted(text()) + " takes " +
                                std::to_string(arity()) + " input columns, got " +
                                std::to_string(inputs.size()));
  }
  if (impl_->constant) {
    std::fill(out, out + n, impl_->constant_value);
    return;
  }
  auto& values = impl_->values;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].data == nullptr) values[k] = inputs[k].value;
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (inputs[k].data != nullptr) values[k] = inputs[k].data[i * inputs[k].stride];
    }
    out[i] = impl_->eval();
  }
}

std::vector<std::string> Expression::constant_names() {
  return {"pi", "e"};
}

std::vector<std::string> Expression::function_names() {
  const Expression probe;
  auto names = probe.impl_->all_function_names();
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace fracmfg::core
