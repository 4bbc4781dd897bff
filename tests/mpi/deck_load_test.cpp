// Deck::load is collective: rank 0 reads, every rank parses the same text. All ranks get
// equal configs from a good deck and the same DeckError from a bad one, without hanging.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/io/deck.hpp"

namespace fs = std::filesystem;
using fracmfg::DeckError;
using fracmfg::io::Deck;

namespace {

fs::path source_dir() {
  const char* root = std::getenv("FRACMFG_SOURCE_DIR");
  return root != nullptr ? fs::path(root) : fs::current_path();
}

// True on every rank when `text` is the same on every rank.
bool same_on_all_ranks(const std::string& text) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = static_cast<int>(text.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string root_text = text;
  root_text.resize(static_cast<std::size_t>(n));
  MPI_Bcast(root_text.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
  int mine = root_text == text ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// what() of the DeckError thrown by Deck::load (on this rank), or a description.
std::string load_error(const std::string& path) {
  try {
    Deck::load(MPI_COMM_WORLD, path);
  } catch (const DeckError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a DeckError: ") + e.what();
  }
  return "no error";
}

}  // namespace

TEST(DeckLoad, EveryRankGetsTheSameConfigs) {
  const std::string path = (source_dir() / "inputs" / "crowd_2d-ci.yaml").string();
  const Deck deck = Deck::load(MPI_COMM_WORLD, path);
  EXPECT_EQ(deck.file(), path);
  EXPECT_TRUE(same_on_all_ranks(deck.text()));
  EXPECT_TRUE(same_on_all_ranks(deck.resolved_yaml()));
  // Every rank's configs equal those of a local read of the same file.
  const Deck local = Deck::from_file(path);
  EXPECT_TRUE(deck.mfg() == local.mfg());
  EXPECT_TRUE(deck.execution() == local.execution());
  EXPECT_TRUE(deck.output() == local.output());
  EXPECT_EQ(deck.mfg().dimension(), 2);
  EXPECT_EQ(deck.mfg().grid.points, (std::vector<int>{24, 24}));
}

TEST(DeckLoad, BadDeckThrowsTheSameErrorOnEveryRank) {
  const std::string path =
      (source_dir() / "tests" / "unit" / "decks" / "bad" / "points_below_minimum.yaml").string();
  const std::string error = load_error(path);
  EXPECT_EQ(error, path + ":5:22: mfg.grid.points[1]: expected an integer >= 3, got -3");
  EXPECT_TRUE(same_on_all_ranks(error));
}

TEST(DeckLoad, MissingFileThrowsOnEveryRank) {
  const std::string path = (source_dir() / "inputs" / "no_such_deck.yaml").string();
  const std::string error = load_error(path);
  EXPECT_EQ(error, path + ": cannot read the deck: no such file");
  EXPECT_TRUE(same_on_all_ranks(error));
}

TEST(DeckLoad, BinaryFileThrowsOnEveryRank) {
  const std::string path =
      (source_dir() / "tests" / "unit" / "decks" / "bad" / "binary_garbage.yaml").string();
  const std::string error = load_error(path);
  EXPECT_EQ(error, path + ":1:8: binary data (NUL byte) in the deck; a deck must be UTF-8 text");
  EXPECT_TRUE(same_on_all_ranks(error));
}
