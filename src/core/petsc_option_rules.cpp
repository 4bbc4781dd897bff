#include "core/petsc_option_rules.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace fracmfg::core {

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// PETSc's rule (PetscOptionsInsertArgs): a word is an option name when it starts with '-'
// and is not a number (-1, -.5, -1e3 are values).
bool is_option_name(std::string_view w) {
  if (w.size() < 2 || w[0] != '-') return false;
  const char c = w[1];
  return !(std::isdigit(static_cast<unsigned char>(c)) || c == '.');
}

// Viewer kinds that write a file even without a file name (binary writes "binaryoutput",
// hdf5 and vtk their own default names) or open a connection.
constexpr std::array<std::string_view, 9> kWritingViewers = {
    "binary", "hdf5", "vtk", "matlab", "socket", "saws", "glvis", "exodusii", "adios"};
// Every viewer kind PETSc knows, for "kind:file" values.
constexpr std::array<std::string_view, 13> kViewerKinds = {
    "ascii", "binary", "hdf5",  "vtk",      "matlab", "socket",     "saws",
    "glvis", "draw",   "adios", "exodusii", "stdout", "mathematica"};

template <std::size_t N>
bool one_of(std::string_view w, const std::array<std::string_view, N>& words) {
  return std::find(words.begin(), words.end(), w) != words.end();
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// A name that takes a viewer: PETSc's -*_view, -*_monitor and their variants.
bool takes_viewer(std::string_view name) {
  return ends_with(name, "_view") || name.find("_view_") != std::string_view::npos ||
         ends_with(name, "_monitor") || name.find("_monitor_") != std::string_view::npos ||
         name == "-log_view" || name == "-options_view";
}

// Options that name a file (read or written) in their value, or whose value is one.
constexpr std::array<std::string_view, 10> kFileOptions = {"-options_file",
                                                           "-options_file_yaml",
                                                           "-history",
                                                           "-log_trace",
                                                           "-viewer_binary_filename",
                                                           "-log_mpe",
                                                           "-draw_save",
                                                           "-draw_save_movie",
                                                           "-malloc_dump_file",
                                                           "-viewer_socket_machine"};

// Options that start another program.
constexpr std::array<std::string_view, 5> kDebuggerOptions = {
    "-start_in_debugger", "-on_error_attach_debugger", "-stop_for_debugger", "-on_error_emacs",
    "-debugger_ranks"};

// Options PETSc reads only while it starts (PetscOptionsCheckInitial_Private and the
// malloc set-up): inserted later, from a deck, nothing reads them.
constexpr std::array<std::string_view, 20> kStartUpOptions = {"-malloc_debug",
                                                              "-malloc_dump",
                                                              "-malloc_test",
                                                              "-malloc_view",
                                                              "-malloc_coalesce",
                                                              "-malloc_hbw",
                                                              "-malloc_requested_size",
                                                              "-malloc_view_threshold",
                                                              "-memory_view",
                                                              "-fp_trap",
                                                              "-on_error_abort",
                                                              "-on_error_mpiabort",
                                                              "-no_signal_handler",
                                                              "-skip_petscrc",
                                                              "-options_monitor",
                                                              "-log_exclude",
                                                              "-log_sync",
                                                              "-objects_dump",
                                                              "-check_pointer_intensity",
                                                              "-info"};

std::string quoted(const PetscOptionWord& o) {
  if (o.name.empty()) return "'" + o.value + "'";
  return "'" + o.name + (o.has_value ? " " + o.value : std::string()) + "'";
}

}  // namespace

