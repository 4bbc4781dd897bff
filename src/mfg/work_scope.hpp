#pragma once
// Counts the calling thread's CPU time in a local grid loop into Model::work_seconds() (the
// load balance's measure of a rank's speed, mfg/solver.hpp): one object per loop call. Does
// nothing unless the model's work accounting is on (the thread CPU clock is a system call).
//
//   const detail::WorkScope work(model);   // ...the loop over the owned points...
#include "fracmfg/exec/cpu_share.hpp"
#include "fracmfg/mfg/model.hpp"

namespace fracmfg::mfg::detail {

class WorkScope {
 public:
  explicit WorkScope(const Model& model)
      : model_(model),
        on_(model.work_accounting()),
        start_(on_ ? exec::thread_cpu_seconds() : 0.0) {}
  ~WorkScope() {
    if (on_) model_.add_work(exec::thread_cpu_seconds() - start_);
  }
  WorkScope(const WorkScope&) = delete;
  WorkScope& operator=(const WorkScope&) = delete;

 private:
  const Model& model_;
  bool on_;
  double start_;
};

}  // namespace fracmfg::mfg::detail
