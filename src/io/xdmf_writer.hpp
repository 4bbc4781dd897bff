#pragma once
// Private: the XDMF 2 sidecar that lets ParaView/VisIt open fracmfg's field time series.
// Fields on the same grid (same shape and geometry) share one temporal collection: one
// Uniform grid per written step, holding an Attribute per field (per component when
// dof > 1) that selects the step's level (and component) of the HDF5 dataset
// "<h5 file name>:/fields/<name>/values" (relative to the .xmf file) with a HyperSlab item.

#include <cstdint>
#include <string>
#include <vector>

#include "fracmfg/io/h5_layout.hpp"

namespace fracmfg::io::detail {

struct XdmfField {
  std::string name;
  FieldShape shape;
  UniformGrid grid;
  std::vector<std::string> component_names;  ///< dof entries
  std::vector<std::int64_t> steps;           ///< of every level, increasing
  std::vector<double> times;                 ///< same length as steps
};

/// The XDMF document for `fields`, stored in the HDF5 file named h5_file_name (a name
/// relative to the .xmf file's directory). Pure function.
std::string render_xdmf(const std::string& h5_file_name, const std::vector<XdmfField>& fields);

/// Writes text to `path` atomically: a temporary file in the same directory, fsync, rename.
/// IoError naming the path on failure (the temporary file is removed).
void write_text_file_atomically(const std::string& path, const std::string& text);

/// fsyncs a file (and, for durability of a rename, its directory). IoError on failure.
void fsync_path(const std::string& path, bool directory);

}  // namespace fracmfg::io::detail
