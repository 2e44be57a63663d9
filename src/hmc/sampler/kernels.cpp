#include "hmc/sampler/kernels.hpp"

namespace hmc::sampler {

namespace {
/// A stand-in model type: a kernel's name, columns and scratch size do not use it.
struct NoModel {};
}  // namespace

KernelInfo kernel_info(const Settings& s, int dim) {
  return visit_kernel(s.algorithm, [&](auto tag) {
    using K = typename decltype(tag)::template type<NoModel>;
    return KernelInfo{K::name, K::stat_columns(), K::scratch_size(dim, K::settings(s))};
  });
}

}  // namespace hmc::sampler
