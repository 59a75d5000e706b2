"""rnnbook: the package the RNN Internals notebooks import.

Modules, one job each:

- :mod:`rnnbook.environment`  set-up call for every notebook (``rnnbook.setup()``)
- :mod:`rnnbook.exercise`     the exercise model: Exercise, Mistake, Chapter (cases, ``check``)
- :mod:`rnnbook.compare`      an answer against the expected one: the verdict, the mistake
- :mod:`rnnbook.byhand`       calls the learner's function; keeps by-hand exercises by hand
- :mod:`rnnbook.memo`         each reference or mistake model answers each case once
- :mod:`rnnbook.plaindata`    answers as plain data (``to_plain``, ``Raised``), NumPy only
- :mod:`rnnbook.oracles`      TensorFlow's real cells run with given weights (the checks' oracle)
- :mod:`rnnbook.checks`       one module per chapter (and ``common``): exercises and their checks
- :mod:`rnnbook.reference`    the one NumPy reference of the cells (instructor side: not shipped)
- :mod:`rnnbook.backward`     the one NumPy backward pass of the cells (instructor side too)
- :mod:`rnnbook.record`       a self-learner's passed exercises, in ~/.rnnbook (``rnnbook.progress()``)
- :mod:`rnnbook.plots`        every figure of the book
- :mod:`rnnbook.numbers`      the numbers a chapter's prose states, glued from its run
- :mod:`rnnbook.tasks`        Chapter 4's small training tasks
- :mod:`rnnbook.padded`       Chapter 7's runs of the real APIs on one padded batch
- :mod:`rnnbook.graphs`       writing TF graphs for TensorBoard, reading them back, serving them
- :mod:`rnnbook.notebook`     reads a notebook's exercise cells (headers, functions, changed?)
- :mod:`rnnbook.source`       reads the one source: exercise headers, points, solution markers
- :mod:`rnnbook.generate`     writes learner notebooks from ``solutions/`` (``make notebooks``)
- :mod:`rnnbook.workspace`    the learner's own my-notebooks/, updated (``make workspace``)
- :mod:`rnnbook.grading`      the instructor's side: grader, Gradescope, releases (never
                              shipped to learners; ``python -m rnnbook.grading``)
"""
from __future__ import annotations

from typing import Any

__all__ = ["setup", "SetupError", "progress"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``rnnbook.setup``, ``rnnbook.SetupError`` and ``rnnbook.progress()`` (the table of
    exercises passed so far), imported on first use, so that a module that
    needs only the standard library (``rnnbook.graphs``, for the screenshot script) imports no
    NumPy."""
    if name == "progress":
        from rnnbook import checks

        return checks.progress
    if name in __all__:
        from rnnbook import environment

        return getattr(environment, name)
    raise AttributeError(f"module 'rnnbook' has no attribute {name!r}")
