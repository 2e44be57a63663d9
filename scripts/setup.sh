#!/usr/bin/env bash
# scripts/setup.sh - install what is missing, make sure Kokkos is there, then
# configure and build hmc into $HMC_BUILD_DIR (executable: build/bin/hmc), and
# install it into a prefix if asked.
#
# Usage: scripts/setup.sh [--tests | --no-tests] [--deps-only] [--prefix DIR]
#   --tests       configure with -DHMC_BUILD_TESTS=ON
#   --no-tests    configure with -DHMC_BUILD_TESTS=OFF
#                 (neither: keep what the build dir has; OFF for a new one)
#   --deps-only   install packages and Kokkos only; no configure, no build
#   --prefix DIR  then install into DIR (cmake --install; DESTDIR is honoured):
#                 bin/hmc, bin/hmc-build-model, the headers, the libraries, the
#                 CMake package (find_package(hmc)), scripts, configs and docs
#                 (docs/adding-a-model.md#your-first-model)
#
# Environment:
#   Kokkos_ROOT       use this Kokkos install (>= 3.4) instead of looking for one
#   HMC_CACHE         where Kokkos 3.4.1 is built when none is found
#                     (default ${XDG_CACHE_HOME:-$HOME/.cache}/hmc)
#   HMC_BUILD_DIR     build directory, relative to the repo root (default build)
#   CMAKE_BUILD_TYPE  default Release
#   HMC_JOBS          parallel build jobs (default: nproc)
#   HMC_VERBOSE=1     print the full logs as well as writing them
#   HMC_CMAKE_ARGS    extra arguments for the configure step (word-split), e.g.
#                     "-DHMC_ENABLE_SANITIZERS=ON"; given, it always reconfigures
#
# Idempotent: a second call installs nothing, keeps the Kokkos install,
# configures only when needed and lets the build tool rebuild what changed.
# Prints one line per phase on stderr; full logs go to the build dir (project)
# or to $HMC_CACHE/logs (packages, Kokkos), and their tail is shown on failure.
set -euo pipefail
shopt -s inherit_errexit

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
CALLER_DIR=$PWD  # a relative --prefix is relative to where setup.sh was called
cd "$ROOT"

KOKKOS_VERSION=3.4.1
# Always needed to build and run hmc and its tests.
BASE_PACKAGES=(cmake make g++ openmpi-bin libopenmpi-dev libcli11-dev
  nlohmann-json3-dev libspdlog-dev libgtest-dev libnetcdf-dev)
# Only needed for the tests: the format check (tests/format) compares with clang-format 14.
TEST_PACKAGES=(clang-format)
# Only needed when Kokkos is built from Debian's trilinos source package.
KOKKOS_FETCH_PACKAGES=(dpkg-dev xz-utils ca-certificates)
KOKKOS_CMAKE_FLAGS=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_LIBDIR=lib
  -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DCMAKE_CXX_STANDARD=17
  -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON)

CACHE=${HMC_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/hmc}
BUILD_DIR=${HMC_BUILD_DIR:-build}
BUILD_TYPE=${CMAKE_BUILD_TYPE:-Release}
JOBS=${HMC_JOBS:-$(nproc 2>/dev/null || echo 2)}

