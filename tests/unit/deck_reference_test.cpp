// docs/deck_reference.md is generated from the deck schema; this test fails when the two
// drift apart. Regenerate with:  fracmfg validate --reference > docs/deck_reference.md
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "fracmfg/io/schema.hpp"

namespace fs = std::filesystem;
using namespace fracmfg::io;

namespace {

fs::path source_dir() {
  const char* root = std::getenv("FRACMFG_SOURCE_DIR");
  return root != nullptr ? fs::path(root) : fs::current_path();
}

const Field* find(const std::string& dotted) {
  const Field* f = &deck_schema();
  std::size_t start = 0;
  while (f != nullptr && start <= dotted.size()) {
    const std::size_t dot = std::min(dotted.find('.', start), dotted.size());
    f = f->child(dotted.substr(start, dot - start));
    start = dot + 1;
  }
  return f;
}

template <class F>
void visit(const Field& section, const std::string& path, F&& f) {
  for (const auto& c : section.children()) {
    const std::string p = path.empty() ? c.name() : path + "." + c.name();
    f(c, p);
    if (c.is_section()) visit(c, p, f);
  }
}

}  // namespace

TEST(DeckReference, DocsFileMatchesTheSchema) {
  const fs::path doc = source_dir() / "docs" / "deck_reference.md";
  std::ifstream in(doc, std::ios::binary);
  ASSERT_TRUE(in) << "cannot open " << doc;
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(text.str() == deck_reference_markdown())
      << doc << " is out of date; regenerate it with\n"
      << "  fracmfg validate --reference > docs/deck_reference.md";
}

TEST(DeckReference, EverySectionHasATableAndEveryKeyARow) {
  const std::string md = deck_reference_markdown();
  visit(deck_schema(), "", [&md](const Field& f, const std::string& path) {
    if (f.is_section()) {
      EXPECT_NE(md.find("\n## `" + path + "`\n"), std::string::npos) << path;
    }
    EXPECT_NE(md.find("| `" + f.name() + "` |"), std::string::npos) << path;
  });
}

TEST(DeckReference, SchemaIsConsistent) {
  visit(deck_schema(), "", [](const Field& f, const std::string& path) {
    EXPECT_FALSE(f.doc().empty()) << path << " has no description";
    if (!f.is_section()) {
      // Exactly one of: required, a default, or a note saying when it may be left out.
      const int ways = (f.is_required() ? 1 : 0) + (f.has_default() ? 1 : 0) +
                       (f.optional_note().empty() ? 0 : 1);
      EXPECT_EQ(ways, 1) << path;
    }
    if (f.kind() == FieldKind::enumeration) {
      EXPECT_FALSE(f.words().empty()) << path;
    }
    if (f.has_condition()) {
      const Field* target = find(f.condition_path());
      ASSERT_NE(target, nullptr) << path << " depends on unknown " << f.condition_path();
      EXPECT_EQ(target->kind(), FieldKind::enumeration) << path;
      for (const auto& w : f.condition_words()) {
        EXPECT_NE(std::find(target->words().begin(), target->words().end(), w),
                  target->words().end())
            << path << ": " << f.condition_path() << " has no word " << w;
      }
    }
    if (f.min() && f.max()) {
      EXPECT_LE(f.min()->value, f.max()->value) << path;
    }
  });
}

TEST(DeckReference, FormatsRealsShortestAndExactly) {
  EXPECT_EQ(format_real(0.1), "0.1");
  EXPECT_EQ(format_real(10.0), "10");
  EXPECT_EQ(format_real(1e-8), "1e-8");
  EXPECT_EQ(format_real(100000.0), "100000");
  EXPECT_EQ(format_real(1e20), "1e20");
  EXPECT_EQ(format_yaml_real(10.0), "10.0");
  EXPECT_EQ(format_yaml_real(1e-8), "1.0e-8");
  EXPECT_EQ(format_yaml_real(0.25), "0.25");
  for (double v : {1.0 / 3.0, 0.3 + 0.6, 2.0e-5, -123456.789, 6.02214076e23}) {
    EXPECT_EQ(std::strtod(format_real(v).c_str(), nullptr), v) << format_real(v);
  }
}
