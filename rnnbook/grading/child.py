"""The child: runs one submission's notebook and answers its exercises' trials.

It runs in a process forked by :mod:`rnnbook.grading.zygote`, behind the walls
(:mod:`rnnbook.grading.walls`) where they stand. Its job (the notebook's code cells, made plain
Python by the grader; which cells to skip; the trials) arrives already decoded. It runs the cells
in one namespace, then calls each exercise's function on its trials, and reports on the events
pipe, one JSON line each (:mod:`rnnbook.grading.wire`)::

    {"cell": 3, "status": "start"}   {"cell": 3, "status": "ok" | "error", "error": "..."}
    {"exercise": "rnn_step", "status": "start"}
    {"exercise": "rnn_step", "status": "done", "defined": true, "answers": [...]}
    {"finished": true}

Two kinds of child:

- ``numpy`` (by-hand exercises): its import path holds the standard library and NumPy only. A
  stub ``rnnbook`` makes the set-up cell harmless (``rnnbook.setup()`` returns a stand-in whose
  every use raises "this exercise must be done with NumPy"; ``check`` does nothing), and
  ``import tensorflow`` / ``keras`` raise ImportError. The real installation is out of reach
  behind the walls, so a submission cannot undo this by editing ``sys.path``.
- ``tf`` (API exercises): forked from a process that imported TensorFlow, Keras and rnnbook's
  learner side once; each trial is run by the exercise's own ``call`` (which may build a real
  cell from the plain-data case). The notebook's ``check`` is a stand-in that does nothing.

The expected answers never enter this process. This module needs only the standard library
and ``rnnbook/plaindata.py`` (NumPy), which the zygote loads by path before it as
``rnnbook_plaindata`` (the NumPy-only child cannot import rnnbook; the TensorFlow child's
``rnnbook_plaindata`` is the package's ``rnnbook.plaindata`` itself).
"""
from __future__ import annotations

import builtins
import errno
import importlib.abc
import importlib.machinery
import linecache
import os
import sys
import traceback
from typing import Any

from rnnbook_plaindata import Raised, Watch, to_plain, where  # set by the zygote

NUMPY_ONLY = ("this exercise must be done with NumPy: TensorFlow, Keras and rnnbook's checks "
              "are not available to it")
BLOCKED = ("tensorflow", "keras", "tf_keras", "tensorboard", "torch", "jax")
HERE = os.path.dirname(os.path.abspath(__file__))


def said(error: BaseException, scratch_mb: int | None = None) -> str:
    """``error``'s message; a full scratch pool (behind the walls) says which limit it hit."""
    text = str(error)
    if scratch_mb and isinstance(error, OSError) and error.errno == errno.ENOSPC:
        text += (f" (it wrote more than {scratch_mb} MB of scratch files: /tmp, /dev/shm and "
                 "its working folder share that much)")
    return text


