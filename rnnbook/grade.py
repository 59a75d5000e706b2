"""Grade submitted exercise notebooks into Gradescope-format reports.

    python -m rnnbook.grade SUBMISSION.ipynb|FOLDER [...] --out DIR [--seed N] [--workers K]
                            [--timeout SECONDS] [--cell-timeout SECONDS] [--memory MB]
                            [--chapter STEM] [--overwrite]

For each submission it writes ``DIR/<stem>/results.json`` (Gradescope's results format),
``DIR/<stem>/feedback.md`` (what a student reads), and one ``DIR/gradebook.csv`` for all; on
stderr, one line per event (a progress bar line per finished submission).

How it stays fair and safe:

- Each exercise is graded on hidden random trials drawn from ``--seed`` (random if not given;
  recorded in every report). The same seed gives the same report.
- The submission's code runs in a child process (:mod:`rnnbook.sandbox`) in its own temporary
  working folder, with limits per cell and per exercise (time, memory, output size). A function
  that loops, crashes the process or exhausts memory costs that exercise only: the child is
  restarted for the rest. ``--workers`` children run at once.
- Where Linux allows it, each child runs behind walls (:mod:`rnnbook.isolate`: user, mount, pid,
  network namespaces): it cannot see the repository (solutions/, .git), the other submissions,
  ``--out`` or the other children, and can write only to its own scratch folders. Where it
  does not, the grader says so in one line and grades without them.
- The expected answers are computed here, by TensorFlow, and never enter the child; this
  process is not dumpable, so a child cannot read them from its memory. Answers come back as
  JSON and ``.npz`` read with ``allow_pickle=False``: plain data, never unpickled.
- Points come from the exercise headers in ``solutions/`` (``# Exercise 1.2 (2 points, by hand)``), never
  from the submission. A submission file is only read, never written.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import csv
import ctypes
import io
import json
import os
import pathlib
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from rnnbook import __version__, checks, isolate, source
from rnnbook.checking import Outcome, evaluate
from rnnbook.environment import TF_ENV, call_with_roomy_stack
from rnnbook.sandbox import decode, encode

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
MAX_ANSWER = 64 * 2**20  # bytes of one exercise's answer file
MAX_EVENT = 2**20  # bytes of one progress line from a child


_STDERR = []


def _stderr():
    """The grader's stderr, kept on a copy of fd 2: importing TensorFlow (in the oracle thread)
    points fd 2 at /dev/null for a while, and a progress line must not vanish into it."""
    if not _STDERR:
        sys.stderr.flush()
        _STDERR.append(os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="replace"))
    return _STDERR[0]


class GradeError(Exception):
    """A problem with one submission that stops it being graded (one line, names the file)."""


@dataclass
class Limits:
    timeout: float = 10.0  # seconds per exercise (all its trials)
    cell_timeout: float = 120.0  # seconds per notebook cell
    memory: int = 2048  # MB resident, per submission process


@dataclass
class Submission:
    path: pathlib.Path
    stem: str  # report folder name
    chapter: str = ""
    cells: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # what happened to the cells
    answers: dict = field(default_factory=dict)  # exercise name -> list of answers | limit message
    error: str = ""
    seconds: float = 0.0  # wall time of its grading, all its children included
    peak_mb: float = 0.0  # largest resident memory of one of its children


# ---------------------------------------------------------------------------------------------
# What to grade against (trusted: from solutions/, never from the submission)


def exercise_table(stem):
    """``[(ExerciseCell, Exercise)]`` for a chapter, in book order, points from solutions/."""
    chapter = checks.load(stem)
    cells = source.exercises(source.read(SOLUTIONS / f"{stem}.ipynb"), f"solutions/{stem}.ipynb")
    return [(cell, chapter[cell.name]) for cell in cells]


def which_chapter(path, nb, forced):
    if forced:
        return forced
    meta = nb.metadata.get("rnnbook", {})
    stem = meta.get("chapter") if isinstance(meta, dict) else None
    if stem in checks.CHAPTERS:
        return stem
    matches = [s for s in checks.CHAPTERS if s in path.name or s[:2] == path.name[:2]]
    if len(matches) == 1:
        return matches[0]
    raise GradeError(f"{path}: cannot tell which chapter this notebook is; pass --chapter")


def expected_answers(stems, seed):
    """``{stem: {name: (cases, expected)}}``: the oracle's answers, computed in this process."""
    table = {}
    for stem in stems:
        chapter = checks.load(stem)
        table[stem] = {}
        for _, ex in exercise_table(stem):
            cases = chapter.cases(ex.name, seed)
            table[stem][ex.name] = (cases, [ex.oracle(case) for case in cases])
    return table


