#pragma once
// The solvers the driver can run, one function per deck problem type. Each runner builds
// its solver from the validated deck, solves, writes the output file(s) named by the deck's
// `output` section and returns the exit code. Collective on env.comm().
#include "fracmfg/core/environment.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/io/deck.hpp"

namespace fracmfg::driver {

using Runner = int (*)(core::Environment& env, const io::Deck& deck, exec::Selector& selector);

/// problem: mfg (drivers/run_mfg.cpp).
int run_mfg(core::Environment& env, const io::Deck& deck, exec::Selector& selector);

/// problem: fode (drivers/run_fode.cpp).
int run_fode(core::Environment& env, const io::Deck& deck, exec::Selector& selector);

/// problem: fpde (drivers/run_fpde.cpp).
int run_fpde(core::Environment& env, const io::Deck& deck, exec::Selector& selector);

}  // namespace fracmfg::driver
