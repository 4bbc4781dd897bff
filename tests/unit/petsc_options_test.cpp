// core::option_*: the project's registered PETSc options (core/petsc_options.hpp): absent ->
// the fallback, given -> the value, a word outside a choice list -> PETSc's error, and
// nothing written into the options database.
#include "fracmfg/core/petsc_options.hpp"

#include <gtest/gtest.h>
#include <petscsys.h>

#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"

namespace {

using fracmfg::core::OptionHelp;
namespace core = fracmfg::core;

const OptionHelp kHelp{"fracmfg test options", "an option of the test"};

class Given {
 public:
  Given(std::string name, std::string value) : name_(std::move(name)) {
    PetscOptionsSetValue(nullptr, name_.c_str(), value.empty() ? nullptr : value.c_str());
  }
  ~Given() { PetscOptionsClearValue(nullptr, name_.c_str()); }
  Given(const Given&) = delete;
  Given& operator=(const Given&) = delete;

 private:
  std::string name_;
};

std::string all_options() {
  char* all = nullptr;
  PetscOptionsGetAll(nullptr, &all);
  std::string text = all != nullptr ? all : "";
  PetscFree(all);
  return text;
}

TEST(PetscOptions, AbsentGivesTheFallback) {
  const std::string before = all_options();
  EXPECT_TRUE(core::option_bool(PETSC_COMM_WORLD, "t_", "-flag", kHelp, true));
  EXPECT_FALSE(core::option_bool(PETSC_COMM_WORLD, "t_", "-flag", kHelp, false));
  EXPECT_FALSE(core::option_string(PETSC_COMM_WORLD, "t_", "-file", kHelp).has_value());
  EXPECT_EQ(core::option_real(PETSC_COMM_WORLD, "t_", "-ratio", kHelp, 2.5), 2.5);
  EXPECT_EQ(core::option_int(PETSC_COMM_WORLD, "t_", "-count", kHelp, -7), -7);
  EXPECT_EQ(core::option_choice(PETSC_COMM_WORLD, "t_", "-scheme", kHelp, {"a", "b", "c"}, 1), 1);
  EXPECT_EQ(all_options(), before);
}

TEST(PetscOptions, GivenValuesAreRead) {
  {
    const Given flag("-t_flag", "");
    EXPECT_TRUE(core::option_bool(PETSC_COMM_WORLD, "t_", "-flag", kHelp, false));
  }
  {
    const Given flag("-t_flag", "false");
    EXPECT_FALSE(core::option_bool(PETSC_COMM_WORLD, "t_", "-flag", kHelp, true));
  }
  {
    const Given file("-t_file", "");
    const auto value = core::option_string(PETSC_COMM_WORLD, "t_", "-file", kHelp, "x.h5");
    ASSERT_TRUE(value.has_value());
    EXPECT_EQ(*value, "");
  }
  {
    const Given file("-t_file", "results/run.chk.h5");
    EXPECT_EQ(core::option_string(PETSC_COMM_WORLD, "t_", "-file", kHelp).value_or("-"),
              "results/run.chk.h5");
  }
  {
    const Given no_prefix("-plain_file", "a.h5");
    EXPECT_EQ(core::option_string(PETSC_COMM_WORLD, "", "-plain_file", kHelp).value_or("-"),
              "a.h5");
  }
  {
    const Given ratio("-t_ratio", "0.125");
    EXPECT_EQ(core::option_real(PETSC_COMM_WORLD, "t_", "-ratio", kHelp, 2.0), 0.125);
  }
  {
    const Given count("-t_count", "42");
    EXPECT_EQ(core::option_int(PETSC_COMM_WORLD, "t_", "-count", kHelp, 0), 42);
  }
  {
    const Given scheme("-t_scheme", "c");
    EXPECT_EQ(core::option_choice(PETSC_COMM_WORLD, "t_", "-scheme", kHelp, {"a", "b", "c"}, 0), 2);
  }
}

TEST(PetscOptions, MalformedValuesArePetscErrors) {
  {
    const Given scheme("-t_scheme", "d");
    EXPECT_THROW(core::option_choice(PETSC_COMM_WORLD, "t_", "-scheme", kHelp, {"a", "b", "c"}, 0),
                 fracmfg::PetscError);
  }
  {
    const Given count("-t_count", "many");
    EXPECT_THROW(core::option_int(PETSC_COMM_WORLD, "t_", "-count", kHelp, 0), fracmfg::PetscError);
  }
  {
    const Given flag("-t_flag", "maybe");
    EXPECT_THROW(core::option_bool(PETSC_COMM_WORLD, "t_", "-flag", kHelp, false),
                 fracmfg::PetscError);
  }
}

}  // namespace
