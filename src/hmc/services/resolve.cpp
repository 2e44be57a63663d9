#include "hmc/services/resolve.hpp"

#include "hmc/io/run_config.hpp"
#include "hmc/services/collective.hpp"
#include "hmc/services/signals.hpp"

#include <ctime>

namespace hmc::services {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

RunSpec resolve(const parallel::MpiContext& mpi, const Request& request, const io::Catalog& catalog) {
  RunSpec spec;
  spec.started_utc = utc_now();
  on_root(mpi, [&] {
    io::ResolvedConfig resolved;
    {
      const ReadingInput reading("the config and the data");  // a stop signal ends hmc here
      resolved = io::resolve_config(request.config, request.sets, catalog);
    }
    spec.config = std::move(resolved.config);
    spec.data = std::move(resolved.data);
    spec.run = io::run_config(spec.config);
    spec.command_line = request.command_line;
    spec.overwrite = request.overwrite;
    spec.validate_only = request.validate;
    spec.paths = output_paths(spec.run.output.dir);  // not empty: validate_config refuses that
  });
  spec.t0 = request.t0;
  return broadcast_spec(mpi, spec);
}

}  // namespace hmc::services
