# SPDX-License-Identifier: Apache-2.0
"""run, sweep, place and cost: the CLI's commands in this process (never the epsim binary)."""
import json
import os
import tempfile
import warnings
from pathlib import Path

from . import _epsim
from ._config import Config, as_config, toml_value
from ._results import Result, StudyResult, load_results
from ._tables import read_table


class EpsimWarning(UserWarning):
    """What the CLI prints as "epsim: warning: ..." (a setting without effect, a looped trace)."""


def _warn(messages):
    for m in messages:
        warnings.warn(m, EpsimWarning, stacklevel=3)


def run(config=None, overrides=None, seed=None, out=None, report=False, steps=False):
    """Runs one simulation as `epsim run` does and returns its Result.

    config: a path (relative to the working directory), TOML text (a str with a newline), an epsim.Config,
    or None for the embedded demo. overrides: {"dotted.key": value} as --set. seed: as --seed (run.seed).
    out: a results directory written as `epsim run --out` writes it (staged, swapped in whole); without it
    nothing is written. report: also report.html (needs out). steps: also log every step (output.steps_csv).
    The GIL is released while it simulates.
    """
    cfg = as_config(config)
    if overrides or steps:
        cfg = cfg.with_overrides({**({"output.steps_csv": True} if steps else {}), **(overrides or {})})
    _warn(cfg.warnings)
    if report and out is None:
        raise ValueError("report=True writes report.html into the results directory: give out=")
    r = _epsim.run(cfg._handle, seed, os.fspath(out) if out is not None else None, bool(report))
    _warn(r["warnings"])
    if out is not None:
        loaded = load_results(out)
        return Result(loaded.files, dir=out, report=r["report_file"], warnings=cfg.warnings + r["warnings"],
                      wall_s=r["wall_s"], text=r["text"])
    files = {name: content.decode("utf-8") for name, content in r["files"]}
    return Result(files, warnings=cfg.warnings + r["warnings"], wall_s=r["wall_s"], text=r["text"])


def _command_error(command, rc, err):
    """The exception of a failed command, from the line the CLI printed."""
    lines = [l for l in err.splitlines() if not l.startswith("epsim: warning: ")]
    last = lines[-1] if lines else f"epsim {command} exited with {rc}"
    if last.startswith("config error: "):
        return _epsim.ConfigError(last[len("config error: "):])
    prefix = f"epsim {command}: "
    if last.startswith(prefix + "error: "):
        return _epsim.Error(last[len(prefix + "error: "):])
    if rc == 2 and last.startswith(prefix):
        return _epsim.UsageError(last[len(prefix):])
    return _epsim.Error(last)


def cli(*args):
    """`epsim ARGS...` run in this process: returns its standard output; raises epsim.ConfigError,
    epsim.UsageError or epsim.Error with the line the CLI prints on failure. Warnings become EpsimWarning."""
    args = [os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args]
    rc, out, err = _epsim.cli(args)
    out, err = out.decode("utf-8"), err.decode("utf-8")
    _warn(l[len("epsim: warning: "):] for l in err.splitlines() if l.startswith("epsim: warning: "))
    if rc != 0:
        raise _command_error(args[0] if args else "", rc, err)
    return out


def _option_args(options, repeated=()):
    """Keyword arguments as CLI options: top_k=8 -> --top-k 8; True -> a flag; False and None -> left
    out; a list -> comma-separated; a dict under a name in `repeated` -> one --NAME key=value each."""
    args = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, dict):
            if key not in repeated:
                raise TypeError(f"{key}: a dict is taken only by {', '.join(repeated) or 'no option'}")
            toml = repeated[key]
            for k, v in value.items():
                if toml:
                    text = toml_value(v)
                elif isinstance(v, (list, tuple)):
                    text = ",".join(str(x) for x in v)
                else:
                    text = str(v)
                args += [flag, f"{k}={text}"]
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return args


