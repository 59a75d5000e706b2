"""Shared test helpers: the repo's paths, the exercise functions of a source notebook, a
check's verdict on a function (:func:`verdict`), and whether the grader's walls can stand
here (a sandbox test skips where they cannot, and fails instead under ``CI=true``)."""
import functools
import os
import pathlib
import subprocess

import pytest

from rnnbook import generate, source
from rnnbook.byhand import answer
from rnnbook.compare import evaluate

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: what CI services set (GitHub Actions, GitLab, and most others: ``CI=true``)
CI_VALUES = ("true", "1", "yes")


@functools.cache
def walls_stand():
    """Whether user namespaces work here (the grader's walls need them)."""
    try:
        probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"],
                               capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):  # no unshare(1) at all
        return False
    return probe.returncode == 0


def in_ci(environ=None):
    """Whether this run is CI's (``CI=true``, as GitHub Actions and most CI services set)."""
    return (os.environ if environ is None else environ).get("CI", "").strip().lower() in CI_VALUES


def need_walls(reason, stand=None, environ=None):
    """Skip the calling test (with ``reason``) where the grader's walls cannot stand here, or,
    under ``CI=true``, FAIL it: a CI machine must run the sandbox-escape tests, so a green CI
    means they ran. ``stand`` defaults to :func:`walls_stand`."""
    if walls_stand() if stand is None else stand:
        return
    if in_ci(environ):
        pytest.fail(f"{reason}, and CI=true: the sandbox tests must run in CI. Give this machine "
                    "unprivileged user namespaces (`unshare --user --map-root-user --mount true` "
                    "must work; on Ubuntu 23.10+: `sudo sysctl -w "
                    "kernel.apparmor_restrict_unprivileged_userns=0`)", pytrace=False)
    pytest.skip(reason)


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


# ---------------------------------------------------------------------------------------------
# `make exercise-check`: only the tests that concern one exercise or one chapter notebook


def pytest_addoption(parser):
    parser.addoption("--focus", default="", metavar="STEM[:FUNCTION]",
                     help="keep only the tests of one chapter notebook (STEM), or of one of its "
                          "exercises (STEM:FUNCTION); scripts/focus.py passes it")


def concerns(item, stem, function=""):
    """Whether test ``item`` is about chapter ``stem`` (and exercise ``function``, if given).

    A test parametrized by chapter (``stem``), exercise (``name``) or notebook (``path``) is
    kept when those are the ones asked about; a test of the chapter's own module
    (``tests/test_chNN.py``) when its name holds the function's; one that needs the whole book
    built (``built``) never (``make test`` runs those); every other test of the files asked
    for (the book-wide checks: names unique, notebooks up to date, ...) always.
    """
    fixtures = getattr(item, "fixturenames", ())
    if "built" in fixtures or "build" in fixtures:
        return False
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "stem" in params and params["stem"] != stem:
        return False
    if "path" in params and pathlib.Path(str(params["path"])).stem != stem:
        return False
    if function and "name" in params and params["name"] != function:
        return False
    chapter_module = f"test_ch{stem[:2]}"
    module = getattr(getattr(item, "module", None), "__name__", "").rpartition(".")[2]
    if function and module.startswith(chapter_module) and "name" not in params:
        return function in getattr(item, "originalname", item.name)
    return True


def pytest_collection_modifyitems(config, items):
    focus = config.getoption("--focus", default="")
    if not focus:
        return
    stem, _, function = focus.partition(":")
    kept, dropped = [], []
    for item in items:
        (kept if concerns(item, stem, function) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def verdict(chapter, name, fn, seed=0, oracle=False):
    """The check's verdict on ``fn`` for exercise ``name`` of ``chapter`` on ``seed``'s
    trials: the expected answers from the NumPy reference (as the sweep), or from TensorFlow
    (``oracle=True``, as a notebook's check)."""
    ex = chapter[name]
    cases = chapter.cases(name, seed)
    expect = ex.oracle if oracle else ex.reference
    return evaluate(ex, cases, [expect(c) for c in cases], [answer(ex, fn, c) for c in cases])
