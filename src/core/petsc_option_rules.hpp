#pragma once
// Private: which PETSc options fracmfg accepts from a deck (`petsc.options`), from the
// command line after `--` and from the PETSC_OPTIONS environment variable.
//
// One rule for every source: fracmfg writes only the files a deck names (output.file, its
// sidecar, output.checkpoint_file), so an option that would make PETSc write, read or
// connect elsewhere is refused before PETSc sees it:
//  - a viewer with a file name ("-ksp_monitor :out.txt", "-log_view ascii:log.txt",
//    "-mat_view binary:A.dat") or of a kind that always writes a file or opens a
//    connection ("-vec_view binary", "-ksp_view_mat hdf5", "-dm_view vtk", "socket", ...);
//  - the options that name a file outright (-options_file, -history, -info <file>,
//    -log_trace <file>, -draw_save, -viewer_binary_filename, ...), since a file read
//    through -options_file would bypass this check;
//  - the options that start another program (-start_in_debugger, -on_error_attach_debugger),
//    which in a batch job waits for a terminal that is not there.
// A deck's options are inserted after PETSc started, so options that PETSc reads only in
// PetscInitialize (-malloc_debug, -fp_trap, -on_error_abort, ...) would be ignored there:
// a deck refuses them and says to give them on the command line instead. -log_view in a
// deck works (the driver starts PETSc's logging when the deck asks for it). A word that is
// not an option and not the value of the option before it is refused too: PETSc would
// ignore it without a word.

#include <cstddef>
#include <string>
#include <vector>

namespace fracmfg::core {

/// One option of an options string, split as PETSc's PetscOptionsInsertString splits it:
/// words separated by blanks, a value in double quotes kept whole.
struct PetscOptionWord {
  std::string name;        ///< "-ksp_monitor"
  std::string value;       ///< "" when none
  bool has_value = false;  ///< a value followed the name
  std::size_t offset = 0;  ///< where the name starts in the string
};

/// The options of `text`; a word that is neither an option name nor the value after one is
/// returned with an empty name (PETSc ignores it; refused_petsc_option refuses it).
std::vector<PetscOptionWord> split_petsc_options(const std::string& text);

/// Where the options come from, for the rule on options read only at start-up.
enum class PetscOptionSource {
  command_line,  ///< given to PetscInitialize: start-up options work
  deck,          ///< inserted after PetscInitialize: start-up options would be ignored
};

/// Why `option` is refused, as a phrase that completes "'<name> <value>' ..."
/// ("writes the file 'out.txt'"), together with what to do instead; "" when it is accepted.
std::string refused_petsc_option(const PetscOptionWord& option, PetscOptionSource source);

/// The first refused option of `text`, as "'<name> <value>' <reason>", or "" when every
/// option is accepted.
std::string first_refused_petsc_option(const std::string& text, PetscOptionSource source);

}  // namespace fracmfg::core
