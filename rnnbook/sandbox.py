"""The grader's child process: runs one submission's code and answers with plain data.

``python -m rnnbook.sandbox JOBDIR EVENTS_FD`` is started by :mod:`rnnbook.grade` in a fresh
working folder, behind the walls :mod:`rnnbook.isolate` builds where it can. It reads
``JOBDIR/job.json`` (the submission's code cells, which cells to skip, which exercises to
answer) and ``JOBDIR/cases/<name>.npz`` (the trials' inputs), runs the cells in
an IPython shell (magics work, checks are silenced by ``RNNBOOK_GRADING=1``), calls each exercise
function on its cases and writes ``JOBDIR/answers/<name>.json`` + ``.npz``: arrays, numbers,
strings and lists only, read back by the grader with ``allow_pickle=False``. Progress goes to the
grader as JSON lines on ``EVENTS_FD`` so that it can enforce time and memory limits per cell and
per exercise. The expected answers never enter this process.
"""
import contextlib
import ctypes
import json
import os
import pathlib
import resource
import signal
import sys

import numpy as np

MAX_TEXT = 2000  # characters kept of an error message
MAX_OUTPUT = 32 * 2**20  # bytes the submission may print, or write into one file


def encode(value, arrays):
    """``value`` as JSON, its arrays moved into ``arrays`` (saved as .npz next to the JSON)."""
    from rnnbook.checking import Raised

    if isinstance(value, Raised):
        return {"__raised__": [value.kind, value.message[:MAX_TEXT], value.where[:MAX_TEXT]]}
    if isinstance(value, np.ndarray):
        key = f"a{len(arrays)}"
        arrays[key] = value
        return {"__array__": key}
    if isinstance(value, list):
        return [encode(v, arrays) for v in value]
    if isinstance(value, str):
        return value[: 100 * MAX_TEXT]
    return value


def decode(obj, arrays):
    """Inverse of :func:`encode`; refuses anything that is not plain data."""
    from rnnbook.checking import Raised

    if isinstance(obj, dict):
        if set(obj) == {"__array__"}:
            return arrays[obj["__array__"]]
        if set(obj) == {"__raised__"} and len(obj["__raised__"]) == 3:
            return Raised(*(str(part) for part in obj["__raised__"]))
        raise ValueError("an answer holds a mapping, which no exercise returns")
    if isinstance(obj, list):
        return [decode(v, arrays) for v in obj]
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    raise ValueError(f"an answer holds a {type(obj).__name__}")


def main(jobdir, events_fd):
    # Limits first, before any submission code runs: a write past MAX_OUTPUT fails (EFBIG)
    # instead of filling the disk, and no core dumps. Not dumpable: another submission's process
    # cannot read or trace this one through /proc (when there are no walls between them).
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_OUTPUT, MAX_OUTPUT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
    jobdir = pathlib.Path(jobdir)
    job = json.loads((jobdir / "job.json").read_text())
    events = os.fdopen(int(events_fd), "w", buffering=1)

    def emit(**event):
        events.write(json.dumps(event) + "\n")
        events.flush()

    from IPython.core.interactiveshell import InteractiveShell

    from rnnbook import checks
    from rnnbook.checking import answer, raised

    shell = InteractiveShell.instance()
    for index, code in enumerate(job["cells"]):
        if index in job["skip"]:
            continue
        emit(cell=index, status="start")
        result = shell.run_cell(code, store_history=False, silent=False)
        error = result.error_before_exec or result.error_in_exec
        message = f"{type(error).__name__}: {error}"[:MAX_TEXT] if error else ""
        emit(cell=index, status="error" if error else "ok", error=message)

    chapter = checks.load(job["chapter"])
    answers = jobdir / "answers"
    answers.mkdir(exist_ok=True)
    for name in job["exercises"]:
        emit(exercise=name, status="start")
        ex = chapter[name]
        fn = shell.user_ns.get(name)
        with np.load(jobdir / "cases" / f"{name}.npz", allow_pickle=False) as data:
            meta = json.loads((jobdir / "cases" / f"{name}.json").read_text())
            cases = [decode(c, data) for c in meta]
            cases = [dict(zip(c[0], c[1], strict=True)) for c in cases]
        results = []
        for case in cases:
            if not callable(fn):
                results.append(None)
                continue
            try:
                results.append(answer(ex, fn, case))
            except BaseException as error:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, ...
                results.append(raised(error))
        arrays = {}
        encoded = encode(results, arrays)
        np.savez(answers / f"{name}.npz", **arrays)
        (answers / f"{name}.json").write_text(json.dumps({"defined": callable(fn), "answers": encoded}))
        emit(exercise=name, status="done")
    emit(finished=True)
    events.close()
    os._exit(0)  # skip interpreter teardown (and anything the submission registered with atexit)


if __name__ == "__main__":
    from rnnbook.environment import call_with_roomy_stack

    call_with_roomy_stack(main, sys.argv[1], sys.argv[2])
