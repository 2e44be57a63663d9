// The hidden Markov model: forward-algorithm likelihood against brute-force
// enumeration of every state path, the forward-backward gradient against central
// finite differences, priors, transforms, and the config/data checks.
#include "hmc/model/concept.hpp"
#include "hmc/sampler/lanes.hpp"
#include "hmm.hpp"
#include "support/gradient_test.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

namespace {

using hmc::Row;
using hmc::models::Hmm;
using hmc::test::expect_gradient_matches;
using hmc::test::random_points;
using nlohmann::json;

json words_data(const std::vector<int>& lengths, int K, int V, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> sym(0, V - 1);
  json words = json::array();
  for (int n : lengths) {
    json s = json::array();
    for (int t = 0; t < n; ++t) s.push_back(sym(rng));
    words.push_back(s);
  }
  return {{"num_states", K}, {"num_words", V}, {"words", lengths.size() == 1 ? words[0] : words}};
}

json gaussian_data(const std::vector<int>& lengths, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::bernoulli_distribution coin(0.5);
  json ys = json::array();
  for (int n : lengths) {
    json s = json::array();
    for (int t = 0; t < n; ++t) s.push_back((coin(rng) ? 2.0 : -1.0) + 0.8 * z(rng));
    ys.push_back(s);
  }
  return {{"y", lengths.size() == 1 ? ys[0] : ys}};
}

/// Per point: [0] log_likelihood, [1] log_density, then num_params() constrained values.
hmc::test::HostMatrix evaluate(const Hmm& m, const std::vector<std::vector<double>>& pts) {
  const auto points = hmc::test::to_device(pts);
  const int n = static_cast<int>(pts.size()), np = m.num_params();
  hmc::StateView out("out", n, 2 + np), cons("cons", n, np);
  Kokkos::parallel_for(
      "test::hmm_evaluate", Kokkos::RangePolicy<hmc::ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const Row q = hmc::row(points, i), c = hmc::row(cons, i);
        out(i, 0) = m.log_likelihood(q);
        out(i, 1) = m.log_density(q);
        m.constrain(q, c);
        for (int j = 0; j < np; ++j) out(i, 2 + j) = c(j);
      });
  return hmc::test::to_host(out);
}

/// log L by summing over all K^T state paths of each sequence, from constrained values.
double brute_force_log_likelihood(const Hmm& m, const std::vector<double>& x, const json& data) {
  const int K = m.num_states;
  auto A = [&](int i, int j) { return x[i * K + j]; };
  std::vector<double> pi(K, 1.0 / K);
  if (m.initial_dirichlet)
    for (int k = 0; k < K; ++k) pi[k] = x[m.draw_initial + k];
  const double sigma = m.sigma_free ? x[m.draw_sigma] : m.sigma_fixed;
  const json& top = data.at(m.gaussian ? "y" : "words");
  const std::vector<json> seqs =
      top.front().is_array() ? std::vector<json>(top.begin(), top.end()) : std::vector<json>{top};
  double ll = 0.0;
  for (const auto& seq : seqs) {
    const int T = static_cast<int>(seq.size());
    auto log_b = [&](int k, int t) {
      if (m.gaussian) {
        const double z = (seq[t].get<double>() - x[K * K + k]) / sigma;
        return -0.5 * z * z - std::log(sigma) - 0.5 * std::log(2.0 * M_PI);
      }
      return std::log(x[K * K + k * m.num_symbols + seq[t].get<int>()]);
    };
    long paths = 1;
    for (int t = 0; t < T; ++t) paths *= K;
    // Log probability of every path, then a log-sum-exp over all of them.
    std::vector<double> lps(paths);
    std::vector<int> s(T);
    for (long p = 0; p < paths; ++p) {
      long r = p;
      for (int t = 0; t < T; ++t, r /= K) s[t] = static_cast<int>(r % K);
      double lp = std::log(pi[s[0]]) + log_b(s[0], 0);
      for (int t = 1; t < T; ++t) lp += std::log(A(s[t - 1], s[t])) + log_b(s[t], t);
      lps[p] = lp;
    }
    const double top = *std::max_element(lps.begin(), lps.end());
    double total = 0.0;
    for (double lp : lps) total += std::exp(lp - top);
    ll += top + std::log(total);
  }
  return ll;
}

