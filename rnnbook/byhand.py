"""Calling the learner's function on a case, and the guard that keeps by hand by hand.

:func:`answer` calls a function the way its exercise says, on a copy of the case, and returns
its answer as plain data, or a :class:`~rnnbook.plaindata.Raised` when it raised (:func:`raised`
points at the learner's own line). A by-hand exercise's function runs under a
:class:`ByHandGuard`, which notes any call into TensorFlow, Keras or rnnbook
(:data:`FORBIDDEN`): such an answer is a ``Raised`` of kind :data:`BY_HAND`.
"""
from __future__ import annotations

import importlib.util
import linecache
import os
import sys
import sysconfig
import traceback
from typing import Any, Callable

import numpy as np

from rnnbook.plaindata import Case, Raised, Watch, to_plain, where

BY_HAND = "ByHand"  # the kind of Raised for a by-hand exercise answered with a library
#: what a by-hand answer may not call: TensorFlow, Keras and this package (its checks, oracles
#: and reference would answer the exercise)
FORBIDDEN = ("tensorflow", "keras", "tf_keras", "rnnbook")


def answer(ex: Any, fn: Callable[..., Any], case: Case) -> Any:
    """Call ``fn`` on ``case`` the way exercise ``ex`` says; exceptions become :class:`Raised`.

    A by-hand exercise's function is watched while it runs: a call into TensorFlow, Keras or
    rnnbook makes the answer a :class:`Raised` of kind ``ByHand`` (no credit, and says why).
    Every function is watched for changing its arguments in place
    (:class:`~rnnbook.plaindata.Watch`): such an answer is a ``Raised`` of kind ``CHANGED``,
    as in the grader's NumPy-only child.
    """
    case = {k: _copy(v) for k, v in case.items()}
    guard = ByHandGuard(fn) if ex.by_hand else None
    watch = Watch(guard or fn, names_of=fn)
    try:
        result = to_plain(ex.call(watch, case))
    except Exception as error:  # noqa: BLE001 - every learner error becomes feedback
        return raised(error)
    if guard is not None and guard.offence:
        return Raised(BY_HAND, guard.offence)
    return watch.raised() or result


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


def _forbidden_dirs() -> tuple[str, ...]:
    """Folders of the forbidden packages' Python code (found without importing them)."""
    dirs = []
    for name in FORBIDDEN:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is not None:
            dirs += [os.path.realpath(d) for d in spec.submodule_search_locations or ()]
    return tuple(d + os.sep for d in dirs)


class ByHandGuard:
    """Calls the learner's function with a profiler that notes the first call into a forbidden
    package (a Python frame in its folder, or a C function it defines). The notebook side of
    "by hand is by hand"; the grader also calls by-hand functions where those packages cannot
    even be imported."""

    _dirs = None

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.offence = ""
        if ByHandGuard._dirs is None:
            ByHandGuard._dirs = _forbidden_dirs()
        self.__name__ = getattr(fn, "__name__", "function")

    def _note(self, package, caller):
        """Remember the first offence: which package, and the learner's line that called it."""
        label = {"tensorflow": "TensorFlow", "keras": "Keras", "tf_keras": "Keras (tf-keras)",
                 "_pywrap_tf": "TensorFlow"}.get(package, package)
        where = ""
        path = caller.f_code.co_filename if caller is not None else "<none>"
        if not (path.startswith("<frozen") or os.path.realpath(path).startswith(_library_dirs())):
            line = linecache.getline(path, caller.f_lineno).strip()
            where = f" at line {caller.f_lineno}" + (f" (`{line}`)" if line else "")
        self.offence = (f"this exercise is by hand, but your function called {label}{where}. "
                        "TensorFlow, Keras and rnnbook's own code earn no credit here: compute "
                        "it with NumPy")

    def _watch(self, frame, event, arg):
        if self.offence:
            return
        if event == "call":
            if frame.f_code.co_filename.startswith(self._dirs):
                module = frame.f_globals.get("__name__") or "rnnbook"
                self._note(module.split(".")[0], frame.f_back)
        elif event == "c_call":
            module = getattr(arg, "__module__", None) or ""
            top = module.split(".")[0]
            if top in FORBIDDEN or top.startswith("_pywrap_tf"):
                self._note("_pywrap_tf" if top.startswith("_pywrap_tf") else top, frame)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        previous = sys.getprofile()
        sys.setprofile(self._watch)
        try:
            result = self.fn(*args, **kwargs)
        finally:
            still_ours = sys.getprofile() == self._watch
            sys.setprofile(previous)
        if not still_ours and not self.offence:
            self.offence = ("this exercise is by hand, and your function switched off the "
                            "check's watch (sys.setprofile), so it earns no credit")
        return result


def _library_dirs() -> tuple[str, ...]:
    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    here = os.path.dirname(os.path.abspath(__file__))
    return tuple(os.path.realpath(p) + os.sep for p in paths | {here})


def raised(error: BaseException) -> Raised:
    """A :class:`Raised` for ``error`` that points at the learner's own line: the last frame of
    the traceback that is not in rnnbook, the standard library or an installed package, named
    by its function when that is not the one the check called (:func:`~rnnbook.plaindata.where`)."""
    skip = _library_dirs()
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not os.path.realpath(f.filename).startswith(skip) and "rnnbook" not in f.filename]
    return Raised(type(error).__name__, str(error), where(frames))
