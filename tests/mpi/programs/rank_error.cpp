// A program under core::guarded_main that fails on purpose, to test the error policy.
//   one-rank     rank 1 (or 0 when alone) throws a NumericalError while the other ranks wait
//                in a barrier: the job must end promptly, non-zero, with the message.
//   collective   every rank fails inside core::collective() on rank 0's error: rank 0 prints
//                one line, every rank exits with the error's code (2, deck error).
//   bad-alloc    inside core::collective(), rank 1 (or 0) gets std::bad_alloc while the
//                other ranks go on into a barrier there: the job must end promptly, with
//                one "out of memory" line naming the rank.
//   new-fails    outside any collective, operator new fails on rank 1 (or 0) while the
//                others wait in a barrier: the same.
#include <mpi.h>

#include <cstddef>
#include <new>
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
    const int culprit = env.size() > 1 ? 1 : 0;
    if (mode == "bad-alloc") {
      fracmfg::core::collective(env.comm(), [&] {
        if (env.rank() == culprit) throw std::bad_alloc();
        MPI_Barrier(env.comm());  // the other ranks are in the solve's next collective call
      });
      return 0;
    }
    if (mode == "new-fails") {
      if (env.rank() == culprit) {
        // More than any machine has: malloc fails, operator new calls the new-handler.
        void* p = ::operator new (std::size_t{1} << 62);
        ::operator delete(p);
      }
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
