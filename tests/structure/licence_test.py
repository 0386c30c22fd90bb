#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every file the repository ships is accounted for under its licence: LICENSE is the Apache License 2.0,
every source file carries `SPDX-License-Identifier: Apache-2.0` in its first two lines, and every other
file is matched by a data entry of NOTICE (a line "- `glob`, `glob`: ..." whose globs, before the colon,
may wrap onto indented lines; "**" crosses "/", "*" does not).
    licence_test.py SOURCE_DIR
Lists files with `git ls-files` in a checkout, else every file outside build/ and .git/ (a tarball)."""
import os
import re
import subprocess
import sys

SOURCE = re.compile(r"(\.(cpp|hpp|proto|sh|py|cmake|in)$|(^|/)CMakeLists\.txt$|^\.ci/run$)")
SPDX = re.compile(r"^(//|#) SPDX-License-Identifier: Apache-2\.0$")


def tracked_files(root):
    git = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True)
    if git.returncode == 0 and os.path.exists(os.path.join(root, ".git")):  # a file in a worktree
        return [f for f in git.stdout.splitlines() if os.path.isfile(os.path.join(root, f))]
    out = []
    for base, dirs, names in os.walk(root):
        rel = os.path.relpath(base, root)
        dirs[:] = [d for d in dirs if not (rel == "." and d in ("build", ".git"))]
        out += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return sorted(out)


def notice_globs(text):
    entries, entry = [], None
    for line in text.splitlines():
        if line.startswith("- "):
            if entry is not None:
                entries.append(entry)
            entry = line
        elif line.startswith("  ") and entry is not None:
            entry += " " + line.strip()
        else:
            if entry is not None:
                entries.append(entry)
            entry = None
    if entry is not None:
        entries.append(entry)
    globs = []
    for e in entries:
        head = e.split("`:", 1)[0] + "`"
        globs += re.findall(r"`([^`]+)`", head)
    return globs


def glob_regex(glob):
    parts = [re.escape(p).replace(r"\*", "[^/]*") for p in glob.split("**")]
    return re.compile("^" + ".*".join(parts) + "$")


def main(root):
    errors = []
    licence = open(os.path.join(root, "LICENSE")).read()
    if not all(s in licence for s in ("Apache License", "Version 2.0, January 2004", "END OF TERMS AND CONDITIONS")):
        errors.append("LICENSE: expected the Apache License 2.0 text")
    notice_path = os.path.join(root, "NOTICE")
    globs = notice_globs(open(notice_path).read()) if os.path.isfile(notice_path) else []
    if len(globs) < 5:
        errors.append(f"NOTICE: expected data entries (- `glob`: ...), found {len(globs)}")
    regexes = [glob_regex(g) for g in globs]
    files = tracked_files(root)
    if len(files) < 100:
        errors.append(f"found only {len(files)} files: not the repository root?")
    sources = data = 0
    for f in files:
        if SOURCE.search(f) and not f.startswith(("fuzz/corpus/", "tests/data/")):
            sources += 1
            with open(os.path.join(root, f), errors="replace") as src:
                head = [src.readline().rstrip("\n") for _ in range(2)]
            if not any(SPDX.match(line) for line in head):
                errors.append(f"{f}: expected '// SPDX-License-Identifier: Apache-2.0' (or '#' for scripts) "
                              "in its first two lines")
        elif any(r.match(f) for r in regexes):
            data += 1
        else:
            errors.append(f"{f}: not a source file and matched by no data entry of NOTICE")
    for e in errors:
        print(f"licence_test: {e}", file=sys.stderr)
    if errors:
        return 1
    print(f"licence_test: {sources} source files with SPDX lines, {data} other files covered by NOTICE")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
