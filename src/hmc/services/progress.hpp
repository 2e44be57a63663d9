#pragma once
/// \file
/// \brief Progress lines for the phases after sampling (diagnostics, writing files):
/// a line when a phase starts, then at most one every two seconds with % and ETA, and
/// one when it ends. Each update also checks for a stop signal (services/signals.hpp).

#include "hmc/services/signals.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>

namespace hmc::services {

class PhaseProgress {
 public:
  explicit PhaseProgress(std::string name) : name_(std::move(name)) { spdlog::info("{} ...", name_); }

  /// \brief `fraction` of the phase is done; throws Interrupted on a pending signal.
  void update(double fraction) {
    throw_if_interrupted();
    const auto now = Clock::now();
    if (now - last_ < std::chrono::seconds(2) || fraction <= 0.0) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    spdlog::info("{}: {:3.0f}% | {:.1f} s, ETA {:.1f} s", name_, 100.0 * fraction, elapsed,
                 elapsed / fraction * (1.0 - fraction));
  }

  void done() {
    throw_if_interrupted();
    spdlog::info("{}: done in {:.2f} s", name_, std::chrono::duration<double>(Clock::now() - start_).count());
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::string name_;
  Clock::time_point start_ = Clock::now(), last_ = Clock::now();
};

}  // namespace hmc::services
