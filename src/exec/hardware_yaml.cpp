// Hardware descriptions in YAML (Hardware::from_yaml): strict reading with name:line:column
// errors, so a misspelt key in an --assume-hardware file is caught, not ignored.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/text.hpp"
#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/hardware.hpp"

namespace fracmfg::exec {

namespace {

constexpr double bytes_per_gib = 1024.0 * 1024.0 * 1024.0;

using ::fracmfg::detail::closest_match;

class Reader {
 public:
  explicit Reader(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key,
                         const std::string& message) const {
    const YAML::Mark m = at.Mark();
    throw DeckError(name_, m.line + 1, m.column + 1, key, message);
  }

  void check_keys(const YAML::Node& map, const std::string& prefix,
                  const std::vector<std::string>& known) const {
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      const std::string best = closest_match(key, known);
      std::string msg = "unknown key";
      if (!best.empty()) msg += "; did you mean '" + best + "'?";
      fail(kv.first, prefix + key, msg);
    }
  }

  std::string text(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a text value");
    return n.Scalar();
  }

  long integer(const YAML::Node& n, const std::string& key, long lo) const {
    long v = 0;
    if (!n.IsScalar() || !YAML::convert<long>::decode(n, v)) fail(n, key, "expected an integer");
    if (v < lo) fail(n, key, "must be at least " + std::to_string(lo));
    return v;
  }

  double number(const YAML::Node& n, const std::string& key, double lo) const {
    double v = 0.0;
    if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v)) {
      fail(n, key, "expected a number");
    }
    if (v < lo) fail(n, key, "must be at least " + std::to_string(lo));
    return v;
  }

  bool boolean(const YAML::Node& n, const std::string& key) const {
    bool v = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) fail(n, key, "expected true or false");
    return v;
  }

  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

std::size_t gib_to_bytes(double gib) {
  return static_cast<std::size_t>(std::llround(gib * bytes_per_gib));
}

CudaDevice read_gpu(const Reader& rd, const YAML::Node& n, int index) {
  const std::string prefix = "gpus[" + std::to_string(index) + "].";
  if (!n.IsMap()) rd.fail(n, prefix.substr(0, prefix.size() - 1), "expected a map of keys");
  rd.check_keys(n, prefix, {"id", "name", "cc", "multiprocessors", "memory_gb", "free_gb"});
  for (const char* required : {"name", "cc", "multiprocessors", "memory_gb"}) {
    if (!n[required]) rd.fail(n, prefix + required, "missing");
  }
  CudaDevice d;
  d.id = index;
  if (n["id"]) d.id = static_cast<int>(rd.integer(n["id"], prefix + "id", 0));
  d.name = rd.text(n["name"], prefix + "name");
  const std::string cc = rd.text(n["cc"], prefix + "cc");
  {
    int major = 0;
    int minor = 0;
    char dot = '.';
    std::istringstream is(cc);
    if (!(is >> major) || major < 1) rd.fail(n["cc"], prefix + "cc", "expected \"major.minor\"");
    if (is >> dot) {
      if (dot != '.' || !(is >> minor) || minor < 0) {
        rd.fail(n["cc"], prefix + "cc", "expected \"major.minor\"");
      }
    }
    std::string rest;
    if (is >> rest) rd.fail(n["cc"], prefix + "cc", "expected \"major.minor\"");
    d.cc_major = major;
    d.cc_minor = minor;
  }
  d.multiprocessors =
      static_cast<int>(rd.integer(n["multiprocessors"], prefix + "multiprocessors", 1));
  const double total = rd.number(n["memory_gb"], prefix + "memory_gb", 0.0);
  if (total <= 0.0) rd.fail(n["memory_gb"], prefix + "memory_gb", "must be positive");
  double free = total;
  if (n["free_gb"]) {
    free = rd.number(n["free_gb"], prefix + "free_gb", 0.0);
    if (free > total) rd.fail(n["free_gb"], prefix + "free_gb", "exceeds memory_gb");
  }
  d.total_memory = gib_to_bytes(total);
  d.free_memory = gib_to_bytes(free);
  d.free_memory_measured = true;
  return d;
}

}  // namespace