# ---------------------------------------------------------------------------------------------
# The walls around each child (rnnbook/isolate.py does the work inside the namespaces)


ISOLATE = pathlib.Path(__file__).with_name("isolate.py")
UNSHARE = ["--user", "--map-root-user", "--mount", "--pid", "--net", "--ipc"]
DEVICES = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]
DEV_LINKS = {"/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0",
             "/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2"}
#: A child's thread pools, one thread each: --workers children share the cores, and idle
#: OpenBLAS threads spin on a core before they sleep. (TensorFlow's inter-op pool keeps its
#: default: a graph that waits on another op needs a second thread.)
ONE_CORE = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1"}
SCRATCH_MB = {"/tmp": 128, "/dev/shm": 64}  # private to each child; its working folder too:
WORK_MB = 256


#: the child's program: rnnbook.sandbox from this grader's own copy of the package (-I: no
#: PYTHONPATH, no current folder, no user site-packages)
SANDBOX = (f"import runpy, sys; sys.path.insert(0, {str(ROOT)!r}); "
           "runpy.run_module('rnnbook.sandbox', run_name='__main__', alter_sys=True)")


def _real(path):
    return os.path.realpath(str(path))


@dataclass
class Walls:
    """What every child of one grading run is kept from: see :mod:`rnnbook.isolate`.

    ``command`` is empty when the walls cannot be built here; ``note`` then says why.
    """

    hide: list  # folders that look empty to a child
    readonly: list  # what it gets back from inside them, read-only
    absent: list  # what the probe checks it cannot see
    command: list = field(default_factory=list)  # unshare ... isolate.py (empty: no walls)
    note: str = ""

    @classmethod
    def around(cls, work, subs, out, cases):
        """The walls for grading ``subs`` with working folder ``work`` and reports in ``out``."""
        hide = {_real(p) for p in [ROOT, work, out, pathlib.Path.home(), "/run"]}
        hide |= {_real(s.path.parent) for s in subs}  # (and where a symlink points)
        hide |= {os.path.dirname(_real(s.path)) for s in subs}
        hide = sorted(hide - {"/"})
        needed = {_real(p) for p in [ROOT / "rnnbook", sys.prefix, sys.exec_prefix, sys.base_prefix,
                                     sys.base_exec_prefix, os.path.dirname(_real(sys.executable))]}
        needed |= {_real(p) for p in sysconfig.get_paths().values()}
        needed |= set(_case_paths(cases))  # files a trial names (read by the learner's function)
        covered = hide + list(SCRATCH_MB)
        readonly = sorted(p for p in needed
                          if os.path.exists(p) and any(isolate.under(p, h) for h in covered))
        absent = [str(ROOT / "solutions"), str(ROOT / ".git"), _real(out)] + [_real(s.path) for s in subs]
        return cls(hide, readonly, absent)

    def spec(self, jobdir, workdir):
        """What :mod:`rnnbook.isolate` builds for one child (JSON)."""
        return {
            "hide": self.hide + ["/dev"],
            "scratch": {**SCRATCH_MB, str(workdir): WORK_MB},
            "readonly": self.readonly + DEVICES + [str(jobdir)],
            "writable": [str(jobdir / "answers")],
            "symlinks": DEV_LINKS,
            "probe_readonly": [str(ROOT), str(ROOT / "rnnbook"), sys.prefix, str(jobdir)],
            "probe_absent": self.absent,
            "cwd": str(workdir),
        }

    def wrap(self, jobdir, workdir):
        """The command prefix that starts a child behind the walls (empty: no walls)."""
        if not self.command:
            return []
        path = jobdir.parent / f"{jobdir.name}-walls.json"
        path.write_text(json.dumps(self.spec(jobdir, workdir)))
        return [*self.command, str(path), "--"]

    def build(self, work):
        """Try the walls once (``isolate.py --check``); without them, say why in ``note``."""
        unshare = shutil.which("unshare")
        if not unshare:
            self.note = "the unshare command is not installed"
            return self
        probe = work / "probe"
        (probe / "job" / "answers").mkdir(parents=True)
        (probe / "run").mkdir()
        spec = probe / "walls.json"
        spec.write_text(json.dumps(self.spec(probe / "job", probe / "run")))
        command = [unshare, *UNSHARE, sys.executable, "-I", "-S", str(ISOLATE)]
        try:
            run = subprocess.run([*command, "--check", str(spec)], capture_output=True, text=True,
                                 timeout=60, cwd=probe / "run", stdin=subprocess.DEVNULL)
            failed = run.returncode != 0 and ((run.stderr.strip() or f"exit status {run.returncode}")
                                              .splitlines()[-1])
        except (OSError, subprocess.TimeoutExpired) as error:
            failed = str(error)
        shutil.rmtree(probe, ignore_errors=True)
        if failed:
            self.note = failed.removeprefix("unshare: ").removeprefix("isolate: ")
        else:
            self.command = command
        return self

    @property
    def summary(self):
        if self.command:
            return "namespaces (no other submission, no repository, no --out; read-only system)"
        return f"none ({self.note})"