void expect_brute_force(const Hmm& m, const json& data, int n_points, unsigned seed) {
  const auto pts = random_points(n_points, m.dim(), 2.0, seed);
  const auto r = evaluate(m, pts);
  for (int i = 0; i < n_points; ++i) {
    std::vector<double> x(m.num_params());
    for (int j = 0; j < m.num_params(); ++j) x[j] = r(i, 2 + j);
    const double bf = brute_force_log_likelihood(m, x, data);
    ASSERT_TRUE(std::isfinite(bf));
    EXPECT_LE(std::abs(r(i, 0) - bf), 1e-12 * std::abs(bf)) << "point " << i << ": forward " << r(i, 0) << " vs " << bf;
  }
}

json categorical(json extra = json::object()) {
  extra["name"] = "hmm";
  extra["emission"] = "categorical";
  return extra;
}

json gaussian(int K, json extra = json::object()) {
  extra["name"] = "hmm";
  extra["emission"] = "gaussian";
  extra["num_states"] = K;
  return extra;
}

TEST(Hmm, CategoricalLikelihoodMatchesBruteForce) {
  const json data = words_data({8}, 3, 4, 1);
  expect_brute_force(Hmm::from_config(categorical(), data), data, 20, 2);
}

TEST(Hmm, CategoricalSeveralSequencesDirichletInitialMatchBruteForce) {
  const json data = words_data({6, 8, 1, 4}, 3, 5, 3);
  const auto m = Hmm::from_config(categorical({{"initial", "dirichlet"}}), data);
  ASSERT_EQ(m.num_sequences, 4);
  expect_brute_force(m, data, 20, 4);
}

TEST(Hmm, GaussianLikelihoodMatchesBruteForce) {
  const json data = gaussian_data({8}, 5);
  expect_brute_force(Hmm::from_config(gaussian(3), data), data, 20, 6);
  expect_brute_force(Hmm::from_config(gaussian(2, {{"sigma", 0.7}}), data), data, 20, 7);
}

TEST(Hmm, GaussianSeveralSequencesDirichletInitialMatchBruteForce) {
  const json data = gaussian_data({7, 3, 8}, 8);
  const auto m = Hmm::from_config(gaussian(3, {{"initial", "dirichlet"}}), data);
  ASSERT_EQ(m.num_sequences, 3);
  expect_brute_force(m, data, 20, 9);
}

TEST(Hmm, FarOutlierDoesNotUnderflow) {
  // y = 60 with sigma = 0.5 is ~120 sd from every mean near 0: exp(-7200) underflows,
  // the shifted emissions do not.
  const json data = {{"y", {0.1, -0.2, 60.0, 0.3}}};
  const auto m = Hmm::from_config(gaussian(2, {{"sigma", 0.5}}), data);
  const auto r = evaluate(m, {{-0.5, 0.0, 0.1, -0.3}});
  ASSERT_TRUE(std::isfinite(r(0, 0)));
  std::vector<double> x(m.num_params());
  for (int j = 0; j < m.num_params(); ++j) x[j] = r(0, 2 + j);
  const double bf = brute_force_log_likelihood(m, x, data);
  EXPECT_LT(bf, -6000.0);
  EXPECT_LE(std::abs(r(0, 0) - bf), 1e-12 * std::abs(bf)) << r(0, 0) << " vs " << bf;
}

TEST(Hmm, CategoricalGradientMatchesFiniteDifferences) {
  const json data = words_data({40, 25}, 3, 6, 10);
  expect_gradient_matches(Hmm::from_config(categorical(), data), 100, 2.0, 11);
}

