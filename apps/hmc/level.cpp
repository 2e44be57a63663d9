/// \file
/// \brief The level of one executable of a portable build: apps/hmc/CMakeLists.txt compiles
/// this file into each hmc-LEVEL with HMC_ARCH_LEVEL (its level) and HMC_ARCH_BUILT (all the
/// levels of the build), which run.json and the log report (core/arch.hpp).

#include "hmc/core/arch.hpp"

namespace {
const hmc::arch::BuildLevel this_level(HMC_ARCH_LEVEL, HMC_ARCH_BUILT);
}  // namespace
