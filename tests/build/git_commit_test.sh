#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The commit `epsim --version` names is read at build time (cmake/epsim_helpers.cmake, epsim_git_commit):
# a small project using the same function in a scratch git repository is built, and its program prints
# the commit it was built from. Checked: the short hash after a build, "-dirty" with a tracked file
# changed (not for an untracked one), the new hash after HEAD moves with no source change, no relink when
# nothing changed, "unknown" outside git and for a folder unpacked inside another checkout.
#   git_commit_test.sh SOURCE_DIR [GENERATOR]   (the build's own, e.g. Ninja or "Unix Makefiles")
set -euo pipefail
src=$(realpath "$1")
generator=${2:-Ninja}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
g() { git -C "$work/repo" -c user.name=epsim-test -c user.email=test@epsim.invalid -c commit.gpgsign=false "$@"; }

# A project the shape of epsim's: the function from epsim_helpers.cmake, a program printing k_commit.
make_project() {
  mkdir -p "$1"
  cat >"$1/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(commit_probe CXX)
include($src/cmake/epsim_helpers.cmake)
add_executable(probe main.cpp)
target_include_directories(probe PRIVATE \${PROJECT_BINARY_DIR}/generated)
epsim_git_commit(probe)
CMAKE
  cat >"$1/main.cpp" <<'CPP'
#include <cstdio>
#include "epsim_commit.hpp"
int main() { std::puts(epsim::k_commit); }
CPP
}
build() { cmake --build "$1" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build of $1"; }; }
configure() {
  cmake -S "$1" -B "$2" -G "$generator" >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure $1"; }
}
expect() {  # expect BUILD_DIR WANT WHAT
  local got
  got=$("$1/probe")
  [ "$got" = "$2" ] || fail "$3: the program says '$got', expected '$2'"
  echo "ok: $3: $got"
}

make_project "$work/repo"
echo "build/" >"$work/repo/.gitignore"
g init -q
g add -A
g commit -q -m first
configure "$work/repo" "$work/repo/build"
build "$work/repo/build"
expect "$work/repo/build" "$(g rev-parse --short HEAD)" "clean checkout"

# Nothing changed: the build leaves the program alone (the header is not rewritten).
stamp=$(stat -c %Y.%y "$work/repo/build/probe" "$work/repo/build/generated/epsim_commit.hpp")
sleep 1
build "$work/repo/build"
[ "$(stat -c %Y.%y "$work/repo/build/probe" "$work/repo/build/generated/epsim_commit.hpp")" = "$stamp" ] ||
  fail "a build with nothing changed rewrote the header or relinked the program"
echo "ok: nothing changed, nothing rebuilt"

# An untracked file is not a change to the source; a changed tracked file is.
echo "notes" >"$work/repo/untracked.txt"
build "$work/repo/build"
expect "$work/repo/build" "$(g rev-parse --short HEAD)" "untracked file only"
echo "# changed" >>"$work/repo/CMakeLists.txt"
build "$work/repo/build"
expect "$work/repo/build" "$(g rev-parse --short HEAD)-dirty" "tracked file changed"

# HEAD moves (a commit of a file the program does not compile): the next build names the new commit.
first=$(g rev-parse --short HEAD)
g commit -q -am second
[ "$(g rev-parse --short HEAD)" != "$first" ] || fail "the second commit has the first's hash"
build "$work/repo/build"
expect "$work/repo/build" "$(g rev-parse --short HEAD)" "after HEAD moved"

# A tarball: no git at all, and the same tree unpacked inside another checkout (the outer commit is not
# the source's).
make_project "$work/tarball"
configure "$work/tarball" "$work/tarball-build"
build "$work/tarball-build"
expect "$work/tarball-build" "unknown" "not a git checkout"
make_project "$work/repo/vendored"
configure "$work/repo/vendored" "$work/vendored-build"
build "$work/vendored-build"
expect "$work/vendored-build" "unknown" "unpacked inside another checkout"
