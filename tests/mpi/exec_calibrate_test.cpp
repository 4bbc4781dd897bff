// exec::calibrate on several ranks: every rank calibrates its own host backend into one
// directory at the same time and saves; the node's file then holds every rank's samples
// (the merge under the file lock loses nothing), and a selector started afterwards on any
// rank begins with the fitted model.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/exec_configs.hpp"
#include "common/mpi_support.hpp"
#include "fracmfg/exec/calibrate.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/perf_model.hpp"
#include "fracmfg/exec/selector.hpp"

namespace fe = fracmfg::exec;

using fracmfg::test::host_selector_config;
using fracmfg::test::SharedTempDir;

TEST(mpi_exec_calibrate, RanksCalibratingTogetherMergeEverySample) {
  const SharedTempDir dir("fracmfg-mpi-calib");
  ASSERT_FALSE(dir.path().empty());
  const fe::Hardware hw = fe::Hardware::probe(MPI_COMM_WORLD);
  const int node_size = hw.node_size;
  fe::Selector selector(hw, host_selector_config(dir.path()));
  fe::CalibrationOptions o;
  o.min_size = 1e2;
  o.max_size = 1e3;
  o.repeats = 2;
  const auto kernels =
      fe::select_kernels(fe::calibration_kernels(),
                         {fe::kernel_names::tridiag_batched, fe::kernel_names::history_fft});
  const fe::CalibrationReport r = fe::calibrate(selector, kernels, o);
  ASSERT_EQ(r.entries.size(), 2u);
  std::uint64_t mine = 0;
  for (const fe::CalibrationEntry& e : r.entries) {
    EXPECT_EQ(e.sizes, 3);  // 1e2, 316, 1e3
    mine += e.samples;
  }
  EXPECT_EQ(mine, 12u);
  selector.model().save(dir.path());
  MPI_Barrier(MPI_COMM_WORLD);

  // Every rank of this node wrote into the same file (same host, device "cpu").
  fe::PerfModel merged(selector.model().host_name(), "cpu");
  ASSERT_TRUE(merged.load(dir.path()));
  for (const fe::CalibratedKernel& k : kernels) {
    const auto id = merged.find_kernel(k.name);
    ASSERT_TRUE(id.has_value()) << k.name;
    EXPECT_EQ(merged.samples(*id, fe::Backend::cpu), 6u * static_cast<std::uint64_t>(node_size))
        << k.name;
    EXPECT_TRUE(merged.fitted(*id, fe::Backend::cpu)) << k.name;
  }
  fe::Selector later(fe::Hardware::probe(MPI_COMM_WORLD), host_selector_config(dir.path()));
  const auto id = later.model().find_kernel(fe::kernel_names::tridiag_batched);
  ASSERT_TRUE(id.has_value());
  EXPECT_TRUE(later.model().fitted(*id, fe::Backend::cpu));
}
