// Checkpoint/restart: a checkpoint written on N ranks restarts bit for bit on every rank
// count 1..N with other decompositions; the previous checkpoint stays valid until a new
// one is committed; the format version is checked.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/mpi_support.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/io/checkpoint.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "mpi/h5_helpers/h5_test_util.hpp"

namespace fs = std::filesystem;
using fracmfg::IoError;
using fracmfg::io::CheckpointReader;
using fracmfg::io::CheckpointWriter;
using fracmfg::io::FieldShape;
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
                                    fracmfg::test::per_rank_count("checkpoint", test));
}

/// Global particle g: position and id.
double particle_x(std::uint64_t g) {
  return 1.0 / (3.0 + static_cast<double>(g));
}
std::int64_t particle_id(std::uint64_t g) {
  return 7000000000LL + 13 * static_cast<std::int64_t>(g);
}

/// The state of a small solver: a 2D two-component field, a 1D field, particles split
/// unevenly (rank r holds 3r + 1), and scalars.
void write_state(const std::string& path, std::int64_t step, double time) {
  DaField uv;
  make_field(uv, PETSC_COMM_WORLD, 2, 17, 6, 1, 2);
  fill_known(uv, 1, step);
  DaField m;
  make_field(m, PETSC_COMM_WORLD, 1, 31, 1, 1, 1);
  fill_known(m, 2, step);
  const int rank = world_rank();
  std::uint64_t first = 0;
  for (int q = 0; q < rank; ++q) first += 3 * static_cast<std::uint64_t>(q) + 1;
  std::vector<double> x;
  std::vector<std::int64_t> id;
  for (std::uint64_t i = 0; i < 3 * static_cast<std::uint64_t>(rank) + 1; ++i) {
    x.push_back(particle_x(first + i));
    id.push_back(particle_id(first + i));
  }
  CheckpointWriter ck(MPI_COMM_WORLD, path, step, time, "checkpoint-test");
  ck.add_field("uv", uv.da, uv.v);
  ck.add_field("density/m", m.da, m.v);
  ck.add_array("particles/x", x.data(), x.size());
  ck.add_array("particles/id", id.data(), id.size());
  ck.add_scalar_double("residual", 1.0 / 7.0);
  ck.add_scalar_int64("iterations", static_cast<std::int64_t>(step) * 3);
  ck.add_scalar_string("method", "fdm");
  ck.commit();
}

std::uint64_t total_particles(int ranks) {
  std::uint64_t n = 0;
  for (int q = 0; q < ranks; ++q) n += 3 * static_cast<std::uint64_t>(q) + 1;
  return n;
}

}  // namespace