def _case_paths(cases):
    """Absolute paths of existing files named by the trials' cases (e.g. an event file)."""
    found, stack = [], [cases]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack += value.values()
        elif isinstance(value, (list, tuple)):
            stack += value
        elif isinstance(value, str) and value.startswith("/") and os.path.exists(value):
            found.append(_real(value))
    return found


# ---------------------------------------------------------------------------------------------
# Running a submission in the sandbox


def _tree(pid):
    """``pid`` and all its descendants (as far as /proc shows them)."""
    found, stack = [], [pid]
    while stack:
        p = stack.pop()
        found.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    stack += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return found


def _rss_mb(pid):
    """Resident memory of a process and its children, in MB (0 when gone)."""
    total = 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except (OSError, ValueError):
            continue
    return total / 1024


_children_lock = threading.Lock()
_live = set()  # pids of the children this grader is running right now


def _kill(proc):
    if proc.poll() is None:  # (once reaped, its pid may belong to someone else)
        for pid in reversed(_tree(proc.pid)):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _reap_strays():
    """Kill what a submission left running: orphans become this process's children (it is their
    subreaper). A stray is a child that is not a running sandbox and is not in this process's
    session (each sandbox starts a session of its own; what the grader itself starts stays in
    the grader's)."""
    with _children_lock:
        children = []
        for task in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError, ValueError), open(f"/proc/self/task/{task}/children") as f:
                children += [int(c) for c in f.read().split()]
        for pid in children:
            try:
                if pid in _live or os.getsid(pid) == os.getsid(0):
                    continue
            except OSError:
                continue
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, os.WNOHANG)


