// core::plan_huge_pages: when the fracmfg command re-executes itself with glibc's huge-page
// tunable (kernel mode [madvise], glibc 2.35 or later, the tunable not set, not switched
// off, not re-executed already), the tunables it then sets, and the reason it gives
// otherwise; and a re-execution that fails leaves the environment as it was. The
// re-execution itself is checked end to end by driver.huge_pages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "fracmfg/core/huge_pages.hpp"

namespace core = fracmfg::core;

namespace {
const std::string kMadvise = "always [madvise] never";
}

TEST(HugePages, MadviseKernelAndNewGlibcReexecuteWithTheTunable) {
  const auto plan = core::plan_huge_pages(kMadvise, nullptr, nullptr, "2.36", false);
  EXPECT_TRUE(plan.reexec);
  EXPECT_EQ(plan.tunables, "glibc.malloc.hugetlb=1");
  EXPECT_EQ(plan.reason, "requested (GLIBC_TUNABLES=glibc.malloc.hugetlb=1)");
  EXPECT_TRUE(core::plan_huge_pages(kMadvise, nullptr, nullptr, "2.35", false).reexec);
  EXPECT_TRUE(core::plan_huge_pages(kMadvise, nullptr, "1", "3.0", false).reexec);
}

TEST(HugePages, OtherTunablesAreKept) {
  const auto plan =
      core::plan_huge_pages(kMadvise, "glibc.malloc.arena_max=2", nullptr, "2.36", false);
  EXPECT_TRUE(plan.reexec);
  EXPECT_EQ(plan.tunables, "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  EXPECT_EQ(core::plan_huge_pages(kMadvise, "", nullptr, "2.36", false).tunables,
            "glibc.malloc.hugetlb=1");
}

TEST(HugePages, TheUsersTunableStands) {
  const auto plan =
      core::plan_huge_pages(kMadvise, "glibc.malloc.hugetlb=0", nullptr, "2.36", false);
  EXPECT_FALSE(plan.reexec);
  EXPECT_EQ(plan.reason, "as GLIBC_TUNABLES sets (glibc.malloc.hugetlb=0)");
}

TEST(HugePages, SwitchedOff) {
  for (const char* off : {"0", "off", "no", "false", "OFF"}) {
    const auto plan = core::plan_huge_pages(kMadvise, nullptr, off, "2.36", false);
    EXPECT_FALSE(plan.reexec) << off;
    EXPECT_EQ(plan.reason, std::string("not requested: FRACMFG_HUGE_PAGES=") + off);
  }
}

TEST(HugePages, KernelModesOtherThanMadvise) {
  auto plan = core::plan_huge_pages("[always] madvise never", nullptr, nullptr, "2.36", false);
  EXPECT_FALSE(plan.reexec);
  EXPECT_NE(plan.reason.find("by the kernel (transparent huge pages: always)"), std::string::npos)
      << plan.reason;
  plan = core::plan_huge_pages("always madvise [never]", nullptr, nullptr, "2.36", false);
  EXPECT_FALSE(plan.reexec);
  EXPECT_NE(plan.reason.find("off in the kernel (never)"), std::string::npos) << plan.reason;
  plan = core::plan_huge_pages("", nullptr, nullptr, "2.36", false);
  EXPECT_FALSE(plan.reexec);
  EXPECT_NE(plan.reason.find("cannot be read"), std::string::npos) << plan.reason;
}

TEST(HugePages, OldOrUnknownGlibc) {
  for (const char* version : {"2.34", "2.31", "1.99", "unknown"}) {
    const auto plan = core::plan_huge_pages(kMadvise, nullptr, nullptr, version, false);
    EXPECT_FALSE(plan.reexec) << version;
    EXPECT_EQ(plan.reason, std::string("not requested: glibc ") + version +
                               " has no glibc.malloc.hugetlb (2.35 or later)");
  }
  EXPECT_FALSE(core::plan_huge_pages(kMadvise, nullptr, nullptr, nullptr, false).reexec);
}

TEST(HugePages, NeverReexecutedTwice) {
  const auto plan =
      core::plan_huge_pages(kMadvise, "glibc.malloc.arena_max=2", nullptr, "2.36", true);
  EXPECT_FALSE(plan.reexec);
  EXPECT_NE(plan.reason.find("re-executed"), std::string::npos) << plan.reason;
}

namespace {
std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::nullopt : std::optional<std::string>(value);
}
void set_env(const char* name, const std::optional<std::string>& value) {
  if (value) {
    setenv(name, value->c_str(), 1);
  } else {
    unsetenv(name);
  }
}
}  // namespace

// An exec that fails (here: a program that does not exist) returns with GLIBC_TUNABLES and
// the re-execution mark as they were, set or unset, and the status line names the failure
// instead of claiming huge pages.
TEST(HugePages, AFailedReexecutionRestoresTheEnvironment) {
  const auto saved_tunables = env("GLIBC_TUNABLES");
  const auto saved_mark = env("FRACMFG_HUGE_PAGES_REEXEC");
  unsetenv("FRACMFG_HUGE_PAGES_REEXEC");
  const auto plan =
      core::plan_huge_pages(kMadvise, "glibc.malloc.arena_max=2", nullptr, "2.36", false);
  ASSERT_TRUE(plan.reexec);
  std::string program = "fracmfg";
  char* argv[] = {program.data(), nullptr};
  const char* missing = "/nonexistent/fracmfg-huge-pages-test";

  setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2", 1);
  core::reexecute_for_huge_pages(plan, missing, argv);
  EXPECT_EQ(env("GLIBC_TUNABLES"), std::optional<std::string>("glibc.malloc.arena_max=2"));
  EXPECT_FALSE(env("FRACMFG_HUGE_PAGES_REEXEC").has_value());

  unsetenv("GLIBC_TUNABLES");
  core::reexecute_for_huge_pages(plan, missing, argv);
  EXPECT_FALSE(env("GLIBC_TUNABLES").has_value());
  EXPECT_FALSE(env("FRACMFG_HUGE_PAGES_REEXEC").has_value());

  const std::string status = core::huge_pages_status();
  EXPECT_EQ(status.rfind("not in effect: re-executing /nonexistent/", 0), 0u) << status;
  EXPECT_NE(status.find("No such file"), std::string::npos) << status;

  // A plan that does not re-execute leaves everything alone.
  setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=3", 1);
  core::reexecute_for_huge_pages(core::HugePagesPlan{}, missing, argv);
  EXPECT_EQ(env("GLIBC_TUNABLES"), std::optional<std::string>("glibc.malloc.arena_max=3"));

  set_env("GLIBC_TUNABLES", saved_tunables);
  set_env("FRACMFG_HUGE_PAGES_REEXEC", saved_mark);
}
