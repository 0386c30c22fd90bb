#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `epsim --version` against the sources: "epsim X.Y.Z (commit HASH[-dirty])" where X.Y.Z is
# CMakeLists.txt's project version and the newest released entry of CHANGELOG.md (Keep a Changelog:
# "## [X.Y.Z] - YYYY-MM-DD" below "## [Unreleased]"), and HASH is `git rev-parse --short HEAD` of the
# checkout (compared only when the source is a git checkout; "unknown" otherwise).
#   version_test.sh EPSIM SOURCE_DIR
set -euo pipefail
epsim=$1
src=$(realpath "$2")
fail() { echo "FAIL: $*"; exit 1; }

project=$(sed -nE 's/^project\(epsim VERSION ([0-9]+\.[0-9]+\.[0-9]+)[ )].*/\1/p' "$src/CMakeLists.txt")
[ -n "$project" ] || fail "no 'project(epsim VERSION X.Y.Z' line in CMakeLists.txt"
# The changelog: version headings in order, newest first, each X.Y.Z with an ISO date; one Unreleased.
mapfile -t headings < <(grep -E '^## ' "$src/CHANGELOG.md")
[ "${headings[0]}" = "## [Unreleased]" ] || fail "CHANGELOG.md's first heading is '${headings[0]}', not '## [Unreleased]'"
released=()
for h in "${headings[@]:1}"; do
  [[ "$h" =~ ^"## ["([0-9]+)\.([0-9]+)\.([0-9]+)"] - "[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] ||
    fail "CHANGELOG.md heading '$h' is not '## [X.Y.Z] - YYYY-MM-DD'"
  released+=("${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.${BASH_REMATCH[3]}")
done
[ ${#released[@]} -ge 1 ] || fail "CHANGELOG.md has no released version"
sorted=$(printf '%s\n' "${released[@]}" | sort -t. -k1,1nr -k2,2nr -k3,3nr -u)
[ "$sorted" = "$(printf '%s\n' "${released[@]}")" ] || fail "CHANGELOG.md's versions are not newest first, once each"
[ "${released[0]}" = "$project" ] ||
  fail "CMakeLists.txt says $project, CHANGELOG.md's newest release is ${released[0]}"

line=$("$epsim" --version)
[[ "$line" =~ ^"epsim "([0-9]+\.[0-9]+\.[0-9]+)" (commit "(unknown|[0-9a-f]{7,40}(-dirty)?)")"$ ]] ||
  fail "--version printed '$line', not 'epsim X.Y.Z (commit HASH)'"
[ "${BASH_REMATCH[1]}" = "$project" ] || fail "--version says ${BASH_REMATCH[1]}, CMakeLists.txt $project"
commit=${BASH_REMATCH[2]}
if [ -e "$src/.git" ]; then
  head=$(git -C "$src" rev-parse --short HEAD) || fail "$src has .git but git cannot read it (safe.directory?)"
  [ "${commit%-dirty}" = "$head" ] || fail "--version names commit $commit, the checkout is at $head (rebuild?)"
else
  [ "$commit" = unknown ] || fail "not a git checkout, yet --version names commit $commit"
fi
echo "ok: $line; CMakeLists.txt and CHANGELOG.md say $project"
