"""Shared test helpers: the repo's paths and the exercise functions of a source notebook."""
import os
import pathlib

import pytest

from rnnbook import generate, source

ROOT = pathlib.Path(__file__).resolve().parent.parent


def notebook_functions(nb):
    """Run a notebook's code cells (checks silenced, as the grader does) and return its names.
    Cells are IPython: their magics (the set-up cell's Colab ``%pip``) become plain Python."""
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    namespace = {"__name__": "__notebook__"}
    previous = os.environ.get("RNNBOOK_GRADING")
    os.environ["RNNBOOK_GRADING"] = "1"
    try:
        for cell in nb.cells:
            if cell.cell_type == "code":
                exec(compile(transform(cell.source), "<cell>", "exec"), namespace)  # noqa: S102
    finally:
        if previous is None:
            os.environ.pop("RNNBOOK_GRADING")
        else:
            os.environ["RNNBOOK_GRADING"] = previous
    return namespace


def _per_stem(notebook):
    """stem -> namespace of ``notebook(stem)`` after running it, each run once per session."""
    cache = {}

    def get(stem):
        if stem not in cache:
            cache[stem] = notebook_functions(notebook(stem))
        return cache[stem]

    return get


def _solution(stem):
    return source.read(ROOT / "solutions" / f"{stem}.ipynb")


@pytest.fixture(scope="session")
def solutions():
    """stem -> namespace of the solutions notebook (functions defined by running it)."""
    return _per_stem(_solution)


@pytest.fixture(scope="session")
def stubs():
    """stem -> namespace of the learner notebook generated from the solutions notebook."""
    return _per_stem(lambda stem: generate.learner_copy(_solution(stem)))