def _event(line, names):
    """A progress event from the child, or None when the line is not a well-formed one."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict):
        return None
    status = event.get("status")
    if "cell" in event:
        ok = (type(event["cell"]) is int and status in ("start", "ok", "error")
              and isinstance(event.get("error", ""), str))
    elif "exercise" in event:
        ok = event["exercise"] in names and status in ("start", "done")
    else:
        ok = list(event) == ["finished"] and event["finished"] is True
    return event if ok else None


def _run_child(jobdir, workdir, limits, log, walls, names, sub):
    """Start the sandbox; yield its events; a limit breach yields ``{"limit": message}``. The
    child's largest resident memory goes into ``sub.peak_mb``."""
    read_fd, write_fd = os.pipe()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RNNBOOK_")}
    env.update(TF_ENV, RNNBOOK_GRADING="1", MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1",
               HOME=str(workdir), **ONE_CORE)
    if walls.command:
        env["TMPDIR"] = "/tmp"  # the child's private /tmp
    command = [*walls.wrap(jobdir, workdir), sys.executable, "-I", "-c", SANDBOX, str(jobdir),
               str(write_fd)]
    with _children_lock:
        proc = subprocess.Popen(
            command, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, pass_fds=(write_fd,), start_new_session=True,
        )
        _live.add(proc.pid)
    os.close(write_fd)
    reader = os.fdopen(read_fd, "rb", buffering=0)
    sel = selectors.DefaultSelector()
    sel.register(reader, selectors.EVENT_READ)
    buffer = b""
    deadline, current = time.monotonic() + limits.cell_timeout, None
    last_rss = 0.0
    try:
        while True:
            ready = sel.select(timeout=0.05)
            if ready:
                chunk = reader.read(65536)
                if not chunk:  # the child closed its end: it ended (or closed the pipe itself)
                    proc.wait()
                    yield {"ended": proc.returncode}
                    return
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    event = _event(line, names)
                    if event is None:
                        continue
                    if event.get("status") == "start":
                        current = event
                        span = limits.timeout if "exercise" in event else limits.cell_timeout
                        deadline = time.monotonic() + span
                    yield event
                buffer = buffer[-MAX_EVENT:]  # a line this long is not an event
            # Two readings in a row: while a process forks and execs (uname, fc-list, ...), the
            # copy's pages count twice for a moment.
            now = _rss_mb(proc.pid)
            rss, last_rss = min(now, last_rss), now
            sub.peak_mb = max(sub.peak_mb, rss)
            if rss > limits.memory:
                _kill(proc)
                yield {"limit": f"went over the memory limit of {limits.memory} MB", "at": current}
                return
            if time.monotonic() > deadline:
                _kill(proc)
                span = limits.timeout if current and "exercise" in current else limits.cell_timeout
                yield {"limit": f"went over the time limit of {span:g} s", "at": current}
                return
    finally:
        sel.close()
        reader.close()
        _kill(proc)  # and whatever it started that is still in its group
        with _children_lock:
            _live.discard(proc.pid)
        _reap_strays()


def _write_job(jobdir, sub, names, skip, cases_by_name):
    (jobdir / "cases").mkdir(parents=True, exist_ok=True)
    (jobdir / "answers").mkdir()
    for name in names:
        arrays = {}
        meta = encode([[list(c.keys()), list(c.values())] for c in cases_by_name[name]], arrays)
        np.savez(jobdir / "cases" / f"{name}.npz", **arrays)
        (jobdir / "cases" / f"{name}.json").write_text(json.dumps(meta))
    job = {"chapter": sub.chapter, "cells": sub.cells, "skip": sorted(skip), "exercises": names}
    (jobdir / "job.json").write_text(json.dumps(job))


def _read_answers(jobdir, name, trials):
    path = jobdir / "answers" / f"{name}.json"
    arrays_path = jobdir / "answers" / f"{name}.npz"
    if arrays_path.stat().st_size > MAX_ANSWER or path.stat().st_size > MAX_ANSWER:
        return f"returned more than {MAX_ANSWER // 2**20} MB of data"
    meta = json.loads(path.read_text())
    if not isinstance(meta, dict) or not meta.get("defined"):
        return None
    with np.load(arrays_path, allow_pickle=False) as data:
        answers = decode(meta["answers"], {k: data[k] for k in data.files})
    if not isinstance(answers, list) or len(answers) != trials:
        return "did not return one answer per trial"
    return answers


def run_submission(sub, cases_by_name, limits, walls, work):
    """Fill ``sub.answers`` by running the submission in as many children as it takes."""
    pending = list(cases_by_name)
    skip = set()
    started = time.monotonic()
    try:
        work.mkdir()
        for attempt in range(len(sub.cells) + len(pending) + 2):
            if not pending:
                break
            jobdir = work / f"job{attempt}"
            workdir = work / f"run{attempt}"
            jobdir.mkdir()
            workdir.mkdir()
            os.chmod(workdir, 0o777)
            _write_job(jobdir, sub, pending, skip, cases_by_name)
            with open(jobdir / "output.log", "wb") as log:
                events = list(_run_child(jobdir, workdir, limits, log, walls, set(pending), sub))
            if walls.command and events == [{"ended": isolate.FAILED}]:
                why = _last_line(jobdir / "output.log")
                print(f"grade: error: {sub.path}: {why}", file=_stderr())
                for name in pending:
                    sub.answers[name] = "was not run: the grader could not build its sandbox"
                pending.clear()
                break
            progressed = _apply_events(sub, events, pending, skip, jobdir, cases_by_name)
            shutil.rmtree(jobdir, ignore_errors=True)
            shutil.rmtree(workdir, ignore_errors=True)
            if not progressed:
                break
        for name in pending:
            sub.answers.setdefault(name, "was not run: the notebook's process kept failing")
    except Exception as error:  # noqa: BLE001 - one submission never stops the others
        sub.error = f"{sub.path}: the grader failed on this submission ({type(error).__name__}: {error})"
    finally:
        shutil.rmtree(work, ignore_errors=True)
        sub.seconds = time.monotonic() - started