TEST(Hmm, CategoricalDirichletInitialGradientMatchesFiniteDifferences) {
  const json data = words_data({30, 1, 12}, 4, 3, 12);
  const auto m = Hmm::from_config(
      categorical(
          {{"initial", "dirichlet"},
           {"priors",
            {{"transition_concentration", 2.5}, {"emission_concentration", 0.5}, {"initial_concentration", 0.3}}}}),
      data);
  expect_gradient_matches(m, 100, 2.0, 13);
}

TEST(Hmm, GaussianFreeSigmaGradientMatchesFiniteDifferences) {
  const json data = gaussian_data({50, 20}, 14);
  const auto m = Hmm::from_config(
      gaussian(3, {{"priors", {{"mu_loc", {-1.0, 0.0, 2.0}}, {"mu_scale", {1.0, 3.0, 2.0}}, {"sigma_scale", 2.0}}}}),
      data);
  ASSERT_TRUE(m.sigma_free);
  expect_gradient_matches(m, 100, 1.5, 15);
}

TEST(Hmm, GaussianFixedSigmaDirichletInitialGradientMatchesFiniteDifferences) {
  const json data = gaussian_data({60}, 16);
  const auto m = Hmm::from_config(gaussian(2, {{"sigma", 0.8}, {"initial", "dirichlet"}}), data);
  ASSERT_FALSE(m.sigma_free);
  expect_gradient_matches(m, 100, 2.0, 17);
}

TEST(Hmm, GaussianFreeSigmaDirichletInitialGradientMatchesFiniteDifferences) {
  const json data = gaussian_data({35, 35}, 18);
  const auto m = Hmm::from_config(gaussian(4, {{"initial", "dirichlet"}, {"priors", {{"mu_scale", {5.0}}}}}), data);
  expect_gradient_matches(m, 100, 1.5, 19);
}

/// log prior + log|J| at x(q), computed from the constrained values (Dirichlet, Normal,
/// half-normal densities without constants) and the transforms' own log|J|.
double host_log_prior(const Hmm& m, const std::vector<double>& q, const std::vector<double>& x, const json& priors) {
  const int K = m.num_states;
  std::vector<double> tmp(std::max(K, m.num_symbols));
  const Row tr{tmp.data(), 1};
  double lp = 0.0;
  const double at = priors.value("transition_concentration", 1.0), ae = priors.value("emission_concentration", 0.1);
  for (int i = 0; i < K; ++i) {
    lp += hmc::transform::simplex_forward(Row{const_cast<double*>(&q[i * (K - 1)]), 1}, tr, K);
    for (int j = 0; j < K; ++j) lp += (at - 1.0) * std::log(x[i * K + j]);
  }
  if (m.gaussian) {
    std::vector<double> mu(K);
    lp += hmc::transform::ordered_forward(Row{const_cast<double*>(&q[m.q_emission]), 1}, Row{mu.data(), 1}, K);
    const auto loc = priors.at("mu_loc").get<std::vector<double>>(),
               sc = priors.at("mu_scale").get<std::vector<double>>();
    for (int k = 0; k < K; ++k) lp += -0.5 * std::pow((x[K * K + k] - loc[k]) / sc[k], 2);
    if (m.sigma_free) {
      const double s = x[m.draw_sigma], ss = priors.at("sigma_scale").get<double>();
      lp += -0.5 * (s / ss) * (s / ss) + std::log(s);  // half-normal, and log|J| = log σ
    }
  } else {
    for (int k = 0; k < K; ++k) {
      lp += hmc::transform::simplex_forward(Row{const_cast<double*>(&q[m.q_emission + k * (m.num_symbols - 1)]), 1}, tr,
                                            m.num_symbols);
      for (int v = 0; v < m.num_symbols; ++v) lp += (ae - 1.0) * std::log(x[K * K + k * m.num_symbols + v]);
    }
  }
  if (m.initial_dirichlet) {
    const double ai = priors.value("initial_concentration", 1.0);
    lp += hmc::transform::simplex_forward(Row{const_cast<double*>(&q[m.q_initial]), 1}, tr, K);
    for (int k = 0; k < K; ++k) lp += (ai - 1.0) * std::log(x[m.draw_initial + k]);
  }
  return lp;
}

