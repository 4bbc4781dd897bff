// Atomic output: a writer killed with SIGKILL in the middle of writing leaves nothing under
// the final name, and an earlier file of that name stays intact and readable.
//
// The writer runs in a child process: a GoogleTest death test in "threadsafe" style, which
// re-executes this binary (a fresh process with its own MPI start-up, no MPI use after
// fork) and runs the statement there; the statement kills itself before commit(). The
// child re-runs the test body up to the statement, so the parent marks the child with an
// environment variable and the set-up steps run in the parent only.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fracmfg/io/h5_reader.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "mpi/h5_helpers/h5_test_util.hpp"

namespace fs = std::filesystem;
using fracmfg::io::H5Reader;
using fracmfg::io::H5Writer;
using fracmfg::test::DaField;
using fracmfg::test::make_field;

namespace {

/// Writes a file whose content names its generation: a string, a DMDA field at several
/// steps (values = generation tag) and a distributed array. With kill_before_commit the
/// process records the temporary file's name in `info` and dies by SIGKILL before commit.
void write_generation(const std::string& path, const std::string& generation, double tag,
                      bool kill_before_commit, const std::string& info = {}) {
  fracmfg::io::H5WriterOptions opts;
  opts.problem = "atomic-" + generation;
  H5Writer w(MPI_COMM_WORLD, path, opts);
  w.write_string("generation", generation);
  DaField f;
  make_field(f, PETSC_COMM_WORLD, 2, 64, 48, 1, 1);
  for (int step = 0; step < 4; ++step) {
    fracmfg::test::fill_with(f, tag + step);
    w.write_field("u", f.da, f.v, step, 0.25 * step);
  }
  std::vector<double> big(200000, tag);
  w.write_distributed("big", big.data(), big.size());
  if (kill_before_commit) {
    std::ofstream(info) << w.temporary_path() << '\n';
    std::raise(SIGKILL);  // as a job killed by the scheduler: no unwinding, no cleanup
  }
  w.commit();
}

constexpr const char* kChildMarker = "FRACMFG_H5_ATOMIC_CHILD";

bool in_child() {
  return std::getenv(kChildMarker) != nullptr;
}

/// Runs write_generation(..., kill_before_commit = true) in a child process and checks it
/// died by SIGKILL.
void run_killed_writer(const std::string& path, const std::string& info) {
  setenv(kChildMarker, "1", 1);
  EXPECT_EXIT(write_generation(path, "killed", 2.0, true, info), testing::KilledBySignal(SIGKILL),
              "");
  unsetenv(kChildMarker);
}

std::string generation_of(const std::string& path) {
  H5Reader r(MPI_COMM_SELF, path);
  return r.read_string("generation");
}

class H5Atomic : public testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fracmfg::test::scratch_dir(MPI_COMM_SELF, "atomic_" + name, !in_child());
  }
  std::string dir_;
};

}  // namespace

TEST_F(H5Atomic, CommittedWriterPublishesTheFileUnderItsFinalName) {
  const std::string path = dir_ + "/out.h5";
  write_generation(path, "first", 1.0, false);
  ASSERT_TRUE(fs::exists(path));
  EXPECT_EQ(generation_of(path), "first");
  H5Reader r(MPI_COMM_SELF, path);
  EXPECT_EQ(r.read_array("big").size(), 200000u);
  EXPECT_EQ(r.field_steps("u"), (std::vector<std::int64_t>{0, 1, 2, 3}));
}

TEST_F(H5Atomic, KilledWriterLeavesNoFileUnderTheFinalName) {
  const std::string path = dir_ + "/out.h5";
  const std::string info = dir_ + "/temporary-name.txt";
  run_killed_writer(path, info);
  // The child got as far as writing: its temporary file exists, in the same directory...
  std::string temporary;
  std::ifstream(info) >> temporary;
  ASSERT_FALSE(temporary.empty()) << "the child died before it started writing";
  EXPECT_TRUE(fs::exists(temporary));
  EXPECT_EQ(fs::path(temporary).parent_path(), fs::path(path).parent_path());
  EXPECT_GT(fs::file_size(temporary), 200000u * sizeof(double));
  // ...but nothing was published under the final name, not even the sidecar.
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(dir_ + "/out.xmf"));
  fs::remove(temporary);
}

TEST_F(H5Atomic, KilledWriterLeavesThePreviousFileIntact) {
  const std::string path = dir_ + "/out.h5";
  const std::string info = dir_ + "/temporary-name.txt";
  if (!in_child()) write_generation(path, "previous", 1.0, false);
  const std::string xmf_before = fracmfg::test::read_text(dir_ + "/out.xmf");
  ASSERT_FALSE(xmf_before.empty());
  const auto h5_time_before = fs::last_write_time(path);

  run_killed_writer(path, info);
  std::string temporary;
  std::ifstream(info) >> temporary;
  ASSERT_FALSE(temporary.empty());
  EXPECT_TRUE(fs::exists(temporary));
  EXPECT_NE(fs::path(temporary), fs::path(path));

  // The previous file is untouched and whole: its data reads back as written.
  EXPECT_EQ(fs::last_write_time(path), h5_time_before);
  EXPECT_EQ(generation_of(path), "previous");
  H5Reader r(MPI_COMM_SELF, path);
  EXPECT_EQ(r.attribute_string("/", "problem"), "atomic-previous");
  const std::vector<double> big = r.read_array("big");
  ASSERT_EQ(big.size(), 200000u);
  EXPECT_EQ(big.front(), 1.0);
  EXPECT_EQ(big.back(), 1.0);
  DaField f;
  make_field(f, PETSC_COMM_SELF, 2, 64, 48, 1, 1);
  r.read_level("u", 3, f.da, f.v);
  PetscReal lo = 0.0;
  PetscReal hi = 0.0;
  VecMin(f.v, nullptr, &lo);
  VecMax(f.v, nullptr, &hi);
  EXPECT_EQ(lo, 4.0);
  EXPECT_EQ(hi, 4.0);
  EXPECT_EQ(fracmfg::test::read_text(dir_ + "/out.xmf"), xmf_before);
  fs::remove(temporary);
}