Hardware Hardware::from_yaml(const std::string& text, const std::string& name) {
  const Reader rd(name);
  YAML::Node loaded;
  try {
    loaded = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw DeckError(name, e.mark.line + 1, e.mark.column + 1, "", e.msg);
  }
  const YAML::Node& root = loaded;  // const: looking up a missing key must not add it
  Hardware hw;
  hw.source = name;
  hw.probed = false;
  hw.host_name = "unknown-host";
  hw.kokkos_host_space = "Serial";
  hw.cuda_compiled = FRACMFG_HAVE_CUDA != 0;
  if (!root || root.IsNull()) return hw;  // an empty description: the defaults
  if (!root.IsMap()) rd.fail(root, "", "a hardware description is a map of keys");
  rd.check_keys(root, "",
                {"host_name", "host_cores", "host_cpus_online", "host_memory_gb",
                 "host_memory_available_gb", "kokkos_host_space", "kokkos_host_concurrency",
                 "node_rank", "node_size", "cuda_compiled", "cuda_runtime_version",
                 "cuda_driver_version", "cuda_status", "cuda_visible_devices", "gpus"});

  if (root["host_name"]) hw.host_name = rd.text(root["host_name"], "host_name");
  if (root["host_cores"])
    hw.host_cores = static_cast<int>(rd.integer(root["host_cores"], "host_cores", 1));
  hw.host_cpus_online = hw.host_cores;
  if (root["host_cpus_online"]) {
    hw.host_cpus_online =
        static_cast<int>(rd.integer(root["host_cpus_online"], "host_cpus_online", 1));
  }
  if (root["host_memory_gb"]) {
    hw.host_memory = gib_to_bytes(rd.number(root["host_memory_gb"], "host_memory_gb", 0.0));
  }
  hw.host_memory_available = hw.host_memory;
  if (root["host_memory_available_gb"]) {
    hw.host_memory_available =
        gib_to_bytes(rd.number(root["host_memory_available_gb"], "host_memory_available_gb", 0.0));
  }
  if (root["kokkos_host_space"]) {
    hw.kokkos_host_space = rd.text(root["kokkos_host_space"], "kokkos_host_space");
  }
  if (root["kokkos_host_concurrency"]) {
    hw.kokkos_host_concurrency =
        static_cast<int>(rd.integer(root["kokkos_host_concurrency"], "kokkos_host_concurrency", 1));
  }
  if (root["node_size"])
    hw.node_size = static_cast<int>(rd.integer(root["node_size"], "node_size", 1));
  if (root["node_rank"])
    hw.node_rank = static_cast<int>(rd.integer(root["node_rank"], "node_rank", 0));
  if (hw.node_rank >= hw.node_size) {
    rd.fail(root["node_rank"], "node_rank",
            "must be below node_size (" + std::to_string(hw.node_size) + ")");
  }
  if (root["cuda_compiled"]) hw.cuda_compiled = rd.boolean(root["cuda_compiled"], "cuda_compiled");
  if (root["cuda_runtime_version"]) {
    hw.cuda_runtime_version =
        static_cast<int>(rd.integer(root["cuda_runtime_version"], "cuda_runtime_version", 0));
  }
  if (root["cuda_driver_version"]) {
    hw.cuda_driver_version =
        static_cast<int>(rd.integer(root["cuda_driver_version"], "cuda_driver_version", 0));
  }
  if (root["cuda_visible_devices"]) {
    hw.cuda_visible_devices = rd.text(root["cuda_visible_devices"], "cuda_visible_devices");
  }
  if (const YAML::Node gpus = root["gpus"]) {
    if (!gpus.IsSequence() && !gpus.IsNull()) rd.fail(gpus, "gpus", "expected a list of devices");
    int index = 0;
    for (const auto& g : gpus) hw.gpus.push_back(read_gpu(rd, g, index++));
    for (std::size_t a = 0; a < hw.gpus.size(); ++a) {
      for (std::size_t b = 0; b < a; ++b) {
        if (hw.gpus[a].id == hw.gpus[b].id) {
          rd.fail(gpus[a], "gpus[" + std::to_string(a) + "].id",
                  "device id " + std::to_string(hw.gpus[a].id) + " appears twice");
        }
      }
    }
  }
  hw.cuda_status = hw.gpus.empty() ? "no CUDA device visible" : "ok";
  if (!hw.cuda_compiled) hw.cuda_status = "CUDA backend not compiled";
  if (root["cuda_status"]) hw.cuda_status = rd.text(root["cuda_status"], "cuda_status");
  return hw;
}

Hardware Hardware::from_yaml_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError("cannot read hardware description " + path);
  std::ostringstream os;
  os << in.rdbuf();
  return from_yaml(os.str(), path);
}

}  // namespace fracmfg::exec