void expect_prior(const Hmm& m, const json& priors, unsigned seed) {
  const auto pts = random_points(10, m.dim(), 2.0, seed);
  const auto r = evaluate(m, pts);
  auto host = [&](int i) {
    std::vector<double> x(m.num_params());
    for (int j = 0; j < m.num_params(); ++j) x[j] = r(i, 2 + j);
    return host_log_prior(m, pts[i], x, priors);
  };
  // Differences between points: the dropped constants cancel.
  for (int i = 1; i < 10; ++i) {
    const double model_diff = (r(i, 1) - r(i, 0)) - (r(0, 1) - r(0, 0)), host_diff = host(i) - host(0);
    EXPECT_NEAR(model_diff, host_diff, 1e-9 * std::max(1.0, std::abs(host_diff))) << "point " << i;
  }
}

TEST(Hmm, PriorsAreDirichletNormalHalfNormal) {
  const json cp = {{"transition_concentration", 2.0}, {"emission_concentration", 0.1}, {"initial_concentration", 3.0}};
  expect_prior(Hmm::from_config(categorical({{"initial", "dirichlet"}, {"priors", cp}}), words_data({5}, 3, 4, 20)), cp,
               21);
  const json gp = {{"mu_loc", {-1.0, 0.5, 3.0}}, {"mu_scale", {2.0, 1.0, 4.0}}, {"sigma_scale", 1.5}};
  expect_prior(Hmm::from_config(gaussian(3, {{"priors", gp}}), gaussian_data({5}, 22)), gp, 23);
}

TEST(Hmm, TransformsRoundTrip) {
  const std::vector<Hmm> models = {Hmm::from_config(categorical({{"initial", "dirichlet"}}), words_data({5}, 3, 7, 24)),
                                   Hmm::from_config(gaussian(3, {{"initial", "dirichlet"}}), gaussian_data({5}, 25)),
                                   Hmm::from_config(gaussian(2, {{"sigma", 1.0}}), gaussian_data({5}, 26))};
  for (const auto& m : models) {
    const auto pts = random_points(20, m.dim(), 3.0, 27);
    const auto r = evaluate(m, pts);
    for (int i = 0; i < 20; ++i) {
      std::vector<double> x(m.num_params());
      for (int j = 0; j < m.num_params(); ++j) x[j] = r(i, 2 + j);
      const auto back = m.unconstrain(x);
      ASSERT_EQ(static_cast<int>(back.size()), m.dim());
      for (int j = 0; j < m.dim(); ++j) EXPECT_NEAR(back[j], pts[i][j], 1e-9) << "point " << i << " coordinate " << j;
      // Rows of the transition matrix are simplexes; means are increasing.
      for (int a = 0; a < m.num_states; ++a) {
        double sum = 0.0;
        for (int b = 0; b < m.num_states; ++b) sum += x[a * m.num_states + b];
        EXPECT_NEAR(sum, 1.0, 1e-12);
      }
      if (m.gaussian) {
        for (int k = 1; k < m.num_states; ++k) EXPECT_GT(x[m.draw_emission + k], x[m.draw_emission + k - 1]);
      }
    }
  }
}

