// Valid decks: the examples in inputs/ and tests/unit/decks/good parse, defaults are filled
// in, typed configs hold the deck's values, and the resolved YAML reads back to the same
// configs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/io/schema.hpp"

namespace fs = std::filesystem;
using namespace fracmfg::io;
using fracmfg::DeckError;

namespace {

fs::path source_dir() {
  const char* root = std::getenv("FRACMFG_SOURCE_DIR");
  return root != nullptr ? fs::path(root) : fs::current_path();
}

std::vector<fs::path> yaml_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<fs::path> all_good_decks() {
  auto files = yaml_files(source_dir() / "inputs");
  const auto more = yaml_files(source_dir() / "tests" / "unit" / "decks" / "good");
  files.insert(files.end(), more.begin(), more.end());
  return files;
}

Deck input(const std::string& name) {
  return Deck::from_file((source_dir() / "inputs" / name).string());
}

Deck good(const std::string& name) {
  return Deck::from_file((source_dir() / "tests" / "unit" / "decks" / "good" / name).string());
}

const Field& schema_field(const std::string& dotted) {
  const Field* f = &deck_schema();
  std::size_t start = 0;
  while (start <= dotted.size()) {
    const std::size_t dot = std::min(dotted.find('.', start), dotted.size());
    f = f->child(dotted.substr(start, dot - start));
    if (f == nullptr) throw std::logic_error("no schema field " + dotted);
    start = dot + 1;
  }
  return *f;
}

template <class E>
std::set<std::string> words_of(std::initializer_list<E> values) {
  std::set<std::string> words;
  for (E v : values) words.insert(to_string(v));
  return words;
}

std::set<std::string> schema_words(const std::string& dotted) {
  const auto& w = schema_field(dotted).words();
  return {w.begin(), w.end()};
}

void expect_same_configs(const Deck& a, const Deck& b) {
  EXPECT_EQ(a.problem(), b.problem());
  EXPECT_TRUE(a.execution() == b.execution());
  EXPECT_TRUE(a.output() == b.output());
  EXPECT_TRUE(a.logging() == b.logging());
  EXPECT_EQ(a.petsc_options(), b.petsc_options());
  switch (a.problem()) {
    case Problem::mfg: EXPECT_TRUE(a.mfg() == b.mfg()); break;
    case Problem::fode: EXPECT_TRUE(a.fode() == b.fode()); break;
    case Problem::fpde: EXPECT_TRUE(a.fpde() == b.fpde()); break;
  }
}

const char* const kMinimalMfg =
    "problem: mfg\n"
    "mfg:\n"
    "  domain: {length: [1.0], boundary: periodic}\n"
    "  grid: {points: [101]}\n"
    "  time: {horizon: 1.0, steps: 100}\n"
    "  diffusion: 0.0\n"
    "  coupling: {type: log}\n"
    "  initial_density: \"1\"\n";

}  // namespace

