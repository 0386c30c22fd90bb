#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs epsim's build dependencies from Debian 12 packages. Idempotent: packages already present are
# skipped, and apt is not touched at all when nothing is missing.
set -euo pipefail

# libjs-vega is compiled into `epsim report`; nodejs draws each report figure's SVG with it; chromium
# (with a font) renders reports in the browser tests; clang-15 and libfuzzer-15-dev build the fuzz harnesses.
packages=(
  build-essential cmake ninja-build pkg-config
  libboost-graph-dev libboost-program-options-dev libboost-random-dev
  libeigen3-dev libtomlplusplus-dev
  libprotobuf-dev protobuf-compiler
  catch2 libspdlog-dev libfmt-dev nlohmann-json3-dev
  coinor-libclp-dev libyaml-cpp-dev
  libopenmpi-dev openmpi-bin
  libjs-vega nodejs
  chromium fonts-liberation
  clang-format-15 clang-tidy-15 clang-15 libfuzzer-15-dev
  python3
  python3-dev python3-numpy pybind11-dev python3-setuptools python3-venv python3-pip  # Python module, pip install .
)

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
