// A transition kernel that lacks one required member must fail to compile with exactly
// one message, naming that member (sampler/kernel.hpp). Compiled by the ctest cases of
// tests/compile/CMakeLists.txt, once complete (HMC_DROP undefined: must compile) and
// once per dropped member; check_compile.sh reads the compiler's output.
#include "hmc/sampler/kernel.hpp"
#include "hmc/sampler/run.hpp"

#include <vector>

#ifndef HMC_DROP
#define HMC_DROP 0
#endif

namespace {

using hmc::Row;

struct Normal {
  int dim() const { return 1; }
  int num_params() const { return 1; }
  std::vector<std::string> parameter_names() const { return {"x"}; }
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const { return -0.5 * q(0) * q(0); }
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& grad) const {
    grad(0) = -q(0);
    return log_density(q);
  }
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const { out(0) = q(0); }
};

/// Stays where it is: every member of the concept, unless HMC_DROP names it.
template <class Model>
struct StayKernel {
#if HMC_DROP != 2
  static constexpr const char* name = "stay";
#endif
#if HMC_DROP != 3
  static std::vector<hmc::StatColumn> stat_columns() { return {{"lp", hmc::StatType::kReal, false}}; }
#endif
#if HMC_DROP != 1  // without Settings, nothing that names it
  struct Settings {};
#if HMC_DROP != 4
  static int scratch_size(int, const Settings&) { return 0; }
#endif
  static Settings settings(const hmc::sampler::Settings&) { return Settings{}; }
  StayKernel(const Model& m, const Settings&, const hmc::StateView&) : model(m) {}
#endif
  Model model;
#if HMC_DROP != 5
  hmc::sampler::Step step;
#endif
#if HMC_DROP != 6
  KOKKOS_INLINE_FUNCTION void operator()(int) const {}
#endif
};

}  // namespace

// The sampler loop takes a kernel that passes the check (a failing one stops at its
// message: the loop is in the discarded branch of a template).
template <class Kernel>
int run_stay() {
  if constexpr (hmc::sampler::check_kernel<Kernel, Normal>()) {
    hmc::sampler::Settings s;
    s.particles = 8;
    s.warmup = 2;
    s.draws = 2;
    hmc::sampler::EnsembleSampler<Normal, Kernel> ensemble(Normal{}, s, 0, s.particles);
    ensemble.initialise();
    while (!ensemble.done()) ensemble.iterate();
    return ensemble.iteration();
  } else {
    return -1;
  }
}

template int run_stay<StayKernel<Normal>>();
