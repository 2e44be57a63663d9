#include "hmc/services/signals.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <initializer_list>

namespace hmc::services {

namespace {

// Lock-free, so safe in a handler, and well defined whichever thread (OpenMP, MPI) the
// signal lands on.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
// What is being read while a ReadingInput lives (a string literal), else null.
std::atomic<const char*> g_reading{nullptr};
static_assert(std::atomic<const char*>::is_always_lock_free);

void write_all(const char* text) {
  std::size_t n = 0;
  while (text[n] != '\0') ++n;
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, text, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    text += w;
    n -= static_cast<std::size_t>(w);
  }
}

/// Ends the process: one line and kExitInterrupted. Async-signal-safe (write, _exit).
[[noreturn]] void stop_reading(int sig, const char* what) {
  write_all("hmc: ");
  write_all(signal_name(sig));
  write_all(" while reading ");
  write_all(what);
  write_all("; stopped before writing anything\n");
  ::_exit(kExitInterrupted);
}

extern "C" void on_signal(int sig) {
  if (const char* what = g_reading.load()) stop_reading(sig, what);
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

ReadingInput::ReadingInput(const char* what) : previous_(g_reading.exchange(what)) {
  // A signal that came before (during the start-up) ends the process here, before a read
  // that may block.
  if (const int sig = g_signal; sig != 0 && what != nullptr) stop_reading(sig, what);
}

ReadingInput::~ReadingInput() { g_reading = previous_; }

void throw_if_interrupted() {
  if (const int sig = g_signal; sig != 0) throw Interrupted{sig};
}

}  // namespace hmc::services