std::vector<PetscOptionWord> split_petsc_options(const std::string& text) {
  struct Word {
    std::string text;
    std::size_t offset;
  };
  std::vector<Word> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_blank(text[i])) ++i;
    if (i >= text.size()) break;
    const std::size_t start = i;
    std::string w;
    if (text[i] == '"') {
      ++i;
      while (i < text.size() && text[i] != '"') w += text[i++];
      if (i < text.size()) ++i;
    } else {
      while (i < text.size() && !is_blank(text[i])) w += text[i++];
    }
    words.push_back({std::move(w), start});
  }
  std::vector<PetscOptionWord> out;
  for (std::size_t k = 0; k < words.size(); ++k) {
    PetscOptionWord o;
    o.offset = words[k].offset;
    if (is_option_name(words[k].text)) {
      o.name = words[k].text;
      if (k + 1 < words.size() && !is_option_name(words[k + 1].text)) {
        o.value = words[++k].text;
        o.has_value = true;
      }
    } else {
      o.value = words[k].text;
      o.has_value = true;
    }
    out.push_back(std::move(o));
  }
  return out;
}

std::string refused_petsc_option(const PetscOptionWord& option, PetscOptionSource source) {
  const std::string_view name = option.name;
  if (name.empty()) {
    // A word that is neither an option nor the one value after one: PETSc would skip it.
    return "is not a PETSc option: options start with '-' (e.g. -ksp_monitor), each followed "
           "by at most one value, and PETSc would ignore this word";
  }
  const std::string_view value = option.value;
  const std::string outputs =
      "fracmfg writes only the files the deck names (output.file, its .xmf sidecar, "
      "output.checkpoint_file)";
  if (one_of(name, kDebuggerOptions)) {
    return "starts a debugger, which waits for a terminal a batch job does not have; run the "
           "debugger yourself (e.g. mpiexec -n 2 xterm -e gdb --args fracmfg run DECK)";
  }
  if (one_of(name, kFileOptions)) {
    if (name == "-options_file" || name == "-options_file_yaml") {
      return "reads options from another file, which would escape these checks; put the "
             "options in the deck's petsc.options or after -- on the command line";
    }
    return "names a file for PETSc to write; " + outputs;
  }
  // -info [file][:classes]: a file name before the first ':' makes it write per-rank files.
  if (name == "-info" && option.has_value && !value.empty() && value.front() != ':' &&
      value.front() != '~') {
    return "writes PETSc's information messages to the file '" +
           std::string(value.substr(0, value.find(':'))) + "'; " + outputs +
           " (-info alone prints them to the terminal)";
  }
  if (option.has_value && name != "-info") {
    const std::size_t colon = value.find(':');
    if (colon != std::string_view::npos) {
      const std::string_view kind = value.substr(0, colon);
      const std::string_view rest = value.substr(colon + 1);
      const std::string_view file = rest.substr(0, rest.find(':'));
      if ((kind.empty() || one_of(kind, kViewerKinds)) && !file.empty()) {
        const bool text = kind.empty() || kind == "ascii" || kind == "stdout";
        const std::string hint =
            text ? " (without the file name, " + std::string(name) + " prints to the terminal)"
                 : "";
        return "writes the file '" + std::string(file) + "'; " + outputs + hint;
      }
      if (one_of(kind, kWritingViewers)) {
        return "writes a " + std::string(kind) + " file (or opens a connection); " + outputs;
      }
    } else if (takes_viewer(name) && one_of(value, kWritingViewers)) {
      return "writes a " + std::string(value) +
             " file of PETSc's default name (or opens a connection); " + outputs;
    }
  }
  if (source == PetscOptionSource::deck && one_of(name, kStartUpOptions)) {
    return "is read only while PETSc starts, before the deck is read, so it would have no "
           "effect here; give it on the command line after --, e.g. fracmfg run DECK -- " +
           std::string(name);
  }
  return "";
}

std::string first_refused_petsc_option(const std::string& text, PetscOptionSource source) {
  for (const auto& o : split_petsc_options(text)) {
    const std::string why = refused_petsc_option(o, source);
    if (!why.empty()) return quoted(o) + " " + why;
  }
  return "";
}

}  // namespace fracmfg::core
