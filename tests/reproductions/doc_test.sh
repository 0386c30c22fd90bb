#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/reproductions.md's generated blocks are what the reproduction studies give with this build: each
# study is run as shipped (gen-reproductions.sh --produce) and gen-reproductions.sh --check compares (it
# prints the difference and fails on any).   doc_test.sh EPSIM REPO_ROOT
set -euo pipefail
epsim=$1
root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bash "$root/scripts/gen-reproductions.sh" --produce "$out" "$epsim" >/dev/null
bash "$root/scripts/gen-reproductions.sh" --check "$out"
