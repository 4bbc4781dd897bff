#pragma once
// Process-local helpers shared by the tests (no MPI): a temporary directory removed at scope
// exit, a scoped environment variable, a Logger whose lines can be read back, a clock the
// test moves by hand, and the relative difference of two sampled fields.
// MPI helpers (ranks, sub-communicators, checks across ranks) are in common/mpi_support.hpp.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <stdlib.h>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

#include "fracmfg/core/logger.hpp"

namespace fracmfg::test {

/// A fresh directory under the system temp directory (<prefix>-XXXXXX), removed with its
/// contents at scope exit.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "fracmfg-test") {
    std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + t);
    path_ = t;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Sets (or, with nullptr, unsets) an environment variable; the old state comes back at
/// scope exit.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// A Logger (rank 0, writing) into a temporary file whose text can be read back.
class CapturedLog {
 public:
  explicit CapturedLog(core::LogLevel level = core::LogLevel::warn)
      : file_(std::tmpfile()), log_(0, level, false) {
    if (file_ == nullptr) throw std::runtime_error("tmpfile failed");
    log_.set_stream(file_);
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  ~CapturedLog() { std::fclose(file_); }
  const core::Logger& log() const { return log_; }
  /// Everything written so far.
  std::string text() const {
    std::fflush(file_);
    std::rewind(file_);
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, file_) != nullptr) out += buf;
    return out;
  }

 private:
  std::FILE* file_;
  core::Logger log_;
};

/// A clock in seconds that only moves when the test advances it; `clock()` is a callable
/// for the code under test (it refers to this object, which must outlive it).
class FakeClock {
 public:
  explicit FakeClock(double start = 1000.0) : now_(start) {}
  double now() const { return now_; }
  void advance(double seconds) { now_ += seconds; }
  auto clock() const {
    return [this] { return now_; };
  }

 private:
  double now_;
};

/// max_i |a_i - b_i| / max_i |a_i| (the difference itself when a is zero); 1 when the sizes
/// differ.
inline double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return 1.0;
  double diff = 0.0, size = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    size = std::max(size, std::abs(a[i]));
  }
  return size > 0.0 ? diff / size : diff;
}

/// The largest relative_difference over levels (1 when the numbers of levels differ).
inline double relative_difference(const std::vector<std::vector<double>>& a,
                                  const std::vector<std::vector<double>>& b) {
  if (a.size() != b.size()) return 1.0;
  double worst = 0.0;
  for (std::size_t n = 0; n < a.size(); ++n)
    worst = std::max(worst, relative_difference(a[n], b[n]));
  return worst;
}

}  // namespace fracmfg::test
