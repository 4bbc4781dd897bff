#pragma once
// io::H5Reader: reads a committed fracmfg HDF5 file (layout in fracmfg/io/h5_layout.hpp) in
// parallel, on any number of ranks and any DMDA decomposition, whatever the rank count that
// wrote it.
//
//   io::H5Reader in(comm, "results/crowd.h5");
//   io::FieldShape s = in.series_shape("m");
//   // build a DMDA of s.size[0] x s.size[1] points with s.dof components, then:
//   in.read_level("m", 10, da, m);   // the level written at step 10; each rank its box
//
// Collectivity: the constructor and every reading function are collective on the reader's
// communicator (HDF5 metadata is read collectively: one rank reads, all receive); all
// ranks pass the same names. Errors are fracmfg::IoError naming the file and the object;
// a missing file or a mismatching shape is seen identically by every rank.

#include <mpi.h>
#include <petscdm.h>
#include <petscvec.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fracmfg/io/h5_layout.hpp"

namespace fracmfg::io {

class H5Reader {
 public:
  /// Opens `path` read-only. Collective; every rank throws the same IoError when the file
  /// is missing or is not an HDF5 file.
  H5Reader(MPI_Comm comm, const std::string& path);
  /// Closes the file. Collective (see H5Writer's destructor for the unwinding case).
  ~H5Reader();
  H5Reader(H5Reader&&) noexcept;
  H5Reader& operator=(H5Reader&&) noexcept;
  H5Reader(const H5Reader&) = delete;
  H5Reader& operator=(const H5Reader&) = delete;

  const std::string& path() const;
  MPI_Comm comm() const;

  /// True when the object (group, dataset) exists. Collective.
  bool exists(const std::string& object) const;
  /// Names of the members of a group, sorted. Collective.
  std::vector<std::string> list(const std::string& group) const;
  /// Dataset dimensions, slowest first. Collective.
  std::vector<std::uint64_t> shape(const std::string& dataset) const;

  /// The global shape of a DMDA dataset (from its dim/global_size/dof attributes, checked
  /// against the dataset's dimensions). Collective.
  FieldShape field_shape(const std::string& dataset) const;
  /// Reads a DMDA dataset into Vec v, a global vector of da: each rank reads its own box.
  /// da must have the stored global size and dof (any decomposition, any rank count);
  /// otherwise IoError naming the dataset and both shapes. Collective.
  void read_field(const std::string& dataset, DM da, Vec v) const;
  /// Steps and times of the levels of time-series field `name` (/fields/<name>/step and
  /// /fields/<name>/time). Collective.
  std::vector<std::int64_t> field_steps(const std::string& name) const;
  std::vector<double> field_times(const std::string& name) const;
  /// The global shape of one level of time-series field `name` (from the attributes of
  /// /fields/<name>/values, checked against its dimensions). Collective.
  FieldShape series_shape(const std::string& name) const;
  /// Reads the level of time-series field `name` written at `step` into Vec v, a global
  /// vector of da (any decomposition, the stored shape); IoError when no level has that
  /// step or the shapes differ. Collective.
  void read_level(const std::string& name, std::int64_t step, DM da, Vec v) const;
  /// Level number `level` (0 = first written) of time-series field `name`, whole, on every
  /// rank, in natural order (x fastest, dof innermost). Collective.
  std::vector<double> read_level_values(const std::string& name, std::uint64_t level) const;

  /// Elements [offset, offset + count) of a 1D dataset, on the calling rank (each rank
  /// may ask for a different block). Collective.
  std::vector<double> read_block(const std::string& dataset, std::uint64_t offset,
                                 std::uint64_t count) const;
  std::vector<std::int64_t> read_block_int64(const std::string& dataset, std::uint64_t offset,
                                             std::uint64_t count) const;
  /// Reads a 1D dataset into a plain distributed Vec (its ownership range); the Vec's
  /// global size must equal the dataset's length. Collective.
  void read_vec(const std::string& dataset, Vec v) const;
  /// A whole 1D dataset on every rank. Collective.
  std::vector<double> read_array(const std::string& dataset) const;
  std::vector<std::int64_t> read_array_int64(const std::string& dataset) const;
  /// A scalar string dataset. Collective.
  std::string read_string(const std::string& dataset) const;

  /// Attributes of an object ("/" for the file). Numeric attributes convert between
  /// integer and floating point; a missing attribute is an IoError. Collective.
  bool has_attribute(const std::string& object, const std::string& name) const;
  double attribute_double(const std::string& object, const std::string& name) const;
  std::int64_t attribute_int64(const std::string& object, const std::string& name) const;
  std::string attribute_string(const std::string& object, const std::string& name) const;
  std::vector<double> attribute_doubles(const std::string& object, const std::string& name) const;
  std::vector<std::int64_t> attribute_int64s(const std::string& object,
                                             const std::string& name) const;
  std::vector<std::string> attribute_strings(const std::string& object,
                                             const std::string& name) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::io
