#pragma once
// fracmfg's exception hierarchy. Host code reports failures by throwing one of these; the
// driver (core::guarded_main) maps each type to a documented exit code.

#include <stdexcept>
#include <string>
#include <vector>

namespace fracmfg {

/// Exit codes of the fracmfg driver (documented in README.md and `fracmfg --help`).
enum class ExitCode : int {
  success = 0,
  failure = 1,       ///< any other error
  usage = 2,         ///< bad command line or bad input deck
  not_compiled = 3,  ///< a backend or feature this build does not have
  numerical = 4,     ///< a solve diverged, produced NaN or a negative density
  io = 5,            ///< a file could not be read or written
  petsc = 6,         ///< PETSc reported an error
  interrupted = 75,  ///< stopped by a signal after writing a checkpoint: resume from it
};

/// Base of all fracmfg errors.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  virtual ExitCode exit_code() const noexcept { return ExitCode::failure; }
};

/// A problem in an input deck: where it is (file, 1-based line and column, dotted key path)
/// and what is wrong. what() reads "file:line:column: key: message".
class DeckError : public Error {
 public:
  DeckError(std::string file, int line, int column, std::string key, std::string message);
  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  int column() const noexcept { return column_; }
  const std::string& key() const noexcept { return key_; }
  const std::string& message() const noexcept { return message_; }
  ExitCode exit_code() const noexcept override { return ExitCode::usage; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string key_;
  std::string message_;
};

/// A command-line mistake (unknown subcommand, missing argument).
class UsageError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::usage; }
};

/// A backend or feature that this build does not contain; lists what is available.
class NotCompiled : public Error {
 public:
  NotCompiled(const std::string& feature, const std::vector<std::string>& available);
  ExitCode exit_code() const noexcept override { return ExitCode::not_compiled; }
};

/// An error code returned by PETSc, with PETSc's own message and the failing call.
class PetscError : public Error {
 public:
  PetscError(int code, const std::string& message) : Error(message), code_(code) {}
  int code() const noexcept { return code_; }
  ExitCode exit_code() const noexcept override { return ExitCode::petsc; }

 private:
  int code_;
};

/// A solve that diverged or produced non-finite or inadmissible values.
class NumericalError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::numerical; }
};

/// A file that could not be opened, read, written or renamed.
class IoError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const noexcept override { return ExitCode::io; }
};

}  // namespace fracmfg
