#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite: installs the base and --dev dependencies (skipping what is present), builds
# everything with the release preset (-Wall -Wextra -Werror) and runs every test through CTest but the
# label `full`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --dev
cmake --preset release -DEPSIM_BUILD_TESTS=ON >/dev/null  # demo.sh may have left them off
cmake --build --preset release
# The label `full` (the example studies as shipped, ~10 min on 2 cores) is CI's own stage (.ci/run); the
# reduced example studies here exercise the same code.
ctest --preset release -j "$(nproc)" -LE full
