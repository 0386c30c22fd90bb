#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs epsim's dependencies from Debian 12 packages. The base set builds and runs epsim (the demo,
# `cmake --install`, the .deb); --dev adds what the tests, fuzzing, browser checks, package checks and
# lint need (scripts/test.sh and CI use it). Idempotent: packages already present are skipped, and apt is
# not touched at all when nothing is missing. Runs apt through sudo unless it is root.
#   install-deps.sh [--dev] [--list]     (--list: print the set's packages, one a line, install nothing)
# tests/build/install_deps_test.py checks that the base set covers every header and library epsim's
# build uses and every command scripts/demo.sh runs, and the dev set the test scripts' commands.
set -euo pipefail

# Build tools and the libraries epsim links; libjs-vega is compiled into `epsim report` (build time
# only); nodejs draws each report figure's SVG at run time; Open MPI gives distributed sweeps
# (`mpirun -n N epsim sweep`); Python's headers, pybind11 and NumPy build the Python package
# (python/, `pip install .`; CMake builds it where they are found).
base=(
  build-essential cmake ninja-build pkg-config
  libboost-graph-dev libboost-program-options-dev libboost-random-dev
  libeigen3-dev libtomlplusplus-dev
  libprotobuf-dev protobuf-compiler
  libspdlog-dev libfmt-dev nlohmann-json3-dev
  coinor-libclp-dev libyaml-cpp-dev
  libopenmpi-dev openmpi-bin
  libjs-vega nodejs
  python3 python3-dev pybind11-dev python3-numpy python3-setuptools python3-venv python3-pip
)
# catch2: the unit tests; python3-pandas and python3-matplotlib: the Python package's DataFrame path and
# examples/monte_carlo.py's figure in its tests; chromium (with a font): reports in the browser tests; clang-15 and
# libfuzzer-15-dev: the asan preset and the fuzz harnesses; clang-format-15 and clang-tidy-15: lint;
# git: lint's file list and the commit tests; file: cpack's dependency scan (dpkg-shlibdeps comes with
# build-essential) for the .deb test.
dev=(
  catch2
  python3-pandas python3-matplotlib
  chromium fonts-liberation
  clang-15 libfuzzer-15-dev
  clang-format-15 clang-tidy-15
  git file
)

packages=("${base[@]}")
list=0
for arg in "$@"; do
  case "$arg" in
    --dev) packages+=("${dev[@]}") ;;
    --list) list=1 ;;
    *) echo "install-deps: unknown option '$arg' (expected --dev or --list)" >&2; exit 2 ;;
  esac
done
if [ "$list" -eq 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