namespace {

/// Continues the file at `path` as a resumed run does: levels from step `at` on are written
/// again with values tag + step, then steps up to 5. With kill_before_commit the process
/// dies by SIGKILL before commit (recording the temporary name in `info`).
void continue_generation(const std::string& path, std::int64_t at, double tag,
                         bool kill_before_commit, const std::string& info = {}) {
  fracmfg::io::H5WriterOptions opts;
  opts.problem = "atomic-continued";
  opts.continue_existing = true;
  opts.continue_at_step = at;
  H5Writer w(MPI_COMM_WORLD, path, opts);
  DaField f;
  make_field(f, PETSC_COMM_WORLD, 2, 64, 48, 1, 1);
  for (std::int64_t step = at; step <= 5; ++step) {
    fracmfg::test::fill_with(f, tag + static_cast<double>(step));
    w.write_field("u", f.da, f.v, step, 0.25 * static_cast<double>(step));
  }
  if (kill_before_commit) {
    std::ofstream(info) << w.temporary_path() << '\n';
    std::raise(SIGKILL);
  }
  EXPECT_TRUE(w.continued());
  w.commit();
}

/// The value of every point of level `step` of "u" (the fields are constant), or NaN when
/// they differ.
double level_value(H5Reader& r, std::int64_t step) {
  DaField f;
  make_field(f, PETSC_COMM_SELF, 2, 64, 48, 1, 1);
  r.read_level("u", step, f.da, f.v);
  PetscReal lo = 0.0;
  PetscReal hi = 0.0;
  VecMin(f.v, nullptr, &lo);
  VecMax(f.v, nullptr, &hi);
  return lo == hi ? lo : std::nan("");
}

}  // namespace

TEST_F(H5Atomic, ContinuedFileKeepsTheEarlierLevelsAndAppendsTheNewOnes) {
  const std::string path = dir_ + "/out.h5";
  write_generation(path, "first", 1.0, false);  // steps 0..3, values 1 + step
  continue_generation(path, 2, 10.0, false);    // steps 2..5 again, values 10 + step
  H5Reader r(MPI_COMM_SELF, path);
  EXPECT_EQ(r.field_steps("u"), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(r.field_times("u"), (std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0, 1.25}));
  EXPECT_EQ(r.read_array_int64("/step"), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(r.shape("/fields/u/values"), (std::vector<std::uint64_t>{6, 48, 64}));
  EXPECT_EQ(level_value(r, 0), 1.0);
  EXPECT_EQ(level_value(r, 1), 2.0);
  for (std::int64_t step = 2; step <= 5; ++step) {
    EXPECT_EQ(level_value(r, step), 10.0 + static_cast<double>(step)) << "step " << step;
  }
  // The rest of the first file stays; the root attributes say it was continued.
  EXPECT_EQ(r.read_string("generation"), "first");
  EXPECT_EQ(r.read_array("big").size(), 200000u);
  EXPECT_EQ(r.attribute_int64("/", "continued_at_step"), 2);
  EXPECT_EQ(r.attribute_string("/", "problem"), "atomic-continued");
  // The sidecar follows the continued file: six levels.
  const std::string xml = fracmfg::test::read_text(dir_ + "/out.xmf");
  EXPECT_EQ(fracmfg::test::count_of(xml, "GridType=\"Uniform\""), 6u);
}

TEST_F(H5Atomic, ContinuingWithoutAFileStartsANewOne) {
  const std::string path = dir_ + "/out.h5";
  {
    fracmfg::io::H5WriterOptions opts;
    opts.continue_existing = true;
    opts.continue_at_step = 3;
    H5Writer w(MPI_COMM_WORLD, path, opts);
    EXPECT_FALSE(w.continued());
    DaField f;
    make_field(f, PETSC_COMM_WORLD, 1, 10, 1, 1, 1);
    w.write_field("u", f.da, f.v, 3, 0.3);
    w.commit();
  }
  H5Reader r(MPI_COMM_SELF, path);
  EXPECT_EQ(r.field_steps("u"), std::vector<std::int64_t>{3});
  EXPECT_FALSE(r.has_attribute("/", "continued_at_step"));
}

TEST_F(H5Atomic, KilledContinuationLeavesThePreviousFileIntact) {
  const std::string path = dir_ + "/out.h5";
  const std::string info = dir_ + "/temporary-name.txt";
  if (!in_child()) write_generation(path, "previous", 1.0, false);
  const auto h5_time_before = fs::last_write_time(path);
  setenv(kChildMarker, "1", 1);
  EXPECT_EXIT(continue_generation(path, 2, 10.0, true, info), testing::KilledBySignal(SIGKILL), "");
  unsetenv(kChildMarker);
  std::string temporary;
  std::ifstream(info) >> temporary;
  ASSERT_FALSE(temporary.empty()) << "the child died before it started writing";
  EXPECT_TRUE(fs::exists(temporary));
  EXPECT_EQ(fs::last_write_time(path), h5_time_before);
  H5Reader r(MPI_COMM_SELF, path);
  EXPECT_EQ(r.field_steps("u"), (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(level_value(r, 3), 4.0);
  fs::remove(temporary);
}
