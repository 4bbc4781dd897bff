#include "mfg/forward.hpp"

#include "fracmfg/mfg/fokker_planck.hpp"
#include "fracmfg/mfg/particles.hpp"

namespace fracmfg::mfg::detail {

namespace {

class FdmForward final : public ForwardMethod {
 public:
  FdmForward(const Model& model, exec::Selector* selector) : model_(model), fp_(model, selector) {}
  void begin() override {}
  void set_tolerance(double rtol) override { fp_.set_relative_tolerance(rtol); }
  void set_density(Vec m) override { fp_.set_density(m); }
  void advance(int n, Vec u, Vec m, Vec m_next, Vec guess) override {
    fp_.set_time_level(n);
    fp_.step(u, m, model_.fp_source(n + 1), m_next, guess);
  }
  double outflow() const override { return fp_.outflow(); }

 private:
  const Model& model_;
  FokkerPlanckFdm fp_;
};

class ParticleForward final : public ForwardMethod {
 public:
  ParticleForward(const Model& model, exec::Selector* selector, core::Logger log)
      : particles_(model, selector, log) {}
  void begin() override { particles_.begin(); }
  void advance(int n, Vec u, Vec, Vec m_next, Vec) override { particles_.step(n, u, m_next); }

 private:
  ParticleFokkerPlanck particles_;
};

}  // namespace

std::unique_ptr<ForwardMethod> make_forward_method(const Model& model, exec::Selector* selector,
                                                   core::Logger log) {
  using Method = io::MfgConfig::FokkerPlanck::Method;
  if (model.problem().fokker_planck.method == Method::particles) {
    return std::make_unique<ParticleForward>(model, selector, log);
  }
  return std::make_unique<FdmForward>(model, selector);
}

}  // namespace fracmfg::mfg::detail
