#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shipped accuracy suite's quick points, pinned like the golden matrix: `epsim accuracy --quick --csv`
# must print tests/data/golden/accuracy-quick.csv, so a model change shows its effect on accuracy in the
# diff. EPSIM_UPDATE_GOLDEN=1 rewrites the file (the commit says why the predictions moved).
#   accuracy_pinned_test.sh EPSIM REPO_ROOT
set -euo pipefail
epsim=$1
golden=$2/tests/data/golden/accuracy-quick.csv
got=$(mktemp)
trap 'rm -f "$got"' EXIT
"$epsim" accuracy --quick --csv -j 2 > "$got"
if [ "${EPSIM_UPDATE_GOLDEN:-}" = 1 ]; then
  cp "$got" "$golden"
  echo "rewrote $golden"
  exit 0
fi
if ! diff -u "$golden" "$got"; then
  echo "FAILED: the quick points' predictions moved (above: - pinned, + now); if the model change is meant, rerun with EPSIM_UPDATE_GOLDEN=1 and say why in the commit"
  exit 1
fi
echo "the quick points' predictions are as pinned ($(($(wc -l < "$golden") - 1)) figures)"