TEST(Hmm, StandardWordsData) {
  std::ifstream in(std::string(HMC_SOURCE_DIR) + "/configs/data/hmm_words_k3_v10_t2000.json");
  ASSERT_TRUE(in);
  const json data = json::parse(in);
  const auto m = Hmm::from_config(categorical(), data);
  EXPECT_EQ(m.num_states, 3);
  EXPECT_EQ(m.num_symbols, 10);
  EXPECT_EQ(m.num_observations, 2000);
  EXPECT_EQ(m.dim(), 3 * 2 + 3 * 9);
  EXPECT_EQ(m.num_params(), 9 + 30);
  const auto names = m.parameter_names();
  ASSERT_EQ(static_cast<int>(names.size()), m.num_params());
  EXPECT_EQ(names[1], "transition[1,2]");
  EXPECT_EQ(names[9], "emission[1,1]");
  EXPECT_EQ(names.back(), "emission[3,10]");
  EXPECT_NE(m.note().find("label"), std::string::npos);
  // The config's num_states overrides the data's.
  EXPECT_EQ(Hmm::from_config(categorical({{"num_states", 2}}), data).num_states, 2);
  // At q = 0 every emission row is uniform, so log L = 2000 log(1/10) exactly whatever A.
  const auto r = evaluate(m, {std::vector<double>(m.dim(), 0.0)});
  EXPECT_NEAR(r(0, 0), 2000.0 * std::log(0.1), 1e-9);
}

/// log L by the forward algorithm in log space (log-sum-exp at every step), on the host.
double log_space_forward(const Hmm& m, const std::vector<double>& x, const std::vector<int>& words) {
  const int K = m.num_states;
  std::vector<double> la(K), next(K);
  for (int k = 0; k < K; ++k) la[k] = std::log(1.0 / K) + std::log(x[K * K + k * m.num_symbols + words[0]]);
  for (std::size_t t = 1; t < words.size(); ++t) {
    for (int j = 0; j < K; ++j) {
      double top = -INFINITY;
      for (int i = 0; i < K; ++i) top = std::max(top, la[i] + std::log(x[i * K + j]));
      double sum = 0.0;
      for (int i = 0; i < K; ++i) sum += std::exp(la[i] + std::log(x[i * K + j]) - top);
      next[j] = top + std::log(sum) + std::log(x[K * K + j * m.num_symbols + words[t]]);
    }
    la = next;
  }
  const double top = *std::max_element(la.begin(), la.end());
  double sum = 0.0;
  for (double v : la) sum += std::exp(v - top);
  return top + std::log(sum);
}

TEST(Hmm, LongSequenceMatchesLogSpaceForward) {
  // T = 2000: the scaled pass multiplies the c_t up and takes logs only now and then.
  std::ifstream in(std::string(HMC_SOURCE_DIR) + "/configs/data/hmm_words_k3_v10_t2000.json");
  ASSERT_TRUE(in);
  const json data = json::parse(in);
  const auto m = Hmm::from_config(categorical(), data);
  const auto words = data.at("words").get<std::vector<int>>();
  const auto pts = random_points(5, m.dim(), 3.0, 29);
  const auto r = evaluate(m, pts);
  for (int i = 0; i < 5; ++i) {
    std::vector<double> x(m.num_params());
    for (int j = 0; j < m.num_params(); ++j) x[j] = r(i, 2 + j);
    const double ref = log_space_forward(m, x, words);
    EXPECT_LE(std::abs(r(i, 0) - ref), 1e-11 * std::abs(ref)) << "point " << i << ": " << r(i, 0) << " vs " << ref;
  }
  expect_gradient_matches(m, 4, 2.0, 30);
}

