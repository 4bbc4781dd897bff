#pragma once
// Private: creating, writing and reading fracmfg's datasets (DMDA boxes, 1D blocks, strings)
// on an open parallel HDF5 file. Used by H5Writer, H5Reader and the checkpoint classes.
// Every function is collective on the file's communicator; `file_name` only labels errors.

#include <hdf5.h>
#include <petscdm.h>
#include <petscvec.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "fracmfg/io/h5_layout.hpp"
#include "io/h5_handles.hpp"

namespace fracmfg::io::detail {

/// VecGetArrayRead / VecGetArray for the lifetime of the object.
class VecReadAccess {
 public:
  explicit VecReadAccess(Vec v);
  VecReadAccess(const VecReadAccess&) = delete;
  VecReadAccess& operator=(const VecReadAccess&) = delete;
  ~VecReadAccess();
  const PetscScalar* data() const { return data_; }

 private:
  Vec v_;
  const PetscScalar* data_ = nullptr;
};

class VecWriteAccess {
 public:
  explicit VecWriteAccess(Vec v);
  VecWriteAccess(const VecWriteAccess&) = delete;
  VecWriteAccess& operator=(const VecWriteAccess&) = delete;
  ~VecWriteAccess();
  PetscScalar* data() const { return data_; }

 private:
  Vec v_;
  PetscScalar* data_ = nullptr;
};

/// The part of a DMDA that this rank owns, and the global shape.
struct DmdaBox {
  FieldShape shape;
  std::array<PetscInt, 3> start = {0, 0, 0};  ///< x, y, z (DMDAGetCorners)
  std::array<PetscInt, 3> count = {1, 1, 1};  ///< x, y, z
  std::array<DMBoundaryType, 3> boundary = {DM_BOUNDARY_NONE, DM_BOUNDARY_NONE,
                                            DM_BOUNDARY_NONE};  ///< x, y, z

  std::size_t local_size() const;
  std::vector<hsize_t> file_start() const;  ///< slowest first, + dof when dof > 1
  std::vector<hsize_t> file_count() const;
};

/// Reads the DMDA's shape and this rank's corners and checks that v (unless null) is a global
/// vector of da (same local size) and that da lives on comm. Collective on comm: a failure on any
/// rank is an IoError on every rank.
DmdaBox dmda_box(MPI_Comm comm, DM da, Vec v, const std::string& what);

/// Dataset dimensions of a field: [nz][ny][nx] truncated to dim, + [dof] when dof > 1.
std::vector<hsize_t> field_dims(const FieldShape& shape);

H5Dataset create_dataset(hid_t file, const std::string& path, hid_t file_type,
                         const std::vector<hsize_t>& dims, const std::string& file_name);
H5Dataset open_dataset(hid_t file, const std::string& path, const std::string& file_name);
H5Group open_group(hid_t file, const std::string& path, const std::string& file_name);
/// Opens the group, creating it (and its parents) when missing.
H5Group open_or_create_group(hid_t file, const std::string& path, const std::string& file_name);
/// Opens any object (group or dataset) for attribute access.
H5Object open_object(hid_t file, const std::string& path, const std::string& file_name);

/// Sorted attribute names of an object.
std::vector<std::string> list_attributes(hid_t file, const std::string& path,
                                         const std::string& file_name);

/// Sorted member names of a group.
std::vector<std::string> list_group(hid_t file, const std::string& path,
                                    const std::string& file_name);

/// Writes v (global vector of da) at `path` with attributes dim, global_size and dof.
void write_dmda_dataset(MPI_Comm comm, hid_t file, const std::string& path, DM da, Vec v,
                        const std::string& file_name);
/// Reads the dataset at `path` into v; IoError when the shapes differ.
void read_dmda_dataset(MPI_Comm comm, hid_t file, const std::string& path, DM da, Vec v,
                       const std::string& file_name);
/// The shape of one level of a time-series dataset (/fields/<name>/values), from its
/// attributes, checked against its dimensions (a leading level axis).
FieldShape read_series_shape(hid_t file, const std::string& path, const std::string& file_name);
/// Reads level `level` of a time-series dataset into v (global vector of da); IoError when
/// the shapes differ or the level is past the end.
void read_series_level(MPI_Comm comm, hid_t file, const std::string& path, hsize_t level, DM da,
                       Vec v, const std::string& file_name);
/// The FieldShape stored in a DMDA dataset's attributes, checked against its dimensions.
FieldShape read_field_shape(hid_t file, const std::string& path, const std::string& file_name);

/// Collective hyperslab transfer of [start, start + count) of an open dataset (a rank with
/// an empty count takes part and transfers nothing); the memory buffer is contiguous.
void write_hyperslab(hid_t dataset, hid_t mem_type, const void* data,
                     const std::vector<hsize_t>& start, const std::vector<hsize_t>& count,
                     const std::string& file_name, const std::string& what);
void read_hyperslab(hid_t dataset, hid_t mem_type, void* data, const std::vector<hsize_t>& start,
                    const std::vector<hsize_t>& count, const std::string& file_name,
                    const std::string& what);

/// A chunked dataset with an unlimited first (level) axis, created empty: dims
/// [0, level_dims...], chunks [chunk...] (same rank). Collective.
H5Dataset create_extendible_dataset(hid_t file, const std::string& path, hid_t file_type,
                                    const std::vector<hsize_t>& level_dims,
                                    const std::vector<hsize_t>& chunk,
                                    const std::string& file_name);
/// Sets the first dimension of an extendible dataset to `levels` (grows or shrinks it).
/// Collective.
void set_levels(hid_t dataset, hsize_t levels, const std::string& what);

/// Writes a 1D dataset of `total` elements; this rank writes [offset, offset + count).
void write_block_dataset(hid_t file, const std::string& path, hid_t file_type, hid_t mem_type,
                         const void* data, hsize_t offset, hsize_t count, hsize_t total,
                         const std::string& file_name);
/// Reads [offset, offset + count) of a 1D dataset into data (count elements of mem_type);
/// a range outside the dataset on any rank is an IoError on every rank of comm.
void read_block_dataset(MPI_Comm comm, hid_t file, const std::string& path, hid_t mem_type,
                        void* data, hsize_t offset, hsize_t count, const std::string& file_name);
/// Length of a 1D dataset (IoError for other ranks).
hsize_t dataset_length(hid_t file, const std::string& path, const std::string& file_name);

/// A scalar fixed-length string dataset; rank `writer` (true on one rank) writes the text,
/// every rank must pass the same text length.
void write_string_dataset(hid_t file, const std::string& path, const std::string& text, bool writer,
                          const std::string& file_name);
std::string read_string_dataset(hid_t file, const std::string& path, const std::string& file_name);

}  // namespace fracmfg::io::detail
