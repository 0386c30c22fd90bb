#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every file the repository ships is accounted for under its licence: LICENSE is the Apache License 2.0,
# every source file carries `SPDX-License-Identifier: Apache-2.0` in its first two lines, and every other
# tracked file is matched by a data entry of NOTICE (a backquoted glob at the start of a "- " line).
#   licence_test.sh SOURCE_DIR
# Lists files with `git ls-files` in a checkout, else every file outside build/ and .git/ (a tarball).
set -euo pipefail
cd "$1"
fail=0
err() { echo "licence_test: $*" >&2; fail=1; }

grep -q '^ *Apache License$' LICENSE && grep -q '^ *Version 2.0, January 2004$' LICENSE &&
  grep -q 'END OF TERMS AND CONDITIONS' LICENSE || err "LICENSE: expected the Apache License 2.0 text"
test -s NOTICE || err "NOTICE: missing"

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files)
else
  mapfile -t files < <(find . -path ./build -prune -o -path ./.git -prune -o -type f -print | sed 's|^\./||' | sort)
fi
[ "${#files[@]}" -gt 100 ] || err "found only ${#files[@]} files: not the repository root?"

# NOTICE's data entries, as regular expressions: every backquoted token before the colon of a "- " line
# (a line may list several globs); "**" crosses "/", "*" does not.
mapfile -t globs < <(awk '/^- /{if (e != "") print e; e = $0; next} /^  /{if (e != "") e = e " " $0; next}
                           {if (e != "") print e; e = ""} END {if (e != "") print e}' NOTICE |
  sed 's/`:.*/`/' | grep -o '`[^`]*`' | tr -d '`' | sort -u)
[ "${#globs[@]}" -gt 5 ] || err "NOTICE: expected data entries (- \`glob\`: ...), found ${#globs[@]}"
regexes=()
for g in "${globs[@]}"; do
  r=$(printf '%s' "$g" | sed -e 's/[.+^$(){}|[\]/\\&/g' -e 's/\*\*/\x01/g' -e 's/\*/[^\/]*/g' -e 's/\x01/.*/g')
  regexes+=("^$r\$")
done

source_re='(\.(cpp|hpp|proto|sh|py|cmake|in)$|(^|/)CMakeLists\.txt$|^\.ci/run$)'
sources=0
data=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if [[ $f =~ $source_re ]] && [[ $f != fuzz/corpus/* ]] && [[ $f != tests/data/* ]]; then
    sources=$((sources + 1))
    head -n 2 "$f" | grep -qE '^(//|#) SPDX-License-Identifier: Apache-2\.0$' ||
      err "$f: expected '// SPDX-License-Identifier: Apache-2.0' (or '#' for scripts) in its first two lines"
    continue
  fi
  matched=0
  for r in "${regexes[@]}"; do
    if [[ $f =~ $r ]]; then matched=1; break; fi
  done
  [ "$matched" -eq 1 ] || err "$f: not a source file and matched by no data entry of NOTICE"
  data=$((data + 1))
done
[ "$fail" -eq 0 ] || exit 1
echo "licence_test: $sources source files with SPDX lines, $data other files covered by NOTICE"