/// The lane gradient (8 particles, checkpointed backward pass) against the scalar one,
/// lane by lane: bitwise for categorical emissions, within `tol` relative for gaussian
/// ones (vector exp). Lane 7 is pushed far out (q x 300), where probabilities underflow.
/// With segment > 0, the backward pass recomputes segments of that many steps from
/// checkpoints.
void expect_lanes_match_scalar(Hmm m, double tol, unsigned seed, int segment = 0) {
  if constexpr (!hmc::sampler::kHostExecution) {
    GTEST_SKIP() << "the lane kernel runs on the host only";
  } else {
    if (segment > 0) {
      std::vector<int> offsets(m.num_sequences + 1);
      for (int s = 0; s <= m.num_sequences; ++s) offsets[s] = m.sequence_offsets(s);
      m.set_lane_segment(segment, offsets);
      ASSERT_EQ(m.lane_segment_steps, segment);
    }
    ASSERT_TRUE(hmc::sampler::lanes_available<Hmm>());
    constexpr int W = hmc::kLanes;
    const int d = m.dim();
    SCOPED_TRACE("K " + std::to_string(m.num_states) + ", N " + std::to_string(m.num_observations) + ", S " +
                 std::to_string(m.num_sequences) + ", segment " + std::to_string(m.lane_segment_steps));
    auto pts = random_points(W, d, 2.0, seed);
    for (double& v : pts[W - 1]) v *= 300.0;
    std::vector<hmc::Pack> q(d), g(d);
    for (int l = 0; l < W; ++l)
      for (int j = 0; j < d; ++j) q[j][l] = pts[l][j];
    // Twice on the same scratch: the second call must not depend on what the first left.
    hmc::Pack* scratch = hmc::sampler::lane_scratch(m.lane_scratch_size());
    hmc::Pack lp = m.log_density_gradient_lanes(hmc::PackRow{q.data()}, hmc::PackRow{g.data()}, scratch);
    lp = m.log_density_gradient_lanes(hmc::PackRow{q.data()}, hmc::PackRow{g.data()}, scratch);
    std::vector<double> work(m.scratch_size()), grad(d);
    int finite = 0;
    for (int l = 0; l < W; ++l) {
      const double ref = m.log_density_gradient(Row{pts[l].data(), 1}, Row{grad.data(), 1}, Row{work.data(), 1});
      if (!std::isfinite(ref)) {
        EXPECT_EQ(lp[l], ref) << "lane " << l;
        continue;
      }
      ++finite;
      auto close = [&](double a, double b) {
        return tol == 0.0 ? a == b : std::abs(a - b) <= tol * std::abs(b) + 1e-300;
      };
      EXPECT_TRUE(close(lp[l], ref)) << "lane " << l << ": " << lp[l] << " vs " << ref;
      for (int j = 0; j < d; ++j)
        EXPECT_TRUE(close(g[j][l], grad[j]) || std::abs(g[j][l] - grad[j]) <= tol * 1e-3)
            << "lane " << l << " coordinate " << j << ": " << g[j][l] << " vs " << grad[j];
    }
    EXPECT_GE(finite, W - 1);
  }
}

TEST(Hmm, LaneGradientMatchesScalarCategorical) {
  // Several sequences (one of length 1), segment boundaries inside and at their ends,
  // K unrolled (2, 3, 5) and not (7).
  expect_lanes_match_scalar(Hmm::from_config(categorical(), words_data({300}, 2, 3, 41)), 0.0, 42);
  expect_lanes_match_scalar(Hmm::from_config(categorical(), words_data({1, 57, 200, 130}, 3, 4, 43)), 0.0, 44);
  expect_lanes_match_scalar(Hmm::from_config(categorical({{"initial", "dirichlet"}}), words_data({500, 3}, 5, 6, 45)),
                            0.0, 46);
  expect_lanes_match_scalar(Hmm::from_config(categorical(), words_data({120, 90}, 7, 4, 47)), 0.0, 48);
  // Checkpointed: segments of 1, 7 and 64 steps (the last shorter, some sequences shorter than one).
  for (int segment : {1, 7, 64}) {
    expect_lanes_match_scalar(Hmm::from_config(categorical(), words_data({1, 57, 200, 130}, 3, 4, 43)), 0.0, 44,
                              segment);
    expect_lanes_match_scalar(Hmm::from_config(categorical({{"initial", "dirichlet"}}), words_data({500, 3}, 5, 6, 45)),
                              0.0, 46, segment);
  }
  std::ifstream in(std::string(HMC_SOURCE_DIR) + "/configs/data/hmm_words_k3_v10_t2000.json");
  ASSERT_TRUE(in);
  expect_lanes_match_scalar(Hmm::from_config(categorical(), json::parse(in)), 0.0, 49);
}

