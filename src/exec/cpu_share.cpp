#include "fracmfg/exec/cpu_share.hpp"

#include <fstream>
#include <time.h>

namespace fracmfg::exec {

SchedSample sched_sample() {
  SchedSample s;
  std::ifstream in("/proc/thread-self/schedstat");
  double run_ns = 0.0;
  double wait_ns = 0.0;
  if (in >> run_ns >> wait_ns) {
    s.running = run_ns * 1e-9;
    s.waiting = wait_ns * 1e-9;
    s.valid = true;
  }
  return s;
}

double cpu_share(const SchedSample& from, const SchedSample& to) {
  if (!from.valid || !to.valid) return 1.0;
  const double run = to.running - from.running;
  const double wait = to.waiting - from.waiting;
  if (!(run > 0.0) || wait < 0.0) return 1.0;
  return run / (run + wait);
}

double thread_cpu_seconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0.0;
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace fracmfg::exec
