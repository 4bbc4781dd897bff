#pragma once
// The project's own PETSc options, read one at a time inside a registered block
// (PetscOptionsBegin/End), so that `-help` lists each with its help text, its default and
// its group title, and the options database records that it was used.
//
//   const bool direct = core::option_bool(comm, "mfg_hjb_", "-direct",
//       {"fracmfg mfg 1D fast path", "the step written into the tridiagonal solver"}, true);
//
// PETSc's -help lists a block's (prefix, title) pair once per run: options read by separate
// calls with the same prefix need titles of their own. Each call is collective on comm
// (PetscOptionsBegin); a malformed value (-x_direct maybe) is PETSc's error, thrown as
// fracmfg::PetscError by FRACMFG_PETSC_CHECK. Nothing is written into the options database.

#include <mpi.h>

#include <initializer_list>
#include <optional>
#include <string>

namespace fracmfg::core {

/// What -help prints for an option: the group's title and the option's line.
struct OptionHelp {
  std::string title;  ///< the block's heading, e.g. "fracmfg restart options"
  std::string text;   ///< one line: what the option does
};

/// -<prefix><name> as a boolean (given without a value: true); `fallback` when absent.
bool option_bool(MPI_Comm comm, const std::string& prefix, const std::string& name,
                 const OptionHelp& help, bool fallback);

/// -<prefix><name> as a string; nullopt when absent, "" when given without a value.
std::optional<std::string> option_string(MPI_Comm comm, const std::string& prefix,
                                         const std::string& name, const OptionHelp& help,
                                         const std::string& fallback = {});

/// -<prefix><name> as a real number; `fallback` when absent.
double option_real(MPI_Comm comm, const std::string& prefix, const std::string& name,
                   const OptionHelp& help, double fallback);

/// -<prefix><name> as an integer; `fallback` when absent.
long long option_int(MPI_Comm comm, const std::string& prefix, const std::string& name,
                     const OptionHelp& help, long long fallback);

/// -<prefix><name> as one of `choices` (PetscOptionsEList: PETSc refuses another word);
/// the index of the word given, or `fallback` when absent.
int option_choice(MPI_Comm comm, const std::string& prefix, const std::string& name,
                  const OptionHelp& help, const std::initializer_list<const char*>& choices,
                  int fallback);

}  // namespace fracmfg::core
