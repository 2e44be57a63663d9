#pragma once
// Posterior moments against known values, in units of the run's Monte Carlo standard error.

#include "hmc/diagnostics/summary.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace hmc::test {

/// |mean - truth| <= 4 mcse_mean and |variance - truth| <= 4 mcse_var, with
/// mcse_var = 2 sd mcse_sd (delta method); optionally R-hat < 1.01.
inline void expect_moments(const diagnostics::ParameterSummary& s, double mean, double var, bool check_rhat = false) {
  ASSERT_TRUE(std::isfinite(s.mcse_mean) && s.mcse_mean > 0) << s.name;
  ASSERT_TRUE(std::isfinite(s.mcse_sd) && s.mcse_sd > 0) << s.name;
  EXPECT_LE(std::abs(s.mean - mean), 4.0 * s.mcse_mean)
      << s.name << ": mean " << s.mean << " vs " << mean << " (mcse " << s.mcse_mean << ")";
  const double mcse_var = 2.0 * s.sd * s.mcse_sd;
  EXPECT_LE(std::abs(s.sd * s.sd - var), 4.0 * mcse_var)
      << s.name << ": variance " << s.sd * s.sd << " vs " << var << " (mcse " << mcse_var << ")";
  if (check_rhat) {
    EXPECT_LT(s.rhat, 1.01) << s.name;
  }
}

}  // namespace hmc::test
