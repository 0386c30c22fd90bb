# SPDX-License-Identifier: Apache-2.0
"""CSV text as a table: a pandas DataFrame, or without pandas a NumPy structured array.

Every number is parsed exactly (epsim prints shortest round-trip decimals), so a table holds the very
doubles the simulator computed. Only an empty field is missing (NaN); words such as "none" stay text.
Set EPSIM_NO_PANDAS=1 to get structured arrays even where pandas is installed.
"""
import csv
import io
import os

import numpy as np

_pandas = None
if os.environ.get("EPSIM_NO_PANDAS", "") in ("", "0"):
    try:
        import pandas as _pandas
    except ImportError:  # NumPy structured arrays instead
        _pandas = None


def have_pandas():
    """Whether tables are pandas DataFrames (else NumPy structured arrays)."""
    return _pandas is not None


def _column(values):
    """One column's values (strings) as int64, float64 (empty: NaN) or text, as pandas would type it."""
    present = [v for v in values if v != ""]
    if len(present) == len(values):
        try:
            return np.array([int(v) for v in values], dtype=np.int64)
        except ValueError:
            pass
    try:
        return np.array([float(v) if v != "" else np.nan for v in values], dtype=np.float64)
    except ValueError:
        width = max((len(v) for v in values), default=1)
        return np.array(values, dtype=f"U{max(width, 1)}")


def read_table(text):
    """CSV text (a header line, then rows) as a DataFrame or a structured array."""
    if _pandas is not None:
        return _pandas.read_csv(io.StringIO(text), float_precision="round_trip", keep_default_na=False,
                                na_values=[""])
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return np.zeros(0, dtype=[])
    header, body = rows[0], rows[1:]
    columns = [_column([r[i] if i < len(r) else "" for r in body]) for i in range(len(header))]
    table = np.zeros(len(body), dtype=[(name, c.dtype) for name, c in zip(header, columns)])
    for name, c in zip(header, columns):
        table[name] = c
    return table


def columns(table):
    """A table's column names, whichever kind it is."""
    return list(table.columns) if _pandas is not None and isinstance(table, _pandas.DataFrame) else list(
        table.dtype.names or ())
