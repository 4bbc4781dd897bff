// A deck with one unknown may write it y as well as y1 (fode.rhs): a multi-term equation
// (fode.terms) and a one-component system give the same solution bit for bit either way,
// the resolved deck keeps the formula as written, and a system of two components refuses y
// (tests/unit/decks/bad/fode_rhs_bare_y_two_components.yaml is the file:line error).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/fode_deck.hpp"
#include "fracmfg/frac/multi_term_solver.hpp"
#include "fracmfg/io/deck.hpp"

namespace {

using namespace fracmfg;

/// y'' + D^{3/2} y = 1 + t - (unknown): Bagley-Torvik with the y term on the right, exact
/// y = 1 + t (reproduced to round-off by the implicit method).
std::string bagley_torvik(const std::string& rhs) {
  return "problem: fode\n"
         "fode:\n"
         "  terms: {order: [2.0, 1.5], coefficient: [1.0, 1.0]}\n"
         "  rhs: [\"" +
         rhs +
         "\"]\n"
         "  initial: [1.0, 1.0]\n"
         "  horizon: 2.0\n"
         "  steps: 64\n"
         "  method: trapezoidal\n";
}

double solve_multi_term(const std::string& text) {
  const io::FodeConfig config = io::Deck::from_string(text).fode();
  frac::MultiTermSetup s = frac::multi_term_setup(config);
  frac::MultiTermSolver solver(MPI_COMM_SELF, s.problem, s.options);
  solver.solve();
  return solver.solution();
}

TEST(fode_deck_bare_y_test, MultiTermDeckMayWriteTheUnknownYOrY1) {
  const double with_y = solve_multi_term(bagley_torvik("1 + t - y"));
  const double with_y1 = solve_multi_term(bagley_torvik("1 + t - y1"));
  const double mixed = solve_multi_term(bagley_torvik("1 + t - 0.5*y - 0.5*y1"));
  std::printf("y(2) = %.17g (y), %.17g (y1), %.17g (both); exact 3\n", with_y, with_y1, mixed);
  EXPECT_NEAR(with_y, 3.0, 1e-12);
  EXPECT_NEAR(with_y1, 3.0, 1e-12);
  EXPECT_NEAR(mixed, 3.0, 1e-12);
  // A solution the method does not reproduce exactly: the same bits with y and y1.
  const double forced_y = solve_multi_term(bagley_torvik("cos(3*t) - y + 0.2*sin(y)"));
  const double forced_y1 = solve_multi_term(bagley_torvik("cos(3*t) - y1 + 0.2*sin(y1)"));
  std::printf("forced: y(2) = %.17g (y), %.17g (y1)\n", forced_y, forced_y1);
  EXPECT_EQ(forced_y, forced_y1);
  // The formula reads back as written.
  const io::FodeConfig c = io::Deck::from_string(bagley_torvik("1 + t - y")).fode();
  ASSERT_EQ(c.rhs.size(), 1u);
  EXPECT_EQ(c.rhs.front().text, "1 + t - y");
}

TEST(fode_deck_bare_y_test, OneComponentSystemMayWriteTheUnknownY) {
  // D^0.6 y = -y, y(0) = 1: the same run with y and with y1.
  const auto run = [](const std::string& rhs) {
    const std::string text = "problem: fode\nfode:\n  order: 0.6\n  rhs: [\"" + rhs +
                             "\"]\n  initial: [1.0]\n  horizon: 1.0\n  steps: 50\n";
    const io::FodeConfig config = io::Deck::from_string(text).fode();
    frac::FodeSetup s = frac::fode_setup(MPI_COMM_SELF, config);
    frac::FodeSolver solver(MPI_COMM_SELF, s.problem, s.rhs, s.options);
    solver.solve();
    return solver.solution().at(0);
  };
  const double with_y = run("-y");
  const double with_y1 = run("-y1");
  std::printf("D^0.6 y = -y: y(1) = %.17g (y), %.17g (y1)\n", with_y, with_y1);
  EXPECT_EQ(with_y, with_y1);
  EXPECT_GT(with_y, 0.0);
  EXPECT_LT(with_y, 1.0);
}

TEST(fode_deck_bare_y_test, TwoComponentsRefuseY) {
  const std::string text =
      "problem: fode\nfode:\n  order: 0.6\n  rhs: [\"-y1\", \"-y\"]\n  initial: [1.0, 1.0]\n"
      "  horizon: 1.0\n  steps: 10\n";
  try {
    (void)io::Deck::from_string(text, "two.yaml");
    FAIL() << "expected a DeckError";
  } catch (const DeckError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("two.yaml:4:"), std::string::npos) << what;
    EXPECT_NE(what.find("unknown variable \"y\""), std::string::npos) << what;
  }
}

}  // namespace
