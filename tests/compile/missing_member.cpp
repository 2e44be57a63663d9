// A model that lacks one required member, or has an optional one in a form hmc cannot
// use, must fail to compile with exactly one message, naming that member (model/concept.hpp). Compiled by the ctest
// cases of tests/compile/CMakeLists.txt, once complete (HMC_DROP=0: must compile) and once per dropped member;
// check_compile.sh reads the compiler's output.
#include "hmc/app/register.hpp"
#include "hmc/core/draw_source.hpp"
#include "hmc/core/philox.hpp"
#include "hmc/core/types.hpp"
#include "hmc/keys/key.hpp"

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
  // Optional members after sampling: the pointwise log-likelihood of one observation needs
  // observations() (6 drops it); 7 adds the array form beside the pointwise one; 8 drops
  // generate() from the generated quantities.
  KOKKOS_INLINE_FUNCTION double log_likelihood(const Row& draw, int) const { return -0.5 * draw(0) * draw(0); }
  std::vector<hmc::ArrayShape> generated_quantities() const { return {{"x2", {}, {}}}; }
#if HMC_DROP != 8
  KOKKOS_INLINE_FUNCTION void generate(const Row& draw, const hmc::rng::DrawStream& r, const Row& out) const {
    out(0) = draw(0) * draw(0) + 0.0 * r.normal(0);
  }
#endif
#if HMC_DROP != 6
  std::vector<hmc::DataArray> observations() const {
    hmc::DataArray y;
    y.name = "y";
    y.dims = {"obs"};
    y.shape = {1};
    y.values = {0.0};
    return {y};
  }
#endif
#if HMC_DROP == 7
  KOKKOS_INLINE_FUNCTION void log_likelihood(const Row& draw, const Row& out) const {
    out(0) = -0.5 * draw(0) * draw(0);
  }
#endif
};

}  // namespace

// Registered as every model is, hmc's own (models/shipped.cpp) and a user's
// (docs/adding-a-model.md#your-first-model): its entry instantiates a run, its
// validation and the gradient check (app/register.hpp).
HMC_REGISTER_MODEL(Toy, "toy", "a standard normal");
