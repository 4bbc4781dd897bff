#include "mfg/forward.hpp"

#include "fracmfg/core/error.hpp"
#include "fracmfg/mfg/fokker_planck.hpp"

namespace fracmfg::mfg::detail {

namespace {

class FdmForward final : public ForwardMethod {
 public:
  explicit FdmForward(const Model& model) : model_(model), fp_(model) {}
  void begin() override {}
  void advance(int n, Vec u, Vec m, Vec m_next) override {
    fp_.step(u, m, model_.fp_source(n + 1), m_next);
  }

 private:
  const Model& model_;
  FokkerPlanckFdm fp_;
};

}  // namespace

std::unique_ptr<ForwardMethod> make_forward_method(const Model& model, exec::Selector* selector) {
  (void)selector;
  using Method = io::MfgConfig::FokkerPlanck::Method;
  switch (model.config().fokker_planck.method) {
    case Method::fdm: return std::make_unique<FdmForward>(model);
    case Method::particles: break;
  }
  throw NotCompiled("mfg.fokker_planck.method particles", {"fdm"});
}

}  // namespace fracmfg::mfg::detail
