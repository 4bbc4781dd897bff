#include "core/memory_check.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <utility>
#include <vector>

#include "core/text.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"

namespace fracmfg::core {

namespace {

// A "Name:   123 kB" line of a /proc file, in bytes; 0 when absent.
std::uint64_t proc_kib(const char* file, const std::string& name) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, name.size(), name) != 0 || line.size() <= name.size() ||
        line[name.size()] != ':') {
      continue;
    }
    std::istringstream fields(line.substr(name.size() + 1));
    std::uint64_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return 0;
}

// The first line of a file as a number; 0 when missing or not a number ("max").
std::uint64_t file_number(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || word.find_first_not_of("0123456789") != std::string::npos) {
    return 0;
  }
  return std::strtoull(word.c_str(), nullptr, 10);
}

// What the process's memory cgroup still allows (limit less usage), 0 when unlimited or
// unknown: cgroup v2 (memory.max, memory.current) or v1 (memory.limit_in_bytes,
// memory.usage_in_bytes).
std::uint64_t cgroup_room() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t first = line.find(':');
    const std::size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    std::uint64_t limit = 0;
    std::uint64_t used = 0;
    if (controllers.empty()) {  // v2
      limit = file_number("/sys/fs/cgroup" + path + "/memory.max");
      used = file_number("/sys/fs/cgroup" + path + "/memory.current");
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {  // v1
      limit = file_number("/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes");
      used = file_number("/sys/fs/cgroup/memory" + path + "/memory.usage_in_bytes");
    }
    // v1 reports "no limit" as a huge number (a page-aligned LONG_MAX).
    if (limit == 0 || limit >= (std::uint64_t{1} << 62)) continue;
    return limit > used ? limit - used : 1;
  }
  return 0;
}

std::uint64_t rlimit_room(int resource, std::uint64_t used) {
  struct rlimit limit {};
  if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  const auto cur = static_cast<std::uint64_t>(limit.rlim_cur);
  return cur > used ? cur - used : 1;
}

}  // namespace

std::uint64_t per_rank(MPI_Comm comm, std::uint64_t total) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const auto r = static_cast<std::uint64_t>(ranks > 0 ? ranks : 1);
  return (total + r - 1) / r;
}

std::uint64_t grid_points(const std::vector<int>& extents) {
  std::uint64_t points = 1;
  for (const int n : extents) points *= static_cast<std::uint64_t>(n > 1 ? n : 1);
  return points;
}

MemoryLimits memory_limits() {
  MemoryLimits m;
  m.node_available = proc_kib("/proc/meminfo", "MemAvailable");
  if (const std::uint64_t room = cgroup_room();
      room != 0 && (m.node_available == 0 || room < m.node_available)) {
    m.node_available = room;
  }
  m.address_space = rlimit_room(RLIMIT_AS, proc_kib("/proc/self/status", "VmSize"));
  m.data = rlimit_room(RLIMIT_DATA, proc_kib("/proc/self/status", "VmData"));
  return m;
}

void check_memory(MPI_Comm comm, std::uint64_t bytes, const std::string& what) {
  if (const char* skip = std::getenv("FRACMFG_SKIP_MEMORY_CHECK");
      skip != nullptr && std::string(skip) == "1") {
    return;
  }
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_ranks = 1;
  MPI_Comm_size(node, &node_ranks);
  unsigned long long mine = bytes;
  unsigned long long on_node = 0;
  MPI_Allreduce(&mine, &on_node, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, node);
  MPI_Comm_free(&node);
  collective(comm, [&] {
    const MemoryLimits limits = memory_limits();
    const std::string skip = " (FRACMFG_SKIP_MEMORY_CHECK=1 skips this check)";
    // One rank's own limit first: the more specific cause.
    for (const auto& [room, name] :
         {std::pair{limits.address_space, "address-space limit (ulimit -v)"},
          std::pair{limits.data, "data size limit (ulimit -d)"}}) {
      if (room != 0 && bytes > room) {
        throw UsageError(what + " needs at least " + detail::format_bytes(bytes) +
                         " of memory on each rank, and this rank's " + name + " leaves " +
                         detail::format_bytes(room) + skip);
      }
    }
    if (limits.node_available != 0 && on_node > limits.node_available) {
      throw UsageError(what + " needs at least " + detail::format_bytes(on_node) +
                       " of memory on this node (" + std::to_string(node_ranks) +
                       " rank(s) of about " + detail::format_bytes(bytes) +
                       " each), and the node has " + detail::format_bytes(limits.node_available) +
                       " available: use more nodes, or a coarser grid or fewer steps" + skip);
    }
  });
}

}  // namespace fracmfg::core
