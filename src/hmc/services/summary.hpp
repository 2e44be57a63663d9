#pragma once
/// \file
/// \brief `hmc summary DIR`: the summary of a finished or checkpointed run, computed
/// from its stored draws (draws.nc of a finished run, the staging store of a
/// checkpointed one).

#include <string>

namespace hmc::services {

/// \brief Prints the table (format "table") or JSON ("json") on stdout, with PSIS-LOO
/// (diagnostics/loo.hpp, by the rules of ArviZ `arviz`: "1" or "0.23") where the run
/// recorded a log_likelihood group; returns the exit code (4 with one line on stderr
/// when DIR holds no run).
int print_summary(const std::string& dir, const std::string& format, const std::string& arviz = "1");

}  // namespace hmc::services
