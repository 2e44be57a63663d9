// The integrator: time-reversible to round-off, energy error of order eps^2.
#include "coin_toss.hpp"
#include "harmonic_oscillator.hpp"
#include "hmc/sampler/leapfrog.hpp"
#include "support/device_eval.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace {

using hmc::Row;
using nlohmann::json;

hmc::models::HarmonicOscillator correlated_oscillator() {
  return hmc::models::HarmonicOscillator::from_config({{"name", "harmonic_oscillator"},
                                                       {"precision", {{4, 1, 0.5}, {1, 3, -0.2}, {0.5, -0.2, 2}}},
                                                       {"centres", {1, 2, 3}}},
                                                      nullptr);
}

hmc::models::CoinToss coins() {
  json tosses = {{1, 1, 1, 0, 1, 0, 1, 1}, {0, 0, 0, 1, 0}};
  return hmc::models::CoinToss::from_config({{"name", "coin_toss"}, {"priors", {{"a", 1}, {"b", 1}}}},
                                            {{"tosses", tosses}});
}

// Row 0: q, row 1: p, row 2: grad; run on the device.
template <class Model>
hmc::test::HostMatrix forward_back(const Model& m, const std::vector<double>& q0, const std::vector<double>& p0,
                                   double eps, int steps) {
  const int d = m.dim();
  auto s = hmc::test::to_device({q0, p0, std::vector<double>(d, 0.0)});
  hmc::VectorView inv_mass("inv_mass", d);
  Kokkos::deep_copy(inv_mass, 1.0);
  Kokkos::parallel_for(
      "test::forward_back", Kokkos::RangePolicy<hmc::ExecSpace>(0, 1), KOKKOS_LAMBDA(const int) {
        const Row q = hmc::row(s, 0), p = hmc::row(s, 1), g = hmc::row(s, 2);
        m.log_density_gradient(q, g);
        hmc::sampler::leapfrog(m, q, p, g, inv_mass, d, eps, steps);
        for (int j = 0; j < d; ++j) p(j) = -p(j);
        hmc::sampler::leapfrog(m, q, p, g, inv_mass, d, eps, steps);
        for (int j = 0; j < d; ++j) p(j) = -p(j);
      });
  return hmc::test::to_host(s);
}

template <class Model>
void expect_reversible(const Model& m, const std::vector<double>& q0, const std::vector<double>& p0, double eps) {
  const auto r = forward_back(m, q0, p0, eps, 100);
  for (int j = 0; j < m.dim(); ++j) {
    EXPECT_NEAR(r(0, j), q0[j], 1e-10) << "q[" << j << "]";
    EXPECT_NEAR(r(1, j), p0[j], 1e-10) << "p[" << j << "]";
  }
}

TEST(Leapfrog, ReversibleCorrelatedGaussian) {
  expect_reversible(correlated_oscillator(), {0.3, -1.2, 2.5}, {1.0, -0.5, 0.7}, 0.05);
}

TEST(Leapfrog, ReversibleCoinToss) { expect_reversible(coins(), {0.8, -1.5}, {1.3, 0.4}, 0.1); }

// Max |H(t) - H(0)| over a trajectory of fixed length `duration`, for each eps.
template <class Model>
std::vector<double> max_energy_errors(const Model& m, const std::vector<double>& q0, const std::vector<double>& p0,
                                      const std::vector<double>& eps, double duration) {
  const int d = m.dim(), n = static_cast<int>(eps.size());
  std::vector<std::vector<double>> rows;
  for (int k = 0; k < n; ++k) {
    rows.push_back(q0);
    rows.push_back(p0);
    rows.push_back(std::vector<double>(d, 0.0));
  }
  auto s = hmc::test::to_device(rows);
  Kokkos::View<double*> eps_d("eps", n), err("err", n);
  auto eps_h = Kokkos::create_mirror_view(eps_d);
  for (int k = 0; k < n; ++k) eps_h(k) = eps[k];
  Kokkos::deep_copy(eps_d, eps_h);
  hmc::VectorView inv_mass("inv_mass", d);
  Kokkos::deep_copy(inv_mass, 1.0);
  const hmc::sampler::Metric metric{d, false, inv_mass, {}, {}};  // ½ pᵀ diag(inv_mass) p
  Kokkos::parallel_for(
      "test::energy", Kokkos::RangePolicy<hmc::ExecSpace>(0, n), KOKKOS_LAMBDA(const int k) {
        const Row q = hmc::row(s, 3 * k), p = hmc::row(s, 3 * k + 1), g = hmc::row(s, 3 * k + 2);
        const double h0 = -m.log_density_gradient(q, g) + metric.kinetic(p);
        const int steps = static_cast<int>(duration / eps_d(k) + 0.5);
        double worst = 0.0;
        for (int t = 0; t < steps; ++t) {
          const double lp = hmc::sampler::leapfrog(m, q, p, g, inv_mass, d, eps_d(k), 1);
          const double e = hmc::math::fabs(-lp + metric.kinetic(p) - h0);
          worst = e > worst ? e : worst;
        }
        err(k) = worst;
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), err);
  return std::vector<double>(h.data(), h.data() + n);
}

double loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += std::log(x[i]);
    my += std::log(y[i]);
  }
  mx /= x.size();
  my /= y.size();
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (std::log(x[i]) - mx) * (std::log(y[i]) - my);
    sxx += (std::log(x[i]) - mx) * (std::log(x[i]) - mx);
  }
  return sxy / sxx;
}

template <class Model>
void expect_second_order(const Model& m, const std::vector<double>& q0, const std::vector<double>& p0, double eps0) {
  const std::vector<double> eps = {eps0, eps0 / 2, eps0 / 4, eps0 / 8, eps0 / 16};  // four halvings
  const auto err = max_energy_errors(m, q0, p0, eps, 2.0);
  for (double e : err) ASSERT_GT(e, 0.0);
  const double slope = loglog_slope(eps, err);
  EXPECT_NEAR(slope, 2.0, 0.15) << "errors " << err[0] << " ... " << err[4];
}

TEST(Leapfrog, EnergyErrorIsSecondOrderGaussian) {
  expect_second_order(correlated_oscillator(), {0.3, -1.2, 2.5}, {1.0, -0.5, 0.7}, 0.1);
}

TEST(Leapfrog, EnergyErrorIsSecondOrderCoinToss) { expect_second_order(coins(), {0.8, -1.5}, {1.3, 0.4}, 0.2); }

}  // namespace
