// A program under core::guarded_main that fails on purpose, to test the error policy.
//   one-rank     rank 1 (or 0 when alone) throws a NumericalError while the other ranks wait
//                in a barrier: the job must end promptly, non-zero, with the message.
//   collective   every rank fails inside core::collective() on rank 0's error: rank 0 prints
//                one line, every rank exits with the error's code (2, deck error).
#include <mpi.h>

#include <string>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "one-rank";
  return fracmfg::core::guarded_main(argc, argv, [&](fracmfg::core::Environment& env) {
    if (mode == "one-rank") {
      const int culprit = env.size() > 1 ? 1 : 0;
      if (env.rank() == culprit) throw fracmfg::NumericalError("injected failure at iteration 7");
      MPI_Barrier(env.comm());  // would wait forever without the abort
      MPI_Barrier(env.comm());
      return 0;
    }
    fracmfg::core::collective(env.comm(), [&] {
      if (env.rank() == 0)
        throw fracmfg::DeckError("deck.yaml", 3, 5, "mfg.grid.points",
                                 "expected a positive integer, got -3");
    });
    return 0;
  });
}
