"""rnnbook: the package the RNN Internals notebooks import.

Modules, one job each:

- :mod:`rnnbook.environment`  set-up call for every notebook (``rnnbook.setup()``)
- :mod:`rnnbook.checking`     the check framework: random trials, comparison, feedback
- :mod:`rnnbook.oracles`      TensorFlow's real cells run with given weights (the checks' oracle)
- :mod:`rnnbook.checks`       one module per chapter: its exercises and their checks
- :mod:`rnnbook.plots`        figures that more than one chapter draws
- :mod:`rnnbook.generate`     writes learner notebooks from ``solutions/`` (``make notebooks``)
- :mod:`rnnbook.grade`        grades submitted notebooks (``python -m rnnbook.grade``)
"""
from rnnbook.environment import SetupError, setup

__all__ = ["setup", "SetupError"]
__version__ = "0.1.0"
