// exec::calibrate on several ranks: every rank calibrates its own host backend into one
// directory at the same time and saves; the node's file then holds every rank's samples
// (the merge under the file lock loses nothing), and a selector started afterwards on any
// rank begins with the fitted model.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <stdlib.h>
#include <string>
#include <vector>

#include "fracmfg/exec/calibrate.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/perf_model.hpp"
#include "fracmfg/exec/selector.hpp"

namespace fe = fracmfg::exec;

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// A directory made by rank 0 and known to all ranks; removed by rank 0 at scope exit.
class SharedTempDir {
 public:
  SharedTempDir() {
    char buf[4096] = {};
    if (world_rank() == 0) {
      std::string tmpl =
          (std::filesystem::temp_directory_path() / "fracmfg-mpi-calib-XXXXXX").string();
      if (mkdtemp(tmpl.data()) != nullptr) tmpl.copy(buf, sizeof buf - 1);
    }
    MPI_Bcast(buf, sizeof buf, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = buf;
  }
  SharedTempDir(const SharedTempDir&) = delete;
  SharedTempDir& operator=(const SharedTempDir&) = delete;
  ~SharedTempDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0 && !path_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

fe::SelectorConfig host_config(const std::string& dir) {
  fe::SelectorConfig c;
  c.backend = fe::BackendChoice::cpu;
  c.use_environment = false;
  c.activate_device = false;
  c.perf_dir = dir;
  return c;
}

}  // namespace

TEST(mpi_exec_calibrate, RanksCalibratingTogetherMergeEverySample) {
  const SharedTempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const fe::Hardware hw = fe::Hardware::probe(MPI_COMM_WORLD);
  const int node_size = hw.node_size;
  fe::Selector selector(hw, host_config(dir.path()));
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

  // Every rank of this node wrote into the same file (same host, device "host").
  fe::PerfModel merged(selector.model().host_name(), "host");
  ASSERT_TRUE(merged.load(dir.path()));
  for (const fe::CalibratedKernel& k : kernels) {
    const auto id = merged.find_kernel(k.name);
    ASSERT_TRUE(id.has_value()) << k.name;
    EXPECT_EQ(merged.samples(*id, fe::Backend::host), 6u * static_cast<std::uint64_t>(node_size))
        << k.name;
    EXPECT_TRUE(merged.fitted(*id, fe::Backend::host)) << k.name;
  }
  fe::Selector later(fe::Hardware::probe(MPI_COMM_WORLD), host_config(dir.path()));
  const auto id = later.model().find_kernel(fe::kernel_names::tridiag_batched);
  ASSERT_TRUE(id.has_value());
  EXPECT_TRUE(later.model().fitted(*id, fe::Backend::host));
}
