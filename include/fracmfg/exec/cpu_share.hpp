#pragma once
// The share of a CPU this thread gets while it is runnable, from the kernel's scheduler
// statistics (Linux: /proc/thread-self/schedstat, the time the thread ran on a CPU and the
// time it waited on a run queue), and the thread's CPU time. A rank that shares its core
// with one other busy process gets a share of about 1/2 however the two take turns, so the
// CPU time of its work divided by the share is the wall time that work costs it: what the
// load balance (balance_policy.hpp) needs to compare ranks. Not collective.
//
//   const exec::SchedSample a = exec::sched_sample();
//   ...work...
//   const double share = exec::cpu_share(a, exec::sched_sample());   // (0, 1]

namespace fracmfg::exec {

/// The calling thread's scheduler totals so far [s].
struct SchedSample {
  double running = 0.0;  ///< time on a CPU
  double waiting = 0.0;  ///< time runnable but waiting for a CPU
  bool valid = false;    ///< false where the statistics cannot be read
};

/// Reads /proc/thread-self/schedstat. Never throws (valid = false on failure).
SchedSample sched_sample();

/// running / (running + waiting) between two samples, in (0, 1]; 1 when either sample is
/// invalid or the thread was not runnable in between.
double cpu_share(const SchedSample& from, const SchedSample& to);

/// CPU time of the calling thread [s] (CLOCK_THREAD_CPUTIME_ID).
double thread_cpu_seconds();

}  // namespace fracmfg::exec
