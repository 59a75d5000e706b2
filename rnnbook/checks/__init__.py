"""One module per chapter, each a :class:`rnnbook.exercise.Chapter` called ``CHAPTER``.

A notebook imports its chapter's ``check``::

    from rnnbook.checks.ch01 import check
    check(split_kernel)

The grader finds every chapter through :data:`CHAPTERS` (module name by chapter stem).
``rnnbook.progress()`` is :func:`progress`: the learner's record (:mod:`rnnbook.record`) of
the book's exercises.
"""
from __future__ import annotations

import importlib
import os

from rnnbook import record
from rnnbook.exercise import Chapter

#: notebook stem -> module that holds that chapter's exercises, in reading order
CHAPTERS = {
    "01-basic-rnn-cell": "rnnbook.checks.ch01",
    "02-lstm-gate-tensors": "rnnbook.checks.ch02",
    "03-c-state-m-state": "rnnbook.checks.ch03",
    "04-stateful-batching": "rnnbook.checks.ch04",
    "05-gradients-by-hand": "rnnbook.checks.ch05",
    "06-gru-layouts": "rnnbook.checks.ch06",
    "07-final-state": "rnnbook.checks.ch07",
}


def load(stem: str) -> Chapter:
    """The :class:`~rnnbook.exercise.Chapter` for a notebook stem such as ``01-basic-rnn-cell``."""
    if stem not in CHAPTERS:
        raise KeyError(f"no chapter is called {stem!r}; known: {', '.join(CHAPTERS)}")
    return importlib.import_module(CHAPTERS[stem]).CHAPTER


def exercises() -> list[tuple[str, list[str]]]:
    """``[(stem, [exercise numbers])]``, every chapter in book order."""
    return [(stem, [ex.number for ex in load(stem).exercises]) for stem in CHAPTERS]


def names() -> dict[str, dict[str, str]]:
    """``{stem: {exercise number: function name}}``, every chapter: the progress table
    follows an exercise by its name when an update of the book renumbers it."""
    return {stem: {ex.number: ex.name for ex in load(stem).exercises}
            for stem in CHAPTERS}


def progress(where: str | os.PathLike[str] | None = None) -> None:
    """``rnnbook.progress()``: print the exercises passed so far, per chapter. Under the grader
    (``RNNBOOK_GRADING=1``) nothing, and no chapter is loaded: a grading child's chapter
    modules are stubs that hold only ``check``."""
    if os.environ.get("RNNBOOK_GRADING") == "1":
        return None
    return record.show(exercises(), where, names())
