#include "fracmfg/io/output_paths.hpp"

#include <filesystem>
#include <sys/stat.h>
#include <system_error>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "io/deck_schema_sections.hpp"

namespace fracmfg::io {

namespace fs = std::filesystem;

namespace {

// What a path that exists but is not a regular file is, for messages; "" for a regular file
// or a path that does not exist (or cannot be looked at: the writer reports that later, with
// the system's reason).
std::string non_regular_kind(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st) || fs::is_regular_file(st)) return "";
  switch (st.type()) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

fs::path normalised(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  if (ec) return fs::path(path).lexically_normal();
  const fs::path canonical = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : canonical;
}

// NAME_MAX and PATH_MAX of Linux file systems (ext4, XFS, Lustre, GPFS, NFS).
constexpr std::size_t kMaxFileName = 255;
constexpr std::size_t kMaxPath = 4096;

struct Role {
  std::string what;  // "the results file"
  std::string path;
  std::string key;  // the output key it is charged to; "" for the deck
};

}  // namespace

std::string xdmf_sidecar_path(const std::string& results_file) {
  fs::path p(results_file);
  p.replace_extension(".xmf");
  return p.string();
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) {
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  }
  return normalised(a) == normalised(b);
}

std::optional<OutputPathProblem> find_output_path_problem(const std::string& deck_file,
                                                          const OutputConfig& output) {
  const std::string rule =
      "; the deck, the results file, their XDMF sidecar and the checkpoint must be four "
      "different files";
  if (output.file.empty()) return OutputPathProblem{"file", "the results file name is empty"};
  if (output.checkpoint_file.empty()) {
    return OutputPathProblem{"checkpoint_file", "the checkpoint file name is empty"};
  }
  const std::vector<Role> roles = {
      {"the deck", deck_file, ""},
      {"the results file", output.file, "file"},
      {"the XDMF sidecar of the results", xdmf_sidecar_path(output.file), "file"},
      {"the checkpoint", output.checkpoint_file, "checkpoint_file"},
  };
  // Names the file systems cannot hold: the system would say "File name too long" only
  // when the file is created, after the solve.
  // (A checkpoint that is never written is not checked.)
  for (std::size_t i = 1; i < roles.size(); ++i) {
    if (i == 3 && output.checkpoint_every == 0) continue;
    const std::string name = std::filesystem::path(roles[i].path).filename().string();
    const std::string& whose = roles[i].what;
    if (name.size() > kMaxFileName) {
      return OutputPathProblem{roles[i].key, "the file name of " + whose + " is " +
                                                 std::to_string(name.size()) +
                                                 " bytes long; file systems allow at most " +
                                                 std::to_string(kMaxFileName) + " bytes per name"};
    }
    if (roles[i].path.size() >= kMaxPath) {
      return OutputPathProblem{roles[i].key, "the path of " + whose + " is " +
                                                 std::to_string(roles[i].path.size()) +
                                                 " bytes long; the system allows at most " +
                                                 std::to_string(kMaxPath - 1) + " bytes per path"};
    }
  }
  // Each target against the files before it: the deck, then the results, then the sidecar.
  for (std::size_t i = 1; i < roles.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (!same_file(roles[i].path, roles[j].path)) continue;
      std::string message;
      if (i == 2 && j == 1) {
        message = "'" + output.file +
                  "' is also its own XDMF sidecar (the results path with the extension .xmf); "
                  "give the results file another extension, e.g. .h5";
        return OutputPathProblem{"file", message};
      }
      message = (i == 2 ? roles[i].what + " '" : "'") + roles[i].path + "' is " +
                (j == 0 ? "" : "also ") + roles[j].what;
      if (roles[i].path != roles[j].path) message += " '" + roles[j].path + "'";
      if (j == 0) message += ", which the run would overwrite";
      return OutputPathProblem{roles[i].key, message + rule};
    }
  }
  for (std::size_t i = 1; i < roles.size(); ++i) {
    const std::string kind = non_regular_kind(roles[i].path);
    if (kind.empty()) continue;
    const std::string whose = i == 2 ? roles[i].what + " '" : "'";
    return OutputPathProblem{roles[i].key,
                             whose + roles[i].path + "' exists and is " + kind +
                                 "; output goes to a regular file (a new path, or a file to "
                                 "replace)"};
  }
  return std::nullopt;
}

void require_replaceable(const std::string& path) {
  const std::string kind = non_regular_kind(path);
  if (!kind.empty()) {
    throw IoError("will not replace '" + path + "': it is " + kind + ", not a regular file");
  }
}

namespace detail {

void check_output_section(const Value& root, const std::string& deck_file) {
  const Value& output = root.at("output");
  OutputConfig paths;
  paths.file = output.at("file").text;
  paths.checkpoint_file = output.at("checkpoint_file").text;
  paths.checkpoint_every = static_cast<int>(output.at("checkpoint_every").integer);
  const auto problem = find_output_path_problem(deck_file, paths);
  if (!problem) return;
  const Value& at = output.at(problem->key);
  std::string message = problem->message;
  if (!at.given) message += " (" + problem->key + " is the default here)";
  fail(deck_file, at.pos, at.path, message);
}

}  // namespace detail

}  // namespace fracmfg::io
