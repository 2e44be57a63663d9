# Dockerfile - hmc on Debian bookworm, in two stages. The first builds Kokkos 3.4.1
# (Serial+OpenMP, from Debian's trilinos source, scripts/setup.sh) and a portable hmc
# (-DHMC_NATIVE_ARCH=OFF: the sampler for x86-64, x86-64-v3 and x86-64-v4, bin/hmc runs
# the highest this CPU has; docs/performance.md#portable-builds) and installs it into a
# staging folder. The image is the second: Debian's packages that hmc and hmc-build-model
# need, Kokkos' install and hmc's (bin/hmc, bin/hmc-build-model, libexec/hmc, the headers,
# the CMake package, share/hmc/configs) in /usr/local; no sources, build tree or .git.
# Its working directory holds the shipped configs (configs/*.json). Checked by
# scripts/container_check.sh, which runs the lines below.
#
# Usage: docker build -t hmc .
#        mkdir -p out && docker run --rm -v "$PWD/out:/out" hmc --config configs/coin_toss.json --set output.dir=/out
#        docker run --rm --entrypoint mpirun hmc -np 4 --oversubscribe hmc --config configs/coin_toss.json
#        docker run --rm -v "$PWD:/work" -w /work --entrypoint hmc-build-model hmc my_model.hpp -o hmc-mine
#        docker run --rm -v "$PWD:/work" -w /work --entrypoint ./hmc-mine hmc --list-models
# (podman takes the same lines.) HMC_ARCH picks a level: docker run -e HMC_ARCH=x86-64-v3 ...

# ---- build stage ---------------------------------------------------------------------
FROM debian:bookworm AS build

ENV HMC_CACHE=/opt/hmc-cache
WORKDIR /src

# Packages and Kokkos first, from setup.sh alone, so that this layer is rebuilt only when
# setup.sh changes, not on every source change.
COPY scripts/setup.sh scripts/lib.sh scripts/
RUN scripts/setup.sh --deps-only && rm -rf /var/lib/apt/lists/*

# The image runs on other machines than the one that built it: a portable build (its
# launcher picks the level at start). --build-arg HMC_CMAKE_ARGS=-DHMC_NATIVE_ARCH=ON
# builds for this machine's CPU only. The build context has no .git: HMC_GIT_HASH names
# the commit (scripts/container_check.sh passes `git describe`).
ARG HMC_CMAKE_ARGS=-DHMC_NATIVE_ARCH=OFF
ARG HMC_GIT_HASH=unknown
COPY . .
RUN HMC_CMAKE_ARGS="$HMC_CMAKE_ARGS" HMC_GIT_HASH="$HMC_GIT_HASH" DESTDIR=/stage \
    scripts/setup.sh --prefix /usr/local

# ---- runtime stage -------------------------------------------------------------------
FROM debian:bookworm

# What hmc runs on (Open MPI, netCDF, spdlog) and what hmc-build-model compiles a user's
# model with (g++, CMake, the -dev packages that find_package(hmc) looks for): the
# packages of scripts/setup.sh less the test ones.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       cmake make g++ openmpi-bin libopenmpi-dev libcli11-dev nlohmann-json3-dev libspdlog-dev libnetcdf-dev \
    && rm -rf /var/lib/apt/lists/*

ENV OMPI_ALLOW_RUN_AS_ROOT=1 \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_rmaps_base_oversubscribe=1

# Kokkos where hmc's CMake package was told it is; hmc in /usr/local.
COPY --from=build /opt/hmc-cache/kokkos-3.4.1 /opt/hmc-cache/kokkos-3.4.1
COPY --from=build /stage/usr/local /usr/local

WORKDIR /usr/local/share/hmc
ENTRYPOINT ["/usr/local/bin/hmc"]
CMD ["--help"]