TEST(GoodDecks, EveryExampleDeckValidates) {
  const auto files = all_good_decks();
  ASSERT_GE(files.size(), 10u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    try {
      const Deck deck = Deck::from_file(f.string());
      EXPECT_EQ(deck.file(), f.string());
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(GoodDecks, EveryInputDeckHasACiTwin) {
  const auto files = yaml_files(source_dir() / "inputs");
  int full = 0;
  for (const auto& f : files) {
    const std::string stem = f.stem().string();
    if (stem.size() > 3 && stem.compare(stem.size() - 3, 3, "-ci") == 0) continue;
    ++full;
    EXPECT_TRUE(fs::exists(f.parent_path() / (stem + "-ci.yaml"))) << stem << " has no -ci twin";
  }
  EXPECT_GE(full, 5);
}

TEST(GoodDecks, Crowd1dHoldsItsValuesAndDefaults) {
  const Deck deck = input("crowd_1d.yaml");
  ASSERT_EQ(deck.problem(), Problem::mfg);
  const MfgConfig& c = deck.mfg();
  EXPECT_EQ(c.dimension(), 1);
  EXPECT_EQ(c.domain.length, std::vector<double>{1.0});
  EXPECT_EQ(c.domain.boundary, MfgConfig::Domain::Boundary::periodic);
  EXPECT_EQ(c.grid.points, std::vector<int>{400});
  EXPECT_EQ(c.time.horizon, 1.0);
  EXPECT_EQ(c.time.steps, 200);
  EXPECT_EQ(c.diffusion, 0.05);
  EXPECT_EQ(c.coupling.type, MfgConfig::Coupling::Type::log);
  EXPECT_EQ(c.coupling.potential.text, "0.5*cos(2*pi*x)");
  EXPECT_EQ(c.coupling.potential.variables, (std::vector<std::string>{"x", "y", "z", "t"}));
  EXPECT_EQ(c.initial_density.text, "exp(-(x-0.3)^2/0.005)");
  EXPECT_EQ(c.fokker_planck.method, MfgConfig::FokkerPlanck::Method::fdm);
  EXPECT_EQ(c.iteration.damping, 0.5);
  EXPECT_EQ(c.iteration.tolerance, 1.0e-8);
  EXPECT_EQ(c.iteration.max_iterations, 200);
  // Defaults.
  EXPECT_EQ(c.hamiltonian.control_cost.text, "1");
  EXPECT_EQ(c.coupling.strength, 1.0);
  EXPECT_EQ(c.sources.hjb.text, "0");
  EXPECT_EQ(c.sources.hjb.variables, (std::vector<std::string>{"x", "y", "z", "t"}));
  EXPECT_EQ(c.iteration.schedule, MfgConfig::Iteration::Schedule::fixed);
  EXPECT_EQ(c.iteration.anderson, 0);
  EXPECT_EQ(c.terminal_coupling, 0.0);
  EXPECT_EQ(deck.execution().backend, ExecutionConfig::Backend::automatic);
  EXPECT_TRUE(deck.execution().learn);
  EXPECT_FALSE(deck.execution().report);
  EXPECT_EQ(deck.execution().max_ranks_per_gpu, 4);
  EXPECT_EQ(deck.output().file, "results/crowd_1d.h5");
  EXPECT_EQ(deck.output().every, 10);
  EXPECT_EQ(deck.output().checkpoint_every, 20);
  EXPECT_EQ(deck.output().checkpoint_file, "results/crowd_1d.chk.h5");
  EXPECT_EQ(deck.logging().level, fracmfg::core::LogLevel::info);
  EXPECT_EQ(deck.petsc_options(),
            "-mfg_hjb_pc_type fracmfg_tridiag -mfg_fp_pc_type fracmfg_tridiag");
}

TEST(GoodDecks, FormulasFromTheDeckCompileAndEvaluate) {
  const Deck deck = input("crowd_1d.yaml");
  const auto m0 = deck.mfg().initial_density.compile();
  EXPECT_DOUBLE_EQ(m0({0.3, 0.0, 0.0}), 1.0);
  const auto v = deck.mfg().coupling.potential.compile();
  EXPECT_NEAR(v({0.5, 0.0, 0.0, 0.0}), -0.5, 1e-15);

  const FodeConfig& f = input("fode_relaxation.yaml").fode();
  ASSERT_EQ(f.dimension(), 2u);
  // Each formula declares t and the components it names, so evaluating it costs no more
  // for a large system.
  for (std::size_t i = 0; i < f.dimension(); ++i) {
    const auto compiled = f.rhs[i].compile();
    for (const auto& name : f.rhs[i].variables) {
      EXPECT_TRUE(name == "t" || compiled.uses(name)) << f.rhs[i].text << " declares " << name;
    }
  }
  EXPECT_EQ(f.rhs[1].variables, (std::vector<std::string>{"t", "y2"}));
  EXPECT_DOUBLE_EQ(f.rhs[1].compile()({0.0, 5.0}), -5.0);
}

TEST(GoodDecks, FodeRelaxationHoldsItsValues) {
  const Deck deck = input("fode_relaxation.yaml");
  ASSERT_EQ(deck.problem(), Problem::fode);
  const FodeConfig& c = deck.fode();
  EXPECT_EQ(c.order, (std::vector<double>{0.8, 1.6}));
  EXPECT_EQ(c.order_of(0), 0.8);
  EXPECT_EQ(c.order_of(1), 1.6);
  EXPECT_EQ(c.horizon, 10.0);
  EXPECT_EQ(c.steps, 2000);
  EXPECT_EQ(c.method, FodeConfig::Method::trapezoidal);
  EXPECT_EQ(c.history, FodeConfig::History::fft);
  EXPECT_EQ(c.newton.tolerance, 1e-12);
  EXPECT_EQ(c.newton.jacobian, FodeConfig::Newton::Jacobian::finite_difference);
  EXPECT_EQ(c.initial, (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(c.initial_derivative, (std::vector<double>{0.0, 0.0}));
}

TEST(GoodDecks, OneOrderServesEveryComponent) {
  const FodeConfig& c = good("fode_one_order.yaml").fode();
  EXPECT_EQ(c.dimension(), 3u);
  EXPECT_EQ(c.order, std::vector<double>{0.6});
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(c.order_of(i), 0.6);
  EXPECT_TRUE(c.initial_derivative.empty());
  EXPECT_EQ(c.newton.tolerance, 1e-10);
  EXPECT_EQ(c.newton.max_iterations, 20);
  EXPECT_EQ(c.rhs[2].text, "sin(t) - y3");
  EXPECT_EQ(c.rhs[2].variables, (std::vector<std::string>{"t", "y3"}));
}

TEST(GoodDecks, FodeTermsDeckHoldsAMultiTermEquation) {
  const FodeConfig& c = input("fode_bagley_torvik.yaml").fode();
  EXPECT_TRUE(c.multi_term());
  EXPECT_EQ(c.terms.order, (std::vector<double>{2.0, 1.5, 0.0}));
  EXPECT_EQ(c.terms.coefficient, (std::vector<double>{1.0, 1.0, 1.0}));
  EXPECT_EQ(c.dimension(), 1u);
  EXPECT_EQ(c.rhs[0].variables, (std::vector<std::string>{"t"}));
  EXPECT_EQ(c.initial, (std::vector<double>{1.0, 1.0}));
  EXPECT_TRUE(c.initial_derivative.empty());
  EXPECT_FALSE(input("fode_relaxation.yaml").fode().multi_term());
}

TEST(GoodDecks, FpdeDecksHoldTheirValues) {
  const FpdeConfig& sub = input("fpde_subdiffusion_1d.yaml").fpde();
  EXPECT_EQ(sub.type, FpdeConfig::Type::time_fractional);
  EXPECT_EQ(sub.order, 0.5);
  EXPECT_EQ(sub.domain.boundary, FpdeConfig::Domain::Boundary::dirichlet);
  EXPECT_EQ(sub.grid.points, std::vector<int>{400});
  EXPECT_EQ(sub.time.grading, 3.0);  // r = (2 - a) / a restores order 2 - a
  EXPECT_EQ(sub.history.method, FpdeConfig::History::Method::soe);
  EXPECT_EQ(sub.history.tolerance, 1e-10);
  EXPECT_EQ(sub.initial.text, "sin(pi*x)");

  const FpdeConfig& space = good("fpde_space_2d.yaml").fpde();
  EXPECT_EQ(space.type, FpdeConfig::Type::space_fractional);
  EXPECT_EQ(space.dimension(), 2);
  EXPECT_EQ(space.domain.length, (std::vector<double>{2.0, 1.0}));
  EXPECT_EQ(space.grid.points, (std::vector<int>{32, 16}));
  EXPECT_EQ(space.time.grading, 1.0);
  EXPECT_EQ(space.solver.preconditioner, FpdeConfig::Solver::Preconditioner::circulant);
  EXPECT_EQ(space.boundary_value.text, "0");  // not applicable: the struct default stays
}

TEST(GoodDecks, ShortFormsAreAccepted) {
  const Deck deck = good("mfg_every_key.yaml");
  const MfgConfig& c = deck.mfg();
  EXPECT_EQ(c.domain.length, std::vector<double>{2.0});  // "length: 2.0"
  EXPECT_EQ(c.grid.points, std::vector<int>{41});        // "points: 41"
  EXPECT_EQ(c.fokker_planck.particles, 100000);          // "particles: 1e5"
  EXPECT_EQ(c.fokker_planck.method, MfgConfig::FokkerPlanck::Method::particles);
  EXPECT_EQ(c.fokker_planck.bandwidth, 0.02);
  EXPECT_EQ(c.fokker_planck.seed, 7);
  EXPECT_EQ(c.coupling.type, MfgConfig::Coupling::Type::nonlocal);
  EXPECT_EQ(c.coupling.width, 0.05);
  EXPECT_EQ(c.iteration.damping, 1.0);  // "damping: 1"
  EXPECT_EQ(c.iteration.schedule, MfgConfig::Iteration::Schedule::fictitious_play);
  EXPECT_FALSE(deck.execution().learn);  // "no"
  EXPECT_TRUE(deck.execution().report);  // "yes"
  EXPECT_EQ(deck.execution().backend, ExecutionConfig::Backend::cpu);
  EXPECT_EQ(deck.output().checkpoint_file, "out/restart.h5");
  EXPECT_EQ(deck.logging().level, fracmfg::core::LogLevel::debug);
  EXPECT_TRUE(deck.logging().all_ranks);
}

TEST(GoodDecks, StructDefaultsMatchSchemaDefaults) {
  // A deck with only the required keys, set to the structs' placeholder values, must give
  // the default-constructed structs.
  const Deck mfg = Deck::from_string(kMinimalMfg, "minimal.yaml");
  EXPECT_TRUE(mfg.mfg() == MfgConfig{});
  EXPECT_TRUE(mfg.execution() == ExecutionConfig{});
  EXPECT_TRUE(mfg.logging() == LoggingConfig{});
  EXPECT_EQ(mfg.petsc_options(), "");
  OutputConfig out;
  out.file = "results/minimal.h5";
  out.checkpoint_file = "results/minimal.chk.h5";
  EXPECT_TRUE(mfg.output() == out);

  FodeConfig fode;
  fode.rhs = {ExpressionSpec{"-y1", {"t", "y1"}}};
  fode.initial = {1.0};
  const Deck f = Deck::from_string(
      "problem: fode\nfode: {order: [0.5], horizon: 1.0, steps: 100, rhs: [\"-y1\"], "
      "initial: [1.0]}\n",
      "f.yaml");
  EXPECT_TRUE(f.fode() == fode);

  const Deck p = Deck::from_string(
      "problem: fpde\n"
      "fpde:\n"
      "  type: time_fractional\n"
      "  order: 0.5\n"
      "  domain: {length: [1.0], boundary: dirichlet}\n"
      "  grid: {points: [101]}\n"
      "  time: {horizon: 1.0, steps: 100}\n"
      "  diffusivity: 1.0\n"
      "  initial: \"0\"\n",
      "p.yaml");
  EXPECT_TRUE(p.fpde() == FpdeConfig{});
}

TEST(GoodDecks, ResolvedYamlReadsBackToTheSameConfigs) {
  for (const auto& f : all_good_decks()) {
    SCOPED_TRACE(f.string());
    const Deck deck = Deck::from_file(f.string());
    const Deck again = Deck::from_string(deck.resolved_yaml(), deck.file());
    expect_same_configs(deck, again);
    // Resolving is idempotent: the resolved deck resolves to itself.
    EXPECT_EQ(again.resolved_yaml(), deck.resolved_yaml());
  }
}

TEST(GoodDecks, ResolvedYamlHoldsOnlyApplicableKeys) {
  const std::string crowd = input("crowd_1d.yaml").resolved_yaml();
  EXPECT_NE(crowd.find("problem: mfg"), std::string::npos);
  EXPECT_NE(crowd.find("checkpoint_file: \"results/crowd_1d.chk.h5\""), std::string::npos);
  EXPECT_NE(crowd.find("schedule: fixed"), std::string::npos);
  EXPECT_EQ(crowd.find("exponent:"), std::string::npos);   // coupling type log
  EXPECT_EQ(crowd.find("particles:"), std::string::npos);  // method fdm
  EXPECT_EQ(crowd.find("fode:"), std::string::npos);
  const std::string fode = input("fode_relaxation-ci.yaml").resolved_yaml();
  EXPECT_EQ(fode.find("newton:"), std::string::npos);  // method abm
  EXPECT_NE(fode.find("corrector_iterations: 1"), std::string::npos);
}

TEST(GoodDecks, DefaultOutputNamesFollowTheDeck) {
  const Deck a = Deck::from_string(kMinimalMfg, "runs/my_game.yaml");
  EXPECT_EQ(a.output().file, "results/my_game.h5");
  EXPECT_EQ(a.output().checkpoint_file, "results/my_game.chk.h5");
  const Deck b = Deck::from_string(std::string(kMinimalMfg) + "output: {file: out/a.h5}\n", "x");
  EXPECT_EQ(b.output().file, "out/a.h5");
  EXPECT_EQ(b.output().checkpoint_file, "out/a.chk.h5");
}

TEST(GoodDecks, TextIsKeptAsRead) {
  const Deck deck = Deck::from_string(kMinimalMfg, "minimal.yaml");
  EXPECT_EQ(deck.text(), kMinimalMfg);
  EXPECT_EQ(deck.file(), "minimal.yaml");
  std::ostringstream os;
  os << deck.problem();
  EXPECT_EQ(os.str(), "mfg");
}

TEST(GoodDecks, OtherProblemsConfigIsADeckError) {
  const Deck deck = Deck::from_string(kMinimalMfg, "minimal.yaml");
  EXPECT_NO_THROW(deck.mfg());
  try {
    deck.fode();
    FAIL() << "no error";
  } catch (const DeckError& e) {
    EXPECT_EQ(std::string(e.what()),
              "minimal.yaml:1:10: problem: this deck is for problem mfg; it has no fode "
              "configuration");
  }
  EXPECT_THROW(deck.fpde(), DeckError);
}

TEST(GoodDecks, HamiltonianParametersAreRead) {
  using H = MfgConfig::Hamiltonian::Type;
  const MfgConfig power = input("crowd_power_1d.yaml").mfg();
  EXPECT_EQ(power.hamiltonian.type, H::power);
  EXPECT_EQ(power.hamiltonian.exponent, 1.5);
  const MfgConfig congestion = input("congestion_2d.yaml").mfg();
  EXPECT_EQ(congestion.hamiltonian.type, H::congestion);
  EXPECT_EQ(congestion.hamiltonian.epsilon, 0.1);
  EXPECT_EQ(congestion.hamiltonian.alpha, 1.0);
  EXPECT_EQ(congestion.hamiltonian.exponent, MfgConfig::Hamiltonian{}.exponent);  // not used
}

TEST(GoodDecks, ConfigWordsAreTheSchemaWords) {
  EXPECT_EQ(schema_words("problem"), words_of({Problem::mfg, Problem::fode, Problem::fpde}));
  using B = ExecutionConfig::Backend;
  EXPECT_EQ(schema_words("execution.backend"), words_of({B::cpu, B::cuda, B::automatic}));
  using MB = MfgConfig::Domain::Boundary;
  EXPECT_EQ(schema_words("mfg.domain.boundary"), words_of({MB::periodic, MB::reflecting}));
  using H = MfgConfig::Hamiltonian::Type;
  EXPECT_EQ(schema_words("mfg.hamiltonian.type"),
            words_of({H::quadratic, H::power, H::congestion}));
  using C = MfgConfig::Coupling::Type;
  EXPECT_EQ(schema_words("mfg.coupling.type"), words_of({C::log, C::power, C::nonlocal}));
  using FP = MfgConfig::FokkerPlanck::Method;
  EXPECT_EQ(schema_words("mfg.fokker_planck.method"), words_of({FP::fdm, FP::particles}));
  using S = MfgConfig::Iteration::Schedule;
  EXPECT_EQ(schema_words("mfg.iteration.schedule"), words_of({S::fixed, S::fictitious_play}));
  using FM = FodeConfig::Method;
  EXPECT_EQ(schema_words("fode.method"), words_of({FM::abm, FM::trapezoidal}));
  using FH = FodeConfig::History;
  EXPECT_EQ(schema_words("fode.history"), words_of({FH::automatic, FH::direct, FH::fft}));
  EXPECT_EQ(schema_words("fode.newton.jacobian"),
            words_of({FodeConfig::Newton::Jacobian::finite_difference}));
  using PT = FpdeConfig::Type;
  EXPECT_EQ(schema_words("fpde.type"), words_of({PT::time_fractional, PT::space_fractional}));
  using PB = FpdeConfig::Domain::Boundary;
  EXPECT_EQ(schema_words("fpde.domain.boundary"),
            words_of({PB::dirichlet, PB::neumann, PB::periodic}));
  using PH = FpdeConfig::History::Method;
  EXPECT_EQ(schema_words("fpde.history.method"), words_of({PH::direct, PH::soe}));
  using PP = FpdeConfig::Solver::Preconditioner;
  EXPECT_EQ(schema_words("fpde.solver.preconditioner"),
            words_of({PP::automatic, PP::circulant, PP::none}));
  std::set<std::string> levels;
  for (auto l : {fracmfg::core::LogLevel::error, fracmfg::core::LogLevel::warn,
                 fracmfg::core::LogLevel::info, fracmfg::core::LogLevel::debug}) {
    levels.insert(fracmfg::core::to_string(l));
  }
  EXPECT_EQ(schema_words("logging.level"), levels);
}

TEST(GoodDecks, CrlfLineEndingsReadLikeLf) {
  const std::string lf =
      "problem: fode\nfode:\n  order: [0.5]  # comment\n  horizon: 1.0\n  steps: 10\n"
      "  # solver\n  method: trapezoidal\n  rhs: [\"-y1\"]\n  initial: [1.0]\n";
  std::string crlf;
  for (const char c : lf) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const Deck a = Deck::from_string(lf, "a.yaml");
  const Deck b = Deck::from_string(crlf, "a.yaml");
  EXPECT_EQ(b.fode().method, FodeConfig::Method::trapezoidal);
  EXPECT_EQ(a.resolved_yaml(), b.resolved_yaml());
}

TEST(GoodDecks, LargeFodeSystemIsCheckedInLinearTime) {
  // Each formula used to be compiled with all d + 1 variables and checked against them
  // pairwise: O(d^3), minutes for d = 6000. This takes about a second only if it is linear.
  const std::size_t d = 20000;
  std::string rhs, initial;
  for (std::size_t i = 1; i <= d; ++i) {
    const std::size_t next = i % d + 1;
    rhs += (i > 1 ? ", " : "") + ("\"y" + std::to_string(next) + " - y" + std::to_string(i) + "\"");
    initial += i > 1 ? ", 1.0" : "1.0";
  }
  const Deck deck = Deck::from_string(
      "problem: fode\nfode:\n  order: [0.5]\n  horizon: 1.0\n"
      "  steps: 10\n  rhs: [" +
          rhs + "]\n  initial: [" + initial + "]\n",
      "large.yaml");
  const FodeConfig c = deck.fode();
  ASSERT_EQ(c.dimension(), d);
  EXPECT_EQ(c.rhs[d - 1].variables, (std::vector<std::string>{"t", "y1", "y20000"}));
  EXPECT_DOUBLE_EQ(c.rhs[0].compile()({0.0, 1.0, 4.0}), 3.0);
}
