#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/install-deps.sh's two sets fit their jobs.

The base set (scripts/demo.sh, building and running epsim) must provide, with what those packages pull
in, every system header and library the build of the epsim binary used (Ninja's dependency log and the
link's inputs, mapped to packages with dpkg -S) and every command demo.sh runs; it must hold none of the
test tools the issue names. The base and --dev sets together must provide every header and library the
whole build used (tests included) and every command the test scripts, CI and lint run. demo.sh installs
the base set and builds without the tests; test.sh installs --dev; CI runs test.sh.

    install_deps_test.py SOURCE_DIR BUILD_DIR   (BUILD_DIR: a Ninja build of everything, e.g. build/release)
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys

SRC, BUILD = (os.path.realpath(a) for a in sys.argv[1:3])
FAILURES: list[str] = []

# Test tools the issue names: never in the base set, always in --dev.
DEV_ONLY = ["catch2", "chromium", "fonts-liberation", "clang-15", "libfuzzer-15-dev", "clang-format-15",
            "clang-tidy-15"]


def run(*cmd: str, check: bool = True) -> str:
    return subprocess.run(cmd, check=check, capture_output=True, text=True).stdout


def fail(msg: str) -> None:
    FAILURES.append(msg)
    print("FAIL:", msg)


def package_set(*flags: str) -> list[str]:
    return run("bash", os.path.join(SRC, "scripts/install-deps.sh"), "--list", *flags).split()


def closure(packages: list[str]) -> set[str]:
    """The packages and everything they depend on (every alternative: an upper bound), plus the ones
    every Debian system has (Essential or Priority required)."""
    out = run("apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
              "--no-breaks", "--no-replaces", "--no-enhances", *packages)
    names = {line.strip() for line in out.splitlines() if line and not line.startswith(" ")}
    for line in run("dpkg-query", "-W", "-f=${Package} ${Essential} ${Priority}\n").splitlines():
        name, essential, priority = (line.split() + ["", ""])[:3]
        if essential == "yes" or priority == "required":
            names.add(name)
    return {n.split(":")[0] for n in names}


OWNERS: dict[str, str] = {}


def owners(paths: set[str]) -> dict[str, str]:
    """path -> the package shipping it: by the path, its real path, or its /usr-merged alias."""
    found: dict[str, str] = {p: OWNERS[p] for p in paths if p in OWNERS}
    todo = {p: [p, os.path.realpath(p)] for p in paths}
    for variant in range(3):
        queries = {}
        for p, (given, real) in todo.items():
            if p in found:
                continue
            q = [given, real, real.removeprefix("/usr")][variant]
            queries[q] = p
        if not queries:
            break
        out = subprocess.run(["dpkg", "-S", *queries], capture_output=True, text=True).stdout
        for line in out.splitlines():
            pkgs, _, path = line.partition(": ")
            if path in queries and queries[path] not in found:
                found[queries[path]] = pkgs.split(",")[0].split(":")[0].strip()
    OWNERS.update(found)
    return found


def build_inputs(target: str | None) -> set[str]:
    """System files (/usr) a Ninja build read: the link inputs of TARGET (all targets when None) and
    the headers its objects included."""
    inputs = run("ninja", "-C", BUILD, "-t", "inputs", *([target] if target else [])).split()
    objects = [i for i in inputs if i.endswith(".o")] if target else []
    deps = run("ninja", "-C", BUILD, "-t", "deps", *objects)
    files = {i for i in inputs if i.startswith("/usr/")}
    files |= {line.strip() for line in deps.splitlines() if line.startswith("    /usr/")}
    return files


def check_files(files: set[str], allowed: set[str], what: str) -> None:
    found = owners(files)
    for path in sorted(files - found.keys()):
        fail(f"{what}: no package ships {path}")
    missing: dict[str, str] = {}
    for path, pkg in found.items():
        if pkg not in allowed:
            missing.setdefault(pkg, path)
    for pkg, path in sorted(missing.items()):
        fail(f"{what}: {path} comes from {pkg}, which the set does not install")
    print(f"ok: {what}: {len(files)} system files from {len(set(found.values()))} packages")


# Debian's own directories: a command found only in /usr/local or a user's tree is no package's.
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
KEYWORDS = set(run("bash", "-c", "compgen -b; compgen -k").split())
COMMAND = re.compile(r"(?:^|[;&|(!`{]|\$\(|\b(?:then|do|else|exec|env)\s)\s*"
                     r"(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*([a-z][a-z0-9+._-]*)(?=\s|$|[;&|)])", re.M)


def shell_code(text: str) -> str:
    """The text a shell runs as commands: comments, heredoc bodies and quoted text blanked (a $(...)
    inside double quotes kept)."""
    lines, out_lines, heredoc = text.split("\n"), [], None
    for line in lines:
        if heredoc:
            if line.strip() == heredoc:
                heredoc = None
            out_lines.append("")
            continue
        m = re.search(r"<<-?\s*['\"]?([A-Za-z_]+)['\"]?", line)
        heredoc = m.group(1) if m else None
        out_lines.append(line)
    text, out, stack, i = "\n".join(out_lines), [], ["code"], 0
    while i < len(text):
        c, top = text[i], stack[-1]
        if top == "single":
            if c == "'":
                stack.pop()
            i += 1
            continue
        if c == "\\":
            i += 2
            continue
        if top == "double":
            if c == '"':
                stack.pop()
                out.append("Q")
            elif text.startswith("$(", i):
                stack.append("subst")
                out.append("$(")
                i += 1
            i += 1
            continue
        # code or a command substitution
        if c == "#" and (i == 0 or text[i - 1] in " \t\n;("):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        if c == "'":
            stack.append("single")
        elif c == '"':
            stack.append("double")
        elif c == "(" and top == "subst":
            stack.append("subst")
            out.append(c)
        elif c == ")" and top == "subst":
            stack.pop()
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def commands(path: str) -> set[str]:
    code = shell_code(open(path, encoding="utf-8").read())
    functions = set(re.findall(r"^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\(\)", code, re.M))
    return set(COMMAND.findall(code)) - KEYWORDS - functions - {"epsim"}


def check_commands(scripts: list[str], allowed: set[str], what: str) -> None:
    programs = {}
    for script in scripts:
        for c in commands(script):
            where = shutil.which(c, path=SYSTEM_PATH)
            if where:  # a command not installed here fails the test that runs it anyway
                programs.setdefault(where, f"{os.path.relpath(script, SRC)} runs {c}")
    found = owners(set(programs))
    for where, why in sorted(programs.items()):
        pkg = found.get(where)
        if pkg is None:
            fail(f"{what}: {why} ({where}), which no package ships")
        elif pkg not in allowed:
            fail(f"{what}: {why} ({where}) from {pkg}, which the set does not install")
    print(f"ok: {what}: {len(programs)} commands of {len(scripts)} scripts")


def calls(script: str) -> list[str]:
    code = shell_code(open(os.path.join(SRC, script), encoding="utf-8").read())
    return [line.strip() for line in code.splitlines() if "install-deps.sh" in line or "test.sh" in line]


base = package_set()
full = package_set("--dev")
dev = [p for p in full if p not in base]
if full[: len(base)] != base:
    fail("--dev does not install the base set")
for p in DEV_ONLY:
    if p in base:
        fail(f"the base set installs the test tool {p}")
    if p not in dev:
        fail(f"--dev does not install the test tool {p}")
for p in set(base) & set(dev):
    fail(f"{p} is in both sets")

# demo.sh: the base set and no tests; test.sh: --dev and the tests; CI: test.sh.
demo = calls("scripts/demo.sh")
if demo != ["bash scripts/install-deps.sh"]:
    fail(f"scripts/demo.sh must run 'bash scripts/install-deps.sh' (no --dev) once: {demo}")
if "-DEPSIM_BUILD_TESTS=OFF" not in open(os.path.join(SRC, "scripts/demo.sh"), encoding="utf-8").read():
    fail("scripts/demo.sh configures with the tests (Catch2 is not in the base set)")
if calls("scripts/test.sh") != ["bash scripts/install-deps.sh --dev"]:
    fail(f"scripts/test.sh must run 'bash scripts/install-deps.sh --dev': {calls('scripts/test.sh')}")
if not any(line.startswith("bash scripts/test.sh") for line in calls(".ci/run")):
    fail(".ci/run does not run scripts/test.sh")

base_closure, full_closure = closure(base), closure(full)
everything = build_inputs(None)
owners(everything)
check_files(build_inputs("epsim"), base_closure, "base set builds epsim")
check_files(everything, full_closure, "base + dev sets build everything")
check_commands([os.path.join(SRC, "scripts/demo.sh")], base_closure, "base set runs scripts/demo.sh")
test_scripts = [os.path.join(SRC, ".ci/run")] + sorted(
    glob.glob(os.path.join(SRC, "scripts/*.sh")) + glob.glob(os.path.join(SRC, "tests/**/*.sh"), recursive=True)
    + glob.glob(os.path.join(SRC, "examples/**/*.sh"), recursive=True))
check_commands(test_scripts, full_closure, "base + dev sets run the test, CI and lint scripts")
sys.exit(1 if FAILURES else 0)