TEST(Hmm, LaneGradientMatchesScalarGaussian) {
  expect_lanes_match_scalar(Hmm::from_config(gaussian(3, {{"initial", "dirichlet"}}), gaussian_data({400, 77}, 51)),
                            1e-12, 52);
  expect_lanes_match_scalar(Hmm::from_config(gaussian(5, {{"sigma", 0.7}}), gaussian_data({250}, 53)), 1e-12, 54);
  expect_lanes_match_scalar(Hmm::from_config(gaussian(8), gaussian_data({60, 1, 33}, 55)), 1e-12, 56);
  expect_lanes_match_scalar(Hmm::from_config(gaussian(3, {{"initial", "dirichlet"}}), gaussian_data({400, 77}, 51)),
                            1e-12, 52, 9);
}

TEST(Hmm, GaussianNamesAndNote) {
  const auto m = Hmm::from_config(gaussian(2, {{"initial", "dirichlet"}}), gaussian_data({5}, 28));
  EXPECT_EQ(m.parameter_names(),
            (std::vector<std::string>{"transition[1,1]", "transition[1,2]", "transition[2,1]", "transition[2,2]",
                                      "mu[1]", "mu[2]", "sigma", "initial[1]", "initial[2]"}));
  EXPECT_EQ(m.dim(), 2 + 2 + 1 + 1);
  EXPECT_EQ(m.note(), "");
}

