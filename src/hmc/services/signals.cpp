#include "hmc/services/signals.hpp"

#include <atomic>
#include <csignal>
#include <initializer_list>

namespace hmc::services {

namespace {

// Lock-free, so safe in a handler, and well defined whichever thread (OpenMP, MPI) the
// signal lands on.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_signal(int sig) {
  if (sig == SIGINT && g_signal == SIGINT) {
    // Asked twice: stop now, as an unhandled SIGINT would.
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
  g_signal = sig;
}

}  // namespace

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGTERM, SIGINT, SIGUSR1}) sigaction(sig, &sa, nullptr);
}

void restore_default_signal_handlers() {
  for (int sig : {SIGTERM, SIGINT, SIGUSR1}) std::signal(sig, SIG_DFL);
  if (const int sig = g_signal; sig != 0) std::raise(sig);
}

int pending_signal() { return g_signal; }

const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return "a signal";
  }
}

void throw_if_interrupted() {
  if (const int sig = g_signal; sig != 0) throw Interrupted{sig};
}

}  // namespace hmc::services
