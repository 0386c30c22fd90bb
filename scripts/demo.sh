#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job on the embedded defaults: installs the base dependencies (no test tools; skipping what
# is present), builds the release epsim without the tests, and runs the embedded demo
# (examples/demo.toml), writing results/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release -DEPSIM_BUILD_TESTS=OFF >/dev/null  # the base set has no Catch2
cmake --build --preset release --target epsim
./build/release/epsim run --out results/demo "$@"
