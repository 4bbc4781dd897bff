#include "fracmfg/io/restart_source.hpp"

#include <petscsys.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_options.hpp"
#include "fracmfg/io/h5_reader.hpp"
#include "fracmfg/io/output_paths.hpp"

namespace fracmfg::io {

namespace {

// Rank 0's value, on every rank: the ranks must agree on whether the run resumes, and a
// launcher does not promise the same environment everywhere.
std::string broadcast(MPI_Comm comm, std::string text) {
  int length = static_cast<int>(text.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  std::vector<char> buffer(text.begin(), text.end());
  buffer.resize(static_cast<std::size_t>(length));
  if (length > 0) MPI_Bcast(buffer.data(), length, MPI_CHAR, 0, comm);
  return std::string(buffer.begin(), buffer.end());
}

std::string environment_value(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const char* value = rank == 0 ? std::getenv(kRestartVariable) : nullptr;
  return broadcast(comm, value != nullptr ? value : "");
}

std::filesystem::path normalised(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? std::filesystem::path(path).lexically_normal() : p;
}

[[noreturn]] void fail(const std::string& message, ExitCode code) {
  throw core::CollectiveError(message, code, 0);
}

}  // namespace

RestartSource restart_source(MPI_Comm comm, const std::string& option,
                             const std::string& option_default) {
  const std::string from_environment = environment_value(comm);
  // Registered, so that -help lists it (with the default file).
  std::optional<std::string> value;
  core::collective(comm, [&] {
    value = core::option_string(
        comm, "", option,
        {"fracmfg restart options",
         option_default.empty() ? std::string("Checkpoint file to resume from (or FRACMFG_RESTART)")
                                : "Checkpoint file to resume from (or FRACMFG_RESTART; no file: " +
                                      option_default + ")"});
  });
  std::string from_option;
  if (value) {
    from_option = !value->empty() ? *value : option_default;
    if (from_option.empty()) {
      fail(option + " needs a checkpoint file (" + option + " FILE)", ExitCode::usage);
    }
  }
  if (!from_environment.empty() && !from_option.empty() &&
      normalised(from_environment) != normalised(from_option)) {
    fail(std::string("two checkpoints to resume from: ") + kRestartVariable + "=" +
             from_environment + " and " + option + " " + from_option +
             "; give one of them (or the same file in both)",
         ExitCode::usage);
  }
  if (!from_environment.empty()) return {from_environment, kRestartVariable};
  if (!from_option.empty()) return {from_option, option};
  return {};
}

void check_checkpoint(MPI_Comm comm, const RestartSource& source, const std::string& problem) {
  if (source.empty()) return;
  const std::string what = "cannot resume from " + source.origin +
                           (source.origin.empty() || source.origin[0] == '-' ? " " : "=") +
                           source.path + ": ";
  // Rank 0 looks first, for a message in plain words (the ranks share the file system
  // as far as a checkpoint goes: it is read collectively).
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string problem_text;
  if (rank == 0) {
    std::error_code ec;
    const auto status = std::filesystem::status(source.path, ec);
    if (!std::filesystem::exists(status)) {
      problem_text = "no such file";
    } else if (std::filesystem::is_directory(status)) {
      problem_text = "it is a directory";
    } else if (!std::ifstream(source.path, std::ios::binary).good()) {
      problem_text = "the file cannot be read";
    }
  }
  problem_text = broadcast(comm, problem_text);
  if (!problem_text.empty()) fail(what + problem_text, ExitCode::io);

  std::string kind, written_by;
  try {
    core::collective(comm, [&] {
      H5Reader in(comm, source.path);
      kind = in.has_attribute("/", "file_kind") ? in.attribute_string("/", "file_kind") : "";
      written_by = in.has_attribute("/", "problem") ? in.attribute_string("/", "problem") : "";
    });
  } catch (const core::CollectiveError& e) {
    fail(what + e.what(), ExitCode::io);
  }
  if (kind != "checkpoint") {
    fail(what + "it is not a fracmfg checkpoint" +
             (kind.empty() ? std::string() : " (it is an " + kind + " file)"),
         ExitCode::io);
  }
  if (written_by != problem) {
    fail(what + "it is a checkpoint of " +
             (written_by.empty() ? std::string("an unnamed problem")
                                 : "a '" + written_by + "' run") +
             ", the deck is a '" + problem + "' problem",
         ExitCode::usage);
  }
}

void check_restart_keeps_outputs(MPI_Comm comm, const RestartSource& source,
                                 const OutputConfig& output) {
  if (source.empty()) return;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string clash;
  if (rank == 0) {
    if (same_file(source.path, output.file)) {
      clash = "the results file '" + output.file + "'";
    } else if (const std::string sidecar = xdmf_sidecar_path(output.file);
               same_file(source.path, sidecar)) {
      clash = "the XDMF sidecar '" + sidecar + "' of the results";
    }
  }
  clash = broadcast(comm, clash);
  if (clash.empty()) return;
  fail("cannot resume from " + source.origin +
           (source.origin.empty() || source.origin[0] == '-' ? " " : "=") + source.path +
           ": it is " + clash +
           " of this deck, which the run would overwrite; resume from the "
           "checkpoint (output.checkpoint_file: " +
           output.checkpoint_file + ")",
       ExitCode::usage);
}

void refuse_restart(MPI_Comm comm, const std::string& problem, const std::string& reason) {
  const std::string value = environment_value(comm);
  if (value.empty()) return;
  fail(std::string(kRestartVariable) + "=" + value + " is set, but " + problem +
           " runs cannot resume from a checkpoint (" + reason + "); unset " + kRestartVariable +
           " to run the deck from the start",
       ExitCode::usage);
}

}  // namespace fracmfg::io
