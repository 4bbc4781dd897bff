// The selector across ranks: the collective hardware probe, placement of a node's ranks,
// the gathered report and one performance file written by every rank at once.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/mpi_support.hpp"
#include "common/test_support.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/perf_model.hpp"
#include "fracmfg/exec/placement.hpp"
#include "fracmfg/exec/selector.hpp"

namespace fe = fracmfg::exec;

namespace {

using fracmfg::test::SharedTempDir;
using fracmfg::test::world_rank;
using fracmfg::test::world_size;

fe::SelectorConfig quiet_config() {
  fe::SelectorConfig c;
  c.use_environment = false;
  c.persist = false;
  c.activate_device = false;
  return c;
}

}  // namespace

TEST(mpi_exec_selector, ProbeFindsEveryRankOfThisNode) {
  const fe::Hardware hw = fe::Hardware::probe(MPI_COMM_WORLD);
  // All ranks of this test run on one machine.
  EXPECT_EQ(hw.node_size, world_size());
  std::vector<int> node_ranks(static_cast<std::size_t>(world_size()));
  MPI_Allgather(&hw.node_rank, 1, MPI_INT, node_ranks.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> seen(node_ranks.size(), 0);
  for (int r : node_ranks) {
    ASSERT_GE(r, 0);
    ASSERT_LT(r, world_size());
    ++seen[static_cast<std::size_t>(r)];
  }
  for (int s : seen) EXPECT_EQ(s, 1);
  // Same host name everywhere.
  EXPECT_EQ(hw.host_name, fracmfg::test::broadcast_from_zero(hw.host_name));
  // Placement on the probed node is consistent with what the rank found.
  const fe::DeviceSlot slot = fe::place_rank(hw, 0);
  EXPECT_EQ(slot.on_cpu(), hw.gpus.empty());
}

TEST(mpi_exec_selector, GatheredReportHoldsEveryRanksCalls) {
  const int rank = world_rank();
  const int size = world_size();
  fe::Selector sel(fe::Hardware::probe(MPI_COMM_WORLD), quiet_config());
  fracmfg::test::FakeClock clock(0.0);
  sel.set_clock(clock.clock());
  const fe::KernelId k = sel.kernel("history");
  fe::Workload w;
  w.kernel = k;
  w.elements = 1000;
  for (int i = 0; i <= rank; ++i) {
    sel.run(
        w, [&] { clock.advance(1e-3); }, [&] { clock.advance(1e-3); });
  }
  const auto rows = sel.gather_report(MPI_COMM_WORLD);
  if (rank != 0) {
    EXPECT_TRUE(rows.empty());
    return;
  }
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    const auto& row = rows[static_cast<std::size_t>(r)];
    EXPECT_EQ(row.rank, r);
    EXPECT_EQ(row.kernel, "history");
    EXPECT_EQ(row.calls, static_cast<std::uint64_t>(r + 1));
    EXPECT_NEAR(row.total_seconds, 1e-3 * (r + 1), 1e-12);
    EXPECT_NEAR(row.mean_seconds, 1e-3, 1e-12);
  }
  const auto agg = fe::aggregate_report(rows);
  std::uint64_t calls = 0;
  for (const auto& row : agg) calls += row.calls;
  EXPECT_EQ(calls, static_cast<std::uint64_t>(size * (size + 1) / 2));
  EXPECT_NE(fe::format_report(rows).find("history"), std::string::npos);
}

TEST(mpi_exec_selector, RanksSavingTogetherMergeIntoOneFile) {
  const SharedTempDir dir("fracmfg-mpi-perf");
  ASSERT_FALSE(dir.path().empty());
  const int rank = world_rank();
  const int size = world_size();
  fe::PerfModelOptions o;
  o.forgetting = 1.0;
  fe::PerfModel m("shared-node", "cpu", o);
  const fe::KernelId k = m.kernel("kde");
  for (int i = 0; i <= rank; ++i) m.add_sample(k, fe::Backend::cpu, 100.0 * (i + 1), 1e-5);
  for (int round = 0; round < 5; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    m.add_sample(k, fe::Backend::cuda, 1000.0, 2e-5);
    m.save(dir.path());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  fe::PerfModel all("shared-node", "cpu", o);
  ASSERT_TRUE(all.load(dir.path()));
  const auto id = all.find_kernel("kde");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(all.samples(*id, fe::Backend::cpu), static_cast<std::uint64_t>(size * (size + 1) / 2));
  EXPECT_EQ(all.samples(*id, fe::Backend::cuda), static_cast<std::uint64_t>(5 * size));
}
