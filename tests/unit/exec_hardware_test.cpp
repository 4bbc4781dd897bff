// exec::Hardware: the probe of this machine and YAML descriptions of other machines.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "common/test_support.hpp"
#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/hardware.hpp"

namespace fe = fracmfg::exec;
using fracmfg::test::ScopedEnv;

namespace {

std::string data_file(const std::string& name) {
  const char* root = std::getenv("FRACMFG_SOURCE_DIR");
  return std::string(root != nullptr ? root : ".") + "/tests/unit/exec_data/" + name;
}

fracmfg::DeckError deck_error_of(const std::string& text) {
  try {
    fe::Hardware::from_yaml(text, "hw.yaml");
  } catch (const fracmfg::DeckError& e) {
    return e;
  }
  ADD_FAILURE() << "no DeckError for:\n" << text;
  return fracmfg::DeckError("", 0, 0, "", "");
}

}  // namespace

TEST(exec_hardware, ProbeDescribesThisRankWithoutError) {
  const fe::Hardware hw = fe::Hardware::probe(MPI_COMM_SELF);
  EXPECT_TRUE(hw.probed);
  EXPECT_EQ(hw.source, "probe");
  EXPECT_FALSE(hw.host_name.empty());
  EXPECT_GE(hw.host_cores, 1);
  EXPECT_GE(hw.host_cpus_online, hw.host_cores);
  EXPECT_GT(hw.host_memory, 0u);
  EXPECT_GT(hw.host_memory_available, 0u);
  EXPECT_LE(hw.host_memory_available, hw.host_memory);
  EXPECT_FALSE(hw.kokkos_host_space.empty());
  EXPECT_GE(hw.kokkos_host_concurrency, 1);
  EXPECT_EQ(hw.node_rank, 0);
  EXPECT_EQ(hw.node_size, 1);
  EXPECT_EQ(hw.cuda_compiled, FRACMFG_HAVE_CUDA == 1);
  EXPECT_FALSE(hw.cuda_status.empty());
  // No driver or no device is zero GPUs with a reason, never an error.
  if (hw.gpus.empty()) {
    EXPECT_NE(hw.cuda_status, "ok");
  }
  for (const auto& g : hw.gpus) {
    EXPECT_GT(g.multiprocessors, 0);
    EXPECT_GT(g.total_memory, 0u);
    // The probe creates no CUDA context, so free memory is left unmeasured.
    EXPECT_FALSE(g.free_memory_measured);
    EXPECT_EQ(g.free_memory, 0u);
  }
  EXPECT_NE(hw.describe().find(hw.host_name), std::string::npos);
}

TEST(exec_hardware, ProbeRecordsCudaVisibleDevices) {
  {
    const ScopedEnv env("CUDA_VISIBLE_DEVICES", "1,0");
    const fe::Hardware hw = fe::Hardware::probe(MPI_COMM_SELF);
    ASSERT_TRUE(hw.cuda_visible_devices.has_value());
    EXPECT_EQ(*hw.cuda_visible_devices, "1,0");
    EXPECT_NE(hw.describe().find("CUDA_VISIBLE_DEVICES=1,0"), std::string::npos);
  }
  {
    const ScopedEnv env("CUDA_VISIBLE_DEVICES", nullptr);
    EXPECT_FALSE(fe::Hardware::probe(MPI_COMM_SELF).cuda_visible_devices.has_value());
  }
}

TEST(exec_hardware, YamlFileGivesEveryField) {
  const fe::Hardware hw = fe::Hardware::from_yaml_file(data_file("gpu_node.yaml"));
  EXPECT_FALSE(hw.probed);
  EXPECT_EQ(hw.source, data_file("gpu_node.yaml"));
  EXPECT_EQ(hw.host_name, "gpu-node-01");
  EXPECT_EQ(hw.host_cores, 8);
  EXPECT_EQ(hw.host_cpus_online, 64);
  EXPECT_EQ(hw.host_memory, 512ull << 30);
  EXPECT_EQ(hw.host_memory_available, 480ull << 30);
  EXPECT_EQ(hw.kokkos_host_space, "OpenMP");
  EXPECT_EQ(hw.kokkos_host_concurrency, 8);
  EXPECT_EQ(hw.node_rank, 5);
  EXPECT_EQ(hw.node_size, 8);
  EXPECT_TRUE(hw.cuda_compiled);
  EXPECT_EQ(hw.cuda_runtime_version, 13000);
  EXPECT_EQ(hw.cuda_status, "ok");
  ASSERT_TRUE(hw.cuda_visible_devices.has_value());
  EXPECT_EQ(*hw.cuda_visible_devices, "0,1,2,3");
  ASSERT_EQ(hw.gpus.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const auto& g = hw.gpus[static_cast<std::size_t>(i)];
    EXPECT_EQ(g.id, i);
    EXPECT_EQ(g.name, "NVIDIA A100-SXM4-40GB");
    EXPECT_EQ(g.cc_major, 8);
    EXPECT_EQ(g.cc_minor, 0);
    EXPECT_EQ(g.multiprocessors, 108);
    EXPECT_EQ(g.total_memory, 40ull << 30);
    EXPECT_EQ(g.free_memory, (79ull << 30) / 2);
  }
  EXPECT_NE(hw.describe().find("gpu 3: NVIDIA A100-SXM4-40GB, cc 8.0"), std::string::npos);
}

