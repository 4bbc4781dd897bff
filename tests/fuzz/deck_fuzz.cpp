// libFuzzer target: the deck reader (io::Deck::from_string) on arbitrary bytes.
//
// Properties checked on every input, beyond "no crash, no sanitizer report, no hang":
//   - a deck that is refused is refused with a DeckError that names the deck
//     ("fuzz.yaml:..."), never with another exception;
//   - a deck that is accepted compiles its formulas, and its resolved form (every default
//     filled in) reads back to the same configurations.
// Run by scripts/fuzz (seeds: inputs/*.yaml and tests/unit/decks, dictionary deck.dict).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "fracmfg/core/error.hpp"
#include "fracmfg/io/deck.hpp"

namespace {

constexpr const char* kName = "fuzz.yaml";

[[noreturn]] void broken(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "deck_fuzz: %s\n%s\n", what.c_str(), detail.c_str());
  std::abort();
}

void check_round_trip(const fracmfg::io::Deck& deck) {
  using fracmfg::io::Deck;
  using fracmfg::io::Problem;
  Deck again = [&] {
    try {
      return Deck::from_string(deck.resolved_yaml(), kName);
    } catch (const std::exception& e) {
      broken("the resolved deck does not read back", deck.resolved_yaml() + "\n" + e.what());
    }
  }();
  if (!(again.problem() == deck.problem() && again.output() == deck.output() &&
        again.execution() == deck.execution() && again.logging() == deck.logging() &&
        again.petsc_options() == deck.petsc_options())) {
    broken("the resolved deck reads back to other shared sections", deck.resolved_yaml());
  }
  const bool same = deck.problem() == Problem::mfg    ? again.mfg() == deck.mfg()
                    : deck.problem() == Problem::fode ? again.fode() == deck.fode()
                                                      : again.fpde() == deck.fpde();
  if (!same) broken("the resolved deck reads back to another problem", deck.resolved_yaml());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const fracmfg::io::Deck deck = fracmfg::io::Deck::from_string(text, kName);
    check_round_trip(deck);
  } catch (const fracmfg::DeckError& e) {
    if (e.file() != kName || std::string(e.what()).rfind(kName, 0) != 0) {
      broken("a DeckError that does not name the deck", e.what());
    }
    if (e.exit_code() != fracmfg::ExitCode::usage) broken("a DeckError with exit code != 2", "");
  }
  return 0;
}
