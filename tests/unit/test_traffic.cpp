// Host <-> device traffic of the sampling loop: every Kokkos::deep_copy of a warmup
// iteration, counted through Kokkos' tool callbacks. A warmup iteration copies the reduced
// ensemble sums and nothing that grows with the particles (docs/gpu.md#traffic).
#include "harmonic_oscillator.hpp"
#include "hmc/sampler/run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace {

std::uint64_t g_copies = 0, g_bytes = 0;

void count_copy(Kokkos_Profiling_SpaceHandle, const char*, const void*, Kokkos_Profiling_SpaceHandle, const char*,
                const void*, std::uint64_t bytes) {
  ++g_copies;
  g_bytes += bytes;
}

struct Traffic {
  std::uint64_t copies = 0, bytes = 0;
};

/// The deep copies of warmup iterations 2..9 (after the loop's buffers exist), per iteration,
/// for n particles of a 10-dimensional Gaussian with the shipped adaptation (ChEES, diagonal metric).
Traffic warmup_traffic(int n) {
  std::vector<double> k(10);
  for (int i = 0; i < 10; ++i) k[i] = 1.0 + i;
  const auto m =
      hmc::models::HarmonicOscillator::from_config({{"name", "harmonic_oscillator"}, {"spring_constants", k}}, nullptr);
  hmc::sampler::Settings s;
  s.particles = n;
  s.warmup = 50;
  s.draws = 10;
  s.leapfrog_steps = 3;
  hmc::sampler::EnsembleSampler<hmc::models::HarmonicOscillator> sampler(m, s, 0, n);
  EXPECT_EQ(sampler.initialise(), 0);
  sampler.iterate();
  Kokkos::fence();
  g_copies = g_bytes = 0;
  Kokkos::Tools::Experimental::set_begin_deep_copy_callback(count_copy);
  constexpr int kIterations = 8;
  for (int it = 0; it < kIterations; ++it) sampler.iterate();
  Kokkos::fence();
  Kokkos::Tools::Experimental::set_begin_deep_copy_callback(nullptr);
  return {g_copies / kIterations, g_bytes / kIterations};
}

TEST(Traffic, WarmupIterationCopiesOnlyTheReducedSums) {
  const Traffic small = warmup_traffic(64), large = warmup_traffic(4096);
  // The same copies whatever the particles: two reductions (the warmup's 4 columns: w·a, w,
  // ChEES's two; the centre's 10: every particle healthy, so the plain mean), each copying
  // its maxima, scales and integer sums (buffers as wide as the widest reduction, 10 values
  // of 8 bytes), and the centre itself back to the device.
  EXPECT_EQ(small.copies, large.copies);
  EXPECT_EQ(small.bytes, large.bytes);
  EXPECT_EQ(small.copies, 7u);
  EXPECT_EQ(small.bytes, 2u * 3u * 8u * 10u + 8u * 10u);
  std::printf("warmup iteration: %llu deep copies, %llu bytes (64 and 4,096 particles alike)\n",
              static_cast<unsigned long long>(small.copies), static_cast<unsigned long long>(small.bytes));
}

}  // namespace
