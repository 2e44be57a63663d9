#pragma once
/// \file
/// \brief `hmc summary DIR`: the summary of a finished or checkpointed run, computed
/// from its stored draws (draws.nc of a finished run, the staging store of a
/// checkpointed one).

#include <string>

namespace hmc::services {

/// \brief Prints the table (format "table") or JSON ("json") on stdout; returns the
/// exit code (4 with one line on stderr when DIR holds no run).
int print_summary(const std::string& dir, const std::string& format);

}  // namespace hmc::services
