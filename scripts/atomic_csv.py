# SPDX-License-Identifier: Apache-2.0
"""Writes a points.csv whole, then renames it into place, so an interrupted run leaves no half table
(scripts/routing_skew.py, scripts/vibe_breakdown.py)."""
import csv
import os


def write_rows(path, columns, rows):
    """`rows` (dicts keyed by `columns`) to `path`, floats in 6 significant digits."""
    with open(path + ".tmp", "w", newline="") as h:
        w = csv.DictWriter(h, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    os.replace(path + ".tmp", path)
