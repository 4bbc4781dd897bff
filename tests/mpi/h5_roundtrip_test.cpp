// Parallel HDF5 output read back: DMDA fields (1D/2D/3D, dof 1 and 2) are stored in global
// natural layout and come back bit for bit, on the writing communicator and on every
// smaller one with other decompositions; distributed arrays, replicated data, attributes
// and the file-level run description survive the round trip; errors are IoErrors that
// every rank sees.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "common/mpi_support.hpp"
#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/io/h5_reader.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "mpi/h5_helpers/h5_test_util.hpp"

namespace fs = std::filesystem;
using fracmfg::IoError;
using fracmfg::io::FieldShape;
using fracmfg::io::H5Reader;
using fracmfg::io::H5Writer;
using fracmfg::io::H5WriterOptions;
using fracmfg::test::count_mismatches;
using fracmfg::test::DaField;
using fracmfg::test::fill_known;
using fracmfg::test::make_field;
using fracmfg::test::SubComm;
using fracmfg::test::world_rank;
using fracmfg::test::world_size;

namespace {

std::string dir_for(const std::string& test) {
  return fracmfg::test::scratch_dir(MPI_COMM_WORLD,
                                    fracmfg::test::per_rank_count("roundtrip", test));
}

/// A test case: one field layout.
struct Layout {
  const char* name;
  int dim;
  PetscInt nx, ny, nz, dof;
};

const Layout kLayouts[] = {
    {"line", 1, 37, 1, 1, 1},   {"line2", 1, 23, 1, 1, 2}, {"plane", 2, 13, 7, 1, 1},
    {"plane2", 2, 9, 11, 1, 2}, {"box", 3, 5, 4, 3, 1},
};

FieldShape shape_of(const Layout& l) {
  FieldShape s;
  s.dim = l.dim;
  s.size = {l.nx, l.dim > 1 ? l.ny : 1, l.dim > 2 ? l.nz : 1};
  s.dof = l.dof;
  return s;
}

/// Processor grids to try for a field of dimension dim on k ranks.
std::vector<std::vector<PetscInt>> decompositions(int dim, int k) {
  if (dim == 1) return {{0}};
  if (dim == 2) return {{0, 0}, {k, 1}, {1, k}};
  return {{0, 0, 0}, {1, 1, k}, {k, 1, 1}};
}

/// Uneven 1D ownership ranges over k ranks for n points (the last rank takes the most).
std::vector<PetscInt> uneven_ranges(PetscInt n, int k) {
  std::vector<PetscInt> lx(static_cast<std::size_t>(k), 1);
  lx.back() = n - (k - 1);
  return lx;
}

std::string file_with_all_layouts(const std::string& dir, const std::vector<std::int64_t>& steps) {
  const std::string path = dir + "/fields.h5";
  H5WriterOptions opts;
  opts.problem = "roundtrip";
  opts.deck = "problem: roundtrip\n# original\n";
  opts.resolved_deck = "problem: roundtrip\nexecution: {backend: cpu}\n";
  H5Writer w(MPI_COMM_WORLD, path, opts);
  for (int id = 0; id < static_cast<int>(std::size(kLayouts)); ++id) {
    const Layout& l = kLayouts[id];
    DaField f;
    make_field(f, PETSC_COMM_WORLD, l.dim, l.nx, l.ny, l.nz, l.dof);
    for (std::int64_t s : steps) {
      fill_known(f, id, s);
      w.write_field(l.name, f.da, f.v, s, 0.5 * static_cast<double>(s));
    }
  }
  w.commit();
  return path;
}

}  // namespace

