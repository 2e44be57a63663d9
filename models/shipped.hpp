#pragma once
/// \file
/// \brief The shipped models with their services, for hmc::app::main (apps/hmc/main.cpp
/// and every executable of hmc_add_executable). Defined in models/shipped.cpp, the one
/// file that instantiates the sampler for each shipped model.

#include "hmc/app/models.hpp"

#include <vector>

namespace hmc::models {

/// \brief registry.hpp's shipped() models as app::ModelEntry, in its order.
std::vector<app::ModelEntry> shipped_entries();

}  // namespace hmc::models
