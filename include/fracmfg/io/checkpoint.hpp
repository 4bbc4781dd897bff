#pragma once
// Checkpoint and restart: a named set of DMDA Vecs, distributed arrays and scalars taken at
// one step, written atomically and read back on any number of ranks. Layout (with a format
// version that the reader checks) in fracmfg/io/h5_layout.hpp.
//
//   // write (every `checkpoint_every` steps); the previous checkpoint of the same name
//   // stays valid until commit() has renamed the new one over it
//   io::CheckpointWriter ck(comm, "results/run.ckpt.h5", step, t, "mfg");
//   ck.add_field("u", da, u);
//   ck.add_array("particles/x", x.data(), x.size());
//   ck.add_scalar_double("residual", r);
//   ck.commit();
//
//   // restart, perhaps on another rank count
//   io::CheckpointReader rk(comm, "results/run.ckpt.h5");
//   io::FieldShape s = rk.field_shape("u");            // build the DMDA from s, then
//   rk.read_field("u", da, u);
//   auto x = rk.read_array_block("particles/x", my_count);
//
// Collectivity: every member function except the accessors is collective on the
// communicator; all ranks pass the same names and scalar values. Errors are IoError.

#include <mpi.h>
#include <petscdm.h>
#include <petscvec.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fracmfg/io/h5_layout.hpp"

namespace fracmfg::io {

class CheckpointWriter {
 public:
  /// Checks the output path, then creates the checkpoint under a temporary name. Collective.
  CheckpointWriter(MPI_Comm comm, const std::string& path, std::int64_t step, double time,
                   const std::string& problem = {});
  /// Uncommitted: the temporary file is removed, an older checkpoint is left as it was.
  ~CheckpointWriter();
  CheckpointWriter(CheckpointWriter&&) noexcept;
  CheckpointWriter& operator=(CheckpointWriter&&) noexcept;
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  const std::string& path() const;
  const std::string& temporary_path() const;

  /// A global Vec of a DMDA, stored as /fields/<name> (each rank writes its box).
  void add_field(const std::string& name, DM da, Vec v);
  /// Every rank's block, in rank order, as /arrays/<name> (counts may differ, may be 0).
  void add_array(const std::string& name, const double* local, std::size_t count);
  void add_array(const std::string& name, const std::int64_t* local, std::size_t count);
  /// Scalars (rank 0's value is stored), as attributes of /scalars.
  void add_scalar_double(const std::string& name, double value);
  void add_scalar_int64(const std::string& name, std::int64_t value);
  void add_scalar_string(const std::string& name, const std::string& value);

  /// Closes, fsyncs and renames the checkpoint over the final name. Collective.
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class CheckpointReader {
 public:
  /// Opens a checkpoint and checks its format version (IoError if it is not a fracmfg
  /// checkpoint or has another version). Collective.
  CheckpointReader(MPI_Comm comm, const std::string& path);
  ~CheckpointReader();
  CheckpointReader(CheckpointReader&&) noexcept;
  CheckpointReader& operator=(CheckpointReader&&) noexcept;
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  const std::string& path() const;
  std::int64_t step() const;     ///< step the checkpoint was taken at
  double time() const;           ///< its time
  std::int64_t format() const;   ///< checkpoint_format attribute (== kCheckpointFormat)
  int written_by_ranks() const;  ///< rank count of the writing job

  /// Names of the stored fields, arrays and scalars, sorted. Collective.
  std::vector<std::string> field_names() const;
  std::vector<std::string> array_names() const;
  std::vector<std::string> scalar_names() const;

  /// Global shape of a field, to build the DMDA before read_field. Collective.
  FieldShape field_shape(const std::string& name) const;
  /// Reads a field into a global Vec of a DMDA of the stored shape (any decomposition).
  void read_field(const std::string& name, DM da, Vec v) const;

  /// Global length of an array. Collective.
  std::uint64_t array_size(const std::string& name) const;
  /// Elements [offset, offset + count) of an array. Collective.
  std::vector<double> read_array(const std::string& name, std::uint64_t offset,
                                 std::uint64_t count) const;
  std::vector<std::int64_t> read_array_int64(const std::string& name, std::uint64_t offset,
                                             std::uint64_t count) const;
  /// This rank's block when the ranks take consecutive blocks of the given local counts
  /// in rank order; the counts must add up to the array size (else IoError). Collective.
  std::vector<double> read_array_block(const std::string& name, std::size_t count) const;
  std::vector<std::int64_t> read_array_block_int64(const std::string& name,
                                                   std::size_t count) const;

  /// Whether a scalar of that name is stored (checkpoints of earlier versions lack some).
  bool has_scalar(const std::string& name) const;
  /// Scalars; a missing name is an IoError listing the stored ones. Collective.
  double scalar_double(const std::string& name) const;
  std::int64_t scalar_int64(const std::string& name) const;
  std::string scalar_string(const std::string& name) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The ownership ranges of a DMDA per axis (one entry per process-grid column, row or
/// layer; empty past the DMDA's dimension): its split over the ranks.
struct DmdaSplit {
  std::vector<PetscInt> x, y, z;
  bool operator==(const DmdaSplit& o) const { return x == o.x && y == o.y && z == o.z; }
  bool operator!=(const DmdaSplit& o) const { return !(*this == o); }
};

/// The split of a 1D, 2D or 3D DMDA. Not collective.
DmdaSplit split_of(DM da);
/// Records da's split as /arrays/split/x, split/y and split/z (rank 0's ranges), for a
/// restart that continues on it (split_to_restore). Collective.
void add_split(CheckpointWriter& checkpoint, DM da);
/// The split a checkpoint recorded, when a restart on `da` can continue on it: written by as
/// many ranks as da's communicator has, in the same process grid, over the same grid. Empty
/// when it has none (an older checkpoint), does not fit, or is da's split already. The same
/// answer on every rank. Collective.
std::optional<DmdaSplit> split_to_restore(const CheckpointReader& checkpoint, DM da);

}  // namespace fracmfg::io
