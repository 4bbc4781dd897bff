// Room for the output: the free-space check before the solve (H5Writer::check_output_path
// with an estimate, the solvers' *_output_bytes estimates) and a write that fails during the
// run (here: the process's file size limit, which makes writes fail with EFBIG as a full disk
// makes them fail with ENOSPC): one WriteError naming the file and the system's reason, the
// temporary file removed, nothing under the final name, an older file of that name intact.
#include <gtest/gtest.h>
#include <mpi.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/frac/fode_run.hpp"
#include "fracmfg/frac/fpde_run.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/io/h5_reader.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "fracmfg/mfg/output_size.hpp"
#include "mpi/h5_helpers/h5_test_util.hpp"

namespace fs = std::filesystem;
using fracmfg::IoError;
using fracmfg::io::format_bytes;
using fracmfg::io::H5Reader;
using fracmfg::io::H5Writer;
using fracmfg::io::OutputConfig;
using fracmfg::io::space_needed;
using fracmfg::io::WriteError;

namespace {

constexpr std::uint64_t kMiB = 1u << 20;

std::string fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::path(testing::TempDir()) / ("h5_space_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::uint64_t free_bytes(const std::string& dir) {
  struct statvfs vfs {};
  EXPECT_EQ(::statvfs(dir.c_str(), &vfs), 0);
  return static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// The process's file size limit lowered for its lifetime, with SIGXFSZ ignored so that a
/// write past the limit fails with EFBIG instead of killing the process.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(std::uint64_t bytes) {
    EXPECT_EQ(::getrlimit(RLIMIT_FSIZE, &saved_), 0);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lower = saved_;
    lower.rlim_cur = static_cast<rlim_t>(bytes);
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &lower), 0) << std::strerror(errno);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  struct rlimit saved_ {};
  void (*old_handler_)(int) = nullptr;
};

}  // namespace