TEST(Hmm, DescriptionTakesItsDefaultsFromTheKeys) {
  using hmc::models::read_hmm;
  const auto keys = hmc::models::hmm_config_keys();
  const auto default_of = [&](const std::string& pointer) {
    const auto* k = hmc::keys::find(keys, pointer);
    EXPECT_NE(k, nullptr) << pointer;
    return k ? k->default_value.get<double>() : std::nan("");
  };
  const auto h = read_hmm(gaussian(3), {{"y", {{0.5, 1.0}, {2.0}}}});
  EXPECT_EQ(h.num_states, 3);
  EXPECT_TRUE(h.gaussian);
  EXPECT_TRUE(h.sigma_free);
  EXPECT_FALSE(h.initial_dirichlet);
  EXPECT_EQ(h.transition_concentration, default_of("/model/priors/transition_concentration"));
  EXPECT_EQ(h.emission_concentration, default_of("/model/priors/emission_concentration"));
  EXPECT_EQ(h.initial_concentration, default_of("/model/priors/initial_concentration"));
  EXPECT_EQ(h.sigma_scale, default_of("/model/priors/sigma_scale"));
  EXPECT_EQ(h.mu_loc, std::vector<double>(3, hmc::models::kHmmMuLocDefault));
  EXPECT_EQ(h.mu_scale, std::vector<double>(3, hmc::models::kHmmMuScaleDefault));
  EXPECT_EQ(h.sequence_offsets, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(h.observations, (std::vector<double>{0.5, 1.0, 2.0}));
  EXPECT_TRUE(h.symbols.empty());

  // Given values; one per-state entry stands for every state.
  const auto g = read_hmm(
      gaussian(2, {{"sigma", 0.7},
                   {"initial", "dirichlet"},
                   {"priors", {{"mu_scale", {3.0}}, {"mu_loc", {-1.0, 2.0}}, {"transition_concentration", 2.5}}}}),
      {{"y", {1.0}}});
  EXPECT_FALSE(g.sigma_free);
  EXPECT_EQ(g.sigma_fixed, 0.7);
  EXPECT_TRUE(g.initial_dirichlet);
  EXPECT_EQ(g.mu_scale, (std::vector<double>{3.0, 3.0}));
  EXPECT_EQ(g.mu_loc, (std::vector<double>{-1.0, 2.0}));
  EXPECT_EQ(g.transition_concentration, 2.5);

  // Categorical: the symbols of every sequence; without num_words, V is the largest + 1.
  const auto c = read_hmm(categorical(), {{"num_states", 2}, {"words", {{0, 4}, {2}}}});
  EXPECT_EQ(c.num_states, 2);
  EXPECT_EQ(c.num_symbols, 5);
  EXPECT_EQ(c.symbols, (std::vector<int>{0, 4, 2}));
  EXPECT_EQ(c.sequence_offsets, (std::vector<int>{0, 2, 3}));
  EXPECT_TRUE(c.mu_loc.empty());
  EXPECT_TRUE(c.observations.empty());
  // The config's num_states overrides the data's.
  EXPECT_EQ(read_hmm(categorical({{"num_states", 4}}), {{"num_states", 2}, {"words", {0, 1}}}).num_states, 4);
}

template <class Error>
void expect_error(const json& model, const json& data, const std::string& needle) {
  try {
    (void)Hmm::from_config(model, data);
    FAIL() << "no error for " << needle;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(Hmm, RejectsBadData) {
  using hmc::DataError;
  expect_error<DataError>(categorical(), nullptr, "needs data");
  expect_error<DataError>(categorical(), {{"num_states", 2}}, "/words");
  expect_error<DataError>(categorical(), {{"num_states", 2}, {"num_words", 3}, {"words", {0, 1, 3}}}, "/words/2");
  expect_error<DataError>(categorical(), {{"num_states", 2}, {"num_words", 3}, {"words", {{0, 1}, {2, -1}}}},
                          "/words/1/1");
  expect_error<DataError>(categorical(), {{"num_states", 2}, {"num_words", 3}, {"words", {0, 1.5}}}, "/words/1");
  expect_error<DataError>(categorical(), {{"num_states", 2}, {"num_words", 3}, {"words", {{0, 1}, json::array()}}},
                          "/words/1 is empty");
  expect_error<DataError>(categorical(), {{"num_states", 2}, {"words", json::array()}}, "/words");
  expect_error<DataError>(categorical(), {{"num_words", 3}, {"words", {0, 1}}}, "num_states");
  expect_error<DataError>(categorical(), {{"num_states", 40}, {"words", {0, 1}}}, "/num_states");
  expect_error<DataError>(categorical(), {{"num_states", 2}, {"num_words", 1}, {"words", {0}}}, "/num_words");
  expect_error<DataError>(gaussian(2), {{"y", {1.0, "a"}}}, "/y/1");
  expect_error<DataError>(gaussian(2), {{"y", {{1.0}, {2.0, json::array()}}}}, "/y/1/1");
  expect_error<DataError>(gaussian(2), {{"words", {1}}}, "/y");
}

TEST(Hmm, RejectsBadConfig) {
  using hmc::ConfigError;
  const json y = {{"y", {1.0, 2.0}}};
  expect_error<ConfigError>({{"emission", "gaussian"}}, y, "/model/num_states");
  expect_error<ConfigError>(gaussian(17), y, "/model/num_states");
  expect_error<ConfigError>(gaussian(3, {{"priors", {{"mu_loc", {1.0, 2.0}}}}}), y, "/model/priors/mu_loc");
  expect_error<ConfigError>(gaussian(2, {{"priors", {{"mu_scale", {1.0, 0.0}}}}}), y, "/model/priors/mu_scale");
  expect_error<ConfigError>(categorical({{"sigma", 1.0}}), words_data({3}, 2, 3, 1), "/model/sigma");
  expect_error<ConfigError>(categorical({{"priors", {{"mu_loc", {1.0}}}}}), words_data({3}, 2, 3, 1),
                            "/model/priors/mu_loc");
  expect_error<ConfigError>({{"emission", "poisson"}}, words_data({3}, 2, 3, 1), "/model/emission");
  expect_error<ConfigError>(categorical({{"initial", "first"}}), words_data({3}, 2, 3, 1), "/model/initial");
}

}  // namespace
