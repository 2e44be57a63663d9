// No allocation inside the sampling loop: the tapes of automatic gradients (the particles'
// scratch rows, each host thread's lane tape) are allocated before sampling. Counted through
// Kokkos' tool callback for View allocations and a counting global operator new (the lane
// tapes are std::vectors), over sampling iterations of route-(a) models, on the one-particle
// path (reverse mode in the scratch row) and on the lane path (a tape per thread).
#include "eight_schools.hpp"
#include "hmc/sampler/mams_kernel.hpp"
#include "hmc/sampler/nuts_kernel.hpp"
#include "hmc/sampler/run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

// The replacements below pair malloc with free, which GCC cannot see through its own
// inlining of operator new and delete.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {

std::atomic<bool> g_counting{false};
std::atomic<std::uint64_t> g_news{0};
std::uint64_t g_views = 0;

void count_view(Kokkos::Profiling::SpaceHandle, const char*, const void*, std::uint64_t) { ++g_views; }

}  // namespace

// Every operator new of the process goes through here; it counts while g_counting is set.
void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {  // over-aligned types (Pack)
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1, std::memory_order_relaxed);
  const std::size_t align = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
// The nothrow forms (std::stable_sort's temporary buffer asks for one) must come from the
// same malloc, or a sanitizer build sees the library's new freed by the free below.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1, std::memory_order_relaxed);
  const std::size_t align = static_cast<std::size_t>(a);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

struct Allocations {
  std::uint64_t views = 0, news = 0;
};

hmc::models::EightSchools eight_schools() {
  auto m = hmc::models::EightSchools::from_config(
      nlohmann::json::object(), {{"y", {28, 8, -3, 7, -1, 1, 18, 12}}, {"sigma", {15, 10, 16, 11, 9, 11, 10, 18}}});
  hmc::model::plan(m, 256, 2);  // what a run does: sizes the tape
  return m;
}

/// Allocations of sampling iterations after the first (which allocates the draw buffer):
/// `iterations` counting operator new, then `iterations` counting Views (Kokkos' tool
/// callback, which allocates names of its own while it is set: the two counts are taken
/// apart). And operator new of every host thread asking for its lane tape after the
/// sampler is built (none: the tapes are reserved before sampling).
template <class Kernel>
std::pair<Allocations, std::uint64_t> count(const hmc::models::EightSchools& m, int iterations) {
  hmc::sampler::Settings s;
  s.particles = 256;
  s.warmup = 0;
  s.draws = 2 * iterations + 1;
  s.block_draws = 2 * iterations + 1;
  s.leapfrog_steps = 5;
  s.step_size = 0.1;
  s.adapt.enabled = false;
  hmc::sampler::EnsembleSampler<hmc::models::EightSchools, Kernel> sampler(m, s, 0, s.particles);
  EXPECT_EQ(sampler.initialise(), 0);
  Kokkos::fence();
  const int packs = m.lane_scratch_size();
  g_news = 0;
  g_counting = true;
  Kokkos::parallel_for("lanes", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, 4096),
                       [packs](int) { (void)hmc::sampler::lane_scratch(packs); });
  Kokkos::fence();
  g_counting = false;
  const std::uint64_t lane_news = g_news;
  sampler.iterate();
  Kokkos::fence();
  Allocations a;
  g_news = 0;
  g_counting = true;
  for (int it = 0; it < iterations; ++it) sampler.iterate();
  Kokkos::fence();
  g_counting = false;
  a.news = g_news;
  g_views = 0;
  Kokkos::Tools::Experimental::set_allocate_data_callback(count_view);
  for (int it = 0; it < iterations; ++it) sampler.iterate();
  Kokkos::fence();
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  a.views = g_views;
  return {a, lane_news};
}

TEST(Allocations, SamplingLoopOfAnAutomaticGradientAllocatesNothing) {
  const auto m = eight_schools();
  ASSERT_GT(m.tape_layout.nodes, 0);
  ASSERT_GT(m.scratch_size(), 0);          // D = 10: reverse mode in the scratch row
  for (const char* scalar : {"1", "0"}) {  // the one-particle path, then the lanes
    SCOPED_TRACE(std::string("HMC_SCALAR_TRANSITION=") + scalar);
    setenv("HMC_SCALAR_TRANSITION", scalar, 1);
    const auto hmc = count<hmc::sampler::HmcKernel<hmc::models::EightSchools>>(m, 4);
    EXPECT_EQ(hmc.first.views, 0u);
    EXPECT_EQ(hmc.first.news, 0u);
    EXPECT_EQ(hmc.second, 0u);
    const auto nuts = count<hmc::sampler::NutsKernel<hmc::models::EightSchools>>(m, 4);
    EXPECT_EQ(nuts.first.views, 0u);
    EXPECT_EQ(nuts.first.news, 0u);
    EXPECT_EQ(nuts.second, 0u);
    const auto mams = count<hmc::sampler::MamsKernel<hmc::models::EightSchools>>(m, 4);
    EXPECT_EQ(mams.first.views, 0u);
    EXPECT_EQ(mams.first.news, 0u);
    EXPECT_EQ(mams.second, 0u);
  }
  unsetenv("HMC_SCALAR_TRANSITION");
}

/// The counters count: a View and a std::vector made while counting are seen.
TEST(Allocations, TheCountersSeeAllocations) {
  g_views = 0;
  g_news = 0;
  Kokkos::Tools::Experimental::set_allocate_data_callback(count_view);
  g_counting = true;
  {
    hmc::VectorView v("hmc::test_view", 10);
    std::vector<double> w(10);
    (void)w;
  }
  g_counting = false;
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  EXPECT_EQ(g_views, 1u);
  EXPECT_GE(g_news, 1u);
}

}  // namespace