want_tests=""   # "", ON or OFF
deps_only=0
prefix=""
while (($#)); do
  case "$1" in
    --tests) want_tests=ON ;;
    --no-tests) want_tests=OFF ;;
    --deps-only) deps_only=1 ;;
    --prefix)
      (($# >= 2)) && [[ -n "$2" ]] || { echo "setup: --prefix needs a directory" >&2; exit 2; }
      prefix=$2; shift ;;
    --prefix=*) prefix=${1#--prefix=}; [[ -n "$prefix" ]] || { echo "setup: --prefix needs a directory" >&2; exit 2; } ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "setup: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

LOG_PREFIX=setup
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"  # log, die, run_logged

# --------------------------------------------------------------- packages ---
pkg_installed() {
  local status
  # shellcheck disable=SC2016  # ${Status} is dpkg-query's format, not bash's
  status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
  [[ "$status" == "install ok installed" ]]
}

# ensure_packages PKG...: apt-get install the ones not installed yet.
ensure_packages() {
  local missing=() p
  for p in "$@"; do pkg_installed "$p" || missing+=("$p"); done
  if ((${#missing[@]} == 0)); then
    log "packages: ok ($# present)"
    return 0
  fi
  local sudo=()
  if ((EUID != 0)); then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      die "missing packages: ${missing[*]}; run as root, or install them: apt-get install ${missing[*]}"
    fi
  fi
  log "packages: installing ${missing[*]} (log: $CACHE/logs/apt.log)"
  local t0=$SECONDS
  run_logged "$CACHE/logs/apt.log" "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  run_logged "$CACHE/logs/apt.log" "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
  for p in "${missing[@]}"; do pkg_installed "$p" || die "package $p is still not installed (see $CACHE/logs/apt.log)"; done
  log "packages: installed ${#missing[@]} in $((SECONDS - t0)) s"
}

# ----------------------------------------------------------------- Kokkos ---
# kokkos_compatible DIR: does the KokkosConfigVersion.cmake in DIR accept a
# find_package(Kokkos 3.4) request? Prints the version it declares.
kokkos_compatible() {
  local vfile=$1/KokkosConfigVersion.cmake probe out
  [[ -f "$vfile" ]] || return 1
  probe=$(mktemp "${TMPDIR:-/tmp}/hmc-kokkos-probe.XXXXXX")
  cat >"$probe" <<'EOF'
set(PACKAGE_FIND_NAME Kokkos)
set(PACKAGE_FIND_VERSION 3.4)
set(PACKAGE_FIND_VERSION_MAJOR 3)
set(PACKAGE_FIND_VERSION_MINOR 4)
set(PACKAGE_FIND_VERSION_PATCH 0)
set(PACKAGE_FIND_VERSION_TWEAK 0)
set(PACKAGE_FIND_VERSION_COUNT 2)
include("${VFILE}")
if(PACKAGE_VERSION_COMPATIBLE AND NOT PACKAGE_VERSION_UNSUITABLE)
  message("ok ${PACKAGE_VERSION}")
else()
  message("no ${PACKAGE_VERSION}")
endif()
EOF
  out=$(cmake -DVFILE="$vfile" -P "$probe" 2>&1 | tail -n 1) || true
  rm -f "$probe"
  echo "${out#* }"
  [[ "$out" == ok* ]]
}

# find_system_kokkos: print the prefix of an installed Kokkos >= 3.4.
find_system_kokkos() {
  local prefixes=() p d v
  IFS=: read -ra prefixes <<<"${CMAKE_PREFIX_PATH:-}"
  prefixes+=(/usr/local /usr /opt/kokkos)
  for p in "${prefixes[@]}"; do
    [[ -n "$p" && -d "$p" ]] || continue
    for d in "$p"/lib/cmake/Kokkos "$p"/lib64/cmake/Kokkos "$p"/lib/*/cmake/Kokkos \
      "$p"/share/cmake/Kokkos "$p"/cmake/Kokkos; do
      [[ -f "$d/KokkosConfig.cmake" ]] || continue
      if v=$(kokkos_compatible "$d"); then
        echo "$p"
        return 0
      fi
      log "kokkos: ignoring $d (version '$v' does not satisfy find_package(Kokkos 3.4))"
    done
  done
  return 1
}

# write_deb_src_sources DIR: derive deb-src entries from this machine's apt
# sources (same mirrors, same keys): DIR/hmc-src.list, DIR/parts/hmc-src.sources
write_deb_src_sources() {
  local dir=$1 sl=/etc/apt/sources.list sp=/etc/apt/sources.list.d/ f
  eval "$(apt-config shell sl Dir::Etc::sourcelist/f sp Dir::Etc::sourceparts/d)"
  mkdir -p "$dir/parts"
  for f in "$sp"/*.sources; do            # deb822: only *.sources files count
    [[ -f "$f" ]] || continue
    sed -E 's/^Types:.*/Types: deb-src/I' "$f"
    echo
  done >"$dir/parts/hmc-src.sources"
  for f in "$sl" "$sp"/*.list; do         # one-line format: only *.list files
    [[ -f "$f" ]] || continue
    sed -nE 's/^[[:space:]]*deb[[:space:]]+/deb-src /p' "$f"
  done >"$dir/hmc-src.list"
  grep -qiE '^(Types: deb-src|deb-src )' "$dir/parts/hmc-src.sources" "$dir/hmc-src.list" ||
    die "no apt sources found in $sl or $sp to fetch the trilinos source package from; set Kokkos_ROOT to a Kokkos >= 3.4 install instead"
}

# fetch_trilinos_source APTDIR LOG: download Debian's trilinos source package
# into APTDIR/src with apt's own source download; prints the orig tarball.
fetch_trilinos_source() {
  local c=$1 logfile=$2 tarballs=()
  mkdir -p "$c/lists/partial" "$c/cache/archives/partial" "$c/src"
  write_deb_src_sources "$c/etc"
  local opts=(-o "Dir::Etc::SourceList=$c/etc/hmc-src.list" -o "Dir::Etc::SourceParts=$c/etc/parts"
    -o "Dir::State::Lists=$c/lists" -o "Dir::Cache=$c/cache" -o "Dir::Cache::archives=$c/cache/archives"
    -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=")
  # as root apt would hand downloads to the _apt user, who may not reach $c
  if ((EUID == 0)); then opts+=(-o APT::Sandbox::User=root); fi
  # An index that has no deb-src counterpart (e.g. a third-party repository)
  # makes 'update' fail; what counts is whether 'source' finds trilinos.
  printf '\n$ apt-get update (deb-src)\n' >>"$logfile"
  apt-get "${opts[@]}" update >>"$logfile" 2>&1 || log "kokkos: apt-get update reported errors (continuing; see $logfile)"
  (cd "$c/src" && run_logged "$logfile" apt-get "${opts[@]}" source --download-only trilinos)
  shopt -s nullglob
  tarballs=("$c"/src/trilinos_*.orig.tar.*)
  shopt -u nullglob
  ((${#tarballs[@]} > 0)) || die "apt-get source trilinos gave no orig tarball (see $logfile)"
  printf '%s\n' "${tarballs[@]}" | sort -V | tail -n 1
}

# kokkos_source_version DIR: Kokkos version declared in DIR/CMakeLists.txt.
kokkos_source_version() {
  local f=$1/CMakeLists.txt major minor patch
  major=$(sed -nE 's/^[[:space:]]*set[[:space:]]*\([[:space:]]*Kokkos_VERSION_MAJOR[[:space:]]+([0-9]+)[[:space:]]*\).*/\1/Ip' "$f" | head -n 1)
  minor=$(sed -nE 's/^[[:space:]]*set[[:space:]]*\([[:space:]]*Kokkos_VERSION_MINOR[[:space:]]+([0-9]+)[[:space:]]*\).*/\1/Ip' "$f" | head -n 1)
  patch=$(sed -nE 's/^[[:space:]]*set[[:space:]]*\([[:space:]]*Kokkos_VERSION_PATCH[[:space:]]+([0-9]+)[[:space:]]*\).*/\1/Ip' "$f" | head -n 1)
  [[ -n "$major" && -n "$minor" && -n "$patch" ]] || return 1
  echo "$((10#$major)).$((10#$minor)).$((10#$patch))"
}

KOKKOS_TMP=""
cleanup_kokkos_tmp() { if [[ -n "$KOKKOS_TMP" ]]; then rm -rf "$KOKKOS_TMP"; fi; }

# ensure_bundled_kokkos PREFIX: build Kokkos $KOKKOS_VERSION (Serial+OpenMP)
# from Debian's trilinos source package and install it into PREFIX, unless
# PREFIX already holds that build (stamp file).
ensure_bundled_kokkos() {
  local prefix=$1 stamp=$1/.hmc-kokkos-stamp want
  want="kokkos $KOKKOS_VERSION ${KOKKOS_CMAKE_FLAGS[*]}"
  if [[ -f "$stamp" && "$(<"$stamp")" == "$want" ]]; then return 0; fi

  mkdir -p "$CACHE/logs"
  exec 9>"$CACHE/.kokkos.lock"
  if ! flock -n 9; then
    log "kokkos: another setup is building Kokkos in $CACHE; waiting"
    flock 9
  fi
  if [[ -f "$stamp" && "$(<"$stamp")" == "$want" ]]; then exec 9>&-; return 0; fi

  ensure_packages "${KOKKOS_FETCH_PACKAGES[@]}"
  local logfile=$CACHE/logs/kokkos.log t0=$SECONDS tarball src version
  : >"$logfile"
  log "kokkos: no Kokkos >= 3.4 found; building $KOKKOS_VERSION from Debian's trilinos source into $prefix (log: $logfile)"
  tarball=$(fetch_trilinos_source "$CACHE/apt" "$logfile")
  log "kokkos: fetched $(basename "$tarball") in $((SECONDS - t0)) s"

  KOKKOS_TMP=$(mktemp -d "$CACHE/kokkos-build.XXXXXX")
  trap cleanup_kokkos_tmp EXIT
  run_logged "$logfile" tar -xf "$tarball" -C "$KOKKOS_TMP" --wildcards '*/packages/kokkos/*'
  src=$(find "$KOKKOS_TMP" -maxdepth 4 -type d -path '*/packages/kokkos' | head -n 1)
  [[ -n "$src" && -f "$src/CMakeLists.txt" ]] || die "no packages/kokkos in $(basename "$tarball")"
  version=$(kokkos_source_version "$src") || die "cannot read the Kokkos version from $src/CMakeLists.txt"
  [[ "$version" == "$KOKKOS_VERSION" ]] ||
    die "$(basename "$tarball") holds Kokkos $version, not $KOKKOS_VERSION; set Kokkos_ROOT to a Kokkos >= 3.4 install instead"

  rm -rf "$prefix"
  run_logged "$logfile" cmake -S "$src" -B "$KOKKOS_TMP/build" -DCMAKE_INSTALL_PREFIX="$prefix" "${KOKKOS_CMAKE_FLAGS[@]}"
  run_logged "$logfile" cmake --build "$KOKKOS_TMP/build" -j "$JOBS"
  run_logged "$logfile" cmake --install "$KOKKOS_TMP/build"
  echo "$want" >"$stamp"

  # keep only the install: drop the build tree, the ~166 MB source tarball
  # and the apt indexes
  cleanup_kokkos_tmp
  KOKKOS_TMP=""
  rm -rf "$CACHE/apt"
  exec 9>&-
  log "kokkos: $KOKKOS_VERSION installed in $prefix ($((SECONDS - t0)) s)"
}

# resolve_kokkos: set KOKKOS_ROOT to the Kokkos install to build against.
resolve_kokkos() {
  if [[ -n "${Kokkos_ROOT:-}" ]]; then
    [[ -d "$Kokkos_ROOT" ]] || die "Kokkos_ROOT=$Kokkos_ROOT is not a directory"
    KOKKOS_ROOT=$Kokkos_ROOT
    log "kokkos: $KOKKOS_ROOT (from Kokkos_ROOT)"
  elif KOKKOS_ROOT=$(find_system_kokkos); then
    log "kokkos: $KOKKOS_ROOT (installed on the system)"
  else
    KOKKOS_ROOT=$CACHE/kokkos-$KOKKOS_VERSION
    ensure_bundled_kokkos "$KOKKOS_ROOT"
    log "kokkos: $KOKKOS_ROOT (Kokkos $KOKKOS_VERSION built from Debian's trilinos source)"
  fi
}

# ------------------------------------------------------------------ build ---
cache_get() { # cache_get VAR: value of VAR in the build dir's CMakeCache.txt
  sed -n "s/^$1:[^=]*=//p" "$BUILD_DIR/CMakeCache.txt" | head -n 1
}
on_off() {
  case "${1^^}" in
    ON | 1 | TRUE | YES | Y) echo ON ;;
    *) echo OFF ;;
  esac
}

configure_and_build() {
  [[ -f "$ROOT/CMakeLists.txt" ]] || die "no CMakeLists.txt in $ROOT"
  local cachefile=$BUILD_DIR/CMakeCache.txt reason="" tests t0 old_tests=""
  if [[ -f "$cachefile" ]]; then
    if [[ "$(cache_get CMAKE_HOME_DIRECTORY)" != "$ROOT" ]]; then
      reason="build dir belongs to another source tree"
    elif [[ "$(cache_get Kokkos_ROOT)" != "$KOKKOS_ROOT" && "$(cache_get Kokkos_DIR)/" != "${KOKKOS_ROOT%/}/"* ]]; then
      reason="Kokkos root changed"
      old_tests=$(on_off "$(cache_get HMC_BUILD_TESTS)")
    fi
    if [[ -n "$reason" ]]; then # a new Kokkos needs a new cache (Kokkos_DIR etc.)
      rm -f "$cachefile"
    elif [[ "$(cache_get Kokkos_ROOT)" != "$KOKKOS_ROOT" ]]; then
      reason="recording Kokkos_ROOT" # configured by hand against this Kokkos
    fi
  fi
  if [[ -f "$cachefile" ]]; then
    tests=$(on_off "$(cache_get HMC_BUILD_TESTS)")
    if [[ -n "$want_tests" && "$want_tests" != "$tests" ]]; then
      reason="${reason:+$reason, }HMC_BUILD_TESTS $tests -> $want_tests"
      tests=$want_tests
    fi
    if [[ "$(cache_get CMAKE_BUILD_TYPE)" != "$BUILD_TYPE" ]]; then
      reason="${reason:+$reason, }CMAKE_BUILD_TYPE $(cache_get CMAKE_BUILD_TYPE) -> $BUILD_TYPE"
    fi
  else
    reason=${reason:-new build dir}
    tests=${want_tests:-${old_tests:-OFF}}
  fi

  local extra=()
  if [[ -n "${HMC_CMAKE_ARGS:-}" ]]; then
    read -r -a extra <<<"$HMC_CMAKE_ARGS"
    reason="${reason:+$reason, }HMC_CMAKE_ARGS ${HMC_CMAKE_ARGS}"
  fi

  mkdir -p "$BUILD_DIR"
  if [[ -n "$reason" ]]; then
    t0=$SECONDS
    : >"$BUILD_DIR/setup-configure.log"
    run_logged "$BUILD_DIR/setup-configure.log" cmake -S "$ROOT" -B "$BUILD_DIR" \
      -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DKokkos_ROOT="$KOKKOS_ROOT" -DHMC_BUILD_TESTS="$tests" "${extra[@]}"
    log "configure: $BUILD_DIR ($BUILD_TYPE, tests $tests; $reason) in $((SECONDS - t0)) s"
  else
    log "configure: $BUILD_DIR up to date ($BUILD_TYPE, tests $tests)"
  fi

  t0=$SECONDS
  : >"$BUILD_DIR/setup-build.log"
  run_logged "$BUILD_DIR/setup-build.log" cmake --build "$BUILD_DIR" -j "$JOBS"
  [[ -x "$BUILD_DIR/bin/hmc" ]] ||
    die "build finished but $BUILD_DIR/bin/hmc is missing (CMakeLists.txt must put executables in \${CMAKE_BINARY_DIR}/bin)"
  log "build: $BUILD_DIR/bin/hmc ready ($((SECONDS - t0)) s, log: $BUILD_DIR/setup-build.log)"
}

# install_prefix DIR: cmake --install of the build into DIR (absolute; DESTDIR honoured).
install_prefix() {
  local dir=$1 t0=$SECONDS
  [[ "$dir" == /* ]] || dir=$CALLER_DIR/$dir
  run_logged "$BUILD_DIR/setup-install.log" cmake --install "$BUILD_DIR" --prefix "$dir"
  log "install: ${DESTDIR:-}$dir (bin/hmc, bin/hmc-build-model, include/hmc, lib/cmake/hmc; $((SECONDS - t0)) s)"
}

# ------------------------------------------------------------------- main ---
ensure_packages "${BASE_PACKAGES[@]}"
if [[ $want_tests == ON ]]; then ensure_packages "${TEST_PACKAGES[@]}"; fi
resolve_kokkos
if ((deps_only)); then exit 0; fi
configure_and_build
if [[ -n "$prefix" ]]; then
  : >"$BUILD_DIR/setup-install.log"
  install_prefix "$prefix"
fi
