#pragma once
/// \file
/// \brief The transition kernels hmc ships, by /sampler/algorithm: one list, which the
/// services dispatch on (services/sample.hpp) and ask for a kernel's columns and
/// scratch without building one.

#include "hmc/core/modes.hpp"
#include "hmc/sampler/hmc_kernel.hpp"
#include "hmc/sampler/kernel.hpp"
#include "hmc/sampler/mams_kernel.hpp"
#include "hmc/sampler/nuts_kernel.hpp"
#include "hmc/sampler/settings.hpp"

#include <type_traits>

namespace hmc::sampler {

/// A kernel template as a value, for visit_kernel's callback.
template <template <class> class K>
struct KernelTag {
  template <class Model>
  using type = K<Model>;
};

/// \brief Calls f(KernelTag<K>{}) for the kernel of `algorithm`; returns what f returns.
template <class F>
decltype(auto) visit_kernel(Algorithm algorithm, F&& f) {
  switch (algorithm) {
    case Algorithm::kNuts:
      return f(KernelTag<NutsKernel>{});
    case Algorithm::kMams:
      return f(KernelTag<MamsKernel>{});
    case Algorithm::kHmc:
    default:
      return f(KernelTag<HmcKernel>{});
  }
}

/// \brief Name, statistics and scratch (doubles per particle) of the kernel of `s.algorithm`
/// for a model of dimension `dim` (the kernel's members do not depend on the model).
KernelInfo kernel_info(const Settings& s, int dim);

}  // namespace hmc::sampler