TEST(exec_hardware, YamlDefaultsDescribeASerialHostOnlyRank) {
  const fe::Hardware hw = fe::Hardware::from_yaml("host_name: laptop\n", "hw.yaml");
  EXPECT_EQ(hw.host_name, "laptop");
  EXPECT_EQ(hw.host_cores, 1);
  EXPECT_EQ(hw.kokkos_host_space, "Serial");
  EXPECT_EQ(hw.kokkos_host_concurrency, 1);
  EXPECT_EQ(hw.node_rank, 0);
  EXPECT_EQ(hw.node_size, 1);
  EXPECT_EQ(hw.cuda_compiled, FRACMFG_HAVE_CUDA == 1);
  EXPECT_TRUE(hw.gpus.empty());
  EXPECT_FALSE(hw.cuda_visible_devices.has_value());
  EXPECT_TRUE(fe::Hardware::from_yaml("", "empty.yaml").gpus.empty());
}

TEST(exec_hardware, FreeMemoryDefaultsToTotalAndIdsToPosition) {
  const fe::Hardware hw = fe::Hardware::from_yaml_file(data_file("mixed_gpus.yaml"));
  ASSERT_EQ(hw.gpus.size(), 2u);
  EXPECT_EQ(hw.gpus[0].free_memory, hw.gpus[0].total_memory);
  EXPECT_TRUE(hw.gpus[0].free_memory_measured);  // described: free_gb or memory_gb
  EXPECT_EQ(hw.gpus[1].free_memory, 12ull << 30);
  EXPECT_EQ(hw.gpus[1].id, 1);
  const fe::Hardware ids = fe::Hardware::from_yaml(
      "gpus:\n  - {id: 3, name: a, cc: \"9.0\", multiprocessors: 132, memory_gb: 80}\n", "x");
  EXPECT_EQ(ids.gpus.at(0).id, 3);
  EXPECT_EQ(ids.gpus.at(0).cc_major, 9);
}

TEST(exec_hardware, MisspeltKeyIsDeckErrorWithFileLineAndSuggestion) {
  const std::string file = data_file("misspelt_key.yaml");
  try {
    fe::Hardware::from_yaml_file(file);
    FAIL() << "a misspelt key was accepted";
  } catch (const fracmfg::DeckError& e) {
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.column(), 1);
    EXPECT_EQ(e.key(), "host_core");
    EXPECT_NE(e.message().find("did you mean 'host_cores'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(file + ":3:1: host_core:"), std::string::npos);
  }
}

TEST(exec_hardware, BadValuesNameTheirKeyAndLine) {
  auto e = deck_error_of("host_cores: 0\n");
  EXPECT_EQ(e.key(), "host_cores");
  EXPECT_EQ(e.line(), 1);

  e = deck_error_of("host_cores: four\n");
  EXPECT_EQ(e.key(), "host_cores");
  EXPECT_NE(e.message().find("integer"), std::string::npos);

  e = deck_error_of("node_size: 2\nnode_rank: 2\n");
  EXPECT_EQ(e.key(), "node_rank");
  EXPECT_EQ(e.line(), 2);

  e = deck_error_of(
      "gpus:\n"
      "  - {name: a, cc: \"8.0\", multiprocessors: 10, memory_gb: 8}\n"
      "  - {name: b, cc: \"eight\", multiprocessors: 10, memory_gb: 8}\n");
  EXPECT_EQ(e.key(), "gpus[1].cc");
  EXPECT_EQ(e.line(), 3);

  e = deck_error_of("gpus:\n  - {name: a, cc: \"8.0\", memory_gb: 8}\n");
  EXPECT_EQ(e.key(), "gpus[0].multiprocessors");
  EXPECT_NE(e.message().find("missing"), std::string::npos);

  e = deck_error_of(
      "gpus:\n  - {name: a, cc: \"8.0\", multiprocessors: 1, memory_gb: 8, "
      "free_gb: 9}\n");
  EXPECT_EQ(e.key(), "gpus[0].free_gb");

  e = deck_error_of("gpus:\n  - {name: a, cc: \"8.0\", multiprocessors: 1, memroy_gb: 8}\n");
  EXPECT_EQ(e.key(), "gpus[0].memroy_gb");
  EXPECT_NE(e.message().find("did you mean 'memory_gb'"), std::string::npos);

  e = deck_error_of("cuda_compiled: maybe\n");
  EXPECT_EQ(e.key(), "cuda_compiled");

  e = deck_error_of("- just\n- a list\n");
  EXPECT_EQ(e.line(), 1);
}

TEST(exec_hardware, MalformedYamlIsDeckErrorWithLine) {
  const auto e = deck_error_of("host_name: a\ngpus: [ {name: x\n");
  EXPECT_EQ(e.file(), "hw.yaml");
  EXPECT_GE(e.line(), 2);
}

TEST(exec_hardware, MissingFileIsIoError) {
  EXPECT_THROW(fe::Hardware::from_yaml_file(data_file("no_such_file.yaml")), fracmfg::IoError);
}

TEST(exec_hardware, DeviceScoreIsCoreCount) {
  EXPECT_EQ(fe::cuda_cores_per_multiprocessor(8, 0), 64);
  EXPECT_EQ(fe::cuda_cores_per_multiprocessor(8, 6), 128);
  EXPECT_EQ(fe::cuda_cores_per_multiprocessor(7, 5), 64);
  EXPECT_EQ(fe::cuda_cores_per_multiprocessor(9, 0), 128);
  EXPECT_EQ(fe::cuda_cores_per_multiprocessor(6, 1), 128);
  EXPECT_EQ(fe::cuda_cores_per_multiprocessor(12, 0), 128);
  fe::CudaDevice a100;
  a100.cc_major = 8;
  a100.multiprocessors = 108;
  EXPECT_DOUBLE_EQ(fe::device_score(a100), 6912.0);
  fe::CudaDevice none;
  EXPECT_DOUBLE_EQ(fe::device_score(none), 1.0);
}
