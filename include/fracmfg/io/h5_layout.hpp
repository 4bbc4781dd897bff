#pragma once
// The layout of fracmfg's HDF5 files, and the small value types shared by io::H5Writer,
// io::H5Reader and the checkpoint classes.
//
// Output file (io::H5Writer), e.g. results/crowd_1d.h5, read with h5py as
//   f = h5py.File("results/crowd_1d.h5")
//   m = f["fields/m/values"]          # shape (levels, nx): m[k] is the field at level k
//   t = f["fields/m/time"][...]        # the time of every level; f["fields/m/step"] its step
//   x = m.attrs["origin"][0] + m.attrs["spacing"][0] * np.arange(m.shape[-1])
//
//   /                          attributes:
//       layout_version           int64   kLayoutVersion (2: one extendible dataset per field)
//       fracmfg_version          string  library version (FRACMFG_VERSION_STRING)
//       git_revision             string  source revision of the build (FRACMFG_GIT_REVISION)
//       mpi_ranks                int64   number of ranks that wrote the file (last writer)
//       created                  string  creation time, UTC, ISO 8601 ("2024-05-01T12:00:00Z")
//       problem                  string  problem name (mfg | fode | fpde | ...)
//       deck                     string  the input deck as the user wrote it
//       resolved_deck            string  the deck with every default filled in
//       file_kind                string  "output" (or "checkpoint", see below)
//       continued_at_step        int64   only in a file continued by a resumed run: the first
//                                        step the resumed run wrote
//   /time                      float64 [n]  time of every step any field was written at
//   /step                      int64   [n]  those steps, increasing (when every field has the
//                              same levels: hard links to the first field's time and step)
//   /fields/<name>             group, one per time-series field, holding:
//     values                   float64 [levels][nx], [levels][ny][nx] or [levels][nz][ny][nx]
//                              in global natural order (x fastest), with a trailing [dof]
//                              dimension when dof > 1; chunked, the level axis unlimited;
//                              attributes:
//       axes                     string       "level,y,x" (slowest first; ",component" with dof)
//       dim                      int64        1, 2 or 3
//       global_size              int64 [dim]  grid points in x (, y, z)
//       dof                      int64        components per grid point
//       component_names          string [dof]
//       origin, spacing          float64 [dim] uniform grid geometry (x first): point i sits
//                                             at origin + i * spacing
//       centring                 string       "node": values at the grid points
//       boundary                 string [dim] per axis, x first: "none", "periodic", "ghosted"
//                                             or "mirror" (the DMDA's boundary type)
//     time                     float64 [levels]  the time of every level
//     step                     int64   [levels]  the step number of every level, increasing
//   any other path             datasets written with H5Writer::write_dmda (shape as one
//                              level, attributes dim, global_size, dof), write_distributed
//                              (1D, the ranks' blocks in rank order), write_array and
//                              write_string (rank 0's data), and attributes set_attribute_*.
//
// The XDMF sidecar <name>.xmf (same directory, same base name) describes /fields as one
// temporal collection per grid, each level a hyperslab of /fields/<name>/values, so that
// ParaView or VisIt open the time series directly.
//
// Checkpoint file (io::CheckpointWriter):
//
//   /                          attributes as above (file_kind = "checkpoint", no deck) plus
//       checkpoint_format        int64   format version, kCheckpointFormat
//       step                     int64   the step the checkpoint was taken at
//       time                     float64 the time of that step
//   /fields/<name>             DMDA field dataset at one step: shape [ny][nx] (as one level
//                              of a time series), attributes dim, global_size, dof
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

/// Uniform grid geometry of a field, for the file and the XDMF sidecar (length units of the
/// problem).
/// Point (i, j, k) sits at origin + (i*spacing[0], j*spacing[1], k*spacing[2]).
struct UniformGrid {
  std::array<double, 3> origin = {0.0, 0.0, 0.0};   ///< x, y, z
  std::array<double, 3> spacing = {1.0, 1.0, 1.0};  ///< x, y, z
};

/// Version of the output layout written by this library (root attribute layout_version of
/// every file, results and checkpoints). 1 (no attribute): one dataset per field and step.
inline constexpr std::int64_t kLayoutVersion = 2;

/// "/fields/<name>/values", "/fields/<name>/time", "/fields/<name>/step".
std::string field_values_path(const std::string& name);
std::string field_time_path(const std::string& name);
std::string field_step_path(const std::string& name);

/// Version of the checkpoint layout written by this library; the reader refuses others.
inline constexpr std::int64_t kCheckpointFormat = 1;

}  // namespace fracmfg::io
