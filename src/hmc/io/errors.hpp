#pragma once
/// \file
/// \brief The errors and exit codes now live in core/errors.hpp; this name stays for the
/// code that still includes it.

#include "hmc/core/errors.hpp"
