#include "mfg/forward.hpp"

#include "fracmfg/core/error.hpp"
#include "fracmfg/mfg/fokker_planck.hpp"
#include "fracmfg/mfg/particles.hpp"

namespace fracmfg::mfg::detail {

FokkerPlanckFdm::DensityStep ForwardMethod::advance_at_own_density(int, Vec, Vec, Vec, Vec, double,
                                                                   int) {
  throw Error("mfg: the Fokker-Planck step at its own density needs the fdm method");
}

namespace {

class FdmForward final : public ForwardMethod {
 public:
  FdmForward(const Model& model, exec::Selector* selector) : model_(model), fp_(model, selector) {}
  void begin() override {}
  void set_tolerance(double rtol) override { fp_.set_relative_tolerance(rtol); }
  bool uses_guess() const override { return !fp_.direct(); }
  void set_density(Vec m) override { fp_.set_density(m); }
  void advance(int n, Vec u, Vec m, Vec m_next, Vec guess) override {
    fp_.set_time_level(n);
    fp_.step(u, m, model_.fp_source(n + 1), m_next, guess);
  }
  FokkerPlanckFdm::DensityStep advance_at_own_density(int n, Vec u, Vec m, Vec m_next, Vec guess,
                                                      double tol, int max_iterations) override {
    fp_.set_time_level(n);
    return fp_.step_at_own_density(u, m, model_.fp_source(n + 1), m_next, guess, tol,
                                   max_iterations);
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
