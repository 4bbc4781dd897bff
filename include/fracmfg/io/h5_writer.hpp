#pragma once
// io::H5Writer: parallel HDF5 output of a run (fields on DMDAs as time series, distributed
// arrays, replicated data and attributes), written atomically, with an XDMF sidecar.
// The file layout is documented in fracmfg/io/h5_layout.hpp.
//
//   io::H5Writer::check_output_path(comm, "results/crowd.h5");   // before the solve
//   io::H5Writer out(comm, "results/crowd.h5", {"mfg", deck_text, resolved_deck});
//   out.define_field("m", {{0.0}, {dx}}, {"m"});                  // optional geometry
//   for (...) out.write_field("m", da, m, step, t);               // each rank its own box
//   out.commit();          // only now does results/crowd.h5 (and crowd.xmf) appear
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
// No HDF5 header is included here: HDF5 is a private dependency of libfracmfg.

#include <mpi.h>
#include <petscdm.h>
#include <petscvec.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fracmfg/io/h5_layout.hpp"

namespace fracmfg::io {

/// Run description stored as file attributes (see h5_layout.hpp).
struct H5WriterOptions {
  std::string problem;        ///< problem name, attribute "problem"
  std::string deck;           ///< original deck text, attribute "deck"
  std::string resolved_deck;  ///< deck with defaults filled in, attribute "resolved_deck"
  bool write_xdmf = true;     ///< write <name>.xmf next to the file at commit
};

/// Presentation of a time-series field (for the XDMF sidecar and the group attributes).
struct FieldInfo {
  UniformGrid grid;                          ///< origin and spacing of the grid points
  std::vector<std::string> component_names;  ///< dof names; empty: "<name>" or "<name>_<c>"
};

class H5Writer {
 public:
  /// Checks that the directory of `path` exists or can be created (rank 0 creates it) and
  /// that a file can be created in it, and that `path` is not a directory. Collective;
  /// every rank throws the same IoError naming the path when the check fails. Call it
  /// before a long solve so a bad output path fails in the first second.
  static void check_output_path(MPI_Comm comm, const std::string& path);

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

  // --- time series --------------------------------------------------------------------
  /// Sets the geometry and component names of field `name` (before its first write; a
  /// field written without it gets origin 0, spacing 1). Collective.
  void define_field(const std::string& name, const FieldInfo& info);
  /// Writes Vec v (a global vector of the DMDA da, 1-3D, any dof) as /fields/<name>/<step>
  /// with attributes time and step, and records (step, time) in the index. Each rank
  /// writes its own box (DMDAGetCorners) with one collective hyperslab write straight from
  /// the Vec's array. Every write of a field must have the same global shape; writing the
  /// same (name, step) twice is an IoError. Collective.
  void write_field(const std::string& name, DM da, Vec v, std::int64_t step, double time);

  // --- other datasets (absolute or relative paths; missing groups are created) ----------
  /// A DMDA Vec at an arbitrary path, same layout and attributes as write_field. Collective.
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

  /// Writes the step index (/time, /step, per-field steps and times), closes the file,
  /// waits for every rank, renames the file to its final name (rank 0, after fsync) and
  /// writes the XDMF sidecar (rank 0, temporary name then rename). Collective; afterwards
  /// the writer accepts no more data. A failure leaves the final name untouched.
  void commit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::io
