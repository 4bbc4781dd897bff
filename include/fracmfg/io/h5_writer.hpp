#pragma once
// io::H5Writer: parallel HDF5 output of a run (fields on DMDAs as time series, distributed
// arrays, replicated data and attributes), written atomically, with an XDMF sidecar.
// The file layout is documented in fracmfg/io/h5_layout.hpp.
//
//   io::H5Writer::check_output_path(comm, "results/crowd.h5", bytes);  // before the solve
//   io::H5Writer out(comm, "results/crowd.h5", {"mfg", deck_text, resolved_deck});
//   out.define_field("m", {{0.0}, {dx}}, {"m"});                  // optional geometry
//   for (...) out.write_field("m", da, m, step, t);               // each rank its own box
//   out.commit();          // only now does results/crowd.h5 (and crowd.xmf) appear
//
// A time-series field is one dataset with the level (written step) as its first axis,
// chunked and extended as levels arrive. Levels wait in memory until a chunk's worth (about
// 1 MiB of the field, or one level of a larger field) is there, then go out in one
// collective write: writing N levels costs O(N) bytes and O(N / levels per chunk) HDF5
// calls, and a fixed number of HDF5 objects per field. The XDMF sidecar is rendered once,
// at commit.
//
// Continuing a file (H5WriterOptions::continue_existing, a resumed run): the temporary file
// starts as a copy of the committed file of that name, its levels at continue_at_step and
// later are dropped, new levels are appended, and commit() replaces the file atomically as
// usual; without a file of that name a new one is started.
//
// Atomicity: the file is written as ".<name>.tmp-<job>-<random>" in the target directory
// and renamed to the final name by commit(). Destroying an uncommitted writer (an exception,
// an early return) removes the temporary file and never touches the final name; a killed
// job leaves at most the temporary file behind, and an existing file of the final name
// stays intact until a new one is complete.
//
// Collectivity: every member function except the accessors is collective on the writer's
// communicator: all ranks call it, in the same order, with the same names (and the same
// step/time). Data arguments differ per rank only where stated (the rank's own box or
// block). Errors are fracmfg::IoError naming the file, the object and what failed; errors
// detected by one rank only (directory checks, rename) are shared, so every rank throws the
// same IoError. Wrap creation in core::collective() to get the driver's single-message exit.
//
// Failed writes: when HDF5 fails to write (disk full, the file size limit, an I/O error;
// often only seen when the file is flushed or closed; for a time series, at the write_field
// call that completes a chunk, or at commit), the temporary file is removed at once
// and every rank throws the same io::WriteError naming the final file and the system's
// reason ("No space left on device"); the final name is never touched, and the writer
// accepts no more data. commit() checks that the closed file opens as a complete HDF5 file
// before it renames it, so a truncated file never appears under the final name.
//
// Free space: check_output_path() with expected_bytes > 0 also compares the free space of
// the target file system with the estimate (see the solvers' *_output_bytes functions);
// FRACMFG_SKIP_SPACE_CHECK=1 in rank 0's environment skips that comparison (for file
// systems whose free space statvfs does not report, or to test the failure of a write).
//
// No HDF5 header is included here: HDF5 is a private dependency of libfracmfg.

#include <mpi.h>
#include <petscdm.h>
#include <petscvec.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/io/h5_layout.hpp"

