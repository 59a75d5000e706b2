"""One module per chapter, each a :class:`rnnbook.checking.Chapter` called ``CHAPTER``.

A notebook imports its chapter's ``check``::

    from rnnbook.checks.ch01 import check
    check(split_kernel)

The grader finds every chapter through :data:`CHAPTERS` (module name by chapter stem).
"""
import importlib

#: notebook stem -> module that holds that chapter's exercises, in reading order
CHAPTERS = {
    "01-basic-rnn-cell": "rnnbook.checks.ch01",
    "02-lstm-gate-tensors": "rnnbook.checks.ch02",
    "03-c-state-m-state": "rnnbook.checks.ch03",
    "04-stateful-batching": "rnnbook.checks.ch04",
    "05-gradients-by-hand": "rnnbook.checks.ch05",
}


def load(stem):
    """The :class:`~rnnbook.checking.Chapter` for a notebook stem such as ``01-basic-rnn-cell``."""
    if stem not in CHAPTERS:
        raise KeyError(f"no chapter is called {stem!r}; known: {', '.join(CHAPTERS)}")
    return importlib.import_module(CHAPTERS[stem]).CHAPTER
