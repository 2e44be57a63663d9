// missing_member.cpp's toy model, registered with HMC_REGISTER_MODEL as a model outside
// hmc's tree is (docs/adding-a-model.md#your-first-model): a missing member must give the
// same one message through that path.
#define HMC_TOY_REGISTERED 1
#include "missing_member.cpp"
