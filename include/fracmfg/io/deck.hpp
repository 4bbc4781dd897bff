#pragma once
// io::Deck: an input deck read, validated against the deck schema (io/schema.hpp,
// docs/deck_reference.md) and turned into typed configurations (io/config.hpp).
//
//   auto deck = io::Deck::load(comm, "inputs/crowd_1d.yaml");   // collective
//   if (deck.problem() == io::Problem::mfg) run(deck.mfg(), deck.execution());
//   log.info("deck:\n", deck.resolved_yaml());
//
// Every problem with a deck is a fracmfg::DeckError whose what() reads
//   crowd.yaml:12:5: mfg.grid.points[1]: expected an integer >= 3, got -3
// (the file as given, 1-based line and column, the full dotted key). Unknown keys are
// errors with the closest valid key; keys that apply only to other settings (an `mfg`
// section in a `problem: fode` deck, `coupling.exponent` with `coupling.type: log`) are
// errors too. Formulas are compiled when the deck is read.
//
// A Deck is an immutable value; copies share their state and may be used from any thread.
// Accessors return copies (configs are small), so `Deck::from_file(p).mfg()` is safe.

#include <mpi.h>

#include <memory>
#include <string>

#include "fracmfg/io/config.hpp"

namespace fracmfg::io {

class Deck {
 public:
  /// Parses and validates `text`; `file_name` is used in messages and for the default
  /// output file name (results/<stem of file_name>.h5). Not collective. Throws DeckError.
  static Deck from_string(const std::string& text, const std::string& file_name = "<string>");
  /// Reads `path` (a missing or unreadable file, a directory, a file over 16 MiB are
  /// DeckErrors) and calls from_string(). Not collective.
  static Deck from_file(const std::string& path);
  /// Collective on comm: rank 0 reads the file and broadcasts its text (or the read error);
  /// every rank then parses the same text, so either every rank returns an equal Deck or
  /// every rank throws the same DeckError; no rank throws before the broadcast. To report a
  /// deck error once, run it inside core::collective().
  static Deck load(MPI_Comm comm, const std::string& path);

  Problem problem() const;
  /// The file name as given.
  std::string file() const;
  /// The deck's text as read.
  std::string text() const;
  /// The whole deck with every default filled in (YAML, keys in reference order); reading
  /// it back gives the same configurations.
  std::string resolved_yaml() const;

  ExecutionConfig execution() const;
  OutputConfig output() const;
  LoggingConfig logging() const;
  /// petsc.options: the string for PETSc's options database ("" by default).
  std::string petsc_options() const;

  /// The problem's configuration; throws DeckError (at the `problem` key) when the deck is
  /// for another problem.
  MfgConfig mfg() const;
  FodeConfig fode() const;
  FpdeConfig fpde() const;

 private:
  struct Impl;
  explicit Deck(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace fracmfg::io
