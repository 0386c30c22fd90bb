# SPDX-License-Identifier: Apache-2.0
"""epsim.Config: an experiment's configuration, loaded and checked by the CLI's own code."""
import json
import math
import os

from . import _epsim


def toml_value(value):
    """A Python value as the TOML literal `--set key=value` takes: bool, int, float, str (always a string,
    never re-read as a number), a list of those, or a dict (an inline table)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, os.PathLike):
        return json.dumps(os.fspath(value))
    raise TypeError(f"override value {value!r}: expected bool, int, float, str, list or dict")


def override_sets(overrides):
    """{"workload.rate_rps": 12} -> ["workload.rate_rps=12"], the CLI's --set arguments in order."""
    if overrides is None:
        return []
    if not isinstance(overrides, dict):
        raise TypeError("overrides: expected a dict of dotted config keys to values, e.g. {'workload.rate_rps': 12}")
    return [f"{key}={toml_value(value)}" for key, value in overrides.items()]


class Config:
    """An experiment's configuration: a TOML file, TOML text or the embedded demo, with overrides.

    Loading checks everything `epsim run` checks while parsing; a bad key or value raises
    epsim.ConfigError with the CLI's message (the line `epsim run` prints after "config error: ").
    """

    def __init__(self, handle):
        self._handle = handle

    @classmethod
    def load(cls, path, overrides=None):
        """The TOML file `path` (relative to the working directory, as `epsim run PATH` reads it)."""
        return cls(_epsim.Config.file(os.fspath(path), override_sets(overrides)))

    @classmethod
    def from_toml(cls, text, source="<string>", overrides=None):
        """TOML text; `source` names it in messages. Files it names are relative to the working directory."""
        return cls(_epsim.Config.text(text, source, override_sets(overrides)))

    @classmethod
    def demo(cls, overrides=None):
        """The demo shipped in epsim (examples/demo.toml), what `epsim run` runs without a CONFIG."""
        return cls(_epsim.Config.demo(override_sets(overrides)))

    def with_overrides(self, overrides):
        """A new Config: these overrides after the ones it has (as more --set options; a later value wins)."""
        return Config(self._handle.with_sets(override_sets(overrides)))

    def validate(self):
        """Builds the simulation as `epsim validate` does (placement, cost curves, memory plan, inputs)
        without running it; returns its "SOURCE: ok (...)" line, or raises epsim.ConfigError / epsim.Error."""
        return self._handle.validate().rstrip("\n")

    @property
    def source(self):
        """The name messages and summary.json's config_source give it."""
        return self._handle.source

    @property
    def path(self):
        """The TOML file, or None for text and the demo."""
        return self._handle.path

    @property
    def overrides(self):
        """The overrides as the CLI's --set arguments ("key=value")."""
        return list(self._handle.sets)

    @property
    def warnings(self):
        """Settings that are valid but have no effect (the CLI prints each as "epsim: warning: ...")."""
        return list(self._handle.warnings)

    @property
    def seed(self):
        return self._handle.seed

    def to_dict(self):
        """The effective configuration (file and overrides) as summary.json echoes it."""
        return json.loads(self._handle.echo_json)

    def __repr__(self):
        extra = f", overrides={self.overrides!r}" if self.overrides else ""
        return f"epsim.Config({self.source!r}{extra})"


def as_config(config):
    """run()'s config argument as a Config: None is the demo; a str with a newline is TOML text; another
    str or a path-like is a file."""
    if config is None:
        return Config.demo()
    if isinstance(config, Config):
        return config
    if isinstance(config, str) and "\n" in config:
        return Config.from_toml(config)
    if isinstance(config, (str, os.PathLike)):
        return Config.load(config)
    raise TypeError(f"config: expected a path, TOML text or an epsim.Config, got {type(config).__name__}")
