#pragma once
/// \file
/// \brief Build identity: hmc's version and the git commit it was built from.

#include <string>

namespace hmc {

/// "0.1.0"
const char* version();
/// Short git hash of the source tree ("unknown" outside a checkout), "-dirty" if modified.
const char* git_hash();

}  // namespace hmc
