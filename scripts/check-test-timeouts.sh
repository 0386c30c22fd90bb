#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Each test's CTest timeout against its measured time: lists every test whose TIMEOUT is under FACTOR
# (default 3) times the time CTest recorded for it (Testing/Temporary/CTestCostData.txt: its running
# mean over this build tree's runs), and exits 1 if there is one. Run it after a test run on a quiet
# machine: the times are this machine's.
#   scripts/check-test-timeouts.sh BUILD_DIR [FACTOR]
set -euo pipefail
build=${1:?usage: check-test-timeouts.sh BUILD_DIR [FACTOR]}
factor=${2:-3}
cost=$build/Testing/Temporary/CTestCostData.txt
test -f "$cost" || { echo "check-test-timeouts: $cost: no recorded test times (run ctest first)" >&2; exit 2; }
ctest --test-dir "$build" --show-only=json-v1 | python3 -c '
import json, sys
factor = float(sys.argv[2])
times = {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) == 3 and parts[0] != "---":
        times[parts[0]] = float(parts[2])
bad, worst = [], None
for t in json.load(sys.stdin)["tests"]:
    timeout = next((p["value"] for p in t.get("properties", []) if p["name"] == "TIMEOUT"), 1500)
    took = times.get(t["name"])
    if took is None or took <= 0:
        continue
    ratio = timeout / took
    if worst is None or ratio < worst[0]:
        worst = (ratio, t["name"], took, timeout)
    if ratio < factor:
        bad.append((ratio, t["name"], took, timeout))
for ratio, name, took, timeout in sorted(bad):
    print(f"{name}: {took:.1f} s measured, timeout {timeout:g} s ({ratio:.1f}x < {factor:g}x)")
if worst:
    print(f"check-test-timeouts: tightest: {worst[1]} ({worst[2]:.1f} s, timeout {worst[3]:g} s, {worst[0]:.1f}x)")
sys.exit(1 if bad else 0)
' "$cost" "$factor"
