#pragma once
// Private to the deck reader: the schema of each section (one file per problem type) and
// the cross-field checks that a per-field schema cannot express (list lengths that must
// agree, keys needed only for some values of others, formulas that must be positive).

#include <string>

#include "fracmfg/io/schema.hpp"
#include "io/deck_value.hpp"

namespace fracmfg::io::detail {

Field execution_schema();
Field output_schema();
Field logging_schema();
Field petsc_schema();
Field mfg_schema();
Field fode_schema();
Field fpde_schema();

/// Fills the defaults that depend on the deck's file name (output.file, checkpoint_file).
void fill_output_defaults(Value& root, const std::string& file);
/// The deck, the results, their sidecar and the checkpoint must be four different files, and
/// no target may exist as anything but a regular file (io/output_paths.hpp); a DeckError at
/// output.file or output.checkpoint_file otherwise. Call after fill_output_defaults.
void check_output_section(const Value& root, const std::string& file);

/// petsc.options may not name files for PETSc to write or read, start a debugger, or hold
/// options PETSc reads only at start-up (core/petsc_option_rules.hpp).
void check_petsc_section(const Value& root, const std::string& file);

void check_mfg(const Value& root, const std::string& file);
void check_fode(const Value& root, const std::string& file);
void check_fpde(const Value& root, const std::string& file);

// Helpers shared by the problem checks.

/// `points` (a list) must have as many items as `length`.
void check_grid_matches_domain(const Value& points, const Value& length, const std::string& file);
/// In a 1D domain, the expression at `value` must not use y.
void check_no_y_in_1d(const Value& value, std::size_t dimension, const std::string& file);

}  // namespace fracmfg::io::detail