namespace fracmfg::io {

/// A file could not be written (disk full, file too large, I/O error, or the finished file
/// could not be published). Thrown by every rank of the file's communicator together, after
/// the temporary file was removed; the final name is untouched (an older file of that name,
/// such as the previous checkpoint, stays valid). A driver can turn it into its single-line
/// collective exit (exit code 5) without a further collective call.
class WriteError : public IoError {
 public:
  using IoError::IoError;
};

/// One file a run will write and the space it needs at most (bytes; 0: not checked).
struct OutputSpace {
  std::string path;
  std::uint64_t bytes = 0;
};

/// Disk space a run needs (bytes), estimated before the solve by the solvers'
/// *_output_bytes functions: its results file, and its checkpoints at their peak (two files:
/// the previous checkpoint stays until the new one has replaced it; 0 without checkpoints).
struct OutputBytes {
  std::uint64_t results = 0;
  std::uint64_t checkpoints = 0;
};

/// HDF5 structure around the data, for those estimates: per file (superblock, root
/// attributes with the deck text, step index), per dataset (object header, its attributes,
/// its link) and per chunk of an extendible dataset (its B-tree entry), plus the 16 bytes of
/// time and step per level of a time series (series_bytes). About twice what fracmfg's files
/// use (HDF5 1.10, 1.8 format).
inline constexpr std::uint64_t kH5FileOverhead = 64 * 1024;
inline constexpr std::uint64_t kH5DatasetOverhead = 1024;
inline constexpr std::uint64_t kH5ChunkOverhead = 64;

/// Bytes of one time-series field of `levels` levels of `values` doubles each: the data,
/// time and step of every level, its three datasets and their chunks' index entries.
std::uint64_t series_bytes(std::uint64_t levels, std::uint64_t values);

/// "812 B", "1.5 kB", "12.3 MB", "4.0 GB" (decimal units, one decimal).
std::string format_bytes(std::uint64_t bytes);

/// Free space needed for `bytes` of output: bytes x 1.1 + 1 MiB (HDF5 metadata and the
/// error of the estimate).
std::uint64_t space_needed(std::uint64_t bytes);

/// Run description stored as file attributes (see h5_layout.hpp).
struct H5WriterOptions {
  std::string problem;        ///< problem name, attribute "problem"
  std::string deck;           ///< original deck text, attribute "deck"
  std::string resolved_deck;  ///< deck with defaults filled in, attribute "resolved_deck"
  bool write_xdmf = true;     ///< write <name>.xmf next to the file at commit
  /// Continue the committed file at the final name, if there is one: keep its levels before
  /// continue_at_step (drop the others) and append. Rank 0's values count.
  bool continue_existing = false;
  std::int64_t continue_at_step = 0;
};

/// Presentation of a time-series field (for the XDMF sidecar and the attributes of its
/// values dataset).
struct FieldInfo {
  UniformGrid grid;                          ///< origin and spacing of the grid points
  std::vector<std::string> component_names;  ///< dof names; empty: "<name>" or "<name>_<c>"
  /// Levels the run will write, when known (0: unknown): chunks span no more levels, so a
  /// short series of a small field does not take a whole chunk of disk space.
  std::int64_t expected_levels = 0;
};

class H5Writer {
 public:
  /// Checks that the directory of `path` exists or can be created (rank 0 creates it) and
  /// that a file can be created in it, and that `path` is not a directory. With
  /// expected_bytes > 0 it also checks (rank 0, statvfs of the directory) that the file
  /// system has space_needed(expected_bytes) free, else IoError "<path>: the results need
  /// about X MB, the file system has Y MB free". Collective; every rank takes rank 0's
  /// decision and throws the same IoError naming the path when the check fails. Call it
  /// before a long solve so a bad output path or a full disk fails in the first second.
  static void check_output_path(MPI_Comm comm, const std::string& path,
                                std::uint64_t expected_bytes = 0);
  /// The same for several files (results and checkpoints): each path is checked, and the
  /// bytes of the paths on one file system are added up before comparing with its free
  /// space. Collective.
  static void check_output_paths(MPI_Comm comm, const std::vector<OutputSpace>& files);

  /// Creates the temporary file (after check_output_path) and writes the file attributes.
  /// Collective on comm; comm must stay valid for the writer's lifetime. Options are
  /// taken from rank 0.
  H5Writer(MPI_Comm comm, const std::string& path, const H5WriterOptions& options = {});
  /// Not committed: removes the temporary file (rank 0) and closes it (collectively, unless
  /// the destructor runs during exception unwinding, when other ranks may not be there:
  /// then the handle is left to HDF5, which closes it at MPI_Finalize). Never touches the
  /// final name.
  ~H5Writer();
  H5Writer(H5Writer&&) noexcept;
  H5Writer& operator=(H5Writer&&) noexcept;
  H5Writer(const H5Writer&) = delete;
  H5Writer& operator=(const H5Writer&) = delete;

