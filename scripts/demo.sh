#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job on the embedded defaults: installs dependencies (skipping what is present), builds the
# release epsim, and runs the embedded demo (examples/demo.toml), writing results/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target epsim
./build/release/epsim run --out results/demo "$@"
