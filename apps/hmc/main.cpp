/// \file
/// \brief `hmc`: the command line (app/main.hpp) with the shipped models, which linking
/// hmc::models registers (models/shipped.cpp).

#include "hmc/app/main.hpp"

int main(int argc, char** argv) { return hmc::app::main(argc, argv); }
