#include "hmc/parallel/traffic.hpp"

namespace hmc::parallel {

namespace {
Traffic g_traffic;
}  // namespace

Traffic traffic() { return g_traffic; }

void reset_traffic() { g_traffic = Traffic{}; }

namespace detail {
void add_collective(Collective c, std::int64_t bytes, double seconds) {
  CollectiveCount& k = g_traffic.kinds[static_cast<int>(c)];
  ++k.calls;
  k.bytes += bytes;
  k.seconds += seconds;
}
}  // namespace detail

}  // namespace hmc::parallel
