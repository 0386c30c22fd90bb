#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A plain `cmake -S . -B build -DCMAKE_BUILD_TYPE=Release` (Unix Makefiles, no preset: how a user or a
# packager builds):
# - configures and generates the Protobuf trace code: protoc's output directory is created by CMake,
#   not left to the generator (Ninja creates it, Make does not);
# - compiles every file with the flags the tested build (PRESET_BUILD_DIR, the release preset) uses,
#   -Werror aside: optimisation, code generation, defines, standard and warnings, so a warning that
#   stops a plain build (e.g. GCC's -O3-only -Wstringop-overflow) stops the tests first;
# - has warnings as errors off (EPSIM_WERROR defaults OFF; the presets turn it on).
# Only the generated library is built, to keep this test short.
#   plain_cmake_test.sh SOURCE_DIR PRESET_BUILD_DIR
set -euo pipefail
src=$1
preset=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cmake -S "$src" -B "$dir" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release >"$dir/configure.log" 2>&1 ||
  { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" --target epsim_trace_proto -j 2 >"$dir/build.log" 2>&1 || { tail -20 "$dir/build.log"; exit 1; }
test -f "$dir/generated/workloads/routing_trace.pb.h"
grep -q '^EPSIM_WERROR:BOOL=OFF$' "$dir/CMakeCache.txt" || { echo "plain cmake: EPSIM_WERROR is not OFF by default"; exit 1; }
python3 - "$dir/compile_commands.json" "$preset/compile_commands.json" <<'PY'
import json, shlex, sys

def flags(path):
    out = {}
    for entry in json.load(open(path)):
        words = shlex.split(entry["command"])
        kept = [w for w in words[1:] if w.startswith(("-O", "-m", "-f", "-g", "-D", "-std", "-W"))
                and w != "-Werror"]
        out[entry["file"]] = kept
    return out

plain, tested = flags(sys.argv[1]), flags(sys.argv[2])
common = sorted(set(plain) & set(tested))
assert len(common) > 300, f"only {len(common)} files in both builds: is {sys.argv[2]} a full build?"
for f in common:
    if plain[f] != tested[f]:
        sys.exit(f"plain cmake: {f} compiles with {' '.join(plain[f])}\n"
                 f"  but the tested build uses {' '.join(tested[f])} (-Werror aside)")
print(f"plain cmake: configured, generated the trace code; {len(common)} files compile with the tested flags")
PY