def _config_args(config, overrides):
    """--config FILE and --set options for cost and place: a path, or an epsim.Config from a file."""
    if config is None:
        if overrides:
            raise ValueError("overrides apply to a config: give config=")
        return []
    if isinstance(config, Config):
        if config.path is None:
            raise ValueError("this command reads its config from a file: give a path or an epsim.Config.load()")
        return ["--config", config.path] + [a for s in config.overrides for a in ("--set", s)] + _option_args(
            {"set": overrides or {}}, {"set": True})
    return ["--config", os.fspath(config)] + _option_args({"set": overrides or {}}, {"set": True})


def sweep(study, jobs=1, out=None, fresh=False):
    """Runs a study file as `epsim sweep STUDY --out OUT -j JOBS` does and returns its StudyResult.

    Without out the study runs in a temporary directory, removed afterwards; with it the directory keeps
    the outputs and the journal, so a second call resumes (fresh=True forgets the journal). The tables
    are byte-identical whatever `jobs` is.
    """
    def go(dir):
        args = ["sweep", os.fspath(study), "--out", os.fspath(dir), "-j", str(int(jobs)), "--progress", "none"]
        rc, text, err = _epsim.cli(args + (["--fresh"] if fresh else []))
        text, err = text.decode("utf-8"), err.decode("utf-8")
        _warn(l[len("epsim: warning: "):] for l in err.splitlines() if l.startswith("epsim: warning: "))
        if rc != 0:
            raise _command_error("sweep", rc, err)
        loaded = load_results(dir)
        return StudyResult(loaded.files, dir=dir if out is not None else None, saved_runs=loaded.saved_runs,
                           text=text, log=err)

    if out is not None:
        return go(out)
    with tempfile.TemporaryDirectory(prefix="epsim-sweep-") as tmp:
        return go(Path(tmp) / "study")


class Placement:
    """What `epsim place` wrote: `text` (the file), `data` (it parsed, for the JSON formats; else None),
    and `path` when out= was given. With check=, `text` is the check's report."""

    def __init__(self, text, path=None):
        self.text = text
        self.path = Path(path) if path is not None else None
        try:
            self.data = json.loads(text)
        except ValueError:
            self.data = None

    def __repr__(self):
        return f"<epsim.Placement {len(self.text)} bytes{f' in {self.path}' if self.path else ''}>"


def place(load=None, policy="eplb", *, options=None, config=None, overrides=None, out=None, **flags):
    """A placement as `epsim place --load LOAD --policy POLICY ...` computes it (any registered policy).

    options: the policy's options {"key": value} (--option key=value); config/overrides: cost curves from
    an experiment (--config, --set); out: also write the file there. Every other `epsim place` option is
    a keyword: gpus=8, nodes=1, groups=, slots=, cluster=, model=, curves=, coactivation=, seed=,
    format="epsim" (or an engine's), check=FILE, load_format=, from_step=, window_steps=, top_k=,
    tokens_per_step=. Returns a Placement.
    """
    args = ["place", "--policy", policy] + (["--load", os.fspath(load)] if load is not None else [])
    args += _option_args({"option": options or {}}, {"option": True}) + _config_args(config, overrides)
    args += _option_args(flags)
    if "check" in flags:
        return Placement(cli(*args), None)
    with tempfile.TemporaryDirectory(prefix="epsim-place-") as tmp:
        path = Path(os.fspath(out)) if out is not None else Path(tmp) / "placement"
        cli(*(args + ["--out", str(path)]))
        return Placement(path.read_bytes().decode("utf-8"), out)


def cost(gpu=None, model=None, *, config=None, overrides=None, **flags):
    """A cost table as `epsim cost ... --csv` prints it, as a table (DataFrame or structured array).

    A model's per-layer curve: cost(gpu="h100", model="qwen3-30b-a3b", tokens=[1, 64, 4096]) or
    cost(config=..., gpu_index=7); one kernel: cost(op="grouped_gemm", shape={"tokens": [64, 128]}, ...);
    one collective: cost(collective="dispatch", cluster="hgx-h200", model=...). Every other `epsim cost`
    option is a keyword (underscores for dashes: experts_active=, local_experts=, context=, speed=,
    gpu_index=, tokens=[...], bytes=[...], ...).
    """
    args = ["cost", "--csv"] + _option_args({"gpu": gpu, "model": model})
    args += _config_args(config, overrides) + _option_args(flags, {"shape": False})
    return read_table(cli(*args))
