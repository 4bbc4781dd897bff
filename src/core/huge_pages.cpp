#include "fracmfg/core/huge_pages.hpp"

#include <mpi.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <gnu/libc-version.h>
#include <unistd.h>

namespace fracmfg::core {

namespace {

constexpr const char* kThpPath = "/sys/kernel/mm/transparent_hugepage/enabled";
constexpr const char* kTunable = "glibc.malloc.hugetlb";
constexpr const char* kReexecMark = "FRACMFG_HUGE_PAGES_REEXEC";

// Why the last re-execution failed (empty when none was tried or none failed).
std::string& exec_failure() {
  static std::string failure;
  return failure;
}

bool switched_off(const char* value) {
  if (value == nullptr) return false;
  const std::string v(value);
  return v == "0" || v == "off" || v == "no" || v == "false" || v == "OFF" || v == "NO" ||
         v == "FALSE";
}

// glibc's version as major * 1000 + minor; 0 when it cannot be read.
int version_number(const char* version) {
  if (version == nullptr) return 0;
  int major = 0, minor = 0;
  if (std::sscanf(version, "%d.%d", &major, &minor) != 2) return 0;
  return major * 1000 + minor;
}

std::string read_thp_mode() {
  std::ifstream in(kThpPath);
  std::string text;
  std::getline(in, text);
  return text;
}

}  // namespace

HugePagesPlan plan_huge_pages(const std::string& thp_enabled, const char* tunables,
                              const char* switch_value, const char* glibc_version,
                              bool reexecuted) {
  HugePagesPlan plan;
  const std::string current = tunables != nullptr ? tunables : "";
  if (current.find(kTunable) != std::string::npos) {
    plan.reason = std::string("as GLIBC_TUNABLES sets (") + current + ")";
    return plan;
  }
  if (switched_off(switch_value)) {
    plan.reason = std::string("not requested: FRACMFG_HUGE_PAGES=") + switch_value;
    return plan;
  }
  if (thp_enabled.find("[madvise]") == std::string::npos) {
    if (thp_enabled.find("[always]") != std::string::npos) {
      plan.reason =
          "given to every large allocation by the kernel (transparent huge pages: always)";
    } else if (thp_enabled.find("[never]") != std::string::npos) {
      plan.reason = "not available: transparent huge pages are off in the kernel (never)";
    } else {
      plan.reason = std::string("not available: ") + kThpPath + " cannot be read";
    }
    return plan;
  }
  if (version_number(glibc_version) < 2035) {
    plan.reason = std::string("not requested: glibc ") + (glibc_version ? glibc_version : "?") +
                  " has no " + kTunable + " (2.35 or later)";
    return plan;
  }
  if (reexecuted) {
    plan.reason = "not requested: the program was re-executed for them but GLIBC_TUNABLES lacks " +
                  std::string(kTunable);
    return plan;
  }
  plan.reexec = true;
  plan.tunables = current.empty() ? std::string(kTunable) + "=1" : current + ":" + kTunable + "=1";
  plan.reason = "requested (GLIBC_TUNABLES=" + plan.tunables + ")";
  return plan;
}

void request_huge_pages(char** argv) {
  if (argv == nullptr || argv[0] == nullptr) return;
  int mpi_started = 0;
  MPI_Initialized(&mpi_started);
  if (mpi_started) return;
  const HugePagesPlan plan = plan_huge_pages(
      read_thp_mode(), std::getenv("GLIBC_TUNABLES"), std::getenv("FRACMFG_HUGE_PAGES"),
      gnu_get_libc_version(), std::getenv(kReexecMark) != nullptr);
  reexecute_for_huge_pages(plan, "/proc/self/exe", argv);
}

void reexecute_for_huge_pages(const HugePagesPlan& plan, const char* executable, char** argv) {
  if (!plan.reexec || executable == nullptr || argv == nullptr || argv[0] == nullptr) return;
  const char* before = std::getenv("GLIBC_TUNABLES");
  const bool had_tunables = before != nullptr;
  const std::string old_tunables = had_tunables ? before : "";
  auto restore = [&] {
    if (had_tunables) {
      setenv("GLIBC_TUNABLES", old_tunables.c_str(), 1);
    } else {
      unsetenv("GLIBC_TUNABLES");
    }
    unsetenv(kReexecMark);
  };
  if (setenv("GLIBC_TUNABLES", plan.tunables.c_str(), 1) != 0 || setenv(kReexecMark, "1", 1) != 0) {
    const int error = errno;
    restore();
    exec_failure() = std::string("setting the environment failed: ") + std::strerror(error);
    return;
  }
  execv(executable, argv);
  // Only reached when the exec failed: go on as before, without the tunable (glibc has read
  // this process's environment at its start), and say so in huge_pages_status().
  const int error = errno;
  restore();
  exec_failure() = std::string("re-executing ") + executable + " failed: " + std::strerror(error);
}

std::string huge_pages_status() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const bool reexecuted = std::getenv(kReexecMark) != nullptr;
  if (tunables != nullptr && std::string(tunables).find(kTunable) != std::string::npos) {
    return std::string(reexecuted ? "requested (GLIBC_TUNABLES=" : "as GLIBC_TUNABLES sets (") +
           tunables + ")";
  }
  if (!exec_failure().empty()) return "not in effect: " + exec_failure();
  const HugePagesPlan plan =
      plan_huge_pages(read_thp_mode(), tunables, std::getenv("FRACMFG_HUGE_PAGES"),
                      gnu_get_libc_version(), reexecuted);
  if (plan.reexec) {
    return "not in effect: the program did not re-execute itself with GLIBC_TUNABLES=" +
           plan.tunables + " (core::request_huge_pages)";
  }
  return plan.reason;
}

}  // namespace fracmfg::core
