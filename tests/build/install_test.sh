#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `cmake --install` from the build tree into a staging root (DESTDIR, prefix /usr, as a packager runs
# it): epsim in bin, the README, licence, changelog, docs, examples and data under share/doc/epsim with
# the repository's layout; the installed binary, run from an unrelated directory, prints the build's
# version line, runs the embedded demo and validates an installed example (nothing read from the
# source or build tree).
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

DESTDIR="$work/root" cmake --install "$build" --prefix /usr >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install"; }
root="$work/root/usr"
doc="$root/share/doc/epsim"
test -x "$root/bin/epsim" || fail "no executable bin/epsim"
for f in README.md LICENSE CHANGELOG.md copyright docs/configuration.md docs/packaging.md \
         examples/demo.toml examples/studies/compare-policies.toml data/profiles/public-h100.csv; do
  test -f "$doc/$f" || fail "share/doc/epsim/$f not installed"
done
[ ! -e "$src/NOTICE" ] || test -f "$doc/NOTICE" || fail "NOTICE not installed"
# Every doc page and example of the checkout is there, byte for byte.
for f in "$src"/docs/*.md "$src"/examples/*.toml "$src"/examples/*/*.toml; do
  rel=${f#"$src"/}
  cmp -s "$f" "$doc/$rel" || fail "share/doc/epsim/$rel differs from the checkout's or is missing"
done
# Only bin/ and share/doc/ are installed: nothing else lands in the prefix.
others=$(cd "$root" && find . -type f ! -path './bin/epsim' ! -path './share/doc/epsim/*')
[ -z "$others" ] || fail "unexpected files installed: $others"

# From a directory that is neither the checkout nor the build.
mkdir "$work/elsewhere"
cd "$work/elsewhere"
version=$("$root/bin/epsim" --version)
[ "$version" = "$("$build/epsim" --version)" ] || fail "installed --version '$version' differs from the build's"
"$root/bin/epsim" run --out "$work/elsewhere/demo" >"$work/run.log" 2>&1 || { cat "$work/run.log"; fail "run"; }
test -s demo/summary.json || fail "the installed binary's demo wrote no summary.json"
"$root/bin/epsim" validate "$doc/examples/deployments/sglang-decode-ep72.toml" >"$work/validate.log" 2>&1 ||
  { cat "$work/validate.log"; fail "validate of an installed example"; }
echo "ok: installed $(cd "$root" && find . -type f | wc -l) files; $version; demo and an installed example from $PWD"