TEST(H5SpaceCheck, FormatBytesUsesDecimalUnitsWithOneDecimal) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(999), "999 B");
  EXPECT_EQ(format_bytes(1500), "1.5 kB");
  EXPECT_EQ(format_bytes(12'300'000), "12.3 MB");
  EXPECT_EQ(format_bytes(999'999), "1.0 MB");
  EXPECT_EQ(format_bytes(4'000'000'000ULL), "4.0 GB");
}

TEST(H5SpaceCheck, NeededSpaceIsTheEstimatePlusTenPercentAndOneMiB) {
  EXPECT_EQ(space_needed(0), kMiB);
  EXPECT_EQ(space_needed(10 * kMiB), 11 * kMiB + kMiB);
}

TEST(H5SpaceCheck, ResultsLargerThanTheFreeSpaceFailBeforeAnythingIsWritten) {
  const std::string dir = fresh_dir("toolarge");
  const std::string path = dir + "/out.h5";
  const std::uint64_t free = free_bytes(dir);
  const std::uint64_t expected = 2 * free + 100 * kMiB;
  try {
    H5Writer::check_output_path(MPI_COMM_WORLD, path, expected);
    ADD_FAILURE() << "no IoError for " << format_bytes(expected) << " with " << format_bytes(free)
                  << " free";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(contains(what, path + ": the results need about " + format_bytes(expected)))
        << what;
    EXPECT_TRUE(contains(what, "the file system has ")) << what;
    EXPECT_TRUE(contains(what, " free")) << what;
  }
  EXPECT_TRUE(fs::is_empty(dir)) << "the check left a file behind";
  // The same path with a small estimate, and without one, passes.
  EXPECT_NO_THROW(H5Writer::check_output_path(MPI_COMM_WORLD, path, 1000));
  EXPECT_NO_THROW(H5Writer::check_output_path(MPI_COMM_WORLD, path));
}

TEST(H5SpaceCheck, FilesOnOneFileSystemAreCountedTogether) {
  const std::string dir = fresh_dir("together");
  const std::uint64_t free = free_bytes(dir);
  ASSERT_GT(free, 100 * kMiB) << "the test needs 100 MB free in " << dir;
  // Each one fits (0.6 x 1.1 of the free space), both together do not (1.32 x).
  const std::uint64_t each = free / 10 * 6;
  EXPECT_NO_THROW(H5Writer::check_output_paths(MPI_COMM_WORLD, {{dir + "/a.h5", each}}));
  EXPECT_NO_THROW(H5Writer::check_output_paths(MPI_COMM_WORLD, {{dir + "/b.chk.h5", each}}));
  try {
    H5Writer::check_output_paths(MPI_COMM_WORLD,
                                 {{dir + "/a.h5", each}, {dir + "/b.chk.h5", each}});
    ADD_FAILURE() << "two files of " << format_bytes(each) << " each passed with "
                  << format_bytes(free) << " free";
  } catch (const IoError& e) {
    EXPECT_TRUE(contains(e.what(), dir + "/a.h5: the results need about")) << e.what();
    EXPECT_TRUE(contains(e.what(), "'" + dir + "/b.chk.h5' about")) << e.what();
  }
}

TEST(H5SpaceCheck, SkipVariableTurnsTheComparisonOffButNotThePathCheck) {
  const std::string dir = fresh_dir("skip");
  const std::uint64_t expected = 2 * free_bytes(dir) + 100 * kMiB;
  ASSERT_EQ(::setenv("FRACMFG_SKIP_SPACE_CHECK", "1", 1), 0);
  EXPECT_NO_THROW(H5Writer::check_output_path(MPI_COMM_WORLD, dir + "/out.h5", expected));
  const std::string blocker = dir + "/file";
  { std::ofstream(blocker) << "x"; }
  EXPECT_THROW(H5Writer::check_output_path(MPI_COMM_WORLD, blocker + "/out.h5", 1), IoError);
  ::unsetenv("FRACMFG_SKIP_SPACE_CHECK");
  EXPECT_THROW(H5Writer::check_output_path(MPI_COMM_WORLD, dir + "/out.h5", expected), IoError);
}

TEST(H5SpaceCheck, EstimatesCoverTheDataAndGrowWithGridAndLevels) {
  OutputConfig out;
  out.every = 1;
  fracmfg::io::MfgConfig mfg;
  mfg.grid.points = {200};
  mfg.time.steps = 50;
  const auto small = fracmfg::mfg::mfg_output_bytes(mfg, out);
  EXPECT_GE(small.results, 2u * 51 * 200 * 8);  // u and m at 51 levels
  EXPECT_EQ(small.checkpoints, 0u);             // no checkpoints in this deck
  out.checkpoint_every = 5;
  const auto with_ck = fracmfg::mfg::mfg_output_bytes(mfg, out);
  EXPECT_GE(with_ck.checkpoints, 2u * 2 * 51 * 200 * 8);  // two files of every level
  mfg.iteration.anderson = 3;
  EXPECT_GE(fracmfg::mfg::mfg_output_bytes(mfg, out).checkpoints, 8 * with_ck.checkpoints / 2);
  mfg.grid.points = {200, 100};
  const auto big = fracmfg::mfg::mfg_output_bytes(mfg, out);
  EXPECT_GE(big.results, 2u * 51 * 200 * 100 * 8);
  EXPECT_LT(big.results, 2u * 51 * 200 * 100 * 8 * 11 / 10 + 2 * kMiB);
  out.every = 10;  // levels 0, 10, ..., 50
  EXPECT_LT(fracmfg::mfg::mfg_output_bytes(mfg, out).results,
            2u * 6 * 200 * 100 * 8 * 11 / 10 + 2 * kMiB);

  fracmfg::io::FpdeConfig fpde;
  fpde.grid.points = {1000};
  fpde.time.steps = 100;
  OutputConfig fout;
  fout.every = 10;
  const auto f = fracmfg::frac::fpde_output_bytes(fpde, fout);
  EXPECT_GE(f.results, 11u * 1000 * 8);
  EXPECT_EQ(f.checkpoints, 0u);
  const auto stopped = fracmfg::frac::fpde_output_bytes(fpde, fout, 50);  // -fpde_stop_at
  EXPECT_GE(stopped.checkpoints, 2u * 3 * 1000 * 8);  // u, the history sum, >= 1 SOE term
  fpde.history.method = fracmfg::io::FpdeConfig::History::Method::direct;
  EXPECT_GE(fracmfg::frac::fpde_output_bytes(fpde, fout, 50).checkpoints, 2u * 102 * 1000 * 8);

  fracmfg::io::FodeConfig fode;
  fode.rhs.assign(3, {});
  fode.steps = 1000;
  OutputConfig oout;
  oout.every = 100;
  EXPECT_GE(fracmfg::frac::fode_output_bytes(fode, oout).results, 11u * 3 * 8);
  EXPECT_EQ(fracmfg::frac::fode_output_bytes(fode, oout).checkpoints, 0u);
}

TEST(H5SpaceCheck, FodeEstimateIsAnUpperBoundOfTheFileWritten) {
  const char* src = std::getenv("FRACMFG_SOURCE_DIR");
  const std::string deck_file =
      std::string(src != nullptr ? src : ".") + "/inputs/fode_relaxation-ci.yaml";
  const auto deck = fracmfg::io::Deck::load(PETSC_COMM_WORLD, deck_file);
  const std::string path = fresh_dir("fode") + "/relaxation.h5";
  fracmfg::core::Logger quiet(0, fracmfg::core::LogLevel::warn, false);
  fracmfg::frac::run_fode_deck(PETSC_COMM_WORLD, deck, nullptr, quiet, path, 0.0);
  const std::uint64_t actual = fs::file_size(path);
  const std::uint64_t estimate =
      fracmfg::frac::fode_output_bytes(deck.fode(), deck.output()).results;
  EXPECT_GE(estimate, actual);
  EXPECT_LT(estimate, 4 * actual + 512 * 1024) << "estimate " << estimate << ", file " << actual;
}

TEST(H5SpaceCheck, FailedWriteRemovesTheTemporaryFileAndKeepsTheOlderFile) {
  const std::string dir = fresh_dir("efbig");
  const std::string path = dir + "/out.h5";
  {  // an older, complete file of the final name
    H5Writer w(MPI_COMM_WORLD, path);
    w.write_string("generation", "first");
    w.commit();
  }
  fracmfg::test::DaField f;
  fracmfg::test::make_field(f, PETSC_COMM_WORLD, 2, 512, 256, 1, 1);  // 1 MiB per step
  fracmfg::test::fill_with(f, 1.0);
  std::string temporary;
  std::string message;
  {
    const FileSizeLimit limit(2 * kMiB + 100000);
    try {
      H5Writer w(MPI_COMM_WORLD, path);
      temporary = w.temporary_path();
      for (int step = 0; step < 8; ++step) w.write_field("u", f.da, f.v, step, 0.1 * step);
      w.commit();
      ADD_FAILURE() << "8 MiB written under a 2 MiB file size limit";
    } catch (const WriteError& e) {
      message = e.what();
    }
  }
  EXPECT_TRUE(contains(message, "cannot write output file '" + path + "': File too large"))
      << message;
  EXPECT_TRUE(contains(message, "the incomplete file was removed")) << message;
  EXPECT_FALSE(contains(message, "H5D")) << "an HDF5 error stack in: " << message;
  EXPECT_FALSE(temporary.empty());
  EXPECT_FALSE(fs::exists(temporary)) << "temporary file left behind";
  H5Reader r(MPI_COMM_WORLD, path);
  EXPECT_EQ(r.read_string("generation"), "first");
}