def raised(error: BaseException, scratch_mb: int | None = None) -> dict[str, Any]:
    """What the learner's code raised, pointing at the learner's line (not the grader's), in
    the function that raised (:func:`rnnbook.plaindata.where`, as the notebook's check says)."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not f.filename.startswith(HERE) and "rnnbook" not in f.filename]
    return {"__raised__": [type(error).__name__, said(error, scratch_mb)[:2000],
                           where(frames)[:2000]]}


def compiled(code: str, number: int) -> Any:
    """Cell ``number`` (the learner's count: every cell) compiled, its lines known to
    ``linecache``, so that an error's line is quoted as the notebook's check quotes it."""
    name = f"<cell {number}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    return plain_python(code, name)


def _as_event(got: Any) -> dict[str, Any] | None:
    """A :class:`Raised` as the wire carries it (None stays None)."""
    return None if got is None else {"__raised__": [got.kind, got.message[:2000],
                                                    got.where[:2000]]}


class _NoTensorFlow:
    """What ``rnnbook.setup()`` returns in the NumPy-only child: every use raises."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(NUMPY_ONLY)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(NUMPY_ONLY)


def _no_check(*args: Any, **kwargs: Any) -> None:
    """The notebook's ``check``: the grader checks in its own process."""
    return None


class _NumPyOnlyFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``tensorflow``, ``keras``, ...: ImportError; ``rnnbook`` and ``rnnbook.checks.*``: stubs.
    (Taking this finder away gains nothing: the real packages are not on the path.)"""

    def find_spec(self, name: str, path: Any = None,
                  target: Any = None) -> importlib.machinery.ModuleSpec | None:
        top = name.split(".")[0]
        if top in BLOCKED:
            raise ImportError(f"{name}: {NUMPY_ONLY}")
        if name in ("rnnbook", "rnnbook.checks") or name.startswith("rnnbook.checks."):
            return importlib.machinery.ModuleSpec(name, self, is_package=name.count(".") < 2)
        if top == "rnnbook":
            raise ImportError(f"{name}: {NUMPY_ONLY}")
        return None

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        if module.__name__ == "rnnbook":
            module.setup = lambda *a, **k: _NoTensorFlow()
            module.progress = lambda *a, **k: None  # a notebook's last cell
            module.__version__ = "grading"
        module.check = _no_check


class _NoIPython:
    """``get_ipython()`` for cells with magics (the grader turned them into calls): no-ops."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def plain_python(code: str, name: str) -> Any:
    """A cell compiled; one that is not Python (IPython's magics, ``!ls``, ``x?``) is made so by
    IPython's transformer first, here under the child's limits (the magics do nothing)."""
    try:
        return compile(code, name, "exec")
    except SyntaxError as error:
        transformer = sys.modules.get("rnnbook_ipython")  # loaded by the zygote
        if transformer is None:
            raise
        try:
            plain = transformer.TransformerManager().transform_cell(code)
        except Exception:  # noqa: BLE001 - the cell's own syntax error says more
            raise error from None
    return compile(plain, name, "exec")


def _stub_modules() -> None:
    sys.meta_path.insert(0, _NumPyOnlyFinder())
    for name in list(sys.modules):
        if name.split(".")[0] in BLOCKED + ("rnnbook",):
            del sys.modules[name]


def main(job: Any, events_fd: int, chapters: dict[str, Any] | None = None) -> None:
    """Run ``job`` (a :class:`rnnbook.grading.job.Job`, loaded as ``rnnbook_job``); report
    on ``events_fd``. ``chapters``: stem -> Chapter (the TF
    child, for the exercises' ``call``); None in the NumPy-only child."""
    from rnnbook_wire import encode

    events = os.fdopen(events_fd, "wb", buffering=0)

    def emit(**event):
        import json

        events.write(json.dumps(event, separators=(",", ":")).encode() + b"\n")

    if chapters is None:
        _stub_modules()
    namespace = {"__name__": "__main__", "__builtins__": builtins, "get_ipython": _NoIPython}
    sys.argv = ["notebook"]
    for index, code in enumerate(job.cells):
        if index in job.skip:
            continue
        emit(cell=index, status="start")
        message = ""
        try:
            exec(compiled(code, index + 1), namespace)  # noqa: S102
        except BaseException as error:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, ...
            message = f"{type(error).__name__}: {said(error, job.scratch_mb)}"[:2000]
        emit(cell=index, status="error" if message else "ok", error=message)

    for exercise in job.exercises:
        name = exercise["name"]
        emit(exercise=name, status="start")
        fn = namespace.get(name)
        answers: list[Any] = []
        for trial in exercise["trials"]:
            if not callable(fn):
                answers.append(None)
                continue
            try:
                if chapters is None:  # the trial's arguments, as the notebook's check passes them
                    watch = Watch(fn)
                    got = to_plain(watch(*trial["args"], **trial["kwargs"]))
                    got = _as_event(watch.raised()) or got
                else:
                    from rnnbook.byhand import answer

                    got = answer(chapters[job.chapter][name], fn, trial)
                    if isinstance(got, Raised):
                        full = OSError(errno.ENOSPC, got.message)  # the message said again
                        message = (said(full, job.scratch_mb)[len(str(full)):]
                                   if f"[Errno {errno.ENOSPC}]" in got.message else "")
                        got = _as_event(got._replace(message=got.message + message))
                answers.append(got if isinstance(got, dict) else encode(got))
            except BaseException as error:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, ...
                answers.append(raised(error, job.scratch_mb))
        emit(exercise=name, status="done", defined=callable(fn), answers=answers)
    emit(finished=True)
    events.close()
    os._exit(0)  # skip interpreter teardown (and anything the submission registered with atexit)
