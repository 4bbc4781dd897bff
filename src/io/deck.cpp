#include "fracmfg/io/deck.hpp"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "io/config_fill.hpp"
#include "io/deck_validate.hpp"

namespace fracmfg::io {

namespace {

constexpr std::uintmax_t kMaxDeckBytes = 16u << 20;

std::string read_file(const std::string& path) {
  namespace fs = std::filesystem;
  const auto fail = [&path](const std::string& message) {
    throw DeckError(path, 0, 0, "", message);
  };
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    fail("cannot read the deck: " + ec.message());
  }
  if (!fs::exists(status)) fail("cannot read the deck: no such file");
  if (fs::is_directory(status)) fail("is a directory, not a deck file");
  if (!fs::is_regular_file(status)) fail("is not a regular file");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxDeckBytes) {
    fail("file is too large for a deck (" + std::to_string(size) + " bytes; at most 16 MiB)");
  }
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) fail(std::string("cannot read the deck: ") + std::strerror(errno));
  std::string text;
  char buf[65536];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    text.append(buf, n);
    if (text.size() > kMaxDeckBytes) break;
  }
  const bool error = std::ferror(f) != 0;
  const int saved = errno;
  std::fclose(f);
  if (error) fail(std::string("cannot read the deck: ") + std::strerror(saved));
  if (text.size() > kMaxDeckBytes) fail("file is too large for a deck (at most 16 MiB)");
  return text;
}

void emit_section(YAML::Emitter& out, const detail::Value& section) {
  out << YAML::BeginMap;
  for (const auto& v : section.children) {
    // An absent section without defaults (fode.terms) has nothing to fill in.
    if (v.field->is_section() && !v.given && v.children.empty()) continue;
    out << YAML::Key << v.field->name() << YAML::Value;
    switch (v.field->kind()) {
      case FieldKind::section: emit_section(out, v); break;
      case FieldKind::integer: out << std::to_string(v.integer); break;
      case FieldKind::real: out << format_yaml_real(v.real); break;
      case FieldKind::boolean: out << (v.boolean ? "true" : "false"); break;
      case FieldKind::enumeration: out << v.text; break;
      case FieldKind::string:
      case FieldKind::expression: out << YAML::DoubleQuoted << v.text; break;
      case FieldKind::integer_list:
        out << YAML::Flow << YAML::BeginSeq;
        for (const long long x : v.integers) out << std::to_string(x);
        out << YAML::EndSeq;
        break;
      case FieldKind::real_list:
        out << YAML::Flow << YAML::BeginSeq;
        for (const double x : v.reals) out << format_yaml_real(x);
        out << YAML::EndSeq;
        break;
      case FieldKind::expression_list:
        out << YAML::Flow << YAML::BeginSeq;
        for (const auto& x : v.texts) out << YAML::DoubleQuoted << x;
        out << YAML::EndSeq;
        break;
    }
  }
  out << YAML::EndMap;
}

std::string resolve(const detail::Value& root, const std::string& file) {
  YAML::Emitter out;
  out << YAML::Comment(file + " with every default filled in");
  emit_section(out, root);
  return std::string(out.c_str()) + "\n";
}

}  // namespace

struct Deck::Impl {
  std::string file;
  std::string text;
  std::string resolved;
  detail::Value root;
  Problem problem = Problem::mfg;
  ExecutionConfig execution;
  OutputConfig output;
  LoggingConfig logging;
  std::string petsc_options;
  std::optional<MfgConfig> mfg;
  std::optional<FodeConfig> fode;
  std::optional<FpdeConfig> fpde;

  [[noreturn]] void wrong_problem(Problem wanted) const {
    const detail::Value& p = root.at("problem");
    throw DeckError(file, p.pos.line, p.pos.column, "problem",
                    std::string("this deck is for problem ") + to_string(problem) + "; it has no " +
                        to_string(wanted) + " configuration");
  }
};

Deck::Deck(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Deck Deck::from_string(const std::string& text, const std::string& file_name) {
  auto impl = std::make_shared<Impl>();
  impl->file = file_name;
  impl->text = text;
  impl->root = detail::validate_deck(text, file_name);
  impl->resolved = resolve(impl->root, file_name);
  impl->problem = detail::problem_of(impl->root);
  impl->execution = detail::execution_config(impl->root);
  impl->output = detail::output_config(impl->root);
  impl->logging = detail::logging_config(impl->root);
  impl->petsc_options = detail::petsc_options(impl->root);
  switch (impl->problem) {
    case Problem::mfg: impl->mfg = detail::mfg_config(impl->root); break;
    case Problem::fode: impl->fode = detail::fode_config(impl->root); break;
    case Problem::fpde: impl->fpde = detail::fpde_config(impl->root); break;
  }
  return Deck(std::move(impl));
}

Deck Deck::from_file(const std::string& path) {
  return from_string(read_file(path), path);
}

Deck Deck::load(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // header = {status (0 ok, 1 read error), payload bytes}; the payload is the text or the
  // error message. Only rank 0 touches the file system.
  long long header[2] = {0, 0};
  std::string payload;
  if (rank == 0) {
    try {
      payload = read_file(path);
    } catch (const DeckError& e) {
      header[0] = 1;
      payload = e.message();
    } catch (const std::exception& e) {
      header[0] = 1;
      payload = std::string("cannot read the deck: ") + e.what();
    }
    header[1] = static_cast<long long>(payload.size());
  }
  MPI_Bcast(header, 2, MPI_LONG_LONG, 0, comm);
  payload.resize(static_cast<std::size_t>(header[1]));
  if (header[1] > 0) MPI_Bcast(payload.data(), static_cast<int>(header[1]), MPI_CHAR, 0, comm);
  if (header[0] != 0) throw DeckError(path, 0, 0, "", payload);
  return from_string(payload, path);
}

Problem Deck::problem() const {
  return impl_->problem;
}
std::string Deck::file() const {
  return impl_->file;
}
std::string Deck::text() const {
  return impl_->text;
}
std::string Deck::resolved_yaml() const {
  return impl_->resolved;
}
ExecutionConfig Deck::execution() const {
  return impl_->execution;
}
OutputConfig Deck::output() const {
  return impl_->output;
}
LoggingConfig Deck::logging() const {
  return impl_->logging;
}
std::string Deck::petsc_options() const {
  return impl_->petsc_options;
}

MfgConfig Deck::mfg() const {
  if (!impl_->mfg) impl_->wrong_problem(Problem::mfg);
  return *impl_->mfg;
}

FodeConfig Deck::fode() const {
  if (!impl_->fode) impl_->wrong_problem(Problem::fode);
  return *impl_->fode;
}

FpdeConfig Deck::fpde() const {
  if (!impl_->fpde) impl_->wrong_problem(Problem::fpde);
  return *impl_->fpde;
}

}  // namespace fracmfg::io
