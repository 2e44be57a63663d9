// A model that lacks one required member must fail to compile with exactly one
// message, naming that member (model/concept.hpp). Compiled by the ctest cases of
// tests/compile/CMakeLists.txt, once complete (HMC_DROP undefined: must compile) and
// once per dropped member; check_compile.sh reads the compiler's output.
#include "hmc/app/register.hpp"
#include "hmc/services/diagnose.hpp"
#include "hmc/services/prepare.hpp"
#include "hmc/services/sample.hpp"
#include "registry.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace {

using hmc::Row;

/// A standard normal in one coordinate, every member present unless HMC_DROP names it.
struct Toy {
#if HMC_DROP != 1
  static Toy from_config(const nlohmann::json&, const nlohmann::json&) { return Toy{}; }
#endif
#if HMC_DROP != 2
  static hmc::keys::Keys config_keys() { return {}; }
#endif
#if HMC_DROP != 3
  int dim() const { return 1; }
#endif
  int num_params() const { return 1; }
  std::vector<std::string> parameter_names() const { return {"x"}; }
  KOKKOS_INLINE_FUNCTION double log_density(const Row& q) const { return -0.5 * q(0) * q(0); }
#if HMC_DROP != 4
  KOKKOS_INLINE_FUNCTION double log_density_gradient(const Row& q, const Row& grad) const {
    grad(0) = -q(0);
    return log_density(q);
  }
#endif
#if HMC_DROP != 5
  KOKKOS_INLINE_FUNCTION void constrain(const Row& q, const Row& out) const { out(0) = q(0); }
#endif
};

}  // namespace

#ifndef HMC_TOY_REGISTERED
// Registered as a model of a list, and handed to every typed service as hmc itself does
// (apps/hmc/main.cpp): a run, its validation and the gradient check.
int run_toy(const hmc::parallel::MpiContext& mpi, const hmc::services::RunSpec& spec) {
  static const hmc::models::ModelList list{hmc::models::entry<Toy>("toy", "a standard normal")};
  if (list.infos().empty()) return 1;
  return list.visit(spec.run.model, [&](auto m) {
    using Model = typename decltype(m)::type;
    const auto& formats = hmc::io::draw_formats();
    return hmc::services::sample<Model>(mpi, spec, formats) + hmc::services::validate<Model>(mpi, spec, formats) +
           hmc::services::diagnose<Model>(mpi, spec, hmc::services::DiagnoseOptions{});
  });
}
#else
// Registered the way a user's own header registers a model (app/register.hpp): the same
// one message must reach the user's build (missing_member_registered.cpp).
HMC_REGISTER_MODEL(Toy, "toy", "a standard normal");
#endif
