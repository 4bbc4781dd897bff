// Malformed decks: each file in tests/unit/decks/bad must throw a DeckError whose what() is
// exactly the message stored with it, either on the deck's first line
// ("# expect: <message>") or, for files that cannot hold a comment, in <name>.expect.
// Decks are read from their own folder by bare file name, so messages start with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/io/deck.hpp"

namespace fs = std::filesystem;
using fracmfg::DeckError;
using fracmfg::io::Deck;

namespace {

fs::path bad_dir() {
  const char* root = std::getenv("FRACMFG_SOURCE_DIR");
  return fs::path(root != nullptr ? root : ".") / "tests" / "unit" / "decks" / "bad";
}

std::vector<std::string> bad_decks() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(bad_dir(), ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string expected_message(const std::string& name) {
  const fs::path deck = bad_dir() / name;
  fs::path sidecar = deck;
  sidecar.replace_extension(".expect");
  std::string line;
  if (fs::exists(sidecar)) {
    std::ifstream in(sidecar);
    std::getline(in, line);
    return line;
  }
  std::ifstream in(deck, std::ios::binary);
  std::getline(in, line);
  const std::string tag = "# expect: ";
  if (line.compare(0, tag.size(), tag) != 0) return "";
  return line.substr(tag.size());
}

// Runs the current directory change for one call and restores it.
class InDirectory {
 public:
  explicit InDirectory(const fs::path& dir) : saved_(fs::current_path()) { fs::current_path(dir); }
  ~InDirectory() { fs::current_path(saved_); }
  InDirectory(const InDirectory&) = delete;
  InDirectory& operator=(const InDirectory&) = delete;

 private:
  fs::path saved_;
};

// what() of the DeckError that reading `path` throws; a description otherwise.
std::string error_reading(const std::string& path) {
  try {
    Deck::from_file(path);
  } catch (const DeckError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a DeckError: ") + e.what();
  }
  return "no error";
}

std::string test_name(const testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

}  // namespace

class BadDeck : public testing::TestWithParam<std::string> {};

TEST_P(BadDeck, ThrowsTheExpectedDeckError) {
  const std::string name = GetParam();
  const std::string expected = expected_message(name);
  ASSERT_FALSE(expected.empty()) << name << " has no '# expect: ' line and no .expect file";
  InDirectory here(bad_dir());
  EXPECT_EQ(error_reading(name), expected);
}

INSTANTIATE_TEST_SUITE_P(Decks, BadDeck, testing::ValuesIn(bad_decks()), test_name);

TEST(BadDecks, CollectionCoversAtLeastThirtyCases) {
  EXPECT_GE(bad_decks().size(), 30u) << "looked in " << bad_dir();
}

TEST(BadDecks, ErrorPartsMatchTheMessage) {
  InDirectory here(bad_dir());
  try {
    Deck::from_file("points_below_minimum.yaml");
    FAIL() << "no error";
  } catch (const DeckError& e) {
    EXPECT_EQ(e.file(), "points_below_minimum.yaml");
    EXPECT_EQ(e.line(), 5);
    EXPECT_EQ(e.column(), 22);
    EXPECT_EQ(e.key(), "mfg.grid.points[1]");
    EXPECT_EQ(e.message(), "expected an integer >= 3, got -3");
    EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::usage);
  }
}

TEST(BadDecks, MissingFileIsADeckError) {
  InDirectory here(bad_dir());
  EXPECT_EQ(error_reading("no_such_deck.yaml"),
            "no_such_deck.yaml: cannot read the deck: no such file");
}

TEST(BadDecks, DirectoryIsADeckError) {
  const fs::path dir = fs::temp_directory_path() / "fracmfg_deck_bad_test_dir.yaml";
  fs::create_directories(dir);
  InDirectory here(dir.parent_path());
  EXPECT_EQ(error_reading(dir.filename().string()),
            dir.filename().string() + ": is a directory, not a deck file");
  fs::remove(dir);
}

TEST(BadDecks, FileNameIsReportedAsGiven) {
  // The same deck through a relative path with folders: the message keeps the path.
  const fs::path root = bad_dir().parent_path();
  InDirectory here(root);
  EXPECT_EQ(error_reading("bad/zero_horizon.yaml"),
            "bad/zero_horizon.yaml:6:19: mfg.time.horizon: expected a real number > 0, got 0");
}

TEST(BadDecks, FromStringUsesTheGivenName) {
  try {
    Deck::from_string("problem: mfg\nmfg: {diffusion: 1}\n", "inline.yaml");
    FAIL() << "no error";
  } catch (const DeckError& e) {
    EXPECT_EQ(std::string(e.what()),
              "inline.yaml:2:1: mfg.domain: missing required section (with length, boundary)");
  }
}

// Inputs too large to keep as files, built here.

std::string error_parsing(const std::string& text) {
  try {
    Deck::from_string(text, "big.yaml");
  } catch (const DeckError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a DeckError: ") + e.what();
  }
  return "no error";
}

TEST(BadDecks, HugeListIsRefusedBeforeItsNodesAreBuilt) {
  // 5 million items: about 3 GB as yaml-cpp nodes; refused after 1003.
  std::string text = "problem: mfg\nmfg:\n  grid:\n    points: [3";
  text.reserve(text.size() + 15'000'000);
  for (int i = 1; i < 5'000'000; ++i) text += ", 3";
  text += "]\n";
  EXPECT_EQ(error_parsing(text),
            "big.yaml:4:13: mfg.grid.points: expected a list of 1 to 3 integers >= 3, got more "
            "than 1003 items");
}

TEST(BadDecks, ListLongerThanTheReaderTakesIsRefused) {
  std::string text = "problem: fode\nunknown: [0";
  for (int i = 0; i < 100'000; ++i) text += ",0";
  text += "]\n";
  EXPECT_EQ(error_parsing(text), "big.yaml:2:10: unknown: list too long (more than 100000 items)");
}

TEST(BadDecks, TooManyValuesAreRefusedBeforeTheyAreBuilt) {
  // Lists within the per-list limit, but many of them: refused by the total count.
  std::string text = "problem: fode\n";
  for (int k = 0; k < 6; ++k) {
    text += "list" + std::to_string(k) + ": [0";
    for (int i = 1; i < 99'999; ++i) text += ",0";
    text += "]\n";
  }
  EXPECT_EQ(
      error_parsing(text),
      "big.yaml:6:199991: too many values (more than 500000 keys, values and list items in one "
      "deck)");
}

TEST(BadDecks, NestingBeyondYamlCppsOwnLimitIsADeckError) {
  const std::string text = "problem: " + std::string(3000, '[') + std::string(3000, ']') + "\n";
  const std::string message = error_parsing(text);
  EXPECT_NE(message.find("big.yaml:1:41: problem[0]"), std::string::npos) << message;
  EXPECT_NE(message.find(": nested too deeply (at most 32 levels of mappings and lists)"),
            std::string::npos)
      << message;
}

TEST(BadDecks, LongNumberIsRefusedWithoutRecursion) {
  // std::regex recursed per character and overflowed the stack at about 28,000 digits.
  const std::string digits = std::string(100'000, '0') + "5";
  for (const char* key : {"steps", "horizon"}) {
    const std::string text = "problem: fode\nfode:\n  " + std::string(key) + ": " + digits + "\n";
    EXPECT_EQ(
        error_parsing(text),
        "big.yaml:3:" + std::to_string(std::strlen(key) + 5) + ": fode." + key + ": expected " +
            (std::string(key) == "steps" ? "a positive integer" : "a real number > 0") + ", got " +
            digits.substr(0, 57) + "... (a number of 100001 characters; at most 100)");
  }
}

TEST(BadDecks, LongWordsAndKeysGiveShortMessagesPromptly) {
  // No did-you-mean comparison of a megabyte with every candidate, and no megabyte message.
  const std::string junk(1'000'000, 'k');
  const std::string shown = junk.substr(0, 57) + "...";
  EXPECT_EQ(error_parsing("problem: " + junk + "\n"),
            "big.yaml:1:10: problem: expected one of mfg, fode, fpde; got " + shown);
  // YAML takes keys of at most 1024 characters.
  EXPECT_EQ(error_parsing("problem: fode\n" + junk.substr(0, 1000) + ": 1\n"),
            "big.yaml:2:1: " + shown +
                ": unknown key; valid top-level keys: problem, mfg, fode, fpde, execution, "
                "output, logging, petsc");
}

TEST(BadDecks, BadTokenBeforeManyBlanksIsReportedPromptly) {
  // 2 s per 10,000 blanks before the message was cut without a backtracking regex.
  const std::string formula = "exp(-x^2) $" + std::string(9900, ' ');
  const std::string message = error_parsing(
      "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n  grid: {points: "
      "[50]}\n  time: {horizon: 1.0, steps: 20}\n  diffusion: 0.05\n  coupling: {type: log}\n"
      "  initial_density: \"" +
      formula + "\"\n");
  EXPECT_EQ(message.rfind("big.yaml:8:20: mfg.initial_density: syntax error at position 11 in \"" +
                              formula + "\": unexpected token \"$",
                          0),
            0u)
      << message.substr(0, 120);
}

TEST(BadDecks, TypoAtTheTopIsReportedBeforeTheMissingProblem) {
  EXPECT_EQ(error_parsing("problme: mfg\n"),
            "big.yaml:1:1: problme: unknown key (did you mean problem?); valid top-level keys: "
            "problem, mfg, fode, fpde, execution, output, logging, petsc");
}

TEST(BadDecks, IntegerKeysTakeOnlyExactWholeNumbers) {
  const auto steps = [](const std::string& value) {
    return error_parsing("problem: fode\nfode:\n  order: [0.5]\n  horizon: 1.0\n  steps: " + value +
                         "\n  rhs: [\"-y1\"]\n  initial: [1.0]\n");
  };
  for (const char* ok : {"100", "1e2", "2.0", "+7", "0.5e1", "1000000e-4", "12.50e1"}) {
    EXPECT_EQ(steps(ok), "no error") << ok;
  }
  for (const char* bad : {"0.99999999999999999999", "1.5", "1e-1", "2.00000000000000000001"}) {
    EXPECT_EQ(steps(bad),
              "big.yaml:5:10: fode.steps: expected a positive integer, got " + std::string(bad))
        << bad;
  }
  EXPECT_EQ(steps("1e30"),
            "big.yaml:5:10: fode.steps: expected a positive integer, got 1e30 "
            "(too large)");
  EXPECT_EQ(steps("1e999999999999"),
            "big.yaml:5:10: fode.steps: expected a positive integer, got 1e999999999999 (too "
            "large)");
  EXPECT_EQ(steps("3000000000"),
            "big.yaml:5:10: fode.steps: expected a positive integer, got "
            "3000000000 (too large; at most 2147483647)");
  EXPECT_EQ(steps("!!int 100"),
            "big.yaml:5:10: fode.steps: expected a positive integer, got !!int 100 (a tagged "
            "value)");
  EXPECT_EQ(steps("1e"), "big.yaml:5:10: fode.steps: expected a positive integer, got 1e");
}