TEST(H5Roundtrip, FieldsReadBackBitForBitWithAttributes) {
  const std::string dir = dir_for("fields");
  const std::vector<std::int64_t> steps = {0, 5, 10};
  const std::string path = file_with_all_layouts(dir, steps);
  ASSERT_TRUE(fs::exists(path));

  H5Reader r(MPI_COMM_WORLD, path);
  for (int id = 0; id < static_cast<int>(std::size(kLayouts)); ++id) {
    const Layout& l = kLayouts[id];
    SCOPED_TRACE(l.name);
    EXPECT_EQ(r.field_steps(l.name), steps);
    EXPECT_EQ(r.field_times(l.name), (std::vector<double>{0.0, 2.5, 5.0}));
    const std::string ds = fracmfg::io::field_values_path(l.name);
    EXPECT_EQ(r.attribute_int64(ds, "dof"), l.dof);
    EXPECT_EQ(r.series_shape(l.name), shape_of(l));
    EXPECT_EQ(r.attribute_string(ds, "centring"), "node");
    EXPECT_EQ(r.attribute_strings(ds, "boundary"),
              std::vector<std::string>(static_cast<std::size_t>(l.dim), "none"));
    // One dataset per field, the level first, then global natural order: [nz][ny][nx]
    // truncated to dim, + [dof].
    std::vector<std::uint64_t> want = {steps.size()};
    std::string axes = "level";
    if (l.dim > 2) want.push_back(static_cast<std::uint64_t>(l.nz));
    if (l.dim > 2) axes += ",z";
    if (l.dim > 1) want.push_back(static_cast<std::uint64_t>(l.ny));
    if (l.dim > 1) axes += ",y";
    want.push_back(static_cast<std::uint64_t>(l.nx));
    axes += ",x";
    if (l.dof > 1) want.push_back(static_cast<std::uint64_t>(l.dof));
    if (l.dof > 1) axes += ",component";
    EXPECT_EQ(r.shape(ds), want);
    EXPECT_EQ(r.attribute_string(ds, "axes"), axes);
    for (std::int64_t s : steps) {
      DaField f;
      make_field(f, PETSC_COMM_WORLD, l.dim, l.nx, l.ny, l.nz, l.dof);
      fracmfg::test::fill_with(f, -1.0);
      r.read_level(l.name, s, f.da, f.v);
      EXPECT_EQ(count_mismatches(f, MPI_COMM_WORLD, id, s), 0);
    }
  }
  EXPECT_EQ(r.read_array("/step"), std::vector<double>({0.0, 5.0, 10.0}));
  EXPECT_EQ(r.read_array_int64("/step"), steps);
  EXPECT_EQ(r.read_array("/time"), (std::vector<double>{0.0, 2.5, 5.0}));
  EXPECT_EQ(r.list("/fields"),
            (std::vector<std::string>{"box", "line", "line2", "plane", "plane2"}));
  EXPECT_EQ(r.list("/fields/plane"), (std::vector<std::string>{"step", "time", "values"}));
  EXPECT_EQ(r.attribute_strings("/fields/line2/values", "component_names"),
            (std::vector<std::string>{"line2_0", "line2_1"}));
}

