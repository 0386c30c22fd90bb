#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A plain `cmake -S . -B build` (Unix Makefiles, no preset) configures and generates the Protobuf trace
# code: protoc's output directory is created by CMake, not left to the generator (Ninja creates it,
# Make does not). Only the generated library is built, to keep this test short.
#   plain_cmake_test.sh SOURCE_DIR
set -euo pipefail
src=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cmake -S "$src" -B "$dir" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release >"$dir/configure.log" 2>&1 ||
  { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" --target epsim_trace_proto -j 2 >"$dir/build.log" 2>&1 || { tail -20 "$dir/build.log"; exit 1; }
test -f "$dir/generated/workloads/routing_trace.pb.h"
echo "plain cmake: configured and generated the trace code"