def _last_line(path):
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no output)"
    return lines[-1][:300] if lines else "(no output)"


def _ended(code):
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"crashed its process ({name})"
    return f"ended the process (exit code {code})"


def _apply_events(sub, events, pending, skip, jobdir, cases_by_name):
    """Record what one child did; return whether the next child can get further."""
    before = (len(pending), len(skip))
    current = None
    for event in events:
        if "cell" in event:
            current = event
            if event["status"] == "error":
                sub.notes.append(f"cell {event['cell'] + 1} raised {event['error']}")
        elif "exercise" in event:
            current = event
            if event["status"] == "done":
                name = event["exercise"]
                if name in pending:
                    try:
                        sub.answers[name] = _read_answers(jobdir, name, len(cases_by_name[name]))
                    except FileNotFoundError:
                        sub.answers[name] = ("sent back no answer (the notebook's code got in the "
                                             "way of the grader's)")
                    except (OSError, ValueError, KeyError) as error:
                        why = str(error) if isinstance(error, ValueError) else type(error).__name__
                        sub.answers[name] = f"sent back an answer that is not plain data ({why})"
                    pending.remove(name)
        elif "limit" in event or "ended" in event:
            at = event.get("at") or current
            why = event.get("limit") or _ended(event["ended"])
            if event.get("ended") == 0 and not pending:
                continue
            if at and "exercise" in at and at["exercise"] in pending:
                sub.answers[at["exercise"]] = why
                pending.remove(at["exercise"])
            elif at and "cell" in at and at["status"] == "start":
                skip.add(at["cell"])
                sub.notes.append(f"cell {at['cell'] + 1} {why}; it was skipped")
            elif pending:
                name = pending.pop(0)
                sub.answers[name] = why
    return (len(pending), len(skip)) != before


# ---------------------------------------------------------------------------------------------
# Reports


def outcome_for(ex, cases, expected, got):
    if got is None:
        return Outcome(ex, False, f"✗ {ex.title}: no function called `{ex.name}` is defined in the "
                                  "notebook. Define it with exactly this name.")
    if isinstance(got, str):
        return Outcome(ex, False, f"✗ {ex.title} {got}; it gets no points.")
    return evaluate(ex, cases, expected, got)


def report(sub, table, seed, oracle):
    tests, score, maximum = [], 0.0, 0
    for cell, ex in table:
        cases, expected = oracle[ex.name]
        outcome = outcome_for(ex, cases, expected, sub.answers.get(ex.name))
        points = cell.points if outcome.passed else 0
        score += points
        maximum += cell.points
        tests.append({
            "name": f"Exercise {cell.number} {ex.name}",
            "score": points,
            "max_score": cell.points,
            "output": outcome.message,
            "visibility": "visible",
        })
    notes = "".join(f"\nNote: {n}" for n in sub.notes)
    return {
        "score": score,
        "output": f"{sub.path.name}: chapter {sub.chapter}, graded with seed {seed} "
                  f"(rnnbook {__version__}).{notes}",
        "tests": tests,
        "extra_data": {"seed": seed, "chapter": sub.chapter, "max_score": maximum},
    }


def error_report(sub, seed):
    return {
        "score": 0,
        "output": f"Not graded: {sub.error}",
        "tests": [],
        "extra_data": {"seed": seed, "chapter": sub.chapter, "error": sub.error},
    }