TEST(H5Roundtrip, FileAttributesDescribeTheRun) {
  const std::string dir = dir_for("attributes");
  const std::string path = file_with_all_layouts(dir, {3});
  H5Reader r(MPI_COMM_WORLD, path);
  EXPECT_EQ(r.attribute_string("/", "fracmfg_version"), FRACMFG_VERSION_STRING);
  EXPECT_EQ(r.attribute_string("/", "git_revision"), FRACMFG_GIT_REVISION);
  EXPECT_EQ(r.attribute_int64("/", "mpi_ranks"), world_size());
  EXPECT_EQ(r.attribute_string("/", "problem"), "roundtrip");
  EXPECT_EQ(r.attribute_string("/", "deck"), "problem: roundtrip\n# original\n");
  EXPECT_EQ(r.attribute_string("/", "resolved_deck"),
            "problem: roundtrip\nexecution: {backend: cpu}\n");
  EXPECT_EQ(r.attribute_string("/", "file_kind"), "output");
  EXPECT_EQ(r.attribute_int64("/", "layout_version"), fracmfg::io::kLayoutVersion);
  EXPECT_TRUE(std::regex_match(r.attribute_string("/", "created"),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
}

// The key acceptance property: written on N ranks, read identically on 1..N ranks with
// other decompositions (at np3 this covers write-on-3 / read-on-1 and read-on-2).
TEST(H5Roundtrip, FieldWrittenOnAllRanksReadsBackOnEverySmallerCommunicator) {
  const std::string dir = dir_for("cross");
  const std::string path = file_with_all_layouts(dir, {7});
  for (int k = 1; k <= world_size(); ++k) {
    SubComm sub(k);
    if (sub.comm == MPI_COMM_NULL) continue;
    SCOPED_TRACE("reading on " + std::to_string(k) + " rank(s)");
    H5Reader r(sub.comm, path);
    EXPECT_EQ(r.attribute_int64("/", "mpi_ranks"), world_size());
    for (int id = 0; id < static_cast<int>(std::size(kLayouts)); ++id) {
      const Layout& l = kLayouts[id];
      const FieldShape s = r.series_shape(l.name);
      ASSERT_EQ(s, shape_of(l));
      for (const auto& procs : decompositions(l.dim, k)) {
        DaField f;
        make_field(f, sub.comm, s.dim, s.size[0], s.size[1], s.size[2], s.dof, procs);
        fracmfg::test::fill_with(f, -1.0);
        r.read_level(l.name, 7, f.da, f.v);
        EXPECT_EQ(count_mismatches(f, sub.comm, id, 7), 0) << l.name;
      }
      if (l.dim == 1 && k > 1) {
        DaField f;
        make_field(f, sub.comm, 1, l.nx, 1, 1, l.dof, {}, uneven_ranges(l.nx, k));
        r.read_level(l.name, 7, f.da, f.v);
        EXPECT_EQ(count_mismatches(f, sub.comm, id, 7), 0) << l.name << " uneven";
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(H5Roundtrip, DistributedReplicatedAndStringDataReadBack) {
  const std::string dir = dir_for("arrays");
  const std::string path = dir + "/arrays.h5";
  const int rank = world_rank();
  const int size = world_size();
  // Rank r holds r + 2 values (uneven blocks), global index g -> 0.5 * g + 0.25.
  std::vector<double> mine;
  std::vector<std::int64_t> ids;
  int offset = 0;
  for (int q = 0; q < rank; ++q) offset += q + 2;
  for (int i = 0; i < rank + 2; ++i) {
    mine.push_back(0.5 * (offset + i) + 0.25);
    ids.push_back(1000000000000LL + offset + i);
  }
  int total = 0;
  for (int q = 0; q < size; ++q) total += q + 2;
  Vec v = nullptr;
  ASSERT_EQ(VecCreateMPI(PETSC_COMM_WORLD, PETSC_DECIDE, 29, &v), 0);
  PetscInt lo = 0;
  PetscInt hi = 0;
  VecGetOwnershipRange(v, &lo, &hi);
  for (PetscInt g = lo; g < hi; ++g)
    VecSetValue(v, g, 3.0 * static_cast<double>(g) - 1.0, INSERT_VALUES);
  VecAssemblyBegin(v);
  VecAssemblyEnd(v);
  {
    H5Writer w(MPI_COMM_WORLD, path);
    w.write_distributed("particles/x", mine.data(), mine.size());
    w.write_distributed("particles/id", ids.data(), ids.size());
    w.write_distributed("empty_on_all", static_cast<const double*>(nullptr), 0);
    w.write_vec("/fode/y", v);
    // Only rank 0's values count.
    w.write_array("replicated/d", rank == 0 ? std::vector<double>{1.5, -2.0, 1e-300}
                                            : std::vector<double>{9.0, 9.0, 9.0});
    w.write_array("replicated/i", std::vector<std::int64_t>{-7, 0, 7});
    w.write_string("notes/text", rank == 0 ? "rank zero's notes" : "ignored");
    w.write_string("notes/empty", "");
    w.set_attribute_double("/particles/x", "mass", rank == 0 ? 0.125 : 99.0);
    w.set_attribute_int64("/particles", "count", total);
    w.set_attribute_string("/", "comment", "written by a test");
    w.set_attribute_doubles("/fode", "tolerances", {1e-8, 1e-10});
    w.commit();
  }
  H5Reader r(MPI_COMM_WORLD, path);
  EXPECT_EQ(r.shape("particles/x"), std::vector<std::uint64_t>{static_cast<std::uint64_t>(total)});
  std::vector<double> all = r.read_array("particles/x");
  ASSERT_EQ(static_cast<int>(all.size()), total);
  for (int g = 0; g < total; ++g) EXPECT_EQ(all[static_cast<std::size_t>(g)], 0.5 * g + 0.25);
  EXPECT_EQ(r.read_block("particles/x", static_cast<std::uint64_t>(offset), mine.size()), mine);
  EXPECT_EQ(r.read_block_int64("particles/id", static_cast<std::uint64_t>(offset), ids.size()),
            ids);
  EXPECT_EQ(r.shape("empty_on_all"), std::vector<std::uint64_t>{0});
  EXPECT_EQ(r.read_array("replicated/d"), (std::vector<double>{1.5, -2.0, 1e-300}));
  EXPECT_EQ(r.read_array_int64("replicated/i"), (std::vector<std::int64_t>{-7, 0, 7}));
  EXPECT_EQ(r.read_string("notes/text"), "rank zero's notes");
  EXPECT_EQ(r.read_string("notes/empty"), "");
  EXPECT_EQ(r.attribute_double("particles/x", "mass"), 0.125);
  EXPECT_EQ(r.attribute_int64("particles", "count"), total);
  EXPECT_EQ(r.attribute_string("/", "comment"), "written by a test");
  EXPECT_EQ(r.attribute_doubles("fode", "tolerances"), (std::vector<double>{1e-8, 1e-10}));

  // The plain Vec read back on every smaller communicator.
  for (int k = 1; k <= size; ++k) {
    SubComm sub(k);
    if (sub.comm == MPI_COMM_NULL) continue;
    H5Reader rk(sub.comm, path);
    Vec u = nullptr;
    ASSERT_EQ(VecCreateMPI(sub.comm, PETSC_DECIDE, 29, &u), 0);
    rk.read_vec("fode/y", u);
    PetscInt ulo = 0;
    PetscInt uhi = 0;
    VecGetOwnershipRange(u, &ulo, &uhi);
    const PetscScalar* a = nullptr;
    VecGetArrayRead(u, &a);
    for (PetscInt g = ulo; g < uhi; ++g) EXPECT_EQ(a[g - ulo], 3.0 * static_cast<double>(g) - 1.0);
    VecRestoreArrayRead(u, &a);
    VecDestroy(&u);
  }
  VecDestroy(&v);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(H5Roundtrip, ShapeMismatchIsAnIoErrorNamingDatasetAndBothShapes) {
  const std::string dir = dir_for("mismatch");
  const std::string path = file_with_all_layouts(dir, {1});
  H5Reader r(MPI_COMM_WORLD, path);
  DaField f;
  make_field(f, PETSC_COMM_WORLD, 2, 13, 8, 1, 1);  // "plane" is 13 x 7
  try {
    r.read_level("plane", 1, f.da, f.v);
    ADD_FAILURE() << "no exception";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/fields/plane/values"), std::string::npos) << what;
    EXPECT_NE(what.find("[7, 13]"), std::string::npos) << what;
    EXPECT_NE(what.find("[8, 13]"), std::string::npos) << what;
  }
  DaField g;
  make_field(g, PETSC_COMM_WORLD, 1, 23, 1, 1, 1);  // "line2" has dof 2
  EXPECT_THROW(r.read_level("line2", 1, g.da, g.v), IoError);
  EXPECT_THROW(r.read_field("/no/such/dataset", g.da, g.v), IoError);
  EXPECT_THROW(r.attribute_double("/", "no_such_attribute"), IoError);
  EXPECT_THROW(H5Reader(MPI_COMM_WORLD, dir + "/missing.h5"), IoError);
}

TEST(H5Roundtrip, UncommittedWriterLeavesNoFileAndKeepsTheOldOne) {
  const std::string dir = dir_for("uncommitted");
  const std::string path = dir + "/out.h5";
  {
    H5Writer w(MPI_COMM_WORLD, path);  // destroyed without commit: nothing appears
    std::vector<double> x(5, 1.0);
    w.write_distributed("x", x.data(), x.size());
    EXPECT_TRUE(fs::exists(w.temporary_path()));
    EXPECT_EQ(fs::path(w.temporary_path()).parent_path(), fs::path(path).parent_path());
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(fs::exists(path));
  std::string left;
  for (const auto& entry : fs::directory_iterator(dir)) left += " " + entry.path().string();
  EXPECT_TRUE(left.empty()) << "files left behind:" << left;
  // The next writer's path check creates a probe file in `dir` on rank 0: no rank may get
  // there while another still lists the directory.
  MPI_Barrier(MPI_COMM_WORLD);

  {
    H5Writer w(MPI_COMM_WORLD, path);
    w.write_string("generation", "first");
    w.commit();
  }
  std::string temporary;
  try {
    H5Writer w(MPI_COMM_WORLD, path);
    temporary = w.temporary_path();
    w.write_string("generation", "second");
    throw IoError("simulated failure on every rank before commit");
  } catch (const IoError&) {
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(fs::exists(temporary));
  H5Reader r(MPI_COMM_WORLD, path);
  EXPECT_EQ(r.read_string("generation"), "first");
}

TEST(H5Roundtrip, BadOutputPathFailsOnEveryRankNamingThePath) {
  const std::string dir = dir_for("badpath");
  const std::string blocker = dir + "/not_a_directory";
  if (world_rank() == 0) std::ofstream(blocker) << "a file where a directory should be\n";
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string path = blocker + "/out.h5";
  int failed = 0;
  try {
    H5Writer::check_output_path(MPI_COMM_WORLD, path);
  } catch (const IoError& e) {
    failed = 1;
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_EQ(fracmfg::test::ranks_where(failed == 1), world_size());
  EXPECT_THROW(H5Writer(MPI_COMM_WORLD, path), IoError);
  EXPECT_THROW(H5Writer(MPI_COMM_WORLD, dir), IoError);  // a directory is no file name

  // A directory that does not exist yet is created.
  const std::string nested = dir + "/a/b/c/out.h5";
  H5Writer::check_output_path(MPI_COMM_WORLD, nested);
  EXPECT_TRUE(fs::is_directory(dir + "/a/b/c"));
}

TEST(H5Roundtrip, MisuseIsAnIoError) {
  const std::string dir = dir_for("misuse");
  DaField f;
  make_field(f, PETSC_COMM_WORLD, 1, 10, 1, 1, 1);
  DaField g;
  make_field(g, PETSC_COMM_WORLD, 1, 12, 1, 1, 1);
  H5Writer w(MPI_COMM_WORLD, dir + "/misuse.h5");
  w.write_field("u", f.da, f.v, 1, 0.1);
  EXPECT_THROW(w.write_field("u", f.da, f.v, 1, 0.1), IoError);  // same step twice
  EXPECT_THROW(w.write_field("u", f.da, f.v, 0, 0.0), IoError);  // an earlier step
  EXPECT_THROW(w.write_field("u", g.da, g.v, 2, 0.2), IoError);  // other shape
  EXPECT_THROW(w.write_field("a/b", f.da, f.v, 1, 0.1), IoError);
  EXPECT_THROW(w.write_field("u", f.da, g.v, 3, 0.3), IoError);  // Vec of another DMDA
  w.commit();
  EXPECT_TRUE(w.committed());
  EXPECT_THROW(w.write_field("u", f.da, f.v, 4, 0.4), IoError);
  EXPECT_THROW(w.commit(), IoError);
  H5Reader r(MPI_COMM_WORLD, dir + "/misuse.h5");
  EXPECT_EQ(r.field_steps("u"), std::vector<std::int64_t>{1});
}

// A long series of tiny levels (an ODE written at every step) is one dataset whatever the
// number of levels, every rank's values in its column, with all times and steps; levels
// go out a chunk at a time, so the writes that complete no chunk do not communicate.
TEST(H5Roundtrip, ManySmallLevelsAreOneDatasetWithEveryLevel) {
  const std::string dir = dir_for("many_levels");
  const std::string path = dir + "/many.h5";
  const std::int64_t levels = 100000;
  DaField f;
  make_field(f, PETSC_COMM_WORLD, 1, world_size(), 1, 1, 1);  // one value per rank
  {
    fracmfg::io::H5WriterOptions opts;
    opts.write_xdmf = false;
    H5Writer w(MPI_COMM_WORLD, path, opts);
    fracmfg::io::FieldInfo info;
    info.expected_levels = levels;
    w.define_field("y", info);
    for (std::int64_t k = 0; k < levels; ++k) {
      const double value = static_cast<double>(k) + 1e6 * world_rank();
      w.write_field("y", f.da, &value, 2 * k, 0.5 * static_cast<double>(k));
    }
    w.commit();
  }
  H5Reader r(MPI_COMM_WORLD, path);
  EXPECT_EQ(r.list("/fields"), std::vector<std::string>{"y"});
  EXPECT_EQ(r.list("/fields/y"), (std::vector<std::string>{"step", "time", "values"}));
  EXPECT_EQ(r.shape("/fields/y/values"),
            (std::vector<std::uint64_t>{static_cast<std::uint64_t>(levels),
                                        static_cast<std::uint64_t>(world_size())}));
  const std::vector<std::int64_t> steps = r.field_steps("y");
  const std::vector<double> times = r.field_times("y");
  ASSERT_EQ(steps.size(), static_cast<std::size_t>(levels));
  ASSERT_EQ(times.size(), static_cast<std::size_t>(levels));
  for (std::int64_t k = 0; k < levels; k += 997) {
    EXPECT_EQ(steps[static_cast<std::size_t>(k)], 2 * k);
    EXPECT_EQ(times[static_cast<std::size_t>(k)], 0.5 * static_cast<double>(k));
  }
  for (std::int64_t k : {std::int64_t{0}, std::int64_t{65535}, levels - 1}) {
    const std::vector<double> row = r.read_level_values("y", static_cast<std::uint64_t>(k));
    ASSERT_EQ(row.size(), static_cast<std::size_t>(world_size()));
    for (int q = 0; q < world_size(); ++q) {
      EXPECT_EQ(row[static_cast<std::size_t>(q)], static_cast<double>(k) + 1e6 * q) << k;
    }
  }
}
