#include "fracmfg/core/interrupt.hpp"

#include <csignal>

namespace fracmfg::core {

namespace {
volatile std::sig_atomic_t received_signal = 0;

extern "C" void fracmfg_on_signal(int signal_number) {
  received_signal = signal_number;
}

constexpr int handled[] = {SIGUSR1, SIGTERM, SIGINT};
}  // namespace

struct InterruptGuard::Saved {
  struct sigaction previous[3];
};

InterruptGuard::InterruptGuard() : saved_(new Saved) {
  struct sigaction action {};
  action.sa_handler = &fracmfg_on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < 3; ++i) sigaction(handled[i], &action, &saved_->previous[i]);
}

InterruptGuard::~InterruptGuard() {
  for (int i = 0; i < 3; ++i) sigaction(handled[i], &saved_->previous[i], nullptr);
  delete saved_;
}

int signal_received() {
  return static_cast<int>(received_signal);
}

bool stop_requested(MPI_Comm comm) {
  int mine = received_signal != 0 ? 1 : 0;
  int any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  return any != 0;
}

void clear_stop_request() {
  received_signal = 0;
}

void request_stop(int signal_number) {
  received_signal = signal_number;
}

}  // namespace fracmfg::core