TEST(CheckpointRestart, RestartsBitForBitOnEveryRankCountUpToTheWriters) {
  const std::string dir = dir_for("restart");
  const std::string path = dir + "/run.ckpt.h5";
  write_state(path, 40, 0.8);
  const std::uint64_t n_particles = total_particles(world_size());

  for (int k = 1; k <= world_size(); ++k) {
    SubComm sub(k);
    if (sub.comm == MPI_COMM_NULL) continue;
    SCOPED_TRACE("restart on " + std::to_string(k) + " rank(s)");
    int sub_rank = 0;
    MPI_Comm_rank(sub.comm, &sub_rank);
    CheckpointReader rk(sub.comm, path);
    EXPECT_EQ(rk.step(), 40);
    EXPECT_EQ(rk.time(), 0.8);
    EXPECT_EQ(rk.format(), fracmfg::io::kCheckpointFormat);
    EXPECT_EQ(rk.written_by_ranks(), world_size());
    EXPECT_EQ(rk.field_names(), (std::vector<std::string>{"density/m", "uv"}));
    EXPECT_EQ(rk.array_names(), (std::vector<std::string>{"particles/id", "particles/x"}));
    EXPECT_EQ(rk.scalar_names(), (std::vector<std::string>{"iterations", "method", "residual"}));

    // The reader gives the global shape; the restarting code builds its own DMDA.
    const FieldShape s = rk.field_shape("uv");
    EXPECT_EQ(s.dim, 2);
    EXPECT_EQ(s.size[0], 17);
    EXPECT_EQ(s.size[1], 6);
    EXPECT_EQ(s.dof, 2);
    for (const std::vector<PetscInt>& procs :
         {std::vector<PetscInt>{0, 0}, std::vector<PetscInt>{k, 1}, std::vector<PetscInt>{1, k}}) {
      DaField uv;
      make_field(uv, sub.comm, s.dim, s.size[0], s.size[1], 1, s.dof, procs);
      rk.read_field("uv", uv.da, uv.v);
      EXPECT_EQ(count_mismatches(uv, sub.comm, 1, 40), 0);
    }
    const FieldShape sm = rk.field_shape("density/m");
    DaField m;
    make_field(m, sub.comm, sm.dim, sm.size[0], 1, 1, sm.dof);
    rk.read_field("density/m", m.da, m.v);
    EXPECT_EQ(count_mismatches(m, sub.comm, 2, 40), 0);

    // Particles re-split evenly over the restarting ranks.
    ASSERT_EQ(rk.array_size("particles/x"), n_particles);
    const std::uint64_t per = n_particles / static_cast<std::uint64_t>(k);
    const std::uint64_t extra = n_particles % static_cast<std::uint64_t>(k);
    const auto r = static_cast<std::uint64_t>(sub_rank);
    const std::uint64_t count = per + (r < extra ? 1 : 0);
    const std::uint64_t first = r * per + std::min(r, extra);
    const std::vector<double> x = rk.read_array_block("particles/x", count);
    const std::vector<std::int64_t> id = rk.read_array_block_int64("particles/id", count);
    ASSERT_EQ(x.size(), count);
    ASSERT_EQ(id.size(), count);
    for (std::uint64_t i = 0; i < count; ++i) {
      EXPECT_EQ(x[i], particle_x(first + i));
      EXPECT_EQ(id[i], particle_id(first + i));
    }
    EXPECT_EQ(rk.read_array("particles/x", first, count), x);

    EXPECT_EQ(rk.scalar_double("residual"), 1.0 / 7.0);
    EXPECT_EQ(rk.scalar_int64("iterations"), 120);
    EXPECT_EQ(rk.scalar_string("method"), "fdm");
    EXPECT_THROW(rk.scalar_double("no_such_scalar"), IoError);
    // Blocks that do not cover the array exactly are refused on every rank.
    EXPECT_THROW(rk.read_array_block("particles/x", count + (sub_rank == 0 ? 1 : 0)), IoError);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(CheckpointRestart, PreviousCheckpointStaysValidUntilTheNewOneIsCommitted) {
  const std::string dir = dir_for("previous");
  const std::string path = dir + "/run.ckpt.h5";
  write_state(path, 10, 0.1);
  std::string temporary;
  try {
    DaField m;
    make_field(m, PETSC_COMM_WORLD, 1, 31, 1, 1, 1);
    fill_known(m, 2, 20);
    CheckpointWriter ck(MPI_COMM_WORLD, path, 20, 0.2);
    temporary = ck.temporary_path();
    ck.add_field("density/m", m.da, m.v);
    // While the new checkpoint is being written, the old one is whole and readable.
    {
      SubComm self(1);
      if (self.comm != MPI_COMM_NULL) {
        CheckpointReader old(self.comm, path);
        EXPECT_EQ(old.step(), 10);
      }
    }
    throw IoError("the solver failed before the checkpoint was complete");
  } catch (const IoError&) {
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(fs::exists(temporary));
  {
    CheckpointReader rk(MPI_COMM_WORLD, path);
    EXPECT_EQ(rk.step(), 10);
    DaField m;
    make_field(m, PETSC_COMM_WORLD, 1, 31, 1, 1, 1);
    rk.read_field("density/m", m.da, m.v);
    EXPECT_EQ(count_mismatches(m, MPI_COMM_WORLD, 2, 10), 0);
  }
  write_state(path, 20, 0.2);
  CheckpointReader rk(MPI_COMM_WORLD, path);
  EXPECT_EQ(rk.step(), 20);
  DaField m;
  make_field(m, PETSC_COMM_WORLD, 1, 31, 1, 1, 1);
  rk.read_field("density/m", m.da, m.v);
  EXPECT_EQ(count_mismatches(m, MPI_COMM_WORLD, 2, 20), 0);
  // Only the checkpoint remains in the directory: no temporary files.
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(dir)) entries.push_back(e.path().filename().string());
  EXPECT_EQ(entries, std::vector<std::string>{"run.ckpt.h5"});
}

// A recorded split (io::add_split) comes back (io::split_to_restore) only for a DMDA of the
// same grid in the same process grid on as many ranks as wrote it, and only where it
// differs from that DMDA's own split.
TEST(CheckpointRestart, SplitIsRestoredOnlyWhereItFits) {
  const std::string dir = dir_for("split");
  const std::string path = dir + "/split.ckpt.h5";
  const int p = world_size();
  const PetscInt nx = 10 * p + 7;
  std::vector<PetscInt> skewed(static_cast<std::size_t>(p), 10);
  skewed[0] += 7;  // PETSc's even split gives the 7 to the first ranks, one each
  DaField written;
  make_field(written, PETSC_COMM_WORLD, 1, nx, 1, 1, 1, {}, skewed);
  {
    CheckpointWriter ck(PETSC_COMM_WORLD, path, 3, 0.3);
    ck.add_field("u", written.da, written.v);
    fracmfg::io::add_split(ck, written.da);
    ck.commit();
  }
  CheckpointReader rk(PETSC_COMM_WORLD, path);
  DaField even;
  make_field(even, PETSC_COMM_WORLD, 1, nx, 1, 1, 1);
  const auto restored = fracmfg::io::split_to_restore(rk, even.da);
  if (p > 1) {
    ASSERT_TRUE(restored.has_value());
    EXPECT_EQ(restored->x, skewed);
    EXPECT_TRUE(restored->y.empty());
    EXPECT_TRUE(restored->z.empty());
  } else {
    EXPECT_FALSE(restored.has_value());  // one rank: the split is the DMDA's own
  }
  EXPECT_FALSE(fracmfg::io::split_to_restore(rk, written.da).has_value());  // already on it
  DaField longer;
  make_field(longer, PETSC_COMM_WORLD, 1, nx + 1, 1, 1, 1);
  EXPECT_FALSE(fracmfg::io::split_to_restore(rk, longer.da).has_value());  // another grid
  DaField plane;
  make_field(plane, PETSC_COMM_WORLD, 2, nx, 4, 1, 1, {p, 1});
  EXPECT_FALSE(fracmfg::io::split_to_restore(rk, plane.da).has_value());  // another dimension
  if (p > 1) {
    SubComm self(1);
    if (self.comm != MPI_COMM_NULL) {
      CheckpointReader alone(self.comm, path);
      DaField one;
      make_field(one, self.comm, 1, nx, 1, 1, 1);
      EXPECT_FALSE(fracmfg::io::split_to_restore(alone, one.da).has_value());  // rank count
    }
  }
  // A checkpoint without a split (written before splits were recorded).
  const std::string older = dir + "/older.ckpt.h5";
  write_state(older, 1, 0.1);
  CheckpointReader old(PETSC_COMM_WORLD, older);
  EXPECT_FALSE(fracmfg::io::split_to_restore(old, even.da).has_value());
}

TEST(CheckpointRestart, FormatVersionIsChecked) {
  const std::string dir = dir_for("format");
  {
    fracmfg::io::H5Writer w(MPI_COMM_WORLD, dir + "/output.h5");
    w.commit();
  }
  try {
    CheckpointReader rk(MPI_COMM_WORLD, dir + "/output.h5");
    ADD_FAILURE() << "an output file was accepted as a checkpoint";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("not a fracmfg checkpoint"), std::string::npos)
        << e.what();
  }
  {
    fracmfg::io::H5Writer w(MPI_COMM_WORLD, dir + "/future.ckpt.h5");
    w.set_attribute_int64("/", "checkpoint_format", fracmfg::io::kCheckpointFormat + 1);
    w.commit();
  }
  try {
    CheckpointReader rk(MPI_COMM_WORLD, dir + "/future.ckpt.h5");
    ADD_FAILURE() << "a checkpoint of another format version was accepted";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("format version " +
                                         std::to_string(fracmfg::io::kCheckpointFormat + 1)),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(CheckpointReader(MPI_COMM_WORLD, dir + "/missing.ckpt.h5"), IoError);
}
