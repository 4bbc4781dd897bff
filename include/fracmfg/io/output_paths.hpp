#pragma once
// Where a run writes, checked before anything is written. A run reads its deck and writes up
// to three files: the results (output.file), their XDMF sidecar (the results path with its
// extension replaced by .xmf) and the checkpoint (output.checkpoint_file). These must be four
// different files, and a target that already exists must be a regular file: results that
// replace the deck, a sidecar that replaces the results, a checkpoint that the results
// replace, or a device node (/dev/full) that a finished file is renamed over are refused.
//
// The deck reader applies find_output_path_problem() once the output defaults are filled
// in, so `fracmfg validate` and every problem type refuse such decks with a DeckError at the
// offending key (exit code 2). The writers call require_replaceable() right before they
// rename a finished file to its final name.

#include <optional>
#include <string>

#include "fracmfg/io/config.hpp"

namespace fracmfg::io {

/// The XDMF sidecar of a results file: `results_file` with its extension replaced by .xmf
/// ("results/crowd.h5" -> "results/crowd.xmf"). Pure function.
std::string xdmf_sidecar_path(const std::string& results_file);

/// True when `a` and `b` name the same file: the same device and inode when both exist
/// (hard and symbolic links count as the same file), else the same absolute path after
/// normalisation (std::filesystem::weakly_canonical). Looks at the file system only.
bool same_file(const std::string& a, const std::string& b);

/// What is wrong with a deck's output paths, and the key of `output` it is charged to.
struct OutputPathProblem {
  std::string key;      ///< "file" or "checkpoint_file"
  std::string message;  ///< e.g. "'r.xmf' is also its own XDMF sidecar ..."
};

/// Checks the deck file `deck_file`, output.file, its sidecar and output.checkpoint_file:
/// nullopt when they are four different files and none exists as anything but a regular
/// file (through symbolic links: a directory, device, FIFO or socket is refused). Looks at
/// the file system, changes nothing; not collective.
std::optional<OutputPathProblem> find_output_path_problem(const std::string& deck_file,
                                                          const OutputConfig& output);

/// Throws IoError when `path` exists and is not a regular file (following symbolic links; a
/// dangling link may be replaced): the check before a finished file is renamed over `path`.
void require_replaceable(const std::string& path);

}  // namespace fracmfg::io
