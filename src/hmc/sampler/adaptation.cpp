#include "hmc/sampler/adaptation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace hmc::sampler {

void SavedState::put(const std::string& name, std::vector<double> values) {
  for (auto& e : entries_) {
    if (e.first == name) {
      e.second = std::move(values);
      return;
    }
  }
  entries_.emplace_back(name, std::move(values));
}

const std::vector<double>& SavedState::get(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.first == name) return e.second;
  throw std::out_of_range("no saved state \"" + name + "\"");
}

void DualAveraging::restart(double eps) {
  mu_ = std::log(10.0 * eps);
  h_bar_ = 0.0;
  log_eps_bar_ = 0.0;
  counter_ = 0;
}

double DualAveraging::update(double accept) {
  accept = std::isfinite(accept) ? std::min(1.0, std::max(0.0, accept)) : 0.0;
  ++counter_;
  const double eta = 1.0 / (counter_ + t0_);
  h_bar_ = (1.0 - eta) * h_bar_ + eta * (target_ - accept);
  const double log_eps = mu_ - std::sqrt(static_cast<double>(counter_)) / gamma_ * h_bar_;
  const double x_eta = std::pow(static_cast<double>(counter_), -kappa_);
  log_eps_bar_ = x_eta * log_eps + (1.0 - x_eta) * log_eps_bar_;
  return std::exp(log_eps);
}

double DualAveraging::final_step_size() const { return std::exp(log_eps_bar_); }

WindowSchedule::WindowSchedule(int warmup, const AdaptSettings& s) {
  if (warmup < 20) return;  // too short to estimate a metric: step size only
  int init = s.init_buffer, term = s.term_buffer, base = s.base_window;
  if (init + base + term > warmup) {
    init = static_cast<int>(0.15 * warmup);
    term = static_cast<int>(0.1 * warmup);
    base = warmup - init - term;
  }
  const int last = warmup - term;  // windows end by this iteration
  first_ = init + 1;
  int start = init, size = base;
  while (true) {
    int end = start + size;
    if (end + 2 * size > last) end = last;
    ends_.push_back(end);
    if (end >= last) break;
    start = end;
    size *= 2;
  }
}

bool WindowSchedule::in_window(int it) const { return first_ > 0 && it >= first_ && it <= ends_.back(); }

bool WindowSchedule::window_end(int it) const { return std::find(ends_.begin(), ends_.end(), it) != ends_.end(); }

bool WindowSchedule::snapshot(int it, int count) const {
  if (!in_window(it) || count < 1) return false;
  const auto end = std::lower_bound(ends_.begin(), ends_.end(), it);  // the window holding it
  const int start = end == ends_.begin() ? first_ : *(end - 1) + 1;
  const int stride = std::max(1, (*end - start + 1) / count);
  const int back = *end - it;
  return back % stride == 0 && back / stride < count;
}

int metric_state_columns(MetricKind kind, int dim) {
  switch (kind) {
    case MetricKind::kUnit:
      return 0;
    case MetricKind::kDiag:
      return 2 * dim + 1;
    case MetricKind::kFisherDiag:
      return 4 * dim + 1;
    case MetricKind::kDense:
      return kMetricSnapshots * dim + 1;
    case MetricKind::kLowRank:
      return kMetricSnapshots * 2 * dim + 1;
  }
  return 0;
}

double regularise(double variance, double n, bool diagonal_entry) {
  return (n / (n + 5.0)) * variance + (diagonal_entry ? 1e-3 * (5.0 / (n + 5.0)) : 0.0);
}

void ChEES::update(double gradient, double min_length, double max_length) {
  if (!std::isfinite(gradient)) return;
  // Adam with beta1 = 0 and beta2 = 0.95 (as TFP's ChEES-HMC): a step of about
  // `rate` in log T, in the direction that increases the criterion.
  constexpr double beta2 = 0.95, tiny = 1e-12;
  ++steps_;
  v_ = beta2 * v_ + (1.0 - beta2) * gradient * gradient;
  const double v_hat = v_ / (1.0 - std::pow(beta2, steps_));
  log_t_ += rate_ * gradient / (std::sqrt(v_hat) + tiny);
  log_t_ = std::min(std::log(max_length), std::max(std::log(min_length), log_t_));
}

}  // namespace hmc::sampler
