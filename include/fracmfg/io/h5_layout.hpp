#pragma once
// The layout of fracmfg's HDF5 files, and the small value types shared by io::H5Writer,
// io::H5Reader and the checkpoint classes.
//
// Output file (io::H5Writer), e.g. results/crowd_1d.h5, read with h5py as
//   f = h5py.File("results/crowd_1d.h5"); m = f["fields/m/000010"][...]
//
//   /                          attributes:
//       fracmfg_version          string  library version (FRACMFG_VERSION_STRING)
//       git_revision             string  source revision of the build (FRACMFG_GIT_REVISION)
//       mpi_ranks                int64   number of ranks that wrote the file
//       created                  string  creation time, UTC, ISO 8601 ("2024-05-01T12:00:00Z")
//       problem                  string  problem name (mfg | fode | fpde | ...)
//       deck                     string  the input deck as the user wrote it
//       resolved_deck            string  the deck with every default filled in
//       file_kind                string  "output" (or "checkpoint", see below)
//   /time                      float64 [n]  time of each written step (first write order)
//   /step                      int64   [n]  step number of each written step
//   /fields/<name>             group, one per time-series field; attributes:
//       dim                      int64        1, 2 or 3
//       global_size              int64 [dim]  grid points in x (, y, z)
//       dof                      int64        components per grid point
//       component_names          string [dof]
//       origin, spacing          float64 [dim] uniform grid geometry (x first)
//       steps, times             int64 [k], float64 [k]  the steps written for this field
//   /fields/<name>/<step>      float64 dataset, <step> zero-padded to 6 digits ("000010");
//                              shape [nx], [ny][nx] or [nz][ny][nx], in global natural
//                              order (x fastest), with a trailing [dof] dimension when dof > 1;
//                              attributes time (float64), step (int64), dim, global_size, dof
//   any other path             datasets written with H5Writer::write_dmda (same shape rules
//                              and attributes dim, global_size, dof), write_distributed
//                              (1D, the ranks' blocks in rank order), write_array and
//                              write_string (rank 0's data), and attributes set_attribute_*.
//
// The XDMF sidecar <name>.xmf (same directory, same base name) describes /fields as one
// temporal collection per grid so that ParaView or VisIt open the time series directly.
//
// Checkpoint file (io::CheckpointWriter):
//
//   /                          attributes as above (file_kind = "checkpoint", no deck) plus
//       checkpoint_format        int64   format version, kCheckpointFormat
//       step                     int64   the step the checkpoint was taken at
//       time                     float64 the time of that step
//   /fields/<name>             DMDA field dataset (shape rules and attributes as above)
//   /arrays/<name>             1D dataset (float64 or int64), the ranks' blocks in order
//   /scalars                   group; one attribute per scalar (float64, int64 or string)
//
// Files are written under a temporary name in the same directory and renamed to the final
// name only when complete, so the final name always holds a complete file (or nothing).

#include <petscsys.h>

#include <array>
#include <cstdint>
#include <string>

namespace fracmfg::io {

/// Global size of a field on a DMDA, as stored in the file: what a reader needs to build a
/// DMDA (of any decomposition) that the field can be read into.
struct FieldShape {
  int dim = 1;                               ///< 1, 2 or 3
  std::array<PetscInt, 3> size = {1, 1, 1};  ///< grid points in x, y, z (1 beyond dim)
  PetscInt dof = 1;                          ///< components per grid point

  bool operator==(const FieldShape& o) const {
    return dim == o.dim && size == o.size && dof == o.dof;
  }
  bool operator!=(const FieldShape& o) const { return !(*this == o); }
};

/// "[nx]" / "[ny, nx]" / "[ny, nx, dof]": the dataset shape, slowest first.
std::string to_string(const FieldShape& shape);

/// Uniform grid geometry of a field, for the XDMF sidecar (length units of the problem).
/// Point (i, j, k) sits at origin + (i*spacing[0], j*spacing[1], k*spacing[2]).
struct UniformGrid {
  std::array<double, 3> origin = {0.0, 0.0, 0.0};   ///< x, y, z
  std::array<double, 3> spacing = {1.0, 1.0, 1.0};  ///< x, y, z
};

/// "/fields/<name>/<step>" with the step zero-padded to 6 digits.
std::string field_dataset_path(const std::string& name, std::int64_t step);

/// Version of the checkpoint layout written by this library; the reader refuses others.
inline constexpr std::int64_t kCheckpointFormat = 1;

}  // namespace fracmfg::io
