#pragma once
// Transparent huge pages for a run's large allocations.
//
// A solver's state (every time level of a game, Newton's Krylov basis, a fractional
// history) is hundreds of MB that are touched for the first time when they are allocated.
// In 4 KiB pages every page costs a fault; in 2 MiB pages a fraction of that (most of all in
// virtual machines). Kernels that give huge pages on request only
// (/sys/kernel/mm/transparent_hugepage/enabled shows [madvise], the common default) need the
// allocator to ask: glibc 2.35 and later do when the environment has
// GLIBC_TUNABLES=glibc.malloc.hugetlb=1, which glibc reads once, at the start of a process.
//
// request_huge_pages(argv), called first thing in main() (the fracmfg command and the perf
// programs do), re-executes the program with that tunable added when it would take effect
// and is not there yet. It does nothing when FRACMFG_HUGE_PAGES is 0 (or off, no, false),
// when GLIBC_TUNABLES already names glibc.malloc.hugetlb (the user's choice stands), when the
// kernel gives huge pages always or never, with an older glibc, and once MPI has started.
// The process keeps its id, arguments and environment otherwise. Should the exec fail, the
// process goes on without huge pages, its environment as it was, and huge_pages_status()
// says why.
#include <string>

namespace fracmfg::core {

/// What request_huge_pages() does for a given machine and environment.
struct HugePagesPlan {
  bool reexec = false;   ///< re-execute with `tunables`
  std::string tunables;  ///< the new GLIBC_TUNABLES (when reexec)
  std::string reason;    ///< why huge pages are (not) requested, for `fracmfg info`
};

/// The decision, from its inputs: the text of .../transparent_hugepage/enabled (empty when it
/// cannot be read), GLIBC_TUNABLES, FRACMFG_HUGE_PAGES (each nullptr when unset), glibc's
/// version ("2.36") and whether this process is already the re-executed one.
HugePagesPlan plan_huge_pages(const std::string& thp_enabled, const char* tunables,
                              const char* switch_value, const char* glibc_version, bool reexecuted);

/// Re-executes the program (/proc/self/exe, the same argv) with glibc's huge-page tunable
/// when plan_huge_pages() says so for this process; returns otherwise.
void request_huge_pages(char** argv);

/// The re-execution itself: sets GLIBC_TUNABLES to plan.tunables and the re-execution mark,
/// then execv(executable, argv). Returns only when the exec failed (or !plan.reexec): then
/// both variables are as they were before the call and huge_pages_status() names the failure.
/// request_huge_pages() calls it with /proc/self/exe.
void reexecute_for_huge_pages(const HugePagesPlan& plan, const char* executable, char** argv);

/// One line on this process: whether its large allocations ask for huge pages, and why.
std::string huge_pages_status();

}  // namespace fracmfg::core
