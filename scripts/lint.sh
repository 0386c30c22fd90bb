#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Lint: clang-format (check only) over every tracked C++ file, then clang-tidy (.clang-tidy allow-list)
# over the library and CLI sources, using BUILD_DIR/compile_commands.json.
#   scripts/lint.sh [BUILD_DIR]        (default build/dev)
#   scripts/lint.sh --fix              (reformat in place instead of checking; no clang-tidy)
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-15 || true)
tidy=$(command -v clang-tidy-15 || true)
if [ -z "$fmt" ] || [ -z "$tidy" ]; then
  echo "lint: clang-format-15 and clang-tidy-15 are needed (scripts/install-deps.sh --dev installs them)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp')
if [ "${1:-}" = "--fix" ]; then
  "$fmt" -i "${files[@]}"
  exit 0
fi
build=${1:-build/dev}
echo "lint: clang-format on ${#files[@]} files"
"$fmt" --dry-run --Werror "${files[@]}"
# The layers' folders (layers.txt, the one list): their sources are linted, their headers are the ones
# clang-tidy reports on.
mapfile -t folders < <(awk '/^[a-z]/ { print $2 }' layers.txt)
patterns=()
for f in "${folders[@]}"; do patterns+=("$f/*.cpp"); done
mapfile -t sources < <(git ls-files --cached --others --exclude-standard "${patterns[@]}")
header_filter=".*/($(IFS='|'; echo "${folders[*]}"))/([^/]*/)?[^/]*\.hpp$"
# Sources include generated headers (Protobuf, embedded presets, the build's commit): make them first.
cmake --build "$build" --target epsim_trace_proto epsim_cli_commit >/dev/null
echo "lint: clang-tidy on ${#sources[@]} sources, $(nproc) at a time"
# One clang-tidy per few files, as many at once as there are cores (xargs fails if any of them does).
printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -n 4 "$tidy" -p "$build" --quiet --header-filter="$header_filter"
echo "lint: clean"
