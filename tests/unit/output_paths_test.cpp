// The output path check (io/output_paths.hpp): the deck, the results, their XDMF sidecar and
// the checkpoint are four different files, also through links, and no target exists as
// anything but a regular file. The plain cases are bad decks (tests/unit/decks/bad/output_*);
// these need files made on the spot (links, FIFOs, a deck named like a sidecar).
#include "fracmfg/io/output_paths.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "fracmfg/core/error.hpp"
#include "fracmfg/io/checkpoint.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/io/h5_writer.hpp"

namespace fs = std::filesystem;
using fracmfg::DeckError;
using fracmfg::IoError;
using fracmfg::io::Deck;
using fracmfg::io::OutputConfig;

namespace {

const std::string kDeck = R"(problem: fode
fode: {order: 0.8, horizon: 1.0, steps: 10, rhs: ["-y1"], initial: [1.0]}
)";

class OutputPaths : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fracmfg_output_paths_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    deck_ = (dir_ / "run.yaml").string();
    std::ofstream(deck_) << kDeck;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The DeckError of reading the deck with this output section, or "" when it is accepted.
  std::string error_with(const std::string& output, const std::string& deck_name = "") const {
    const std::string name = deck_name.empty() ? deck_ : deck_name;
    try {
      Deck::from_string(kDeck + "output: " + output + "\n", name);
    } catch (const DeckError& e) {
      return e.key() + ": " + e.message();
    }
    return "";
  }
  std::string at(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  std::string deck_;
};

}  // namespace

TEST(OutputSidecar, IsTheResultsPathWithTheExtensionXmf) {
  EXPECT_EQ(fracmfg::io::xdmf_sidecar_path("results/crowd.h5"), "results/crowd.xmf");
  EXPECT_EQ(fracmfg::io::xdmf_sidecar_path("out"), "out.xmf");
  EXPECT_EQ(fracmfg::io::xdmf_sidecar_path("a.b/r.xmf"), "a.b/r.xmf");
}

TEST_F(OutputPaths, DistinctNewFilesAreAccepted) {
  EXPECT_EQ(error_with("{file: " + at("r.h5") + "}"), "");
  EXPECT_EQ(error_with("{file: " + at("r.h5") + ", checkpoint_file: " + at("c.h5") + "}"), "");
}

TEST_F(OutputPaths, AnExistingRegularFileMayBeReplaced) {
  std::ofstream(at("r.h5")) << "old";
  std::ofstream(at("r.xmf")) << "old";
  EXPECT_EQ(error_with("{file: " + at("r.h5") + "}"), "");
}

TEST_F(OutputPaths, ASymbolicLinkToTheDeckIsTheDeck) {
  fs::create_symlink(deck_, at("link.h5"));
  const std::string e = error_with("{file: " + at("link.h5") + "}");
  EXPECT_NE(e.find("output.file: '" + at("link.h5") + "' is the deck '" + deck_ + "'"),
            std::string::npos)
      << e;
}

TEST_F(OutputPaths, AHardLinkToTheDeckIsTheDeck) {
  fs::create_hard_link(deck_, at("hard.h5"));
  const std::string e = error_with("{checkpoint_file: " + at("hard.h5") + "}");
  EXPECT_NE(e.find("output.checkpoint_file: '" + at("hard.h5") + "' is the deck"),
            std::string::npos)
      << e;
}

TEST_F(OutputPaths, ADeckNamedLikeTheSidecarIsRefused) {
  const std::string deck = at("run.xmf");
  std::ofstream(deck) << kDeck;
  const std::string e = error_with("{file: " + at("run.h5") + "}", deck);
  EXPECT_NE(e.find("output.file: the XDMF sidecar of the results '" + deck + "' is the deck"),
            std::string::npos)
      << e;
}

TEST_F(OutputPaths, AFifoIsNotATarget) {
  ASSERT_EQ(::mkfifo(at("pipe.h5").c_str(), 0600), 0);
  const std::string e =
      error_with("{file: " + at("r.h5") + ", checkpoint_file: " + at("pipe.h5") + "}");
  EXPECT_NE(e.find("output.checkpoint_file: '" + at("pipe.h5") + "' exists and is a FIFO"),
            std::string::npos)
      << e;
}

TEST_F(OutputPaths, ADirectoryAsSidecarIsRefused) {
  fs::create_directories(at("r.xmf"));
  const std::string e = error_with("{file: " + at("r.h5") + "}");
  EXPECT_NE(e.find("output.file: the XDMF sidecar of the results '" + at("r.xmf") +
                   "' exists and is a directory"),
            std::string::npos)
      << e;
}

TEST_F(OutputPaths, TheDefaultsOfADeckAreDistinct) {
  OutputConfig o;
  o.file = at("results/run.h5");
  o.checkpoint_file = at("results/run.chk.h5");
  EXPECT_FALSE(fracmfg::io::find_output_path_problem(deck_, o).has_value());
}

TEST_F(OutputPaths, RenamingOverADeviceIsRefused) {
  EXPECT_THROW(fracmfg::io::require_replaceable("/dev/full"), IoError);
  EXPECT_THROW(fracmfg::io::require_replaceable(dir_.string()), IoError);
  EXPECT_NO_THROW(fracmfg::io::require_replaceable(deck_));
  EXPECT_NO_THROW(fracmfg::io::require_replaceable(at("new.h5")));
  fs::create_symlink(at("nowhere"), at("dangling"));
  EXPECT_NO_THROW(fracmfg::io::require_replaceable(at("dangling")));
}

TEST_F(OutputPaths, SameFileFollowsLinksAndNormalises) {
  fs::create_symlink(deck_, at("link"));
  EXPECT_TRUE(fracmfg::io::same_file(deck_, at("link")));
  EXPECT_TRUE(fracmfg::io::same_file(at("a/../x.h5"), at("x.h5")));
  EXPECT_FALSE(fracmfg::io::same_file(at("x.h5"), at("y.h5")));
}

// The last line of defence: a non-regular file that appears under the final name while a
// file is being written is not replaced at commit; the temporary file goes.
TEST_F(OutputPaths, CommitDoesNotRenameOverAFifo) {
  const std::string path = at("late.h5");
  fracmfg::io::H5Writer out(MPI_COMM_WORLD, path, {"fode", "", "", true});
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_THROW(out.commit(), IoError);
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_FALSE(fs::exists(out.temporary_path()));
}

TEST_F(OutputPaths, CheckpointCommitDoesNotRenameOverAFifo) {
  const std::string path = at("late.chk.h5");
  fracmfg::io::CheckpointWriter ck(MPI_COMM_WORLD, path, 3, 0.5, "fpde");
  ck.add_scalar_int64("n", 1);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_THROW(ck.commit(), IoError);
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_FALSE(fs::exists(ck.temporary_path()));
}