def feedback_markdown(results):
    lines = [f"# Feedback: {results['score']:g} / {results['extra_data'].get('max_score', 0)} points", "",
             results["output"], ""]
    for test in results["tests"]:
        lines += [f"## {test['name']}: {test['score']:g} / {test['max_score']}", "", "```",
                  test["output"], "```", ""]
    return "\n".join(lines)


def _write(path, text):
    tmp = path.with_suffix(path.suffix + ".part")
    tmp.write_text(text)
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# Command line


def collect(paths):
    """Expand folders into their notebooks; one-line error for a path that does not exist."""
    found = []
    for raw in paths:
        path = pathlib.Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.glob("*.ipynb") if p.is_file())
        elif path.exists():
            found.append(path)
        else:
            raise GradeError(f"{path}: no such file or folder")
    return found


def load_submission(path, forced_chapter):
    sub = Submission(path=path, stem=path.stem)
    try:
        nb = source.read(path)
    except source.SourceError as error:
        sub.error = str(error)
        return sub
    try:
        sub.chapter = which_chapter(path, nb, forced_chapter)
    except GradeError as error:
        sub.error = str(error)
        return sub
    sub.cells = [c.source for c in nb.cells if c.cell_type == "code"]
    return sub


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m rnnbook.grade", description=__doc__.split("\n")[0])
    parser.add_argument("submissions", nargs="+", help="notebooks, or folders of notebooks")
    parser.add_argument("--out", required=True, type=pathlib.Path, help="folder for the reports")
    parser.add_argument("--seed", type=int, help="reproduce a grading run (default: random)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="submissions graded at once (default: the number of cores)")
    parser.add_argument("--timeout", type=float, default=Limits.timeout,
                        help=f"seconds per exercise (default {Limits.timeout:g})")
    parser.add_argument("--cell-timeout", type=float, default=Limits.cell_timeout,
                        help=f"seconds per notebook cell (default {Limits.cell_timeout:g})")
    parser.add_argument("--memory", type=int, default=Limits.memory,
                        help=f"MB of memory per submission (default {Limits.memory})")
    parser.add_argument("--chapter", choices=sorted(checks.CHAPTERS), help="grade all as this chapter")
    parser.add_argument("--overwrite", action="store_true", help="replace reports already in --out")
    args = parser.parse_args(argv)
    if args.workers < 1 or args.timeout <= 0 or args.memory <= 0 or args.cell_timeout <= 0:
        parser.error("--workers, --timeout, --cell-timeout and --memory must be positive")
    _stderr()  # before anything can move fd 2
    try:
        return grade(args)
    except GradeError as error:
        print(f"grade: error: {error}", file=_stderr())
        return 2


def grade(args):
    paths = collect(args.submissions)
    if not paths:
        raise GradeError("no notebooks found in " + " ".join(args.submissions))
    subs = [load_submission(p, args.chapter) for p in paths]
    stems = [s.stem for s in subs]
    for stem in stems:
        if stems.count(stem) > 1:
            raise GradeError(f"two submissions are called {stem}.ipynb; their reports would collide")
    if args.out.exists() and not args.overwrite:
        taken = [s.stem for s in subs if (args.out / s.stem / "results.json").exists()]
        if (args.out / "gradebook.csv").exists() or taken:
            raise GradeError(f"{args.out} already holds reports; choose a new --out or pass --overwrite")
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    limits = Limits(args.timeout, args.cell_timeout, args.memory)
    gradable = [s for s in subs if not s.error]
    chapters = sorted({s.chapter for s in gradable})
    tables = {stem: exercise_table(stem) for stem in chapters}
    cases = {stem: {ex.name: checks.load(stem).cases(ex.name, seed) for _, ex in tables[stem]}
             for stem in chapters}

    _guard_this_process()
    args.out.mkdir(parents=True, exist_ok=True)  # before any child starts: hidden from them
    work = pathlib.Path(tempfile.mkdtemp(prefix="rnnbook-grade-"))
    try:
        walls = Walls.around(work, subs, args.out, cases).build(work) if gradable else None
        if walls and not walls.command:
            print(f"grade: note: submissions run without walls here ({walls.note}): each can read "
                  "the others' files and write where you can; grade untrusted work in a container "
                  "per submission (as Gradescope does)", file=_stderr())
        workers = min(args.workers, max(len(gradable), 1))
        if gradable:
            print(f"grade: {len(gradable)} submission{'s' * (len(gradable) != 1)}, {workers} at a "
                  f"time, seed {seed}, walls: {walls.summary}", file=_stderr())
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            started = time.monotonic()
            futures = {pool.submit(run_submission, s, cases[s.chapter], limits, walls, work / f"sub{k}"): s
                       for k, s in enumerate(gradable)}
            oracle = {}  # TensorFlow computes the expected answers while the children run
            oracle_thread = threading.Thread(target=_compute_oracle,
                                             args=(oracle, chapters, seed, min(workers, len(gradable))))
            oracle_thread.start()
            for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
                future.result()
                print(progress(done, len(gradable), futures[future], time.monotonic() - started),
                      file=_stderr())
        oracle_thread.join()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if len(oracle) != len(chapters):
        raise GradeError("TensorFlow could not compute the expected answers (see the error above)")
    isolation = walls.summary if walls else ""

    rows = []
    for sub in subs:
        folder = args.out / sub.stem
        folder.mkdir(exist_ok=True)
        if sub.error:
            print(f"grade: error: {sub.error}", file=_stderr())
            results = error_report(sub, seed)
        else:
            results = report(sub, tables[sub.chapter], seed, oracle[sub.chapter])
            results["extra_data"]["isolation"] = isolation
        _write(folder / "results.json", json.dumps(results, indent=2, ensure_ascii=False) + "\n")
        _write(folder / "feedback.md", feedback_markdown(results))
        rows.append((sub, results))
    _write(args.out / "gradebook.csv", gradebook(rows, tables))
    for sub, results in rows:
        if not sub.error:
            print(f"{sub.path.name}: {results['score']:g} / {results['extra_data']['max_score']}",
                  file=_stderr())
    return 1 if any(s.error for s in subs) else 0


def _compute_oracle(into, chapters, seed, children):
    """Fill ``into`` with :func:`expected_answers`, once the first ``children`` children run.

    Importing TensorFlow holds the GIL for long stretches (loading its libraries): begun first,
    it would hold up starting the children, whose threads need the GIL to start them."""
    deadline = time.monotonic() + 2
    while len(_live) < children and time.monotonic() < deadline:
        time.sleep(0.01)
    into.update(call_with_roomy_stack(expected_answers, chapters, seed))


def progress(done, total, sub, seconds, width=20):
    """One line per finished submission: a bar, the count, which one, what it took (seconds and
    peak memory: see --timeout and --memory), seconds so far."""
    filled = round(width * done / total)
    return (f"grade: [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {sub.path.name}: "
            f"{sub.seconds:.1f} s, peak {sub.peak_mb:.0f} MB ({seconds:.0f} s in all)")


def _guard_this_process():
    """No child may read this process's memory (the expected answers live here), and whatever a
    submission leaves running becomes this process's child, to be killed (see _reap_strays)."""
    pr_set_dumpable, pr_set_child_subreaper = 4, 36
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(pr_set_dumpable, 0, 0, 0, 0)
        libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def gradebook(rows, tables):
    """One row per submission, a column per exercise in book order, then total and max."""
    columns = [f"{cell.number} {ex.name}" for stem in sorted(tables) for cell, ex in tables[stem]]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["submission", "chapter", "seed", *columns, "total", "max", "error"])
    for sub, results in rows:
        scores = {t["name"].removeprefix("Exercise "): t["score"] for t in results["tests"]}
        writer.writerow([sub.path.name, sub.chapter, results["extra_data"]["seed"],
                         *[scores.get(c, "") for c in columns], results["score"],
                         results["extra_data"].get("max_score", ""), sub.error])
    return out.getvalue()


if __name__ == "__main__":
    # This process never draws. Keras 3, imported here for some oracles, imports matplotlib.pyplot
    # whenever it can (for its plotting utilities): most of Keras' import time.
    sys.modules.setdefault("matplotlib", None)
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Every report is written and closed by now: skip TensorFlow's teardown at exit (about a
    # second of the grader's wall time, see `make bench`).
    os._exit(status)
