#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package CPack builds from the build tree (cmake/packaging.cmake): its control fields
# (name, the project's version, section, maintainer, a Depends that dpkg-shlibdeps filled with the
# libraries the binary links, nodejs recommended), its files (usr/bin/epsim, the docs), and the binary
# extracted from it running the demo from an unrelated directory. Installing it with dpkg touches the
# system, so that is done only by CI (.ci/run), not here.
#   deb_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

version=$(sed -nE 's/^project\(epsim VERSION ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project(epsim VERSION x.y.z) in CMakeLists.txt"
cpack --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail cpack; }
arch=$(dpkg --print-architecture)
deb="$work/out/epsim_${version}_${arch}.deb"
test -f "$deb" || { ls "$work/out"; fail "no epsim_${version}_${arch}.deb"; }

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = epsim ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version), CMakeLists.txt says $version"
[ "$(field Section)" = science ] || fail "Section: $(field Section)"
[ "$(field Architecture)" = "$arch" ] || fail "Architecture: $(field Architecture)"
[ -n "$(field Maintainer)" ] || fail "no Maintainer"
[[ "$(field Description)" == *"expert-parallel"* ]] || fail "Description: $(field Description)"
[[ "$(field Description)" != *";"* ]] || fail "Description holds a CMake list separator: $(field Description)"
[ -z "$(field Homepage)" ] || [[ "$(field Homepage)" != *example* ]] || fail "placeholder Homepage: $(field Homepage)"
# Depends: the package of every library the binary names (NEEDED) is there, so dpkg-shlibdeps ran and
# nothing it found was dropped.
depends=$(field Depends)
tr ',|' '\n\n' <<<"$depends" | awk 'NF {print $1}' | sort -u >"$work/depends.txt"
owner() {  # the package shipping a library, by its real path or its /usr-merged alias
  local real
  real=$(realpath "$1")
  { dpkg -S "$real" 2>/dev/null || dpkg -S "${real#/usr}" 2>/dev/null || dpkg -S "$1" 2>/dev/null; } | head -1 | cut -d: -f1
}
needed=0
for lib in $(readelf -d "$build/epsim" | awk '/NEEDED/ {gsub(/[][]/, "", $5); print $5}'); do
  # "libx.so => /path (addr)", or for the dynamic loader (NEEDED where PIC code uses TLS) "/path (addr)".
  path=$(ldd "$build/epsim" | awk -v l="$lib" '$1 == l && $3 ~ /^\// {print $3}
                                                 $1 ~ /^\// && $1 ~ ("/" l "$") {print $1}' | head -1)
  [ -n "$path" ] || fail "ldd does not resolve $lib"
  pkg=$(owner "$path")
  [ -n "$pkg" ] || fail "no package owns $path"
  # Named, or named through a virtual package it provides (libspdlog1.10 provides libspdlog1.10-fmt9).
  names=$(printf '%s\n' "$pkg"; dpkg-query -W -f='${Provides}' "$pkg" | tr ',' '\n' | awk 'NF {print $1}')
  grep -qxFf <(printf '%s\n' "$names") "$work/depends.txt" ||
    fail "the binary needs $lib from $pkg, which Depends does not name: $depends"
  needed=$((needed + 1))
done
[ "$needed" -ge 3 ] || fail "only $needed libraries checked"
[[ "$(field Recommends)" == *nodejs* ]] || fail "Recommends lacks nodejs (epsim report draws SVGs with it)"
dpkg-deb -I "$deb" >"$work/info.txt"

# Contents: the binary in usr/bin, the docs under usr/share/doc/epsim, nothing outside usr/.
dpkg-deb -c "$deb" | awk '{print $6}' >"$work/contents.txt"
for f in ./usr/bin/epsim ./usr/share/doc/epsim/README.md ./usr/share/doc/epsim/LICENSE \
         ./usr/share/doc/epsim/copyright ./usr/share/doc/epsim/CHANGELOG.md ./usr/share/doc/epsim/docs/packaging.md \
         ./usr/share/doc/epsim/examples/demo.toml; do
  grep -qxF "$f" "$work/contents.txt" || fail "$f is not in the package"
done
! grep -v '^\./usr/' "$work/contents.txt" | grep -qv '^\./$' || fail "files outside usr/: $(grep -v '^\./usr/' "$work/contents.txt")"
dpkg-deb -c "$deb" | awk '$6 == "./usr/bin/epsim" {print $1, $2}' | grep -q '^-rwxr-xr-x root/root$' ||
  fail "usr/bin/epsim is not -rwxr-xr-x root/root: $(dpkg-deb -c "$deb" | grep usr/bin/epsim)"

# The extracted binary runs from an unrelated directory and prints the build's version line.
dpkg-deb -x "$deb" "$work/x"
mkdir "$work/elsewhere"
cd "$work/elsewhere"
[ "$("$work/x/usr/bin/epsim" --version)" = "$("$build/epsim" --version)" ] || fail "--version of the packaged binary"
"$work/x/usr/bin/epsim" run --out demo >"$work/run.log" 2>&1 || { cat "$work/run.log"; fail "packaged epsim run"; }
test -s demo/summary.json || fail "the packaged binary's demo wrote no summary.json"
echo "ok: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB): Depends: $depends"
