# Dockerfile - hmc on Debian bookworm: OpenMPI, Kokkos 3.4.1 (Serial+OpenMP,
# built by scripts/setup.sh from Debian's trilinos source) and hmc installed into
# /usr/local (scripts/setup.sh --prefix): bin/hmc, bin/hmc-build-model, the headers and
# the CMake package, so that the image also builds users' own models.
#
# Usage: docker build -t hmc .
#        docker run --rm -v "$PWD/out:/out" hmc --config configs/coin_toss.json --set output.dir=/out
#        docker run --rm --entrypoint mpirun hmc -np 4 --oversubscribe hmc --config configs/coin_toss.json
#        docker run --rm -v "$PWD:/work" -w /work --entrypoint hmc-build-model hmc my_model.hpp -o hmc-mine
FROM debian:bookworm

ENV HMC_CACHE=/opt/hmc-cache \
    OMPI_ALLOW_RUN_AS_ROOT=1 \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_rmaps_base_oversubscribe=1

WORKDIR /opt/hmc

# Packages and Kokkos first, from setup.sh alone, so that this layer is
# rebuilt only when setup.sh changes, not on every source change.
COPY scripts/setup.sh scripts/lib.sh scripts/
RUN scripts/setup.sh --deps-only && rm -rf /var/lib/apt/lists/*

# An image runs on other machines than the one that built it: no -march=native
# (docker build --build-arg HMC_CMAKE_ARGS=-DHMC_NATIVE_ARCH=ON for the build machine's CPU).
ARG HMC_CMAKE_ARGS=-DHMC_NATIVE_ARCH=OFF
COPY . .
RUN HMC_CMAKE_ARGS="$HMC_CMAKE_ARGS" scripts/setup.sh --prefix /usr/local

ENTRYPOINT ["/usr/local/bin/hmc"]
CMD ["--help"]
