// GoogleTest under MPI: one Environment around the whole run; every rank runs every test;
// only rank 0 prints the usual report, other ranks print their failures tagged with the
// rank; the exit code is the maximum over ranks, so a failure on any rank fails the test.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

#include "fracmfg/core/environment.hpp"

namespace {
class RankFailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& r) override {
    if (r.failed()) {
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_,
                   r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
    }
  }

 private:
  int rank_;
};
}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  int result = 0;
  {
    fracmfg::core::EnvironmentOptions opts;
    opts.log_level = fracmfg::core::LogLevel::warn;
    fracmfg::core::Environment env(&argc, &argv, opts);
    if (env.rank() != 0) {
      auto& listeners = testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new RankFailurePrinter(env.rank()));
    }
    int local = RUN_ALL_TESTS();
    MPI_Allreduce(&local, &result, 1, MPI_INT, MPI_MAX, env.comm());
    if (env.rank() == 0 && result != local) {
      std::fprintf(stderr, "FAILED on another rank (see [rank N] lines above)\n");
    }
  }
  return result;
}
