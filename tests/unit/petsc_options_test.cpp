// core::option_*: the project's registered PETSc options (core/petsc_options.hpp): absent ->
// the fallback, given -> the value, a word outside a choice list -> PETSc's error, and
// nothing written into the options database. core::first_refused_petsc_option
// (core/petsc_option_rules.hpp): the options a deck, the command line and PETSC_OPTIONS may
// not give (files, debuggers; start-up options in a deck) and the ones they may.
#include "fracmfg/core/petsc_options.hpp"

#include <gtest/gtest.h>
#include <petscsys.h>

#include <string>
#include <utility>
#include <vector>

#include "core/petsc_option_rules.hpp"
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

namespace {

using fracmfg::core::PetscOptionSource;

std::string refused(const std::string& text, PetscOptionSource source = PetscOptionSource::deck) {
  return fracmfg::core::first_refused_petsc_option(text, source);
}

TEST(PetscOptionRules, SplitsAsPetscDoes) {
  const auto words = core::split_petsc_options("  -ksp_rtol 1e-8 -ksp_monitor -x -1 -y \"a b\"");
  ASSERT_EQ(words.size(), 4u);
  EXPECT_EQ(words[0].name, "-ksp_rtol");
  EXPECT_EQ(words[0].value, "1e-8");
  EXPECT_EQ(words[0].offset, 2u);
  EXPECT_EQ(words[1].name, "-ksp_monitor");
  EXPECT_FALSE(words[1].has_value);
  EXPECT_EQ(words[2].name, "-x");  // -1 is a value, not an option
  EXPECT_EQ(words[2].value, "-1");
  EXPECT_EQ(words[3].value, "a b");
}

TEST(PetscOptionRules, ViewersWithFilesAreRefused) {
  for (const char* text : {"-ksp_monitor :deck.yaml", "-log_view ascii:log.txt",
                           "-mat_view binary:A.dat", "-ksp_view_mat hdf5:A.h5",
                           "-snes_monitor_short :out.txt", "-mfg_ksp_monitor ascii:m.txt:append",
                           "-vec_view binary", "-dm_view vtk", "-ksp_view socket"}) {
    const std::string why = refused(text, PetscOptionSource::command_line);
    EXPECT_FALSE(why.empty()) << text;
    EXPECT_NE(why.find("fracmfg writes only the files the deck names"), std::string::npos) << why;
  }
  EXPECT_NE(refused("-ksp_monitor :deck.yaml").find("writes the file 'deck.yaml'"),
            std::string::npos);
  EXPECT_NE(refused("-log_view ascii:log.txt").find("-log_view prints to the terminal"),
            std::string::npos);
}

TEST(PetscOptionRules, FilesAndDebuggersAreRefusedEverywhere) {
  for (auto source : {PetscOptionSource::command_line, PetscOptionSource::deck}) {
    for (const char* text :
         {"-options_file other.opts", "-options_file_yaml o.yaml", "-history h.txt", "-log_trace t",
          "-draw_save a.png", "-start_in_debugger", "-on_error_attach_debugger gdb"}) {
      EXPECT_FALSE(refused(text, source).empty()) << text;
    }
  }
  EXPECT_NE(refused("-options_file x", PetscOptionSource::command_line).find("escape"),
            std::string::npos);
  EXPECT_NE(refused("-info info.txt", PetscOptionSource::command_line).find("'info.txt'"),
            std::string::npos);
  EXPECT_TRUE(refused("-info", PetscOptionSource::command_line).empty());
  EXPECT_TRUE(refused("-info :ksp", PetscOptionSource::command_line).empty());
}

TEST(PetscOptionRules, StartUpOptionsOnlyOnTheCommandLine) {
  for (const char* text : {"-malloc_debug", "-fp_trap", "-on_error_abort", "-info"}) {
    EXPECT_TRUE(refused(text, PetscOptionSource::command_line).empty()) << text;
    EXPECT_NE(refused(text).find("give it on the command line after --"), std::string::npos)
        << text;
  }
}

TEST(PetscOptionRules, WordsPetscWouldIgnoreAreRefused) {
  // A word before any option, and a second value after one.
  for (auto source : {PetscOptionSource::command_line, PetscOptionSource::deck}) {
    EXPECT_EQ(refused("extra", source).rfind("'extra' is not a PETSc option", 0), 0u)
        << refused("extra", source);
    EXPECT_EQ(refused("-ksp_type gmres cg", source).rfind("'cg' is not a PETSc option", 0), 0u)
        << refused("-ksp_type gmres cg", source);
  }
  // Values may be negative numbers or quoted texts with blanks.
  EXPECT_TRUE(refused("-x -1 -y \"a b\" -z .5").empty()) << refused("-x -1 -y \"a b\" -z .5");
}

TEST(PetscOptionRules, OrdinaryOptionsPass) {
  for (const char* text :
       {"", "-ksp_type gmres -ksp_rtol 1e-10 -pc_type ilu", "-ksp_monitor", "-ksp_view",
        "-log_view", "-ksp_monitor_short -ksp_converged_reason", "-ksp_view ::ascii_info",
        "-mfg_ksp_max_it 100 -fpde_pc_type jacobi", "-ksp_monitor draw", "-mat_view ascii"}) {
    EXPECT_TRUE(refused(text).empty()) << text << ": " << refused(text);
  }
  // The first refused option is the one reported.
  EXPECT_EQ(refused("-ksp_rtol 1e-8 -history h.txt -ksp_monitor :a").rfind("'-history h.txt'", 0),
            0u);
}

}  // namespace