  const std::string& path() const;            ///< the final name
  const std::string& temporary_path() const;  ///< where the data goes until commit()
  bool committed() const;
  MPI_Comm comm() const;
  /// True when the writer continues an existing file (continue_existing and the file was
  /// there).
  bool continued() const;
  /// The levels of field `name` this writer holds: kept from a continued file and written
  /// since (0 for a field it does not have). The same on every rank; not collective.
  std::int64_t field_levels(const std::string& name) const;

  // --- time series --------------------------------------------------------------------
  /// Sets the geometry and component names of field `name` (before its first write; a
  /// field written without it gets origin 0, spacing 1; a field of a continued file keeps
  /// the geometry stored in the file). Collective.
  void define_field(const std::string& name, const FieldInfo& info);
  /// Appends Vec v (a global vector of the DMDA da, 1-3D, any dof) as the next level of
  /// /fields/<name>/values, with its time and step (rank 0's values are stored). Each rank
  /// contributes its own box (DMDAGetCorners). Every write of a field must have the same
  /// global shape, and its steps must increase (else IoError). The checks are agreed by
  /// every rank at each call. Collective.
  void write_field(const std::string& name, DM da, Vec v, std::int64_t step, double time);
  /// The same from the rank's box of the field in natural order (x fastest, dof innermost;
  /// the layout of a DMDA global Vec's local array), copied before the call returns. For
  /// many small levels: the DMDA is checked (collectively) at the first write and whenever
  /// da changes, otherwise the call communicates only when a chunk is complete. Collective.
  void write_field(const std::string& name, DM da, const PetscScalar* local, std::int64_t step,
                   double time);

  // --- other datasets (absolute or relative paths; missing groups are created) ----------
  /// A DMDA Vec at an arbitrary path: one dataset of the shape of one level of a time series
  /// (no level axis), attributes dim, global_size, dof. Collective.
  void write_dmda(const std::string& dataset, DM da, Vec v);
  /// A 1D dataset made of every rank's block in rank order (global size = sum of the
  /// local counts, which may differ per rank and be 0). Collective.
  void write_distributed(const std::string& dataset, const double* local, std::size_t count);
  void write_distributed(const std::string& dataset, const std::int64_t* local, std::size_t count);
  /// A plain distributed Vec (no DM): its ownership blocks in rank order. Collective.
  void write_vec(const std::string& dataset, Vec v);
  /// A 1D dataset holding rank 0's values (other ranks' arguments are ignored). Collective.
  void write_array(const std::string& dataset, const std::vector<double>& values);
  void write_array(const std::string& dataset, const std::vector<std::int64_t>& values);
  /// A scalar string dataset holding rank 0's text. Collective.
  void write_string(const std::string& dataset, const std::string& text);

  /// Attribute `name` on the existing object `object` ("/" for the file); rank 0's value is
  /// written; an existing attribute of that name is replaced. Collective.
  void set_attribute_double(const std::string& object, const std::string& name, double value);
  void set_attribute_int64(const std::string& object, const std::string& name, std::int64_t value);
  void set_attribute_string(const std::string& object, const std::string& name,
                            const std::string& value);
  void set_attribute_doubles(const std::string& object, const std::string& name,
                             const std::vector<double>& values);

  /// Writes the levels still in memory and the step index (/time, /step), closes the file,
  /// waits for every rank, renames the file to its final name (rank 0, after fsync) and
  /// writes the XDMF sidecar (rank 0, temporary name then rename). Collective; afterwards
  /// the writer accepts no more data. A failure (flush, close, an incomplete file, fsync,
  /// rename) is a WriteError on every rank and leaves the final name untouched.
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::io
