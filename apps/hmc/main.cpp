/// \file
/// \brief `hmc`: the command line (app/main.hpp) with the shipped models.

#include "hmc/app/main.hpp"

#include "shipped.hpp"

int main(int argc, char** argv) { return hmc::app::main(argc, argv, hmc::models::shipped_entries()); }
