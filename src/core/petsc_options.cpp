#include "fracmfg/core/petsc_options.hpp"

#include <petscsys.h>

#include <vector>

#include "fracmfg/core/petsc_check.hpp"

// The registered blocks are outside namespace fracmfg: PETSc's macros call ::PetscError,
// which fracmfg::PetscError would hide. One function per value type; each opens the block,
// reads one option and closes it.
namespace {

using fracmfg::core::OptionHelp;

PetscErrorCode read_bool(MPI_Comm comm, const char* prefix, const char* name,
                         const OptionHelp& help, PetscBool* value) {
  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, prefix, help.title.c_str(), nullptr);
  PetscCall(PetscOptionsBool(name, help.text.c_str(), "fracmfg", *value, value, nullptr));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

PetscErrorCode read_string(MPI_Comm comm, const char* prefix, const char* name,
                           const OptionHelp& help, const char* fallback, char* value, size_t size,
                           PetscBool* set) {
  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, prefix, help.title.c_str(), nullptr);
  PetscCall(PetscOptionsString(name, help.text.c_str(), "fracmfg", fallback, value, size, set));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

PetscErrorCode read_real(MPI_Comm comm, const char* prefix, const char* name,
                         const OptionHelp& help, PetscReal* value) {
  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, prefix, help.title.c_str(), nullptr);
  PetscCall(PetscOptionsReal(name, help.text.c_str(), "fracmfg", *value, value, nullptr));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

PetscErrorCode read_int(MPI_Comm comm, const char* prefix, const char* name, const OptionHelp& help,
                        PetscInt* value) {
  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, prefix, help.title.c_str(), nullptr);
  PetscCall(PetscOptionsInt(name, help.text.c_str(), "fracmfg", *value, value, nullptr));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

PetscErrorCode read_choice(MPI_Comm comm, const char* prefix, const char* name,
                           const OptionHelp& help, const char* const* words, PetscInt count,
                           PetscInt* index) {
  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, prefix, help.title.c_str(), nullptr);
  PetscCall(PetscOptionsEList(name, help.text.c_str(), "fracmfg", words, count, words[*index],
                              index, nullptr));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

const char* prefix_or_null(const std::string& prefix) {
  return prefix.empty() ? nullptr : prefix.c_str();
}

}  // namespace

namespace fracmfg::core {

bool option_bool(MPI_Comm comm, const std::string& prefix, const std::string& name,
                 const OptionHelp& help, bool fallback) {
  PetscBool value = fallback ? PETSC_TRUE : PETSC_FALSE;
  FRACMFG_PETSC_CHECK(read_bool(comm, prefix_or_null(prefix), name.c_str(), help, &value));
  return value == PETSC_TRUE;
}

std::optional<std::string> option_string(MPI_Comm comm, const std::string& prefix,
                                         const std::string& name, const OptionHelp& help,
                                         const std::string& fallback) {
  std::vector<char> value(PETSC_MAX_PATH_LEN, '\0');
  PetscBool set = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(read_string(comm, prefix_or_null(prefix), name.c_str(), help,
                                  fallback.c_str(), value.data(), value.size(), &set));
  if (!set) return std::nullopt;
  return std::string(value.data());
}

double option_real(MPI_Comm comm, const std::string& prefix, const std::string& name,
                   const OptionHelp& help, double fallback) {
  PetscReal value = fallback;
  FRACMFG_PETSC_CHECK(read_real(comm, prefix_or_null(prefix), name.c_str(), help, &value));
  return value;
}

long long option_int(MPI_Comm comm, const std::string& prefix, const std::string& name,
                     const OptionHelp& help, long long fallback) {
  PetscInt value = static_cast<PetscInt>(fallback);
  FRACMFG_PETSC_CHECK(read_int(comm, prefix_or_null(prefix), name.c_str(), help, &value));
  return value;
}

int option_choice(MPI_Comm comm, const std::string& prefix, const std::string& name,
                  const OptionHelp& help, const std::initializer_list<const char*>& choices,
                  int fallback) {
  const std::vector<const char*> words(choices);
  PetscInt index = fallback;
  FRACMFG_PETSC_CHECK(read_choice(comm, prefix_or_null(prefix), name.c_str(), help, words.data(),
                                  static_cast<PetscInt>(words.size()), &index));
  return static_cast<int>(index);
}

}  // namespace fracmfg::core
