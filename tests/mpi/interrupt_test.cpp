// Stop requests: a signal on one rank becomes a collective stop decision on every rank.
#include "fracmfg/core/interrupt.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <csignal>

namespace core = fracmfg::core;

TEST(InterruptTest, NoSignalMeansNoStop) {
  core::InterruptGuard guard;
  core::clear_stop_request();
  EXPECT_EQ(core::signal_received(), 0);
  EXPECT_FALSE(core::stop_requested(MPI_COMM_WORLD));
}

TEST(InterruptTest, SignalOnLastRankStopsEveryRank) {
  core::InterruptGuard guard;
  core::clear_stop_request();
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == size - 1) std::raise(SIGUSR1);  // delivered synchronously to this thread
  EXPECT_EQ(core::signal_received(), rank == size - 1 ? SIGUSR1 : 0);
  EXPECT_TRUE(core::stop_requested(MPI_COMM_WORLD));
  core::clear_stop_request();
  EXPECT_FALSE(core::stop_requested(MPI_COMM_WORLD));
}

TEST(InterruptTest, SigtermIsCaughtWhileGuarded) {
  core::InterruptGuard guard;
  core::clear_stop_request();
  std::raise(SIGTERM);  // would end the test program without the guard
  EXPECT_EQ(core::signal_received(), SIGTERM);
  core::clear_stop_request();
}

TEST(InterruptTest, InterruptedCarriesStepAndExitCode) {
  const core::Interrupted e(42, "results/x.chk.h5");
  EXPECT_EQ(e.step(), 42);
  EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::interrupted);
  EXPECT_NE(std::string(e.what()).find("results/x.chk.h5"), std::string::npos);
}
