# SPDX-License-Identifier: Apache-2.0
"""epsim from Python: runs, studies, placements and cost tables, computed in this process by the same C++
as the epsim command line, with the same numbers and messages (docs/python.md).

    import epsim
    r = epsim.run("examples/demo.toml", overrides={"workload.rate_rps": 20})
    r.summary["ttft_ms"]["p90"], r.requests.head()
"""
from . import _epsim
from ._commands import EpsimWarning, Placement, cli, cost, place, run, sweep
from ._config import Config
from ._results import Result, StudyResult, Summary, load_results
from ._tables import have_pandas

Error = _epsim.Error
ConfigError = _epsim.ConfigError
UsageError = _epsim.UsageError
__version__ = _epsim.version


def set_log_level(level):
    """What epsim logs on stderr: trace, debug, info, warn (the default, as the CLI's), error or off."""
    _epsim.set_log_level(level)


__all__ = ["Config", "ConfigError", "EpsimWarning", "Error", "Placement", "Result", "StudyResult", "Summary",
           "UsageError", "cli", "cost", "have_pandas", "load_results", "place", "run", "set_log_level", "sweep"]
