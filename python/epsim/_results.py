# SPDX-License-Identifier: Apache-2.0
"""What a run or a study produced, as Python objects; load_results reads a results directory back.

A Result is built from the files of a results directory (in memory for run() without out=), so it holds
exactly what `epsim run` writes: the same summary.json, the same CSV rows.
"""
import json
import os
from pathlib import Path

from ._tables import read_table

# A run's files and a study's, as `epsim run` and `epsim sweep` name them (docs/outputs.md, docs/studies.md).
RUN_TABLES = ("requests", "steps", "tokens", "layers", "events", "gpu_layers")
STUDY_TABLES = ("runs", "points", "scaling", "distribution", "max_rate", "ranking", "rebalance", "break_even")


class Summary(dict):
    """summary.json as a dict, equal to json.load() of the CLI's file. Its headline metrics (the "metrics"
    object: ttft_ms, tpot_ms, throughput_rps, slo, ...) are also read at the top level, which has no key
    of the same name: summary["ttft_ms"] is summary["metrics"]["ttft_ms"]."""

    def _metrics(self):
        m = dict.get(self, "metrics")
        return m if isinstance(m, dict) else {}

    def __missing__(self, key):
        metrics = self._metrics()
        if key in metrics:
            return metrics[key]
        raise KeyError(key)

    def __contains__(self, key):
        return dict.__contains__(self, key) or key in self._metrics()

    def get(self, key, default=None):
        return self[key] if key in self else default


class Result:
    """One run: summary (Summary), requests and steps (tables: pandas DataFrames, or NumPy structured
    arrays without pandas; steps is None unless the run logged its steps), every CSV log in `tables`,
    timeline (timeline.json as a dict, when logged), the files' text in `files`, and where they are
    (`dir`, `report`) when written."""

    def __init__(self, files, dir=None, report=None, warnings=(), wall_s=None, text=None):
        self.files = dict(files)
        self.dir = Path(dir) if dir is not None else None
        self.report = Path(report) if report is not None else None
        self.warnings = list(warnings)
        self.wall_s = wall_s
        self.text = text
        if "summary.json" not in self.files:
            raise ValueError("a run's results need summary.json")
        self.summary = Summary(json.loads(self.files["summary.json"]))
        self.tables = {name: read_table(self.files[name + ".csv"]) for name in RUN_TABLES
                       if name + ".csv" in self.files}
        self.timeline = json.loads(self.files["timeline.json"]) if "timeline.json" in self.files else None

    @property
    def requests(self):
        return self.tables["requests"]

    @property
    def steps(self):
        return self.tables.get("steps")

    def __str__(self):
        return self.text if self.text is not None else repr(self)

    def __repr__(self):
        where = f" in {self.dir}" if self.dir is not None else ""
        return f"<epsim.Result {self.summary.get('config_source')}: {len(self.requests)} requests{where}>"


class StudyResult:
    """One study: study.json as `study`, its tables (runs, points and the study kind's own: scaling,
    distribution, max_rate, ranking, rebalance, break_even; None where the kind has none) also in `tables`,
    the saved runs (with
    save_runs) as Results by name ("p0000-r000"), the files' text, the directory, and the table the CLI
    prints (`text`, from sweep())."""

    def __init__(self, files, dir=None, saved_runs=None, text=None, log=None):
        self.files = dict(files)
        self.dir = Path(dir) if dir is not None else None
        self.text = text
        self.log = log
        if "study.json" not in self.files:
            raise ValueError("a study's results need study.json")
        self.study = json.loads(self.files["study.json"])
        self.tables = {name: read_table(self.files[name + ".csv"]) for name in STUDY_TABLES
                       if name + ".csv" in self.files}
        self.saved_runs = dict(saved_runs or {})

    def __getattr__(self, name):
        if name in STUDY_TABLES:
            return self.tables.get(name)
        raise AttributeError(name)

    def __str__(self):
        return self.text if self.text is not None else repr(self)

    def __repr__(self):
        where = f" in {self.dir}" if self.dir is not None else ""
        return f"<epsim.StudyResult {self.study.get('study', '')}: {len(self.tables['runs'])} runs{where}>"


def _read_files(dir, names):
    files = {}
    for name in names:
        p = Path(dir) / name
        if p.is_file():
            files[name] = p.read_bytes().decode("utf-8")
    return files


def load_results(dir):
    """A results directory written by `epsim run` (or run(out=...)) as a Result, or by `epsim sweep`
    (or sweep(out=...)) as a StudyResult."""
    dir = Path(os.fspath(dir))
    if (dir / "summary.json").is_file():
        names = ["summary.json", "timeline.json"] + [t + ".csv" for t in RUN_TABLES]
        report = dir / "report.html"
        return Result(_read_files(dir, names), dir=dir, report=report if report.is_file() else None)
    if (dir / "study.json").is_file():
        saved = {}
        runs = dir / "runs"
        if runs.is_dir():
            for run in sorted(runs.iterdir()):
                if (run / "summary.json").is_file():
                    saved[run.name] = load_results(run)
        names = ["study.json"] + [t + ".csv" for t in STUDY_TABLES]
        return StudyResult(_read_files(dir, names), dir=dir, saved_runs=saved)
    raise FileNotFoundError(f"{dir}: no summary.json (a run's results) or study.json (a study's)")
