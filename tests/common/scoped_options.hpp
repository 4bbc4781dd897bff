#pragma once
// PETSc options set in the global database for a scope (tests only: the library never
// writes there), cleared at scope exit.
#include <petscsys.h>

#include <string>
#include <utility>
#include <vector>

namespace fracmfg::test {

using Options = std::vector<std::pair<std::string, std::string>>;

class ScopedOptions {
 public:
  explicit ScopedOptions(Options options) : options_(std::move(options)) {
    for (const auto& [name, value] : options_) {
      PetscOptionsSetValue(nullptr, name.c_str(), value.c_str());
    }
  }
  ~ScopedOptions() {
    for (const auto& o : options_) PetscOptionsClearValue(nullptr, o.first.c_str());
  }
  ScopedOptions(const ScopedOptions&) = delete;
  ScopedOptions& operator=(const ScopedOptions&) = delete;

 private:
  Options options_;
};

}  // namespace fracmfg::test
