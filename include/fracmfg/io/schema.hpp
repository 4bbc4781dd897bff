#pragma once
// The declared schema of fracmfg input decks: a tree of sections and fields. Each field has
// a name, a kind, a one-line description, and either "required", a default value, or a note
// saying when it may be left out; numbers carry an inclusive or exclusive range, words the
// list of allowed values, expressions their declared variables. A field may apply only when
// an enumeration elsewhere in the deck has certain values (`only_when`): given otherwise,
// it is an error.
//
// The deck reader (io::Deck) validates against this tree, and deck_reference_markdown()
// renders it as docs/deck_reference.md, so the reference cannot drift from the reader:
//
//   fracmfg validate --reference > docs/deck_reference.md
//
// Schema tables are written one line per field with the builders in io::schema, e.g.
//
//   schema::integer("steps", "number of time steps").at_least(1).required(),
//   schema::choice("boundary", {"periodic", "reflecting"}, "boundary condition").def("periodic"),
//
// Nothing here is collective.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace fracmfg::io {

enum class FieldKind {
  section,          ///< nested keys
  integer,          ///< whole number
  real,             ///< finite real number
  boolean,          ///< true | false (also yes/no, on/off)
  string,           ///< any text
  enumeration,      ///< one word of a declared list
  expression,       ///< formula of declared variables (core::Expression)
  integer_list,     ///< [i, j, ...] with bounded length; each item like `integer`
  real_list,        ///< [a, b, ...] with bounded length; each item like `real`
  expression_list,  ///< [f1, f2, ...]; variables may include an indexed family y1..yd
};

/// One end of a numeric range.
struct Bound {
  double value = 0.0;
  bool inclusive = true;
};

class Field {
 public:
  Field(FieldKind kind, std::string name, std::string doc);

  // --- builders (each returns *this) -------------------------------------------------
  /// The key must be given (a section is required when a field in it is).
  Field& required();
  /// Default value, written as it would be in a deck (e.g. "auto", "1.0e-8", "0").
  Field& def(const char* value);
  Field& def(const std::string& value);
  Field& def(int value);
  Field& def(double value);
  Field& def(bool value);
  /// May be left out and has no fixed default: `note` says what happens (e.g. "required
  /// when some order > 1", or a default computed by the reader like "results/<deck stem>.h5").
  Field& optional(std::string note);
  /// Range of a number, or of each item of a list of numbers.
  Field& at_least(double v);
  Field& greater_than(double v);
  Field& at_most(double v);
  Field& less_than(double v);
  /// Integers are stored as 32-bit ints unless marked wide (64-bit).
  Field& wide();
  /// Kind-specific parts, set by the io::schema builders below.
  Field& set_words(std::vector<std::string> words);
  Field& set_length(std::size_t min_length, std::size_t max_length);
  Field& set_variables(std::vector<std::string> variables, std::string indexed = "");
  /// The field applies only when the enumeration at `path` (dotted, from the top of the
  /// deck) has one of `words`.
  Field& only_when(std::string path, std::vector<std::string> words);

  // --- introspection -------------------------------------------------------------------
  FieldKind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  bool is_section() const { return kind_ == FieldKind::section; }
  bool is_list() const;
  /// Required key, or a section that holds a required key (conditions aside).
  bool is_required() const;
  bool has_default() const { return default_.has_value(); }
  const std::string& default_value() const;  ///< requires has_default()
  const std::string& optional_note() const { return optional_note_; }

  const std::vector<Field>& children() const { return children_; }
  const Field* child(const std::string& name) const;
  Field& add(Field child);  ///< sections only

  const std::vector<std::string>& words() const { return words_; }
  const std::optional<Bound>& min() const { return min_; }
  const std::optional<Bound>& max() const { return max_; }
  bool is_wide() const { return wide_; }
  std::size_t min_length() const { return min_length_; }
  std::size_t max_length() const { return max_length_; }  ///< 0: unbounded

  /// Declared variables of an expression; for an expression list, the fixed ones.
  const std::vector<std::string>& variables() const { return variables_; }
  /// Expression lists: the indexed family ("y" gives y1..yd, d = list length), or "".
  const std::string& indexed_variable() const { return indexed_variable_; }
  /// Variables of an expression (list item) when the list has `length` items.
  /// The variables of a list of `length` items: the fixed ones, then the indexed family's
  /// members and, for one item, the family's bare name (y for y1).
  std::vector<std::string> variables_for(std::size_t length) const;

  bool has_condition() const { return !condition_path_.empty(); }
  const std::string& condition_path() const { return condition_path_; }
  const std::vector<std::string>& condition_words() const { return condition_words_; }

  // --- text used in messages and the reference ----------------------------------------
  /// What a single value must be, as in "expected <...>": "an integer >= 3",
  /// "a real number in (0, 1]", "one of abm, trapezoidal", "a list of 1 or 2 real
  /// numbers > 0", "an expression of x, y".
  std::string expectation() const;
  /// For list fields: what each item must be ("an integer >= 3").
  std::string item_expectation() const;
  /// Short type column: "integer", "list of 1-2 reals", "expression of x, y, t", ...
  std::string type_text() const;
  /// Range column: ">= 1", "(0, 1]", "`abm` \| `trapezoidal`" (Markdown), or "".
  std::string range_markdown() const;
  /// Default column: the default, "required", or the optional note.
  std::string default_markdown() const;

 private:
  FieldKind kind_;
  std::string name_;
  std::string doc_;
  bool required_ = false;
  std::optional<std::string> default_;
  std::string optional_note_;
  std::vector<Field> children_;
  std::vector<std::string> words_;
  std::optional<Bound> min_;
  std::optional<Bound> max_;
  bool wide_ = false;
  std::size_t min_length_ = 0;
  std::size_t max_length_ = 0;
  std::vector<std::string> variables_;
  std::string indexed_variable_;
  std::string condition_path_;
  std::vector<std::string> condition_words_;
};

/// Builders for schema tables.
namespace schema {
Field section(std::string name, std::string doc, std::vector<Field> children);
Field integer(std::string name, std::string doc);
Field real(std::string name, std::string doc);
Field boolean(std::string name, std::string doc);
Field text(std::string name, std::string doc);
Field choice(std::string name, std::vector<std::string> words, std::string doc);
Field expression(std::string name, std::vector<std::string> variables, std::string doc);
/// Lists of min_length..max_length items (max_length 0: unbounded).
Field integers(std::string name, std::size_t min_length, std::size_t max_length, std::string doc);
Field reals(std::string name, std::size_t min_length, std::size_t max_length, std::string doc);
/// A list of expressions of `variables` plus indexed + "1" .. indexed + "d", d = list length.
Field expressions(std::string name, std::vector<std::string> variables, std::string indexed,
                  std::size_t min_length, std::size_t max_length, std::string doc);
}  // namespace schema

/// The whole deck schema (the top-level section, whose name is ""). Immutable.
const Field& deck_schema();

/// The deck reference (docs/deck_reference.md), generated from deck_schema().
std::string deck_reference_markdown();

/// Shortest decimal text that reads back as exactly `v` ("0.1", "1e-08" -> "1e-8").
std::string format_real(double v);
/// As format_real, but always with a decimal point ("1.0", "1.0e-8"), so that YAML 1.2
/// readers (PyYAML, ...) read a float.
std::string format_yaml_real(double v);

}  // namespace fracmfg::io
