// Philox-4x32-10 against Random123's published known-answer vectors, and the
// uniform / normal draws against a chi-squared goodness-of-fit test.
#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/sampler/lanes.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

using hmc::rng::Philox4x32;

struct Kat {
  Philox4x32 ctr;
  std::uint32_t k0, k1;
  Philox4x32 expected;
};

// Random123 tests/kat_vectors, "philox4x32 10" lines: counter[4] key[2] -> output[4].
const Kat kKats[] = {
    {{{0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u}},
     0x00000000u,
     0x00000000u,
     {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
    {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
     0xffffffffu,
     0xffffffffu,
     {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
    {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
     0xa4093822u,
     0x299f31d0u,
     {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
};

TEST(Philox, KnownAnswersHost) {
  for (const auto& k : kKats) {
    const Philox4x32 out = hmc::rng::philox4x32_10(k.ctr, k.k0, k.k1);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(out.v[w], k.expected.v[w]) << "word " << w;
  }
}

void philox_on_device(const Kokkos::View<std::uint32_t* [6]>& in, const Kokkos::View<std::uint32_t* [4]>& out) {
  Kokkos::parallel_for(
      "test::philox", Kokkos::RangePolicy<hmc::ExecSpace>(0, 3), KOKKOS_LAMBDA(const int i) {
        const auto r =
            hmc::rng::philox4x32_10(Philox4x32{{in(i, 0), in(i, 1), in(i, 2), in(i, 3)}}, in(i, 4), in(i, 5));
        for (int w = 0; w < 4; ++w) out(i, w) = r.v[w];
      });
}

TEST(Philox, KnownAnswersDevice) {
  Kokkos::View<std::uint32_t* [4]> out("out", 3);
  Kokkos::View<std::uint32_t* [6]> in("in", 3);
  auto h_in = Kokkos::create_mirror_view(in);
  for (int i = 0; i < 3; ++i) {
    for (int w = 0; w < 4; ++w) h_in(i, w) = kKats[i].ctr.v[w];
    h_in(i, 4) = kKats[i].k0;
    h_in(i, 5) = kKats[i].k1;
  }
  Kokkos::deep_copy(in, h_in);
  philox_on_device(in, out);
  auto h_out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  for (int i = 0; i < 3; ++i)
    for (int w = 0; w < 4; ++w) EXPECT_EQ(h_out(i, w), kKats[i].expected.v[w]) << "vector " << i << " word " << w;
}

// Upper 0.1% point of chi-squared with `df` degrees of freedom (Wilson-Hilferty).
double chi2_critical_001(double df) {
  const double z = 3.090232306167813;  // standard normal 99.9% quantile
  const double c = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - c + z * std::sqrt(c), 3.0);
}

double chi2_statistic(const std::vector<long>& counts, double expected) {
  double chi2 = 0.0;
  for (long c : counts) chi2 += (c - expected) * (c - expected) / expected;
  return chi2;
}

// Draws from many particle streams and iterations on the device, as the sampler does.
Kokkos::View<double*, Kokkos::HostSpace> draw(bool normal, int n_pairs) {
  Kokkos::View<double*> v("draws", 2 * n_pairs);
  Kokkos::parallel_for(
      "test::draw", Kokkos::RangePolicy<hmc::ExecSpace>(0, n_pairs), KOKKOS_LAMBDA(const int i) {
        // 1000 particles x many iterations x 2 uses: exercises every counter word.
        const hmc::rng::ParticleStream s(12345u, static_cast<std::uint64_t>(i % 1000));
        const auto it = static_cast<std::uint32_t>(i / 2000), use = static_cast<std::uint32_t>((i / 1000) % 2);
        double a, b;
        if (normal)
          s.normal2(it, use, a, b);
        else
          s.uniform2(it, use, a, b);
        v(2 * i) = a;
        v(2 * i + 1) = b;
      });
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
}

TEST(Philox, UniformChiSquared) {
  const int bins = 100, pairs = 100000;
  const auto u = draw(false, pairs);
  std::vector<long> counts(bins, 0);
  for (std::size_t i = 0; i < u.extent(0); ++i) {
    ASSERT_GE(u(i), 0.0);
    ASSERT_LT(u(i), 1.0);
    ++counts[static_cast<int>(u(i) * bins)];
  }
  const double chi2 = chi2_statistic(counts, 2.0 * pairs / bins);
  EXPECT_LT(chi2, chi2_critical_001(bins - 1)) << "uniform draws fail chi-squared";
  EXPECT_GT(chi2, 40.0) << "suspiciously perfect fit";  // lower 1e-12 tail: not random
}

TEST(Philox, NormalChiSquared) {
  const int bins = 100, pairs = 100000;
  const auto z = draw(true, pairs);
  std::vector<long> counts(bins, 0);
  double sum = 0.0, sum2 = 0.0;
  for (std::size_t i = 0; i < z.extent(0); ++i) {
    ASSERT_TRUE(std::isfinite(z(i)));
    const double cdf = 0.5 * std::erfc(-z(i) / std::sqrt(2.0));  // equiprobable bins
    ++counts[std::min(bins - 1, static_cast<int>(cdf * bins))];
    sum += z(i);
    sum2 += z(i) * z(i);
  }
  const double n = static_cast<double>(z.extent(0));
  const double chi2 = chi2_statistic(counts, n / bins);
  EXPECT_LT(chi2, chi2_critical_001(bins - 1)) << "normal draws fail chi-squared";
  EXPECT_NEAR(sum / n, 0.0, 5.0 / std::sqrt(n));
  EXPECT_NEAR(sum2 / n, 1.0, 5.0 * std::sqrt(2.0 / n));
}

TEST(Philox, StreamsDifferByParticleIterationAndUse) {
  const hmc::rng::ParticleStream a(7, 0), b(7, 1), c(8, 0);
  const auto x = a.bits(1, 0);
  EXPECT_NE(x.v[0], b.bits(1, 0).v[0]);
  EXPECT_NE(x.v[0], c.bits(1, 0).v[0]);
  EXPECT_NE(x.v[0], a.bits(2, 0).v[0]);
  EXPECT_NE(x.v[0], a.bits(1, 1).v[0]);
  // ... and are a pure function of (seed, particle, iteration, use).
  EXPECT_EQ(x.v[3], hmc::rng::ParticleStream(7, 0).bits(1, 0).v[3]);
}

// The lane kernel's vector Philox (sampler/lanes.hpp) gives every lane the bits of its
// stream's scalar uniform2: seeds and particle ids with high words, uses across the
// table (momenta, NUTS leaves and doublings, jitter, accept), iterations up to 2^32 - 1.
TEST(Philox, LaneUniformsAreTheScalarOnes) {
  const std::uint64_t seeds[] = {0u, 1u, 20261130u, 0xFFFFFFFFFFFFFFFFull, 0x123456789ABCDEFull};
  const std::uint32_t iterations[] = {0u, 1u, 777u, 0xFFFFFFFFu};
  const std::uint32_t uses[] = {0u, 1u, 49u, 0x80000000u, 0x80000011u, 0xFFFF0003u, 0xFFFFFFFEu, 0xFFFFFFFFu};
  int checked = 0;
  for (std::uint64_t seed : seeds) {
    for (std::uint32_t it : iterations) {
      hmc::rng::ParticleStream streams[hmc::kLanes];
      std::uint32_t use[hmc::kLanes];
      for (int l = 0; l < hmc::kLanes; ++l) {
        streams[l] = hmc::rng::ParticleStream(seed, (0x100000000ull * l) ^ (12345ull * l + seed % 1000));
        use[l] = uses[(l + it) % 8];
      }
      hmc::Pack u0, u1;
      hmc::sampler::lane_uniform2(streams, it, use, u0, u1);
      for (int l = 0; l < hmc::kLanes; ++l) {
        double a, b;
        streams[l].uniform2(it, use[l], a, b);
        EXPECT_EQ(u0[l], a) << "seed " << seed << " iteration " << it << " lane " << l;
        EXPECT_EQ(u1[l], b) << "seed " << seed << " iteration " << it << " lane " << l;
        ++checked;
      }
      hmc::sampler::lane_uniform2(streams, it, uses[it % 8], u0, u1);  // one use for all lanes
      for (int l = 0; l < hmc::kLanes; ++l) {
        double a, b;
        streams[l].uniform2(it, uses[it % 8], a, b);
        EXPECT_EQ(u0[l], a);
        EXPECT_EQ(u1[l], b);
      }
    }
  }
  EXPECT_EQ(checked, 5 * 4 * hmc::kLanes);
}

}  // namespace
